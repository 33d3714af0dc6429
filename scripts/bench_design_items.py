"""Benchmark of `clir-eval design` on the demo with its item level: wall and CPU time of the default command (which
designs the item level too where the run has one) against this checkout's `--level system` and, with --before,
the same default command of another checkout (e.g. a worktree of the code before item-level power), alternating in
the same run; the issue's bound is 30 s wall for the default command.

    python scripts/bench_design_items.py [--out DEMO_OUT] [--before DIR] [--repeat N] [--jobs N] [-- extra design options]

Without --out the demo is generated first (not timed). Each design runs on a fresh copy of DEMO_OUT.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import benchlib


def arguments():
    ap = benchlib.parser(__doc__, repeat=2, jobs=None, before=True)
    ap.add_argument("--out", type=Path, help="a finished demo run (default: generate one)")
    ap.add_argument("extra", nargs="*", help="more options of design (after --)")
    return ap


def main() -> None:
    a = arguments().parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        src = a.out
        if src is None:
            src = Path(tmp) / "demo"
            subprocess.run(benchlib.clir_eval("demo", "--out", src, "--quiet"), check=True, stdout=subprocess.DEVNULL,
                           env=benchlib.env())
        cases = [("this checkout, default", benchlib.ROOT, []),
                 ("this checkout, --level system", benchlib.ROOT, ["--level", "system"])]
        if a.before:
            cases.append((f"before ({a.before}), default", a.before.resolve(), []))
        runs: dict[str, list[tuple[float, float, int]]] = {name: [] for name, _, _ in cases}
        for r in range(a.repeat):
            for k, (name, root, opts) in enumerate(cases):
                work = Path(tmp) / f"work-{r}-{k}"
                shutil.copytree(src, work)
                cmd = benchlib.clir_eval("design", work, "--quiet", *(["--jobs", a.jobs] if a.jobs else []), *opts,
                                         *a.extra)
                with benchlib.Tree() as t:
                    p = subprocess.run(cmd, capture_output=True, text=True, env=benchlib.env(root), cwd="/")
                if p.returncode != 0:
                    raise SystemExit(f"{name}: design failed ({p.returncode}): {p.stderr.strip()}")
                runs[name].append((t.wall, t.cpu, len(p.stdout.splitlines())))
                shutil.rmtree(work)
        base = min(w for w, _, _ in runs[cases[0][0]])
        for name, _, _ in cases:
            w, c = min(x[0] for x in runs[name]), min(x[1] for x in runs[name])
            bound = f" (bound 30 s: {'ok' if w <= 30 else 'OVER'})" if name.endswith("default") else ""
            print(f"{name}: wall {w:.1f} s (best of {a.repeat}; {benchlib.ratio(w, base)} the default), CPU {c:.1f} s, "
                  f"{runs[name][0][2]} lines{bound}")
        print(f"jobs {a.jobs or os.cpu_count()}, load {benchlib.load()}")


if __name__ == "__main__":
    main()
