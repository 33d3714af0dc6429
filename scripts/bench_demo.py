#!/usr/bin/env python
"""Benchmark ``clir-eval demo`` (or ``clir-eval run CONFIG``) end to end: CPU time of the whole
process tree (the command and its worker processes, user + system), wall time, and how the run
divides by stage (``results.json["timing"]``: wall seconds inside the run; the ``cpu_*`` entries
are the systems' stage times summed over workers), with the machine's load average.

Each case runs REPEAT times as a fresh process into a fresh output directory; the median is
printed. ``--before DIR`` also runs another checkout (e.g. the code before a change) with the
same interpreter, alternating with this one, and checks that both write the same results.json
apart from its timing (output paths normalised). The machine may be shared: CPU time is less
noisy than wall time, but repeat.

    python scripts/bench_demo.py                       # the demo, default --jobs
    python scripts/bench_demo.py --jobs 1 --before /work/main
    python scripts/bench_demo.py --config configs/wmt21_ru_en.yaml --repeat 1
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def load() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "unknown"


def run_once(checkout: Path, args: list[str], out: Path, env: dict) -> tuple[float, float, dict, bytes]:
    """(CPU s of the process tree, wall s, timing, results.json without timing) of one run."""
    env = {**env, "PYTHONPATH": str(checkout)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "clir_eval", *args, "--out", str(out), "--quiet"], env=env,
                       cwd=checkout, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)  # fmt: skip
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode:
        sys.exit(f"{checkout}: clir-eval {' '.join(args)} failed: {p.stderr.strip()[-500:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    raw = (out / "results.json").read_bytes()
    cut = raw.rfind(b',\n "timing": {')
    timing = json.loads(raw)["timing"]
    return cpu, wall, timing, raw[:cut].replace(str(out).encode(), b"OUT")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--config", type=Path, help="run this config instead of the demo")
    ap.add_argument("--jobs", type=int, help="--jobs of the command (default: its own)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--before", type=Path, help="another checkout to measure in the same run")
    a = ap.parse_args()
    args = ["demo"] if a.config is None else ["run", str(a.config.resolve())]
    if a.jobs:
        args += ["--jobs", str(a.jobs)]
    checkouts = {"this": ROOT} | ({"before": a.before.resolve()} if a.before else {})
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    work = Path(tempfile.mkdtemp(prefix="bench_demo_"))
    seen: dict[str, list] = {k: [] for k in checkouts}
    try:
        print(f"clir-eval {' '.join(args)}; {a.repeat} run(s) each; load average at start {load()}")
        for i in range(a.repeat):
            for name, path in checkouts.items():
                out = work / "out"  # one path for every run, so the results compare byte for byte
                shutil.rmtree(out, ignore_errors=True)
                seen[name].append(run_once(path, args, out, env))
        print(f"load average at end {load()}\n")
        print(f"| | CPU s (tree) | wall s | {' | '.join(seen['this'][0][2])} |")
        print("|---|---:|---:|" + "---:|" * len(seen["this"][0][2]))
        for name, runs in seen.items():
            keys = runs[0][2]
            med = {k: statistics.median(r[2].get(k, 0.0) for r in runs) for k in keys}
            print(f"| {name} | {statistics.median(r[0] for r in runs):.2f} | {statistics.median(r[1] for r in runs):.2f} | "
                  + " | ".join(f"{v:.2f}" for v in med.values()) + " |")
        if "before" in seen:
            this, before = statistics.median(r[0] for r in seen["this"]), statistics.median(r[0] for r in seen["before"])
            same = {r[3] for r in seen["this"] + seen["before"]}
            print(f"\nCPU this / before: {this / before:.2f}x; results.json (without timing) identical "
                  f"across all runs: {'yes' if len(same) == 1 else 'NO'}")
        else:
            print(f"\nresults.json (without timing) identical across runs: {'yes' if len({r[3] for r in seen['this']}) == 1 else 'NO'}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
