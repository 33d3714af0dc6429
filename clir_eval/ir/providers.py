"""How IR measures are computed: pytrec_eval (trec_eval measures), RBO, QWV (AQWV/MQWV), ir_measures (the rest).

A provider is built once per qrels (:class:`Setup`) for the measures it serves and computes one
measure of one run (:class:`RunContext`) at a time; work shared between measures of a run
(pytrec_eval's single pass, hit arrays, overlap profiles) is kept in ``RunContext.cache``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np

from .. import lazylibs
from ..errors import UserError
from .aqwv import QueryHits, mqwv, query_hits, qwv_at_cutoff, qwv_at_threshold
from .measures import Measure
from .rbo import overlap_profile, rbo_from_profile


@dataclass
class Setup:
    """Per-qrels state shared by every run: evaluated queries, judgements, reference positions."""

    qids: list[str]
    judgements: dict[str, dict[str, int]]
    relevant: dict[str, set[str]]
    collection_size: int | None = None
    ref_pos: dict[str, dict[str, int]] = field(default_factory=dict)
    ref_len: dict[str, int] = field(default_factory=dict)


@dataclass
class RunContext:
    """One run's rankings restricted to the evaluated queries, and work shared between measures."""

    run: Any
    docs: dict[str, list[str]]
    rank_scores: dict[str, dict[str, int]]  # docid -> n - rank: pytrec_eval input and position index
    cache: dict[Any, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Result:
    """One measure on one run: per-query values, their aggregate, optional details."""

    per_query: dict[str, float]
    aggregate: float
    details: dict[str, Any] | None = None


class Provider:
    """Computes the measures whose ``provider`` names it."""

    def __init__(self, setup: Setup, measures: Sequence[Measure]):
        self.setup = setup
        self.measures = list(measures)

    def compute(self, m: Measure, ctx: RunContext) -> Result:
        raise NotImplementedError




def run_docids(run, q: str) -> list[str]:
    """A query's ranking as docids; a document twice is an error."""
    d = run.docids(q)
    if len(set(d)) != len(d):
        seen: set[str] = set()
        dup = next(x for x in d if x in seen or seen.add(x))
        raise UserError(f"run: document {dup!r} appears twice for query {q!r}; remove the duplicate")
    return d


def mean(values) -> float:
    arr = np.fromiter(values, dtype=np.float64)
    return float(arr.mean()) if arr.size else 0.0


class PytrecEval(Provider):
    """trec_eval measures by pytrec_eval, all of a run in one pass; the aggregate is trec_eval's."""

    def __init__(self, setup, measures):
        super().__init__(setup, measures)
        self._pe = lazylibs.pytrec_eval().RelevanceEvaluator(
            {q: dict(setup.judgements[q]) for q in setup.qids}, {m.name for m in measures}
        )

    def compute(self, m, ctx):
        if "pytrec_eval" not in ctx.cache:
            ctx.cache["pytrec_eval"] = self._pe.evaluate(ctx.rank_scores)
        trec_vals = ctx.cache["pytrec_eval"]
        vals = {q: float(trec_vals[q][m.name]) for q in self.setup.qids}
        return Result(vals, float(lazylibs.pytrec_eval().compute_aggregated_measure(m.name, list(vals.values()))))


class RBO(Provider):
    """Rank-biased overlap of each query's ranking with the reference run's (Webber et al. 2010),
    over the reference run's queries (RBO needs no judgements; a query the run lacks scores 0)."""

    def compute(self, m, ctx):
        p, variant, depth = m.params["p"], m.params["variant"], m.params["depth"]
        key = ("rbo", depth)
        if key not in ctx.cache:
            s = self.setup
            profiles = {}
            order = [q for q in s.qids if q in s.ref_pos] + [q for q in s.ref_pos if q not in ctx.docs]
            for q in order:
                d = ctx.docs[q] if q in ctx.docs else run_docids(ctx.run, q)
                ref_len = s.ref_len[q] if depth is None else min(depth, s.ref_len[q])
                profiles[q] = overlap_profile(d if depth is None else d[:depth], s.ref_pos[q], ref_len)
            ctx.cache[key] = profiles
        vals = {q: float(rbo_from_profile(prof, p, variant)) for q, prof in ctx.cache[key].items()}
        return Result(vals, mean(vals.values()))


class QWV(Provider):
    """MATERIAL query-weighted value: AQWV at a cutoff or score threshold, MQWV over global cutoffs."""

    def _hits(self, ctx: RunContext, include_norel: bool, with_scores: bool = False) -> dict[str, QueryHits]:
        key = ("hits", include_norel, with_scores)
        if key not in ctx.cache:
            rel, n_total = self.setup.relevant, self.setup.collection_size
            out = {}
            for q, d in ctx.docs.items():
                if include_norel or rel[q]:
                    scores = [x[1] for x in ctx.run.ranking.get(q, ())] if with_scores else None
                    out[q] = query_hits(len(d), ctx.rank_scores[q], rel[q], n_total, scores)  # type: ignore[arg-type]
            ctx.cache[key] = out
        return ctx.cache[key]

    def compute(self, m, ctx):
        hits = self._hits(ctx, m.params["include_norel"], with_scores=m.params.get("threshold") is not None)
        _require_queries(m, hits)
        beta = m.params["beta"]
        if m.family == "mqwv":
            max_cutoff = m.params["max_cutoff"]
            if max_cutoff is None:
                max_cutoff = max(len(d) for d in ctx.docs.values())
            value, best, per_q = mqwv(list(hits.values()), max_cutoff, beta)
            return Result({q: float(v) for q, v in zip(hits, per_q)}, value, {"cutoff": best})
        thr = m.params["threshold"]
        if thr is not None:
            vals = {q: qwv_at_threshold(h, thr, beta) for q, h in hits.items()}
        else:
            vals = {q: qwv_at_cutoff(h, m.params["cutoff"], beta) for q, h in hits.items()}
        return Result(vals, mean(vals.values()))


class IRMeasures(Provider):
    """Measures of the ir_measures library that trec_eval's defaults do not give, computed by
    the ir_measures provider each measure names (its run is the same ``n - rank`` scores, so
    the ranking is the run order); a query missing from the run scores 0."""

    def __init__(self, setup, measures):
        super().__init__(setup, measures)
        ir_measures = lazylibs.ir_measures()
        qrels = {q: {d: int(r) for d, r in setup.judgements[q].items()} for q in setup.qids}
        self._evaluators = {
            m.name: ir_measures.providers.registry[m.via].evaluator([m.measure], qrels) for m in measures
        }

    def compute(self, m, ctx):
        run = {q: {d: float(s) for d, s in sc.items()} for q, sc in ctx.rank_scores.items() if sc}
        got = {r.query_id: float(r.value) for r in self._evaluators[m.name].iter_calc(run)}
        vals = {q: got.get(q, 0.0) for q in self.setup.qids}
        return Result(vals, mean(vals.values()))


def _require_queries(m: Measure, hits: Mapping[str, QueryHits]) -> None:
    if not hits:
        raise UserError(
            f"measure {m.name!r}: no query in the qrels has a relevant document, so there is nothing to average; "
            "check the qrels or use include_norel=true"
        )


PROVIDERS: dict[str, type[Provider]] = {"pytrec_eval": PytrecEval, "rbo": RBO, "qwv": QWV, "ir_measures": IRMeasures}
