"""Item-level tests hold their level on the crossed systems x items design (every item judged by the same
systems): null simulations with system effects only, item effects only and both, for every p-value an
item-level row shows (groupings ``item`` and ``within``) and for the item-level verdicts; power at a moderate
within-item effect; a metric that drives the target is alone in the first cluster whatever the number of
targets. The generator (vectorised, seeded) is the model of docs/statistics.md, "Item level":

    metric  X[s, i] = a[s] + b[i] + e[s, i]        target  Y[s, i] = c[s] + d[i] + f[s, i]

a, c the systems' overall qualities (corr ρ_sys), b, d the items' difficulties (corr 0.7), e, f the
within-item parts (corr ρ_within); a term is left out where a scenario has no such effect."""

from __future__ import annotations

import math

import numpy as np
import pytest

from clir_eval.correlation.items import ItemMatrix, ItemSettings, crossed_row, grouped, item_verdicts

ALPHA = 0.05
SIZES = [(8, 50), (12, 150), (16, 300), (24, 100), (10, 200)]  # (systems, items), cycled over the data sets


def _limit(n: int) -> float:
    """α plus two Monte Carlo standard errors of a rejection rate over n data sets."""
    return ALPHA + 2 * math.sqrt(ALPHA * (1 - ALPHA) / n)


def generate(rng: np.random.Generator, S: int, I: int, n_metrics: int, system: bool, item: bool,
             rho_sys: float = 0.0, rho_within: float = 0.0, driven: int = 0) -> tuple[list[np.ndarray], np.ndarray]:
    """``n_metrics`` metric matrices and one target (systems x items). The first ``driven`` metrics share the
    target's system quality by ρ_sys and its within-item part by ρ_within; the others are unrelated to the
    target (their own system and item effects where the scenario has them)."""
    c = rng.normal(size=S)
    d = rng.normal(size=I)
    f = rng.normal(size=(S, I))
    Y = f + (c[:, None] if system else 0) + (d[None] if item else 0)
    Xs = []
    for m in range(n_metrics):
        rs, rw = (rho_sys, rho_within) if m < driven else (0.0, 0.0)
        a = rs * c + math.sqrt(1 - rs ** 2) * rng.normal(size=S)
        b = 0.7 * d + math.sqrt(1 - 0.49) * rng.normal(size=I)
        e = rw * f + math.sqrt(1 - rw ** 2) * rng.normal(size=(S, I))
        Xs.append(e + (a[:, None] if system else 0) + (b[None] if item else 0))
    return Xs, Y


def _rows(m: ItemMatrix) -> list[dict]:
    """The within rows a verdict ranks by (coefficients only: the verdicts do not read the rows' tests)."""
    return [{"items": m.items, "target": y, "mt_metric": x, "grouping": "within", "tau": grouped(X, Y, "within")[0],
             "n_items": Y.shape[1], "n_systems": Y.shape[0]} for y, Y in m.y.items() for x, X in m.x.items()]


SCENARIOS = {"system effects only": (True, False), "item effects only": (False, True), "both": (True, True)}


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_row_p_values_hold_their_level(scenario):
    """The ``item`` grouping's crossed test (null: the metric's and the target's system rows unrelated) and the
    ``within`` grouping's (null: no within-item association; here the systems' overall qualities agree at 0.8,
    which must not count) reject at most α + 2 MC se over 150 data sets each. The earlier per-item shuffles
    rejected about 70% with system effects (scripts/sim_item_level.py --uncentred)."""
    system, item = SCENARIOS[scenario]
    rng = np.random.default_rng(list(map(ord, scenario)))
    s = ItemSettings(bootstrap=0)
    n = 150
    rej = {"item": 0, "within": 0}
    for k in range(n):
        S, I = SIZES[k % len(SIZES)]
        for grouping, rho_sys in (("item", 0.0), ("within", 0.8)):
            Xs, Y = generate(rng, S, I, 1, system, item, rho_sys=rho_sys, driven=1)
            rej[grouping] += crossed_row(Xs[0], Y, grouping, s)["significant"]
    for grouping, r in rej.items():
        assert r / n <= _limit(n), (grouping, r / n)


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_verdicts_hold_their_level(scenario):
    """Item-level verdicts (the crossed test of the within Δτ, the run's default settings) between metrics equally good within items: a metric whose overall quality
    agrees with the target's (0.8) and one unrelated to it, and a pure noise metric. A verdict errs when it
    names any pair significant; at most α + 2 MC se over 120 data sets."""
    system, item = SCENARIOS[scenario]
    rng = np.random.default_rng([7, *map(ord, scenario)])
    s = ItemSettings(bootstrap=0)
    n = 120
    wrong = 0
    for k in range(n):
        S, I = SIZES[k % len(SIZES)]
        Xs, Y = generate(rng, S, I, 2, system, item, rho_sys=0.8, driven=1)
        Xs.append(rng.normal(size=(S, I)))
        if k % 2:  # the pair: an unrelated metric with system effects against pure noise
            Xs = Xs[1:]
        m = ItemMatrix("documents", tuple(f"s{i}" for i in range(S)), tuple(f"d{j}" for j in range(I)),
                       {f"m{j}": X for j, X in enumerate(Xs)}, {"t": Y})
        [v] = item_verdicts([m], _rows(m), [], s, k)
        wrong += any(p["significant"] for p in v["pairwise"])
    assert wrong / n <= _limit(n), wrong / n


