"""Coverage of the item-level interval ``ci_crossed`` (systems and items both random, crossed) in simulation.

The generator is the model of tests/test_item_level_validity.py (metric X = a[s] + b[i] + e[s, i], target
Y = c[s] + d[i] + f[s, i]; systems' qualities a, c correlated 0.5, item difficulties b, d 0.7), with the
within-item parts e, f correlated ρ[s, i]: 0.4 everywhere (``crossed``), or 0.4 + 0.3·u[s] + 0.2·v[i] with u, v
uniform on [−1, 1] (``heterogeneous``: some systems and items track retrieval better than others, so both carry
part of the coefficient). Estimand (docs/statistics.md, "Item level"): the coefficient's expectation over studies
of the same design (as many systems and items, drawn anew), the mean over fresh studies.

The test: 120 studies of 12 systems x 100 items from the heterogeneous generator. ``ci_crossed`` must cover
between 90% and 99.5% for ``within`` and ``item`` (the Monte Carlo standard error of a coverage of .95 over 120
studies is 2%) and keep a width near the fresh studies' spread (not degenerate, not vacuous); the bootstrap over
items alone, which ignores that the same systems judge every item, covers far less (checked, so that the test can
tell the two apart: 31% for ``item``, 62% for ``within`` here; ``ci_crossed`` 95% and 97%). scripts/sim_item_ci.py runs the full table of docs/statistics.md.
"""

from __future__ import annotations

import math

import numpy as np

from clir_eval.correlation.items import ItemSettings, _ci, _draw_coefs, _row_draws, crossed_item_ci, grouped

GROUPINGS = ("within", "item")


def generate(rng: np.random.Generator, S: int, I: int, heterogeneous: bool) -> tuple[np.ndarray, np.ndarray]:
    """One study: metric and target, systems x items."""
    c, d = rng.normal(size=S), rng.normal(size=I)
    f = rng.normal(size=(S, I))
    a = 0.5 * c + math.sqrt(0.75) * rng.normal(size=S)
    b = 0.7 * d + math.sqrt(0.51) * rng.normal(size=I)
    if heterogeneous:
        rho = 0.4 + 0.3 * rng.uniform(-1, 1, size=(S, 1)) + 0.2 * rng.uniform(-1, 1, size=(1, I))
    else:
        rho = np.full((S, I), 0.4)
    e = rho * f + np.sqrt(1 - rho ** 2) * rng.normal(size=(S, I))
    return e + a[:, None] + b[None], f + c[:, None] + d[None]


GENERATORS = {"crossed": False, "heterogeneous": True}


def coverage(generator: str, S: int, I: int, n: int, fresh: int, bootstrap: int, seed: int, systems: bool = True
             ) -> dict[str, dict[str, tuple[float, float]]]:  # fmt: skip
    """Per grouping and interval: (share of ``n`` studies covering the estimand, mean width / (2·1.96·sd of the
    coefficient over ``fresh`` studies)). ``ci_items`` (and with ``systems`` ``ci_systems``, as a run computes
    them) only with ``bootstrap`` > 0."""
    het = GENERATORS[generator]
    rng = np.random.default_rng([seed, S, I, int(het)])
    taus = {g: [] for g in GROUPINGS}
    for _ in range(fresh):
        X, Y = generate(rng, S, I, het)
        for g in GROUPINGS:
            taus[g].append(grouped(X, Y, g)[0])
    truth = {g: float(np.mean(v)) for g, v in taus.items()}
    spread = {g: 2 * 1.96 * float(np.std(v)) for g, v in taus.items()}
    s = ItemSettings(bootstrap=bootstrap)
    hits: dict[str, dict[str, list]] = {g: {} for g in GROUPINGS}
    for k in range(n):
        X, Y = generate(rng, S, I, het)
        for g in GROUPINGS:
            cis = {"ci_crossed": crossed_item_ci(X, Y, g, s)}
            if bootstrap and systems:
                cis.update(_row_draws(X, Y, g, s, (seed, k), grouped(X, Y, g)[0]))
            elif bootstrap:  # the run's ci_items: the first draws of the row's generator
                cis["ci_items"] = _ci(_draw_coefs(X, Y, g, s, 1, np.random.default_rng([seed, k])), s.level)
            for name, ci in cis.items():
                hits[g].setdefault(name, []).append((ci[0] <= truth[g] <= ci[1], ci[1] - ci[0]))
    return {g: {name: (float(np.mean([h for h, _ in v])), float(np.mean([w for _, w in v])) / spread[g])
                for name, v in hits[g].items()} for g in GROUPINGS}


