#!/usr/bin/env python
"""Benchmark start-up (issue 16 item 5): CPU time and peak RSS of ``clir-eval --help``,
``--version`` and each command's ``--help``, next to ``sacrebleu --help`` in the same run.

Each command runs REPEAT times as a fresh process under ``/usr/bin/time``; CPU is user+sys of
that process, memory its own peak RSS; the median over the repeats is printed, with the
ratio to sacrebleu's. ``--before DIR`` also measures another checkout (e.g. the code
before the change) with the same interpreter, so before/after are in one table.
The machine may be shared: CPU time is less noisy than wall time, but repeat.

    python scripts/bench_startup.py
    python scripts/bench_startup.py --before /work/main
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

HEAVY = ("numpy", "scipy", "sacrebleu", "pytrec_eval", "matplotlib", "rich", "yaml")
ROOT = Path(__file__).resolve().parent.parent


def measure(argv: list[str], env: dict, repeat: int) -> tuple[float, float]:
    """Median CPU seconds and median peak RSS (MiB) of ``argv`` run ``repeat`` times."""
    cpu, rss = [], []
    for _ in range(repeat):
        # through /usr/bin/time: a tiny parent, so the peak RSS is the command's own (a child's
        # ru_maxrss starts at what it inherits from the process that forked it)
        p = subprocess.run(["/usr/bin/time", "-f", "TIME %U %S %M", *argv], env=env, cwd="/",
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)  # fmt: skip
        user, sys_, kib = p.stderr.rsplit("TIME ", 1)[1].split()[:3]
        cpu.append(float(user) + float(sys_))
        rss.append(int(kib) / 1024)
    return statistics.median(cpu), statistics.median(rss)


def imported(args: list[str], env: dict) -> list[str]:
    code = (
        "import sys; from clir_eval.cli import main\n"
        f"try: main({args!r})\nexcept SystemExit: pass\n"
        f"print('imported:', *[m for m in {HEAVY!r} if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd="/", capture_output=True, text=True).stdout
    return out.rsplit("imported:", 1)[-1].split()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--before", type=Path, help="another checkout of clir_eval to measure too")
    args = ap.parse_args()

    cases = [["--version"], ["--help"]] + [[c, "--help"] for c in ("run", "retrieve", "correlate", "mt-score", "ir-score")]
    trees = [("after", ROOT)] + ([("before", args.before.resolve())] if args.before else [])
    sb = shutil.which("sacrebleu") or str(Path(sys.executable).with_name("sacrebleu"))
    base_cpu, base_rss = measure([sb, "--help"], dict(os.environ), args.repeat)
    print(f"python {sys.version.split()[0]}, {args.repeat} runs each, medians; reference: sacrebleu --help "
          f"{base_cpu:.3f} s CPU, {base_rss:.0f} MiB")
    print(f"{'tree':<7} {'command':<22} {'CPU s':>7} {'x sb':>6} {'RSS MiB':>8} {'x sb':>6}  heavy modules imported")
    for label, tree in trees:
        env = {**os.environ, "PYTHONPATH": str(tree)}
        for case in cases:
            cpu, rss = measure([sys.executable, "-c", "from clir_eval.cli import entry; entry()", *case], env, args.repeat)
            mods = imported(case, env)
            print(f"{label:<7} {' '.join(case):<22} {cpu:7.3f} {cpu / base_cpu:6.2f} {rss:8.0f} {rss / base_rss:6.2f}  "
                  f"{' '.join(mods) or '-'}")


if __name__ == "__main__":
    main()
