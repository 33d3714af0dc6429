"""chrF statistics of items (documents or segments) counted with numpy: the same integers as
sacrebleu's ``CHRF`` segment statistics (per character order n: hypothesis n-grams, reference
n-grams, matched n-grams = sum over n-grams of min(hypothesis count, reference count)), without
a Python ``Counter`` per document and order.

Each text is stripped of whitespace as sacrebleu does (``''.join(text.split())``, after
lowercasing when asked). The reference's distinct characters get small ids (1..A); a hypothesis
character absent from the reference gets 0, and an n-gram holding one cannot match, so it is
only counted (the counts are lengths). Every n-gram is then one integer: its characters' ids
side by side, the document's number above them; a sort per order gives the counts and a
``searchsorted`` against the reference's sorted n-grams the matches. The reference side is kept
for the next system scored against the same reference texts.

Applies to character n-grams only (``word_order`` 0), without whitespace, with one reference,
and when the ids fit 63 bits; :func:`chrf_item_stats` returns None otherwise and the caller uses
sacrebleu's own statistics.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

_REFS: dict[tuple, "_Side"] = {}
_REFS_MAX = 2
CHUNK_CHARS = 4_000_000  # items are counted in runs of documents of about this many characters (bounded memory)


class _Side:
    """One side's texts as character ids, with each text's length and each position's text."""

    def __init__(self, texts: list[str], chars: np.ndarray | None):
        self.lens = np.array([len(t) for t in texts], dtype=np.int64)
        codes = np.frombuffer("".join(texts).encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
        if chars is None:  # the reference: its own characters
            chars = np.unique(codes)
        self.chars = chars
        pos = np.searchsorted(chars, codes)
        found = pos < len(chars)
        found[found] = chars[pos[found]] == codes[found]
        self.ids = np.where(found, pos + 1, 0).astype(np.int64)
        self.doc = np.repeat(np.arange(len(texts), dtype=np.int64), self.lens)
        self.ngrams: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] = {}

    def keys(self, n: int, bits: int, shift: int) -> np.ndarray:
        """Every n-gram within one text and without an unknown character, as one integer."""
        total = len(self.ids)
        if total < n:
            return np.zeros(0, np.int64)
        m = total - n + 1
        code = self.ids[:m].copy()
        ok = self.ids[:m] != 0
        for k in range(1, n):
            nxt = self.ids[k:k + m]
            code |= nxt << (bits * k)
            ok &= nxt != 0
        ok &= self.doc[:m] == self.doc[n - 1:n - 1 + m]
        return (self.doc[:m][ok] << shift) | code[ok]

    def counted(self, n: int, bits: int, shift: int) -> tuple[np.ndarray, np.ndarray]:
        if (n, shift) not in self.ngrams:
            self.ngrams[n, shift] = np.unique(self.keys(n, bits, shift), return_counts=True)
        return self.ngrams[n, shift]


def _texts(lines: Sequence[str], lowercase: bool) -> list[str]:
    return ["".join((t.lower() if lowercase else t).split()) for t in lines]


def _reference(refs: Sequence[str], lowercase: bool) -> _Side:
    key = (lowercase, tuple(refs))
    side = _REFS.pop(key, None)
    if side is None:
        side = _Side(_texts(refs, lowercase), None)
    _REFS[key] = side  # most recently used last
    while len(_REFS) > _REFS_MAX:
        del _REFS[next(iter(_REFS))]
    return side


def chrf_item_stats(metric, hyps: Sequence[str], refs: Sequence[Sequence[str]]) -> np.ndarray | None:
    """sacrebleu's chrF statistics of every item (rows as ``metric.segment_stats`` gives them),
    or None where this counting does not apply (see the module docstring)."""
    p = metric.params
    order = int(p["char_order"])
    if p["word_order"] or p["whitespace"] or len(refs) != 1 or len(refs[0]) != len(hyps) or not hyps:
        return None
    cuts = _chunks([len(h) + len(r) for h, r in zip(hyps, refs[0])])
    if len(cuts) > 2:
        parts = [chrf_item_stats(metric, hyps[a:b], [refs[0][a:b]]) for a, b in zip(cuts, cuts[1:])]
        return None if any(p is None for p in parts) else np.concatenate(parts)
    ref = _reference(refs[0], metric.lowercase)
    bits = max(1, int(len(ref.chars)).bit_length())
    shift = bits * order
    if shift + max(1, int(len(hyps)).bit_length()) > 63:
        return None
    hyp = _Side(_texts(hyps, metric.lowercase), ref.chars)
    n_docs = len(hyps)
    out = np.zeros((n_docs, 3 * order), dtype=np.int64)
    for n in range(1, order + 1):
        ref_count = np.maximum(ref.lens - n + 1, 0)
        hyp_count = np.maximum(hyp.lens - n + 1, 0)
        uniq, counts = np.unique(hyp.keys(n, bits, shift), return_counts=True)
        r_uniq, r_counts = ref.counted(n, bits, shift)
        pos = np.searchsorted(r_uniq, uniq)
        hit = pos < len(r_uniq)
        hit[hit] = r_uniq[pos[hit]] == uniq[hit]
        match = np.bincount(uniq[hit] >> shift, weights=np.minimum(counts[hit], r_counts[pos[hit]]),
                            minlength=n_docs)
        c = 3 * (n - 1)
        out[:, c] = np.where(ref_count > 0, hyp_count, 0)
        out[:, c + 1] = ref_count
        out[:, c + 2] = np.rint(match).astype(np.int64)
    return out


def _chunks(sizes: list[int]) -> list[int]:
    """Boundaries of consecutive runs of items of at most :data:`CHUNK_CHARS` characters (an item
    longer than that is a run of its own)."""
    cuts, acc = [0], 0
    for i, n in enumerate(sizes):
        if acc and acc + n > CHUNK_CHARS:
            cuts.append(i)
            acc = 0
        acc += n
    cuts.append(len(sizes))
    return cuts