def test_crossed_interval_covers_about_95_percent_and_items_alone_does_not():
    res = coverage("heterogeneous", 12, 100, 120, 500, 200, 7, systems=False)
    for g in GROUPINGS:
        cov, width = res[g]["ci_crossed"]
        assert 0.90 <= cov <= 0.995, (g, res[g])
        assert 0.7 <= width <= 1.6, (g, res[g])  # neither degenerate nor vacuous
    for g in GROUPINGS:  # resampling items alone ignores the systems' part
        assert res[g]["ci_items"][0] < 0.80, (g, res[g])


def test_crossed_interval_is_deterministic_and_needs_four_systems():
    rng = np.random.default_rng(3)
    X, Y = generate(rng, 6, 40, True)
    s = ItemSettings()
    assert crossed_item_ci(X, Y, "within", s) == crossed_item_ci(X.copy(), Y.copy(), "within", s)
    lo, hi = crossed_item_ci(X, Y, "item", s)
    tau = grouped(X, Y, "item")[0]
    assert lo < tau < hi
    assert crossed_item_ci(X[:3], Y[:3], "item", s) is None


def test_the_report_brackets_the_crossed_interval_and_calls_the_bootstraps_descriptive():
    """The item-level table's brackets after τ within and τ item are ``ci_crossed``; the bootstraps over only
    the items and only the systems are in a column marked descriptive, and the caption says which is which."""
    from clir_eval.correlation.items import ItemMatrix, correlate_matrix
    from clir_eval.report.blocks import blocks_markdown
    from clir_eval.report.items import item_level_blocks

    rng = np.random.default_rng(4)
    X, Y = generate(rng, 8, 60, True)
    m = ItemMatrix("documents", tuple(f"s{i}" for i in range(8)), tuple(f"d{j}" for j in range(60)), {"chrf1": X},
                   {"retrievability": Y})
    rows = correlate_matrix(m, ItemSettings(permutation=99, bootstrap=200), 1)
    by = {r["grouping"]: r for r in rows}
    assert by["item"]["ci_crossed"] != by["item"]["ci_items"]
    block = {"settings": {"method": "kendall", "variant": "b", "ties": "τ-b", "alpha": 0.05, "bootstrap": 200,
                          "permutation": 99, "level": 0.95, "seed": 1, "correction": "holm"},
             "items": {"documents": {"n": 60}, "queries": {"n": 0}}, "systems": list(m.systems),
             "correlations": rows, "verdicts": []}
    md = blocks_markdown(item_level_blocks({"item_level": block}))
    line = next(ln for ln in md.splitlines() if ln.startswith("| retrievability | chrf1 |"))
    cells = [c.strip() for c in line.strip("|").split("|")]
    ci = lambda c: f"[{c[0]:+.2f}, {c[1]:+.2f}]"  # noqa: E731
    assert cells[2].endswith(ci(by["within"]["ci_crossed"])) and cells[3].endswith(ci(by["item"]["ci_crossed"]))
    assert cells[4] == f"{ci(by['item']['ci_items'])} / {ci(by['item']['ci_systems'])}"
    assert "systems and items both random" in md and "descriptive" in md.split("| target |")[1].splitlines()[0]
