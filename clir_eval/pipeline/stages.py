"""Stage functions: each runs one task (in a worker or in-process) and caches its output."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

from ..errors import UserError
from ..io.files import read_lines, safe_filename, write_json
from ..io.readers import DocumentStream, read_documents
from ..io.trec import Qrels, read_qrels, read_run, write_qrels, write_run
from ..ir.evaluate import evaluate
from ..ir.items import relevant_pairs, run_signals
from ..mt.base import build_metrics, collect_stats, load_metrics
from ..mt.items import item_scores, segment_scores
from ..mt.neural import neural_metrics, set_runtime
from ..mt.rates import slow_metric_warnings
from ..retrieval.analysis import get_analyzer
from ..retrieval.bm25 import build_with, load_index, streams
from .cache import Cache
from .shards import assemble, drop_entries, with_spans
from .tasks import (
    IndexTask,
    IRTask,
    ItemsTask,
    MTTask,
    QrelsTask,
    RetrieveTask,
    SegmentItemsTask,
    SegmentScoresTask,
    SystemTask,
    ids_checksum,
)


def mt_stage(task: MTTask, cache: Cache) -> dict:
    """Score one system's MT hypotheses: ``{metric: {"score", "signature"}}``. With
    ``task.segments``, the same statistics also give those metrics' per-segment scores, kept in an
    entry of their own (:func:`mt_segment_scores`)."""
    entry = cache.entry(task)
    cached = entry.load_json()
    if cached is not None:
        if task.segments:
            mt_segment_scores(task, cache)  # computed here when an earlier run did not ask for them
        return cached

    hyps, refs, src = mt_segments(task)
    metrics = build_metrics(task.mt.specs)
    set_runtime(metrics, **neural_runtime(task, cache, progress=False))
    stats = collect_stats(metrics, hyps, refs, sources=src)
    out = {m.name: {"score": (sc := m.score_stats(stats[m.name], len(refs))).score, "signature": sc.signature}
           for m in metrics}
    if task.segments:
        seg = cache.entry(_segment_items(task))
        if seg.load_json() is None:
            seg.save_json(segment_scores([m for m in metrics if m.name in task.segments], stats, len(refs)))
    entry.save_json(out)
    return out


def _segment_items(task: MTTask) -> SegmentItemsTask:
    return SegmentItemsTask(task.system, task, tuple(task.segments))


def mt_segment_scores(task: MTTask, cache: Cache) -> dict:
    """``{"scores": {metric: [score per segment]}, "signatures": {...}}`` of ``task.segments``
    (:func:`clir_eval.mt.items.segment_scores`): the entry the MT stage wrote, or computed here
    when that stage's output was cached before the segments were asked for."""
    entry = cache.entry(_segment_items(task))
    cached = entry.load_json()
    if cached is not None:
        return cached

    hyps, refs, src = mt_segments(task)
    metrics = [m for m in build_metrics(task.mt.specs) if m.name in task.segments]
    set_runtime(metrics, **neural_runtime(task, cache, progress=False))
    out = segment_scores(metrics, collect_stats(metrics, hyps, refs, sources=src), len(refs))
    entry.save_json(out)
    return out


def mt_segments(task: MTTask) -> tuple[list[str], list[list[str]], list[str] | None]:
    """The hypotheses, reference streams and source (None without one) of an MT task, line-aligned."""
    hyps = read_lines(task.hyp)
    refs = [read_lines(r) for r in task.mt.refs]
    src = read_lines(task.mt.source) if task.mt.source else None
    for what, path, lines in [*(("reference", r, x) for r, x in zip(task.mt.refs, refs)),
                              *([("source", task.mt.source, src)] if src is not None else [])]:
        if len(lines) != len(hyps):
            raise UserError(misaligned(task.system, task.hyp, len(hyps), what, path, len(lines)))
    return hyps, refs, src


def misaligned(system: str, hyp: str, n_hyp: int, what: str, path: str, n: int) -> str:
    """The error of an MT file not line-aligned with a system's hypotheses (run and validate give it)."""
    return (f"system {system}: hypothesis {hyp} has {n_hyp} lines but {what} {path} has {n}; MT files must be "
            "line-aligned")


