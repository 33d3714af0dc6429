"""A TREC run file parsed column by column with numpy: the fast path of :func:`clir_eval.io.trec.read_run`.

The file is cut into blocks of whole lines; in each block the tokens (runs of bytes other than
whitespace) are found at once, every line must hold six of them, and the columns are checked
together: the rank an integer, the score a finite number. Only the document ids are made into
Python strings; the scores stay as their bytes and are converted with ``float()`` when a ranking
is first used with its scores (:class:`FileRanking`), so a run scored by its order alone (what
pytrec_eval is given) never converts them.

It accepts exactly what the line-by-line parse accepts, and reads it the same way, on the files it
takes: ASCII text without control characters other than tab, line feed, vertical tab, form feed and
carriage return, and no token longer than :data:`MAX_TOKEN` bytes. A document id, rank or score
whose form it does not recognise at once is decided by ``int()``/``float()`` (as the line parse
decides it). Any other file is left to the line parse: :func:`parse_run_bytes` returns None when the
file is not of that kind, and raises :class:`Malformed` when a line is wrong (the line parse then
names it).
"""

from __future__ import annotations

import math
from typing import Any, Iterator, Mapping

from .. import lazylibs

BLOCK = 1 << 22
"""Bytes per block (whole lines): bounds the temporary arrays to a few times this."""
MAX_TOKEN = 128
"""The longest token (document id, query id, rank, score) the column parse takes; a file with a longer one is
read by the line parse."""


class Malformed(Exception):
    """A line the parse does not accept."""


class FileRanking(Mapping[str, list[tuple[str, float]]]):
    """``{qid: [(docid, score), ...]}`` of a parsed run file, in file order: the document ids as
    text, the scores as the file's bytes until a query's list is first asked for (then ``float()``
    of each, kept)."""

    def __init__(self, docids: dict[str, list[str]], scores: dict[str, Any]):
        self._docids = docids
        self._scores = scores  # qid -> numpy bytes array (dtype S) of the score column
        self._lists: dict[str, list[tuple[str, float]]] = {}

    def __getitem__(self, qid: str) -> list[tuple[str, float]]:
        got = self._lists.get(qid)
        if got is None:
            docs = self._docids[qid]
            got = self._lists[qid] = list(zip(docs, map(float, self._scores[qid].tolist())))
        return got

    def __iter__(self) -> Iterator[str]:
        return iter(self._docids)

    def __len__(self) -> int:
        return len(self._docids)

    def __repr__(self) -> str:
        return repr(dict(self.items()))

    def docids(self, qid: str) -> list[str]:
        """The query's document ids in file order (a new list; empty for a query the run lacks)."""
        return list(self._docids.get(qid, ()))


def _tokens(np, a):
    """Start and end offsets of the runs of non-whitespace bytes of ``a`` (ASCII; every byte <= 32 separates)."""
    edge = np.ones(len(a) + 2, bool)
    np.less_equal(a, 32, out=edge[1:-1])
    t = np.flatnonzero(edge[1:] != edge[:-1])
    return t[0::2], t[1::2]


