"""Index shards as units of work: a collection with more lines than ``shard_docs`` is indexed
in line spans, each span's pass 1 (read + analyse + (document, term, tf) triples) one executor
task with its own verified cache entry; the collection's retrieval task then merges the
vocabularies, turns each span's triples into postings over the global term ids (pass 2, one
span at a time) and saves the index exactly as an unsharded build would (same signature,
same scores and tie order: :mod:`clir_eval.retrieval.index`).

A shard worker holds only its span's texts and triples, so peak memory per task is bounded
by ``shard_docs``, not by the collection; the merging task never holds the texts.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import UserError
from ..io.files import READ_ERRORS, atomic_write, open_binary, write_json
from ..io.readers import DOCUMENT_FORMATS, DocumentStream, guess_doc_format
from ..retrieval.analysis import get_analyzer
from ..retrieval.bm25 import RankBM25Index, SparseBM25, signature_of
from ..retrieval.index import InvertedIndex, Parts, ShardStats, finalize_shard, merge_shard_stats, stream_stats
from .cache import Cache
from .memory import BUILD_BYTES_PER_TEXT_BYTE, WORKER_BASE_BYTES, text_size
from .tasks import IndexTask, RetrieveTask, ShardTask, ids_checksum

ARRAYS = ("indptr", "cols", "tf", "dl")  # pass-1 triples (retrieval.index.ShardStats)
EXTS = tuple(f"{a}.npy" for a in ARRAYS) + ("df.npy", "terms.json", "ids.json", "docs.bin", "json")
READ_BLOCK = 1 << 22  # bytes read at a time while counting lines


@dataclass(frozen=True)
class Span:
    """Lines ``first .. first + lines - 1`` of a file: ``offset`` of line ``first`` (None in a
    gzip file) and ``size``, the span's uncompressed bytes."""

    first: int
    offset: int | None
    lines: int
    size: int


def plan_spans(path: str, shard_docs: int) -> list[Span]:
    """Spans of at most ``shard_docs`` lines covering the file (read in 4 MiB blocks, newlines
    found by numpy); ``[]`` when it has no more than ``shard_docs`` lines (one index)."""
    gz = Path(path).suffix == ".gz"
    bounds = [0]  # byte offset of line 1, shard_docs + 1, 2 * shard_docs + 1, ...
    n = pos = 0
    try:
        with open_binary(path) as fh:
            for block in iter(lambda: fh.read(READ_BLOCK), b""):
                nl = np.flatnonzero(np.frombuffer(block, dtype=np.uint8) == 10)  # newlines in this block
                while (k := shard_docs * len(bounds) - n - 1) < len(nl):  # k: the newline ending a span
                    bounds.append(pos + int(nl[k]) + 1)
                n += len(nl)
                pos += len(block)
                last = block[-1:]
    except READ_ERRORS as e:
        raise UserError(f"{path}: cannot read ({e}); check the file is complete") from None
    if pos and last != b"\n":
        n += 1  # a last line without a newline
    if bounds[-1] == pos:
        bounds.pop()  # the file ends exactly at a span boundary
    if n <= shard_docs:
        return []
    ends = bounds[1:] + [pos]
    return [Span(k * shard_docs + 1, None if gz else lo, min(shard_docs, n - k * shard_docs), hi - lo)
            for k, (lo, hi) in enumerate(zip(bounds, ends))]  # fmt: skip


# Peak bytes over a span's (or, for the merge, the collection's) text, measured: pass 1 as an
# unsharded build (memory.BUILD_BYTES_PER_TEXT_BYTE); the sparse merge ~4.8x the text (rounded
# up); rank_bm25 rebuilds its tokenised corpus in the merge, ~10x (sharding does not bound it).
MERGE_BYTES_PER_TEXT_BYTE = {"sparse": 5.0, "rank_bm25": 11.0}


