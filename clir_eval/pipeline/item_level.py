"""The item-level part of a run: per-system item scores (:func:`.stages.items_stage`, through the
executor), then the documents and queries matrices and their correlations
(:mod:`clir_eval.correlation.items`) as results.json's ``item_level`` block."""

from __future__ import annotations

import dataclasses
import functools
from collections import Counter
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

import numpy as np

from ..config.schema import Config
from ..correlation.items import (
    GROUPINGS,
    ITEM_PROCEDURE,
    VERDICT_GROUPING,
    ItemMatrix,
    ItemSettings,
    distinct_analyses,
    finish_rows,
    finish_verdicts,
    plan_rows,
    plan_verdicts,
    repeated_rows,
    run_jobs,
)
from ..correlation.settings import CI_LEVEL
from ..io.files import safe_filename, text_checksum
from ..io.item_matrix import documents_file, queries_file
from ..io.trec import read_qrels, read_run
from ..ir.items import query_docs, relevant_pairs, run_signals
from ..mt.neural import NeuralMetric
from ..sources.item_tables import item_arrays, missing_note
from ..sources.query_translation import write_queries
from .cache import Cache
from .executor import Executor
from .inputs import Resolved
from .stages import items_stage, mt_segment_scores, run_file
from .tasks import EnglishSide, ItemLevelTask, ItemsTask, SystemTask

if TYPE_CHECKING:
    from ..mt.base import MetricSpec

TARGET_DOCS = "retrievability"


def item_metric_names(cfg: Config, segmented: bool = False) -> tuple[list[str], list[MetricSpec], list[str]]:
    """(metrics scored per item from statistics, neural metrics scored per document as the mean of
    its segments' scores, the metrics left out). The segments are the MT test set's when
    ``segmented`` (the segments' documents are known), else the document's lines against the
    English side's lines: then a metric that reads the source (COMET) is left out."""
    if cfg.mt is None:
        return [], [], []

    specs = item_specs(cfg)
    distinct: dict[str, MetricSpec] = {}  # the first spec of each canonical name, in order
    for m in specs:
        distinct.setdefault(m.name, m)
    neural = [m for m in specs if issubclass(m.kind, NeuralMetric) and (segmented or not m.uses_source)]
    names = {m.name for m in neural}
    return ([m.name for m in distinct.values() if m.item_level], neural,
            [m.name for m in distinct.values() if not m.item_level and m.name not in names])


def item_specs(cfg: Config) -> tuple[MetricSpec, ...]:
    """The parsed specs of ``item_level.metrics`` (default: ``mt.metrics``), one per entry as written."""
    return cfg.mt.specs_for(cfg.item_level.metrics or cfg.mt.metrics)


SEGMENTS_FILE = "item_segments.tsv"


def segment_metrics(cfg: Config) -> tuple[str, ...]:
    """The metrics scored per segment of the MT test set when item level is on: those that score an
    item from its statistics and the neural metrics (their statistics are segment scores), limited
    to ``item_level.metrics`` when given (canonical names)."""
    if cfg.mt is None or not cfg.item_level.enabled:
        return ()

    wanted = {m.name for m in item_specs(cfg)} if cfg.item_level.metrics else None
    names = [m.name for m in cfg.mt.specs
             if (m.item_level or issubclass(m.kind, NeuralMetric)) and (wanted is None or m.name in wanted)]
    return tuple(dict.fromkeys(names))


