"""TREC run and qrels files parsed column by column with numpy: the fast path of
:func:`clir_eval.io.trec.read_run` and :func:`~clir_eval.io.trec.read_qrels`.

The file is cut into blocks of whole lines; in each block the tokens (runs of bytes other than
whitespace) are found at once, every line must hold six of them (a run) or four (qrels), and the
columns are checked together: a run's rank an integer and its score a finite number, a qrels label an
integer in C int range. Only document and query ids become Python strings; a run's scores stay as
their bytes and are converted with ``float()`` when a ranking is first used with its scores
(:class:`FileRanking`), so a run scored by its order alone (what pytrec_eval is given) never converts
them. A run's document twice for a query is found by hashing each block's ids.

On the files it takes it accepts exactly what the line-by-line parse accepts and reads it the same way:
ASCII text whose only control bytes are whitespace to ``str.split()`` (tab, line feed, vertical tab,
form feed, carriage return, \\x1c-\\x1f), with no token longer than :data:`MAX_TOKEN` bytes. A rank,
score or label whose form it does not recognise at once is decided by ``int()``/``float()``, as the
line parse decides it. ``parse_*_bytes`` return None for any other file (the whole-file text parse reads
it) and raise :class:`Malformed` when a line is wrong (the line parse then names it).
"""

from __future__ import annotations

import math
import operator
from typing import Any, Iterator, Mapping

from .. import lazylibs

BLOCK = 1 << 20
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


def _not_digits(np, m):
    """Where a token's byte (zero after its end) is not a digit."""
    return ((m - 48) >= 10) & (m != 0)


def _unusual_scores(np, m, column) -> list[int]:
    """The rows whose score is not ``[+-]digits[.digits]`` (any such is a finite number: at most MAX_TOKEN
    digits, no exponent); ``float()`` decides those."""
    starts, ends = column
    digit = (m - 48) < 10
    dot = m == 46
    other = ~(digit | dot) & (m != 0)
    other[:, 0] &= (m[:, 0] != 43) & (m[:, 0] != 45)  # a sign may start it
    at = np.flatnonzero(dot) // m.shape[1]
    two_dots = at[1:][at[1:] == at[:-1]]
    # with only digits, one dot and a leading sign, a score without a digit has at most 2 characters
    no_digit = np.flatnonzero(~digit[:, 0] & ~digit[:, min(1, m.shape[1] - 1)] & (ends - starts < 3))
    return sorted({*_rows_with(np, other), *two_dots.tolist(), *no_digit.tolist()})


def _repeated(np, docs, query) -> bool:
    """Whether some query (``query``: each row's number) may hold a row twice: each row (64-bit words) hashed
    with its query, the hashes sorted; equal hashes, rare unless a row is repeated, are checked exactly by the
    caller."""
    words = docs.view(np.uint64)
    h = words[:, 0].copy()
    for k in range(1, words.shape[1]):
        h *= np.uint64(0x9E3779B97F4A7C15)
        h ^= words[:, k]
    h ^= query.astype(np.uint64) * np.uint64(0xC2B2AE3D27D4EB4F)
    h.sort()
    return bool((h[1:] == h[:-1]).any())


def _blocks(data: bytes) -> Iterator[tuple[int, int]]:
    lo = 0
    while lo < len(data):
        hi = data.find(b"\n", lo + BLOCK)
        hi = len(data) if hi < 0 else hi + 1
        yield lo, hi
        lo = hi


class _NotHere(Exception):
    """The file is valid, perhaps, but not of the kind this parse takes."""


class _Block:
    """The lines of ``data[lo:hi]`` as ``width`` columns of tokens: ``column(c)`` the c-th tokens' (starts, ends),
    offsets in the block; ``matrix`` the tokens as rows of bytes. ``rows == 0`` for a block of blank lines."""

    def __init__(self, np, data: bytes, lo: int, hi: int, width: int):
        a = np.frombuffer(data, np.uint8, count=hi - lo, offset=lo)
        if ((a < 9) | ((a - 14) < 14)).any():  # control bytes that str.split() does not take for whitespace
            raise _NotHere
        starts, ends = _tokens(np, a)
        if len(starts) % width:
            raise Malformed
        self.np, self.data, self.lo, self.width, self.rows = np, data, lo, width, len(starts) // width
        if not self.rows:
            return
        nl = np.flatnonzero(a == 10)
        first = nl.searchsorted(starts[0::width])
        if (first != nl.searchsorted(ends[width - 1::width])).any() or (first[1:] <= first[:-1]).any():
            raise Malformed  # a line with fewer or more tokens
        if int((ends - starts).max()) > MAX_TOKEN:
            raise _NotHere
        padded = np.full(len(a) + MAX_TOKEN + 8, 32, np.uint8)
        padded[:len(a)] = a
        self._window = np.lib.stride_tricks.sliding_window_view(padded, MAX_TOKEN + 8)
        self._starts, self._ends = starts, ends

    def column(self, c: int):
        return self._starts[c::self.width], self._ends[c::self.width]

    def matrix(self, c: int, fill: int, words: bool = False):
        return _matrix(self.np, self._window, *self.column(c), fill, words)

    def text(self, c: int, row: int) -> bytes:
        starts, ends = self.column(c)
        return self.data[self.lo + starts[row]:self.lo + ends[row]]

    def groups(self, c: int = 0):
        """Where each run of rows with the same token in column ``c`` starts, and that token as text."""
        np = self.np
        qids = self.matrix(c, 0, words=True).view(np.uint64)
        heads = np.flatnonzero(np.concatenate(([True], (qids[1:] != qids[:-1]).any(axis=1))))
        return heads, qids[heads].view(np.uint8).tobytes().decode().replace("\0", " ").split()


