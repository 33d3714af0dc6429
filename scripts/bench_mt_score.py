#!/usr/bin/env python
"""Benchmark ``clir-eval mt-score`` (bleu, chrf1, macrof1, microf1) against ``sacrebleu -m bleu chrf``
on the same 5000-line files, whole-command CPU (user + sys of a fresh process under
``/usr/bin/time``, so imports and start-up count), medians of REPEAT runs each, in the same run.

    python scripts/bench_mt_score.py [--data ../shared/data] [--repeat 3]

Input: the Lignos et al. 2019 nc-test de-en reference and its first system (5000 lines).
"""

from __future__ import annotations

import argparse
import gzip
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def cpu(argv: list[str], env: dict, repeat: int) -> float:
    out = []
    for _ in range(repeat):
        p = subprocess.run(["/usr/bin/time", "-f", "TIME %U %S", *argv], env=env, capture_output=True, text=True)
        if p.returncode:
            sys.exit(f"{argv[0]} failed: {p.stderr[-2000:]}")
        user, sys_ = p.stderr.rsplit("TIME ", 1)[1].split()[:2]
        out.append(float(user) + float(sys_))
    return statistics.median(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--metrics", default="bleu,chrf1,macrof1,microf1")
    args = ap.parse_args()
    base = args.data / "lignos2019" / "nc-test" / "de-en"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    sb = shutil.which("sacrebleu") or str(Path(sys.executable).with_name("sacrebleu"))
    with tempfile.TemporaryDirectory() as tmp:
        ref, hyp = Path(tmp) / "ref.txt", Path(tmp) / "hyp.txt"
        ref.write_bytes(gzip.open(base / "reference.en.txt.gz").read())
        hyp.write_bytes(gzip.open(sorted((base / "systems").glob("*.txt.gz"))[0]).read())
        c_sb = cpu([sb, str(ref), "-i", str(hyp), "-m", "bleu", "chrf"], env, args.repeat)
        c_ce = cpu([sys.executable, "-m", "clir_eval", "mt-score", "--hyp", str(hyp), "--ref", str(ref),
                    "--metrics", args.metrics], env, args.repeat)
        c_imp = cpu([sys.executable, "-c", "import clir_eval.cli.mt"], env, args.repeat)
    print(f"5000 lines, {args.repeat} runs each, medians; load {os.getloadavg()[0]:.1f}")
    print(f"sacrebleu -m bleu chrf            {c_sb:6.2f} CPU-s")
    print(f"clir-eval mt-score {args.metrics:<14} {c_ce:6.2f} CPU-s   ratio {c_ce / c_sb:.2f}x")
    print(f"(python -c 'import clir_eval.cli.mt' alone: {c_imp:.2f} CPU-s)")


if __name__ == "__main__":
    main()
