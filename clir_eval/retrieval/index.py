"""Inverted index: streaming two-pass build over document shards, and its verified on-disk format.

The index stores what every BM25 variant needs and nothing that depends on BM25 settings:
the vocabulary (first-occurrence order over the whole collection, as rank-bm25), per-term
document frequencies ``df``, per-document lengths ``dl`` (terms after analysis) and, per
shard (a contiguous range of documents), one posting list per term (CSC: ``indptr`` over
the global term ids, ``rows`` = document offsets within the shard, ascending, and ``tf``).

Build, in two passes (each shard's pass runs in any process; :func:`build_inverted_index`
runs them in a local process pool):

1. :func:`shard_stats` streams a shard's texts in batches through the analyzer's batch
   tokenizer and keeps only (document, local term id, tf) triples -- never token lists;
2. :func:`merge_shard_stats` gives the global vocabulary (:func:`merge_vocabularies`), each
   shard's local -> global id map and the global df; :func:`finalize_shard` turns a shard's
   triples into postings over global ids. BM25 weights need only these plus the global
   average length, so they are computed at query time (:mod:`clir_eval.retrieval.bm25`).

On disk (a directory; :meth:`InvertedIndex.save` / :func:`load_inverted_index`):
``index.json`` (format version, counts, the caller's ``meta``, and the size and SHA-256 of
every other file; written last), ``docids.json``, ``terms.json`` and ``.npy`` arrays
(``dl``, ``df``, ``shard-K-{indptr,rows,tf}``) read with ``allow_pickle=False``. Loading
verifies every size and checksum, dtypes, shapes and the structural invariants (monotone
``indptr``, rows in range and ascending, tf >= 1, df and dl equal to what the postings
say) and raises :class:`IndexCorrupt` (a ``UserError``) on any mismatch: nothing read back
can execute code, and an altered or truncated file is never used.
"""

from __future__ import annotations

import hashlib
import io
import itertools
import json
import mmap
import multiprocessing as mp
import os
import tempfile
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from .. import lazylibs
from ..errors import UserError
from ..io.files import PathLike, atomic_write, write_json
from .analysis import Analyzer, HashCollision, StringSurfaceVocab, SurfaceVocab, batch_slices

INDEX_FORMAT = "clir-eval-index/2"


class IndexCorrupt(UserError):
    """An index directory that is incomplete, altered or not an index at all."""


@dataclass
class ShardStats:
    """Pass 1 of one shard: local vocabulary (first-occurrence order) and doc-major triples."""

    terms: list[str]
    indptr: np.ndarray  # int64, n_docs + 1: document k's triples are [indptr[k], indptr[k+1])
    cols: np.ndarray  # int32 local term ids, ascending within a document
    tf: np.ndarray  # int32 term frequencies
    dl: np.ndarray  # int64 document lengths

    @property
    def n_docs(self) -> int:
        return len(self.dl)


@dataclass
class Shard:
    """Postings of documents ``start .. start + n_docs - 1`` over the global vocabulary."""

    start: int
    n_docs: int
    indptr: np.ndarray  # int64, n_terms + 1
    rows: np.ndarray  # int32 document offsets within the shard, ascending per term
    tf: np.ndarray  # uint16 or int32


def shard_stats(texts: Sequence[str], analyzer: Analyzer, max_chars: int | None = None) -> ShardStats:
    """Pass 1: analyze ``texts`` batch by batch; keep (document, term, tf) triples only.

    Tokens become ids through :class:`~clir_eval.retrieval.analysis.SurfaceVocab` (no Python
    string per token); in the (never observed) case of a 64-bit hash collision between two
    different tokens the shard is redone through Python strings, with the same result."""
    kw = {} if max_chars is None else {"max_chars": max_chars}

    def batches():
        return (texts[i:j] for i, j in batch_slices(texts, **kw))

    terms, nnz, cols, tfs, dls = _stats_parts(batches, analyzer)
    indptr = np.cumsum(np.concatenate([np.zeros(1, dtype=np.int64), *nnz]))
    small = all(len(t) == 0 or int(t.max()) <= np.iinfo(np.uint16).max for t in tfs)
    tf = _drain(tfs, np.uint16 if small else np.int32)
    return ShardStats(terms, indptr, _drain(cols, np.int32), tf, _drain(dls, np.int64))


