"""The experiment driver: wires the stages (inputs -> English side -> systems -> external
scores -> correlations -> reports) and writes results.json.

Every stage caches its output under ``OUT/cache/<stage>/`` keyed by :func:`cache.cache_key`
(inputs' content checksums + every setting + tool versions), written atomically, so a
re-run skips finished work, a changed setting recomputes only what it affects, and a run
killed at any moment and restarted ends with the same results.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import sys
import time
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any, Callable, Iterable

from ..config.schema import Config, SystemSpec
from ..correlation.driver import VERDICT_PROCEDURE, correlate_run
from ..correlation.settings import CorrelationInputs
from ..correlation.statistics import RESAMPLE_BLOCK
from ..errors import UserError
from ..io.files import file_checksum, read_lines
from ..io.readers import DocumentStream
from ..io.results import RunResults, SystemResult
from ..io.trec import Qrels, read_run
from ..ir.accounting import query_accounting
from ..ir.relevance import pseudo_qrels
from ..ir.settings import PSEUDO_TOP_K
from ..mt.analyses import run_analyses
from ..mt.rates import count_lines, cpu_estimate, slow_metric_warnings
from ..retrieval.analysis import STOPWORD_LISTS
from ..sources.direction import by_direction, direction_note, write_side_by_side
from ..sources.item_tables import item_tables, read_external_items
from ..sources.materialize import join_external
from ..sources.query_translation import system_queries
from ..sources.settings import ARCHITECTURE_NAMES
from ..sources.validate import check_settings, item_names_taken
from .cache import Cache, tool_versions
from .executor import Beside, Executor, LocalExecutor, WorkerLost, get_executor, runs_elsewhere
from .inputs import Resolved, resolve_inputs
from .item_level import (
    english_signals,
    item_level_block,
    items_tasks,
    run_items,
    segment_metrics,
    segments_table,
    skip_reason,
)
from .memory import available_memory, bound_jobs, build_memory, text_size
from .output import cache_locked, claimed_out, prepare_cache, prepare_default_cache, write_outputs
from .progress import Progress
from .shards import drop_stale_spans, shard_tasks, shard_unit
from .stages import check_same_ids, ir_stage, neural_items_prepass, neural_prepass, qrels_stage, run_file, system_stage
from .tasks import CorrelationTask, EnglishSide, IRTask, MTTask, QrelsTask, RetrieveTask, SystemTask, ids_checksum

__all__ = ["run_experiment", "resolve_inputs", "Resolved", "Cache"]


def run_experiment(
    cfg: Config,
    out_dir: str | os.PathLike,
    *,
    jobs: int | None = None,
    quiet: bool = False,
    log: Callable[[str], None] | None = None,
    executor: str | None = None,
    shard_docs: int | None = None,
    cache_dir: str | os.PathLike | None = None,
) -> dict:
    """Run the whole experiment and write the reports, then results.json, into ``out_dir``.

    ``executor`` names the engine that runs the systems (default: the config's, ``local``);
    ``shard_docs``: collections with more lines are indexed in spans of that many, each its
    own task (default: the config's); ``log`` receives warnings (default: stderr); ``cache_dir``:
    a cache shared by several output directories (default: ``out_dir/cache``), held for the run."""
    check_settings(cfg)  # validate's checks, before any output is made
    ex = get_executor(executor or cfg.executor, jobs or cfg.jobs or os.cpu_count() or 1)
    if shard_docs is not None:
        cfg = replace(cfg, shard_docs=shard_docs)
    with claimed_out(out_dir) as out:  # a refused run leaves no new --out behind
        root = prepare_cache(cache_dir) if cache_dir is not None else prepare_default_cache(out)
        with cache_locked(root, log or _note):  # also when OUT/cache is another run's --cache
            return _run(cfg, out, ex, quiet, log or _warn, {"jobs": jobs, "executor": executor, "log": log,
                                                            "shard_docs": shard_docs, "cache_dir": cache_dir and root},
                        root).to_dict()


def _warn(message: str) -> None:
    sys.stderr.write(f"warning: {message}\n")


def _note(message: str) -> None:
    sys.stderr.write(f"note: {message}\n")
    sys.stderr.flush()


def _run(cfg: Config, out: Path, ex: Executor, quiet: bool, log: Callable[[str], None], run_kw: dict,
         cache_root: Path | None = None) -> RunResults:
    """The experiment in ``out`` (locked); ``run_kw`` is passed on to the per-direction runs. Each stage
    returns its part (and how long it took); the parts are assembled once, into the :class:`RunResults`
    record that results.json is written from."""
    cache = Cache(cache_root if cache_root is not None else out / "cache")
    timing: dict[str, float] = {}  # seconds per stage, in the order they ran (written by this function only)
    t_start = time.perf_counter()
    res = resolve_inputs(cfg, cache)
    # the collection's language (a WMT file's target side) sets the analyzer's unless the config names one:
    # indexing, searching, the cache keys and the signature all read this cfg
    cfg = replace(cfg, retrieval=cfg.retrieval.for_collection(res.language))
    timing["resolve"] = time.perf_counter() - t_start
    _check_unique_names(res.systems)
    ext_items = external_items(cfg, res)  # read and checked before any stage runs
    if ext_items is not None:
        timing["external_items"] = time.perf_counter() - t_start - timing["resolve"]
    analyses = run_analyses(cfg, res.systems, res.mt_refs)  # config analyses (mt/analyses.py): {} or {"analyses": ...}
    t0 = time.perf_counter()
    if neural_prepass([system_task(cfg, res, cache, s, False).mt for s in res.systems], cache, progress=not quiet):
        timing["neural"] = time.perf_counter() - t0  # the neural metrics' segment scores (inside "systems")
    with Progress(quiet) as progress, ex:
        eng_task = retrieve_task(cfg, res, cache, "english", res.english, want_ids=True) if res.english else None
        tasks = [system_task(cfg, res, cache, s, eng_task is not None) for s in res.systems]
        first = [SystemTask("english", retrieve=eng_task)] if eng_task is not None else []
        t_shards = time.perf_counter()
        first, tasks, shard_notes = index_shards(cfg, ex, first, tasks, cache, progress, quiet)
        if any(t.retrieve is not None and t.retrieve.shards for t in first + tasks):
            timing["shards"] = time.perf_counter() - t_shards  # pass 1 of every span (inside "systems")
        eng_task = first[0].retrieve if first else None
        _bound_local_jobs(ex, first + tasks, quiet)
        if run_kw.get("jobs") is None and cfg.jobs is None:  # the default: workers only where they pay
            _default_jobs(ex, first + tasks, mt_plan(tasks, cache, ex.jobs, None))
        mt_cpu = mt_plan(tasks, cache, ex.jobs, None if quiet else log)
        outputs = run_all(cfg, ex, first, tasks, cache, progress.stage(
            "systems: MT + BM25", [t.system for t in first + tasks], ex.jobs,
            estimate=mt_cpu / max(1, min(ex.jobs, len(tasks))) if mt_cpu else None))
        drop_stale_spans(cache)
        timing["systems"] = time.perf_counter() - t0
        worker_notes = shard_notes + [n for o in outputs for n in o["notes"]]
        english, english_ir, items, ir_outputs = None, None, None, {}
        if eng_task is not None:
            eng_out, outputs = outputs[0], outputs[1:]
            timing["english_retrieval"] = eng_out["times"]["retrieve"]
            english = english_side(cfg, res, cache, eng_task, eng_out["retrieve"])
            check_systems_ids(english, tasks, outputs)
            # the item scores run in the workers beside the IR measures and correlations computed here
            items, seconds = item_scores(cfg, res, english, tasks, ex, cache, progress, None if quiet else log)
            if seconds is not None:
                timing["items"] = seconds
            t0 = time.perf_counter()
            english_ir = ir_stage(english_ir_task(cfg, english), cache)
            ir_outputs = score_systems_ir(cfg, english, tasks, cache, progress.stage(
                "IR measures", [t.system for t in tasks if t.retrieve is not None]))
            timing["ir"] = time.perf_counter() - t0
            if isinstance(items, Beside):
                items.raise_if_failed()  # a failed item stage stops the run before the correlations
        sys_results, stage_times, sys_signatures = assemble_systems(res, english, outputs, ir_outputs)
        timing.update({f"cpu_{k}": v for k, v in stage_times.items()})
        ext_kinds, corr, seconds = score_tables(cfg, res, sys_results, cache, ex, progress,
                                                items.lock if isinstance(items, Beside) else None)
        timing.update(seconds)
        if isinstance(items, Beside):
            items, timing["items"] = items.result(), items.seconds
        item_block, run_files = None, {}  # run_files: beside results.json (the item-level documents matrix)
        if items is not None:
            t0 = time.perf_counter()
            item_block, run_files = item_level(cfg, res, english, items, sys_results, ext_kinds, cache, ex, progress,
                                               ext_items)
            if "skipped" not in item_block:
                timing["item_level"] = time.perf_counter() - t0
        seg_table = item_segments(tasks, res, cache)
    for note in worker_notes + cache.notes:
        log(note)
    signature = {"versions": tool_versions(), "seed": cfg.seed, **res.signature,
                 **({"retrieval": english.signature, "relevance": english.qrels_source} if english is not None else {}),
                 **sys_signatures, **settings_signature(cfg, res, english)}
    results = RunResults(
        name=cfg.name, systems={n: SystemResult.from_dict(e) for n, e in sys_results.items()},
        correlations=corr["correlations"], comparisons=corr["comparisons"], verdicts=corr["verdicts"],
        confounds=corr.get("confounds") or None,
        english=({"ir": english_ir["aggregate"], "n_queries": len(res.queries), "n_docs": english.collection_size}
                 if english_ir else None),
        score_kinds=ext_kinds, notes=list(cfg.notes) + res.notes + worker_notes + cache.notes,
        signature=signature, config=cfg.to_dict(), analyses=analyses.get("analyses"), item_level=item_block,
        item_segments=seg_table[1] if seg_table is not None else None,
        timing={k: round(v, 3) for k, v in timing.items()},
    )
    if cfg.wmt is not None and cfg.wmt.direction == "both":
        direction = by_direction(cfg, out, run_experiment, **run_kw)
        results = replace(results, direction=direction, notes=[*results.notes, direction_note(direction)])
        write_side_by_side(results.to_dict(), out)
    if seg_table:
        run_files[seg_table[1]["file"]] = seg_table[0]
    with Progress(quiet) as progress:
        return write_outputs(results, out, t_start, progress, run_files or None)


def _segment_metrics(cfg: Config) -> tuple[str, ...]:
    if not cfg.item_level.enabled:
        return ()

    return segment_metrics(cfg)


def item_segments(tasks: list[SystemTask], res: Resolved, cache: Cache) -> tuple[str, dict] | None:
    """The per-segment table of the MT test set and its results.json block (item level on), or None."""
    if not any(t.mt is not None and t.mt.segments for t in tasks):
        return None

    return segments_table(tasks, cache, read_lines(res.mt_docids) if res.mt_docids else None)


def item_scores(cfg: Config, res: Resolved, english: EnglishSide, tasks: list[SystemTask], ex: Executor,
                cache: Cache, progress: Progress,
                log: Callable[[str], None] | None = None) -> tuple[dict | Beside, float | None]:  # fmt: skip
    """Every system's item-level scores (cached, through the executor), or ``{"skipped": why}``;
    where the executor runs tasks elsewhere, a :class:`Beside` computing them while this process
    goes on (its ``result()``: the same dict). With the seconds it took (None: skipped, or beside)."""
    why = skip_reason(cfg, res, english)
    if why is not None:
        return {"skipped": why}, None
    t0 = time.perf_counter()
    itasks = items_tasks(cfg, res, english, tasks, cache)
    neural_items_prepass(itasks, cache, progress, log)  # here: it may load a model on this process's device
    bar = progress.bar("item scores", len(itasks))

    def work() -> dict:
        try:
            out = run_items(ex, itasks, cache, bar)
        except WorkerLost as e:
            raise UserError(
                f"a worker process died (killed or out of memory) while scoring the items of system(s) "
                f"{', '.join(itasks[i].system for i in e.indices)}; finished stages are kept in the cache: re-run to "
                "resume, with fewer --jobs if memory ran out"
            ) from None
        return {"systems": [t.system for t in itasks], "outputs": out, "english": english_signals(english, cache)}

    if runs_elsewhere(ex) and len(itasks) > 1:  # (a map of one task would run in this process)
        return Beside(work, started=t0), None
    items = work()
    return items, time.perf_counter() - t0


def external_items(cfg: Config, res: Resolved):
    """The config's external per-document MT scores (``external:`` entries with ``item_col``/``documents``),
    checked against the systems and the collection's document ids; None without such entries."""
    if not item_tables(cfg):
        return None
    if res.english is None:
        raise UserError(f"{item_tables(cfg)[0].where}: per-document scores join the item-level analysis, which "
                        "needs a collection with an English side; remove the entry or add a collection")

    stream = DocumentStream(res.english, res.doc_format, cfg.collection.ids if cfg.collection else None)
    for _ in stream.batches():  # the ids, without holding every text
        pass
    ids = stream.ids or ()

    return read_external_items(cfg, res.systems, ids, item_names_taken(cfg))


def item_level(cfg: Config, res: Resolved, english: EnglishSide, items: dict, sys_results: dict,
               kinds: dict, cache: Cache | None = None, ex: Executor | None = None,
               progress: Progress | None = None, ext_items=None) -> tuple[dict, dict[str, str]]:  # fmt: skip
    """results.json's ``item_level`` block (or ``{"skipped": why}``) and the files written beside
    results.json (name: text): cached; its permutation tests and bootstraps run through ``ex`` where it
    runs work elsewhere (results never depend on it)."""
    if "skipped" in items:
        return {"skipped": items["skipped"]}, {}

    if not items["outputs"] or not items["outputs"][0]["documents"]:
        return {"skipped": "no document is judged relevant by any query"}, {}
    parallel = runs_elsewhere(ex)

    def mapper(fn, jobs):
        row = progress.stage("item-level statistics", len(jobs), ex.jobs) if progress is not None else None
        try:
            return ex.map(fn, jobs, row)
        except WorkerLost:
            raise UserError(
                "a worker process died (killed or out of memory) while computing the item-level statistics; "
                "finished stages are kept in the cache: re-run to resume, with fewer --jobs if memory ran out"
            ) from None

    return item_level_block(cfg, items["outputs"], items["systems"], sys_results, list(kinds.get("ir", [])),
                            items["english"], list(kinds.get("lower_is_better", [])), cache,
                            mapper if parallel else None, ext_items)


def _check_unique_names(systems: list[SystemSpec]) -> None:
    names = [s.name for s in systems]
    if len(set(names)) != len(names):
        dup = sorted({n for n in names if names.count(n) > 1})[0]
        raise UserError(f"system name {dup!r} appears twice; system names must be unique")


# --------------------------------------------------------------------------- tasks
def retrieve_task(cfg: Config, res: Resolved, cache: Cache, system: str, docs: str, **checks: Any) -> RetrieveTask:
    stop = cfg.retrieval.stopwords
    task = RetrieveTask(
        system=system, docs=docs, format=res.doc_format, retrieval=cfg.retrieval,
        queries=tuple(res.queries.items()),
        stopwords_file=stop if stop and stop.strip().lower() not in STOPWORD_LISTS else None,
        shard_docs=cfg.shard_docs, **checks,
    )
    built = cache.entry(task).manifest.exists() or cache.entry(task.index).manifest.exists()
    return task if built else replace(task, memory=build_memory(docs))


def _bound_local_jobs(ex: Executor, tasks: list, quiet: bool) -> None:
    """Lower a local pool's workers so the index builds running at once fit in available memory."""
    if not isinstance(ex, LocalExecutor):
        return  # the Ray executor asks Ray for each task's memory instead
    ex.jobs, note = bound_jobs(ex.jobs, [t.memory for t in tasks if t.memory], available_memory())
    if note and not quiet:
        sys.stderr.write(f"note: {note}\n")


WORKER_START_CPU = 0.75  # CPU-s a spawned worker spends starting and importing the stages (python -c "import ...": 0.45,
# plus the metrics' and pytrec_eval's imports on first use)
RETRIEVE_BYTES_PER_CPU = 1_000_000  # collection text indexed, searched and scored per CPU-s (the demo: 2.4 MB, 1.8-2.8 s)
PAYING_WORK = 10  # workers start by default when the systems' estimated work is this many times what they cost


def _default_jobs(ex: Executor, tasks: list, mt_cpu: float) -> None:
    """The default worker count (no --jobs, no ``jobs:`` in the config): a local pool's workers only when the
    systems' estimated CPU (MT from the measured rates, retrieval from the text to index) is at least
    :data:`PAYING_WORK` times what starting them costs (:data:`WORKER_START_CPU` each), else the run is serial: on a
    small run (the demo) the workers' start-up is most of the CPU they would spread, and the later stages' work
    grows with the same data. Results are the same either way."""
    if not isinstance(ex, LocalExecutor) or ex.jobs <= 1:
        return
    text = sum(text_size(t.retrieve.docs) for t in tasks if t.retrieve is not None and t.retrieve.memory)
    work = mt_cpu + text / RETRIEVE_BYTES_PER_CPU
    workers = min(ex.jobs, max(1, len(tasks)))
    if work < PAYING_WORK * WORKER_START_CPU * workers:
        ex.jobs = 1


def english_side(cfg: Config, res: Resolved, cache: Cache, task: RetrieveTask, meta: dict) -> EnglishSide:
    """After retrieval on the human-English side: the RBO reference run and (pseudo-)qrels (the config's
    qrels, else the top of the English-side run)."""
    judgements, source = res.qrels, res.qrels_source
    if judgements is None:
        top_k = cfg.relevance.pseudo_top_k if cfg.relevance else PSEUDO_TOP_K
        judgements = pseudo_qrels(read_run(run_file(task, cache)), top_k=top_k)
        source = f"pseudo:top_k={top_k} of the English-side run"
    qrels = qrels_stage(QrelsTask(tuple((q, tuple(d.items())) for q, d in judgements.judgements.items())), cache)
    unknown = _unknown_qrels_docs(judgements, meta["doc_ids"])
    if unknown:
        raise UserError(
            f"{source}: query {unknown[0]!r} judges document {unknown[1]!r}, which is not in the collection "
            f"{res.english}; fix the qrels or the collection"
        )
    return EnglishSide(
        run=task, doc_ids=tuple(meta["doc_ids"]), signature=meta["signature"], qrels=qrels,
        qrels_source=source, collection_size=cfg.ir.collection_size or meta["n_docs"],
        judged=tuple(q for q, j in judgements.judgements.items() if j),
    )


def _unknown_qrels_docs(qrels: Qrels, ids: Iterable[str]) -> tuple[str, str] | None:
    known = set(ids)
    for qid, docs in qrels.judgements.items():
        for d in docs:
            if d not in known:
                return qid, d
    return None


def ir_task(cfg: Config, english: EnglishSide, system: str, run: RetrieveTask) -> IRTask:
    return IRTask(
        system=system, run=run, qrels=english.qrels, reference=english.run,
        ir=replace(cfg.ir, collection_size=english.collection_size),
    )


def english_ir_task(cfg: Config, english: EnglishSide) -> IRTask:
    """The English side scored against itself: the ceiling of every IR measure."""
    return ir_task(cfg, english, "english", english.run)


def system_task(cfg: Config, res: Resolved, cache: Cache, s: SystemSpec, retrieval: bool) -> SystemTask:
    """MT and retrieval of one system (IR follows once the English side is known). Query translation: the
    system's translated queries search the reference side's collection and index (built once, by the
    reference side's task, which :func:`run_all` runs first)."""
    mt = None
    if cfg.mt is not None and s.hyp:
        mt = MTTask(system=s.name, hyp=s.hyp, mt=replace(cfg.mt, refs=tuple(res.mt_refs), source=res.mt_src),
                    segments=_segment_metrics(cfg))
    if retrieval and cfg.query_translation and s.queries and res.english:
        queries = system_queries(s, res.queries, cfg)
        return SystemTask(s.name, mt=mt, retrieve=replace(retrieve_task(cfg, res, cache, s.name, res.english),
                                                          queries=queries, index_name="english", memory=0))
    if not retrieval or not s.docs:
        return SystemTask(s.name, mt=mt)
    return SystemTask(s.name, mt=mt, retrieve=retrieve_task(cfg, res, cache, s.name, s.docs))


def run_all(cfg: Config, ex: Executor, first: list[SystemTask], tasks: list[SystemTask], cache: Cache,
            on_done: Callable[[int], None] | None) -> list[dict]:
    """The reference side's and every system's stages (:func:`run_systems`); with query translation the
    reference side first, so its index is built once and the systems only load it."""
    if not cfg.query_translation or not first:
        return run_systems(ex, first + tasks, cache, on_done)
    head = run_systems(ex, first, cache, on_done)
    return head + run_systems(ex, tasks, cache, None if on_done is None else lambda i: on_done(i + len(first)))


def index_shards(cfg: Config, ex: Executor, first: list[SystemTask], tasks: list[SystemTask], cache: Cache,
                 progress: Progress, quiet: bool) -> tuple[list[SystemTask], list[SystemTask], list[str]]:
    """Split each collection to index (not cached) with more than ``cfg.shard_docs`` lines into
    spans and run every span's pass 1 through the executor (all collections in one ``map``);
    returns the tasks (their retrieval now merges the spans) and the workers' cache notes."""
    def split(t: SystemTask) -> SystemTask:
        if t.retrieve is None or not t.retrieve.memory:  # no retrieval, or its index is cached
            return t
        return replace(t, retrieve=shard_tasks(t.retrieve, cfg.shard_docs))

    first, tasks = [split(t) for t in first], [split(t) for t in tasks]
    spans = [st for t in first + tasks if t.retrieve is not None for st in t.retrieve.shards]
    if not spans:
        return first, tasks, []
    jobs = ex.jobs
    _bound_local_jobs(ex, spans, quiet)
    try:
        done = ex.map(functools.partial(shard_unit, cache=cache), spans, progress.stage(
            "index shards", [f"{st.system} lines {st.first}+" for st in spans], ex.jobs))
    except WorkerLost as e:
        names = ", ".join(f"{spans[i].system} lines {spans[i].first}-{spans[i].first + spans[i].lines - 1}"
                          for i in e.indices)  # fmt: skip
        raise UserError(
            f"a worker process died (killed or out of memory) while indexing shard(s) {names}; finished shards are "
            "kept in the cache: re-run to resume, with fewer --jobs or a smaller shard_docs if memory ran out"
        ) from None
    finally:
        ex.jobs = jobs  # the spans' memory bound does not carry over to the systems
    return first, tasks, [n for d in done for n in d["notes"]]


def check_systems_ids(english: EnglishSide, tasks: list[SystemTask], outputs: list[dict]) -> None:
    """Every system's collection has the English side's ids (before any stage reads its documents by id)."""
    want = ids_checksum(english.doc_ids)
    for task, out in zip(tasks, outputs):
        if task.retrieve is not None:
            check_same_ids(task.retrieve, out["retrieve"].get("ids_checksum"), want, english.doc_ids)


def score_systems_ir(cfg: Config, english: EnglishSide, tasks: list[SystemTask], cache: Cache,
                     on_done: Callable[[int], None] | None) -> dict[int, tuple[dict, float]]:  # fmt: skip
    """Each system's IR scores and the seconds they took, by the system's index in ``tasks`` (its ids
    checked: :func:`check_systems_ids`)."""
    done, scored = 0, {}
    for i, task in enumerate(tasks):
        if task.retrieve is None:
            continue
        t0 = time.perf_counter()
        ir = ir_stage(ir_task(cfg, english, task.system, task.retrieve), cache)
        scored[i] = ir, time.perf_counter() - t0
        if on_done:
            on_done(done)
        done += 1
    return scored


def mt_plan(tasks: list[SystemTask], cache: Cache, jobs: int, log: Callable[[str], None] | None) -> float:
    """Estimated CPU-seconds of the MT metrics still to compute (measured rates, :mod:`..mt.rates`);
    a warning through ``log`` before a slow metric on a large set."""
    todo = [t.mt for t in tasks if t.mt is not None and not cache.entry(t.mt).manifest.exists()]
    if not todo:
        return 0.0
    lines = {t.hyp: count_lines(t.hyp) for t in todo}
    per_metric: dict[str, list[int]] = {}
    for t in todo:
        for m in t.mt.metrics:
            per_metric.setdefault(m, []).append(lines[t.hyp])
    device = todo[0].mt.device
    if log is not None:
        for w in slow_metric_warnings(per_metric, jobs, device):
            log(w)
    return sum(cpu_estimate(m, n, device) or 0.0 for m, ns in per_metric.items() for n in ns)


def run_systems(ex: Executor, tasks: list[SystemTask], cache: Cache, on_done: Callable[[int], None] | None) -> list[dict]:
    """Every system's MT, retrieval and IR through the executor; a dead worker is a user error."""
    try:
        return ex.map(functools.partial(system_stage, cache=cache), tasks, on_done)
    except WorkerLost as e:
        names = ", ".join(tasks[i].system for i in e.indices)
        raise UserError(
            f"a worker process died (killed or out of memory) while scoring system(s) {names} (MT, retrieval); "
            "finished stages are kept in the cache: re-run to resume, with fewer --jobs if memory ran out"
        ) from None


# --------------------------------------------------------------------------- results
def _length_ratio(hyp: str | None, refs: tuple[str, ...], ref_tokens: dict[str, int]) -> float | None:
    """Hypothesis / first-reference length in whitespace tokens over the MT test set (a covariate of the
    confound analysis: length alone moves many MT metrics)."""
    if not hyp or not refs:
        return None
    if refs[0] not in ref_tokens:
        ref_tokens[refs[0]] = sum(len(line.split()) for line in read_lines(refs[0]))
    total = ref_tokens[refs[0]]
    return None if total == 0 else sum(len(line.split()) for line in read_lines(hyp)) / total


def assemble_systems(
    res: Resolved, english: EnglishSide | None, outputs: list[dict], ir_outputs: dict[int, tuple[dict, float]]
) -> tuple[dict[str, dict[str, Any]], dict[str, float], dict[str, dict[str, str]]]:
    """Per-system entries of results.json (the external scores are joined to them next), the CPU-seconds
    of each stage summed over the systems, and the MT/IR signatures (``{"mt": ..., "ir": ...}`` for the
    run's signature). ``ir_outputs``: :func:`score_systems_ir`'s."""
    sys_results: dict[str, dict[str, Any]] = {}
    signature: dict[str, dict[str, str]] = {}
    ref_tokens: dict[str, int] = {}
    stage_times = {"mt": 0.0, "retrieve": 0.0, "ir": 0.0}
    judged = list(english.judged) if english is not None else []
    pseudo = english is not None and english.qrels_source.startswith("pseudo:")
    for i, (s, o) in enumerate(zip(res.systems, outputs)):
        if i in ir_outputs:
            o = {**o, "ir": ir_outputs[i][0], "times": {**o["times"], "ir": ir_outputs[i][1]}}
        entry: dict[str, Any] = {"attrs": dict(s.attrs), "mt": {}, "ir": {}, "external": {}, "human": {}}
        if "mt" in o:
            entry["mt"] = {k: v["score"] for k, v in o["mt"].items()}
            ratio = _length_ratio(s.hyp, res.mt_refs, ref_tokens)
            if ratio is not None:
                entry["length_ratio"] = ratio
            signature.setdefault("mt", {}).update({k: v["signature"] for k, v in o["mt"].items()})
        if "ir" in o:
            entry["ir"] = dict(o["ir"]["aggregate"])
            entry["ir_per_query"] = o["ir"]["per_query"]
            entry["queries"] = query_accounting(res.queries, judged, o["ir"]["per_query"], o["ir"]["aggregate"],
                                                pseudo=pseudo,
                                                generation_skipped=res.query_skips)
            signature.setdefault("ir", {}).update(o["ir"].get("signatures", {}))
        if "retrieve" in o:
            entry["collection"] = {"n_docs": o["retrieve"]["n_docs"], "n_empty_docs": o["retrieve"]["n_empty_docs"]}
        for k, v in o["times"].items():
            stage_times[k] += v
        sys_results[s.name] = entry
    return sys_results, stage_times, signature


def correlation_inputs(cfg: Config, language: str | None = None):
    """The correlation stage's record: the config's correlation: section and where relevance comes from
    (``language``: the collection's, as the source names it; English or None: en)."""
    rel = cfg.relevance
    lang = None if language is None or language.strip().lower() in ("", "en", "eng", "english") else language
    return CorrelationInputs(cfg.correlation, qrels=bool(rel is not None and rel.qrels),
                             pseudo_qrels=bool(rel is not None and rel.pseudo_top_k), wmt=cfg.wmt is not None,
                             reference_language=lang)


def score_tables(cfg: Config, res: Resolved, sys_results: dict, cache: Cache,
                 ex: Executor | None = None, progress: Progress | None = None, lock=None):  # fmt: skip
    """Join external and human scores, then correlate (cached): (score kinds, {"correlations", "comparisons",
    "verdicts"}, {"external": seconds, "correlation": seconds}).

    The resampling seed blocks of all correlations run through ``ex`` (one ``map``, a few
    tasks per worker) when there is enough of them to pay; results never depend on it. ``lock``
    (held by a stage running beside this one on ``ex``: :class:`~.executor.Beside`) is taken
    around each such ``map``."""
    t0 = time.perf_counter()
    ext_kinds = join_external(cfg, res.systems, sys_results, res)
    timing = {"external": time.perf_counter() - t0}
    t0 = time.perf_counter()
    inputs = correlation_inputs(cfg, res.language)
    entry = cache.entry(CorrelationTask(inputs, sys_results, ext_kinds, resample_block=RESAMPLE_BLOCK,
                                        procedure=VERDICT_PROCEDURE))
    corr = entry.load_json()
    if corr is None:
        n_y = sum(len(ext_kinds.get(k, [])) for k in ("ir", "human"))
        row = progress.stage("correlations", 1, detail=f"{len(ext_kinds.get('mt', []))} MT metrics x {n_y} targets, "
                             f"{len(sys_results)} systems") if progress is not None else None

        blocks = []  # one row for the resampling blocks spread over the executor, in one or more rounds

        def mapper(fn, tasks):
            if progress is not None and not blocks:
                blocks.append(progress.stage("  resampling blocks", 0, ex.jobs))
            if blocks and blocks[0] is not None:
                blocks[0].extend(len(tasks))
            with lock or contextlib.nullcontext():
                return ex.map(fn, tasks, blocks[0] if blocks else None)

        try:
            # blocks through the executor only where it runs them elsewhere (in-process: one pass, no recording)
            parallel = runs_elsewhere(ex)
            corr = correlate_run(inputs, sys_results, ext_kinds, map=mapper if parallel else None,
                                 chunks=4 * getattr(ex, "jobs", 1))
        except WorkerLost:
            raise UserError(
                "a worker process died (killed or out of memory) while computing the correlation statistics; "
                "finished stages are kept in the cache: re-run to resume, with fewer --jobs if memory ran out"
            ) from None
        entry.save_json(corr)
        corr = json.loads(json.dumps(corr))  # as a cached re-run reads it, so both give the same results
        if row is not None:
            row(0)
    timing["correlation"] = time.perf_counter() - t0
    return ext_kinds, corr, timing


def settings_signature(cfg: Config, res: Resolved, english: EnglishSide | None) -> dict[str, Any]:
    """The correlation, MT, retrieval and IR settings recorded in the signature."""
    c = cfg.correlation
    sig: dict[str, Any] = {
        "correlation": {
            "method": c.method, "variant": c.variant, "alpha": c.alpha, "bootstrap": c.bootstrap,
            "permutation": c.permutation, "seed": c.seed, "round": dict(c.round), "correction": c.correction,
            "family": c.family, "resolution": c.resolution, "resample_block": RESAMPLE_BLOCK,
        }
    }
    if cfg.mt is not None:
        sig["mt_settings"] = {"tokenize": cfg.mt.tokenize, "lowercase": cfg.mt.lowercase, "nrefs": len(res.mt_refs)}
        if res.mt_src:  # the source segments (COMET reads them)

            sig["mt_settings"]["source"] = f"sha1:{file_checksum(res.mt_src)[:12]}"
    sig["architecture"] = {"translate": cfg.translate, "name": ARCHITECTURE_NAMES[cfg.translate]}
    if res.language is not None:
        sig["architecture"]["language"] = res.language  # the collection's language, as the source names it
    if english is not None:
        sig["retrieval_settings"] = asdict(cfg.retrieval)
        sig["ir_settings"] = {"measures": list(cfg.ir.measures), "collection_size": english.collection_size}
    return sig
