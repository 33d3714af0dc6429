"""What the verdicts cost.

1. A whole demo run (``--jobs 1``, fresh cache) with and without verdicts (PERM-BOTH on every pair,
   discriminability, power) and BOOT-BOTH CIs: process CPU time (min over reps).
2. ``--size 40x8``: the correlation stage alone on a synthetic run of 40 systems x 8 MT metrics x
   3 IR measures with per-query values (60 queries): the default procedure (sequential draws,
   Holm per target) against the earlier one (1000 draws fixed, Holm over all targets), serial CPU
   time and wall time on a local pool of 2 workers, and the draws each used.

Usage: python scripts/bench_verdicts.py [--reps 2] [--size 40x8] [--skip-demo]
CPU time where stated, not wall time: the machine is shared.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from importlib.resources import files
from pathlib import Path

import benchlib


def run_once(root: Path, verdicts: bool) -> tuple[float, float]:
    from clir_eval.config.load import load_config
    from clir_eval.correlation import driver, significance
    from clir_eval.pipeline.run import run_experiment

    out = root / ("with" if verdicts else "without")
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir()
    (out / "data").symlink_to(root / "data")
    text = files("clir_eval").joinpath("data/demo.yaml").read_text(encoding="utf-8")
    (out / "demo.yaml").write_text(text.replace("data_root: ../demo-out/data", "data_root: data", 1), encoding="utf-8")
    cfg = load_config(out / "demo.yaml")
    real_run, real_ci, real_draws = driver.correlate_run, significance.boot_both_ci, significance.joint_draws
    if not verdicts:
        driver.correlate_run = lambda *a, **k: real_run(*a, **{**k, "with_verdicts": False})
        significance.boot_both_ci = lambda *a, **k: (None, None)
        significance.joint_draws = lambda *a, **k: None
    try:
        res, total, _ = benchlib.timed(lambda: run_experiment(cfg, out, jobs=1, quiet=True))
    finally:
        driver.correlate_run, significance.boot_both_ci, significance.joint_draws = real_run, real_ci, real_draws
    assert bool(res.get("verdicts")) == verdicts
    return total, res["timing"]["correlation"]


def synthetic_run(n_sys: int, n_mt: int, n_ir: int = 3, n_q: int = 60, seed: int = 0):
    """(sys_results, kinds): systems of graded quality, MT metrics of graded noise, per-query IR values."""
    import numpy as np

    rng = np.random.default_rng(seed)
    quality = np.sort(rng.normal(size=n_sys))
    sys_results = {}
    for s in range(n_sys):
        pq = {f"q{q}": {f"ir{m}": float(np.clip(0.4 + 0.05 * quality[s] + rng.normal(0, 0.2), 0, 1))
                        for m in range(n_ir)} for q in range(n_q)}
        sys_results[f"sys{s:02d}"] = {
            "mt": {f"mt{k}": float(quality[s] + rng.normal(0, 0.2 + 0.15 * k)) for k in range(n_mt)},
            "ir": {f"ir{m}": float(np.mean([v[f"ir{m}"] for v in pq.values()])) for m in range(n_ir)},
            "ir_per_query": pq, "human": {}}
    kinds = {"mt": [f"mt{k}" for k in range(n_mt)], "ir": [f"ir{m}" for m in range(n_ir)], "human": [],
             "lower_is_better": []}
    return sys_results, kinds


def bench_size(size: str) -> None:

    from clir_eval.correlation.driver import correlate_run
    from clir_eval.correlation.settings import CorrelationInputs, CorrelationSettings
    from clir_eval.pipeline.executor import LocalExecutor

    n_sys, n_mt = (int(v) for v in size.split("x"))
    sys_results, kinds = synthetic_run(n_sys, n_mt)
    for label, kw in (("earlier (fixed 1000, Holm over all)", {"family": "all", "resolution": "fixed"}),
                      ("default (sequential, Holm per target)", {})):
        cfg = CorrelationInputs(CorrelationSettings(bootstrap=1000, permutation=1000, **kw))
        t0 = time.process_time()
        serial = correlate_run(cfg, sys_results, kinds)
        cpu = time.process_time() - t0
        with LocalExecutor(2) as ex:
            t0 = time.perf_counter()
            pooled = correlate_run(cfg, sys_results, kinds, map=ex.map, chunks=8)
            wall = time.perf_counter() - t0
        same = json.dumps(pooled) == json.dumps(serial)
        vds = serial["verdicts"]
        draws = sum(p.get("resamples", 0) for v in vds for p in v["pairwise"])
        ddraws = [v["discriminability"]["resolution"]["draws"] for v in vds]
        sig = sum(p["significant"] for v in vds for p in v["pairwise"])
        sep = [v["discriminability"]["pairs_separated"] for v in vds]
        print(f"{size} {label}: correlation stage serial {cpu:.1f} CPU-s, 2-worker pool {wall:.1f} s wall "
              f"(pool == serial: {same}); PERM-BOTH draws {draws} over {sum(len(v['pairwise']) for v in vds)} "
              f"tests, {sig} significant; discriminability draws {ddraws}, pairs separated {sep}")


def arguments():
    ap = benchlib.parser(__doc__)
    ap.add_argument("--reps", type=int, default=2, help="demo runs with and without verdicts; the least CPU is kept")
    ap.add_argument("--size", default="40x8", help="SYSTEMSxMETRICS of the synthetic correlation stage ('' = skip)")
    ap.add_argument("--skip-demo", action="store_true")
    return ap


def main() -> None:
    args = arguments().parse_args()
    if args.size:
        bench_size(args.size)
    if args.skip_demo:
        return
    from clir_eval.sources.demo import generate_demo

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        generate_demo(root / "data", seed=13)
        best = {}
        for mode in (False, True) * args.reps:
            total, corr = run_once(root, mode)
            prev = best.get(mode)
            best[mode] = (min(total, prev[0]), min(corr, prev[1])) if prev else (total, corr)
        (t0, c0), (t1, c1) = best[False], best[True]
        print(f"demo run CPU without verdicts: {t0:.2f} s (correlation stage wall {c0:.2f} s)")
        print(f"demo run CPU with verdicts:    {t1:.2f} s (correlation stage wall {c1:.2f} s)")
        print(f"verdicts + BOOT-BOTH add {t1 - t0:.2f} s CPU = {100 * (t1 / t0 - 1):.1f}% of the run")


if __name__ == "__main__":
    main()
