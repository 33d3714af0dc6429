"""sacrebleu-backed metrics: BLEU, chrF/chrF++, TER (sacrebleu's own classes and statistics) and BLEU-SBP.

What is used of sacrebleu (pinned in pyproject.toml; ``tests/test_sacrebleu_contract.py``
exercises each item, so an upgrade that changes one fails there first):

- public: ``BLEU``/``CHRF``/``TER`` constructors including ``references=`` (reference
  pre-processing once per reference set), ``BLEU.TOKENIZERS``, ``BLEU(tokenize=).tokenizer``,
  ``SMOOTH_DEFAULTS``, ``get_signature()`` with ``Signature.update()`` and ``format()``, the
  ``num_refs`` attribute the signature reads, the score objects' attributes;
- private, because sacrebleu exposes segment statistics only through them (its own
  significance module uses the same two):
  ``Metric._extract_corpus_statistics(hyps, None)`` (per-segment statistics against the
  references given to the constructor) and ``Metric._compute_score_from_stats(totals)``;
- ``sacrebleu.utils.my_log``, which :func:`bleu_rows` calls as ``BLEU.compute_bleu`` does (it and
  :func:`chrf_rows` score many items at once with sacrebleu's operations; tests/test_bleu_counts.py
  compares them with ``compute_bleu`` and ``CHRF._compute_f_score``, ``==``).
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from .. import lazylibs
from ..limits import MAX_NGRAM_ORDER
from .base import MTMetric, Param, Refs, check_streams, register, tokenizer
from .bleu_counts import bleu_stats
from .chrf_items import chrf_item_stats

_REF_METRICS: dict[tuple, object] = {}
# sacrebleu's reference info is large (5000 segments: BLEU ~50 MB, chrF ~200 MB of Counters),
# so only the most recent few are kept: e.g. BLEU, chrF1 and chrF of one reference set.
_REF_METRICS_MAX = 3


def clear_reference_cache() -> None:
    """Drop the cached pre-processed references (to free memory after a scoring loop)."""
    _REF_METRICS.clear()


class SacreMetric(MTMetric):
    """Wrapper around a sacrebleu metric object; statistics are sacrebleu's own."""

    dtype: type = np.int64
    item_level = True

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self._m = self._make()

    def _make(self, references: Refs | None = None):
        """The sacrebleu metric object for these settings (bound to ``references`` if given)."""
        raise NotImplementedError

    def width(self) -> int:
        raise NotImplementedError

    def segment_stats(self, hyps: Sequence[str], refs: Refs) -> np.ndarray:
        check_streams(hyps, refs)
        bound = self._bound(refs)
        if not len(hyps):
            return np.zeros((0, self.width()), dtype=self.dtype)
        return np.asarray(bound._extract_corpus_statistics(list(hyps), None), dtype=self.dtype)

    def _bound(self, refs: Refs):
        """A sacrebleu object with pre-processed ``refs``, made once per (metric, reference set)
        in the process: scoring many systems against one reference set (the usual case, also
        with a fresh metric object per system) extracts reference n-grams only once."""
        key = (type(self).__name__, self.stats_key(), tuple(tuple(r) for r in refs))
        bound = _REF_METRICS.pop(key, None)
        if bound is None:
            bound = self._make([list(r) for r in refs])
        _REF_METRICS[key] = bound  # most recently used last
        while len(_REF_METRICS) > _REF_METRICS_MAX:
            del _REF_METRICS[next(iter(_REF_METRICS))]
        return bound

    def sacre_score(self, totals: np.ndarray):
        return self._m._compute_score_from_stats(totals.tolist())

    def signature(self, nrefs: int, **extra) -> str:
        """sacrebleu's signature; ``extra`` items (e.g. ``bs``, ``seed`` of a bootstrap, which
        sacrebleu places after ``nrefs``) are set with ``Signature.update``."""
        self._m.num_refs = nrefs
        sig = self._m.get_signature()
        for k, v in extra.items():
            sig.update(k, v)
        return sig.format()


# sacrebleu's BLEU smoothing methods, the keys of ``sacrebleu.BLEU.SMOOTH_DEFAULTS`` in its order, written out so
# that naming a metric does not import sacrebleu (tests/test_mt_metrics.py checks they are sacrebleu's)
BLEU_SMOOTH_METHODS = ("none", "floor", "add-k", "exp")

