"""BM25 backends: `sparse` must equal rank-bm25 0.2.2 (scores and rankings), ties in trec_eval
order, save/load, signatures, bad parameters."""

from __future__ import annotations

import numpy as np
import pytest
import rank_bm25
from hypothesis import given, settings
from hypothesis import strategies as st

from clir_eval.errors import UserError
from clir_eval.io.readers import Documents, read_documents, read_queries
from clir_eval.io.trec import trec_order
from clir_eval.retrieval.analysis import get_analyzer
from clir_eval.retrieval.bm25 import build_index, build_or_load, load_index

REF_CLASS = {"okapi": rank_bm25.BM25Okapi, "l": rank_bm25.BM25L, "plus": rank_bm25.BM25Plus}
WS = get_analyzer("whitespace")


def zipf_corpus(n_docs=2000, vocab=5000, seed=13, s=1.1, max_len=80):
    """Documents of Zipf-distributed tokens w0 (most frequent) .. w{vocab-1}; some empty."""
    rng = np.random.default_rng(seed)
    p = 1.0 / np.arange(1, vocab + 1) ** s
    p /= p.sum()
    lens = rng.integers(0, max_len, size=n_docs)
    toks = rng.choice(vocab, size=int(lens.sum()), p=p)
    texts, i = [], 0
    for n in lens:
        texts.append(" ".join(f"w{t}" for t in toks[i : i + n]))
        i += n
    return Documents.from_pairs(((f"D{k:05d}", t) for k, t in enumerate(texts)), source=f"zipf:seed={seed}")


ZIPF_QUERIES = {
    "common": "w0 w1",  # in more than half of the documents: epsilon floor
    "repeat": "w3 w3 w17 w3",
    "unknown": "nosuchterm w42 alsomissing",
    "only-unknown": "nosuchterm",
    "rare": "w4999 w3000 w2500 w1234",
    "mixed": "w0 w250 w250 nosuch w9 w1",
    "empty": "",
}


def ref_model(docs, analyzer, variant, **kw):
    return REF_CLASS[variant]([analyzer.tokenize(t) for t in docs.texts], **kw)


def ref_ranking(docs, scores, depth):
    """Reference ranking from rank-bm25 scores: positive scores, trec_eval order."""
    items = [(d, float(s)) for d, s in zip(docs.ids, scores) if s > 0]
    return trec_order(items)[:depth]


def assert_same_scores(a, b):
    a, b = np.asarray(a), np.asarray(b)
    np.testing.assert_array_equal(np.isnan(a), np.isnan(b))
    ok = ~np.isnan(a)
    denom = np.maximum(np.abs(b[ok]), 1e-300)
    assert np.max(np.abs(a[ok] - b[ok]) / denom, initial=0.0) <= 1e-12


@pytest.fixture(scope="module")
def zipf():
    return zipf_corpus()


@pytest.mark.parametrize("variant, kw", [("okapi", {}), ("okapi", {"k1": 1.2, "b": 0.4, "epsilon": 0.5}),
                                         ("l", {}), ("plus", {"delta": 0.7})])  # fmt: skip
def test_zipf_parity_three_ways(zipf, variant, kw):
    ref = ref_model(zipf, WS, variant, **kw)
    sparse = build_index(zipf, WS, backend="sparse", variant=variant, **kw)
    reference = build_index(zipf, WS, backend="rank_bm25", variant=variant, **kw)
    if variant == "okapi":  # the epsilon floor is exercised
        assert ref.idf["w0"] == ref.epsilon * ref.average_idf
        assert sum("w0" in d for d in ref.doc_freqs) > len(zipf) / 2
    for q in ZIPF_QUERIES.values():
        want = ref.get_scores(q.split())
        assert_same_scores(sparse.get_scores(q.split()), want)
        assert_same_scores(reference.get_scores(q.split()), want)
    run_s = sparse.search(ZIPF_QUERIES, depth=300)
    run_r = reference.search(ZIPF_QUERIES, depth=300)
    for qid, q in ZIPF_QUERIES.items():
        want = ref_ranking(zipf, ref.get_scores(q.split()), 300)
        assert [d for d, _ in run_s.ranking[qid]] == [d for d, _ in want]
        assert [d for d, _ in run_r.ranking[qid]] == [d for d, _ in want]
        assert_same_scores([s for _, s in run_s.ranking[qid]], [s for _, s in want])
    assert run_s.ranking["empty"] == [] and run_s.ranking["only-unknown"] == []
    assert len(run_s.ranking["common"]) == 300