def _matrix(np, window, starts, ends, fill: int, words: bool = False):
    """The tokens as rows of bytes, ``fill`` after each token's end: as wide as the widest token, or (``words``)
    the next multiple of 8 above it (rows that can be read as 64-bit words, with at least one ``fill`` byte)."""
    widths = ends - starts
    width = int(widths.max())
    if words:
        width = (width // 8 + 1) * 8
    m = window[starts, :width]
    return np.where(np.arange(width) < widths[:, None], m, np.uint8(fill))


def _rows_with(np, mask) -> list[int]:
    """The rows of a 2-d mask with a True anywhere (np.unique would import numpy.ma, ≈ 10 ms)."""
    return sorted(set((np.flatnonzero(mask) // mask.shape[1]).tolist()))


def _check_ranks(np, m, data, lo, starts, ends):
    """Every rank is an integer: all digits at once, others by ``int()`` (as the line parse)."""
    for i in _rows_with(np, ((m - 48) >= 10) & (m != 0)):
        try:
            int(data[lo + starts[i]:lo + ends[i]])
        except ValueError:
            raise Malformed from None


def _check_scores(np, m, data, lo, starts, ends):
    """Every score is a finite number: ``[+-]digits[.digits]`` at once (finite: at most MAX_TOKEN digits, no
    exponent), others by ``float()`` (as the line parse)."""
    digit = (m - 48) < 10
    dot = m == 46
    other = ~(digit | dot) & (m != 0)
    other[:, 0] &= (m[:, 0] != 43) & (m[:, 0] != 45)  # a sign may start it
    at = np.flatnonzero(dot) // m.shape[1]
    two_dots = at[1:][at[1:] == at[:-1]]
    # with only digits, one dot and a leading sign, a score without a digit has at most 2 characters
    no_digit = np.flatnonzero(~digit[:, 0] & ~digit[:, min(1, m.shape[1] - 1)] & (ends - starts < 3))
    for i in sorted({*_rows_with(np, other), *two_dots.tolist(), *no_digit.tolist()}):
        try:
            value = float(data[lo + starts[i]:lo + ends[i]])
        except ValueError:
            raise Malformed from None
        if not math.isfinite(value):
            raise Malformed


def _repeated(np, docs, heads) -> bool:
    """Whether some group of rows (``heads``: where each starts) may hold a row twice: each row (64-bit words)
    hashed with its group, the hashes sorted; equal hashes, rare unless a row is repeated, are checked exactly
    by the caller."""
    words = docs.view(np.uint64)
    h = words[:, 0].copy()
    for k in range(1, words.shape[1]):
        h *= np.uint64(0x9E3779B97F4A7C15)
        h ^= words[:, k]
    group = np.zeros(len(h), np.uint64)
    group[heads[1:]] = 1
    h ^= np.cumsum(group, dtype=np.uint64) * np.uint64(0xC2B2AE3D27D4EB4F)
    h.sort()
    return bool((h[1:] == h[:-1]).any())


def _blocks(data: bytes) -> Iterator[tuple[int, int]]:
    lo = 0
    while lo < len(data):
        hi = data.find(b"\n", lo + BLOCK)
        hi = len(data) if hi < 0 else hi + 1
        yield lo, hi
        lo = hi


def _block(np, data: bytes, lo: int, hi: int):
    """One block's rows: (query id change points, query ids, document ids, score bytes, tag, whether a
    document may be repeated) or None (no rows)."""
    a = np.frombuffer(data, np.uint8, count=hi - lo, offset=lo)
    if ((a < 9) | ((a - 14) < 14)).any():  # control bytes that str.split() does not take for whitespace
        raise _NotHere
    starts, ends = _tokens(np, a)
    if len(starts) % 6:
        raise Malformed
    if not len(starts):
        return None
    nl = np.flatnonzero(a == 10)
    first = nl.searchsorted(starts[0::6])
    if (first != nl.searchsorted(ends[5::6])).any() or (first[1:] <= first[:-1]).any():
        raise Malformed  # a line with fewer or more than six tokens
    if int((ends - starts).max()) > MAX_TOKEN:
        raise _NotHere
    padded = np.full(len(a) + MAX_TOKEN + 8, 32, np.uint8)
    padded[:len(a)] = a
    window = np.lib.stride_tricks.sliding_window_view(padded, MAX_TOKEN + 8)
    cols = [(starts[c::6], ends[c::6]) for c in range(6)]
    _check_ranks(np, _matrix(np, window, *cols[3], 0), data, lo, *cols[3])
    scores = _matrix(np, window, *cols[4], 0)
    _check_scores(np, scores, data, lo, *cols[4])
    qids = _matrix(np, window, *cols[0], 0, words=True).view(np.uint64)
    heads = np.flatnonzero(np.concatenate(([True], (qids[1:] != qids[:-1]).any(axis=1))))
    qid_text = qids[heads].view(np.uint8).tobytes().decode().replace("\0", " ").split()
    docs = _matrix(np, window, *cols[2], 32, words=True)
    tag = data[lo + cols[5][0][-1]:lo + cols[5][1][-1]].decode()
    return heads, qid_text, docs.tobytes().decode().split(), scores.view(f"S{scores.shape[1]}").ravel(), tag, \
        _repeated(np, docs, heads)


class _NotHere(Exception):
    """The file is valid, perhaps, but not of the kind this parse takes."""


def parse_run_bytes(data: bytes) -> tuple[FileRanking, str | None] | None:
    """The rankings and last tag of a run file's bytes, or None when the file is not of the kind this
    parse takes; :class:`Malformed` when a line is wrong."""
    if not data.isascii():
        return None
    np = lazylibs.numpy()
    docids: dict[str, list[str]] = {}
    scores: dict[str, list[Any]] = {}
    check: set[str] = set()  # queries whose documents are checked for repeats one by one
    tag = None
    try:
        for lo, hi in _blocks(data):
            rows = _block(np, data, lo, hi)
            if rows is None:
                continue
            heads, qids, docs, score_bytes, tag, repeated = rows
            bounds = heads.tolist() + [len(docs)]
            for qid, i, j in zip(qids, bounds, bounds[1:]):
                if repeated:
                    check.add(qid)
                if qid in docids:
                    check.add(qid)
                    docids[qid].extend(docs[i:j])
                    scores[qid].append(score_bytes[i:j])
                else:
                    docids[qid] = docs[i:j]
                    scores[qid] = [score_bytes[i:j]]
    except _NotHere:
        return None
    for qid in check:
        if len(set(docids[qid])) != len(docids[qid]):
            raise Malformed  # a document twice for a query
    joined = {q: s[0] if len(s) == 1 else np.concatenate(s) for q, s in scores.items()}
    return FileRanking(docids, joined), tag