def stream_stats(batches, analyzer: Analyzer, max_chars: int | None = None) -> ShardStats:
    """Pass 1 over a stream: ``batches()`` yields lists of texts (called again, re-reading the
    collection, only after a hash collision). The triples stay in the batches' parts
    (:class:`Blocks`, tf as uint16 where it fits), so no text outlives its batch and pass 2
    can free them block by block; the result equals :func:`shard_stats` over all the texts."""
    kw = {} if max_chars is None else {"max_chars": max_chars}

    def sliced():
        for texts in batches():
            for i, j in batch_slices(texts, **kw):
                yield texts[i:j]

    terms, nnz, cols, tfs, dls = _stats_parts(sliced, analyzer, narrow=True)
    indptr = np.cumsum(np.concatenate([np.zeros(1, dtype=np.int64), *nnz]))
    nnz.clear()
    return ShardStats(terms, indptr, Parts(cols.parts(), np.int32), Parts(tfs.parts(), tfs.dtype), _drain(dls, np.int64))


_BLOCK = 1 << 22  # values per block of a streamed pass 1's triples (see Blocks)


class Blocks:
    """An append-only array kept in blocks of :data:`_BLOCK` values, each block its own memory
    mapping (:func:`_small_pages`), so freeing it in pass 2 gives its memory back to the system
    at once (freed heap arrays may stay with the process); untouched pages of the last block
    cost nothing."""

    def __init__(self, dtype):
        self.dtype = np.dtype(dtype)
        self.full: list[np.ndarray] = []
        self.cur: np.ndarray | None = None
        self.n = 0

    def append(self, a: np.ndarray) -> None:
        pos = 0
        while pos < len(a):
            if self.cur is None or self.n == len(self.cur):
                if self.cur is not None:
                    self.full.append(self.cur)
                self.cur, self.n = _small_pages(_BLOCK, self.dtype), 0
            k = min(len(a) - pos, len(self.cur) - self.n)
            self.cur[self.n : self.n + k] = a[pos : pos + k]
            self.n += k
            pos += k

    def widen(self, dtype) -> None:
        """Hold the values as ``dtype`` from now on (converting the blocks so far)."""
        self.dtype = np.dtype(dtype)
        self.full = [b.astype(self.dtype) for b in self.full]
        if self.cur is not None:
            self.cur = self.cur.astype(self.dtype)

    def parts(self) -> list[np.ndarray]:
        return self.full + ([self.cur[: self.n]] if self.cur is not None else [])


def _stats_parts(batches, analyzer: Analyzer, narrow: bool = False):
    """Terms and per-batch (nnz per document, term ids, tf, lengths) of pass 1; redone through
    Python strings after a hash collision (see :func:`shard_stats`)."""
    try:
        return _shard_stats(batches(), analyzer, SurfaceVocab(analyzer.name), narrow)
    except HashCollision:
        return _shard_stats(batches(), analyzer, StringSurfaceVocab(analyzer.name), narrow)


