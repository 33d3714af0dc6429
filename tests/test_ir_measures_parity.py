"""Every accepted ir_measures measure string gives the value the ir_measures library gives on the
same qrels and run (generated, with tied scores), and trec_eval names equal their ir_measures
spelling. The run given to clir_eval is put in trec_eval order (score desc, docid desc), the
order pytrec_eval itself uses; the one given to ir_measures keeps the raw tied scores.

ir_measures' msmarco, judged and compat providers break ties by docid *ascending* and its
cwl_eval provider (RBP) by input order, unlike its pytrec_eval provider; the harness uses
trec_eval's rule for every measure, so for those measures ir_measures is given the same ranking
(ties re-broken trec_eval's way), and ``test_tie_rule_of_other_providers`` pins the difference
on raw ties."""

from __future__ import annotations

import random

import ir_measures
import pytest

from clir_eval.io.trec import Qrels, Run, trec_order
from clir_eval.ir.evaluate import Evaluator
from clir_eval.ir.measures import parse_measure

IR_MEASURES_STRINGS = [
    "AP", "AP@100", "AP@5", "nDCG", "nDCG@10", "nDCG@20", "P@10", "P@1", "R@1000", "R@10", "R@100", "RR",
    "Rprec", "Bpref", "infAP", "Success@1", "Success@10", "SetP", "SetR", "SetAP", "NumRet", "NumRet(rel=1)",
    "NumRel", "IPrec@0.5", "RR@10", "P(rel=2)@5", "AP(rel=2)", "nDCG(judged_only=True)@10", "Judged@20",
    "Judged@5", "RBP(rel=1)", "RBP(rel=2,p=0.5)", "Compat(p=0.8)",
]
TREC_NAMES = {"map": "AP", "map_cut_100": "AP@100", "ndcg": "nDCG", "ndcg_cut_10": "nDCG@10", "P_10": "P@10",
              "recall_1000": "R@1000", "recip_rank": "RR", "Rprec": "Rprec", "bpref": "Bpref",
              "success_1": "Success@1", "infAP": "infAP", "num_ret": "NumRet", "num_rel_ret": "NumRet(rel=1)",
              "iprec_at_recall_0.50": "IPrec@0.5", "set_P": "SetP"}


def generated(seed: int):
    """Qrels with graded labels and judged non-relevant documents; a run with many tied scores
    (one decimal) over all the qrels' queries, some rankings shorter than the cutoffs."""
    rng = random.Random(seed)
    docs = [f"d{i:03d}" for i in range(120)]
    qrels = {}
    for i in range(30):
        judged = rng.sample(docs, rng.randint(1, 40))
        qrels[f"q{i}"] = {d: rng.choice([0, 0, 1, 1, 2]) for d in judged}
    run = {}
    for q in qrels:
        ranked = rng.sample(docs, rng.randint(1, 60))
        run[q] = {d: round(rng.random(), 1) for d in ranked}
    return qrels, run


def ours(qrels, run, spec):
    ev = Evaluator(Qrels(qrels), [spec])
    res = ev.evaluate(Run({q: trec_order(sc.items()) for q, sc in run.items()}))
    (name,) = res["aggregate"]
    return res["aggregate"][name], {q: v[name] for q, v in res["per_query"].items()}


OTHER_TIE_RULE = {"msmarco", "judged", "compat", "cwl_eval"}


def trec_ranked(run):
    """The same ranking with distinct scores (n - rank in trec_eval order)."""
    return {q: {d: float(len(sc) - i) for i, (d, _) in enumerate(trec_order(sc.items()))} for q, sc in run.items()}


def theirs(qrels, run, spec):
    m = ir_measures.parse_measure(spec)
    if getattr(parse_measure(spec), "via", None) in OTHER_TIE_RULE:
        run = trec_ranked(run)
    per_query = {r.query_id: float(r.value) for r in ir_measures.iter_calc([m], qrels, run)}
    return float(ir_measures.calc_aggregate([m], qrels, run)[m]), per_query


@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("spec", IR_MEASURES_STRINGS)
def test_equals_ir_measures_on_runs_with_ties(spec, seed):
    qrels, run = generated(seed)
    assert len({s for sc in run.values() for s in sc.values()}) <= 11  # many ties
    agg, per_query = ours(qrels, run, spec)
    t_agg, t_per_query = theirs(qrels, run, spec)
    assert per_query == pytest.approx(t_per_query, abs=1e-9)
    assert agg == pytest.approx(t_agg, abs=1e-9)


@pytest.mark.parametrize("trec, irm", sorted(TREC_NAMES.items()))
def test_trec_eval_names_equal_their_ir_measures_spelling(trec, irm):
    assert parse_measure(irm).name == trec == parse_measure(trec).name
    qrels, run = generated(3)
    assert ours(qrels, run, trec) == ours(qrels, run, irm)
    assert ours(qrels, run, trec)[0] == pytest.approx(theirs(qrels, run, irm)[0], abs=1e-12)


def test_result_keys_are_trec_eval_names_or_ir_measures_strings():
    assert [parse_measure(s).name for s in ["AP", "AP@100", "nDCG@10", "P@10", "R@1000", "RR", "RBP(rel=1)",
                                            "Judged@20", "RR@10"]] == [
        "map", "map_cut_100", "ndcg_cut_10", "P_10", "recall_1000", "recip_rank", "RBP(rel=1)", "Judged@20", "RR@10"]
    sig = parse_measure("Judged@20").signature
    assert sig.startswith("Judged@20|impl:ir_measures-") and "/judged|" in sig


def test_missing_query_scores_zero_and_counts_in_the_mean():
    qrels = {"q1": {"a": 1, "b": 0}, "q2": {"c": 1}}
    run = {"q1": {"a": 2.0, "b": 1.0}}
    for spec in ["Judged@2", "RBP(rel=1)", "RR@10", "AP"]:
        agg, per_query = ours(qrels, run, spec)
        assert per_query["q2"] == 0.0 and agg == pytest.approx(per_query["q1"] / 2)


def test_tie_rule_of_other_providers():
    qrels = {"q": {"a": 1, "b": 0}}
    tied = {"q": {"a": 1.0, "b": 1.0}}  # trec_eval ranks b (docid desc) first, msmarco/judged a
    assert theirs(qrels, tied, "RR")[0] == 0.5
    m = ir_measures.parse_measure("RR@10")
    assert ir_measures.calc_aggregate([m], qrels, tied)[m] == 1.0
    assert ours(qrels, tied, "RR@10")[0] == ours(qrels, tied, "RR")[0] == 0.5
