"""Analyzers: tokenization rules, options, signatures, errors."""

from __future__ import annotations

import pickle
import sys

import numpy as np
import pytest

from clir_eval.errors import UserError
from clir_eval.retrieval.analysis import ENGLISH_STOPWORDS, get_analyzer


def test_whitespace_is_str_split_and_keeps_case():
    an = get_analyzer("whitespace")
    text = "The  U.S.\toil\u00a0Industry's\nhistory "
    assert an.tokenize(text) == text.split()
    assert an.tokenize("") == []


def test_default_words_lowercased_punctuation_dropped():
    an = get_analyzer("default")
    assert an.tokenize("U.S. oil-industry History, 1950!") == ["u", "s", "oil", "industry", "history", "1950"]
    assert an.tokenize("   ") == []


def test_default_keeps_combining_marks_inside_words():
    an = get_analyzer("default")
    # stdlib \w would cut Devanagari words at the vowel signs
    assert an.tokenize("हिन्दी भाषा") == ["हिन्दी", "भाषा"]
    assert an.tokenize("naïve Ünïcödé") == ["naïve", "ünïcödé"]


def test_stopwords_and_stemming():
    an = get_analyzer("default", stopwords="english", stem="english")
    assert an.tokenize("The history of the running dogs") == ["histori", "run", "dog"]
    assert "the" in ENGLISH_STOPWORDS
    german = get_analyzer("default", stem="german")
    assert german.tokenize("Häuser") == ["haus"]


def test_stopword_file(tmp_path):
    f = tmp_path / "stop.txt"
    f.write_text("oil\nhistory\n", encoding="utf-8")
    an = get_analyzer("default", stopwords=str(f))
    assert an.tokenize("US oil industry history") == ["us", "industry"]
    assert "stop:file:stop.txt:" in an.signature


def test_signature_names_every_option():
    sigs = {
        get_analyzer("whitespace").signature,
        get_analyzer("default").signature,
        get_analyzer("default", stopwords="english").signature,
        get_analyzer("default", stem="english").signature,
        get_analyzer("default", stopwords="english", stem="english").signature,
    }
    assert len(sigs) == 5
    s = get_analyzer("default", stopwords="english", stem="english").signature
    assert "stem:snowball-english" in s and "pystemmer:" in s and "stop:english" in s


def test_analyzer_pickles_by_spec():
    an = get_analyzer("default", stopwords="english", stem="english")
    an2 = pickle.loads(pickle.dumps(an))
    assert an2.signature == an.signature
    assert an2.tokenize("The running dogs") == an.tokenize("The running dogs")


@pytest.mark.parametrize(
    "kwargs, needle",
    [
        ({"name": "bogus"}, "unknown analyzer"),
        ({"name": "default", "stem": "klingon"}, "unknown stemmer language"),
        ({"name": "default", "stopwords": "no-such-list"}, "unknown stopword list"),
    ],
)
def test_unknown_names_are_user_errors(kwargs, needle):
    with pytest.raises(UserError, match=needle):
        get_analyzer(**kwargs)


# ---------------------------------------------------------------- batch tokenizer == specification

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from clir_eval.retrieval.analysis import _split_batch, reference_tokens, split_batches  # noqa: E402

_TRICKY = "Σς İ ǅ ß ﬁ \u0301 \u200d\u200c\u00ad\ufe0f\U000E0101 \x1c\x1f\x85\xa0\u2028 _ 1 ½ ² ٣ ー 𝔘 \ud800 \n\t"


@settings(max_examples=300, deadline=None)
@given(texts=st.lists(st.text(alphabet=st.one_of(st.characters(), st.sampled_from(_TRICKY)), max_size=30), max_size=6))
def test_batch_tokenizer_equals_reference(texts):
    for name in ("default", "whitespace"):
        tokens, counts = _split_batch(name, texts)
        want = [reference_tokens(name, t) for t in texts]
        assert counts.tolist() == [len(w) for w in want]
        assert tokens == [tok for w in want for tok in w]


def test_batch_tokenizer_every_code_point():
    """Each assigned-plane code point (planes 0-3 and 14; a sample of the unassigned and private
    planes) alone, inside a word, next to final-sigma and dotted-I contexts."""
    cps = [*range(0x40000), *range(0xE0000, 0xF0000), *range(0x40000, sys.maxunicode + 1, 97)]
    step = 1 << 12
    texts = ["".join(f"x{c}y {c} Σ{c} {c}İ{c}\t" for c in map(chr, cps[i : i + step])) for i in range(0, len(cps), step)]
    for name in ("default", "whitespace"):
        got = [(toks, counts.tolist()) for toks, counts in split_batches(name, texts, max_chars=1 << 18)]
        want = [reference_tokens(name, t) for t in texts]
        assert [t for toks, _ in got for t in toks] == [t for w in want for t in w]
        assert [c for _, counts in got for c in counts] == [len(w) for w in want]


def test_format_characters_are_not_tokens():
    """Issue 12 item 6: variation selectors, ZWJ/ZWNJ, soft hyphens never form or split a token."""
    an = get_analyzer("default")
    assert an.tokenize("I \u2764\ufe0f it 👍\ufe0f") == ["i", "it"]  # v1: ["i", "\ufe0f", "it", "\ufe0f"]
    assert an.tokenize("inter\u00adnational co\u200dop a\u200cb \u200e") == ["international", "coop", "ab"]
    assert an.tokenize("\U000E0101\u180b") == []
    assert "tok:unicode-words-v2" in an.signature