_BLEU_PARAMS = (
    Param("smooth", str, "exp", "smoothing: exp, floor, add-k, none", choices=BLEU_SMOOTH_METHODS),
    Param("smooth_value", float, None, "value for floor / add-k smoothing (sacrebleu default if unset)", ge=0),
    Param("order", int, 4, "maximum n-gram order", ge=1, le=MAX_NGRAM_ORDER),
)


@register("bleu", _BLEU_PARAMS, "sacrebleu BLEU")
class BLEUMetric(SacreMetric):
    """sacrebleu BLEU (Papineni et al. 2002; 13a tokenizer, exp smoothing by default)."""
    streamable = True  # integer counts: chunk sums are the corpus sums exactly
    segment_bytes = 44.0  # measured 35 per character of a segment's hypothesis and reference

    def _make(self, references=None):
        p = self.params
        m = lazylibs.sacrebleu().BLEU(
            lowercase=self.lowercase, tokenize=self.tokenize, smooth_method=p["smooth"],
            smooth_value=p["smooth_value"], max_ngram_order=p["order"], references=references,
        )
        m.tokenizer = tokenizer(self.tokenize)
        return m

    def width(self) -> int:
        return 2 + 2 * self.params["order"]

    def segment_stats(self, hyps: Sequence[str], refs: Refs) -> np.ndarray:
        """sacrebleu's BLEU segment statistics; counted with numpy by :mod:`.bleu_counts` (the same
        integers) with one reference, else by sacrebleu."""
        check_streams(hyps, refs)
        if type(self) is BLEUMetric and len(hyps):
            st = bleu_stats(hyps, refs, tokenizer(self.tokenize), self.lowercase, self.params["order"])
            if st is not None:
                return st.astype(self.dtype, copy=False)
        return super().segment_stats(hyps, refs)

    def _sentence(self):
        """BLEU with effective n-gram order: sacrebleu's ``sentence_bleu`` (and mt-metrics-eval's
        sentBLEU), so an item shorter than 4 words is not scored 0 for lacking 4-grams."""
        m = self._make()
        m.effective_order = True
        return m

    def item_scores(self, stats) -> np.ndarray:
        if type(self) is not BLEUMetric:
            return super().item_scores(stats)
        m = self._sentence()
        return bleu_rows(np.asarray(stats), m.max_ngram_order, m.smooth_method, m.smooth_value, m.effective_order)

    def item_signature(self, nrefs: int) -> str:
        if type(self) is not BLEUMetric:
            return super().item_signature(nrefs)
        m = self._sentence()
        m.num_refs = nrefs
        return m.get_signature().format()

    def score_totals(self, totals):
        s = self.sacre_score(totals)
        return s.score, {"bp": s.bp, "sys_len": int(s.sys_len), "ref_len": int(s.ref_len),
                         "precisions": [float(x) for x in s.precisions]}


@register("chrf", (
    Param("beta", int, 2, "recall weight β", ge=1),
    Param("char_order", int, 6, "character n-gram order", ge=1, le=MAX_NGRAM_ORDER),
    Param("word_order", int, 0, "word n-gram order (2 = chrF++)", ge=0, le=MAX_NGRAM_ORDER),
    Param("whitespace", bool, False, "include whitespace in character n-grams"),
    Param("eps_smoothing", bool, False, "chrF++.py-style epsilon smoothing"),
), "sacrebleu chrF (β=2)", aliases={
    "chrf1": ({"beta": 1}, "chrF with β=1 (as in Gowda et al. 2021)"),
    "chrf++": ({"word_order": 2}, "chrF++ (word_order=2, β=2)"),
})
class CHRFMetric(SacreMetric):
    """sacrebleu chrF / chrF++ (Popović 2015/2017); no word tokenizer, ``lowercase`` applies."""
    streamable = True  # integer counts: chunk sums are the corpus sums exactly
    segment_bytes = 80.0  # counted with numpy (chrf_items): measured 64 per character of hypothesis and reference
    counter_bytes = 400.0  # counted by sacrebleu (chrF++, whitespace, several references): a Counter per order, 310

    def segment_memory(self, hyp: str, refs: Sequence[str]) -> float:
        p = self.params
        numpy = not p["word_order"] and not p["whitespace"] and len(refs) == 1 and type(self) is CHRFMetric
        return (self.segment_bytes if numpy else self.counter_bytes) * (len(hyp) + sum(len(r) for r in refs))

    def _make(self, references=None):
        p = self.params
        return lazylibs.sacrebleu().CHRF(
            char_order=p["char_order"], word_order=p["word_order"], beta=p["beta"],
            lowercase=self.lowercase, whitespace=p["whitespace"], eps_smoothing=p["eps_smoothing"],
            references=references,
        )

    def width(self) -> int:
        return 3 * (self.params["char_order"] + self.params["word_order"])

    def segment_stats(self, hyps: Sequence[str], refs: Refs) -> np.ndarray:
        """sacrebleu's chrF segment statistics; counted with numpy by :mod:`.chrf_items` (the same
        integers) where that applies (character n-grams only, one reference), else by sacrebleu."""
        check_streams(hyps, refs)
        if type(self) is CHRFMetric and (st := chrf_item_stats(self, hyps, refs)) is not None:
            return st.astype(self.dtype, copy=False)
        return super().segment_stats(hyps, refs)

    def score_totals(self, totals):
        return self.sacre_score(totals).score, {}

    def item_scores(self, stats) -> np.ndarray:
        if type(self) is not CHRFMetric:
            return super().item_scores(stats)
        return chrf_rows(np.asarray(stats), self._m.beta, self._m.order, self._m.eps_smoothing)

    def signature(self, nrefs: int, **extra) -> str:
        # sacrebleu names β in the score ("chrF1"), not in the signature; add it there
        return super().signature(nrefs, **extra, beta=self.params["beta"])


