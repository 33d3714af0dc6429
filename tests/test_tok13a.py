"""The 13a tokenizer the metrics share gives sacrebleu's Tokenizer13a output, line for line."""

from __future__ import annotations

import gzip
import random
import re

import pytest
from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a

from clir_eval.mt.base import tokenizer
from clir_eval.mt.tok13a import FastRegexp, fast_13a

ALPHABET = ([chr(c) for c in range(32, 127)] + list("0123456789.,-.,-  ") + ["é", "…", "—", "\u00a0", "\t", "\n", "ß",
            "<skipped>", "&quot;", "&amp;", "&lt;", "&gt;", "-\n", "3.5", "1,000", "U.S.", "e-mail"])


def test_the_shared_13a_tokenizer_is_the_fast_one():
    assert isinstance(tokenizer("13a")._post_tokenizer, FastRegexp)


def test_random_lines_tokenize_as_sacrebleu():
    rnd = random.Random(7)
    ours, ref = tokenizer("13a"), Tokenizer13a()
    for _ in range(30_000):
        line = "".join(rnd.choice(ALPHABET) for _ in range(rnd.randint(0, 16)))
        assert ours(line) == ref(line), repr(line)


def test_real_lines_tokenize_as_sacrebleu(shared_data):
    ours, ref = tokenizer("13a"), Tokenizer13a()
    files = sorted((shared_data / "wmt21" / "de-en").glob("*.gz"))[:6]
    if not files:
        pytest.skip(f"no WMT21 de-en outputs under {shared_data}")
    n = 0
    for f in files:
        with gzip.open(f, "rt", encoding="utf-8") as fh:
            for line in fh:
                line = line.rstrip("\n")
                assert ours(line) == ref(line), (f.name, line)
                n += 1
    assert n > 1000


def test_another_post_tokenizer_is_left_alone():
    """A sacrebleu whose 13a rules differ from the known ones keeps its own tokenizer."""
    tok = Tokenizer13a()
    post = tok._post_tokenizer
    post._re = [*post._re, (re.compile(r"(')"), r" \1 ")]
    assert fast_13a(tok)._post_tokenizer is post
    tok2 = Tokenizer13a()
    tok2._post_tokenizer._re = [(re.compile(r"([\{-\~])"), r" \1 "), *tok2._post_tokenizer._re[1:]]
    assert not isinstance(fast_13a(tok2)._post_tokenizer, FastRegexp)
