#!/usr/bin/env python
"""Benchmark TER: ``clir-eval mt-score --metrics ter`` against ``sacrebleu -m ter`` on the same
files, whole-command CPU (user + sys, one fresh process each, under ``/usr/bin/time``), in the
same run; the scores must be equal. Also prints the in-process split of clir_eval's time
(statistics = sacrebleu's own ``_extract_corpus_statistics``; the rest is ours) and the rate
in segments per CPU-second that ``TER_SEGMENTS_PER_CPU_S`` in clir_eval/mt/rates.py
records.

    python scripts/bench_ter.py [--data ../shared/data] [--lines 5000]

Default input: the first LINES lines of the Lignos et al. 2019 nc-test de-en reference and its
first system (``../shared/data/lignos2019``). Slow: TER is quadratic per segment (~30 CPU-s at 5000 lines).
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import benchlib


def timed(argv: list, env: dict) -> tuple[float, str]:
    m = benchlib.command(argv, env=env)
    return m.cpu, m.stdout


def arguments():
    ap = benchlib.parser(__doc__, data=True)
    ap.add_argument("--lines", type=int, default=5000)
    return ap


def main() -> None:
    args = arguments().parse_args()
    base = benchlib.need(args.data / "lignos2019" / "nc-test" / "de-en", "Lignos et al. 2019 nc-test")
    system = sorted((base / "systems").glob("*.txt.gz"))[0]
    env = benchlib.env()
    sb = shutil.which("sacrebleu") or str(Path(sys.executable).with_name("sacrebleu"))
    with tempfile.TemporaryDirectory() as tmp:
        files = {}
        for name, src in (("ref", base / "reference.en.txt.gz"), ("hyp", system)):
            lines = gzip.open(src, "rt", encoding="utf-8").read().split("\n")[: args.lines]
            files[name] = Path(tmp) / f"{name}.txt"
            files[name].write_text("\n".join(lines) + "\n", encoding="utf-8")
        n = sum(1 for _ in open(files["ref"], encoding="utf-8"))
        sb_cpu, sb_out = timed([sb, str(files["ref"]), "-i", str(files["hyp"]), "-m", "ter", "-b", "-w", "10"], env)
        ce_cpu, ce_out = timed([sys.executable, "-m", "clir_eval", "mt-score", "--hyp", str(files["hyp"]),
                                "--ref", str(files["ref"]), "--metrics", "ter"], env)
        ours = json.loads(ce_out)["ter"]["score"]
        code = ("import sys, time; from clir_eval.mt.base import load_metrics, read_segments\n"
                "m = load_metrics(['ter'])[0]; h, r = read_segments(sys.argv[1], [sys.argv[2]])\n"
                "t = time.process_time(); st = m._bound(r)._extract_corpus_statistics(list(h), None)\n"
                "print(time.process_time() - t)")
        inproc = float(subprocess.run([sys.executable, "-c", code, str(files["hyp"]), str(files["ref"])], env=env,
                                      capture_output=True, text=True, check=True).stdout)
    print(f"TER on {n} segments ({system.name} vs the reference); load: {os.getloadavg()[0]:.1f}")
    print(f"sacrebleu -m ter          {sb_cpu:7.2f} CPU-s   score {float(sb_out):.10f}")
    print(f"clir-eval mt-score ter    {ce_cpu:7.2f} CPU-s   score {ours:.10f}   ratio {benchlib.ratio(ce_cpu, sb_cpu)}")
    print(f"  of which sacrebleu's TER statistics {inproc:.2f} CPU-s ({inproc / ce_cpu:.0%}); "
          f"rate {n / inproc:.0f} segments per CPU-s")
    print(f"scores equal to 10 decimals: {round(float(sb_out), 10) == round(ours, 10)}")


if __name__ == "__main__":
    main()
