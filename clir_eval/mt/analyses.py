"""The analyses of a ``run`` (favoritism, MacroF per frequency bucket) on the MT test set, for results.json."""

from __future__ import annotations

from typing import Any, Sequence

from ..errors import UserError
from .base import load_metrics, read_segments
from .favoritism import favoritism_tables
from .frequency import frequency_buckets


def run_analyses(cfg, systems: Sequence, refs: Sequence[str]) -> dict[str, Any]:
    """``{"analyses": {"favoritism": ..., "frequency_buckets": ...}}`` for the configured analyses
    (``{}`` without an ``analyses:`` section); system names are checked before any work."""
    a = cfg.analyses
    if a is None:
        return {}
    hyps = {s.name: s.hyp for s in systems if s.hyp}
    a.check_systems(cfg.path, list(hyps))
    if not refs:
        raise UserError(f"{cfg.path}: analyses: the experiment has no MT references; add mt.refs")
    out: dict[str, Any] = {}
    if a.favoritism is not None:
        out["favoritism"] = favoritism_analysis(a.favoritism, hyps, refs, cfg.mt.tokenize, cfg.mt.lowercase)
    if a.frequency_buckets is not None:
        out["frequency_buckets"] = buckets_analysis(a.frequency_buckets, hyps, refs, cfg.mt.tokenize, cfg.mt.lowercase)
    return {"analyses": out}


def favoritism_analysis(spec, hyps: dict[str, str], refs: Sequence[str], tokenize: str, lowercase: bool) -> dict[str, Any]:
    """Per metric: both corpus scores, the signature and the top segments by |favoritism|."""
    a, b = spec.systems
    ms = load_metrics(list(spec.metrics), tokenize=tokenize, lowercase=lowercase)
    hyps_a, ref_lines = read_segments(hyps[a], refs)
    hyps_b, _ = read_segments(hyps[b], refs)
    scores, tables = favoritism_tables(ms, hyps_a, hyps_b, ref_lines, None, spec.top)
    return {"system_a": a, "system_b": b, "top": spec.top, "n_segments": len(hyps_a),
            "metrics": {m.name: {"score_a": scores[m.name][0], "score_b": scores[m.name][1],
                                 "signature": m.signature(len(ref_lines)), "segments": tables[m.name]} for m in ms}}


def buckets_analysis(spec, hyps: dict[str, str], refs: Sequence[str], tokenize: str, lowercase: bool) -> dict[str, Any]:
    """MacroF_β per reference-frequency rank bucket for the chosen systems (all by default)."""
    names = list(spec.systems) or list(hyps)
    systems, ref_lines = [], None
    for n in names:
        h, ref_lines = read_segments(hyps[n], refs)
        systems.append((n, h))
    res = frequency_buckets(systems, ref_lines, list(spec.buckets), beta=spec.beta, tokenize=tokenize,
                            lowercase=lowercase)
    return {**res.to_dict(), "beta": spec.beta}
