"""Type-based metrics MacroF_β and MicroF_β (Gowda et al. 2021) over unigram types.

They reproduce PyPI ``sacrebleu-macrof==2.0.1`` (``sacrebleu/metrics/clseval.py``): unigram
types after the BLEU tokenizer (lowercasing first if asked); per type PREDS, REFS and MATCH =
min(PREDS, REFS) summed over segments; P=1 if PREDS=0, R=1 if REFS=0, F=0 if the F
denominator is 0; MacroF = mean F over the union of types, MicroF = F weighted by REFS+k;
both ×100. With several references a type's REFS in a segment is the *maximum* of its counts
over the references (BLEU-style clipping), so MATCH = min(PREDS, max_r count_r). A corpus
with no tokens at all scores 0 (the reference implementation divides by zero there).
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from .. import lazylibs
from ..errors import UserError
from ..version import __version__
from .base import (
    LOWERCASE,
    TOKENIZE,
    MTMetric,
    Param,
    Refs,
    check_streams,
    encode,
    register,
    resampling_fields,
    token_ids,
    tokenizer,
    totals,
)

_BETA_F = Param("beta", float, 1.0, "F-measure β (recall weight)", gt=0)


@dataclass(frozen=True)
class TypeStats:
    """Per-segment unigram-type statistics; columns [hyp_len, ref_len, PREDS(V), REFS(V), MATCH(V)]."""

    matrix: Any  # scipy.sparse.csr_array, n_segments x (2 + 3V)
    types: list[str]


def _encoder(tokenize: str, lowercase: bool, vocab: dict[str, int]):
    """``encode(lines) -> (token ids, tokens per line)``, adding new types to ``vocab`` in order of appearance."""
    tok = tokenizer(tokenize)
    return lambda lines: token_ids(lines, tok, lowercase, vocab)


def _type_matrix(hyp_enc, ref_enc, n: int, V: int):
    """The (n x 2 + 3V) statistics of encoded segments: [hyp_len, ref_len, PREDS, REFS, MATCH]."""

    def counts(ids: np.ndarray, lens: np.ndarray):
        rows = np.repeat(np.arange(n, dtype=np.int64), lens)
        return lazylibs.scipy_sparse().csr_array((np.ones(len(ids), dtype=np.int64), (rows, ids)), shape=(n, V))

    hyp_ids, hyp_lens = hyp_enc
    preds = counts(hyp_ids, hyp_lens)
    ref_counts = counts(*ref_enc[0])
    for ids, lens in ref_enc[1:]:
        ref_counts = ref_counts.maximum(counts(ids, lens))
    match = preds.minimum(ref_counts)

    ref_lens = np.stack([lens for _, lens in ref_enc])  # (nrefs, n)
    diff = np.abs(ref_lens - hyp_lens)
    closest = np.where(diff == diff.min(axis=0), ref_lens, np.iinfo(np.int64).max).min(axis=0) if n else hyp_lens

    head = lazylibs.scipy_sparse().csr_array(np.column_stack([hyp_lens, closest]).astype(np.int64))
    return lazylibs.scipy_sparse().csr_array(lazylibs.scipy_sparse().hstack([head, preds, ref_counts, match], format="csr"))


def type_stats(hyps: Sequence[str], refs: Refs, tokenize: str = TOKENIZE, lowercase: bool = LOWERCASE) -> TypeStats:
    """One tokenisation pass shared by MacroF and MicroF (any β, any k).

    Lines are pre-processed exactly as sacrebleu BLEU does (lowercase, then the tokenizer
    on the right-stripped line), then split on whitespace. ref_len is BLEU's closest
    reference length (shorter on ties), reported as an extra.
    """
    check_streams(hyps, refs)
    hyp_enc, ref_enc, types = encode(hyps, refs, tokenizer(tokenize), lowercase)
    return TypeStats(_type_matrix(hyp_enc, ref_enc, len(hyps), len(types)), types)


class TypeAccumulator:
    """The column sums of :func:`type_stats` over a corpus given in chunks, holding only the
    per-type sums (not the text): types are numbered as they come and put back, at the end, in
    the order :func:`type_stats` gives them (first seen in the hypotheses, else in the first
    reference holding them), so the totals -- and every score from them -- are identical."""

    _NEVER = np.iinfo(np.int64).max

    def __init__(self, tokenize: str, lowercase: bool):
        self.vocab: dict[str, int] = {}
        self._encode = _encoder(tokenize, lowercase, self.vocab)
        self._lens = np.zeros(2, dtype=np.int64)
        self._sums = np.zeros((3, 0), dtype=np.int64)  # PREDS, REFS, MATCH per type
        self._first: list[np.ndarray] = []  # per stream (hyps, ref 1, ...): first token position of each type
        self._offset: list[int] = []

    def add(self, hyps: Sequence[str], refs: Refs) -> None:
        check_streams(hyps, refs)
        encs = [self._encode(hyps)] + [self._encode(r) for r in refs]
        V = len(self.vocab)
        grow = V - self._sums.shape[1]
        self._sums = np.concatenate([self._sums, np.zeros((3, grow), np.int64)], axis=1)
        for s, (ids, _) in enumerate(encs):
            if s == len(self._first):
                self._first.append(np.full(0, self._NEVER, np.int64))
                self._offset.append(0)
            first = np.concatenate([self._first[s], np.full(V - len(self._first[s]), self._NEVER, np.int64)])
            if len(ids):
                u, i = np.unique(ids, return_index=True)
                first[u] = np.minimum(first[u], self._offset[s] + i)
            self._first[s] = first
            self._offset[s] += len(ids)
        t = totals(_type_matrix(encs[0], encs[1:], len(hyps), V))
        self._lens += t[:2].astype(np.int64)
        self._sums += np.asarray(t[2:], dtype=np.int64).reshape(3, V)

    def totals(self) -> np.ndarray:
        V = self._sums.shape[1]
        if not self._first:
            return np.zeros(2, dtype=np.int64)
        in_hyp = self._first[0] < self._NEVER
        refs_first = np.stack(self._first[1:]) if len(self._first) > 1 else np.full((1, V), self._NEVER)
        r_min = np.argmax(refs_first < self._NEVER, axis=0)
        pos = refs_first[r_min, np.arange(V)]
        order = np.lexsort((np.where(in_hyp, self._first[0], pos), np.where(in_hyp, 0, 1 + r_min)))
        return np.concatenate([self._lens, self._sums[:, order].ravel()])


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else repr(float(x))


def prf(preds: np.ndarray, refs: np.ndarray, match: np.ndarray, beta: float):
    """Per-type precision, recall and F_β with the reference implementation's conventions."""
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.where(preds > 0, match / np.where(preds > 0, preds, 1), 1.0)
        r = np.where(refs > 0, match / np.where(refs > 0, refs, 1), 1.0)
        b2 = beta**2
        den = b2 * p + r
        f = np.where(den != 0, (1 + b2) * p * r / np.where(den != 0, den, 1), 0.0)
    return p, r, f


