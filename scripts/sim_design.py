"""Calibration of `clir-eval design`: predicted power against fresh studies from the same known model.

    python scripts/sim_design.py [--pilot 12x50 --pilot 24x100] [--pilots 8] [--fresh 1000] [--reps 400] [--seed 1]

Uses the generator of tests/test_design.py (systems' quality u ~ N(0, 1); per-query IR values 0.1 u + query
effect + noise 0.3; four metrics with loadings 0.75, 0.45, 0.4, 0.2 and residual correlation 0.6). For each pilot
size, ``--pilots`` pilots are drawn (seeds distinct across pilot sizes) and fitted; each predicts, with ``--reps`` simulated studies per point (the
command's default 400), the power of

- the single τ of the first metric at its true population τ at the pilot's number of queries, and
- "m0 significantly above m1" (the run's verdict: PERM-BOTH as the run computes it, Holm over the 6 pairs) at the
  true Δτ of the two at the pilot's number of queries,

at every size of the grid (the corners 6/36 systems x 25/200 queries and the sizes the docs reported before), and
at effect 0. ``--fresh`` fresh studies per size, drawn from the generating model and judged by the run's tests
(scipy's Kendall test; the run's PERM-BOTH p with Holm), give the truth. Prints per size: fresh share ± se, the
mean prediction over pilots, its spread over pilots (sd and min-max) and whether the mean is within ±0.1; at
effect 0 the largest prediction over pilots.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from test_design import R_TRUE, fresh, pilot_fit, predict, true_tau  # noqa: E402

SIZES = [(6, 25), (6, 200), (36, 25), (36, 200), (6, 50), (12, 50), (24, 50), (36, 50), (12, 25), (12, 200),
         (24, 200)]


def size(text: str) -> tuple[int, int]:
    s, q = text.lower().split("x")
    return int(s), int(q)


def spread(v: list[float]) -> str:
    return f"{np.mean(v):.3f} sd {np.std(v):.3f} ({min(v):.2f}-{max(v):.2f})"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pilot", type=size, action="append", help="pilot size SYSTEMSxQUERIES (repeatable; "
                    "default 12x50 and 24x100)")
    ap.add_argument("--pilots", type=int, default=24)
    ap.add_argument("--fresh", type=int, default=1000)
    ap.add_argument("--reps", type=int, default=400)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    pilots = a.pilot or [(12, 50), (24, 100)]
    t0 = time.perf_counter()
    rng = np.random.default_rng(a.seed)
    truth = {}
    for n, q in SIZES:
        truth[(n, q)] = fresh(rng, n, q, a.fresh)
    se = lambda p: math.sqrt(p * (1 - p) / a.fresh)  # noqa: E731
    print(f"fresh studies: {a.fresh} per size; predictions: {a.reps} simulated studies per point, {a.pilots} pilots "
          f"per pilot size (seeds {a.seed} * 100000 + systems * 1000 + 0..{a.pilots - 1})")
    for S, Q in pilots:
        fits = [pilot_fit(a.seed * 100_000 + S * 1000 + k, S, Q) for k in range(a.pilots)]
        tau = true_tau(R_TRUE[0], Q)
        delta = tau - true_tau(R_TRUE[1], Q)
        print(f"\npilot {S} systems x {Q} queries: true τ(m0) = {tau:.3f}, true Δτ(m0, m1) = {delta:.3f} at {Q} "
              "queries")
        print("| size | τ fresh | τ predicted: mean sd (range) | within ±0.1 | Δτ fresh | Δτ predicted: mean sd (range) "
              "| within ±0.1 | effect 0: τ (exact) | effect 0: Δτ max over pilots |")
        print("|---|---|---|---|---|---|---|---|---|")
        for n, q in SIZES:
            ft, fp = truth[(n, q)]
            pt = [predict(f, n, q, tau, reps=a.reps) for f in fits]
            pp = [predict(f, n, q, delta, "m0", "m1", reps=a.reps) for f in fits]
            z_t = predict(fits[0], n, q, 0.0, reps=a.reps)
            z_p = max(predict(f, n, q, 0.0, *f.metrics[:2], reps=a.reps) for f in fits)
            ok = lambda p, f: "yes" if abs(np.mean(p) - f) <= 0.1 else "NO"  # noqa: E731
            print(f"| {n} × {q} | {ft:.3f} ± {se(ft):.3f} | {spread(pt)} | {ok(pt, ft)} | {fp:.3f} ± {se(fp):.3f} | "
                  f"{spread(pp)} | {ok(pp, fp)} | {z_t:.3f} | {z_p:.3f} |", flush=True)
    print(f"\n{time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