def test_sparse_scores_are_bitwise_identical(zipf):
    ref = ref_model(zipf, WS, "okapi")
    sparse = build_index(zipf, WS)
    for q in ZIPF_QUERIES.values():
        assert sparse.get_scores(q.split()).tobytes() == ref.get_scores(q.split()).tobytes()


@settings(max_examples=60, deadline=None)
@given(
    docs=st.lists(st.lists(st.sampled_from("abcdef"), max_size=7), min_size=1, max_size=12).filter(any),
    query=st.lists(st.sampled_from("abcdefz"), max_size=6),
    variant=st.sampled_from(["okapi", "l", "plus"]),
    b=st.sampled_from([0.0, 0.3, 0.75, 1.0]),
    k1=st.sampled_from([0.5, 1.2, 1.5, 2.0]),
)
def test_small_corpora_parity(docs, query, variant, b, k1):
    """Tiny vocabularies: most terms in over half the documents, empty docs, b=1 NaNs."""
    collection = Documents.from_pairs((f"d{i}", " ".join(d)) for i, d in enumerate(docs))
    ref = ref_model(collection, WS, variant, k1=k1, b=b)
    sparse = build_index(collection, WS, variant=variant, k1=k1, b=b)
    with np.errstate(all="ignore"):
        want = ref.get_scores(query)
    got = sparse.get_scores(query)
    np.testing.assert_array_equal(got, want)
    run = sparse.search({"q": " ".join(query)}, depth=5)
    assert run.ranking["q"] == ref_ranking(collection, want, 5)


def test_ties_broken_by_docid_descending_also_at_the_depth_cut():
    fillers = [(f"u{i}", f"filler{i}") for i in range(6)]  # keeps x's idf positive
    docs = Documents.from_pairs([("d1", "x y"), ("d10", "x y"), ("d2", "x y"), ("e", "y y"), ("f", "z")] + fillers)
    for backend in ("sparse", "rank_bm25"):
        idx = build_index(docs, WS, backend=backend)
        full = idx.search({"q": "x"}).ranking["q"]
        assert [d for d, _ in full] == ["d2", "d10", "d1"]
        assert len({s for _, s in full}) == 1
        assert [d for d, _ in idx.search({"q": "x"}, depth=2).ranking["q"]] == ["d2", "d10"]
        assert [d for d, _ in idx.search({"q": "x y"}).ranking["q"]] == ["d2", "d10", "d1", "e"]


def test_empty_documents_are_kept_and_all_empty_collection_works():
    docs = Documents.from_pairs([("a", ""), ("b", "x x"), ("c", "")])
    for backend in ("sparse", "rank_bm25"):
        idx = build_index(docs, WS, backend=backend)
        assert len(idx) == 3
        assert [d for d, _ in idx.search({"q": "x"}).ranking["q"]] == ["b"]
    empty = Documents.from_pairs([("a", ""), ("b", "  ")])
    for backend in ("sparse", "rank_bm25"):
        assert build_index(empty, WS, backend=backend).search({"q": "x", "r": ""}).ranking == {"q": [], "r": []}


@pytest.mark.parametrize("backend", ["sparse", "rank_bm25"])
def test_save_and_load_roundtrip(tmp_path, zipf, backend):
    an = get_analyzer("default", stopwords="english", stem="english")
    idx = build_index(zipf, an, backend=backend, variant="plus")
    idx.save(tmp_path / "idx")
    again = load_index(tmp_path / "idx", idx.signature)
    assert again.signature == idx.signature and again.analyzer.signature == an.signature
    assert again.search(ZIPF_QUERIES, depth=50).ranking == idx.search(ZIPF_QUERIES, depth=50).ranking
    with pytest.raises(UserError, match="different settings"):
        load_index(tmp_path / "idx", idx.signature + "x")
    with pytest.raises(UserError, match="no index"):
        load_index(tmp_path / "nothing")