_CELLS: list = []  # [weak reference to the last statistics matrix given to _item_cells, its cells]


def _item_cells(stats) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(row bounds, PREDS, REFS, MATCH) of every (row, type) present in a row of ``stats`` (PREDS or
    REFS > 0), rows in order and each row's types ascending; row i's cells are
    ``bounds[i]:bounds[i + 1]``. The last matrix's cells are kept while that matrix lives, for the
    next metric of it (MacroF, then MicroF of one scoring)."""
    if _CELLS and _CELLS[0]() is stats:
        return _CELLS[1]
    m = lazylibs.scipy_sparse().csr_array(stats, copy=True)
    m.sum_duplicates()
    m.eliminate_zeros()
    n, width = m.shape
    V = max((width - 2) // 3, 1)
    row = np.repeat(np.arange(n, dtype=np.int64), np.diff(m.indptr))
    col = m.indices.astype(np.int64)
    val = m.data.astype(np.float64)
    typed = col >= 2
    kind, j = (col[typed] - 2) // V, (col[typed] - 2) % V  # 0 preds, 1 refs, 2 match
    key = row[typed] * V + j  # ascending within each kind (CSR rows in order, columns sorted)
    # present = PREDS or REFS > 0, MATCH <= both: the union of the two sorted key runs, merged
    both = np.concatenate([key[kind == 0], key[kind == 1]])
    both = both[np.argsort(both, kind="stable")]  # two sorted runs: a linear merge
    keys = both[np.r_[True, both[1:] != both[:-1]]] if len(both) else both
    cells = np.zeros((3, len(keys)))
    cells[kind, np.searchsorted(keys, key)] = val[typed]
    bounds = np.searchsorted(keys // V, np.arange(n + 1))
    out = (bounds, *cells)
    try:  # dropped with the matrix
        _CELLS[:] = [weakref.ref(stats, lambda r: _CELLS.clear() if _CELLS and _CELLS[0] is r else None), out]
    except TypeError:  # an object without weak references: not kept
        _CELLS.clear()
    return out


@register("macrof", (_BETA_F,), "MacroF_β (default β=1, i.e. macrof1)", aliases={
    "macrof1": ({"beta": 1.0}, "MacroF1 over unigram types (Gowda et al. 2021)"),
})
class TypeFMetric(MTMetric):
    """MacroF_β / MicroF_β over unigram types (Gowda et al. 2021, "Macro-Average: Rare Types
    Are Important Too"); see the module docstring for the exact definition."""

    segment_bytes = 56.0  # measured 43 per character of a segment's hypothesis and reference

    average = "macro"
    item_level = True

    def stats_key(self) -> tuple:
        return ("types", self.tokenize, self.lowercase)

    def segment_stats(self, hyps, refs):
        return type_stats(hyps, refs, self.tokenize, self.lowercase).matrix

    streamable = True

    def accumulator(self) -> TypeAccumulator:
        return TypeAccumulator(self.tokenize, self.lowercase)

    def paired_stats(self, hyps_a, hyps_b, refs):
        """Both systems counted in one pass over a shared vocabulary (columns are types)."""
        n = len(hyps_a)
        if len(hyps_b) != n:
            raise UserError(f"system A has {n} segments, system B {len(hyps_b)}; they must be line-aligned")
        both = type_stats(list(hyps_a) + list(hyps_b), [list(r) + list(r) for r in refs],
                          self.tokenize, self.lowercase).matrix
        return both[:n], both[n:]

    def _split(self, totals: np.ndarray):
        V = (len(totals) - 2) // 3
        t = np.asarray(totals, dtype=np.float64)
        return t[2:2 + V], t[2 + V:2 + 2 * V], t[2 + 2 * V:]

    def _weights(self, refs: np.ndarray) -> np.ndarray:
        if self.average == "macro":
            return np.ones_like(refs)
        return refs + self.params["k"]

    def item_scores(self, stats) -> np.ndarray:
        """As :meth:`MTMetric.item_scores` (each row's :meth:`score_totals`, the same numbers): every
        row's present types in ascending order, as :meth:`score_totals` keeps them
        (:func:`_item_cells`, shared by MacroF and MicroF of one statistics matrix), with the
        per-type arithmetic done for all rows at once and each row's sums taken over its own slice
        (the weighted F by numpy's own summation, a row at a time, so the same bits)."""
        bounds, preds, refs, match = _item_cells(stats)
        n = len(bounds) - 1
        _, _, f = prf(preds, refs, match, self.params["beta"])
        w = self._weights(refs)
        fw = f * w
        if self.average == "macro" or (float(self.params["k"]).is_integer() and float(w.sum()) < 2.0 ** 53):
            # integer weights, every sum below 2**53: exact in any order
            wsums = np.add.reduceat(np.r_[w, 0.0], bounds[:-1])
            wsums[bounds[:-1] == bounds[1:]] = 0.0
        else:
            wsums = np.array([w[bounds[i]:bounds[i + 1]].sum() for i in range(n)])
        out = np.zeros(n)
        for i in np.flatnonzero(wsums > 0):
            out[i] = 100.0 * float(fw[bounds[i]:bounds[i + 1]].sum()) / float(wsums[i])
        return out

    def score_totals(self, totals):
        preds, refs, match = self._split(totals)
        present = (preds + refs) > 0  # the union vocabulary of this (possibly resampled) corpus
        preds, refs, match = preds[present], refs[present], match[present]
        p, r, f = prf(preds, refs, match, self.params["beta"])
        w = self._weights(refs)
        wsum = w.sum()
        extra = {"hyp_len": int(totals[0]), "ref_len": int(totals[1]), "n_types": int(present.sum())}
        if wsum <= 0:
            return 0.0, {**extra, "precision": 0.0, "recall": 0.0}
        return (100.0 * float((f * w).sum()) / float(wsum),
                {**extra, "precision": 100.0 * float((p * w).sum()) / float(wsum),
                 "recall": 100.0 * float((r * w).sum()) / float(wsum)})

    def signature(self, nrefs: int, **extra) -> str:
        parts = [f"nrefs:{nrefs}", *resampling_fields(extra),
                 f"case:{'lc' if self.lowercase else 'mixed'}",
                 f"tok:{tokenizer(self.tokenize).signature()}", f"average:{self.average}",
                 f"beta:{_num(self.params['beta'])}"]
        if self.average == "micro":
            parts.append(f"smooth:add-k[{_num(self.params['k'])}]")
        parts.extend(f"{k}:{v}" for k, v in extra.items())
        parts.append(f"version:{lazylibs.sacrebleu().__version__}+clir_eval-{__version__}")
        return "|".join(parts)

    def type_report(self, hyps: Sequence[str], refs: Refs) -> list[dict[str, Any]]:
        """Per-type breakdown (type, refs, preds, match, P, R, F in 0-100), most frequent
        reference types first (then most predicted, then alphabetical)."""
        ts = type_stats(hyps, refs, self.tokenize, self.lowercase)
        preds, refs_, match = self._split(totals(ts.matrix))
        p, r, f = prf(preds, refs_, match, self.params["beta"])
        order = sorted(range(len(ts.types)), key=lambda j: (-refs_[j], -preds[j], ts.types[j]))
        return [{"type": ts.types[j], "refs": int(refs_[j]), "preds": int(preds[j]), "match": int(match[j]),
                 "P": 100 * float(p[j]), "R": 100 * float(r[j]), "F": 100 * float(f[j])} for j in order]


@register("microf", (
    _BETA_F, Param("k", float, 1.0, "add-k smoothing of the type weights REFS+k", ge=0),
), "MicroF_β (default β=1, k=1, i.e. microf1)", aliases={
    "microf1": ({"beta": 1.0}, "MicroF1 over unigram types, weights REFS+1 (Gowda et al. 2021)"),
})
class MicroFMetric(TypeFMetric):
    average = "micro"
