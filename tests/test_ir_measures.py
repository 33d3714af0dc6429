"""IR measure registry and evaluator: trec_eval measures equal pytrec_eval on runs with
many tied scores, stated policies, canonical names, invariance, bad input."""

from __future__ import annotations

import random
import re

import pytest
import pytrec_eval
from hypothesis import given, settings
from hypothesis import strategies as st

from clir_eval.errors import UserError
from clir_eval.io.trec import Qrels, Run, trec_order
from clir_eval.ir.evaluate import Evaluator, evaluate
from clir_eval.ir.measures import KNOWN_MEASURES, parse_measures
from clir_eval.ir.relevance import pseudo_qrels

TREC = ["map", "ndcg", "ndcg_cut_10", "P_5", "P_10", "recall_100", "Rprec", "recip_rank", "gm_map", "bpref",
        "success_1", "map_cut_10"]


def _generated(seed: int, n_queries: int = 25, depth: int = 60):
    """Qrels with graded labels and a run whose scores take 4 values (many ties)."""
    rng = random.Random(seed)
    qrels, raw = {}, {}
    for qi in range(n_queries):
        q = f"q{qi}"
        docs = [f"d{rng.randrange(200):03d}" for _ in range(depth * 2)]
        docs = list(dict.fromkeys(docs))
        if qi % 7 != 3:  # some queries without qrels (ignored)
            qrels[q] = {d: rng.choice([0, 0, 1, 2]) for d in rng.sample(docs, min(30, len(docs)))}
        if qi % 5 != 1:  # some qrels queries missing from the run (score 0)
            raw[q] = {d: float(rng.choice([0.5, 1.0, 1.5, 2.0])) for d in docs[:depth]}
    qrels["q-norel"] = {"d000": 0}
    return qrels, raw


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_trec_measures_equal_pytrec_eval_with_ties(seed):
    qrels, raw = _generated(seed)
    run = Run({q: trec_order(docs.items()) for q, docs in raw.items()})
    res = evaluate(run, Qrels(qrels), TREC)
    ref = pytrec_eval.RelevanceEvaluator(qrels, set(TREC)).evaluate({q: raw.get(q, {}) for q in qrels})
    assert set(res["per_query"]) == set(qrels)
    for q in qrels:
        for m in TREC:
            assert res["per_query"][q][m] == pytest.approx(ref[q][m], abs=1e-12), (q, m)
    for m in TREC:
        expected = pytrec_eval.compute_aggregated_measure(m, [ref[q][m] for q in qrels])
        assert res["aggregate"][m] == pytest.approx(expected, abs=1e-12), m


def test_policy_missing_queries_zero_and_run_only_ignored():
    qrels = Qrels({"a": {"d1": 1}, "b": {"d2": 1}})
    run = Run({"a": [("d1", 1.0)], "zzz": [("d9", 1.0)]})
    res = evaluate(run, qrels, ["map", "P_1"])
    assert res["per_query"] == {"a": {"map": 1.0, "P_1": 1.0}, "b": {"map": 0.0, "P_1": 0.0}}
    assert res["aggregate"] == {"map": 0.5, "P_1": 0.5}
    assert res["queries"] == {"evaluated": 2, "empty_or_missing_in_run": 1, "ignored_without_qrels": 1}


def test_run_order_is_used_not_scores():
    """The list order is the ranking: trec_eval would re-sort scores (and round to float32)."""
    qrels = Qrels({"q": {"rel": 1}})
    # file order puts 'rel' first although its score ties with 'zzz' in float32 and loses on docid
    run = Run({"q": [("rel", 1.0 + 1e-12), ("zzz", 1.0)]})
    assert evaluate(run, qrels, ["P_1"])["aggregate"]["P_1"] == 1.0
    naive = pytrec_eval.RelevanceEvaluator({"q": {"rel": 1}}, {"P_1"}).evaluate({"q": {"rel": 1.0 + 1e-12, "zzz": 1.0}})
    assert naive["q"]["P_1"] == 0.0
    # an out-of-score-order file keeps its order too
    run = Run({"q": [("zzz", 5.0), ("rel", 9.0)]})
    assert evaluate(run, qrels, ["recip_rank"])["aggregate"]["recip_rank"] == 0.5


def test_canonical_names():
    names = [m.name for m in parse_measures(["map", "ndcg", "P_10", "p@5", "P.20", "rprec", "rbo:p=0.98",
                                             "rbo:variant=min,p=0.9", "aqwv:beta=40,cutoff=20", "mqwv"])]
    assert names == ["map", "ndcg", "P_10", "P_5", "P_20", "Rprec", "rbo", "rbo:p=0.9,variant=min",
                     "aqwv:cutoff=20", "mqwv"]
    assert [m.name for m in parse_measures("map,rbo:p=0.9,depth=50,aqwv:beta=20,P_10")] == [
        "map", "rbo:p=0.9,depth=50", "aqwv:beta=20", "P_10"]
    assert [m.name for m in parse_measures(["rbo", "rbo:p=0.98", "map", "MAP"])] == ["rbo", "map"]
    sig = {m.name: m.signature for m in parse_measures(["rbo", "map", "aqwv"])}
    assert "p:0.98" in sig["rbo"] and "variant:ext" in sig["rbo"]
    assert "pytrec_eval-terrier" in sig["map"]
    assert "beta:40" in sig["aqwv"] and "cutoff:10" in sig["aqwv"]
    assert {"map", "rbo", "aqwv", "mqwv", "P_K"} <= set(KNOWN_MEASURES)


