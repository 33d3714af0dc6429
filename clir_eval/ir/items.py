"""Item-level extrinsic signals of one run: where each judged relevant document lands.

Per judged (query, relevant document) pair: the document's rank in the run (1 = first, in
trec_eval's order: score descending, then document id descending) and its reciprocal rank
(0 when it is not retrieved within the run's depth). Per document: its *retrievability*, the
mean reciprocal rank over the queries that judge it relevant (a known-item query is the case of
one query per document).
"""

from __future__ import annotations

from typing import Mapping

from ..io.trec import Qrels, Run


def relevant_pairs(qrels: Qrels) -> list[tuple[str, str]]:
    """The judged (query, relevant document) pairs, queries in qrels order, documents sorted."""
    return [(q, d) for q in qrels.qids() for d in sorted(qrels.relevant(q))]


def pair_ranks(run: Run, pairs: list[tuple[str, str]]) -> list[int | None]:
    """Rank of each pair's document in its query's ranking (None: not retrieved)."""
    pos: dict[str, dict[str, int]] = {}
    out = []
    for q, d in pairs:
        if q not in pos:
            pos[q] = {doc: i + 1 for i, (doc, _) in enumerate(run.ranking.get(q, []))}
        out.append(pos[q].get(d))
    return out


def reciprocal(ranks: list[int | None]) -> list[float]:
    return [0.0 if r is None else 1.0 / r for r in ranks]


def retrievability(pairs: list[tuple[str, str]], rr: list[float]) -> dict[str, float]:
    """Per relevant document: mean reciprocal rank over the queries that judge it relevant."""
    acc: dict[str, list[float]] = {}
    for (_, d), v in zip(pairs, rr):
        acc.setdefault(d, []).append(v)
    return {d: sum(v) / len(v) for d, v in sorted(acc.items())}


def run_signals(run: Run, qrels: Qrels) -> dict:
    """``{"pairs": [[q, d], ...], "rank": [...], "rr": [...], "retrievability": {doc: float}}``."""
    pairs = relevant_pairs(qrels)
    ranks = pair_ranks(run, pairs)
    rr = reciprocal(ranks)
    return {"pairs": [list(p) for p in pairs], "rank": ranks, "rr": rr, "retrievability": retrievability(pairs, rr)}


def query_docs(pairs: list[list[str]] | list[tuple[str, str]]) -> Mapping[str, list[str]]:
    """Query -> its relevant documents (pairs order)."""
    out: dict[str, list[str]] = {}
    for q, d in pairs:
        out.setdefault(q, []).append(d)
    return out