def segments_table(tasks: Sequence[SystemTask], cache: Cache, docids: Sequence[str] | None) -> tuple[str, dict] | None:
    """The per-segment table (``item_segments.tsv``: columns ``system``, ``segment`` (the 1-based
    line of the MT test set), ``document`` where the source names each segment's document, then one
    per metric; an empty cell where a score is not finite) and results.json's ``item_segments``
    block (the file, its shape, each metric's signature), or None without segment scores."""
    got = [(t.system, mt_segment_scores(t.mt, cache)) for t in tasks if t.mt is not None and t.mt.segments]
    if not got:
        return None
    metrics = list(got[0][1]["scores"])
    lines = ["\t".join(["system", "segment", *(["document"] if docids is not None else []), *metrics])]
    n = 0
    for system, d in got:
        cols = [d["scores"][m] for m in metrics]
        n = len(cols[0]) if cols else 0
        for i in range(n):
            doc = [docids[i]] if docids is not None else []
            lines.append("\t".join([system, str(i + 1), *doc, *("" if c[i] is None else repr(c[i]) for c in cols)]))
    block = {"file": SEGMENTS_FILE, "systems": [s for s, _ in got], "segments": n, "metrics": metrics,
             "signatures": dict(got[0][1]["signatures"]), "documents": docids is not None}
    return "\n".join(lines) + "\n", block


def segmented(res: Resolved) -> bool:
    """Whether the MT test set's lines carry their documents (a WMT XML source)."""
    return res.mt_docids is not None and bool(res.mt_refs)


def skip_reason(cfg: Config, res: Resolved, english: EnglishSide | None) -> str | None:
    if not cfg.item_level.enabled:
        return "item_level: off in the config"
    if english is None or res.english is None:
        return "no collection with an English side: item level needs one"
    if cfg.mt is None:
        return "no mt section: item level needs MT metrics to score each document"
    if cfg.query_translation and known_items(read_qrels(english.qrels)) is None:
        return ("query translation: the items are the queries, each scored by its translation's MT scores, which "
                "needs known-item relevance (one relevant document per query, a different one for each query); "
                "this run's relevance judges otherwise")
    return None


def known_items(qrels) -> dict[str, str] | None:
    """``{document: query}`` when every judged query has one relevant document and no two share it, else None."""
    out: dict[str, str] = {}
    for q, d in query_docs(relevant_pairs(qrels)).items():
        if len(d) != 1 or d[0] in out:
            return None
        out[d[0]] = q
    return out


def query_item_docs(res: Resolved, english: EnglishSide, tasks: Sequence[SystemTask],
                    cache: Cache) -> tuple[str, dict[str, str]]:  # fmt: skip
    """Query translation: the items are the queries, written as documents for the items stage (each judged
    document's text is its query's translation), so a document's MT scores are its query translation's: (the
    reference side's file, {system: its file}), JSONL under ``cache/sources/qt-items/``."""
    items = known_items(read_qrels(english.qrels))
    assert items is not None  # skip_reason said otherwise
    d = cache.root / "sources" / "qt-items"
    d.mkdir(parents=True, exist_ok=True)

    def write(name: str, queries: Mapping[str, str]) -> str:
        texts = {doc: queries.get(q, "") for doc, q in items.items()}
        return write_queries(d / f"{safe_filename(name)}-{text_checksum(*texts, *texts.values())[:12]}.jsonl", texts)

    return write("reference", res.queries), {t.system: write(t.system, dict(t.retrieve.queries))
                                             for t in tasks if t.retrieve is not None}


def items_tasks(cfg: Config, res: Resolved, english: EnglishSide, tasks: Sequence[SystemTask],
                cache: Cache | None = None) -> list[ItemsTask]:
    """Each system's items task; query translation (``cache`` given) scores each judged document by its query's
    translation (:func:`query_item_docs`)."""
    seg = segmented(res)
    names, neural, _ = item_metric_names(cfg, seg)
    ref_docs, docs, fmt = res.english, {t.system: t.retrieve.docs for t in tasks if t.retrieve is not None}, res.doc_format
    if cfg.query_translation and cache is not None:
        (ref_docs, docs), fmt = query_item_docs(res, english, tasks, cache), "jsonl"
    return [ItemsTask(system=t.system, docs=docs[t.system], english=ref_docs, format=fmt,
                      metrics=tuple(names), tokenize=cfg.mt.tokenize, lowercase=cfg.mt.lowercase,
                      run=t.retrieve, qrels=english.qrels,
                      neural=tuple(m.spec for m in neural) if t.mt is not None or not seg else (),
                      segments=t.mt if neural and seg else None, seg_docids=res.mt_docids if neural and seg else None,
                      device=cfg.mt.device, batch_size=cfg.mt.batch_size)
            for t in tasks if t.retrieve is not None]  # fmt: skip