class SegmentStore:
    """Neural metrics' segment scores as verified cache entries (``SegmentScoresTask``)."""

    def __init__(self, cache: Cache):
        self.cache = cache

    def _entry(self, key: dict):
        return self.cache.entry(SegmentScoresTask(str(key.get("metric")), json.dumps(key, sort_keys=True)))

    def load(self, key: dict) -> list[float] | None:
        got = self._entry(key).load_json()
        ok = isinstance(got, list) and len(got) == key.get("n") and all(isinstance(x, float) for x in got)
        return got if ok else None

    def save(self, key: dict, scores: list[float]) -> None:
        self._entry(key).save_json(scores)

    def _hashes(self, root: str):
        return self.cache.entry(SegmentScoresTask("checkpoint-files", json.dumps({"root": root})))

    def load_file_hashes(self, root: str) -> list | None:
        """The (path, size, mtime ns, inode, SHA-1) rows of a checkpoint's files hashed by an earlier
        process (``mt.neural.checkpoint_hash``), or None."""
        got = self._hashes(root).load_json()
        return got if isinstance(got, list) else None

    def save_file_hashes(self, root: str, rows: list) -> None:
        self._hashes(root).save_json(rows)


def neural_runtime(task: MTTask, cache: Cache, progress: bool) -> dict:
    """The neural metrics' runtime settings of an MT task: device, batch size, the run's segment store."""
    return {"device": task.mt.device, "batch_size": task.mt.batch_size, "store": SegmentStore(cache), "progress": progress}


def neural_prepass(tasks: list[MTTask | None], cache: Cache, progress: bool) -> bool:
    """Score every system's segments with each neural metric in this process before the systems run:
    one model load and one progress bar per metric for the whole run, and the workers' MT stage
    then finds the scores in the store. Systems whose MT entry is cached are skipped, so a cached
    re-run loads no model. True when there was something to score."""
    todo = [t for t in tasks if t is not None and not cache.child().entry(t).verified("json")]  # notes: the MT stage's
    if not todo:
        return False
    metrics = neural_metrics(build_metrics(todo[0].mt.specs))
    if not metrics:
        return False
    items = [mt_segments(t) for t in todo]
    for m in metrics:
        if m.uses_source and any(s is None for _, _, s in items):
            continue  # the MT stage says that the source is missing
        set_runtime([m], **neural_runtime(todo[0], cache, progress))
        m.fill(items)
    return True


# Saved as verified arrays; for rank_bm25 its postings, from which rank-bm25 itself
# re-initialises its model on load (no re-tokenising).
CACHED_INDEX_BACKENDS = ("sparse", "rank_bm25")


def _build(task: IndexTask):
    s = task.settings
    if streams(s.backend):  # texts read batch by batch while indexing, none held
        docs = DocumentStream(task.docs, fmt=task.format)
        idx = build_with(docs, get_analyzer(s.analyzer, stopwords=s.stopwords, stem=s.stem, language=s.language), s)
        n_empty = docs.n_empty
    else:
        docs = read_documents(task.docs, fmt=task.format)
        idx = build_with(docs, get_analyzer(s.analyzer, stopwords=s.stopwords, stem=s.stem, language=s.language), s)
        n_empty = sum(1 for t in docs.texts if not t.strip())
    meta = {
        "signature": idx.signature,
        "n_docs": len(docs),
        "n_empty_docs": n_empty,
        "ids_checksum": ids_checksum(docs.ids),
    }
    return idx, meta


