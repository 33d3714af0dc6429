"""Reports made from results.json: text tables (:mod:`.tables`), the HTML page (:mod:`.html`) and LaTeX (:mod:`.latex`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Mapping

from ..io.files import write_set

REPORT_FILES = ("scores.tsv", "correlations.tsv", "report.md", "report.html", "report.tex")


def render_reports(results: Mapping[str, Any], *, plots: bool = True,
                   on_done: Callable[[int], None] | None = None) -> dict[str, str]:
    """The report files' names and texts: scores.tsv, correlations.tsv, report.md, report.html,
    report.tex; ``on_done(i)`` after the i-th of :data:`REPORT_FILES` is rendered (progress)."""
    from .html import html_report
    from .tables import latex_report, markdown
    from .tsv import correlations_tsv, scores_tsv

    render = {
        "scores.tsv": scores_tsv,
        "correlations.tsv": correlations_tsv,
        "report.md": markdown,
        "report.html": lambda r: html_report(r, plots=plots),
        "report.tex": latex_report,
    }
    files = {}
    for i, fname in enumerate(REPORT_FILES):
        files[fname] = render[fname](results)
        if on_done:
            on_done(i)
    return files


def write_reports(results: Mapping[str, Any], out_dir: str | Path, *, plots: bool = True) -> dict[str, Path]:
    """Write scores.tsv, correlations.tsv, report.md, report.html and report.tex into ``out_dir``
    as one set: all rendered and written aside before any previous one is replaced."""
    out = Path(out_dir)
    files = render_reports(results, plots=plots)
    write_set(out, files)
    return {fname: out / fname for fname in files}