def _shard_stats(batches, analyzer: Analyzer, surface, narrow: bool):
    vocab: defaultdict[str, int] = defaultdict()
    vocab.default_factory = vocab.__len__  # new term -> next id, in first-occurrence order
    # surface id -> its terms' ids: flat[start[i] : start[i] + n[i]] (none for a stopword; several for a CJK run)
    start, n_of, flat = (np.zeros(0, dtype=np.int64) for _ in range(3))
    one_each = True  # every surface form has at most one term so far (flat[start[i]] then)
    nnz, dls = [], []
    cols, tfs = (Blocks(np.int32), Blocks(np.uint16)) if narrow else ([], [])
    small = np.iinfo(np.uint16).max
    for texts in batches:
        sids, counts = surface.add(texts)
        del texts
        if analyzer.identity:  # every surface form is its own term
            ids, n_terms = sids, len(surface)
        else:  # stopwords, stemming and CJK rules once per distinct surface form, in first-occurrence order
            if len(surface) > len(n_of):
                mapped = [[vocab[t] for t in analyzer.terms(s)] for s in surface.strings[len(n_of) :]]
                lens = np.fromiter(map(len, mapped), dtype=np.int64, count=len(mapped))
                start = np.concatenate([start, len(flat) + np.cumsum(lens) - lens])
                n_of = np.concatenate([n_of, lens])
                flat = np.concatenate([flat, np.fromiter(itertools.chain.from_iterable(mapped), dtype=np.int64)])
                one_each = one_each and bool((lens <= 1).all())
            ids, counts = _term_ids(sids, counts, start, n_of, flat, one_each)
            n_terms = len(vocab)
        del sids
        doc_nnz, col, tf = doc_term_counts(ids, counts, max(n_terms, 1))
        del ids
        nnz.append(doc_nnz)
        cols.append(col)
        if narrow and tfs.dtype == np.uint16 and len(tf) and int(tf.max()) > small:
            tfs.widen(np.int32)  # a term more than 65535 times in one document: tf as int32 throughout
        tfs.append(tf)
        dls.append(counts.astype(np.int64))
        del col, tf
    terms = surface.strings[:] if analyzer.identity else list(vocab)
    return terms, nnz, cols, tfs, dls


def _term_ids(sids, counts, start, n_of, flat, one_each: bool):
    """The term ids of tokens ``sids`` (``counts`` per document) and the terms per document."""
    lens = n_of[sids]
    if one_each:  # at most one term per token: drop the stopwords
        keep = lens > 0
        if keep.all():
            return flat[start[sids]], counts
        doc = np.repeat(np.arange(len(counts)), counts)
        return flat[start[sids[keep]]], np.bincount(doc[keep], minlength=len(counts))
    first = np.cumsum(lens) - lens  # where each token's terms start in the output
    pos = np.repeat(start[sids] - first, lens) + np.arange(int(lens.sum()))
    doc = np.repeat(np.arange(len(counts)), counts)
    return flat[pos], np.bincount(doc, weights=lens, minlength=len(counts)).astype(np.int64)


def doc_term_counts(ids: np.ndarray, counts: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Term frequencies per document from the term ids of consecutive documents (``counts``
    tokens each): the number of distinct terms per document (int64), and their term ids (int32,
    ascending within each document) and frequencies (int32), i.e. the CSR matrix of the documents
    with repeats added up. One sort of ``document * width + term`` keys (32-bit when they fit),
    then runs of equal keys; numpy's sort of integers is several times faster than sorting each
    document's ids on its own."""
    n = len(counts)
    if not len(ids):
        return np.zeros(n, dtype=np.int64), np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.int32)
    dt = np.uint32 if n * width < 2**32 else np.uint64
    key = np.repeat(np.arange(0, n * width, width, dtype=dt), counts)
    key += ids.astype(dt)
    key.sort()
    first = np.empty(len(key), dtype=bool)
    first[0] = True
    np.not_equal(key[1:], key[:-1], out=first[1:])
    pos = np.flatnonzero(first)
    del first
    unique = key[pos]
    del key
    tf = np.diff(pos, append=len(ids)).astype(np.int32)
    doc = unique // dt(width)
    col = (unique - doc * dt(width)).astype(np.int32)
    return np.bincount(doc.astype(np.intp), minlength=n).astype(np.int64), col, tf


