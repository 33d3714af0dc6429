"""Benchmark of `clir-eval design` on the demo: wall time, CPU time and peak memory of the command as a user runs
it (default settings: every target, 6 sizes of systems and 6 of queries, effects 0.1, 0.2, 0.3, 400 simulated
studies per point, the adjacent pairs, one worker per core), against the issue's bound of 30 s.

    python scripts/bench_design.py [--out DEMO_OUT] [--jobs N] [--reps N] [-- extra design options]

Without --out the demo is generated into a temporary directory first (not timed). The design runs on a copy, so
DEMO_OUT is left as it was. ``--reps 100000 -- --targets map --systems 36 --queries 60 --effect 0.3`` measures the
memory bound at the largest number of studies the option accepts.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import benchlib


def arguments():
    ap = benchlib.parser(__doc__, jobs=None)
    ap.add_argument("--out", type=Path, help="a finished demo run (default: generate one)")
    ap.add_argument("--reps", type=int, default=None)
    ap.add_argument("extra", nargs="*", help="more options of design (after --)")
    return ap


def main() -> None:
    a = arguments().parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        src = a.out
        if src is None:
            src = Path(tmp) / "demo"
            subprocess.run(benchlib.clir_eval("demo", "--out", src, "--quiet"), check=True, stdout=subprocess.DEVNULL)
        work = Path(tmp) / "work"
        shutil.copytree(src, work)
        cmd = benchlib.clir_eval("design", work, "--quiet", *(["--jobs", a.jobs] if a.jobs else []),
                                 *(["--reps", a.reps] if a.reps else []), *a.extra)
        with benchlib.Tree() as t:
            p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            raise SystemExit(f"design failed ({p.returncode}): {p.stderr.strip()}")
        peak = t.rss / 2**10  # MiB -> GiB (the largest child: the design process or one worker)
        lines = p.stdout.splitlines()
        print(f"design on the demo ({' '.join(cmd[4:])}): wall {t.wall:.1f} s (bound 30 s: "
              f"{'ok' if t.wall <= 30 else 'OVER'}), CPU {t.cpu:.1f} s, peak RSS {peak:.2f} GiB, {len(lines)} lines "
              f"printed, jobs {a.jobs or os.cpu_count()}, load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