def test_batches_cut_anywhere_give_the_same_tokens():
    texts = ["Hello World", "", "Σας ΟΔΟΣ.Α", "a\u200db", "x" * 50, "  "]
    want = [reference_tokens("default", t) for t in texts]
    for max_chars in (1, 7, 40, 1000):
        got_t, got_c = [], []
        for toks, counts in split_batches("default", texts, max_chars=max_chars):
            got_t += toks
            got_c += counts.tolist()
        assert got_c == [len(w) for w in want] and got_t == [t for w in want for t in w]


# ---------------------------------------------------------------- token ids without Python strings

from clir_eval.retrieval import analysis as analysis_mod  # noqa: E402
from clir_eval.retrieval.analysis import HashCollision, StringSurfaceVocab, SurfaceVocab  # noqa: E402


def _ids_and_strings(vocab_cls, name, batches):
    v = vocab_cls(name)
    out = [(ids.tolist(), counts.tolist()) for ids, counts in (v.add(b) for b in batches)]
    return out, list(v.strings)


def _tokens_of(name, batches):
    """The specification: per batch, every token (reference_tokens) and the count per text."""
    return [([t for x in b for t in reference_tokens(name, x)], [len(reference_tokens(name, x)) for x in b]) for b in batches]


def _check_surface_vocab(name, batches):
    got, strings = _ids_and_strings(SurfaceVocab, name, batches)
    assert [([strings[i] for i in ids], counts) for ids, counts in got] == _tokens_of(name, batches)
    seen = {}
    for tok in (t for b in batches for x in b for t in reference_tokens(name, x)):
        seen.setdefault(tok, len(seen))
    assert strings == list(seen)  # ids in first-occurrence order over all batches
    assert (got, strings) == _ids_and_strings(StringSurfaceVocab, name, batches)


_LONG = ["x" * 31, "y" * 32, "z" * 33, "é" * 17, "ab" * 40, "Ωmega" * 9]


@settings(max_examples=200, deadline=None)
@given(batches=st.lists(st.lists(st.text(alphabet=st.one_of(st.characters(), st.sampled_from(_TRICKY + "\x00 ")), max_size=40)
                                 | st.sampled_from(_LONG), max_size=6), max_size=4))  # fmt: skip
def test_surface_vocab_equals_reference_tokens(batches):
    for name in ("default", "whitespace"):
        _check_surface_vocab(name, batches)


def test_surface_vocab_ascii_and_dense_new_tokens():
    """ASCII batches (byte lookup path), thousands of new tokens per batch (vectorised decoding),
    tokens of every length around the 8-byte words and the 32-byte limit, NUL bytes."""
    rng = np.random.default_rng(3)
    words = ["".join(rng.choice(list("abcXYZ_09"), size=n)) for n in rng.integers(1, 41, size=6000)]
    batches = [[" ".join(rng.choice(words, size=40)) + " A\x00b,\nq" for _ in range(200)] for _ in range(3)]
    batches.append(["Ünïcödé " + " ".join(words[:3000]), "", "ΣΑΣ σας"])
    for name in ("default", "whitespace"):
        _check_surface_vocab(name, batches)


def test_surface_vocab_every_code_point():
    cps = [*range(0x40000), *range(0xE0000, 0xF0000), *range(0x40000, sys.maxunicode + 1, 97)]
    step = 1 << 12
    texts = ["".join(f"x{c}y {c} Σ{c} {c}İ{c}\t" for c in map(chr, cps[i : i + step])) for i in range(0, len(cps), step)]
    for name in ("default", "whitespace"):
        v = SurfaceVocab(name)
        got = [v.add(texts[i : i + 8]) for i in range(0, len(texts), 8)]
        want = [reference_tokens(name, t) for t in texts]
        assert [v.strings[i] for ids, _ in got for i in ids.tolist()] == [t for w in want for t in w]
        assert [c for _, counts in got for c in counts.tolist()] == [len(w) for w in want]


def test_hash_collisions_are_detected_and_never_merge_tokens(monkeypatch):
    """With a degenerate hash (every token hashes alike) the key check must refuse to merge two
    different tokens -- whichever 8-byte word they differ in, or only their length -- and the
    index falls back to strings with the same statistics."""
    from clir_eval.retrieval.index import shard_stats

    pairs = [("cat", "mat"), ("a", "a\x00"), ("x" * 9, "x" * 10), ("abcdefghij", "abcdefghik"),
             ("q" * 16 + "rs", "q" * 16 + "rt"), ("w" * 31 + "v", "w" * 32)]  # fmt: skip
    texts = ["the cat sat", "on the mat", "the end " + "z" * 40, *(f"{x} and {y}" for x, y in pairs)]
    an = get_analyzer("default", stopwords="english")
    want = shard_stats(texts, an)
    monkeypatch.setattr(analysis_mod, "_MIX", tuple(np.uint64(0) for _ in range(6)))
    for x, y in pairs:
        with pytest.raises(HashCollision):
            SurfaceVocab("whitespace").add([x, y])
    got = shard_stats(texts, an)
    assert got.terms == want.terms and got.terms[:5] == ["cat", "sat", "mat", "end", "z" * 40]
    for f in ("indptr", "cols", "tf", "dl"):
        assert np.array_equal(getattr(got, f), getattr(want, f))
