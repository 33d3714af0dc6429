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

import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import benchlib


def run_once(checkout: Path, args: list[str], out: Path) -> tuple[float, float, dict, bytes]:
    """(CPU s of the process tree, wall s, timing, results.json without timing) of one run."""
    with benchlib.Tree() as t:
        p = subprocess.run([*benchlib.clir_eval(*args), "--out", str(out), "--quiet"], env=benchlib.env(checkout),
                           cwd=checkout, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)  # fmt: skip
    if p.returncode:
        sys.exit(f"{checkout}: clir-eval {' '.join(args)} failed: {p.stderr.strip()[-500:]}")
    raw = (out / "results.json").read_bytes()
    cut = raw.rfind(b',\n "timing": {')
    timing = json.loads(raw)["timing"]
    return t.cpu, t.wall, timing, raw[:cut].replace(str(out).encode(), b"OUT")


def arguments():
    ap = benchlib.parser(__doc__, repeat=3, jobs=None, before=True)
    ap.add_argument("--config", type=Path, help="run this config instead of the demo")
    return ap


def main() -> int:
    a = arguments().parse_args()
    args = ["demo"] if a.config is None else ["run", str(a.config.resolve())]
    if a.jobs:
        args += ["--jobs", str(a.jobs)]
    checkouts = benchlib.checkouts(a.before)
    work = Path(tempfile.mkdtemp(prefix="bench_demo_"))
    seen: dict[str, list] = {k: [] for k in checkouts}
    try:
        print(f"clir-eval {' '.join(args)}; {a.repeat} run(s) each; load average at start {benchlib.load()}")
        for i in range(a.repeat):
            for name, path in checkouts.items():
                out = work / "out"  # one path for every run, so the results compare byte for byte
                shutil.rmtree(out, ignore_errors=True)
                seen[name].append(run_once(path, args, out))
        print(f"load average at end {benchlib.load()}\n")
        print(f"| | CPU s (tree) | wall s | {' | '.join(seen['this'][0][2])} |")
        print("|---|---:|---:|" + "---:|" * len(seen["this"][0][2]))
        for name, runs in seen.items():
            keys = seen["this"][0][2]  # one column order for every row (another checkout may time other stages)
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
