"""Known-item query generation from parallel documents (headline, first-sentence, keywords)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clir_eval.errors import UserError
from clir_eval.io.trec import Qrels
from clir_eval.sources.querygen import QUERY_KINDS, generate_queries, keyword_terms, parse_query_spec
from clir_eval.sources.wmt import read_wmt_xml

XML = """<dataset id="t">
  <doc id="n1" origlang="de">
    <src lang="de"><p><seg id="1">Sturm trifft Küste</seg><seg id="2">Ein Sturm traf gestern die Küste.</seg><seg id="3">Bäume fielen.</seg></p></src>
    <ref lang="en" translator="A"><p><seg id="1">Storm hits coast</seg><seg id="2">A storm hit the coast yesterday.</seg><seg id="3">Trees fell.</seg></p></ref>
    <hyp system="S1" lang="en"><p><seg id="1">Storm meets coast</seg><seg id="2">A storm met the coast yesterday.</seg><seg id="3">Trees fell.</seg></p></hyp>
  </doc>
  <doc id="n2" origlang="de">
    <src lang="de"><p><seg id="1">Wahl gewonnen</seg><seg id="2">Die Partei gewann die Wahl.</seg></p></src>
    <ref lang="en" translator="A"><p><seg id="1">Election won</seg><seg id="2">The party won the election.</seg></p></ref>
    <hyp system="S1" lang="en"><p><seg id="1">Vote won</seg><seg id="2">The party won the vote.</seg></p></hyp>
  </doc>
  <doc id="n3" origlang="de">
    <src lang="de"><p><seg id="1"></seg><seg id="2">Ohne Titel.</seg></p></src>
    <ref lang="en" translator="A"><p><seg id="1"> </seg><seg id="2">Untitled text.</seg></p></ref>
    <hyp system="S1" lang="en"><p><seg id="1"></seg><seg id="2">No title.</seg></p></hyp>
  </doc>
  <doc id="n4" origlang="de">
    <src lang="de"><p><seg id="1">Nur Titel</seg></p></src>
    <ref lang="en" translator="A"><p><seg id="1">Only a headline</seg></p></ref>
    <hyp system="S1" lang="en"><p><seg id="1">Just title</seg></p></hyp>
  </doc>
