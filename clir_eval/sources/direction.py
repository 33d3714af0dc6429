"""Translation direction (Edunov et al. 2020): scores and correlations on the source-original
and the target-original documents of a WMT XML file, side by side with all documents.

``wmt.direction: both`` runs the experiment once more on each subset (``<doc origlang>`` =
the source language, or the target language), each a complete experiment on its documents
(MT scoring, collection, queries), in ``OUT/direction/<subset>/``. A subset without
documents, or one on which the experiment cannot run, is reported with the reason.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any, Callable

from ..config.schema import Config
from ..errors import UserError
from ..io.files import atomic_write
from .materialize import direction_summary, select_wmt_documents
from .wmt import read_wmt_xml

SUBSETS = ("source-original", "target-original")


def by_direction(cfg: Config, out: Path, run: Callable[..., dict], **run_kw: Any) -> dict[str, Any]:
    """``{subset: {"documents", "systems": {name: {"mt", "ir"}}, "correlations"} or
    {"documents", "reason"}}`` for both subsets; writes ``OUT/direction.tsv``."""
    base = select_wmt_documents(replace(cfg.wmt, direction=None), read_wmt_xml(cfg.wmt.xml), [])
    summary = direction_summary(base)
    result: dict[str, Any] = {"origlang": summary}
    for side in SUBSETS:
        n = sum(1 for d in base.docids if base.direction(d) == side)
        entry: dict[str, Any] = {"documents": n}
        if n == 0:
            entry["reason"] = f"no {side} documents ({summary})"
        else:
            # per-document external scores cover both directions' documents: each subset keeps its own
            ext = tuple(replace(t, unknown_documents="ignore") if t.per_item else t for t in cfg.external)
            sub = replace(cfg, wmt=replace(cfg.wmt, direction=side), name=f"{cfg.name} [{side}]", external=ext)
            (out / "direction").mkdir(parents=True, exist_ok=True)  # under --out, which the run checked and created
            try:
                res = run(sub, out / "direction" / side, quiet=True, **run_kw)
            except UserError as e:
                entry["reason"] = f"the experiment cannot run on these {n} documents: {e}"
            else:
                entry["systems"] = {s: {"mt": v.get("mt", {}), "ir": v.get("ir", {}), "human": v.get("human", {})}
                                    for s, v in res["systems"].items()}
                entry["correlations"] = [
                    {k: c.get(k) for k in ("kind", "x", "y", "tau", "p_value", "n", "significant", "reason")}
                    for c in res["correlations"]
                ]
        result[side] = entry
    return result


def direction_note(d: dict) -> str:
    """One report note: subset sizes, where the side-by-side table is, and what is missing."""
    parts = []
    for side in SUBSETS:
        e = d[side]
        parts.append(f"{side}: {e['documents']} documents" + (f" — not evaluated: {e['reason']}" if "reason" in e else ""))
    return (
        "Translation direction (Edunov et al. 2020; wmt.direction: both): " + "; ".join(parts)
        + ". Each subset is a complete experiment on its documents (direction/<subset>/); "
        "τ on all documents and per subset side by side in direction.tsv"
    )


def side_by_side(results: dict) -> list[list[str]]:
    """Rows ``kind, x, y, τ and p on all documents, then per subset`` (``-`` where absent)."""
    d = results.get("direction") or {}
    head = ["kind", "x", "y", "tau_all", "p_all"] + [f"{k}_{s}" for s in SUBSETS for k in ("tau", "p")]
    rows = [head]
    sub = {s: {(c["x"], c["y"]): c for c in d.get(s, {}).get("correlations", [])} for s in SUBSETS}

    def fmt(v):
        return "-" if v is None else f"{v:.4f}"

    for c in results["correlations"]:
        row = [c.get("kind", ""), c["x"], c["y"], fmt(c["tau"]), fmt(c["p_value"])]
        for s in SUBSETS:
            o = sub[s].get((c["x"], c["y"]))
            row += [fmt(o and o["tau"]), fmt(o and o["p_value"])]
        rows.append(row)
    return rows


def write_side_by_side(results: dict, out: Path) -> None:
    with atomic_write(out / "direction.tsv") as fh:
        for row in side_by_side(results):
            fh.write("\t".join(row) + "\n")