@pytest.mark.parametrize("spec, message", [
    ("bogus", "unknown measure"),
    ("P", "needs a cutoff"),
    ("P_x", "bad cutoff"),
    ("map:k=3", "takes no parameters"),
    ("rbo:q=1", "unknown parameter"),
    ("rbo:p=1", "strictly between 0 and 1"),
    ("rbo:p=abc", "must be a number"),
    ("rbo:variant=max", "one of"),
    ("rbo:depth=0", "positive"),
    ("aqwv:cutoff=-1", ">= 0"),
    ("aqwv:beta=-2", ">= 0"),
    ("mqwv:include_norel=maybe", "must be true or false"),
    ("rbo:p", "key=value"),
])
def test_bad_measures(spec, message):
    with pytest.raises(UserError, match=re.escape(message)):
        parse_measures([spec])


def test_rbo_against_reference_run_and_depth():
    ref = Run({"q1": [("a", 3.0), ("b", 2.0), ("c", 1.0)], "q2": [("x", 1.0)]})
    run = Run({"q1": [("b", 3.0), ("a", 2.0), ("c", 1.0)], "q2": [("y", 1.0)]})
    res = evaluate(run, pseudo_qrels(ref), ["rbo:p=0.9", "rbo:p=0.9,depth=1", "rbo:p=0.9,variant=min"], reference_run=ref)
    assert res["per_query"]["q1"]["rbo:p=0.9"] == pytest.approx(0.9)
    assert res["per_query"]["q2"]["rbo:p=0.9"] == 0.0
    assert res["per_query"]["q1"]["rbo:p=0.9,depth=1"] == 0.0
    assert res["aggregate"]["rbo:p=0.9"] == pytest.approx(0.45)
    with pytest.raises(UserError, match="reference run"):
        evaluate(run, pseudo_qrels(ref), ["rbo"])


def test_duplicate_document_in_run_is_an_error():
    run = Run({"q": [("a", 2.0), ("b", 1.0), ("a", 0.5)]})
    with pytest.raises(UserError, match="'a' appears twice for query 'q'"):
        evaluate(run, Qrels({"q": {"a": 1}}), ["map"])


def test_empty_qrels_is_an_error():
    with pytest.raises(UserError, match="no judged queries"):
        evaluate(Run({"q": [("a", 1.0)]}), Qrels({}), ["map"])
    res = evaluate(Run({"q": [("a", 1.0)]}), Qrels({"q": {"a": 1}, "empty": {}}), ["map", "P_1"])
    assert set(res["per_query"]) == {"q"} and res["aggregate"]["map"] == 1.0


def test_evaluator_reused_across_runs_matches_one_shot():
    qrels, raw = _generated(7)
    ref = Run({q: trec_order(d.items()) for q, d in raw.items()})
    ev = Evaluator(Qrels(qrels), ["map", "rbo", "mqwv", "aqwv"], reference_run=ref, collection_size=500)
    for seed in (8, 9):
        _, raw2 = _generated(seed)
        run = Run({q: trec_order(d.items()) for q, d in raw2.items()})
        assert ev.evaluate(run) == evaluate(run, Qrels(qrels), ["map", "rbo", "mqwv", "aqwv"], ref, 500)


ALL = ["map", "ndcg", "P_5", "recall_10", "recip_rank", "Rprec", "rbo", "rbo:variant=min", "aqwv:cutoff=5", "mqwv"]


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10**6))
def test_measures_invariant_under_document_renaming(seed):
    qrels, raw = _generated(seed, n_queries=6, depth=15)
    run = Run({q: trec_order(d.items()) for q, d in raw.items()})
    rng = random.Random(seed)
    names = sorted({d for j in qrels.values() for d in j} | {d for r in raw.values() for d in r})
    new = [f"doc{i}" for i in range(len(names))]
    rng.shuffle(new)  # renaming changes docid order, so ties must come from the list, not docids
    mapping = dict(zip(names, new))
    run2 = Run({q: [(mapping[d], s) for d, s in r] for q, r in run.ranking.items()})
    qrels2 = Qrels({q: {mapping[d]: v for d, v in j.items()} for q, j in qrels.items()})
    ref, ref2 = Run({q: r[::-1] for q, r in run.ranking.items()}), Run({q: r[::-1] for q, r in run2.ranking.items()})
    a = evaluate(run, Qrels(qrels), ALL, reference_run=ref, collection_size=1000)
    b = evaluate(run2, qrels2, ALL, reference_run=ref2, collection_size=1000)
    for q in a["per_query"]:
        assert a["per_query"][q] == pytest.approx(b["per_query"][q], abs=1e-12)
    assert a["aggregate"] == pytest.approx(b["aggregate"], abs=1e-12)


def test_rbo_is_averaged_over_the_reference_runs_queries_whatever_the_qrels():
    ref = Run({"q1": [("a", 2.0), ("b", 1.0)], "q2": [("x", 1.0)], "q3": [("z", 1.0)]})
    run = Run({"q1": [("a", 2.0), ("b", 1.0)], "q2": [("y", 1.0)]})
    few = Qrels({"q1": {"a": 1}})
    many = Qrels({"q1": {"a": 1}, "q2": {"x": 1}, "q9": {"k": 1}})
    a = evaluate(run, few, ["rbo:p=0.9", "map"], reference_run=ref)
    b = evaluate(run, many, ["rbo:p=0.9", "map"], reference_run=ref)
    assert a["aggregate"]["rbo:p=0.9"] == b["aggregate"]["rbo:p=0.9"] == pytest.approx(1 / 3)
    assert {q for q, v in a["per_query"].items() if "rbo:p=0.9" in v} == {"q1", "q2", "q3"}
    assert a["per_query"]["q3"]["rbo:p=0.9"] == 0.0  # missing from the run
    assert a["aggregate"]["map"] != b["aggregate"]["map"]
    assert "queries:reference-run" in a["signatures"]["rbo:p=0.9"]
