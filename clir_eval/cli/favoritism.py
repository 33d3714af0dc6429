"""``clir-eval favoritism``: the segments each metric credits most to system A over system B (Gowda et al. 2021 §4.1)."""

from __future__ import annotations

import json
import sys
from typing import Any, List, Optional

import typer

from ..errors import UserError
from ..io.files import atomic_write, check_output_file, read_lines
from ..mt.base import KNOWN_METRICS, load_metrics, read_segments
from ..mt.favoritism import favoritism_tables
from ..mt.settings import FavoritismAnalysis, MTSettings
from ..params import split_list
from ..report.blocks import tsv_float
from .app import app
from .options import check_option, setting_option


def _clean(text: str) -> str:
    return " ".join(text.split())


def _tsv(tables: dict[str, list[dict[str, Any]]]) -> str:
    cols = ["metric", "rank", "segment", "favoritism", "delta_a", "delta_b", "only_this_metric", "also_top_in",
            "source", "reference", "hyp_a", "hyp_b"]
    lines = ["\t".join(cols)]
    for name, rows in tables.items():
        for r in rows:
            lines.append("\t".join([
                name, str(r["rank"]), str(r["segment"]), tsv_float(r["favoritism"]), tsv_float(r["delta_a"]), tsv_float(r["delta_b"]),
                "yes" if r["only_this_metric"] else "no", ",".join(r["also_top_in"]),
                _clean(r.get("source", "")), _clean(r["reference"]), _clean(r["hyp_a"]), _clean(r["hyp_b"])]))
    return "\n".join(lines) + "\n"


@app.command("favoritism")
def favoritism_cmd(
    hyp: List[str] = typer.Option(..., "--hyp", help="Give exactly two: --hyp S --hyp U (favoritism towards S over U)."),
    ref: List[str] = typer.Option(..., "--ref", help="Reference file, line-aligned; repeat for several references."),
    src: Optional[str] = typer.Option(None, "--src", help="Source file (line-aligned), shown beside each segment."),
    metrics: str = setting_option(FavoritismAnalysis, "metrics", extra=f"Comma list; known: {', '.join(KNOWN_METRICS)}."),
    top: int = setting_option(FavoritismAnalysis, "top"),
    tokenize: str = setting_option(MTSettings, "tokenize"),
    lowercase: bool = setting_option(MTSettings, "lowercase"),
    fmt: str = typer.Option("json", "--format", help="json | tsv"),
    out: Optional[str] = typer.Option(None, "--out", help="Write here instead of stdout (atomically)."),
) -> None:
    """Segments each metric credits most to one system over another.

    Per metric, the top segments by |δ_M(i;S) − δ_M(i;U)| with δ_M(i;h) = M(h) − M(h without segment i),
    on the metric's own 0-100 scale; marks segments that are in this metric's top list only.

    \b
    Examples (after 'clir-eval demo --out demo-out'):
      clir-eval favoritism --hyp demo-out/data/mt/literal.txt --hyp demo-out/data/mt/fluent-oov.txt --ref demo-out/data/mt/ref.en.txt --metrics bleu,macrof1 --top 5
    """
    if fmt not in ("json", "tsv"):
        raise UserError(f"--format must be json or tsv, got {fmt!r}")
    if len(hyp) != 2:
        raise UserError(f"favoritism needs exactly two systems (--hyp S --hyp U), got {len(hyp)}")
    check_option(FavoritismAnalysis, "top", top)
    if out:
        check_output_file(out)
    ms = load_metrics(split_list(metrics), tokenize=tokenize, lowercase=lowercase)
    hyps_a, refs = read_segments(hyp[0], ref)
    hyps_b, _ = read_segments(hyp[1], ref)
    sources = None
    if src is not None:
        sources = read_lines(src)
        if len(sources) != len(hyps_a):
            raise UserError(f"line count mismatch: {src} has {len(sources)} lines but {hyp[0]} has {len(hyps_a)}")
    _, tables = favoritism_tables(ms, hyps_a, hyps_b, refs, sources, top)
    text = json.dumps(tables, indent=1, ensure_ascii=False) + "\n" if fmt == "json" else _tsv(tables)
    if out:
        with atomic_write(out, parents=False) as fh:
            fh.write(text)
    else:
        sys.stdout.write(text)
    for m in ms:
        sys.stderr.write(f"{m.name}: {m.signature(len(refs))}\n")