def index_stage(task: IndexTask, cache: Cache):
    """The collection's BM25 index and its metadata, loaded from the cache or built and saved there;
    ``meta["cached"]`` says which. The entry is the index directory (verified by its own
    ``index.json`` checksums and the signature) plus a sealed ``meta.json``; a damaged one is
    rebuilt with a note."""
    entry = cache.entry(task)
    d = entry.path("index")
    if task.settings.backend in CACHED_INDEX_BACKENDS and entry.verified("json"):
        try:
            meta = json.loads(entry.path("json").read_text(encoding="utf-8"))["value"]
            return load_index(d, meta["signature"]), {**meta, "cached": True}
        except (UserError, KeyError, TypeError, ValueError) as e:
            entry.failed(str(e))
    entry.unseal()
    task = with_spans(task)
    if task.shards:  # spans indexed by their own tasks (pipeline/shards.py), or one by one here: merge them
        idx, meta = assemble(task, cache)
    else:
        idx, meta = _build(task)
    if task.settings.backend in CACHED_INDEX_BACKENDS:
        idx.save(d)
        write_json(entry.path("json"), {"cache_key": entry.key, "value": meta})
        entry.seal("json")  # written last: marks the entry complete
        if task.shards:
            drop_entries(task, cache)
    return idx, {**meta, "cached": False}


def check_same_ids(task: RetrieveTask, got: str | None, english: str, english_ids) -> None:
    """A system's collection must have the English side's ids; ``got`` and ``english`` are their
    :func:`ids_checksum` (the ids are read only to name a difference, or when ``got`` is unknown)."""
    if got == english:
        return

    why = ids_differ(task.system, task.docs, read_documents(task.docs, fmt=task.format).ids, english_ids)
    if why:
        raise UserError(why)


def ids_differ(system: str, docs: str, ids, english_ids) -> str | None:
    """The error of a system's collection whose document ids are not the English side's (run and validate give
    it); None when they are the same set."""
    have, want = set(ids), set(english_ids)
    missing, extra = sorted(want - have), sorted(have - want)
    if not missing and not extra:
        return None
    what = f"missing {len(missing)} id(s), e.g. {missing[0]!r}" if missing else f"{len(extra)} unknown id(s), e.g. {extra[0]!r}"
    return (f"system {system}: documents {docs} do not have the English side's ids ({what}); every system must "
            "translate every document (keep empty translations as empty documents)")


def run_file(task: RetrieveTask, cache: Cache) -> Path:
    """The TREC run file of a retrieval task (verified by :func:`retrieve_stage`)."""
    return cache.entry(task).path("run")


def retrieve_stage(task: RetrieveTask, cache: Cache) -> dict:
    """Search one collection's (cached) index with the queries, write the TREC run; return its metadata."""
    entry = cache.entry(task)
    if entry.verified("run", "json"):
        return json.loads(entry.path("json").read_text(encoding="utf-8"))
    entry.unseal()
    t0 = time.perf_counter()
    idx, imeta = index_stage(task.index, cache)
    t1 = time.perf_counter()
    run = idx.search(dict(task.queries), depth=task.retrieval.depth)
    t2 = time.perf_counter()
    write_run(entry.path("run"), run, tag=safe_filename(task.system))
    meta = {
        "signature": imeta["signature"],
        "n_docs": imeta["n_docs"],
        "n_empty_docs": imeta["n_empty_docs"],
        "ids_checksum": imeta["ids_checksum"],
        "doc_ids": list(idx.docids) if task.want_ids else None,
        "index_cached": imeta["cached"],
        "time_index": t1 - t0,
        "time_search": t2 - t1,
    }
    write_json(entry.path("json"), meta)
    entry.seal("run", "json")
    return meta


def qrels_stage(task: QrelsTask, cache: Cache) -> str:
    """Write the judgements as a TREC qrels file (once); return its path."""
    entry = cache.entry(task)
    if not entry.verified("txt"):
        entry.unseal()
        write_qrels(entry.path("txt"), Qrels({q: dict(docs) for q, docs in task.judgements}))
        entry.seal("txt")
    return str(entry.path("txt"))


