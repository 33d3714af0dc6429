"""Inverted index: sharded builds equal the one-shard build (scores, ties, runs), pass-1
statistics, and the verified on-disk format (no pickle; altered or truncated files refused)."""

from __future__ import annotations

import json
import pickle
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clir_eval.errors import UserError
from clir_eval.io.readers import Documents
from clir_eval.retrieval.analysis import get_analyzer
from clir_eval.retrieval.bm25 import build_index, build_or_load, load_index
from clir_eval.retrieval.index import IndexCorrupt, build_inverted_index, load_inverted_index, shard_stats

WS = get_analyzer("whitespace")
STEM = get_analyzer("default", stopwords="english", stem="english")
WORDS = ("the running dogs ran to a house of houses; The Dog's runner runs, and HOUSE-running is "
         "not the runs of dogs. ❤️ co\u200dop inter\u00adnational naïve Ünïcödé x1 x2 x3").split()  # fmt: skip


def word_docs(n=300, seed=5):
    rng = np.random.default_rng(seed)
    p = 1.0 / np.arange(1, len(WORDS) + 1)
    p /= p.sum()
    texts = [" ".join(rng.choice(WORDS, size=rng.integers(0, 30), p=p)) for _ in range(n)]
    ids = [f"doc{i % 7}-{i}" for i in range(n)]  # id order differs from collection order
    return Documents.from_pairs(zip(ids, texts))


QUERIES = {"a": "dogs running", "b": "the house house", "c": "x1 x2 nothing", "d": "", "e": "❤️ coop", "f": "of the a"}


@pytest.mark.parametrize("analyzer", [WS, STEM], ids=["whitespace", "stem"])
@pytest.mark.parametrize("variant", ["okapi", "l", "plus", "lucene", "lucene-byte"])
def test_sharded_equals_unsharded(analyzer, variant):
    docs = word_docs()
    one = build_index(docs, analyzer, variant=variant)
    for shards, jobs in [(3, 1), (4, 2), (300, 1)]:
        many = build_index(docs, analyzer, variant=variant, shards=shards, jobs=jobs)
        assert len(many.inverted.shards) == shards and many.inverted.terms == one.inverted.terms
        for q in QUERIES.values():
            toks = analyzer.tokenize(q)
            assert many.get_scores(toks).tobytes() == one.get_scores(toks).tobytes()
        for depth in (1, 5, 1000):
            assert many.search(QUERIES, depth=depth).ranking == one.search(QUERIES, depth=depth).ranking


@settings(max_examples=40, deadline=None)
@given(docs=st.lists(st.lists(st.sampled_from("abcdef"), max_size=6), min_size=1, max_size=15),
       shards=st.integers(1, 6), b=st.sampled_from([0.0, 0.75, 1.0]), depth=st.integers(1, 8))  # fmt: skip
def test_sharded_ties_and_nan_like_one_index(docs, shards, b, depth):
    collection = Documents.from_pairs((f"d{(i * 7) % 15}x{i}", " ".join(d)) for i, d in enumerate(docs))
    one = build_index(collection, WS, b=b)
    many = build_index(collection, WS, b=b, shards=shards)
    for q in ("a", "a b", "f f e", "z"):
        np.testing.assert_array_equal(many.get_scores(q.split()), one.get_scores(q.split()))
        assert many.search({"q": q}, depth=depth).ranking == one.search({"q": q}, depth=depth).ranking


def test_shard_stats_counts_terms_per_document():
    texts = ["The dogs ran, the DOGS!", "", "a house of houses", "running"]
    st_ = shard_stats(texts, STEM, max_chars=10)
    want = [Counter(STEM.tokenize(t)) for t in texts]
    assert st_.dl.tolist() == [sum(c.values()) for c in want]
    got = [
        Counter({st_.terms[c]: int(f) for c, f in zip(st_.cols[lo:hi], st_.tf[lo:hi])})
        for lo, hi in zip(st_.indptr[:-1], st_.indptr[1:])
    ]
    assert got == want
    first = {}
    for t in texts:
        first.update(dict.fromkeys(x for x in STEM.tokenize(t) if x not in first))
    assert st_.terms == list(first)  # first-occurrence order, stopwords never enter the vocabulary