def span_tasks(ix: IndexTask, shard_docs: int) -> tuple[tuple[ShardTask, ...], int]:
    """The span tasks of an index when its collection has more than ``shard_docs`` lines (each
    with its estimated memory from its own bytes) and the merge's estimated memory; ``((), 0)``
    when it fits one build."""
    if text_size(ix.docs) <= shard_docs:  # every line takes a byte at least: no more lines than that
        return (), 0
    spans = plan_spans(ix.docs, shard_docs)
    shards = tuple(
        ShardTask(ix.system, ix.docs, ix.format, ix.settings.analyzer, ix.settings.stopwords, ix.settings.stem, sp.first,
                  sp.lines, sp.offset, ix.stopwords_file, memory=int(sp.size * BUILD_BYTES_PER_TEXT_BYTE) + WORKER_BASE_BYTES,
                  language=ix.settings.language)  # fmt: skip
        for sp in spans
    )
    per_byte = MERGE_BYTES_PER_TEXT_BYTE.get(ix.settings.backend, BUILD_BYTES_PER_TEXT_BYTE)
    return shards, int(sum(sp.size for sp in spans) * per_byte) + WORKER_BASE_BYTES


def shard_tasks(task: RetrieveTask, shard_docs: int) -> RetrieveTask:
    """``task`` planned: with its index's span tasks and the merge's memory in place of a whole
    build's, or as one build; either way ``shard_docs`` 0 (its worker does not plan again)."""
    shards, merge = span_tasks(task.index, shard_docs)
    if not shards:
        return replace(task, shard_docs=0)
    return replace(task, shards=shards, memory=min(task.memory or merge, merge), shard_docs=0)


def _analyzer(task: ShardTask | IndexTask):
    s = task.settings if isinstance(task, IndexTask) else task
    return get_analyzer(s.analyzer, stopwords=s.stopwords, stem=s.stem, language=s.language)


def shard_stage(task: ShardTask, cache: Cache) -> dict[str, Any]:
    """Pass 1 of one span, cached (verified) as ``.npy`` arrays and JSON: ``{"n_docs", "n_empty_docs"}``."""
    entry = cache.entry(task)
    if entry.verified(*EXTS):
        return json.loads(entry.path("json").read_text(encoding="utf-8"))
    entry.unseal()
    docs = DocumentStream(task.docs, fmt=task.format, span=(task.first, task.offset, task.lines))
    with atomic_write(entry.path("docs.bin"), "wb") as fh:  # what Documents.checksum hashes, for the merge

        def batches():  # texts a batch at a time (again, from the start, after a hash collision)
            fh.seek(0)
            fh.truncate()
            return docs.batches(sink=fh.write)

        stats = stream_stats(batches, _analyzer(task))
    width = len(stats.terms)
    df = np.zeros(width, dtype=np.int64)  # the span's df: the merge reads it, not cols
    for lo in range(0, len(stats.cols), 1 << 22):
        df += np.bincount(stats.cols[lo : lo + (1 << 22)], minlength=width)
    for name in ARRAYS:
        with atomic_write(entry.path(f"{name}.npy"), "wb") as fh:
            _save_array(fh, getattr(stats, name))
    with atomic_write(entry.path("df.npy"), "wb") as fh:
        np.save(fh, df, allow_pickle=False)
    write_json(entry.path("terms.json"), stats.terms, indent=None)
    write_json(entry.path("ids.json"), list(docs.ids), indent=None)
    meta = {"n_docs": len(docs), "n_empty_docs": docs.n_empty}
    write_json(entry.path("json"), meta)
    entry.seal(*EXTS)
    return meta


def _save_array(fh, arr) -> None:
    """``np.save`` of an array or of :class:`~clir_eval.retrieval.index.Parts` (written part by
    part, the same bytes as ``np.save`` of the whole array, without joining the parts)."""
    if not isinstance(arr, Parts):
        np.save(fh, np.ascontiguousarray(arr), allow_pickle=False)
        return
    header = {"descr": np.lib.format.dtype_to_descr(arr.dtype), "fortran_order": False, "shape": (len(arr),)}
    np.lib.format.write_array_header_1_0(fh, header)
    for part in arr.parts:
        fh.write(np.ascontiguousarray(part, dtype=arr.dtype).tobytes())


def _load(entry, name: str) -> np.ndarray:
    return np.load(entry.path(f"{name}.npy"), allow_pickle=False)


def _json(entry, ext: str) -> Any:
    return json.loads(entry.path(ext).read_text(encoding="utf-8"))


def _checksum(entries: list) -> str:
    """:attr:`Documents.checksum` of the whole collection: the spans' ``docs.bin`` (the bytes
    it hashes, written by pass 1) streamed in order."""
    h = hashlib.sha1()
    for e in entries:
        with open(e.path("docs.bin"), "rb") as fh:
            for block in iter(lambda: fh.read(1 << 22), b""):
                h.update(block)
    return h.hexdigest()