def ir_stage(task: IRTask, cache: Cache) -> dict:
    """Evaluate one run: ``{"aggregate", "per_query", "signatures"}``."""
    entry = cache.entry(task)
    cached = entry.load_json()
    if cached is not None:
        return cached

    run = read_run(run_file(task.run, cache))
    qrels = read_qrels(task.qrels)
    ref = read_run(run_file(task.reference, cache)) if task.reference is not None else None
    res = evaluate(run, qrels, list(task.ir.parsed), reference_run=ref, collection_size=task.ir.collection_size)
    out = {"aggregate": res["aggregate"], "per_query": res["per_query"], "signatures": res.get("signatures", {})}
    entry.save_json(out)
    return out


def items_stage(task: ItemsTask, cache: Cache) -> dict:
    """Item-level scores of one system (:class:`ItemsTask`): ``{"documents": [id, ...], "mt":
    {metric: [score per document]}, "signatures": {metric: str}, "pairs", "rank", "rr",
    "retrievability"}``; the documents are those some query judges relevant, in id order."""
    entry = cache.entry(task)
    cached = entry.load_json()
    if cached is not None:
        return cached

    qrels = read_qrels(task.qrels)
    signals = run_signals(read_run(run_file(task.run, cache), sort=True), qrels)
    wanted = sorted(signals["retrievability"])
    out: dict[str, Any] = {"documents": wanted, "mt": {}, "signatures": {}}
    if task.metrics:
        hyp = _texts(read_documents(task.docs, fmt=task.format), wanted)
        ref = _texts(read_documents(task.english, fmt=task.format), wanted)
        out["mt"], out["signatures"] = item_scores(list(task.metrics), hyp, [ref], task.tokenize, task.lowercase)
    if task.neural:
        segmented = task.segments is not None and task.seg_docids is not None
        scores, sigs = (neural_document_scores if segmented else neural_line_scores)(task, cache, wanted)
        out["mt"].update(scores)
        out["signatures"].update(sigs)
    out.update(signals)
    entry.save_json(out)
    return out


def neural_document_scores(task: ItemsTask, cache: Cache, docs: list[str]) -> tuple[dict, dict]:
    """Each neural metric's score of each of ``docs``: the mean of the scores of the document's MT
    test-set segments (``task.seg_docids`` names each segment's document), read from the segment
    store the MT stage fills (the model is loaded only for segments the store lacks); None for a
    document without segments there."""
    assert task.segments is not None and task.seg_docids is not None
    hyps, refs, src = mt_segments(task.segments)
    seg_docs = read_lines(task.seg_docids)
    if len(seg_docs) != len(hyps):
        raise UserError(f"system {task.system}: {task.seg_docids} names {len(seg_docs)} segments' documents but "
                        f"the hypothesis {task.segments.hyp} has {len(hyps)} lines; delete the run's cache/sources")
    rows: dict[str, list[int]] = {}
    for i, d in enumerate(seg_docs):
        rows.setdefault(d, []).append(i)
    metrics = build_metrics(task.segments.mt.specs_for(task.neural))
    set_runtime(metrics, **neural_runtime(task.segments, cache, progress=False))
    scores, sigs = {}, {}
    for m in metrics:
        seg = m.segment_stats(hyps, refs, sources=src)[:, 0]
        scores[m.name] = [float(seg[rows[d]].mean()) if d in rows else None for d in docs]
        sigs[m.name] = m.signature(len(refs)) + "|doc:mean-of-segments"
    return scores, sigs


def collection_lines(task: ItemsTask, docs: list[str]) -> tuple[list[str], list[str], dict[str, list[int]]]:
    """The aligned lines of ``docs``: (system lines, English lines, document -> its line numbers).
    A document whose text has as many lines in the system's collection as on the English side
    contributes them, line i against line i; a document whose line counts differ has none."""
    hyp = _texts(read_documents(task.docs, fmt=task.format), docs)
    ref = _texts(read_documents(task.english, fmt=task.format), docs)
    hyps: list[str] = []
    refs: list[str] = []
    rows: dict[str, list[int]] = {}
    for d, h, r in zip(docs, hyp, ref):
        hl, rl = h.split("\n"), r.split("\n")
        if len(hl) == len(rl):
            rows[d] = list(range(len(hyps), len(hyps) + len(hl)))
            hyps += hl
            refs += rl
    return hyps, refs, rows