def test_build_or_load_is_keyed_by_signature(tmp_path, zipf):
    d = tmp_path / "cache"
    idx1, cached1 = build_or_load(d, zipf, WS, k1=1.2)
    idx2, cached2 = build_or_load(d, zipf, WS, k1=1.2)
    assert (cached1, cached2) == (False, True) and idx1.signature == idx2.signature
    idx3, cached3 = build_or_load(d, zipf, WS, k1=1.3)
    assert not cached3 and idx3.signature != idx1.signature
    other = Documents.from_pairs(list(zip(zipf.ids, zipf.texts[:-1] + ("changed",))))
    _, cached4 = build_or_load(d, other, WS, k1=1.3)
    assert not cached4


def test_signature_names_settings(zipf):
    sig = build_index(zipf, WS, k1=1.2, b=0.5, epsilon=0.1).signature
    for part in ("bm25:okapi", "k1:1.2", "b:0.5", "eps:0.1", "backend:sparse", "rank_bm25:0.2.2",
                 f"docs:{zipf.checksum[:16]}", WS.signature):  # fmt: skip
        assert part in sig
    assert "delta:0.5" in build_index(zipf, WS, variant="l").signature


@pytest.mark.parametrize(
    "kwargs, needle",
    [
        ({"backend": "lucene"}, "unknown BM25 backend"),
        ({"variant": "bm25t"}, "unknown BM25 variant"),
        ({"k1": 0}, "k1=0.0 must be > 0"),
        ({"b": 1.5}, r"b=1.5 must be in \[0, 1\]"),
        ({"delta": 1.0}, "delta applies to the BM25L and BM25Plus"),
        ({"epsilon": float("nan")}, "must be a finite number"),
    ],
)
def test_bad_parameters(kwargs, needle):
    docs = Documents.from_pairs([("a", "x")])
    with pytest.raises(UserError, match=needle):
        build_index(docs, WS, **kwargs)


@pytest.mark.parametrize("depth", [0, -5])
def test_bad_depth(depth):
    idx = build_index(Documents.from_pairs([("a", "x")]), WS)
    with pytest.raises(UserError, match="depth"):
        idx.search({"q": "x"}, depth=depth)


@pytest.mark.shared_data
def test_real_text_parity(shared_data):
    """Lignos et al. reference sentences and one MT system as documents, GOV2 titles as queries."""
    queries = read_queries(shared_data / "gov2-topics")
    an = get_analyzer("default")
    base = shared_data / "lignos2019" / "nc-test" / "de-en"
    for path in (base / "reference.en.txt.gz", base / "systems" / "nc25000.bpe16000.txt.gz"):
        if not path.exists():
            pytest.skip(f"{path} not found")
        docs = read_documents(path)
        ref = ref_model(docs, an, "okapi")
        sparse = build_index(docs, an)
        reference = build_index(docs, an, backend="rank_bm25")
        run_s, run_r = sparse.search(queries, depth=100), reference.search(queries, depth=100)
        assert run_s.ranking == run_r.ranking
        for qid, q in queries.items():
            want = ref.get_scores(an.tokenize(q))
            assert_same_scores(sparse.get_scores(an.tokenize(q)), want)
            assert run_s.ranking[qid] == ref_ranking(docs, want, 100)
        assert sum(len(v) for v in run_s.ranking.values()) > 5000


def test_documents_with_non_positive_scores_are_not_returned():
    """Here every term is in most documents, so rank-bm25's mean idf and the epsilon floor are
    negative: matching documents score below non-matching ones and none is returned."""
    docs = Documents.from_pairs([("d1", "x y"), ("d10", "x y"), ("d2", "x y"), ("e", "y y"), ("f", "z")])
    ref = ref_model(docs, WS, "okapi")
    assert ref.average_idf < 0 and (ref.get_scores(["x"]) < 0).sum() == 3
    for backend in ("sparse", "rank_bm25"):
        assert build_index(docs, WS, backend=backend).search({"q": "x"}).ranking == {"q": []}
