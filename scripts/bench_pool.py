#!/usr/bin/env python
"""Benchmark ``clir-eval pool`` on 10 finished runs (target: at most 10 s).

The runs are built first (not timed): configs whose MT and IR scores come from generated tables
(``external:``), 8 to 30 systems each, 6 MT metrics, 3 IR targets, the default verdict settings
(1000 PERM-BOTH draws, sequential, Holm). Then ``clir-eval pool RUN... --out DIR`` runs REPEAT
times as a fresh process (CPU time of the process, user + system, and wall time; median). As the
reference in the same run, the re-implemented mt-metrics-eval ``AverageCorrMatrix`` + ``AssignRanks``
(tests/test_pool.py) is timed on the same first 1000 draws per run, which it is given precomputed
(the draws themselves are the bulk of the pooled test, so the ratio shows what the rest costs).

With ``--before DIR`` (another checkout, e.g. ``git worktree add DIR main``, or ``git archive main clir_eval | tar -x
-C DIR``), the same command from that checkout is timed alternately with this one in the same run, and the ratio
printed.

    python scripts/bench_pool.py [--runs 10] [--repeat 3] [--systems 30]
    python scripts/bench_pool.py --before ../main
    python scripts/bench_pool.py --dirs out/study/{wmt21-ru-en,wmt21-is-en,...} --before OLD  # given finished runs

With ``--dirs`` the given finished runs are pooled instead of generated ones (the reference is then not timed).
``--thresholds`` then also times the thresholds alone in one process, ``threshold_rows`` with its plots (CPU
seconds of the whole call, of its fits and of its plots with their imports), for this checkout and ``--before``'s.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import benchlib

sys.path.insert(0, str(benchlib.ROOT / "tests"))


def arguments():
    ap = benchlib.parser(__doc__, repeat=3, before=True)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--systems", type=int, default=30, help="systems in the largest run (runs have 8 to this)")
    ap.add_argument("--dirs", type=Path, nargs="+", help="pool these finished runs instead of generated ones")
    ap.add_argument("--thresholds", action="store_true", help="with --dirs: also time threshold_rows in one process")
    return ap


THRESHOLDS = """
import json, sys, time
from clir_eval.pooling import thresholds as T
from clir_eval.pooling.runs import load_run
runs = [load_run(d) for d in sys.argv[1:]]
spent = {"fits": 0.0, "plots": 0.0}
def timed(name, fn):
    def wrap(*a, **k):
        t = time.process_time()
        try:
            return fn(*a, **k)
        finally:
            spent[name] += time.process_time() - t
    return wrap
