#!/usr/bin/env python
"""Coverage of the pooled Δτ intervals of ``clir-eval pool`` (the 95% CI and the 90% CI of the equivalence test)
in simulated pooled studies from a known model, for the interval the pool uses (Kendall τ-b: normal, Sen's
variance per run, plus the queries' share where a run kept per-query values) and the one it used before
(percentile interval of the summed bootstrap-over-systems draws; jackknife + queries' share in their shape).

Model, per run: n systems with quality μ ~ N(0, 1); target y = μ + 0.7·e (``systems`` design: the run keeps
one score per system) or y[i, j] = μ_i + β_j + 3·e_ij over Q queries, y_i = mean over queries (``crossed``:
systems and queries both random); metrics a = μ + σ_a·ν_a, b = μ + σ_b·ν_b. Estimand: the pooled Δτ's
expectation over fresh pooled studies of the same design (new systems, and new queries, in every run; equal
weights), computed from 20,000 fresh studies per run size.

With ``--item-level``: the pooled within-item Δτ interval instead (clir_eval.pooling.items), runs drawn as in
tests/test_pool_items.py (systems x items; system effects, item effects, and metric a's system x item part
correlated ρ with the target's); estimand: the pooled statistic's mean over 800 fresh pooled studies.

With ``--level``: the level of the pooled PERM-BOTH test under the null (α = .05, two-sided, the pool's own
draws: :func:`clir_eval.pooling.core.run_block` on each run's z-scored metrics): per run n systems (6-12 at
random) with quality μ ~ N(0, 1), target y = μ + 0.7·e, metrics a, b = μ + σ·ν (exchangeable: no difference;
σ .8, or .4 with t(3) noise, or .8 rounded to whole units: tied values). Each study pools R runs; the share of
studies with p ≤ α for the draws as the pool draws them now (scaled by √(n/(n−1)), each run seeded from its
identity), unscaled (the pool before), and swaps of the raw values (the exact permutation test on a common
scale, the reference); and runs that all carry the same config seed (the same swap bits in every run before,
independent streams now).

    python scripts/sim_pool_coverage.py [--studies 400] [--draws 1000] [--crossed-studies 200]
    python scripts/sim_pool_coverage.py --item-level [--studies 400]
    python scripts/sim_pool_coverage.py --level [--studies 2000] [--draws 400] [--method kendall|spearman|pearson]
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from clir_eval.correlation.items import coef_rows  # noqa: E402
from clir_eval.correlation.statistics import perm_both_setup  # noqa: E402
from clir_eval.pooling.core import (  # noqa: E402
    pooled_interval,
    run_block,
    stream_seed,
    swap_scale,
    systems_tau_b_draws,
    tau_parts,
)

SYSTEMS = [  # (run sizes, σ_a, σ_b)
    ((10, 10, 10), 0.8, 0.8),
    ((10, 10, 10), 0.4, 1.2),
    ((8, 11, 14, 16, 20), 0.4, 1.2),
    ((12,) * 9, 0.4, 1.2),
    ((6, 8), 0.4, 1.2),
    ((30, 30, 30), 0.4, 1.2),
    ((8, 8, 8), 0.2, 2.0),
]
CROSSED = [((12, 12, 12), 40, 0.5, 1.0), ((8, 12, 16), 40, 0.8, 0.8)]


def draw_run(rng, n, sa, sb, q=None):
    mu = rng.normal(size=n)
    if q is None:
        y, pq = mu + 0.7 * rng.normal(size=n), None
    else:
        pq = mu[:, None] + rng.normal(size=(1, q)) + 3.0 * rng.normal(size=(n, q))
        y = pq.mean(axis=1)
    return mu + sa * rng.normal(size=n), mu + sb * rng.normal(size=n), y, pq


def truth(rng, n, sa, sb, q=None, count=20000):
    mu = rng.normal(size=(count, n))
    if q is None:
        y = mu + 0.7 * rng.normal(size=(count, n))
    else:
        y = (mu[:, :, None] + rng.normal(size=(count, 1, q)) + 3.0 * rng.normal(size=(count, n, q))).mean(axis=2)
    a, b = mu + sa * rng.normal(size=(count, n)), mu + sb * rng.normal(size=(count, n))
    return float(np.mean(coef_rows(a, y, "kendall", "b") - coef_rows(b, y, "kendall", "b")))


def coverage(rng, sizes, sa, sb, studies, k, q=None):
    tr = float(np.mean([truth(rng, n, sa, sb, q) for n in sizes]))
    hit = {("new", 0.95): 0, ("new", 0.90): 0, ("old", 0.95): 0, ("old", 0.90): 0}
    w = 1 / len(sizes)
    for s in range(studies):
        runs, obs = [], 0.0
        for r, n in enumerate(sizes):
            a, b, y, pq = draw_run(rng, n, sa, sb, q)
            pa = tau_parts(a, y, pq, "kendall", "b", k, 1000 * s + r)
            pb = tau_parts(b, y, pq, "kendall", "b", k, 1000 * s + r)
            runs.append((w, pa, pb, a, b, y, pq, 1000 * s + r))
            obs += w * float(coef_rows(a[None], y[None], "kendall", "b")[0] - coef_rows(b[None], y[None], "kendall", "b")[0])
        new = [(w_, pa, pb) for w_, pa, pb, *_ in runs]
        old = []
        for w_, pa, pb, a, b, y, pq, seed in runs:  # the interval before: percentile / jackknife, no kernel
            oa = {k_: v for k_, v in pa.items() if k_ != "kern"}
            ob = {k_: v for k_, v in pb.items() if k_ != "kern"}
            oa["systems"], ob["systems"] = systems_tau_b_draws(a, y, k, seed), systems_tau_b_draws(b, y, k, seed)
            old.append((w_, oa, ob))
        for lev in (0.95, 0.90):
            for name, parts in (("new", new), ("old", old)):
                lo, hi = pooled_interval(obs, parts, lev)
                hit[name, lev] += lo is not None and lo <= tr <= hi
    return tr, {key: v / studies for key, v in hit.items()}


ITEMS = [((8, 12, 16), 50, 0.0), ((12, 12, 12), 60, 0.4), ((10, 10, 10), 100, 0.2), ((20, 20), 40, 0.3),
         ((6, 8, 10, 12, 14), 30, 0.3), ((11, 10, 19, 8), (24, 15, 300, 300), 0.2)]  # the last: the study's WMT runs


def item_level(studies: int) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    from test_pool_items import crossed_run

    from clir_eval.correlation.items import ItemSettings
    from clir_eval.pooling.items import interval, statistic, swap_part

    s = ItemSettings()
    rng = np.random.default_rng(12)

    def study(sizes, n_items, rho, rep):
        items = n_items if isinstance(n_items, tuple) else (n_items,) * len(sizes)
        return [swap_part(*crossed_run(rng, S, n, True, True, rho), 1 / len(sizes), (rep, r), s)
                for r, (S, n) in enumerate(zip(sizes, items))]

    print("runs (systems) x items | ρ | true Δτ | 95% CI covers | 90% CI covers")
    for sizes, n_items, rho in ITEMS:
        t0 = time.time()
        tr = float(np.mean([statistic(study(sizes, n_items, rho, 0)) for _ in range(800)]))
        hit = {0.95: 0, 0.90: 0}
        for rep in range(studies):
            parts = study(sizes, n_items, rho, rep)
            for lev in hit:
                lo, hi = interval(parts, statistic(parts), lev)
                hit[lev] += lo is not None and lo <= tr <= hi
        print(f"{len(sizes)} ({', '.join(map(str, sizes))}) x {n_items} | {rho} | {tr:+.3f} | {hit[0.95] / studies:.3f} | "
              f"{hit[0.90] / studies:.3f} [{studies} studies; {time.time() - t0:.0f} s]", flush=True)


LEVEL = [  # (runs, systems per run: (low, high) drawn at random, or a fixed number; noise; same config seed)
    (3, (6, 12), "normal", False), (5, (6, 12), "normal", False), (7, (6, 12), "normal", False),
    (9, (6, 12), "normal", False), (5, (6, 12), "t3", False), (5, (6, 12), "rounded", False),
    (7, 6, "normal", True), (3, (6, 12), "normal", True)]


def null_run(rng, n, noise, method="kendall", variant="b"):
    """One run of the null: exchangeable metrics a, b (the same expected τ with y), both z-scored as the pool's
    PERM-BOTH sees them; redrawn until both τ are defined."""
    while True:
        mu = rng.normal(size=n)
        y = mu + 0.7 * rng.normal(size=n)
        if noise == "t3":
            a, b = (mu + 0.4 * rng.standard_t(3, size=n) for _ in range(2))
        else:
            a, b = (mu + 0.8 * rng.normal(size=n) for _ in range(2))
            if noise == "rounded":
                a, b = np.round(a), np.round(b)
        setup = perm_both_setup(a, b, y, method, variant)
        if setup is not None:
            return a, b, setup


def null_level(studies: int, draws: int, method: str = "kendall", alpha: float = 0.05) -> None:
    """The pooled PERM-BOTH's rejection rates under the null (see the module docstring); ``method`` other than
    kendall (τ-b): the rows of five runs only."""
    rng = np.random.default_rng(42)
    variant = "b" if method == "kendall" else None
    rows = LEVEL if method == "kendall" else [row for row in LEVEL if row[0] == 5]
    print(f"{method}: runs | systems | noise | config seeds | now | unscaled (before) | raw-value swaps | shared bits, "
          f"unscaled (before, same seeds) [{studies} studies, {draws} draws, α = {alpha}]")
    for n_runs, size, noise, same_seed in rows:
        t0 = time.time()
        rej = {"now": 0, "unscaled": 0, "raw": 0, "shared": 0}
        for s in range(studies):
            tot = {k: np.zeros(draws) for k in rej}
            obs = 0.0
            for r in range(n_runs):
                n = size if isinstance(size, int) else int(rng.integers(size[0], size[1] + 1))
                a, b, (za, zb, y, delta) = null_run(rng, n, noise, method, variant)
                obs += delta / n_runs
                own = 13 if same_seed else 1000 * s + r  # the run's own seed for the test
                ident = f"study {s} run {r}"  # stands for the run's content (distinct runs, distinct content)
                d_now = run_block((za, zb, y), method, variant, stream_seed(ident, 13, own), 0, draws)
                d_own = run_block((za, zb, y), method, variant, own, 0, draws)
                d_raw = run_block((a, b, y), method, variant, stream_seed(ident, 13, own), 0, draws)
                tot["now"] += swap_scale(n) * d_now / n_runs
                tot["unscaled"] += d_now / n_runs
                tot["raw"] += d_raw / n_runs
                tot["shared"] += d_own / n_runs
            for k in rej:
                rej[k] += (1 + int((np.abs(tot[k]) >= abs(obs) - 1e-12).sum())) / (draws + 1) <= alpha
        lim = alpha + 2 * math.sqrt(alpha * (1 - alpha) / studies)
        sizes = f"{size[0]}-{size[1]}" if isinstance(size, tuple) else str(size)
        print(f"{n_runs} | {sizes} | {noise} | {'the same' if same_seed else 'distinct'} | "
              + " | ".join(f"{rej[k] / studies:.3f}" for k in ("now", "unscaled", "raw"))
              + (f" | {rej['shared'] / studies:.3f}" if same_seed else " | -")
              + f" [limit α + 2 se {lim:.3f}; {time.time() - t0:.0f} s]", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--item-level", action="store_true", help="the pooled within-item interval instead")
    ap.add_argument("--level", action="store_true", help="the pooled PERM-BOTH's level under the null instead")
    ap.add_argument("--method", default="kendall", choices=("kendall", "spearman", "pearson"),
                    help="--level: the coefficient (kendall: τ-b)")
    ap.add_argument("--studies", type=int, default=400)
    ap.add_argument("--crossed-studies", type=int, default=200)
    ap.add_argument("--draws", type=int, default=1000)
    args = ap.parse_args()
    if args.item_level:
        item_level(args.studies)
        return
    if args.level:
        null_level(args.studies, args.draws, args.method)
        return
    rng = np.random.default_rng(2027)
    print("design | runs (systems) | σ_a, σ_b | true Δτ | 95% CI: now (before) | 90% CI: now (before)")
    for sizes, sa, sb in SYSTEMS:
        t0 = time.time()
        tr, c = coverage(rng, sizes, sa, sb, args.studies, args.draws)
        se = math.sqrt(0.95 * 0.05 / args.studies)
        print(f"systems | {len(sizes)} ({', '.join(map(str, sizes))}) | {sa}, {sb} | {tr:+.3f} | "
              f"{c['new', 0.95]:.3f} ({c['old', 0.95]:.3f}) | {c['new', 0.90]:.3f} ({c['old', 0.90]:.3f}) "
              f"[{args.studies} studies, se {se:.3f}; {time.time() - t0:.0f} s]", flush=True)
    for sizes, q, sa, sb in CROSSED:
        t0 = time.time()
        tr, c = coverage(rng, sizes, sa, sb, args.crossed_studies, min(args.draws, 400), q)
        se = math.sqrt(0.95 * 0.05 / args.crossed_studies)
        print(f"crossed, {q} queries | {len(sizes)} ({', '.join(map(str, sizes))}) | {sa}, {sb} | {tr:+.3f} | "
              f"{c['new', 0.95]:.3f} ({c['old', 0.95]:.3f}) | {c['new', 0.90]:.3f} ({c['old', 0.90]:.3f}) "
              f"[{args.crossed_studies} studies, se {se:.3f}; {time.time() - t0:.0f} s]", flush=True)


if __name__ == "__main__":
    main()
