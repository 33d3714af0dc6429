"""Null rejection rates and power of the item-level tests on the crossed systems x items design.

    python scripts/sim_item_level.py [--n 400] [--seed 1]

Uses the generator of tests/test_item_level_validity.py (metric X = a[s] + b[i] + e[s, i], target
Y = c[s] + d[i] + f[s, i]; see its docstring) with the sizes cycled over (systems, items) = (8, 50),
(12, 150), (16, 300), (24, 100), (10, 200). Prints, per scenario, the share of data sets in which each test
rejects at α = 0.05 with its Monte Carlo standard error:

- item: the ``item`` grouping's joint permutation test (systems' qualities unrelated);
- within: the ``within`` grouping's test (the systems' overall qualities agree at 0.8: must not count);
- verdict: any pair significant among metrics equally good within items (a metric whose overall quality
  agrees with the target's, an unrelated one, pure noise; every other data set the unrelated one against
  noise alone), default verdict settings but 200 first-round draws;
- with --uncentred: the pair of an unrelated metric with system effects against pure noise (both effects,
  12 systems x 150 items), tested by whole-system swaps of the uncentred values on the ``item`` grouping
  (not used by the harness: not valid) and of the centred values on ``within`` (the verdicts' test);
  also the earlier ``item`` test (each item's target shuffled on its own) on unrelated system effects;
- power: within-item parts correlated 0.4 at 12 systems x 150 items: the within test, and the verdict naming
  the metric the single winner against an unrelated one.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from test_item_level_validity import SCENARIOS, SIZES, _rows, generate  # noqa: E402

from clir_eval.correlation.items import ItemMatrix, ItemSettings, grouped, item_verdicts, joint_permutation_tests  # noqa: E402


def rate(hits: int, n: int) -> str:
    p = hits / n
    return f"{p:.3f} ± {math.sqrt(p * (1 - p) / n):.3f}"


def matrix(Xs, Y) -> ItemMatrix:
    S, I = Y.shape
    return ItemMatrix("documents", tuple(f"s{i}" for i in range(S)), tuple(f"d{j}" for j in range(I)),
                      {f"m{j}": X for j, X in enumerate(Xs)}, {"t": Y})


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=400)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--uncentred", action="store_true", help="only the uncentred-swap check")
    a = ap.parse_args()
    if a.uncentred:
        return uncentred(a.n, a.seed)
    rows_s = ItemSettings(permutation=199)
    verdict_s = ItemSettings(permutation=200, bootstrap=0)
    t0 = time.perf_counter()
    for name, (system, item) in SCENARIOS.items():
        rng = np.random.default_rng([a.seed, *map(ord, name)])
        hits = {"item": 0, "within": 0, "verdict": 0}
        for k in range(a.n):
            S, I = SIZES[k % len(SIZES)]
            for grouping, rho_sys in (("item", 0.0), ("within", 0.8)):
                Xs, Y = generate(rng, S, I, 1, system, item, rho_sys=rho_sys, driven=1)
                [(p, _)] = joint_permutation_tests(Xs, Y, [grouped(Xs[0], Y, grouping)[0]], rows_s, (k, 1), grouping)
                hits[grouping] += p < 0.05
            Xs, Y = generate(rng, S, I, 2, system, item, rho_sys=0.8, driven=1)
            Xs.append(rng.normal(size=(S, I)))
            m = matrix(Xs[1:] if k % 2 else Xs, Y)
            [v] = item_verdicts([m], _rows(m), [], verdict_s, k)
            hits["verdict"] += any(p["significant"] for p in v["pairwise"])
        print(f"{name:20s} " + "  ".join(f"{g}: {rate(h, a.n)}" for g, h in hits.items()), flush=True)
    rng = np.random.default_rng([a.seed, 40])
    found = sep = 0
    for k in range(a.n):
        Xs, Y = generate(rng, 12, 150, 2, True, True, rho_within=0.4, driven=1)
        [(p, _)] = joint_permutation_tests(Xs[:1], Y, [grouped(Xs[0], Y, "within")[0]], rows_s, (k, 2), "within")
        found += p < 0.05
        m = matrix(Xs, Y)
        [v] = item_verdicts([m], _rows(m), [], verdict_s, k)
        sep += v["winner"] == "m0"
    print(f"{'power (ρ_within 0.4)':20s} within: {rate(found, a.n)}  verdict: {rate(sep, a.n)}")
    print(f"({a.n} data sets per scenario, seed {a.seed}, {time.perf_counter() - t0:.0f} s)")


def uncentred(n: int, seed: int) -> None:
    from clir_eval.correlation.items import _z, swap_patterns, swap_setup, system_swap_deltas

    rng = np.random.default_rng([seed, 99])
    s = ItemSettings()
    hits = {"item (uncentred)": 0, "within (centred)": 0}
    for _ in range(n):
        Xs, Y = generate(rng, 12, 150, 1, True, True)
        A, B = Xs[0], rng.normal(size=Y.shape)
        W, _ = swap_patterns(12, 0, rng)
        for name, (a, b, y) in (("item (uncentred)", (_z(A), _z(B), Y)), ("within (centred)", swap_setup(A, B, Y))):
            d = system_swap_deltas(a, b, y, W, s)
            hits[name] += np.mean(np.abs(d) >= abs(d[0]) - 1e-12) < 0.05  # W[0] is the identity
    # the earlier test: each item's target shuffled on its own (system effects unrelated, 12 x 150, k = 199)
    from clir_eval.correlation.items import target_permutation_tests

    old = 0
    for k in range(n):
        Xs, Y = generate(rng, 12, 150, 1, True, True)
        [(p, _)] = target_permutation_tests(Xs, Y, [grouped(Xs[0], Y, "item")[0]], ItemSettings(permutation=199), (k, 3))
        old += p < 0.05
    print(f"per-item shuffles (the earlier item test, not used): {rate(old, n)}")
    print("unrelated metric vs noise, whole-system swaps (exact, 2^11 patterns): "
          + "  ".join(f"{k}: {rate(h, n)}" for k, h in hits.items()) + f"  ({n} data sets, seed {seed})")


if __name__ == "__main__":
    main()
