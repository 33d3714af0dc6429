"""Null rejection rates and power of the item-level tests (``within`` and ``item`` rows, ``within`` pair verdicts)
under the scenarios of tests/item_scenarios.py (continuous and bounded/discrete scores, crossed systems x items).

    python scripts/sim_item_within.py [--n 400] [--seed 1] [--sizes 4x50,6x300,...] [--scenarios ...] [--power]

Per scenario, over ``--n`` data sets with the sizes cycled (default: 4, 6, 8, 12, 16 systems x 50, 300, 3000
items), at α = 0.05, the share ± its Monte Carlo standard error of data sets in which:

- within: the ``within`` row of the first metric is significant (null: no within-item association; the systems'
  overall qualities agree at 0.8, which must not count); "sig & ci∋0": significant while its ``ci_crossed``
  holds 0 (must be 0); mean τ: the mean within τ (the estimand's value under the null, 0 where the definition
  removes overall quality);
- item: the ``item`` row is significant (null: overall qualities and within parts unrelated);
- pair: the verdict between two metrics of the scenario, equally (un)related to the target, names the pair
  significant (the run's verdict, Holm);
- with ``--power``: the ``within`` row at a true within-item correlation of 0.3 (additive scenario) per size;
- with ``--joint``: the ``within`` row's earlier test instead (the target's system labels permuted jointly across
  items, :func:`joint_permutation_tests`, 999 permutations above 7 systems), for comparison;
- with ``--definitions``: the choice of the ``within`` values, per scenario at the first size: mean τ and the crossed
  test's rejections for plain system-centring, per-system (row) ranks, and the run's normal scores then centring.
Each row is computed by the run's own functions (:func:`clir_eval.correlation.items.correlate_matrix`,
:func:`item_verdicts`, bootstrap off: the CIs a decision reads are ``ci_crossed``).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from item_scenarios import SCENARIOS, generate, rate  # noqa: E402

from clir_eval.correlation.items import (  # noqa: E402
    ItemMatrix,
    ItemSettings,
    correlate_matrix,
    crossed_item_test,
    grouped,
    item_verdicts,
    joint_permutation_tests,
)

SIZES = "4x50,6x300,8x3000,12x50,16x300,4x3000,6x50,8x300,12x3000,16x50,4x300,6x3000,8x50,12x300,16x3000"


def matrix(Xs, Y) -> ItemMatrix:
    S, I = Y.shape
    return ItemMatrix("documents", tuple(f"s{i}" for i in range(S)), tuple(f"d{j}" for j in range(I)),
                      {f"m{j}": X for j, X in enumerate(Xs)}, {"t": Y})


def decisions(rng: np.random.Generator, S: int, I: int, scenario: str, s: ItemSettings, k: int) -> dict[str, float]:
    """One data set per question: the within row, the item row, the pair verdict (1 = significant)."""
    Xs, Y = generate(rng, S, I, scenario, n_metrics=2)
    m = matrix(Xs, Y)
    rows = correlate_matrix(m, s, k)
    w = next(r for r in rows if r["mt_metric"] == "m0" and r["grouping"] == "within")
    [v] = item_verdicts([m], rows, [], s, k)
    Xi, Yi = generate(rng, S, I, scenario, rho_sys=0.0)
    it = next(r for r in correlate_matrix(matrix(Xi, Yi), s, k) if r["grouping"] == "item")
    ci = w.get("ci_crossed")
    return {"within": bool(w["significant"]), "sig_ci0": bool(w["significant"] and ci and ci[0] <= 0 <= ci[1]),
            "tau": w["tau"], "item": bool(it["significant"]), "pair": any(p["significant"] for p in v["pairwise"])}


def _row_ranks(V: np.ndarray) -> np.ndarray:
    from scipy.stats import rankdata

    return rankdata(V, axis=1)


DEFINITIONS = {  # the values whose per-item τ across systems is averaged: (transform, grouping of crossed_item_test)
    "plain centring": (lambda V: V - V.mean(axis=1, keepdims=True), "item"),
    "per-system ranks": (_row_ranks, "item"),
    "normal scores, centred (the run's)": (lambda V: V, "within"),
}


def definitions(scenarios, S: int, I: int, n: int, seed: int, s: ItemSettings) -> None:
    """Mean τ and rejections of each candidate ``within`` definition under the null scenarios (the crossed test)."""
    print(f"| scenario ({S} x {I}) | " + " | ".join(DEFINITIONS) + " |")
    print("|---|" + "---|" * len(DEFINITIONS))
    for sc in scenarios:
        rng = np.random.default_rng([seed, 7, *map(ord, sc)])
        got = {d: ([], 0) for d in DEFINITIONS}
        for _ in range(n):
            Xs, Y = generate(rng, S, I, sc)
            for d, (f, g) in DEFINITIONS.items():
                X, Yt = f(Xs[0]), f(Y)
                ci, p = crossed_item_test(X, Yt, g, s)
                taus, hits = got[d]
                taus.append(grouped(X, Yt, g)[0])
                got[d] = (taus, hits + bool(p is not None and p < ALPHA and not ci[0] <= 0 <= ci[1]))
        print(f"| {sc} | " + " | ".join(f"τ {np.mean(t):+.3f}, rejects {rate(h, n)}" for t, h in got.values()) + " |",
              flush=True)


ALPHA = 0.05


def joint(scenarios, sizes, n: int, seed: int) -> None:
    """Rejections of the ``within`` row by the earlier joint permutation test (sharp null: no association in any
    system) under the null scenarios."""
    s = ItemSettings(bootstrap=0, permutation=999)
    print("| scenario | joint permutation test of `within` rejects |\n|---|---|")
    for sc in scenarios:
        rng = np.random.default_rng([seed, 9, *map(ord, sc)])
        hits = 0
        for k in range(n):
            Xs, Y = generate(rng, *sizes[k % len(sizes)], sc)
            [(p, _)] = joint_permutation_tests(Xs, Y, [grouped(Xs[0], Y, "within")[0]], s, (seed, k), "within")
            hits += p < ALPHA
        print(f"| {sc} | {rate(hits, n)} |", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=400)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--sizes", default=SIZES)
    ap.add_argument("--scenarios", default=",".join(SCENARIOS))
    ap.add_argument("--power", action="store_true", help="also power at a within-item correlation of 0.3")
    ap.add_argument("--definitions", action="store_true", help="only the comparison of within definitions")
    ap.add_argument("--joint", action="store_true", help="only the earlier joint permutation test of the within row")
    a = ap.parse_args()
    sizes = [tuple(map(int, z.split("x"))) for z in a.sizes.split(",")]
    s = ItemSettings(bootstrap=0)
    if a.definitions:
        return definitions(a.scenarios.split(","), *sizes[0], a.n, a.seed, s)
    if a.joint:
        return joint(a.scenarios.split(","), sizes, a.n, a.seed)
    t0 = time.perf_counter()
    print("| scenario | `within` rejects | sig & ci∋0 | mean within τ | `item` rejects | pair verdict |")
    print("|---|---|---|---|---|---|")
    for sc in a.scenarios.split(","):
        rng = np.random.default_rng([a.seed, *map(ord, sc)])
        res = [decisions(rng, *sizes[k % len(sizes)], sc, s, k) for k in range(a.n)]
        n = len(res)
        cnt = {q: sum(r[q] for r in res) for q in ("within", "sig_ci0", "item", "pair")}
        print(f"| {sc} | {rate(cnt['within'], n)} | {cnt['sig_ci0']} | {np.mean([r['tau'] for r in res]):+.4f} | "
              f"{rate(cnt['item'], n)} | {rate(cnt['pair'], n)} |", flush=True)
    if a.power:
        print("\n| systems x items | `within` power at ρ = 0.3 |\n|---|---|")
        for S, I in sizes:
            rng = np.random.default_rng([a.seed, S, I])
            hits = 0
            for k in range(a.n):
                Xs, Y = generate(rng, S, I, "additive", rho=0.3)
                r = next(r for r in correlate_matrix(matrix(Xs, Y), s, k) if r["grouping"] == "within")
                hits += bool(r["significant"])
            print(f"| {S} x {I} | {rate(hits, a.n)} |", flush=True)
    print(f"({a.n} data sets per scenario, sizes cycled over {a.sizes}, seed {a.seed}, {time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    main()
