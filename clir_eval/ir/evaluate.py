"""IR scoring stage: evaluate runs against fixed qrels for any list of measures, each computed by its provider.

Policy (the same for every measure)
    - Rankings are used in the run's list order (the order :func:`clir_eval.io.trec.read_run`
      keeps; sort with ``read_run(sort=True)`` for trec_eval's score-desc/docid-desc order).
      pytrec_eval is fed scores ``n - rank`` so it sees exactly that order (trec_eval stores
      float32 scores and re-sorts them, which would reorder near-ties).
    - The evaluated queries are the queries of the qrels (with at least one judgement, of
      any label). A qrels query absent from the run is scored with an empty ranking (0 for
      most measures; trec_eval ``-c`` semantics) and counts in the mean; run queries
      without qrels are ignored. RBO needs no judgements: it is averaged over the queries
      the reference run ranks documents for (a query missing from the run scores 0), whatever
      the qrels; its per-query values may therefore include queries without qrels.
    - AQWV/MQWV skip queries without relevant documents unless ``include_norel=true``
      (their per-query entries then lack the measure).
    - AQWV's default cutoff (10) is this project's choice, not a MATERIAL constant.
    - Per-query ``gm_map`` is trec_eval's ``log(max(AP, 1e-5))``; its aggregate is exp(mean).
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

from ..errors import UserError
from ..io.trec import Qrels, Run
from ..params import split_list
from .measures import Measure, parse_measure, parse_measures
from .providers import PROVIDERS, RunContext, Setup, run_docids


def _positive_int(value: Any) -> bool:
    """Whether ``value`` is a whole number >= 1 (5 or 5.0; not True, 1.5, 'abc' or inf)."""
    try:
        return not isinstance(value, (bool, str)) and int(value) == value and value >= 1
    except (TypeError, ValueError, OverflowError):
        return False


class Evaluator:
    """Scores runs against fixed qrels (and reference run / collection size) for many measures.

    Build once and call :meth:`evaluate` per run: each provider (the pytrec_eval evaluator,
    the reference positions) is prepared once.
    """

    def __init__(
        self,
        qrels: Qrels,
        measures: str | Iterable[str | Measure],
        *,
        reference_run: Run | None = None,
        collection_size: int | None = None,
    ):
        self.measures = parse_measures(measures)
        for m in self.measures:
            if m.needs_reference and reference_run is None:
                raise UserError(
                    f"measure {m.name!r} compares the run with a reference run; give --reference-run (the English-side run)"
                )
            if m.needs_collection_size and collection_size is None:
                raise UserError(f"measure {m.name!r} needs the collection size (number of documents); give --collection-size N")
        if collection_size is not None and not _positive_int(collection_size):
            raise UserError(f"collection size must be a positive integer, got {collection_size!r}")
        self.collection_size = None if collection_size is None else int(collection_size)
        qids = [q for q, j in qrels.judgements.items() if j]  # a query without any judgement is unknown
        if not qids:
            raise UserError("the qrels contain no judged queries; nothing to evaluate")
        setup = Setup(qids, qrels.judgements, {q: qrels.relevant(q) for q in qids}, self.collection_size)
        if self.collection_size is not None and any(m.needs_collection_size for m in self.measures):
            for q, rel in setup.relevant.items():
                if len(rel) >= self.collection_size:
                    raise UserError(
                        f"collection size {self.collection_size} is not larger than the {len(rel)} relevant documents of query {q!r}; give the number of documents in the collection"
                    )
        if reference_run is not None:
            for q in reference_run.qids():
                docs = reference_run.docids(q)
                pos = {d: j for j, d in enumerate(docs)}
                if len(pos) != len(docs):
                    raise UserError(f"reference run: a document appears twice for query {q!r}")
                if docs:
                    setup.ref_pos[q] = pos
                    setup.ref_len[q] = len(docs)
            if not setup.ref_pos and any(m.needs_reference for m in self.measures):
                raise UserError("the reference run ranks no document for any query; RBO has nothing to compare with")
        self._setup = setup
        by_provider: dict[str, list[Measure]] = {}
        for m in self.measures:
            by_provider.setdefault(m.provider, []).append(m)
        self._providers = {name: PROVIDERS[name](setup, ms) for name, ms in by_provider.items()}

    def signatures(self) -> dict[str, str]:
        out = {}
        for m in self.measures:
            sig = m.signature
            if m.needs_collection_size:
                sig += f"|ntotal:{self.collection_size}"
            out[m.name] = sig
        return out

    def _context(self, run: Run) -> RunContext:
        docs: dict[str, list[str]] = {}
        rank_scores: dict[str, dict[str, int]] = {}
        for q in self._setup.qids:
            d = docs[q] = run.docids(q)
            rank_scores[q] = dict(zip(d, range(len(d), 0, -1)))
            if len(rank_scores[q]) != len(d):  # a document twice: run_docids names it
                run_docids(run, q)
        return RunContext(run, docs, rank_scores)

    def evaluate(self, run: Run) -> dict[str, Any]:
        """Per-query values and aggregates for every measure (see the module policy)."""
        qids = self._setup.qids
        ctx = self._context(run)
        per_query: dict[str, dict[str, float]] = {q: {} for q in qids}
        aggregate: dict[str, float] = {}
        details: dict[str, Any] = {}
        for m in self.measures:
            res = self._providers[m.provider].compute(m, ctx)
            aggregate[m.name] = res.aggregate
            if res.details is not None:
                details[m.name] = res.details
            for q, v in res.per_query.items():
                per_query.setdefault(q, {})[m.name] = v
        judged = set(qids)
        run_only = sum(1 for q in run.ranking if q not in judged)
        missing = sum(1 for q in qids if not ctx.docs[q])
        out: dict[str, Any] = {
            "aggregate": aggregate,
            "per_query": per_query,
            "signatures": self.signatures(),
            "queries": {"evaluated": len(qids), "empty_or_missing_in_run": missing, "ignored_without_qrels": run_only},
        }
        if details:
            out["details"] = details
        return out


def evaluate(
    run: Run,
    qrels: Qrels,
    measures: str | Sequence[str | Measure],
    reference_run: Run | None = None,
    collection_size: int | None = None,
) -> dict[str, Any]:
    """Score one run: ``{"aggregate": {name: float}, "per_query": {qid: {name: float}},
    "signatures": {name: str}, "queries": {...}, "details": {"mqwv...": {"cutoff": k}}}``.

    For many runs against the same qrels, build one :class:`Evaluator` instead.
    """
    return Evaluator(qrels, measures, reference_run=reference_run, collection_size=collection_size).evaluate(run)


def check_scoreable(system: Run, judged: Qrels, run_name: str, qrels_name: str) -> None:
    """A run that ranks nothing, or only queries without judgements, would score 0 on every measure as if it
    had retrieved badly: refused instead (``run_name``: how the error names the run, e.g. ``--run FILE``)."""
    ranked = [q for q in system.qids() if system.docids(q)]
    if not ranked:
        raise UserError(f"{run_name}: the run has no ranked documents; give a run that retrieve (or another "
                        "system) wrote")
    judged_ids = set(judged.qids())
    if not any(q in judged_ids for q in ranked):
        shown = ", ".join(repr(q) for q in ranked[:3]) + (", ..." if len(ranked) > 3 else "")
        example = ", ".join(repr(q) for q in judged.qids()[:3])
        raise UserError(f"{run_name}: none of its {len(ranked)} queries ({shown}) is judged in {qrels_name} (whose "
                        f"queries are e.g. {example}); give the qrels of this run's topics")


def as_given(result: dict[str, Any], specs: str | Sequence[str]) -> dict[str, Any]:
    """``result`` (of :func:`evaluate`) keyed by the measure names as the user wrote them (``AP``, ``nDCG@10``),
    as ir_measures and ranx return them; the canonical name stays first in each signature. A measure given
    twice under two spellings (``map,AP``) is scored once, under the first."""
    given: dict[str, str] = {}
    for spec in (split_list(specs) if isinstance(specs, str) else [str(s) for s in specs]):
        given.setdefault(parse_measure(spec).name, spec)

    def rename(block: dict[str, Any]) -> dict[str, Any]:
        return {given.get(k, k): v for k, v in block.items()}

    out = dict(result)
    for key in ("aggregate", "signatures", "details"):
        if key in out:
            out[key] = rename(out[key])
    out["per_query"] = {q: rename(v) for q, v in result["per_query"].items()}
    return out