def test_large_term_frequency_keeps_exact_counts():
    docs = Documents.from_pairs([("a", "x " * 70000 + "y"), ("b", "y z"), ("c", "z")])
    inv = build_inverted_index(docs.ids, docs.texts, WS)
    assert inv.shards[0].tf.dtype == np.int32 and int(inv.shards[0].tf.max()) == 70000


# ---------------------------------------------------------------- on-disk format


@pytest.fixture()
def saved(tmp_path):
    idx = build_index(word_docs(), STEM, variant="plus", shards=2)
    idx.save(tmp_path / "idx")
    return idx, tmp_path / "idx"


def test_round_trip_without_pickle(saved, monkeypatch):
    idx, d = saved
    monkeypatch.setattr(pickle, "load", lambda *a, **k: pytest.fail("pickle.load called"))
    monkeypatch.setattr(pickle, "loads", lambda *a, **k: pytest.fail("pickle.loads called"))
    again = load_index(d, idx.signature)
    assert again.search(QUERIES).ranking == idx.search(QUERIES).ranking
    names = sorted(p.name for p in d.iterdir())
    assert all(n.endswith((".json", ".npy")) for n in names), names
    header = json.loads((d / "index.json").read_text())
    assert header["format"] == "clir-eval-index/2" and set(header["files"]) == set(names) - {"index.json"}


def test_rank_bm25_backend_saves_arrays_and_rebuilds_the_same_model(tmp_path):
    docs = word_docs()
    idx = build_index(docs, WS, backend="rank_bm25")
    idx.save(tmp_path / "r")
    assert not list(tmp_path.glob("r/*.pkl"))
    again = load_index(tmp_path / "r", idx.signature)
    for q in QUERIES.values():
        assert again.get_scores(q.split()).tobytes() == idx.get_scores(q.split()).tobytes()


def _damage(path, kind):
    data = path.read_bytes()
    if kind == "flip":
        data = data[:-1] + bytes([data[-1] ^ 0x01])
    elif kind == "truncate":
        data = data[:-9]
    elif kind == "empty":
        data = b""
    if kind == "remove":
        path.unlink()
    else:
        path.write_bytes(data)


def test_every_damaged_file_is_detected(saved, tmp_path):
    """Each file flipped, truncated, emptied or removed: an error naming the directory, never
    a traceback, never a result."""
    import shutil

    idx, d = saved
    cases = [(n, k) for n in sorted(p.name for p in d.iterdir() if p.name != "index.json")
             for k in ("flip", "truncate", "empty", "remove")] + [("index.json", "truncate"), ("index.json", "empty")]  # fmt: skip
    assert len(cases) == 42
    for name, kind in cases:
        work = tmp_path / "work"
        shutil.rmtree(work, ignore_errors=True)
        shutil.copytree(d, work)
        _damage(work / name, kind)
        with pytest.raises(UserError, match="rebuild") as e:
            load_index(work, idx.signature)
        assert str(work) in str(e.value), (name, kind)


