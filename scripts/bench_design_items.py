"""Benchmark of `clir-eval design` on the demo with the item level: wall and CPU time of the default command (which
designs the item level too where the run has one) against the same command of another checkout (``--before``, e.g.
a worktree of the code before item-level power) in the same run, alternating, and against this checkout's
``--level system``; bound of the issue: 30 s wall for the default command.

    python scripts/bench_design_items.py [--out DEMO_OUT] [--before CHECKOUT] [--repeat 2] [--jobs N]
        [-- extra design options]

Without --out the demo is generated first (not timed). Each design runs on a fresh copy of DEMO_OUT.
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

ROOT = Path(__file__).resolve().parents[1]


def _time(cmd: list[str], env: dict) -> tuple[float, float, int]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd="/")
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({p.returncode}): {p.stderr.strip()}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), len(p.stdout.splitlines())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, help="a finished demo run (default: generate one)")
    ap.add_argument("--before", type=Path, help="another checkout to time the same command with (its package root)")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--jobs", type=int, default=None)
    ap.add_argument("extra", nargs="*")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        src = a.out
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        if src is None:
            src = Path(tmp) / "demo"
            subprocess.run([sys.executable, "-m", "clir_eval", "demo", "--out", str(src), "--quiet"], check=True,
                           stdout=subprocess.DEVNULL, env=env, cwd="/")
        cases = [("this checkout, default", ROOT, []), ("this checkout, --level system", ROOT, ["--level", "system"])]
        if a.before:
            cases.append((f"before ({a.before}), default", a.before.resolve(), []))
        times: dict[str, list[tuple[float, float, int]]] = {c[0]: [] for c in cases}
        for r in range(a.repeat):
            for name, root, opts in cases:
                work = Path(tmp) / f"work-{r}-{len(times[name])}-{abs(hash(name))}"
                shutil.copytree(src, work)
                cmd = [sys.executable, "-m", "clir_eval", "design", str(work), "--quiet",
                       *(["--jobs", str(a.jobs)] if a.jobs else []), *opts, *a.extra]
                times[name].append(_time(cmd, {**os.environ, "PYTHONPATH": str(root)}))
                shutil.rmtree(work)
        base = min(w for w, _, _ in times[cases[0][0]])
        for name, _, _ in cases:
            w = min(x[0] for x in times[name])
            c = min(x[1] for x in times[name])
            print(f"{name}: wall {w:.1f} s (min of {a.repeat}; {w / base:.2f}x the default), CPU {c:.1f} s, "
                  f"{times[name][0][2]} lines"
                  + (f" (bound 30 s: {'ok' if w <= 30 else 'OVER'})" if name.endswith("default") else ""))
        print(f"jobs {a.jobs or os.cpu_count()}, load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
