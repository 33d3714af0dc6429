"""MacroF per reference-frequency bucket (Gowda et al. 2021, Figure 1; compare-mt's frequency buckets).

Reference types are ranked by their reference count (REFS, as in MacroF; ties by the type string)
and cut into rank buckets, e.g. ``10,100,1000`` → ranks 1-10, 11-100, 101-1000, 1001+. Per system and
bucket: the number of types, MacroF_β (mean F over the bucket's types), mean precision and recall,
with MacroF's own per-type P/R/F. Types a system produces that no reference has (F = 0) form the
bucket ``not in reference``; the type-weighted mean of all buckets is the system's MacroF_β.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from ..errors import UserError
from ..io.figures import pyplot, save
from ..settings import SettingError, default
from .base import LOWERCASE, TOKENIZE, Refs, tokenizer, totals
from .settings import BucketsAnalysis
from .typebased import prf, type_stats

__all__ = ["parse_buckets", "FrequencyBuckets", "frequency_buckets", "plot_buckets"]

NOT_IN_REF = "not in reference"


def parse_buckets(spec: str) -> list[int]:
    """``"500"`` or ``"10,100,1000"`` → increasing rank boundaries (what is accepted: :class:`.settings.BucketsAnalysis`)."""
    try:
        bounds = tuple(int(x) for x in spec.split(",") if x.strip())
        BucketsAnalysis(buckets=bounds)
    except (ValueError, SettingError):
        raise UserError(f"--buckets must be increasing positive integers such as 500 or 10,100,1000, got {spec!r}") from None
    return list(bounds)


def _labels(bounds: Sequence[int], n_ref_types: int) -> list[tuple[str, int, int]]:
    out, lo = [], 1
    for b in bounds:
        if lo > n_ref_types:
            break
        out.append((f"{lo}-{min(b, n_ref_types)}", lo, min(b, n_ref_types)))
        lo = b + 1
    if lo <= n_ref_types:
        out.append((f"{lo}+", lo, n_ref_types))
    return out


@dataclass(frozen=True)
class FrequencyBuckets:
    """Buckets (label, first rank, last rank) and per system a row per bucket."""

    buckets: list[tuple[str, int, int]]
    systems: dict[str, list[dict[str, Any]]]
    signature: str

    def to_dict(self) -> dict[str, Any]:
        return {"buckets": [{"label": b[0], "first_rank": b[1], "last_rank": b[2]} for b in self.buckets],
                "systems": self.systems, "signature": self.signature}


def frequency_buckets(systems: Sequence[tuple[str, Sequence[str]]], refs: Refs, bounds: Sequence[int],
                      beta: float = default(BucketsAnalysis, "beta"), tokenize: str = TOKENIZE, lowercase: bool = LOWERCASE) -> FrequencyBuckets:
    """MacroF_β per reference-frequency rank bucket for each system (same buckets for all)."""
    if beta <= 0:
        raise UserError(f"--beta must be > 0, got {beta}")
    out: dict[str, list[dict[str, Any]]] = {}
    buckets: list[tuple[str, int, int]] = []
    for name, hyps in systems:
        ts = type_stats(hyps, refs, tokenize, lowercase)
        t = totals(ts.matrix).astype(np.float64)
        V = len(ts.types)
        preds, rcount, match = t[2:2 + V], t[2 + V:2 + 2 * V], t[2 + 2 * V:]
        present = (preds + rcount) > 0
        p, r, f = prf(preds, rcount, match, beta)
        in_ref = np.flatnonzero(rcount > 0)
        order = sorted(in_ref, key=lambda j: (-rcount[j], ts.types[j]))
        buckets = _labels(bounds, len(order))
        rows = []
        for label, lo, hi in buckets:
            idx = np.asarray(order[lo - 1:hi], dtype=np.int64)
            rows.append(_row(label, idx, p, r, f, rcount))
        rows.append(_row(NOT_IN_REF, np.flatnonzero(present & (rcount == 0)), p, r, f, rcount))
        out[name] = rows
    sig = "|".join([f"nrefs:{len(refs)}", f"case:{'lc' if lowercase else 'mixed'}",
                    f"tok:{tokenizer(tokenize).signature()}", "average:macro", f"beta:{beta:g}",
                    "buckets:" + ",".join(str(b) for b in bounds), "rank:ref-count"])
    return FrequencyBuckets(buckets, out, sig)


def _row(label: str, idx: np.ndarray, p, r, f, rcount) -> dict[str, Any]:
    n = len(idx)
    mean = (lambda v: 100.0 * float(v[idx].mean())) if n else (lambda v: None)
    return {"bucket": label, "n_types": n, "ref_tokens": int(rcount[idx].sum()) if n else 0,
            "macro_f": mean(f), "precision": mean(p), "recall": mean(r)}


def plot_buckets(res: FrequencyBuckets | dict[str, Any]) -> bytes:
    """MacroF per bucket (x, most frequent first), one line per system, as PNG bytes (``mt-buckets --plot``;
    report.html draws the same lines as inline SVG, :func:`clir_eval.report.svg.buckets_svg`); ``res`` may also be
    the JSON form (:meth:`FrequencyBuckets.to_dict`, results.json)."""
    plt = pyplot()
    if isinstance(res, dict):
        labels, systems = [b["label"] for b in res["buckets"]], res["systems"]
    else:
        labels, systems = [b[0] for b in res.buckets], res.systems
    outside = len(systems) > 6  # a long legend goes to the right of the axes
    fig, ax = plt.subplots(figsize=(max(5.0, 1.1 * len(labels) + 2) + (2.5 if outside else 0), 3.6), dpi=110)
    for name, rows in systems.items():
        ys = [row["macro_f"] if row["macro_f"] is not None else np.nan for row in rows[:len(labels)]]
        ax.plot(range(len(labels)), ys, marker="o", label=name)
    ax.set_xticks(range(len(labels)), labels, rotation=30, ha="right")
    ax.set_xlabel("reference-frequency rank of the type")
    ax.set_ylabel("MacroF (mean F per type)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, **({"loc": "upper left", "bbox_to_anchor": (1.01, 1.0)} if outside else {"loc": "best"}))
    fig.tight_layout()
    return save(fig)