def test_a_moderate_within_item_effect_is_found():
    """The within-item parts of metric and target correlated 0.4 (12 systems x 150 items, system and item
    effects present, the overall qualities unrelated): the within grouping's test finds it in >= 90% of 100
    data sets, and the verdict separates the metric from an unrelated one in >= 90%."""
    rng = np.random.default_rng(40)
    s = ItemSettings(bootstrap=0)
    n = 100
    found = separated = 0
    for k in range(n):
        Xs, Y = generate(rng, 12, 150, 2, True, True, rho_within=0.4, driven=1)
        found += crossed_row(Xs[0], Y, "within", s)["significant"]
        m = ItemMatrix("documents", tuple(f"s{i}" for i in range(12)), tuple(f"d{j}" for j in range(150)),
                       {"driven": Xs[0], "other": Xs[1]}, {"t": Y})
        [v] = item_verdicts([m], _rows(m), [], s, k)
        separated += v["winner"] == "driven"
    assert found / n >= 0.9 and separated / n >= 0.9, (found / n, separated / n)


@pytest.mark.parametrize("n_targets", [1, 8])
def test_a_driving_metric_is_alone_in_the_first_cluster_whatever_the_number_of_targets(n_targets):
    """A metric whose within-item part drives every target (ρ 0.6, 12 systems x 150 items), among 3 noise
    metrics (their own system and item effects), is alone in the first item-level cluster of every target at
    the default settings (family: each target's pairs), whether there are 1 or 8 targets."""
    rng = np.random.default_rng(n_targets)
    S, I = 12, 150
    Xs, Y = generate(rng, S, I, 4, True, True, rho_sys=0.5, rho_within=0.6, driven=1)
    ys = {"t0": Y}
    f = Y - Y.mean(axis=1, keepdims=True) - Y.mean(axis=0, keepdims=True) + Y.mean()
    for t in range(1, n_targets):  # more targets driven by the same within-item part
        ys[f"t{t}"] = f + 0.5 * rng.normal(size=(S, I)) + rng.normal(size=S)[:, None]
    m = ItemMatrix("documents", tuple(f"s{i}" for i in range(S)), tuple(f"d{j}" for j in range(I)),
                   {"driver": Xs[0], **{f"noise{j}": X for j, X in enumerate(Xs[1:])}}, ys)
    s = ItemSettings()
    vds = item_verdicts([m], _rows(m), [], s, 2)
    assert len(vds) == n_targets
    for v in vds:
        assert v["clusters"][0] == ["driver"] and v["winner"] == "driver", v["clusters"]
        assert v["unsettled"] == 0


def test_permutation_0_leaves_the_rows_untested_and_the_report_says_so():
    """item_level.permutation 0: the item and within rows have no p-value and say "not tested"; the
    descriptive groupings say why they have none; the report marks no τ with × (which means p ≥ α) and says
    the rows were not tested."""
    from clir_eval.report.blocks import blocks_markdown
    from clir_eval.report.items import item_level_blocks

    rng = np.random.default_rng(3)
    Xs, Y = generate(rng, 8, 40, 1, True, True, rho_within=0.3, driven=1)
    m = ItemMatrix("documents", tuple(f"s{i}" for i in range(8)), tuple(f"d{j}" for j in range(40)), {"chrf1": Xs[0]},
                   {"retrievability": Y})
    from clir_eval.correlation.items import correlate_matrix

    rows = correlate_matrix(m, ItemSettings(permutation=0, bootstrap=0), 1)
    by = {r["grouping"]: r for r in rows}
    for g in ("item", "within"):
        assert by[g]["p_value"] is None and by[g]["significant"] is None and "not tested" in by[g]["p_test"]
    for g in ("none", "system"):
        assert by[g]["p_value"] is None and by[g]["p_test"].startswith("descriptive")
    block = {"settings": {"method": "kendall", "variant": "b", "ties": "τ-b", "alpha": 0.05, "bootstrap": 0,
                          "permutation": 0, "level": 0.95, "seed": 1, "correction": "holm"},
             "items": {"documents": {"n": 40}, "queries": {"n": 0}}, "systems": list(m.systems),
             "correlations": rows, "verdicts": []}
    md = blocks_markdown(item_level_blocks({"item_level": block}))
    assert "×" not in md and "not tested (item_level.permutation: 0)" in md
    rows = correlate_matrix(m, ItemSettings(permutation=99, bootstrap=0), 1)
    block["correlations"], block["settings"]["permutation"] = rows, 99
    md = blocks_markdown(item_level_blocks({"item_level": block}))
    assert ("×" in md) == any(r["p_value"] is not None and r["p_value"] >= 0.05 for r in rows)


def test_rows_and_verdicts_are_the_same_through_worker_processes():
    """Rows (with their bootstrap draws) and verdicts computed here equal those through 2 worker processes,
    byte for byte."""
    import json

    from clir_eval.pipeline.executor import LocalExecutor
    from clir_eval.pipeline.item_level import item_correlations

    rng = np.random.default_rng(22)
    S, I = 15, 40
    Xs, Y = generate(rng, S, I, 3, True, True, rho_within=0.25, driven=1)
    m = ItemMatrix("documents", tuple(f"s{i}" for i in range(S)), tuple(f"d{j}" for j in range(I)),
                   {f"m{j}": X for j, X in enumerate(Xs)}, {"retrievability": Y})
    s = ItemSettings(bootstrap=20, permutation=200)
    here = item_correlations([m], s, 5, [])
    with LocalExecutor(2) as ex:
        there = item_correlations([m], s, 5, [], None, ex.map)
    assert json.dumps(here) == json.dumps(there)
    [v] = here["verdicts"]
    assert len(v["pairwise"]) == 3 and all(p["p_value"] is not None for p in v["pairwise"])