def _is_int(token: bytes) -> bool:
    int(token)
    return True


def _is_finite(token: bytes) -> bool:
    return math.isfinite(float(token))


def _check(block: _Block, c: int, rows, accept) -> None:
    """``accept(token)`` (:func:`_is_int`, :func:`_is_finite`: ValueError or False for a bad one) of each of
    these rows' tokens in column ``c``."""
    for i in rows:
        try:
            if not accept(block.text(c, i)):
                raise Malformed
        except ValueError:
            raise Malformed from None


def _run_block(block: _Block):
    """A run block's (query id change points, query ids, document ids, score bytes, tag, whether a document may
    be repeated)."""
    np = block.np
    _check(block, 3, _rows_with(np, _not_digits(np, block.matrix(3, 0))), _is_int)
    scores = block.matrix(4, 0)
    _check(block, 4, _unusual_scores(np, scores, block.column(4)), _is_finite)
    heads, qids = block.groups()
    number: dict[str, int] = {}  # each query of the block, in order of first appearance
    query = np.repeat([number.setdefault(q, len(number)) for q in qids], np.diff(heads, append=block.rows))
    docs = block.matrix(2, 32, words=True)
    repeated = _repeated(np, docs, query)
    ids, scores = docs.tobytes().decode().split(), scores.view(f"S{scores.shape[1]}").ravel()
    if len(number) < len(qids):  # queries interleaved: each query's rows together, in file order
        order = np.argsort(query, kind="stable")
        ids, scores = list(operator.itemgetter(*order.tolist())(ids)), scores[order]
        heads = np.concatenate(([0], np.cumsum(np.bincount(query))[:-1]))
        qids = list(number)
    return heads, qids, ids, scores, block.text(5, block.rows - 1).decode(), repeated


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
            block = _Block(np, data, lo, hi, 6)
            if not block.rows:
                continue
            heads, qids, docs, score_bytes, tag, repeated = _run_block(block)
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


def _labels(block: _Block, lo: int, hi: int) -> list[int]:
    """Column 3 of a qrels block as integers in ``lo..hi``: digits at once (up to 9: below 2**31), others by
    ``int()`` (as the line parse)."""
    np = block.np
    m = block.matrix(3, 0)
    value = np.zeros(block.rows, np.int64)
    for j in range(min(m.shape[1], 9)):
        digit = m[:, j].astype(np.int64) - 48
        value = np.where(m[:, j] != 0, value * 10 + digit, value)
    labels = value.tolist()
    for i in _rows_with(np, _not_digits(np, m[:, :9])) + np.flatnonzero(m[:, 9:].any(axis=1)).tolist():
        try:
            labels[i] = int(block.text(3, i))
        except ValueError:
            raise Malformed from None
        if not lo <= labels[i] <= hi:
            raise Malformed
    return labels


def parse_qrels_bytes(data: bytes, lo: int, hi: int) -> dict[str, dict[str, int]] | None:
    """``{qid: {docid: label}}`` of a qrels file's bytes (labels integers in ``lo..hi``; a document judged twice
    for a query with the same label once), or None when the file is not of the kind this parse takes;
    :class:`Malformed` when a line is wrong."""
    if not data.isascii():
        return None
    np = lazylibs.numpy()
    judgements: dict[str, dict[str, int]] = {}
    try:
        for b_lo, b_hi in _blocks(data):
            block = _Block(np, data, b_lo, b_hi, 4)
            if not block.rows:
                continue
            labels = _labels(block, lo, hi)
            heads, qids = block.groups()
            docs = block.matrix(2, 32, words=True).tobytes().decode().split()
            bounds = heads.tolist() + [len(docs)]
            for qid, i, j in zip(qids, bounds, bounds[1:]):
                got = judgements.get(qid)
                fresh = dict(zip(docs[i:j], labels[i:j]))
                if got is None and len(fresh) == j - i:
                    judgements[qid] = fresh
                    continue
                got = judgements.setdefault(qid, {})
                for d, rel in zip(docs[i:j], labels[i:j]):
                    if got.setdefault(d, rel) != rel:
                        raise Malformed  # judged twice with different labels
    except _NotHere:
        return None
    return judgements
