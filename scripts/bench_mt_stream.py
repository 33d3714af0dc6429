#!/usr/bin/env python
"""Peak memory of ``clir-eval mt-score`` (bleu, chrf1, macrof1, microf1) on a large corpus, and
equality of its streamed scores with the in-memory path.

    python scripts/bench_mt_stream.py [--lines 1000000] [--check-lines 100000] [--vocab 50000]

The corpus is synthetic (seeded): hypothesis and reference of LINES lines, ~20 tokens per line
drawn from a Zipf-like distribution over VOCAB word types (about 137 bytes per line, like the
issue's 137 MB for 1M lines). Measured in fresh processes under ``/usr/bin/time``:

1. ``mt-score`` on LINES lines (streamed: chunks of 2000 lines, summed statistics only): peak RSS
   and wall time. Target: at most 2 GiB.
2. the same on CHECK_LINES lines, streamed, versus the in-memory path (the same command with
   ``--bootstrap 1``, which reads the whole text and keeps every segment's statistics): the
   four scores must be equal (exactly), and both peak RSS figures are printed.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import benchlib
import numpy as np

METRICS = "bleu,chrf1,macrof1,microf1"


def write_corpus(path: Path, lines: int, vocab: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    words = np.array([f"w{i}" for i in range(vocab)], dtype=object)
    weights = 1.0 / np.arange(1, vocab + 1) ** 1.05
    weights /= weights.sum()
    with open(path, "w", encoding="utf-8") as fh:
        done = 0
        while done < lines:
            n = min(50_000, lines - done)
            lens = rng.integers(10, 31, size=n)
            toks = words[rng.choice(vocab, size=int(lens.sum()), p=weights)]
            pos = 0
            out = []
            for k in lens:
                out.append(" ".join(toks[pos:pos + k]) + " .")
                pos += k
            fh.write("\n".join(out) + "\n")
            done += n


def run(args: list[str]) -> tuple[dict, float, float]:
    """(JSON output, peak RSS in GiB, wall seconds) of one fresh ``clir-eval`` process."""
    m = benchlib.command(benchlib.clir_eval(*args), env=benchlib.env())
    return json.loads(m.stdout), m.rss / 2**10, m.wall


def arguments():
    ap = benchlib.parser(__doc__)
    ap.add_argument("--lines", type=int, default=1_000_000)
    ap.add_argument("--check-lines", type=int, default=100_000)
    ap.add_argument("--vocab", type=int, default=50_000)
    return ap


def main() -> None:
    a = arguments().parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        for name, n, seed in [("hyp", a.lines, 1), ("ref", a.lines, 2), ("hyp_small", a.check_lines, 1),
                              ("ref_small", a.check_lines, 2)]:
            write_corpus(d / f"{name}.txt", n, a.vocab, seed)
        size = (d / "hyp.txt").stat().st_size
        print(f"corpus: {a.lines} lines, {size / 2**20:.0f} MiB per file, {a.vocab} word types (seeded)")
        base = ["mt-score", "--metrics", METRICS]
        _, rss, wall = run([*base, "--hyp", str(d / "hyp.txt"), "--ref", str(d / "ref.txt")])
        print(f"streamed, {a.lines} lines: peak RSS {rss:.2f} GiB, wall {wall:.0f} s "
              f"({'within' if rss <= 2 else 'ABOVE'} the 2 GiB target)")
        small = ["--hyp", str(d / "hyp_small.txt"), "--ref", str(d / "ref_small.txt")]
        streamed, rss_s, wall_s = run([*base, *small])
        memory, rss_m, wall_m = run([*base, *small, "--bootstrap", "1"])
        same = all(streamed[m]["score"] == memory[m]["score"] for m in streamed)
        print(f"{a.check_lines} lines: streamed peak RSS {rss_s:.2f} GiB ({wall_s:.0f} s), "
              f"in-memory path {rss_m:.2f} GiB ({wall_m:.0f} s, includes 1 bootstrap resample)")
        for m in streamed:
            print(f"  {m:8s} streamed {streamed[m]['score']!r:22} in-memory {memory[m]['score']!r:22}")
        print(f"scores equal: {same}")
        if not same:
            raise SystemExit(1)


if __name__ == "__main__":
    main()
