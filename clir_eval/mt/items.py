"""Item-level MT scores: one score per document (or segment) of a system, from that item's own
sufficient statistics (:meth:`clir_eval.mt.base.MTMetric.item_scores`).

A collection document is scored against the same document of the human English side (the
document's text as one item), so every setup with an English side has document-level MT scores,
also where the MT test set is other text (Europarl-style). Only metrics that score an item from
its statistics row take part (``MTMetric.item_level``: BLEU, chrF, TER, BLEU-SBP, MacroF, MicroF,
recognition rates); others are left out with a note.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ..errors import UserError
from .base import LOWERCASE, TOKENIZE, collect_stats, load_metrics
from .neural import NeuralMetric


def item_metrics(specs: Sequence[str], tokenize: str = TOKENIZE, lowercase: bool = LOWERCASE) -> tuple[list, list[str]]:
    """(the metrics of ``specs`` that score single items, the canonical names of those that do not)."""
    metrics = load_metrics(specs, tokenize, lowercase)
    return [m for m in metrics if m.item_level], [m.name for m in metrics if not m.item_level]


def item_scores(specs: Sequence[str], hyps: Sequence[str], refs: Sequence[Sequence[str]], tokenize: str = TOKENIZE,
                lowercase: bool = LOWERCASE) -> tuple[dict[str, list[float]], dict[str, str]]:
    """Per item-level metric: one score per item (``hyps[i]`` against ``refs[k][i]``), and its signature."""
    metrics, _ = item_metrics(specs, tokenize, lowercase)
    if not metrics:
        raise UserError(f"none of the metrics {', '.join(specs)} scores single items; item level needs one of "
                        "bleu, chrf, ter, bleu-sbp, macrof, microf, wrr, 4grr")
    stats = collect_stats(metrics, hyps, refs)
    scores = {m.name: [float(v) for v in m.item_scores(stats[m.name])] for m in metrics}
    return scores, {m.name: m.item_signature(len(refs)) for m in metrics}


def segment_scores(metrics: Sequence, stats: dict, nrefs: int) -> dict:
    """Each metric's score of every segment from statistics already computed for the corpus score
    (``stats``: :func:`clir_eval.mt.base.collect_stats`): ``{"scores": {metric: [score or None]},
    "signatures": {metric: signature}}``. A metric that scores items from its statistics scores a
    segment from its own row (:meth:`~clir_eval.mt.base.MTMetric.item_scores`: BLEU with effective
    order, as sacrebleu's ``sentence_bleu``); a neural metric's row is the segment's score (the mean
    over references). A score that is not finite is None."""
    scores: dict[str, list] = {}
    sigs: dict[str, str] = {}
    for m in metrics:
        if m.item_level:
            vals, sigs[m.name] = m.item_scores(stats[m.name]), m.item_signature(nrefs)
        elif isinstance(m, NeuralMetric):
            row = np.asarray(stats[m.name], dtype=float)
            vals, sigs[m.name] = row[:, 0] / row[:, 1], m.signature(nrefs)
        else:
            continue
        arr = np.asarray(vals, dtype=float)
        scores[m.name] = arr.tolist() if np.isfinite(arr).all() else [
            v if np.isfinite(v) else None for v in arr.tolist()]
    return {"scores": scores, "signatures": sigs}