def judged_documents(qrels: str) -> list[str]:
    """The documents some query judges relevant, in id order (the item-level documents)."""
    return sorted({d for _, d in relevant_pairs(read_qrels(qrels))})


def neural_line_scores(task: ItemsTask, cache: Cache, docs: list[str]) -> tuple[dict, dict]:
    """Each neural metric's score of each of ``docs``: the mean of the scores of its lines against
    the English side's lines (:func:`collection_lines`), from the segment store where
    :func:`neural_items_prepass` put them; None for a document whose line counts differ."""
    hyps, refs, rows = collection_lines(task, docs)
    metrics = load_metrics(list(task.neural), task.tokenize, task.lowercase)
    set_runtime(metrics, device=task.device, batch_size=task.batch_size, store=SegmentStore(cache), progress=False)
    scores, sigs = {}, {}
    for m in metrics:
        seg = m.segment_stats(hyps, [refs])[:, 0] if hyps else np.zeros(0)
        scores[m.name] = [float(seg[rows[d]].mean()) if d in rows else None for d in docs]
        sigs[m.name] = m.signature(1) + "|doc:mean-of-lines"
    return scores, sigs


def neural_items_prepass(tasks: list[ItemsTask], cache: Cache, progress: Any = None,
                         log: Callable[[str], None] | None = None) -> None:
    """Score the aligned lines of every system's item-level documents with each neural metric in
    this process before the items stage runs (one model load per metric, a row with ETA in the
    run's ``progress`` display); the workers' items stage then reads the scores from the store.
    Cached systems are skipped. Before a long job, a warning with its estimated CPU through ``log``."""
    todo = [t for t in tasks if t.neural and t.seg_docids is None and not cache.child().entry(t).verified("json")]
    if not todo:
        return
    docs = judged_documents(todo[0].qrels)
    items = []
    for t in todo:
        hyps, refs, _ = collection_lines(t, docs)
        if hyps:
            items.append((hyps, [refs], None))
    store = SegmentStore(cache)
    for m in neural_metrics(load_metrics(list(todo[0].neural), todo[0].tokenize, todo[0].lowercase)):
        set_runtime([m], device=todo[0].device, batch_size=todo[0].batch_size, store=store,
                    progress=False, display=_rows(progress))
        missing = [len(h) for h, refs, _ in items if store.load(m.key(h, refs[0], None)) is None]
        for w in slow_metric_warnings({m.name: missing}, 1, todo[0].device) if log is not None else []:
            log(f"item level, judged documents' lines: {w.replace('out of mt.metrics', 'out of item_level.metrics')}")
        m.fill(items)


def _rows(progress: Any):
    """(label, total) -> advance(n) on a new row of the run's progress display (None when it is off)."""
    def make(label: str, total: int):
        stage = progress.stage(f"{label}: item-level segments", total) if progress is not None else None
        return None if stage is None else (lambda n: [stage() for _ in range(n)] and None)
    return make


def _texts(docs, ids: list[str]) -> list[str]:
    pos = {d: i for i, d in enumerate(docs.ids)}
    return [docs.texts[pos[d]] for d in ids]


def system_stage(task: SystemTask, cache: Cache) -> dict[str, Any]:
    """MT, retrieval and IR for one system, with the time each took and the cache's notes."""
    cache = cache.child()
    t0 = time.perf_counter()
    out: dict[str, Any] = {"system": task.system}
    if task.mt is not None:
        out["mt"] = mt_stage(task.mt, cache)
    t1 = time.perf_counter()
    if task.retrieve is not None:
        out["retrieve"] = retrieve_stage(task.retrieve, cache)
    t2 = time.perf_counter()
    if task.ir is not None:
        out["ir"] = ir_stage(task.ir, cache)
    t3 = time.perf_counter()
    out["times"] = {"mt": t1 - t0, "retrieve": t2 - t1, "ir": t3 - t2}
    out["notes"] = cache.notes
    return out