class Parts:
    """A 1-D array kept as its consecutive parts (pass-1 triples of a streamed build): sliced
    in increasing order by pass 2, which frees the parts it has used (:meth:`release`)."""

    def __init__(self, parts: list[np.ndarray], dtype):
        self.parts = parts
        self.dtype = np.dtype(dtype)
        self.ends = np.cumsum([len(p) for p in parts], dtype=np.int64)

    def __len__(self) -> int:
        return int(self.ends[-1]) if len(self.ends) else 0

    def __getitem__(self, key: slice) -> np.ndarray:
        lo, hi = key.start, key.stop
        hi = min(len(self), hi)
        out = np.empty(max(hi - lo, 0), dtype=self.dtype)
        k = int(np.searchsorted(self.ends, lo, side="right"))
        pos = lo
        while pos < hi:
            start = int(self.ends[k]) - len(self.parts[k])
            take = min(hi, int(self.ends[k])) - pos
            out[pos - lo : pos - lo + take] = self.parts[k][pos - start : pos - start + take]
            pos += take
            k += 1
        return out

    def release(self, upto: int) -> None:
        """Free every part that ends at or before position ``upto``."""
        for k in range(int(np.searchsorted(self.ends, upto, side="right"))):
            self.parts[k] = None


def _drain(parts: list, dtype) -> np.ndarray:
    """The parts concatenated into one array of ``dtype``, each part freed once copied (the
    peak is the result plus one part, not twice the result)."""
    out = np.empty(sum(len(p) for p in parts), dtype=dtype)
    pos = 0
    for k in range(len(parts)):
        p = parts[k]
        out[pos : pos + len(p)] = p
        pos += len(p)
        parts[k] = None
    parts.clear()
    return out


def merge_vocabularies(shard_terms: Sequence[Sequence[str]]) -> tuple[list[str], list[np.ndarray]]:
    """Global vocabulary in first-occurrence order over the shards in order, and each
    shard's local -> global id map."""
    if not shard_terms:
        return [], []
    terms = list(shard_terms[0])  # the first shard's local ids are global ids
    vocab = dict(zip(terms, range(len(terms))))
    remaps = [np.arange(len(terms), dtype=np.int32)]
    for local in shard_terms[1:]:  # a shard's terms are distinct: its new ones get the next ids in order
        ids = np.fromiter(map(vocab.get, local, itertools.repeat(-1)), dtype=np.int32, count=len(local))
        new = np.flatnonzero(ids < 0)
        ids[new] = np.arange(len(terms), len(terms) + len(new), dtype=np.int32)
        added = [local[i] for i in new.tolist()]
        vocab.update(zip(added, range(len(terms), len(terms) + len(new))))
        terms += added
        remaps.append(ids)
    return terms, remaps


_CSC_CHUNK = 1 << 22  # triples converted per step of pass 2 (bounds its temporaries)