def run_items(ex: Executor, tasks: list[ItemsTask], cache: Cache, on_done: Callable[[], None] | None) -> list[dict]:
    return ex.map(functools.partial(items_stage, cache=cache), tasks, on_done)


def english_signals(english: EnglishSide, cache: Cache) -> dict:
    return run_signals(read_run(run_file(english.run, cache), sort=True), read_qrels(english.qrels))


def matrices(outputs: Sequence[Mapping[str, Any]], systems: Sequence[str], sys_results: Mapping[str, Any],
             ir_measures: Sequence[str], ext=None):  # fmt: skip
    """The documents and queries :class:`~clir_eval.correlation.items.ItemMatrix` of the systems' item outputs;
    ``ext`` (:class:`~clir_eval.sources.item_tables.ExternalItems`): external per-document MT scores joined
    beside the registry metrics."""
    docs = tuple(outputs[0]["documents"])
    metrics = list(outputs[0]["mt"])
    x_docs = {m: np.array([o["mt"][m] for o in outputs], float) for m in metrics}
    if ext is not None:
        x_docs.update(item_arrays(ext, systems, docs))
        metrics = list(x_docs)
    y_docs = {TARGET_DOCS: np.array([[o["retrievability"][d] for d in docs] for o in outputs], float)}
    doc_mat = ItemMatrix("documents", tuple(systems), docs, x_docs, y_docs)
    qd = query_docs(outputs[0]["pairs"])
    qids = tuple(qd)
    pos = {d: i for i, d in enumerate(docs)}
    cols = [[pos[d] for d in qd[q]] for q in qids]
    x_q = {m: np.array([[_mean(x_docs[m][si, c]) for c in cols] for si in range(len(systems))])
           for m in metrics}

    def pq(s: str, q: str, y: str) -> float:
        v = (sys_results[s].get("ir_per_query") or {}).get(q, {}).get(y)
        return np.nan if v is None else float(v)

    y_q = {y: np.array([[pq(s, q, y) for q in qids] for s in systems], float) for y in ir_measures}
    y_q = {y: m for y, m in y_q.items() if not np.isnan(m).all()}
    return doc_mat, ItemMatrix("queries", tuple(systems), qids, x_q, y_q)


def _mean(v: np.ndarray) -> float:
    """Mean of the scored values (a document without segment scores is missing, not 0)."""
    v = v[~np.isnan(v)]
    return float(np.mean(v)) if v.size else np.nan