@register("ter", (
    Param("normalized", bool, False, "tercom normalisation"),
    Param("no_punct", bool, False, "remove punctuation"),
    Param("asian_support", bool, False, "Asian character handling"),
    Param("case_sensitive", bool, False, "case-sensitive matching"),
), "sacrebleu TER (lower is better)")
class TERMetric(SacreMetric):
    """sacrebleu TER (tercom-compatible; its own tokenizer, case-insensitive by default —
    ``--lowercase`` forces case-insensitivity, ``ter:case_sensitive=true`` turns it on)."""

    def segment_memory(self, hyp: str, refs: Sequence[str]) -> float:
        """sacrebleu's edit distance keeps a full words x words matrix of pointers and caches its rows:
        about 100 bytes per (hypothesis word, reference word) cell (measured 80)."""
        words = len(hyp.split())
        return 100.0 * words * max((len(r.split()) for r in refs), default=0) + 44.0 * len(hyp)

    dtype = np.float64
    higher_is_better = False

    def _make(self, references=None):
        p = self.params
        return lazylibs.sacrebleu().TER(
            normalized=p["normalized"], no_punct=p["no_punct"], asian_support=p["asian_support"],
            case_sensitive=p["case_sensitive"] and not self.lowercase, references=references,
        )

    def stats_key(self) -> tuple:
        return (self.name, self.lowercase)

    def width(self) -> int:
        return 2

    def score_totals(self, totals):
        s = self.sacre_score(totals)
        return s.score, {"num_edits": float(s.num_edits), "ref_length": float(s.ref_length)}


@register("bleu-sbp", _BLEU_PARAMS, "BLEU with Chiang et al. (2008)'s strict brevity penalty")
class BLEUSBPMetric(BLEUMetric):
    """BLEU with the strict brevity penalty of Chiang et al. (2008), "Decomposability of
    translation metrics for improved evaluation and efficient algorithms".

    BP = exp(1 - 1/x), x = Σ_i min(|c_i|, |r_i|) / Σ_i |r_i| (so x <= 1 and BP <= 1): a
    hypothesis longer than its reference cannot make up for a short one elsewhere. |r_i| is
    the reference length BLEU itself uses: with several references, the one closest in length
    to c_i (the shorter on ties). n-gram precisions and smoothing are sacrebleu BLEU's.
    Statistics: sacrebleu BLEU's row plus one column Σ min(|c_i|, |r_i|).
    """

    def width(self) -> int:
        return super().width() + 1

    def segment_stats(self, hyps, refs) -> np.ndarray:
        st = super().segment_stats(hyps, refs)
        return np.column_stack([st, np.minimum(st[:, 0], st[:, 1])]) if len(st) else np.zeros((0, self.width()), np.int64)

    def score_totals(self, totals):
        order = self.params["order"]
        ref_len, min_len = int(totals[1]), int(totals[-1])
        core = totals[:-1].copy()
        core[0] = ref_len  # sys_len := ref_len switches sacrebleu's own brevity penalty off
        s = self.sacre_score(core)
        if ref_len == 0:
            bp = 1.0
        elif min_len == 0:
            bp = 0.0
        else:
            bp = math.exp(1.0 - ref_len / min_len)
        return s.score * bp, {"bp": bp, "sys_len": int(totals[0]), "ref_len": ref_len,
                              "min_len": min_len, "precisions": [float(x) for x in s.precisions[:order]]}

    def signature(self, nrefs: int, **extra) -> str:
        return super().signature(nrefs, **extra, bp="strict")


