"""The item-level tests hold their level for the estimand the report states (the expected within-item τ, or item
τ, of a study with systems and items drawn at random) under the scenarios of tests/item_scenarios.py: association
varying by system or by item around 0, a multiplicative model, noise scales shared by the metric and the target,
and bounded or discrete scores (100·Φ against reciprocal ranks, P@10-like steps of 0.1, BLEU-like floors at 0).
Each data set is judged by the run's own functions (the rows' crossed test, the verdicts); sizes cycle over 4-16
systems x 50-3000 items. scripts/sim_item_within.py runs the full table of docs/statistics.md."""

from __future__ import annotations

import math

import numpy as np
import pytest
from item_scenarios import SCENARIOS, generate

from clir_eval.correlation.items import ItemMatrix, ItemSettings, correlate_matrix, crossed_row, grouped, item_verdicts
from clir_eval.report.blocks import blocks_markdown
from clir_eval.report.items import item_level_blocks

ALPHA = 0.05
SIZES = [(4, 3000), (6, 300), (8, 100), (12, 50), (16, 150)]  # (systems, items), cycled over the data sets
N = 160


def _limit(n: int) -> float:
    """α plus two Monte Carlo standard errors of a rejection rate over n data sets."""
    return ALPHA + 2 * math.sqrt(ALPHA * (1 - ALPHA) / n)


def _matrix(Xs, Y) -> ItemMatrix:
    S, I = Y.shape
    return ItemMatrix("documents", tuple(f"s{i}" for i in range(S)), tuple(f"d{j}" for j in range(I)),
                      {f"m{j}": X for j, X in enumerate(Xs)}, {"t": Y})


def _rows(m: ItemMatrix) -> list[dict]:
    return [{"items": m.items, "target": y, "mt_metric": x, "grouping": "within", "tau": grouped(X, Y, "within")[0],
             "n_items": Y.shape[1], "n_systems": Y.shape[0]} for y, Y in m.y.items() for x, X in m.x.items()]


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_rows_and_verdicts_hold_their_level(scenario):
    """At most α + 2 MC se over 160 data sets each: the ``within`` row (the systems' overall qualities agree at 0.8
    and must not count), the ``item`` row (overall qualities unrelated), and the verdict between two metrics
    equally unrelated to the target within items; never a row significant while its ``ci_crossed`` holds 0."""
    rng = np.random.default_rng([42, *map(ord, scenario)])
    s = ItemSettings(bootstrap=0)
    rej = {"within": 0, "item": 0, "pair": 0}
    for k in range(N):
        S, I = SIZES[k % len(SIZES)]
        Xs, Y = generate(rng, S, I, scenario, n_metrics=2)
        w = crossed_row(Xs[0], Y, "within", s)
        lo, hi = w["ci_crossed"]
        assert not (w["significant"] and lo <= 0 <= hi), w
        if "untested_reason" in w:  # both scales step-valued: descriptive, never significant
            assert w["p_value"] is None and w["significant"] is False, w
        else:
            assert w["significant"] == (not lo <= 0 <= hi), w  # at level 1 − α the interval and the test agree
        rej["within"] += w["significant"]
        m = _matrix(Xs, Y)
        [v] = item_verdicts([m], _rows(m), [], s, k)
        rej["pair"] += any(p["significant"] for p in v["pairwise"])
        Xi, Yi = generate(rng, S, I, scenario, rho_sys=0.0)
        rej["item"] += crossed_row(Xi[0], Yi, "item", s)["significant"]
    for q, r in rej.items():
        assert r / N <= _limit(N), (q, r / N)


def test_a_within_item_correlation_of_03_is_found():
    """Power: the within-item parts correlated 0.3 (additive scenario, overall qualities agreeing at 0.8): the
    ``within`` row is significant in >= 90% of 60 data sets of 8 systems x 100 items and of 12 x 50."""
    rng = np.random.default_rng(3)
    s = ItemSettings(bootstrap=0)
    for S, I in ((8, 100), (12, 50)):
        found = sum(bool(crossed_row(*_pair(rng, S, I), "within", s)["significant"]) for _ in range(60))
        assert found / 60 >= 0.9, (S, I, found / 60)


def _pair(rng, S, I):
    Xs, Y = generate(rng, S, I, "additive", rho=0.3)
    return Xs[0], Y


def test_within_is_untested_when_both_scales_are_discrete():
    """Both the metric and the target with few distinct values (P@10-like): the normal scores cannot undo the
    steps, so the ``within`` row and every pair with that metric are not tested (no p-value, not significant, the
    reason in the row and pair) and the answer says so next to it, even with a strong within-item association; a
    continuous metric against the same target is tested and gets no such sentence."""
    rng = np.random.default_rng(5)
    Xs, Y = generate(rng, 8, 200, "P@10 both", n_metrics=1, rho=0.5)
    Xc, _ = generate(rng, 8, 200, "additive", n_metrics=1)
    s = ItemSettings(bootstrap=0)
    m = _matrix([Xs[0], Xc[0]], Y)
    rows = correlate_matrix(m, s, 1)
    within = {r["mt_metric"]: r for r in rows if r["grouping"] == "within"}
    assert within["m0"]["p_value"] is None and within["m0"]["significant"] is False, within["m0"]
    assert "step-valued" in within["m0"]["untested_reason"]
    assert within["m1"]["p_value"] is not None and "untested_reason" not in within["m1"], within["m1"]
    [v] = item_verdicts([m], rows, [], s, 1)
    [pair] = v["pairwise"]
    assert pair["p_value"] is None and not pair["significant"] and "step-valued" in pair["untested_reason"], pair
    assert "not tested for m0: both scales are step-valued" in v["answer"], v["answer"]
    assert "m1" not in v["answer"].split("not tested for")[1].split(":")[0], v["answer"]
    block = {"settings": {"method": "kendall", "variant": "b", "ties": "τ-b", "alpha": 0.05, "bootstrap": 0,
                          "permutation": s.permutation, "level": 0.95, "seed": 1, "correction": "holm"},
             "items": {"documents": {"n": 200}, "queries": {"n": 0}}, "systems": list(m.systems),
             "correlations": rows, "verdicts": [v]}
    md = blocks_markdown(item_level_blocks({"item_level": block}))
    marked = [line for line in md.splitlines() if line.startswith("| t ")]
    assert [("‡" in line) for line in marked] == [True, False], marked  # m0's within τ, not m1's
    assert "‡ = not tested: both scales are step-valued" in md, md
