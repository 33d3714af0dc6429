"""The TSV outputs: scores.tsv and correlations.tsv of a run, ``correlate --format tsv``, and the float
format every TSV shares."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from .blocks import fmt_num, tsv_float
from .tables import english_label, score_columns


def tsv_records(records: Sequence[Mapping[str, Any]], columns: Sequence[str], cell=None) -> str:
    """Flat TSV of records: one column per key; ``cell(value)`` formats a value."""
    cell = cell or tsv_cell
    return "\n".join(["\t".join(columns)] + ["\t".join(cell(r.get(c)) for c in columns) for r in records]) + "\n"


def tsv_cell(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return tsv_float(v)
    return str(v).replace("\t", " ")


def scores_tsv(results: Mapping[str, Any]) -> str:
    """One row per system; then, when the run scored the English side, its IR scores on one more line that
    starts with ``# `` (a comment: ``correlate`` and pandas' ``comment="#"`` leave it out of the systems), the
    first cell naming it as the report's score table does (``English side (ceiling: ...)`` under pseudo-qrels)."""
    cols = score_columns(results)
    taken = {"system"} | {n for _, n in cols}
    attrs = sorted({a for e in results.get("systems", {}).values() for a in e.get("attrs", {})
                    if a != "name" and a not in taken})
    lines = ["\t".join(["system", *attrs, *(n for _, n in cols)])]
    for s, e in results.get("systems", {}).items():
        lines.append("\t".join([s, *(str(e.get("attrs", {}).get(a, "")) for a in attrs),
                                *(fmt_num(e.get(k, {}).get(n), 6) for k, n in cols)]))
    eng = (results.get("english") or {}).get("ir")
    if eng:
        lines.append("\t".join([f"# {english_label(results)}", *("" for _ in attrs),
                                *(fmt_num(eng.get(n), 6) if k == "ir" else "" for k, n in cols)]))
    return "\n".join(lines) + "\n"


CORRELATIONS_TSV = ("kind", "x", "y", "tau", "p_value", "n", "significant", "ci_low", "ci_high", "ci_q_low", "ci_q_high",
                    "pairwise_accuracy", "method", "variant", "reason")


def correlations_tsv(results: Mapping[str, Any]) -> str:
    def flat(c: Mapping[str, Any]) -> dict[str, Any]:
        ci = c.get("ci_systems") or [None, None]
        cq = c.get("ci_queries") or [None, None]
        return {**c, "ci_low": ci[0], "ci_high": ci[1], "ci_q_low": cq[0], "ci_q_high": cq[1]}

    def cell(v: Any) -> str:
        if isinstance(v, bool):
            return str(v).lower()
        return fmt_num(v, 6) if isinstance(v, float) else ("" if v is None else str(v))

    return tsv_records([flat(c) for c in results.get("correlations", [])], CORRELATIONS_TSV, cell)


CORRELATE_TSV = ("group", "x", "y", "tau", "p_value", "n", "significant", "method", "variant", "p_method", "alpha",
                 "pairwise_accuracy", "ci_low", "ci_high", "reason", "signature")