</dataset>
"""


@pytest.fixture
def ts(tmp_path):
    p = tmp_path / "t.xml"
    p.write_text(XML, encoding="utf-8")
    return read_wmt_xml(p)


def test_headline_queries_from_inline_xml(ts):
    g = generate_queries("headline", ts.references["A"])
    assert g.queries == {"n1": "Storm hits coast", "n2": "Election won"}
    assert g.qrels == Qrels({"n1": {"n1": 1}, "n2": {"n2": 1}})
    assert g.skipped == {"n3": "empty headline", "n4": "no text left after segment 1"}
    assert g.drop == {d: frozenset({0}) for d in ("n1", "n2", "n3", "n4")}
    # every system's collection is the bodies; skipped documents stay (possibly empty)
    assert g.collection(ts.hypotheses["S1"]) == [
        ("n1", "A storm met the coast yesterday. Trees fell."),
        ("n2", "The party won the vote."),
        ("n3", "No title."),
        ("n4", ""),
    ]
    assert ts.collection("ref:A", drop=g.drop)[0] == ("n1", "A storm hit the coast yesterday. Trees fell.")
    assert g.signature.startswith("querygen:headline|docs:4|queries:2|skipped:2|limit:none|seed:0")


def test_first_sentence_queries(ts):
    g = generate_queries("first-sentence", ts.references["A"])
    assert g.queries == {"n1": "A storm hit the coast yesterday."}
    assert g.skipped == {
        "n2": "no text left after segment 2",
        "n3": "no text left after segment 2",
        "n4": "empty first body sentence (segment 2)",
    }
    assert g.collection(ts.references["A"]) == [("n1", "Trees fell."), ("n2", ""), ("n3", ""), ("n4", "")]


def test_keywords_hand_computed():
    docs = {
        "a": ["Zebra zebra lion", "the cat sat"],
        "b": ["the lion cat", "2020 dog"],
        "c": ["the cat", "the cat"],
    }
    # df: the=3 cat=3 lion=2 zebra=1 sat=1 dog=1 (2020 is dropped by the analyzer)
    g = generate_queries("keywords", docs, k=3)
    # a: zebra (df1, tf2) before sat (df1, tf1); then lion (df2)
    assert g.queries == {"a": "zebra sat lion", "b": "dog lion the", "c": "the cat"}
    assert g.qrels.judgements == {"a": {"a": 1}, "b": {"b": 1}, "c": {"c": 1}}
    assert g.drop == {"a": frozenset(), "b": frozenset(), "c": frozenset()}
    # equal df and tf: earlier first occurrence wins
    assert generate_queries("keywords", docs, k=1).queries["b"] == "dog"
    assert generate_queries("keywords", {"x": ["b a"], "y": ["c"]}, k=1).queries["x"] == "b"
    assert "k:3|analyzer:lc-word-nodigits|idf:ln(N/df)" in g.signature


def test_keywords_custom_analyzer_and_skip():
    g = generate_queries("keywords", {"a": ["X Y"], "b": ["123"], "c": ["y"]}, k=2, analyzer=str.split)
    assert g.queries == {"a": "X Y", "b": "123", "c": "y"}
    assert "analyzer:split" in g.signature
    g = generate_queries("keywords", {"a": ["x y"], "b": ["123 456"]}, k=2)
    assert g.queries == {"a": "x y"} and g.skipped == {"b": "no terms"}
    assert keyword_terms("The Cat's 2 cats_9") == ["the", "cat", "s", "cats_9"]


def test_limit_samples_deterministically_in_document_order():
    docs = {f"d{i:02d}": [f"headline {i}", f"body {i}"] for i in range(30)}
    a = generate_queries("headline", docs, limit=7, seed=3)
    b = generate_queries("headline", docs, limit=7, seed=3)
    assert a.queries == b.queries and len(a.queries) == 7
    assert list(a.queries) == sorted(a.queries)
    others = {tuple(generate_queries("headline", docs, limit=7, seed=s).queries) for s in range(5)}
    assert len(others) > 1
    assert set(a.qrels.judgements) == set(a.queries)
    assert a.drop.keys() == docs.keys()
    assert "limit:7|seed:3" in a.signature
    assert len(generate_queries("headline", docs, limit=100).queries) == 30


@pytest.mark.parametrize(
    "call,pattern",
    [
        (lambda d: generate_queries("titles", d), "unknown query generator 'titles'"),
        (lambda d: generate_queries("keywords", d, k=0), "k >= 1"),
        (lambda d: generate_queries("headline", d, limit=0), "positive integer"),
        (lambda d: generate_queries("headline", {}), "no documents"),
        (lambda d: generate_queries("headline", {"a b": ["x", "y"]}), "cannot be a query id"),
    ],
)
def test_bad_arguments(call, pattern):
    with pytest.raises(UserError, match=pattern):
        call({"a": ["x", "y"]})


def test_parse_query_spec():
    assert parse_query_spec("headline") == ("headline", {})
    assert parse_query_spec("keywords:k=8,seed=1,limit=50") == ("keywords", {"k": 8, "seed": 1, "limit": 50})
    assert parse_query_spec("first-sentence:limit=5") == ("first-sentence", {"limit": 5})
    with pytest.raises(UserError, match="unknown parameter 'k'"):
        parse_query_spec("headline:k=3")
    with pytest.raises(UserError, match="must be an integer"):
        parse_query_spec("keywords:k=many")
    with pytest.raises(UserError, match="unknown query generator"):
        parse_query_spec("bm25")


_words = st.lists(st.sampled_from(["alpha", "beta", "gamma", "delta", "eps", "zeta", ""]), max_size=6)
_docs = st.dictionaries(
    st.text("abcdef0123", min_size=1, max_size=4), st.lists(_words.map(" ".join), max_size=4), min_size=1, max_size=8
)


@settings(max_examples=60, deadline=None)
@given(docs=_docs, kind=st.sampled_from(QUERY_KINDS), k=st.integers(1, 4))
def test_generator_invariants(docs, kind, k):
    g = generate_queries(kind, docs, k=k)
    assert set(g.queries) | set(g.skipped) == set(docs) and not set(g.queries) & set(g.skipped)
    assert g.qrels.judgements == {q: {q: 1} for q in g.queries}
    assert g.drop.keys() == docs.keys()
    for q, text in g.queries.items():
        assert text.strip()
        if kind == "keywords":
            assert len(text.split()) <= k and set(text.split()) <= set(" ".join(docs[q]).split())
        else:
            # the query segment is not in the document left for retrieval
            kept = [s for i, s in enumerate(docs[q]) if i not in g.drop[q]]
            assert any(s.strip() for s in kept)
    # renaming document ids renames queries and nothing else
    renamed = generate_queries(kind, {"x" + d: v for d, v in docs.items()}, k=k)
    assert renamed.queries == {"x" + q: t for q, t in g.queries.items()}


@pytest.mark.shared_data
def test_wmt21_ru_en_headline_queries(shared_data):
    news = read_wmt_xml(shared_data / "wmt21-docs" / "newstest2021.ru-en.all.xml.gz").without_testsuites()
    g = generate_queries("headline", news.references["A"])
    assert len(g.queries) == 107 and g.skipped == {}
    bodies = dict(g.collection(news.references["A"]))
    assert len(bodies) == 107
    assert all(not bodies[q].startswith(text) for q, text in g.queries.items())
    for s in news.systems:
        assert len(g.collection(news.hypotheses[s])) == 107
    kw = generate_queries("keywords", news.references["A"], k=5, limit=50, seed=0)
    assert len(kw.queries) == 50 and all(len(t.split()) == 5 for t in kw.queries.values())
