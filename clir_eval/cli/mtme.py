"""``clir-eval mtme-export``: a run's scores as mt-metrics-eval files (IR measures as gold scores, MT metrics as metric scores)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer

from ..errors import UserError
from ..io.files import check_output_dir, read_text
from ..io.mtme import write_scores
from .app import app


@app.command("mtme-export")
def mtme_export_cmd(
    run_dir: str = typer.Argument(..., metavar="DIR", help="A 'clir-eval run' output directory (reads DIR/results.json)."),
    out: str = typer.Option(..., "--out", help="Directory to write human-scores/ and metric-scores/ into."),
    lp: str = typer.Option(..., "--lp", help="Language pair SRC-TGT of the file names, e.g. ru-en."),
    ref: str = typer.Option("refA", "--ref", help="Reference name in the MT metric file names (NAME-REF.sys.score)."),
) -> None:
    """Export a run's scores as mt-metrics-eval score files.

    Every IR measure becomes a gold score OUT/human-scores/LP.MEASURE.sys.score, every MT metric
    OUT/metric-scores/LP/METRIC-REF.sys.score, so mt-metrics-eval's tools can rank metrics by
    retrieval usefulness.

    \b
    Examples (after 'clir-eval demo --out demo-out'):
      clir-eval mtme-export demo-out --lp xx-en --out demo-out/mtme
    """
    check_output_dir(out)
    path = Path(run_dir) / "results.json"
    if not path.exists():
        raise UserError(f"{path}: not found; give the --out directory of a 'clir-eval run'")
    try:
        systems = json.loads(read_text(path))["systems"]
    except (ValueError, KeyError, TypeError) as e:
        raise UserError(f"{path}: not a clir-eval results.json ({type(e).__name__}: {e})") from None
    gold = write_scores(out, lp, {s: v.get("ir", {}) for s, v in systems.items()})
    metric = write_scores(out, lp, {s: v.get("mt", {}) for s, v in systems.items()}, ref=ref)
    for fname, name in {**gold, **metric}.items():
        sys.stdout.write(f"{fname}\t{name}\n")