def _duplicate(task: IndexTask, entries: list) -> None:
    """Raise the usual duplicate-id error (``FILE:LINE: duplicate document id ... (first on line
    N)``), reading only the span(s) that hold it."""
    where: dict[str, int] = {}
    for k, e in enumerate(entries):
        for i in _json(e, "ids.json"):
            if i not in where:
                where[i] = k
                continue
            read = DOCUMENT_FORMATS[(task.format or guess_doc_format(task.docs)).lower()].rows
            assert read is not None  # line-aligned text: ids are line numbers, never duplicated
            lines = [ln for sp in dict.fromkeys((task.shards[where[i]], task.shards[k]))
                     for ln, ident, _ in read(task.docs, (sp.first, sp.offset, sp.lines)) if ident == i]  # fmt: skip
            raise UserError(f"{task.docs}:{lines[1]}: duplicate document id {i!r} (first on line {lines[0]})")
    raise UserError(f"{task.docs}: duplicate document ids; document ids must be unique")


def assemble(task: IndexTask, cache: Cache):
    """The collection's index from its shards' pass-1 entries (a missing or damaged one is
    recomputed here): global vocabulary and df, then each span's postings; the same index,
    signature and metadata as an unsharded build. Returns (index, meta)."""
    entries = []
    for st in task.shards:
        shard_stage(st, cache)  # verified, else recomputed (with a note)
        entries.append(cache.entry(st))
    metas = [_json(e, "json") for e in entries]
    n_docs = sum(m["n_docs"] for m in metas)
    if n_docs == 0:
        raise UserError(f"{task.docs} contains no documents")
    ids = [i for e in entries for i in _json(e, "ids.json")]
    if len(set(ids)) != len(ids):
        _duplicate(task, entries)
    terms_per = [_json(e, "terms.json") for e in entries]
    terms, remaps, df = merge_shard_stats(terms_per, [_load(e, "df") for e in entries])
    del terms_per
    parts, dls, start = [], [], 0
    for k, (e, m) in enumerate(zip(entries, metas)):
        if m["n_docs"] == 0:
            continue
        stats = ShardStats([], **{a: _load(e, a) for a in ARRAYS})
        dls.append(stats.dl)
        parts.append(finalize_shard(stats, None if k == 0 else remaps[k], len(terms), start))
        start += m["n_docs"]
        del stats
    inv = InvertedIndex(ids, terms, df, np.concatenate(dls), parts)
    params = task.settings
    backend = params.backend
    analyzer = _analyzer(task)
    sig = signature_of(_checksum(entries), n_docs, analyzer, backend, params)
    if backend == "sparse":
        idx = SparseBM25(ids, analyzer, params, sig, inv)
    else:
        idx = RankBM25Index.from_inverted(ids, analyzer, params, sig, inv)
    meta = {
        "signature": sig,
        "n_docs": n_docs,
        "n_empty_docs": sum(m["n_empty_docs"] for m in metas),
        "ids_checksum": ids_checksum(ids),
    }
    return idx, meta


def drop_entries(task: IndexTask, cache: Cache) -> None:
    """Delete the shards' pass-1 entries once the index is saved (they are only its input)."""
    for st in task.shards:
        e = cache.entry(st)
        e.unseal()
        for ext in EXTS:
            e.path(ext).unlink(missing_ok=True)


def shard_unit(task: ShardTask, cache: Cache) -> dict[str, Any]:
    """One executor task: a span's pass 1 with the cache's notes (damaged entries recomputed)."""
    cache = cache.child()
    return {"meta": shard_stage(task, cache), "notes": cache.notes}


def drop_stale_spans(cache: Cache) -> None:
    """After every index of a run is built: span entries left by a failed or killed run whose
    inputs have changed since (their keys will never be asked for again), and temporary files."""
    d = cache.root / ShardTask.STAGE
    if d.is_dir():
        for p in d.iterdir():
            if p.is_file():
                p.unlink(missing_ok=True)


def with_spans(task: IndexTask) -> IndexTask:
    """An index to build in a worker that was not planned (e.g. a damaged cached index): spans
    analysed one after another here when the collection has more than ``shard_docs`` lines,
    so the worker's memory stays bounded as in a planned sharded build."""
    if task.shards or not task.shard_docs:
        return task
    return replace(task, shards=span_tasks(task, task.shard_docs)[0])