def finalize_shard(stats: ShardStats, remap: np.ndarray | None, n_terms: int, start: int) -> Shard:
    """Pass 2: the shard's triples as postings (CSC) over the global term ids (``remap``
    None: local ids are already global).

    A counting sort on the dense term ids: the postings are allocated once at their final
    size (offsets from the shard's df) and filled a chunk of documents at a time; each chunk
    is turned column-wise by scipy and its per-term runs are placed after the ones of the
    chunks before, so besides the triples and the postings only one chunk's temporaries
    exist (no second copy of the postings). Rows come out ascending within each term."""
    sp = lazylibs.scipy_sparse()
    doc_ptr, nnz, width = stats.indptr, len(stats.cols), max(n_terms, 1)
    counts = np.zeros(width, dtype=np.int64)
    for lo in range(0, nnz, _CSC_CHUNK):  # the shard's df over global ids, chunk by chunk (no remapped copy)
        c = stats.cols[lo : lo + _CSC_CHUNK]
        counts += np.bincount(c if remap is None else remap[c], minlength=width)
    indptr = np.zeros(width + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    nxt = indptr[:-1].copy()  # next free slot of each term
    del counts
    rows = _small_pages(nnz, np.int32)
    tf = _small_pages(nnz, stats.tf.dtype)
    d = 0
    while d < stats.n_docs:
        lo = int(doc_ptr[d])
        e = min(max(int(np.searchsorted(doc_ptr, lo + _CSC_CHUNK, side="right")) - 1, d + 1), stats.n_docs)
        hi = int(doc_ptr[e])
        if hi > lo:
            c = stats.cols[lo:hi] if remap is None else remap[stats.cols[lo:hi]]
            chunk = sp.csr_matrix((stats.tf[lo:hi], c, (doc_ptr[d : e + 1] - lo).astype(np.int64)),
                                  shape=(e - d, width)).tocsc()  # fmt: skip
            del c
            run = np.diff(chunk.indptr)
            if d == 0 and e == stats.n_docs:  # one chunk: it is the postings
                rows, tf = chunk.indices.astype(np.int32, copy=False), chunk.data
                break
            # slot of each entry: its term's next free slot + its position in the term's run;
            # the shift (slot - position in the chunk) is constant over a run: a cumulative sum
            starts = chunk.indptr[:-1][run > 0]
            shift = (nxt - chunk.indptr[:-1])[run > 0]
            dest = np.zeros(hi - lo, dtype=np.int64)
            dest[starts] = np.diff(shift, prepend=0)
            np.cumsum(dest, out=dest)
            dest += np.arange(hi - lo, dtype=np.int64)
            rows[dest] = chunk.indices + d
            tf[dest] = chunk.data
            nxt += run
            del chunk, run, starts, shift, dest
        if isinstance(stats.cols, Parts):  # a streamed build's triples: free what is placed
            stats.cols.release(hi)
            stats.tf.release(hi)
        d = e
    return Shard(start, stats.n_docs, indptr[: n_terms + 1], rows, tf)


def _small_pages(n: int, dtype) -> np.ndarray:
    """``np.empty(n, dtype)``, one of 1 MiB or more on its own anonymous mapping (returned to
    the system when freed) advised against huge pages. Pass 2 writes every term's run a little at a time, so nearly every 2 MiB huge page
    (which numpy asks for) would be touched by the first chunk and the whole postings array be
    resident while the triples still are; with 4 KiB pages a term's region becomes resident as it
    fills (measured: 1M x 150 tokens streamed, peak RSS 1.73 GiB with huge pages)."""
    nbytes = n * np.dtype(dtype).itemsize
    if nbytes < 1 << 20 or not hasattr(mmap, "MADV_NOHUGEPAGE"):
        return np.empty(n, dtype=dtype)
    m = mmap.mmap(-1, nbytes)
    m.madvise(mmap.MADV_NOHUGEPAGE)
    return np.frombuffer(m, dtype=dtype)


def merge_shard_stats(terms: Sequence[Sequence[str]], local_df: Sequence[np.ndarray]):
    """Global vocabulary, per-shard id maps and global df from the shards' pass-1 output."""
    vocab, remaps = merge_vocabularies(terms)
    df = np.zeros(len(vocab), dtype=np.int64)
    for remap, d in zip(remaps, local_df):
        df[remap] += d
    return vocab, remaps, df


# ------------------------------------------------------------------ pass drivers (local pool)

_TEXTS: Sequence[str] = ()  # set before forking the pool; children read their slice
_STATS_ARRAYS = ("indptr", "cols", "tf", "dl")
_SHARD_ARRAYS = ("indptr", "rows", "tf")


def _pass1_worker(args: tuple) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Pass 1 in a worker: triples to ``.npy`` files; returns terms, local df and dl."""
    lo, hi, analyzer, max_chars, prefix = args
    stats = shard_stats(_TEXTS[lo:hi], analyzer, max_chars)
    for name in _STATS_ARRAYS:
        np.save(f"{prefix}-{name}.npy", getattr(stats, name), allow_pickle=False)
    return stats.terms, np.bincount(stats.cols, minlength=len(stats.terms)), stats.dl


def _pass2_worker(args: tuple) -> str:
    """Pass 2 in a worker: reads its triples, writes its postings over global ids."""
    prefix, remap, n_terms, start = args
    stats = ShardStats([], **{n: np.load(f"{prefix}-{n}.npy", allow_pickle=False) for n in _STATS_ARRAYS})
    for name in _STATS_ARRAYS:
        os.unlink(f"{prefix}-{name}.npy")
    shard = finalize_shard(stats, remap, n_terms, start)
    del stats
    for name in _SHARD_ARRAYS:
        np.save(f"{prefix}-final-{name}.npy", getattr(shard, name), allow_pickle=False)
    return prefix


def shard_bounds(n_docs: int, shards: int) -> list[tuple[int, int]]:
    """``shards`` contiguous document ranges of near-equal size (never empty)."""
    k = max(1, min(int(shards), n_docs))
    cuts = [n_docs * i // k for i in range(k + 1)]
    return [(cuts[i], cuts[i + 1]) for i in range(k)]


def _build_parallel(docids, texts, analyzer, bounds, jobs: int, max_chars) -> "InvertedIndex | None":
    """Both passes of every shard in a forked pool (None where fork is unavailable); the
    parent only merges vocabularies and reads the finished postings."""
    global _TEXTS

    if "fork" not in mp.get_all_start_methods():
        return None
    with tempfile.TemporaryDirectory(prefix="clir-eval-shards-") as tmp:
        prefixes = [f"{tmp}/shard-{k}" for k in range(len(bounds))]
        _TEXTS = texts
        try:
            with mp.get_context("fork").Pool(min(jobs, len(bounds))) as pool:
                args = [(lo, hi, analyzer, max_chars, pre) for (lo, hi), pre in zip(bounds, prefixes)]
                first = pool.map(_pass1_worker, args, chunksize=1)
                terms, remaps, df = merge_shard_stats([f[0] for f in first], [f[1] for f in first])
                dl = np.concatenate([f[2] for f in first])
                del first
                args = [(pre, remap, len(terms), lo) for pre, remap, (lo, _) in zip(prefixes, remaps, bounds)]
                done = pool.map(_pass2_worker, args, chunksize=1)
        finally:
            _TEXTS = ()
        parts = []
        for pre, (lo, hi) in zip(done, bounds):
            arrays = {n: np.load(f"{pre}-final-{n}.npy", allow_pickle=False) for n in _SHARD_ARRAYS}
            parts.append(Shard(lo, hi - lo, **arrays))
    return InvertedIndex(list(docids), terms, df, dl, parts)


def build_inverted_index(docids: Sequence[str], texts: Sequence[str], analyzer: Analyzer, shards: int = 1,
                         jobs: int = 1, max_chars: int | None = None) -> "InvertedIndex":  # fmt: skip
    """Index ``texts`` in ``shards`` document ranges; with ``jobs`` > 1 both passes of the
    shards run in a forked process pool. The result does not depend on ``shards`` or ``jobs``."""
    bounds = shard_bounds(len(texts), shards)
    if jobs > 1 and len(bounds) > 1:
        built = _build_parallel(docids, texts, analyzer, bounds, jobs, max_chars)
        if built is not None:
            return built
    stats = [shard_stats(texts[lo:hi], analyzer, max_chars) for lo, hi in bounds]
    local_df = [np.bincount(s.cols, minlength=len(s.terms)) for s in stats]
    terms, remaps, df = merge_shard_stats([s.terms for s in stats], local_df)
    dl = np.concatenate([s.dl for s in stats])
    parts = []
    for k, (lo, _) in enumerate(bounds):  # pass 2, freeing each shard's triples as it goes
        parts.append(finalize_shard(stats[k], None if len(bounds) == 1 else remaps[k], len(terms), lo))
        stats[k] = None
    return InvertedIndex(list(docids), terms, df, dl, parts)


def build_streamed(stream, analyzer: Analyzer, max_chars: int | None = None) -> "InvertedIndex":
    """One index (one shard) from a collection read batch by batch
    (:class:`~clir_eval.io.readers.DocumentStream`): no text outlives its batch, the triples
    are freed part by part as pass 2 places them; the result (and its files) equals
    :func:`build_inverted_index` with one shard."""
    stats = stream_stats(stream.batches, analyzer, max_chars)
    width = len(stats.terms)
    df = np.zeros(width, dtype=np.int64)
    for lo in range(0, len(stats.cols), _CSC_CHUNK):
        df += np.bincount(stats.cols[lo : lo + _CSC_CHUNK], minlength=width)
    shard = finalize_shard(stats, None, width, 0)
    terms, dl = stats.terms, stats.dl
    del stats
    return InvertedIndex(list(stream.ids), terms, df, dl, [shard])


# ------------------------------------------------------------------ the index and its files


class InvertedIndex:
    """Vocabulary, df, dl and the shards' postings; see the module docstring."""

    def __init__(self, docids: list[str], terms: list[str], df: np.ndarray, dl: np.ndarray, shards: list[Shard]):
        self.docids = docids
        self.terms = terms
        self.df = df
        self.dl = dl
        self.shards = shards
        self.vocab = dict(zip(terms, range(len(terms))))

    @property
    def n_docs(self) -> int:
        return len(self.dl)

    @property
    def total_tokens(self) -> int:
        return int(self.dl.sum())

    def postings(self, term_id: int):
        """Yield (shard, rows, tf) of one term, shard by shard."""
        for s in self.shards:
            lo, hi = s.indptr[term_id], s.indptr[term_id + 1]
            yield s, s.rows[lo:hi], s.tf[lo:hi]

    def _arrays(self) -> dict[str, np.ndarray]:
        out = {"dl": self.dl, "df": self.df}
        for k, s in enumerate(self.shards):
            out |= {f"shard-{k}-indptr": s.indptr, f"shard-{k}-rows": s.rows, f"shard-{k}-tf": s.tf}
        return out

    def save(self, directory: PathLike, meta: dict) -> None:
        """Write the index into ``directory``; ``index.json`` (with ``meta``) goes last."""
        d = Path(directory)
        if d.exists() and not d.is_dir():
            raise UserError(f"index path {d} exists and is not a directory")
        d.mkdir(parents=True, exist_ok=True)
        (d / "index.json").unlink(missing_ok=True)
        files = {}
        for name, obj in [("docids.json", self.docids), ("terms.json", self.terms)]:
            write_json(d / name, obj, indent=None)
            files[name] = _digest(d / name)
        for name, arr in self._arrays().items():
            with atomic_write(d / f"{name}.npy", "wb") as fh:
                np.save(fh, np.ascontiguousarray(arr), allow_pickle=False)
            files[f"{name}.npy"] = _digest(d / f"{name}.npy")
        header = {
            "format": INDEX_FORMAT,
            "n_docs": self.n_docs,
            "n_terms": len(self.terms),
            "shards": [[s.start, s.n_docs] for s in self.shards],
            "meta": meta,
            "files": files,
        }
        write_json(d / "index.json", header)


def _digest(path: Path) -> dict:
    with open(path, "rb") as fh:
        h = hashlib.file_digest(fh, "sha256").hexdigest()
    return {"bytes": os.path.getsize(path), "sha256": h}


def read_index_header(directory: PathLike) -> dict:
    """The parsed ``index.json`` of an index directory (format checked, files not yet)."""
    d = Path(directory)
    try:
        header = json.loads((d / "index.json").read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise IndexCorrupt(f"no index in {d} (index.json missing); build one first") from None
    except (OSError, ValueError) as e:
        raise IndexCorrupt(f"{d / 'index.json'}: unreadable index header ({e}); delete {d} and rebuild") from None
    if not isinstance(header, dict) or header.get("format") != INDEX_FORMAT:
        found = header.get("format") if isinstance(header, dict) else None
        raise IndexCorrupt(f"{d} does not hold a {INDEX_FORMAT} index (format {found!r}); delete it and rebuild")
    return header


def _fail(d: Path, what: str) -> IndexCorrupt:
    return IndexCorrupt(f"index in {d} is corrupt or incomplete: {what}; delete {d} and rebuild")


def _read_verified(d: Path, name: str, files: dict) -> bytes:
    want = files.get(name)
    if not isinstance(want, dict):
        raise _fail(d, f"index.json lists no checksum for {name}")
    try:
        data = (d / name).read_bytes()
    except OSError as e:
        raise _fail(d, f"cannot read {name} ({e.strerror or e})") from None
    if len(data) != want.get("bytes") or hashlib.sha256(data).hexdigest() != want.get("sha256"):
        raise _fail(d, f"{name} does not match its checksum in index.json (altered or truncated)")
    return data


def _load_npy(d: Path, name: str, files: dict, dtypes: tuple, length: int | None) -> np.ndarray:
    data = _read_verified(d, f"{name}.npy", files)
    try:
        arr = np.load(io.BytesIO(data), allow_pickle=False)
    except (ValueError, OSError, EOFError) as e:
        raise _fail(d, f"{name}.npy is not a numpy array ({e})") from None
    if arr.ndim != 1 or arr.dtype not in dtypes or (length is not None and len(arr) != length):
        raise _fail(d, f"{name}.npy has dtype {arr.dtype} and shape {arr.shape}, expected {length} values")
    return arr


def _load_json_list(d: Path, name: str, files: dict, length: int) -> list[str]:
    try:
        obj = json.loads(_read_verified(d, name, files).decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise _fail(d, f"{name} is not valid JSON ({e})") from None
    if not isinstance(obj, list) or len(obj) != length or not all(isinstance(x, str) for x in obj) or len(set(obj)) != length:
        raise _fail(d, f"{name} is not a list of {length} distinct strings")
    return obj


def load_inverted_index(directory: PathLike) -> tuple[InvertedIndex, dict]:
    """Load and verify an index written by :meth:`InvertedIndex.save`; returns (index, meta)."""
    d = Path(directory)
    h = read_index_header(d)
    try:
        n_docs, n_terms, bounds, files = int(h["n_docs"]), int(h["n_terms"]), h["shards"], h["files"]
        bounds = [(int(a), int(b)) for a, b in bounds]
    except (KeyError, TypeError, ValueError):
        raise _fail(d, "index.json lacks n_docs, n_terms, shards or files") from None
    if not isinstance(files, dict) or n_docs <= 0 or n_terms < 0 or not bounds:
        raise _fail(d, "index.json has bad counts")
    if [a for a, _ in bounds] != [sum(b for _, b in bounds[:i]) for i in range(len(bounds))] or sum(b for _, b in bounds) != n_docs:
        raise _fail(d, "shard ranges do not cover the documents")
    docids = _load_json_list(d, "docids.json", files, n_docs)
    terms = _load_json_list(d, "terms.json", files, n_terms)
    dl = _load_npy(d, "dl", files, (np.dtype(np.int64),), n_docs)
    df = _load_npy(d, "df", files, (np.dtype(np.int64),), n_terms)
    shards, df_seen, dl_seen = [], np.zeros(n_terms, dtype=np.int64), np.zeros(n_docs, dtype=np.int64)
    for k, (start, size) in enumerate(bounds):
        indptr = _load_npy(d, f"shard-{k}-indptr", files, (np.dtype(np.int64),), n_terms + 1)
        if indptr[0] != 0 or np.any(np.diff(indptr) < 0):
            raise _fail(d, f"shard-{k}-indptr.npy is not a monotone offset array")
        nnz = int(indptr[-1])
        rows = _load_npy(d, f"shard-{k}-rows", files, (np.dtype(np.int32),), nnz)
        tf = _load_npy(d, f"shard-{k}-tf", files, (np.dtype(np.uint16), np.dtype(np.int32)), nnz)
        if nnz and (rows.min() < 0 or rows.max() >= size or tf.min() < 1):
            raise _fail(d, f"shard {k} has document offsets out of range or term frequencies < 1")
        col_start = np.zeros(nnz, dtype=bool)
        col_start[indptr[:-1][np.diff(indptr) > 0]] = True
        if np.any((np.diff(rows) <= 0) & ~col_start[1:]):
            raise _fail(d, f"shard {k} has postings out of order")
        df_seen += np.diff(indptr)
        dl_seen[start : start + size] = np.bincount(rows, weights=tf, minlength=size).astype(np.int64)
        shards.append(Shard(start, size, indptr, rows, tf))
    if not np.array_equal(df_seen, df) or not np.array_equal(dl_seen, dl):
        raise _fail(d, "df.npy or dl.npy disagrees with the postings")
    meta = h.get("meta")
    return InvertedIndex(docids, terms, df, dl, shards), meta if isinstance(meta, dict) else {}
