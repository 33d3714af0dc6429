"""AQWV / MQWV: hand-computed cases (cutoff 0, cutoff beyond the ranking, N_rel = 0
exclusion, thresholds) and properties."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clir_eval.errors import UserError
from clir_eval.io.trec import Qrels, Run
from clir_eval.ir.evaluate import evaluate

N = 100
QRELS = Qrels({"q1": {"a": 1, "b": 2, "x": 0}, "q2": {"c": 1}, "q3": {"w": 0}})
RUN = Run({
    "q1": [("a", 4.0), ("x", 3.0), ("b", 2.0), ("y", 1.0)],
    "q2": [("z", 2.0), ("c", 1.0)],
    "q3": [("w", 1.0)],
    "q9": [("a", 1.0)],  # no qrels: ignored
})


def score(measure, run=RUN, qrels=QRELS, n=N):
    return evaluate(run, qrels, [measure], collection_size=n)


@pytest.mark.parametrize(
    "cutoff, q1, q2",
    [
        (0, 0.0, 0.0),  # empty decision set: all missed, no false alarms
        (1, 1 - 1 / 2, 1 - 1 - 40 / 99),  # exactly one document (no [0:k+1] off-by-one)
        (3, 1 - 40 / 98, 1 - 40 / 99),
        (10, 1 - 80 / 98, 1 - 40 / 99),  # cutoff beyond the ranking: the whole ranking
    ],
)
def test_aqwv_hand_computed(cutoff, q1, q2):
    res = score(f"aqwv:cutoff={cutoff}")
    name = "aqwv" if cutoff == 10 else f"aqwv:cutoff={cutoff}"
    assert res["per_query"]["q1"][name] == pytest.approx(q1, abs=1e-12)
    assert res["per_query"]["q2"][name] == pytest.approx(q2, abs=1e-12)
    assert name not in res["per_query"]["q3"]  # N_rel = 0: excluded by default
    assert "q9" not in res["per_query"]
    assert res["aggregate"][name] == pytest.approx((q1 + q2) / 2, abs=1e-12)


def test_aqwv_beta_and_include_norel():
    res = score("aqwv:beta=20,cutoff=1,include_norel=true")
    name = "aqwv:beta=20,cutoff=1,include_norel=true"
    pq = res["per_query"]
    assert pq["q1"][name] == pytest.approx(0.5)
    assert pq["q2"][name] == pytest.approx(-20 / 99)
    assert pq["q3"][name] == pytest.approx(1 - 20 * 1 / 100)  # miss term 0, N_total - 0
    assert res["aggregate"][name] == pytest.approx((0.5 - 20 / 99 + 0.8) / 3)


def test_aqwv_threshold():
    res = score("aqwv:threshold=2.5")
    assert res["per_query"]["q1"]["aqwv:threshold=2.5"] == pytest.approx(0.5 - 40 / 98)
    assert res["per_query"]["q2"]["aqwv:threshold=2.5"] == pytest.approx(0.0)


def test_missing_query_scores_zero_and_counts():
    run = Run({"q1": RUN.ranking["q1"]})
    res = score("aqwv:cutoff=3", run=run)
    assert res["per_query"]["q2"]["aqwv:cutoff=3"] == 0.0
    assert res["aggregate"]["aqwv:cutoff=3"] == pytest.approx((1 - 40 / 98) / 2)


def test_mqwv_hand_computed():
    res = score("mqwv")
    best = (1 - 40 / 98 + 1 - 40 / 99) / 2  # cutoff 3; cutoffs 0,1,2,4 are lower
    assert res["aggregate"]["mqwv"] == pytest.approx(best, abs=1e-12)
    assert res["details"]["mqwv"]["cutoff"] == 3
    assert res["per_query"]["q1"]["mqwv"] == pytest.approx(1 - 40 / 98)
    # beta = 0: every cutoff >= 3 finds everything (QWV 1); the smallest one is reported
    res = score("mqwv:beta=0")
    assert res["details"]["mqwv:beta=0"]["cutoff"] == 3
    assert res["aggregate"]["mqwv:beta=0"] == 1.0
    res = score("mqwv:beta=1,max_cutoff=2")
    assert res["details"]["mqwv:beta=1,max_cutoff=2"]["cutoff"] == 2
    assert res["aggregate"]["mqwv:beta=1,max_cutoff=2"] == pytest.approx((0.5 - 1 / 98 + 1 - 1 / 99) / 2)
    res = score("mqwv:beta=1000")  # false alarms so costly that retrieving nothing is best
    assert res["details"]["mqwv:beta=1000"]["cutoff"] == 0
    assert res["aggregate"]["mqwv:beta=1000"] == 0.0


def test_errors():
    with pytest.raises(UserError, match="collection size"):
        evaluate(RUN, QRELS, ["aqwv"])
    with pytest.raises(UserError, match="not larger"):
        evaluate(RUN, QRELS, ["aqwv"], collection_size=2)
    with pytest.raises(UserError, match="no query"):
        evaluate(RUN, Qrels({"q3": {"w": 0}}), ["mqwv"], collection_size=N)
    with pytest.raises(UserError, match="either cutoff or threshold"):
        evaluate(RUN, QRELS, ["aqwv:cutoff=3,threshold=1"], collection_size=N)


@settings(max_examples=80, deadline=None)
@given(
    st.dictionaries(st.sampled_from(["q1", "q2", "q3"]), st.lists(st.integers(0, 30), unique=True, max_size=20), min_size=1),
    st.dictionaries(st.sampled_from(["q1", "q2", "q3"]), st.sets(st.integers(0, 30), min_size=1, max_size=10), min_size=1),
    st.integers(0, 25),
    st.floats(0, 100),
)
def test_aqwv_properties(rankings, relevant, cutoff, beta):
    run = Run({q: [(f"d{d}", float(-i)) for i, d in enumerate(docs)] for q, docs in rankings.items()})
    qrels = Qrels({q: {f"d{d}": 1 for d in docs} for q, docs in relevant.items()})
    res = evaluate(run, qrels, [f"aqwv:beta={beta},cutoff={cutoff}", f"mqwv:beta={beta}"], collection_size=40)
    a, m = res["aggregate"].values()
    assert a <= 1 + 1e-12
    assert m >= -1e-12  # cutoff 0 always scores 0
    if cutoff <= max((len(r) for r in rankings.values()), default=0):
        assert m >= a - 1e-12
    renamed = Run({q: [(f"x{d * 3}", s) for d, s in [(int(d[1:]), s) for d, s in r]] for q, r in run.ranking.items()})
    rq = Qrels({q: {f"x{int(d[1:]) * 3}": r for d, r in j.items()} for q, j in qrels.judgements.items()})
    res2 = evaluate(renamed, rq, [f"aqwv:beta={beta},cutoff={cutoff}", f"mqwv:beta={beta}"], collection_size=40)
    assert res2["aggregate"] == res["aggregate"]