def test_consistent_edit_with_recomputed_checksums_is_still_refused(saved):
    """A crafted index whose checksums match its altered arrays: structural checks refuse it."""
    import hashlib

    idx, d = saved
    rows = np.load(d / "shard-0-rows.npy")
    rows[0] = 10**6  # out of range for the shard
    np.save(d / "shard-0-rows.npy", rows)
    header = json.loads((d / "index.json").read_text())
    data = (d / "shard-0-rows.npy").read_bytes()
    header["files"]["shard-0-rows.npy"] = {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    (d / "index.json").write_text(json.dumps(header))
    with pytest.raises(IndexCorrupt, match="out of range"):
        load_inverted_index(d)


def test_old_pickle_index_is_never_unpickled(tmp_path):
    """A crafted old-format directory (rank_bm25.pkl) must not run code."""
    d = tmp_path / "evil"
    d.mkdir()
    marker = tmp_path / "pwned"

    class Evil:
        def __reduce__(self):
            return (open, (str(marker), "w"))

    (d / "rank_bm25.pkl").write_bytes(pickle.dumps({"docids": ["a"], "model": Evil()}))
    (d / "index.json").write_text(json.dumps({"format": "clir-eval-bm25-index/1", "backend": "rank_bm25"}))
    with pytest.raises(IndexCorrupt, match="does not hold a clir-eval-index/2 index"):
        load_index(d)
    with pytest.raises(IndexCorrupt):
        build_or_load(d, word_docs(), WS, backend="rank_bm25")
    assert not marker.exists()


def test_build_or_load_rebuilds_other_settings_but_refuses_corruption(tmp_path):
    docs = word_docs()
    d = tmp_path / "c"
    _, cached = build_or_load(d, docs, WS, shards=2)
    assert not cached and build_or_load(d, docs, WS)[1]  # shards do not change the index or its key
    assert not build_or_load(d, docs, WS, k1=1.2)[1]
    data = bytearray((d / "df.npy").read_bytes())
    data[-1] ^= 0x40
    (d / "df.npy").write_bytes(bytes(data))
    with pytest.raises(IndexCorrupt, match="df.npy does not match its checksum"):
        build_or_load(d, docs, WS, k1=1.2)


def test_save_index_function_and_signature_check(tmp_path):
    from clir_eval.retrieval.bm25 import index_signature, save_index

    docs = word_docs(50)
    idx = build_index(docs, WS, variant="lucene")
    save_index(idx, tmp_path / "i")
    assert load_index(tmp_path / "i", index_signature(docs, WS, "sparse", idx.params)).signature == idx.signature
    with pytest.raises(UserError, match="different settings"):
        load_index(tmp_path / "i", index_signature(docs, STEM, "sparse", idx.params))


@pytest.mark.parametrize("chunk", [1, 7, 50, 1 << 22])
def test_pass2_counting_sort_equals_scipy_csc_whatever_the_chunk(monkeypatch, chunk):
    """Postings built chunk by chunk equal scipy's CSR -> CSC of the whole shard (the reference:
    rows ascending per term), with and without a local -> global id map, empty documents included."""
    import scipy.sparse as sp

    from clir_eval.retrieval import index as ix

    rng = np.random.default_rng(chunk)
    texts = [" ".join(f"w{int(x)}" for x in rng.zipf(1.3, size=int(n)) if x < 400) for n in rng.integers(0, 30, size=120)]
    texts[5] = texts[17] = ""
    stats = shard_stats(texts, get_analyzer("whitespace"))
    n_local = len(stats.terms)
    remap = rng.permutation(n_local + 9)[:n_local].astype(np.int32)
    monkeypatch.setattr(ix, "_CSC_CHUNK", chunk)
    for mapping, n_terms in ((None, n_local), (remap, n_local + 9)):
        got = ix.finalize_shard(stats, mapping, n_terms, 3)
        cols = stats.cols if mapping is None else mapping[stats.cols]
        ref = sp.csr_matrix((stats.tf, cols, stats.indptr), shape=(stats.n_docs, n_terms)).tocsc()
        assert (got.start, got.n_docs) == (3, stats.n_docs)
        assert np.array_equal(got.indptr, ref.indptr) and got.indptr.dtype == np.int64
        assert np.array_equal(got.rows, ref.indices) and got.rows.dtype == np.int32
        assert np.array_equal(got.tf, ref.data) and got.tf.dtype == stats.tf.dtype
