"""Recognition-rate metrics of Chiang et al. (2008, §4.3): WRR (1 − WER) and the n-gram recognition rate (4-GRR).

For one segment with hypothesis h (length M) and reference r (length N) an *alignment* is a monotone
path through the M × N grid whose steps are: match (h_i = r_j), substitution (h_i ≠ r_j, free),
insertion (h_i unaligned, cost α) and deletion (r_j unaligned, cost β). Along an alignment a run of k
consecutive matches contains max(0, k − n + 1) matched n-grams. The segment's numerator is

    num = max over alignments of  Σ_{n=1..order} matched n-grams − α·insertions − β·deletions

and its denominator the number of reference n-grams, den = Σ_{n=1..order} max(0, N − n + 1). The
corpus score is 100 · Σ num / Σ den (numerators and denominators summed over the corpus), so the
metric is decomposable: a better segment never lowers the corpus score. With order 1, α = 1, β = 0
the maximum is H − I of the minimum-edit (WER) alignment, i.e. WRR = 1 − WER; ``4grr`` is order 4.
Tokens come from the BLEU tokenizer (13a by default). With several references each segment uses the
reference with the highest num/den (the first on ties).

The dynamic program runs over the hypothesis positions for all segments of similar length at once
(numpy, vectorised over segments and reference positions; deletions by a running maximum).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from .. import lazylibs
from ..version import __version__
from .base import LOWERCASE, TOKENIZE, MTMetric, Param, check_streams, register, resampling_fields, tokenizer

__all__ = ["RecognitionRateMetric", "WRRMetric", "recognition_stats", "segment_alignment_scores"]

_NEG = -1e18
_BATCH_CELLS = 4_000_000  # segments × (M + 1) × (N + 1) cells per vectorised batch


def _encode(lines: Sequence[str], tok, lowercase: bool, vocab: dict) -> list[np.ndarray]:
    get = vocab.setdefault
    out = []
    for line in lines:
        if lowercase:
            line = line.lower()
        out.append(np.fromiter((get(t, len(vocab)) for t in tok(line.rstrip()).split()), dtype=np.int64))
    return out


def _batch_scores(hyps: list[np.ndarray], refs: list[np.ndarray], order: int, alpha: float, beta: float) -> np.ndarray:
    """Best alignment score of each (hyp, ref) pair of one batch (the DP of the module docstring)."""
    B = len(hyps)
    M = max(len(h) for h in hyps)
    N = max(len(r) for r in refs)
    H = np.full((B, max(M, 1)), -1, dtype=np.int64)
    R = np.full((B, N + 1), -2, dtype=np.int64)  # column 0 unused (the grid's j = 0)
    m_len = np.array([len(h) for h in hyps])
    n_len = np.array([len(r) for r in refs])
    for b, (h, r) in enumerate(zip(hyps, refs)):
        H[b, :len(h)] = h
        R[b, 1:len(r) + 1] = r
    rows = np.arange(B)
    j = np.arange(N + 1, dtype=np.float64)
    # V[s] = best score of a path ending in cell (i, j) whose trailing match run has length s
    # (s = order - 1 stands for "order - 1 or more"); state 0 also holds every non-match step.
    V = np.full((order, B, N + 1), _NEG)
    V[0] = -beta * j
    best = V[0].copy()
    result = np.where(m_len == 0, -beta * n_len, 0.0)
    gains = np.minimum(np.arange(order) + 1, order).astype(np.float64)
    for i in range(1, M + 1):
        match = np.zeros((B, N + 1), dtype=bool)
        match[:, 1:] = H[:, i - 1:i] == R[:, 1:]
        new = np.full((order, B, N + 1), _NEG)
        diag_best = np.full((B, N + 1), _NEG)
        diag_best[:, 1:] = best[:, :-1]
        # substitution (only where the words differ) and insertion go to state 0
        new[0] = np.maximum(np.where(match, _NEG, diag_best), best - alpha)
        for s in range(order):
            t = min(s + 1, order - 1)
            prev = np.full((B, N + 1), _NEG)
            prev[:, 1:] = V[s][:, :-1]
            cand = np.where(match, prev + gains[s], _NEG)
            new[t] = np.maximum(new[t], cand)
        arrived = new.max(axis=0)
        # deletions: best[j] = max_k<=j arrived[k] - beta (j - k); they end in state 0
        best = np.maximum.accumulate(arrived + beta * j, axis=1) - beta * j
        new[0] = np.maximum(new[0], np.concatenate([np.full((B, 1), _NEG), best[:, :-1] - beta], axis=1))
        V = new
        done = m_len == i
        if done.any():
            result[done] = best[rows[done], n_len[done]]
    return result


def segment_alignment_scores(hyps: list[np.ndarray], refs: list[np.ndarray], order: int, alpha: float,
                             beta: float) -> np.ndarray:
    """Numerators (best alignment scores) for token-id sequences, batched by similar size."""
    n = len(hyps)
    out = np.zeros(n)
    idx = sorted(range(n), key=lambda k: (len(hyps[k]), len(refs[k])))
    start = 0
    while start < n:
        stop = start + 1
        while stop < n:
            m = len(hyps[idx[stop]]) + 1
            nn = max(len(refs[k]) for k in idx[start:stop + 1]) + 1
            if (stop - start + 1) * m * nn > _BATCH_CELLS and stop - start >= 1:
                break
            stop += 1
        chunk = idx[start:stop]
        out[chunk] = _batch_scores([hyps[k] for k in chunk], [refs[k] for k in chunk], order, alpha, beta)
        start = stop
    return out


def _denominators(lens: np.ndarray, order: int) -> np.ndarray:
    return sum(np.maximum(0, lens - n + 1) for n in range(1, order + 1)).astype(np.float64)


def recognition_stats(hyps: Sequence[str], refs: Sequence[Sequence[str]], order: int = 4, alpha: float = 1.0,
                      beta: float = 0.0, tokenize: str = TOKENIZE, lowercase: bool = LOWERCASE) -> np.ndarray:
    """Per-segment statistics [num, den, hyp_len, ref_len] (float64, one row per segment)."""
    check_streams(hyps, refs)
    tok = tokenizer(tokenize)
    vocab: dict[str, int] = {}
    h = _encode(hyps, tok, lowercase, vocab)
    best = None
    for stream in refs:
        r = _encode(stream, tok, lowercase, vocab)
        num = segment_alignment_scores(h, r, order, alpha, beta)
        lens = np.array([len(x) for x in r], dtype=np.float64)
        den = _denominators(lens, order)
        cand = np.column_stack([num, den, [len(x) for x in h], lens]) if len(h) else np.zeros((0, 4))
        if best is None:
            best = cand
        else:
            rate = lambda s: np.where(s[:, 1] > 0, s[:, 0] / np.where(s[:, 1] > 0, s[:, 1], 1), -np.inf)  # noqa: E731
            better = rate(cand) > rate(best)
            best = np.where(better[:, None], cand, best)
    return best


_RR_PARAMS = (
    Param("alpha", float, 1.0, "insertion penalty α", ge=0),
    Param("beta", float, 0.0, "deletion penalty β", ge=0),
)


@register("4grr", _RR_PARAMS, "4-gram recognition rate (Chiang et al. 2008), x100")
class RecognitionRateMetric(MTMetric):
    """n-gram recognition rate (Chiang et al. 2008); ``4grr`` = order 4, α = 1, β = 0."""

    order = 4
    item_level = True

    def _order(self) -> int:
        return int(self.params.get("order", self.order))

    def stats_key(self) -> tuple:
        return (self.name, self.tokenize, self.lowercase)

    def segment_stats(self, hyps, refs) -> np.ndarray:
        return recognition_stats(hyps, refs, self._order(), self.params["alpha"], self.params["beta"],
                                 self.tokenize, self.lowercase)

    def score_totals(self, totals):
        num, den = float(totals[0]), float(totals[1])
        score = 100.0 * num / den if den > 0 else 0.0
        return score, {"numerator": num, "denominator": den, "hyp_len": int(totals[2]), "ref_len": int(totals[3])}

    def sentence_scores(self, stats) -> np.ndarray:
        """Each segment's own rate (×100; 0 for an empty reference)."""
        s = np.asarray(stats, dtype=np.float64)
        return np.where(s[:, 1] > 0, 100.0 * s[:, 0] / np.where(s[:, 1] > 0, s[:, 1], 1), 0.0)

    def signature(self, nrefs: int, **extra) -> str:
        sacrebleu = lazylibs.sacrebleu()
        return "|".join([
            f"nrefs:{nrefs}", *resampling_fields(extra), f"case:{'lc' if self.lowercase else 'mixed'}",
            f"tok:{tokenizer(self.tokenize).signature()}", f"order:{self._order()}",
            f"alpha:{_num(self.params['alpha'])}", f"beta:{_num(self.params['beta'])}",
            f"version:{sacrebleu.__version__}+clir_eval-{__version__}",
        ])


@register("wrr", _RR_PARAMS, "word recognition rate 1 - WER (Chiang et al. 2008), x100")
class WRRMetric(RecognitionRateMetric):
    """Word recognition rate 1 − WER (Chiang et al. 2008): the order-1 recognition rate."""

    order = 1


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else repr(float(x))
