"""Benchmark of `clir-eval design` on the demo: wall time, CPU time and peak memory of the command as a user runs
it (default settings: every target, 6 sizes of systems and 6 of queries, effects 0.1, 0.2, 0.3, 400 simulated
studies per point, the adjacent pairs, one worker per core), against the issue's bound of 30 s.

    python scripts/bench_design.py [--out DEMO_OUT] [--jobs N] [--reps N] [-- extra design options]

Without --out the demo is generated into a temporary directory first (not timed). The design runs on a copy, so
DEMO_OUT is left as it was. ``--reps 100000 -- --targets map --systems 36 --queries 60 --effect 0.3`` measures the
memory bound at the largest number of studies the option accepts.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, help="a finished demo run (default: generate one)")
    ap.add_argument("--jobs", type=int, default=None)
    ap.add_argument("--reps", type=int, default=None)
    ap.add_argument("extra", nargs="*")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        src = a.out
        if src is None:
            src = Path(tmp) / "demo"
            subprocess.run([sys.executable, "-m", "clir_eval", "demo", "--out", str(src), "--quiet"], check=True,
                           stdout=subprocess.DEVNULL)
        work = Path(tmp) / "work"
        shutil.copytree(src, work)
        cmd = [sys.executable, "-m", "clir_eval", "design", str(work), "--quiet",
               *(["--jobs", str(a.jobs)] if a.jobs else []), *(["--reps", str(a.reps)] if a.reps else []), *a.extra]
        t0 = time.perf_counter()
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        p = subprocess.run(cmd, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if p.returncode != 0:
            sys.exit(f"design failed ({p.returncode}): {p.stderr.strip()}")
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        peak = after.ru_maxrss / 2 ** 20  # KiB -> GiB (the largest child: the design process or one worker)
        lines = p.stdout.splitlines()
        print(f"design on the demo ({' '.join(cmd[4:])}): wall {wall:.1f} s (bound 30 s: "
              f"{'ok' if wall <= 30 else 'OVER'}), CPU {cpu:.1f} s, peak RSS {peak:.2f} GiB, {len(lines)} lines "
              f"printed, jobs {a.jobs or os.cpu_count()}, load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