T.fit_beta, T._plots = timed("fits", T.fit_beta), timed("plots", T._plots)
t = time.process_time()
T.threshold_rows(runs, plots=True)
print(json.dumps({"all": time.process_time() - t, **spent}))
"""


def time_thresholds(runs: list[Path], checkouts: dict[str, Path], repeat: int) -> None:
    """CPU seconds of ``threshold_rows(runs, plots=True)`` in a fresh process per checkout (alternately), medians."""
    seen: dict[str, list[dict[str, float]]] = {who: [] for who in checkouts}
    for _ in range(repeat):
        for who, path in checkouts.items():
            p = subprocess.run([sys.executable, "-c", THRESHOLDS, *map(str, runs)], capture_output=True, text=True,
                               check=True, env=benchlib.env(path), cwd=path)
            seen[who].append(json.loads(p.stdout))
    for who, rows in seen.items():
        med = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
        print(f"threshold_rows ({who}): {med['all']:.2f} CPU-s, of which fits {med['fits']:.2f}, plots with their "
              f"imports {med['plots']:.2f} (median of {repeat})")


def main() -> None:
    args = arguments().parse_args()
    import numpy as np
    from test_pool import _mtme_average_corr_matrix, make_run  # noqa: E402  (the tests' run builder)

    from clir_eval.correlation.statistics import ResampleBlock, perm_both_setup, resample_block
    from clir_eval.pooling.runs import load_run

    metrics = ("bleu", "chrf1", "macrof1", "microf1", "ter_neg", "bleurt")
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        if args.dirs:
            runs = [d.resolve() for d in args.dirs]
            print(f"{len(runs)} finished runs: {' '.join(d.name for d in runs)}; load {benchlib.load()}")
        else:
            sizes = np.linspace(8, args.systems, args.runs).astype(int)
            runs = [make_run(t, f"r{i:02d}", 100 + i, n=int(n), metrics=metrics, targets=("map", "rbo", "ndcg"),
                             rseed=13 + i) for i, n in enumerate(sizes)]
            print(f"{args.runs} runs, {sizes.min()}-{sizes.max()} systems, {len(metrics)} metrics, 3 targets; "
                  f"load {benchlib.load()}")
        checkouts = benchlib.checkouts(args.before)
        seen: dict[str, list[tuple[float, float]]] = {who: [] for who in checkouts}
        for k in range(args.repeat):
            for who, path in checkouts.items():  # alternately, so both see the same load
                with benchlib.Tree() as tree:  # `-m` puts the working directory first on the path: cwd is the checkout
                    subprocess.run(benchlib.clir_eval("pool", *runs, "--out", t / f"p{who}{k}", "--format", "json"),
                                   check=True, stdout=subprocess.DEVNULL, env=benchlib.env(path), cwd=path)
                seen[who].append((tree.wall, tree.cpu))
        wall, cpu = (statistics.median(x[i] for x in seen["this"]) for i in (0, 1))
        if args.dirs:
            print(f"clir-eval pool --out: {wall:.2f} s wall, {cpu:.2f} CPU-s (median of {args.repeat})")
            if args.before:
                ow, oc = (statistics.median(x[i] for x in seen["before"]) for i in (0, 1))
                print(f"the same command from {args.before}: {ow:.2f} s wall, {oc:.2f} CPU-s; this one / that one: "
                      f"{benchlib.ratio(wall, ow)} wall, {benchlib.ratio(cpu, oc)} CPU")
            if args.thresholds:
                time_thresholds(runs, checkouts, args.repeat)
            return
        # reference: mt-metrics-eval's AverageCorrMatrix on precomputed draws (one target)
        rl = [load_run(d) for d in runs]
        draws = []
        for r in rl:
            dd = {}
            for (tt, a, b), seed in r.seeds.items():
                if tt != "map":
                    continue
                s = perm_both_setup(r.column(a), r.column(b), r.column(tt), "kendall", "b")
                diff = resample_block(ResampleBlock("permutation", s[:3], "kendall", "b", seed, 0, 1000))
                pair = np.stack([diff, np.zeros_like(diff)], axis=1)
                dd[(a, b)], dd[(b, a)] = pair, pair[:, [1, 0]]
            draws.append(dd)
        t0 = time.perf_counter()
        _mtme_average_corr_matrix([r.taus["map"] for r in rl], draws, [1 / len(rl)] * len(rl), 0.05)
        ref = time.perf_counter() - t0
        print(f"clir-eval pool: {wall:.2f} s wall (median of {args.repeat}; budget 10 s: {wall / 10:.2f}x), "
              f"{cpu:.2f} CPU-s; the whole command: 3 targets, draws, CIs, thresholds with 1000-draw bootstrap, plots")
        if args.before:
            ow, oc = (statistics.median(x[i] for x in seen["before"]) for i in (0, 1))
            print(f"the same command from {args.before}: {ow:.2f} s wall, {oc:.2f} CPU-s; this one / that one: "
                  f"{benchlib.ratio(wall, ow)} wall, {benchlib.ratio(cpu, oc)} CPU")
        print(f"mt-metrics-eval AverageCorrMatrix+AssignRanks on precomputed draws, one target: {ref * 1000:.1f} ms "
              f"(pool / reference per target: {wall / 3 / ref:.0f}x; pool draws its own)")


if __name__ == "__main__":
    main()
