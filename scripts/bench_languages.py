"""Benchmark indexing with a collection language against the English analyzer, on the same documents.

    python scripts/bench_languages.py [--docs 50000] [--repeat 3]

Generated documents (seeded) of two kinds: Japanese-like (runs of kanji, hiragana and katakana
between punctuation, some Latin words and digits) and German-like (lowercase and capitalised
words with German endings, some of them stopwords). Each kind is indexed with the sparse backend
by the ``en`` analyzer (Unicode words, nothing else) and by its language's analyzer (``ja``: CJK
bigrams; ``de``: stopwords and Snowball stemming). Printed: CPU seconds (best of ``--repeat``),
the ratio to ``en`` on the same documents, and the index's number of terms and postings.
"""

from __future__ import annotations

import time

import benchlib
import numpy as np

from clir_eval.io.readers import Documents
from clir_eval.retrieval.analysis import analyzer_for
from clir_eval.retrieval.bm25 import build_index

GERMAN = ["haus", "häuser", "straße", "regierung", "wirtschaft", "wahlen", "zeitung", "berichtet", "stadt",
          "menschen", "jahre", "arbeit", "schule", "kinder", "fußball", "spielen", "gespielt", "die", "der", "und",
          "nicht", "mit", "ist", "eine", "werden", "wurde", "über", "nach", "zwischen", "politischen"]  # fmt: skip


def japanese_docs(rng, n: int) -> list[str]:
    kanji = [chr(c) for c in rng.integers(0x4E00, 0x4E00 + 3000, size=4000)]
    kana = [chr(c) for c in range(0x3041, 0x3094)] + [chr(c) for c in range(0x30A1, 0x30F7)]
    out = []
    for _ in range(n):
        parts = []
        for _ in range(rng.integers(5, 30)):
            run = "".join(kanji[i] for i in rng.integers(0, len(kanji), size=rng.integers(1, 5)))
            run += "".join(kana[i] for i in rng.integers(0, len(kana), size=rng.integers(0, 4)))
            parts.append(run + ("、" if rng.random() < 0.3 else "。" if rng.random() < 0.2 else ""))
            if rng.random() < 0.05:
                parts.append(f" Tokyo {rng.integers(2000, 2030)} ")
        out.append("".join(parts))
    return out


def german_docs(rng, n: int) -> list[str]:
    words = np.array(GERMAN + [f"{w}{e}" for w in GERMAN[:15] for e in ("en", "es", "ung", "ungen", "er")])
    out = []
    for _ in range(n):
        ws = words[rng.integers(0, len(words), size=rng.integers(20, 120))]
        out.append(" ".join(w.capitalize() if rng.random() < 0.2 else w for w in ws.tolist()) + ".")
    return out


def arguments():
    ap = benchlib.parser(__doc__, repeat=3)
    ap.add_argument("--docs", type=int, default=50000, help="documents of each kind (default 50000)")
    return ap


def main() -> None:
    args = arguments().parse_args()
    rng = np.random.default_rng(7)
    kinds = {"ja": japanese_docs(rng, args.docs), "de": german_docs(rng, args.docs)}
    print(f"{args.docs} documents of each kind, best of {args.repeat}; load {benchlib.load()}")
    for code, texts in kinds.items():
        docs = Documents.from_pairs((f"d{i}", t) for i, t in enumerate(texts))
        chars = sum(map(len, texts))
        base = None
        for lang in ("en", code):
            an = analyzer_for(lang)
            cpu, idx = benchlib.best(lambda: build_index(docs, an), args.repeat, clock=time.process_time)
            inv = idx.inverted
            base = base or cpu
            print(f"  {code} documents, analyzer {lang}: {cpu:6.2f} CPU s ({benchlib.ratio(cpu, base)} of en; "
                  f"{chars / cpu / 1e6:.1f} M chars/s)  terms {len(inv.terms):>8}  postings {inv.total_tokens:>10}")


if __name__ == "__main__":
    main()
