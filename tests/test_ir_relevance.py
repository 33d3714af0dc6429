"""Pseudo-qrels from a reference run (Lignos et al. 2019: top-k of the English-side run)."""

from __future__ import annotations

import pytest

from clir_eval.errors import UserError
from clir_eval.io.trec import Run
from clir_eval.ir.relevance import DEFAULT_TOP_K, pseudo_qrels


def test_top_k_in_list_order_and_empty_queries_dropped():
    ref = Run({"q1": [("c", 1.0), ("a", 3.0), ("b", 2.0)], "q2": [], "q3": [("z", 0.0)]})
    q = pseudo_qrels(ref, top_k=2)
    assert q.judgements == {"q1": {"c": 1, "a": 1}, "q3": {"z": 1}}
    assert pseudo_qrels(ref, top_k=10).relevant("q1") == {"a", "b", "c"}


def test_default_depth_is_100():
    ref = Run({"q": [(f"d{i}", float(-i)) for i in range(150)]})
    assert DEFAULT_TOP_K == 100
    assert pseudo_qrels(ref).relevant("q") == {f"d{i}" for i in range(100)}


@pytest.mark.parametrize("k", [0, -1, 2.5, True])
def test_bad_depth(k):
    with pytest.raises(UserError, match="positive integer"):
        pseudo_qrels(Run({"q": [("a", 1.0)]}), top_k=k)
