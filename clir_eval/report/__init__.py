"""Reports made from results.json: text tables (:mod:`.tables`), the HTML page (:mod:`.html`) and LaTeX (:mod:`.latex`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

REPORT_FILES = ("scores.tsv", "correlations.tsv", "report.md", "report.html", "report.tex")


def write_reports(results: Mapping[str, Any], out_dir: str | Path, *, plots: bool = True) -> dict[str, Path]:
    """Write scores.tsv, correlations.tsv, report.md, report.html and report.tex into ``out_dir``
    (all rendered before the first is written)."""
    from ..io.files import atomic_write
    from .html import html_report
    from .tables import correlations_tsv, latex_report, markdown, scores_tsv

    out = Path(out_dir)
    files = {
        "scores.tsv": scores_tsv(results),
        "correlations.tsv": correlations_tsv(results),
        "report.md": markdown(results),
        "report.html": html_report(results, plots=plots),
        "report.tex": latex_report(results),
    }
    paths = {}
    for fname, text in files.items():
        with atomic_write(out / fname) as fh:
            fh.write(text)
        paths[fname] = out / fname
    return paths
