#!/usr/bin/env python
"""Benchmark ``clir-eval mt-score`` (bleu, chrf1, macrof1, microf1) against ``sacrebleu -m bleu chrf``
on the same 5000-line files, whole-command CPU (user + sys of a fresh process under
``/usr/bin/time``, so imports and start-up count), medians of REPEAT runs each, in the same run.

    python scripts/bench_mt_score.py [--data ../shared/data] [--repeat 3]

Input: the Lignos et al. 2019 nc-test de-en reference and its first system (5000 lines).
"""

from __future__ import annotations

import gzip
import os
import shutil
import sys
import tempfile
from pathlib import Path

import benchlib


def arguments():
    ap = benchlib.parser(__doc__, repeat=3, data=True)
    ap.add_argument("--metrics", default="bleu,chrf1,macrof1,microf1")
    return ap


def main() -> None:
    args = arguments().parse_args()
    base = benchlib.need(args.data / "lignos2019" / "nc-test" / "de-en", "Lignos et al. 2019 nc-test")
    env = benchlib.env()
    sb = shutil.which("sacrebleu") or str(Path(sys.executable).with_name("sacrebleu"))
    with tempfile.TemporaryDirectory() as tmp:
        ref, hyp = Path(tmp) / "ref.txt", Path(tmp) / "hyp.txt"
        ref.write_bytes(gzip.open(base / "reference.en.txt.gz").read())
        hyp.write_bytes(gzip.open(sorted((base / "systems").glob("*.txt.gz"))[0]).read())
        c_sb = benchlib.command([sb, ref, "-i", hyp, "-m", "bleu", "chrf"], env=env, repeat=args.repeat).cpu
        c_ce = benchlib.command(benchlib.clir_eval("mt-score", "--hyp", hyp, "--ref", ref, "--metrics", args.metrics),
                                env=env, repeat=args.repeat).cpu
        c_imp = benchlib.command([sys.executable, "-c", "import clir_eval.cli.mt"], env=env, repeat=args.repeat).cpu
    print(f"5000 lines, {args.repeat} runs each, medians; load {os.getloadavg()[0]:.1f}")
    print(f"sacrebleu -m bleu chrf            {c_sb:6.2f} CPU-s")
    print(f"clir-eval mt-score {args.metrics:<14} {c_ce:6.2f} CPU-s   ratio {benchlib.ratio(c_ce, c_sb)}")
    print(f"(python -c 'import clir_eval.cli.mt' alone: {c_imp:.2f} CPU-s)")


if __name__ == "__main__":
    main()
