"""Benchmark: vectorised bootstrap / permutation draws in clir_eval.correlation.statistics vs the
straightforward reference (one scipy.stats call per draw, same seeded draws).

Prints the time of each and the ratio, and checks both give the same interval / p-value.
Usage: python scripts/bench_correlation.py [--systems 16] [--resamples 1000] [--repeat 3]
"""

from __future__ import annotations

import benchlib
import numpy as np
import scipy
import scipy.stats

from clir_eval.correlation.statistics import bootstrap_ci, pair_coef, percentile_ci, permutation_sigdiff


def ref_bootstrap(x, y, method, variant, n_resamples, seed, level=0.95):
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(x), (n_resamples, len(x)))
    return percentile_ci([pair_coef(x[i], y[i], method, variant) for i in idx], level)


def ref_permutation(x1, x2, y, method, variant, n_resamples, seed):
    a, b = scipy.stats.zscore(x1), scipy.stats.zscore(x2)
    delta = pair_coef(a, y, method, variant) - pair_coef(b, y, method, variant)
    swap = np.random.default_rng(seed).random((n_resamples, len(a))) < 0.5
    hits = 0
    for s in swap:
        c1 = np.nan_to_num(pair_coef(np.where(s, b, a), y, method, variant))
        c2 = np.nan_to_num(pair_coef(np.where(s, a, b), y, method, variant))
        hits += (c1 - c2) >= delta - 1e-12
    return delta, hits / n_resamples


def arguments():
    ap = benchlib.parser(__doc__, repeat=3)
    ap.add_argument("--systems", type=int, default=16)
    ap.add_argument("--resamples", type=int, default=1000)
    return ap


def main() -> None:
    args = arguments().parse_args()
    rng = np.random.default_rng(0)
    n = args.systems
    y = rng.normal(size=n)
    x1 = np.round(y + rng.normal(scale=0.5, size=n), 1)  # rounded: realistic ties
    x2 = np.round(y + rng.normal(scale=0.8, size=n), 1)
    print(f"systems={n} resamples={args.resamples} numpy={np.__version__} scipy={scipy.__version__} "
          f"(best of {args.repeat})")
    for method, variant in [("kendall", "b"), ("kendall", "acc23"), ("pearson", None)]:
        t_ref, ci_ref = benchlib.best(lambda: ref_bootstrap(x1, y, method, variant, args.resamples, 0), args.repeat)
        t_new, ci_new = benchlib.best(lambda: bootstrap_ci(x1, y, method, variant, args.resamples, 0), args.repeat)
        assert np.allclose(ci_ref, ci_new), (ci_ref, ci_new)
        print(f"bootstrap_ci        {method:8s} {str(variant):5s} ref {t_ref*1e3:8.1f} ms  "
              f"ours {t_new*1e3:7.1f} ms  speed-up x{t_ref / t_new:6.1f}")
        t_ref, r_ref = benchlib.best(lambda: ref_permutation(x1, x2, y, method, variant, args.resamples, 0), args.repeat)
        t_new, r_new = benchlib.best(lambda: permutation_sigdiff(x1, x2, y, method, variant, args.resamples, 0),
                               args.repeat)
        assert np.allclose(r_ref, r_new), (r_ref, r_new)
        print(f"permutation_sigdiff {method:8s} {str(variant):5s} ref {t_ref*1e3:8.1f} ms  "
              f"ours {t_new*1e3:7.1f} ms  speed-up x{t_ref / t_new:6.1f}")


if __name__ == "__main__":
    main()
