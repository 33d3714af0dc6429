"""CPU cost of each MT metric per 1000 lines (the rates behind clir_eval.mt.rates: run estimates and
the warning before a slow metric on a large set).

    python scripts/measure_mt_rates.py --lines 5000 --metrics bleu,chrf1,macrof1,microf1,ter

Scores one WMT21 de-en system against its reference (repeated up to --lines), one metric at a
time in this process, timing process CPU; prints CPU-s per 1000 lines per metric.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

DATA = Path(os.environ.get("CLIR_EVAL_DATA", Path(__file__).resolve().parent.parent.parent / "shared" / "data"))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lines", type=int, default=5000)
    ap.add_argument("--metrics", default="bleu,chrf1,macrof1,microf1,ter")
    ap.add_argument("--hyp", type=Path, default=DATA / "wmt21/de-en/newstest2021.de-en.hyp.Facebook-AI.en.gz")
    ap.add_argument("--ref", type=Path, default=DATA / "wmt21/de-en/newstest2021.de-en.ref.A.en.gz")
    args = ap.parse_args()
    from clir_eval.io.files import read_lines
    from clir_eval.mt.base import score_metrics

    hyps, refs = read_lines(args.hyp), read_lines(args.ref)
    reps = -(-args.lines // len(hyps))
    hyps, refs = (hyps * reps)[: args.lines], (refs * reps)[: args.lines]
    print(f"{args.hyp.name} vs {args.ref.name}, {len(hyps)} lines")
    for m in args.metrics.split(","):
        t = time.process_time()
        score_metrics([m], hyps, [refs])
        cpu = time.process_time() - t
        print(f"{m:10s} {cpu:7.2f} CPU-s  = {cpu / len(hyps) * 1000:6.3f} CPU-s per 1000 lines")
    return 0


if __name__ == "__main__":
    sys.exit(main())