def item_correlations(mats: Sequence[Any], s: Any, seed: int, lower: Sequence[str], cache: Cache | None = None,
                      map: Callable | None = None) -> dict[str, Any]:  # fmt: skip
    """``{"correlations": rows, "verdicts": [...], "same": [...]}`` of the documents and queries matrices; an
    analysis that repeats an earlier one is computed once and copied
    (:func:`~clir_eval.correlation.items.distinct_analyses`, listed in ``same``). Every
    row's draws and every PERM-BOTH pair are one job, all through ``map`` (an executor's) at once;
    cached (:class:`ItemLevelTask`) when ``cache`` is given. Each job seeds its own generator
    (documents' rows ``[seed, i]``, queries' ``[seed + 1, i]``, pairs ``[seed + 2, i]``), so
    results never depend on where the jobs ran."""
    entry = None
    if cache is not None:
        entry = cache.entry(ItemLevelTask(
            matrices={m.items: {"systems": list(m.systems), "ids": list(m.ids),
                                "x": {k: v.tolist() for k, v in m.x.items()},
                                "y": {k: v.tolist() for k, v in m.y.items()}} for m in mats},
            settings=dataclasses.asdict(s), lower=tuple(lower), procedure=ITEM_PROCEDURE))
        cached = entry.load_json()
        if cached is not None:
            return cached
    distinct, same = distinct_analyses(mats)
    planned = [plan_rows(m, s, seed + k) for k, m in enumerate(distinct)]
    rows = [r for rs, _ in planned for r in rs]
    plan, vjobs = plan_verdicts(distinct, rows, lower, s, seed + len(mats)) if s.permutation > 0 else (None, [])
    results = run_jobs([j for _, js in planned for j in js] + vjobs, map)
    at = 0
    for rs, js in planned:
        finish_rows(rs, js, results[at:at + len(js)], s)
        at += len(js)
    verdicts = finish_verdicts(plan, vjobs, results[at:], rows, lower, s, map) if plan is not None else []
    rows, verdicts = repeated_rows(rows, verdicts, mats, same, lower, s)
    out = {"correlations": rows, "verdicts": verdicts,
           "same": [{"items": k[0], "target": k[1], "same_as": {"items": v[0], "target": v[1]}} for k, v in same.items()]}
    if entry is not None:
        entry.save_json(out)
    return out


def run_item_settings(cfg: Config) -> ItemSettings:
    """A run's item-level statistics: the ``correlation:`` section's, but the ``item_level:`` section's bootstrap
    draws (those of the descriptive ``ci_items``/``ci_systems``; 0, none, unless set) and permutation setting
    (null, the default: correlation's)."""
    cc, il = cfg.correlation, cfg.item_level
    return ItemSettings(cc.method, cc.variant, cc.alpha, il.bootstrap,
                        cc.permutation if il.permutation is None else il.permutation, cc.seed, CI_LEVEL, cc.correction,
                        cc.family, cc.resolution)


def item_level_block(cfg: Config, outputs: Sequence[Mapping[str, Any]], systems: Sequence[str],
                     sys_results: Mapping[str, Any], ir_measures: Sequence[str], english: Mapping[str, Any],
                     lower: Sequence[str], cache: Cache | None = None,
                     mapper: Callable | None = None, ext=None) -> tuple[dict[str, Any], dict[str, str]]:  # fmt: skip
    """results.json's ``item_level`` block, its correlations from :func:`item_correlations`, and the files
    for the run directory (name -> text): the documents and queries matrices (:mod:`clir_eval.io.item_matrix`),
    which the block names with their sha256."""
    cc = cfg.correlation
    s = run_item_settings(cfg)
    doc_mat, q_mat = matrices(outputs, systems, sys_results, ir_measures, ext)
    scored = set(outputs[0]["mt"]) if outputs else set()
    _, neural, left_out = item_metric_names(cfg, segmented=True)
    notes = [f"{m}: not scored per item (it needs a model or the whole corpus)" for m in left_out]
    for m in neural:
        notes.append(_neural_note(m, outputs, doc_mat) if m.name in scored else
                     f"{m.name}: not scored per document (it reads each segment's source, which only a WMT XML "
                     "source gives with the MT test set's document boundaries)" if m.uses_source else
                     f"{m.name}: not scored per document")
    notes += _external_notes(ext, doc_mat)
    notes.append("groupings none and system are descriptive (no p-value): none mixes item difficulty with translation "
                 "quality (an easy item is easy for every system), system mostly reflects which items are easy; item "
                 "mixes the systems' overall quality (as many independent units as systems) with the within-item part; "
                 "within (each system's scores minus its own mean) is the part item level adds: on which items a "
                 "system does worse than its own average")
    corr = item_correlations([doc_mat, q_mat], s, cc.seed, lower, cache, mapper)
    rows, verdicts = corr["correlations"], corr["verdicts"]
    notes += [f"{d['target']} over {d['items']}: the same (system, item) values as {d['same_as']['target']} over "
              f"{d['same_as']['items']} (up to the order of the items, e.g. one relevant document per query); its rows "
              "and verdict repeat that analysis's (marked same_as) and its tests count once in the family"
              for d in corr.get("same", [])]
    rr_eng = dict(zip(map(tuple, english["pairs"]), english["rr"]))
    signals = {}
    for name, o in zip(systems, outputs):
        drops = [rr_eng[tuple(p)] - v for p, v in zip(o["pairs"], o["rr"])]
        signals[name] = {"mean_rr": float(np.mean(o["rr"])) if o["rr"] else None,
                         "mean_rr_drop": float(np.mean(drops)) if drops else None,
                         "pairs_not_retrieved": sum(1 for r in o["rank"] if r is None)}
    documents_file, files = _documents_file(doc_mat, outputs, len(q_mat.ids))
    q_text, q_entry = queries_file(q_mat.systems, q_mat.ids, q_mat.x, q_mat.y)
    files[q_entry["file"]] = q_text
    return {
        "items": {"documents": {"n": len(doc_mat.ids), "what": "documents some query judges relevant",
                                "targets": list(doc_mat.y)},
                  "queries": {"n": len(q_mat.ids), "what": "queries with at least one relevant document",
                              "targets": list(q_mat.y)}},
        "metrics": list(doc_mat.x), "signatures": {**outputs[0]["signatures"], **(ext.signatures if ext else {})},
        "systems": list(systems),
        "groupings": list(GROUPINGS), "verdict_grouping": VERDICT_GROUPING,
        "settings": {"method": s.method, "variant": s.variant, "alpha": s.alpha, "bootstrap": s.bootstrap,
                     "permutation": s.permutation, "seed": cc.seed, "level": s.level, "correction": s.correction,
                     "family": s.family, "resolution": s.resolution,
                     "ties": _ties(s)},
        "english": {"mean_rr": float(np.mean(english["rr"])) if english["rr"] else None, "pairs": len(english["pairs"])},
        "signals": signals,
        "correlations": rows,
        "verdicts": verdicts,
        "notes": notes,
        "documents_file": documents_file,
        "queries_file": q_entry,
    }, files