# ----------------------------------------------------------------------------- item scores, all rows at once
def bleu_rows(stats: np.ndarray, order: int, smooth_method: str, smooth_value: float | None,
              effective_order: bool) -> np.ndarray:  # fmt: skip
    """sacrebleu's ``BLEU.compute_bleu`` of every row of ``stats`` ([sys_len, ref_len, correct_1..N,
    total_1..N]): the brevity penalties and precisions with its operations in its order, on all
    rows at once; each row's score then with its own expression (``math``, its ``my_log``, Python's
    ``sum``), so the same floats."""
    sacrebleu = lazylibs.sacrebleu()
    my_log = sacrebleu.utils.my_log
    n_rows = len(stats)
    if smooth_value is None:
        smooth_value = sacrebleu.BLEU.SMOOTH_DEFAULTS[smooth_method]
    sys_len, ref_len = stats[:, 0], stats[:, 1]
    correct = stats[:, 2:2 + order].astype(np.float64)
    total = stats[:, 2 + order:2 + 2 * order].astype(np.float64)
    bp = np.ones(n_rows)
    short = (sys_len < ref_len) & (sys_len > 0)
    bp[short] = [math.exp(1 - r / h) for r, h in zip(ref_len[short].tolist(), sys_len[short].tolist())]
    bp[(sys_len < ref_len) & (sys_len <= 0)] = 0.0
    precisions = np.zeros((n_rows, order))
    eff = np.full(n_rows, order)
    going = np.ones(n_rows, bool)  # rows whose loop has not hit a zero total yet
    smooth_mteval = np.ones(n_rows)
    for n in range(order):
        if smooth_method == "add-k" and n > 0:
            correct[:, n] += smooth_value
            total[:, n] += smooth_value
        going &= total[:, n] != 0
        if effective_order:
            eff[going] = n + 1
        zero = going & (correct[:, n] == 0)
        if smooth_method == "exp":
            smooth_mteval[zero] *= 2
            precisions[zero, n] = 100. / (smooth_mteval[zero] * total[zero, n])
        elif smooth_method == "floor":
            precisions[zero, n] = 100. * smooth_value / total[zero, n]
        hit = going & (correct[:, n] != 0)
        precisions[hit, n] = 100. * correct[hit, n] / total[hit, n]
    scores = np.array([b * math.exp(sum([my_log(p) for p in ps[:e]]) / e)  # compute_bleu's own expression
                       for b, ps, e in zip(bp.tolist(), precisions.tolist(), eff.tolist())])
    scores[~stats[:, 2:2 + order].any(axis=1)] = 0.0  # no correct n-gram of any order: 0
    return scores


def chrf_rows(stats: np.ndarray, beta: float, order: int, eps_smoothing: bool) -> np.ndarray:
    """sacrebleu's ``CHRF._compute_f_score`` of every row of ``stats`` ([hyp, ref, match] per
    order): its operations in its order on all rows at once (the same floats)."""
    eps = 1e-16
    n_rows = len(stats)
    st = stats.astype(np.float64)
    score = np.zeros(n_rows)
    avg_prec, avg_rec = np.zeros(n_rows), np.zeros(n_rows)
    effective_order = np.zeros(n_rows, np.int64)
    factor = beta ** 2
    with np.errstate(divide="ignore", invalid="ignore"):
        for i in range(order):
            n_hyp, n_ref, n_match = st[:, 3 * i], st[:, 3 * i + 1], st[:, 3 * i + 2]
            prec = np.where(n_hyp > 0, n_match / n_hyp, eps)
            rec = np.where(n_ref > 0, n_match / n_ref, eps)
            denom = factor * prec + rec
            score += np.where(denom > 0, (1 + factor) * prec * rec / denom, eps)
            both = (n_hyp > 0) & (n_ref > 0)
            avg_prec[both] += prec[both]
            avg_rec[both] += rec[both]
            effective_order += both
        if eps_smoothing:
            return 100 * score / order
        some = effective_order > 0
        avg_prec = np.where(some, avg_prec / np.where(some, effective_order, 1), 0.0)
        avg_rec = np.where(some, avg_rec / np.where(some, effective_order, 1), 0.0)
        out = (1 + factor) * avg_prec * avg_rec
        out = out / ((factor * avg_prec) + avg_rec)
    return np.where((avg_prec + avg_rec) != 0, 100 * out, 0.0)
