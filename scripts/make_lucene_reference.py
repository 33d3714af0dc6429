#!/usr/bin/env python
"""Write the Lucene BM25 reference fixtures for tests/test_bm25_lucene.py.

- tests/fixtures/lucene_bm25s.json: bm25s ``method="lucene"`` scores (float64 and float32),
  the reference of the ``lucene`` variant. bm25s is not a dependency; run in a venv that has it:

    python -m venv /tmp/bm25s-venv && /tmp/bm25s-venv/bin/pip install numpy scipy bm25s==0.3.16
    /tmp/bm25s-venv/bin/python scripts/make_lucene_reference.py

- tests/fixtures/lucene8_bm25.json (with ``--lucene-jars``): scores of Lucene itself
  (``BM25Similarity`` through ``IndexSearcher``, scripts/lucene/LuceneBM25.java), the reference
  of the ``lucene-byte`` variant. On Debian: ``apt-get install liblucene8-java`` (Lucene 8.7)
  and a JDK, then

    python scripts/make_lucene_reference.py --lucene-jars /usr/share/java

- tests/fixtures/lucene8_analyzers.json (with ``--analyzers --lucene-jars /usr/share/java``): the
  terms Lucene 8.7 gives generated texts of every shipped collection language, through the chain
  the language analyzers follow (StandardTokenizer, CJKWidthFilter, LowerCaseFilter,
  CJKBigramFilter, StopFilter with Lucene's list, SnowballFilter; scripts/lucene/LuceneAnalyze.java),
  the reference of tests/test_languages.py (with the same chain without the stemmer); plus texts
  where the tokenizers are known to differ, and Lucene's own CJKAnalyzer on the CJK texts.

The corpus (Zipfian tokens, some empty documents, lengths past Lucene's exact range, repeated
terms) and queries (with repeated and unknown tokens) are stored in the fixtures, so the tests
need neither bm25s, Java nor this script.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from importlib.metadata import version
from pathlib import Path

import numpy as np


def corpus(seed: int = 7, n_docs: int = 300, vocab: int = 400):
    rng = np.random.default_rng(seed)
    p = 1.0 / np.arange(1, vocab + 1) ** 1.1
    p /= p.sum()
    lens = rng.integers(0, 60, size=n_docs)
    lens[::37] = 0
    docs = [[f"t{t}" for t in rng.choice(vocab, size=n, p=p)] for n in lens]
    queries = [[f"t{t}" for t in rng.choice(vocab, size=rng.integers(1, 6), p=p)] for _ in range(12)]
    queries += [["t0", "t0", "t5"], ["t3", "t399", "t3", "t3"], ["t17"]]
    return docs, queries


FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures"


def lucene_fixture(jars: Path) -> None:
    docs, queries = corpus()
    cp = ":".join(str(p) for p in sorted(jars.glob("lucene-core-*.jar")) + sorted(jars.glob("lucene-analyzers-common-*.jar")))
    java = Path(__file__).resolve().parent / "lucene" / "LuceneBM25.java"
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        (t / "docs.tsv").write_text("".join(f"d{i}\t{' '.join(d)}\n" for i, d in enumerate(docs)), encoding="utf-8")
        (t / "queries.tsv").write_text("".join(f"q{i}\t{' '.join(q)}\n" for i, q in enumerate(queries)), encoding="utf-8")
        subprocess.run(["javac", "-d", tmp, "-cp", cp, str(java)], check=True)
        out = subprocess.run(["java", "-cp", f"{tmp}:{cp}", "LuceneBM25", str(t / "docs.tsv"), str(t / "queries.tsv"),
                              "0.9", "0.4"], check=True, capture_output=True, text=True).stdout  # fmt: skip
    scores: dict[str, dict[str, float]] = {f"q{i}": {} for i in range(len(queries))}
    for line in out.splitlines():
        qid, docid, score = line.split("\t")
        scores[qid][docid] = float(score)
    res = {"lucene_jars": sorted(p.name for p in jars.glob("lucene-core-*.jar")), "k1": 0.9, "b": 0.4,
           "docs": [" ".join(d) for d in docs], "queries": [" ".join(q) for q in queries], "scores": scores}  # fmt: skip
    (FIXTURES / "lucene8_bm25.json").write_text(json.dumps(res) + "\n", encoding="utf-8")
    print(f"wrote {FIXTURES / 'lucene8_bm25.json'}")


# ------------------------------------------------------------------ analyzers

CJK_BLOCKS = {"han": (0x4E00, 0x9FA5), "hiragana": (0x3041, 0x3093), "katakana": (0x30A1, 0x30F6),
              "hangul": (0xAC00, 0xD7A3)}  # fmt: skip
HALFWIDTH_KANA = [chr(c) for c in range(0xFF66, 0xFF9E)]
SEPARATORS = [" ", " ", " ", ", ", ". ", "; ", "\t", " (", ") ", " - ", "! ", "? ", "\u3000", "\u3001", "\u3002"]
#: Texts on which the default tokenizer knowingly differs from Lucene's StandardTokenizer (UAX #29)
DIFFERENCES = ["l'homme aujourd'hui", "3.14 und 1,000", "a:b", "한국어abc", "abc한국어", "々々", "\U0002B820\U0002B821"]


def _cjk_run(rng, n: int, hangul: bool = True) -> str:
    kinds = [k for k in CJK_BLOCKS if hangul or k != "hangul"]
    return "".join(chr(int(rng.integers(lo, hi + 1)))
                   for lo, hi in (CJK_BLOCKS[kinds[rng.integers(len(kinds))]] for _ in range(n)))


def _word(rng, letters: list[str], endings: list[str], stop: list[str]) -> str:
    r = rng.random()
    if r < 0.25 and stop:
        w = stop[rng.integers(len(stop))]
    else:
        w = "".join(letters[rng.integers(len(letters))] for _ in range(rng.integers(2, 7)))
        if endings:
            w += endings[rng.integers(len(endings))]
    return w.upper() if rng.random() < 0.1 else w.capitalize() if rng.random() < 0.2 else w


def _item(rng, letters, endings, stop) -> str:
    r = rng.random()
    if r < 0.55:
        return _word(rng, letters, endings, stop)
    if r < 0.62:
        return str(rng.integers(0, 10000))
    if r < 0.80:
        return _cjk_run(rng, int(rng.integers(1, 7)))
    if r < 0.85:  # fullwidth letters and digits
        return "".join(chr(0xFEE0 + ord(c)) for c in _word(rng, list("abcdefgxyzABCXYZ0123"), [], []))
    if r < 0.90:  # halfwidth katakana, some with (semi-)voiced marks
        return "".join(HALFWIDTH_KANA[rng.integers(len(HALFWIDTH_KANA))] + ("\uff9e", "\uff9f", "", "")[rng.integers(4)]
                       for _ in range(rng.integers(1, 5)))  # fmt: skip
    if r < 0.95:  # scripts glued: word + CJK, digits + CJK, CJK + word (not Hangul: UAX #29 joins it to letters)
        w, c = _word(rng, letters, endings, []), _cjk_run(rng, int(rng.integers(1, 4)), hangul=False)
        return (w + c, str(rng.integers(100)) + c, c + w)[rng.integers(3)]
    return "".join(chr(0xFF66 + i) + ("\uff9e", "\uff9f")[i % 2] for i in range(0, 0x38, 3))  # every kana x mark


def analyzer_texts(code: str, n: int = 30, seed: int = 11) -> list[str]:
    """Generated texts for language ``code``: its stopwords (any case), made-up words of the letters
    of its stopword list ending like its stopwords (so suffix rules of the stemmer fire), numbers,
    CJK runs of every length, fullwidth and halfwidth forms, and scripts glued without spaces."""
    from clir_eval.retrieval.analysis import get_analyzer
    from clir_eval.retrieval.languages import language, stopword_list

    rng = np.random.default_rng([seed, sum(map(ord, code))])
    stop = [w for w in stopword_list(code)[0] if w.isalpha()]  # d'un (Catalan, French...): DIFFERENCES
    base = stop or list(stopword_list("de")[0])
    letters = sorted({c for w in base for c in w if c.isalpha()})
    endings = sorted({w[-k:] for w in base for k in (1, 2, 3) if len(w) > k and w[-k:].isalpha()})
    endings = endings if language(code).stemmer else []
    texts = []
    for _ in range(n):
        parts = [_item(rng, letters, endings, stop) for _ in range(rng.integers(3, 16))]
        texts.append("".join(p + SEPARATORS[rng.integers(len(SEPARATORS))] for p in parts).strip())
    assert all(get_analyzer(language=code).tokenize(t) is not None for t in texts)
    return texts


#: Lucene's Snowball class of a PyStemmer algorithm where the names differ: Snowball's ``german``
#: took in ``german2``'s ae/oe/ue rule (Lucene 8.7's German2Stemmer); ``dutch_porter`` is the
#: Dutch stemmer that Lucene 8.7 has.
STEMMERS = {"dutch_porter": "Dutch", "german": "German2"}


def lucene_chain(code: str) -> str:
    from clir_eval.retrieval.languages import language

    lang = language(code)
    pkg = {"cjk.txt": "cjk/stopwords.txt"}.get(lang.stopwords or "", None)
    if lang.stopwords and pkg is None:
        pkg = f"snowball/{lang.name}_stop.txt" if lang.format == "snowball" else f"{code}/stopwords.txt"
    stem = "-" if lang.stemmer is None else STEMMERS.get(lang.stemmer, lang.stemmer.capitalize())
    return f"chain:org/apache/lucene/analysis/{pkg or 'none'}:{lang.format if pkg else 'none'}:{stem}"


def _run_lucene(cp: str, classes: str, chain: str, texts: list[str]) -> list[str]:
    with tempfile.TemporaryDirectory() as tmp:
        p = Path(tmp) / "texts.txt"
        p.write_text("".join(t + "\n" for t in texts), encoding="utf-8")
        out = subprocess.run(["java", "-cp", f"{classes}:{cp}", "LuceneAnalyze", chain, str(p)], check=True,
                             capture_output=True, text=True, encoding="utf-8").stdout  # fmt: skip
    return [" ".join(line.split("\x01")) for line in out.split("\n")[: len(texts)]]  # no term has a space


def _ranges(cps: list[int]) -> list[list[int]]:
    out: list[list[int]] = []
    for c in sorted(cps):
        if out and out[-1][1] == c - 1:
            out[-1][1] = c
        else:
            out.append([c, c])
    return out


def cjk_classes(cp: str, classes: str) -> dict[str, list[list[int]]]:
    """Every non-ASCII word character (Python's ``\\w``) three times in a row, through Lucene's chain
    without stopwords: ranges of those it bigrams (two bigrams) and of those it drops (no term:
    characters its Unicode 9.0 tables do not know)."""
    import re

    chars = [c for c in range(0x80, sys.maxunicode + 1) if not 0xD800 <= c <= 0xDFFF and re.match(r"\w", chr(c))]
    terms = _run_lucene(cp, classes, "chain:none:none:-", [chr(c) * 3 for c in chars])
    bigrammed = [c for c, t in zip(chars, terms) if t == f"{chr(c) * 2} {chr(c) * 2}"]
    return {"bigrammed": _ranges(bigrammed), "dropped": _ranges([c for c, t in zip(chars, terms) if not t])}


def analyzers_fixture(jars: Path) -> None:
    from clir_eval.retrieval.languages import LANGUAGES

    cp = ":".join(str(p) for p in sorted(jars.glob("lucene-core-*.jar")) + sorted(jars.glob("lucene-analyzers-common-*.jar")))
    java = Path(__file__).resolve().parent / "lucene" / "LuceneAnalyze.java"
    out = {"lucene_jars": sorted(Path(p).name for p in cp.split(":")), "command": COMMAND, "languages": {},
           "differences": {}, "cjk_analyzer": {}}  # fmt: skip
    with tempfile.TemporaryDirectory() as classes:
        subprocess.run(["javac", "-d", classes, "-cp", cp, str(java)], check=True)
        for code in sorted(c for c in LANGUAGES if c != "en"):
            texts = analyzer_texts(code)
            chain = lucene_chain(code)
            out["languages"][code] = entry = {"chain": chain, "texts": texts, "terms": _run_lucene(cp, classes, chain, texts)}
            if not chain.endswith(":-"):  # the same chain without its stemmer
                entry["terms_unstemmed"] = _run_lucene(cp, classes, chain.rsplit(":", 1)[0] + ":-", texts)
        fr = lucene_chain("fr").rsplit(":", 1)[0] + ":-"  # French stopwords, no stemmer
        out["differences"] = {"chain": fr, "texts": DIFFERENCES, "terms": _run_lucene(cp, classes, fr, DIFFERENCES)}
        texts = [t for code in ("ja", "ko", "zh") for t in out["languages"][code]["texts"]]
        out["cjk_analyzer"] = {"texts": texts, "terms": _run_lucene(cp, classes, "cjk", texts)}  # CJKAnalyzer itself
        out["word_characters"] = cjk_classes(cp, classes)
    path = FIXTURES / "lucene8_analyzers.json"
    path.write_text(json.dumps(out, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {path}")


COMMAND = "python scripts/make_lucene_reference.py --analyzers --lucene-jars /usr/share/java"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lucene-jars", type=Path, help="directory with lucene-core and lucene-analyzers-common jars")
    ap.add_argument("--analyzers", action="store_true", help="write the language analyzers' fixture (needs --lucene-jars)")
    a = ap.parse_args()
    if a.analyzers:
        if not a.lucene_jars:
            ap.error("--analyzers needs --lucene-jars")
        return analyzers_fixture(a.lucene_jars)
    if a.lucene_jars:
        return lucene_fixture(a.lucene_jars)
    import bm25s

    docs, queries = corpus()
    out = {"bm25s": version("bm25s"), "k1": 0.9, "b": 0.4, "docs": [" ".join(d) for d in docs],
           "queries": [" ".join(q) for q in queries], "scores": {}}  # fmt: skip
    for dtype in ("float64", "float32"):
        retriever = bm25s.BM25(k1=0.9, b=0.4, method="lucene", dtype=dtype)
        retriever.index(docs, show_progress=False)
        vocab = retriever.vocab_dict
        out["scores"][dtype] = [retriever.get_scores([t for t in q if t in vocab]).astype(float).tolist() for q in queries]
    path = FIXTURES / "lucene_bm25s.json"
    path.write_text(json.dumps(out, indent=None) + "\n", encoding="utf-8")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