def _documents_file(doc_mat, outputs: Sequence[Mapping[str, Any]], n_queries: int) -> tuple[dict, dict[str, str]]:
    per_doc = Counter(d for _, d in outputs[0]["pairs"])
    text, entry = documents_file(doc_mat.systems, doc_mat.ids, doc_mat.x, doc_mat.y,
                                 [per_doc[d] for d in doc_mat.ids], n_queries)
    return entry, {entry["file"]: text}


def _external_notes(ext, doc_mat) -> list[str]:
    if ext is None:
        return []

    return [*ext.notes, *filter(None, (missing_note(n, doc_mat.x[n]) for n in ext.scores))]


def _neural_note(m, outputs: Sequence[Mapping[str, Any]], doc_mat) -> str:
    if outputs[0]["signatures"][m.name].endswith("|doc:mean-of-segments"):
        return (f"{m.name}: a document's score is the mean of its MT test-set segments' scores (as the library "
                "averages segments to a system score)")
    missing = int(np.isnan(doc_mat.x[m.name]).any(axis=0).sum())
    return (f"{m.name}: a document's score is the mean of its lines' scores against the English side's lines "
            f"(line i against line i; as the library averages segments to a system score); {missing} of "
            f"{len(doc_mat.ids)} documents have a different number of lines than the English side in at least one "
            "system and are missing cells there")


def _ties(s) -> str:
    if s.method != "kendall":
        return f"{s.method}: average ranks for ties" if s.method == "spearman" else "pearson: values as they are"
    return {"b": "τ-b: ties in either variable reduce the denominator (sqrt((P - Tx)(P - Ty)))",
            "c": "τ-c (Stuart): for non-square tables, min(distinct values) in the denominator",
            "acc23": "acc23: pairs tied in both count as agreement, pairs tied in one as disagreement"}[s.variant]
