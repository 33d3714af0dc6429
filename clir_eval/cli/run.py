"""``clir-eval run``, ``validate`` and ``report``: the experiment as a whole."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Optional

import typer

from ..errors import UserError
from ..io.files import check_output_dir
from ..io.results import read_results
from ..pipeline.settings import SHARD_DOCS, RunSettings
from ..report import write_reports
from .app import app
from .options import check_option, print_summary, setting_option


@app.command("run")
def run_cmd(
    config: Path = typer.Argument(..., help="Experiment config (YAML)."),
    out: Path = typer.Option(..., "--out", help="Output directory (results.json, reports, cache/)."),
    jobs: Optional[int] = setting_option(RunSettings, "jobs", "--jobs", "-j", extra="The option overrides the config's jobs."),
    data_root: Optional[Path] = typer.Option(None, "--data-root", help="Where ${DATA_ROOT} points (default: $CLIR_EVAL_DATA, else the config's data_root)."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bars or summary."),
    executor: Optional[str] = setting_option(RunSettings, "executor", value=None, extra="Default: the config's executor, else local."),
    ray_address: Optional[str] = typer.Option(None, "--ray-address", help="Ray cluster to join (HOST:PORT; default: $RAY_ADDRESS, else a local Ray). Implies --executor ray."),
    shard_docs: Optional[int] = setting_option(RunSettings, "shard_docs", value=None, extra=f"Each span is its own task. Default: the config's shard_docs, else {SHARD_DOCS}."),
    cache: Optional[Path] = typer.Option(None, "--cache", envvar="CLIR_EVAL_CACHE", show_envvar=False, help="A cache shared by several output directories, so they reuse finished work (default: $CLIR_EVAL_CACHE, else OUT/cache). Runs sharing it take turns."),
) -> None:
    """Run an experiment: MT, retrieval, IR, correlations, reports.

    \b
    Examples (after 'clir-eval demo --out demo-out'):
      clir-eval run demo-out/demo.yaml --out demo-out --quiet      # finished stages come from demo-out/cache
    """
    from ..config.load import load_config
    from ..pipeline.run import run_experiment

    for name, value in (("jobs", jobs), ("executor", executor), ("shard_docs", shard_docs)):
        if value is not None:  # not given: the config's
            check_option(RunSettings, name, value)
    check_output_dir(out)
    if ray_address is not None:
        if executor not in (None, "ray"):
            raise UserError(f"--ray-address needs --executor ray, not --executor {executor}")
        os.environ["RAY_ADDRESS"], executor = ray_address, "ray"
    cfg = load_config(config, data_root=str(data_root) if data_root else None)
    results = run_experiment(cfg, out, jobs=jobs, quiet=quiet, executor=executor, shard_docs=shard_docs, cache_dir=cache)
    if not quiet:
        print_summary(results, out)


@app.command("validate")
def validate_cmd(
    config: Path = typer.Argument(..., help="Experiment config (YAML)."),
    data_root: Optional[Path] = typer.Option(None, "--data-root", help="Where ${DATA_ROOT} points."),
    fmt: str = typer.Option("text", "--format", help="text: a short summary | json: the resolved config."),
) -> None:
    """Check a config and open every input, without running it.

    Checks WMT references/systems/domains, generated query counts, tables joined to every
    system, formats, measures and the analyzer. Errors name the YAML field. Prints a short
    summary (systems, metrics, measures, queries, documents, relevance, estimated cost), or the
    resolved config as JSON with --format json; each check passed is an 'ok:' line on stderr.

    \b
    Examples (after 'clir-eval demo --out demo-out'):
      clir-eval validate demo-out/demo.yaml
      clir-eval validate demo-out/demo.yaml --format json
    """
    from ..config.load import load_config
    from ..sources.validate import dry_run, summary

    if fmt not in ("text", "json"):
        raise UserError(f"--format must be text or json, got {fmt!r}")
    cfg = load_config(config, data_root=str(data_root) if data_root else None)
    facts: dict = {}
    checked = dry_run(cfg, facts)
    for line in checked:
        typer.echo(f"ok: {line}", err=True)
    for note in facts.get("notes", []):
        typer.echo(f"note: {note}", err=True)
    if fmt == "json":
        typer.echo(json.dumps(cfg.to_dict(), indent=1, ensure_ascii=False))
    else:
        lines = summary(cfg, facts)
        typer.echo("\n".join(ln for ln in lines if not ln.startswith("warning:")))
        for line in (ln for ln in lines if ln.startswith("warning:")):  # diagnostics: stderr, as run prints them
            typer.echo(line, err=True)


@app.command("report")
def report_cmd(
    out: Path = typer.Argument(..., help="An output directory holding results.json."),
) -> None:
    """Re-render a finished run's reports from its results.json.

    Writes the TSV, Markdown, HTML and LaTeX reports of DIR/results.json again.

    \b
    Examples (after 'clir-eval demo --out demo-out'):
      clir-eval report demo-out
    """
    results = read_results(out)
    check_output_dir(out, "report DIR")
    try:
        write_reports(results, out)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as e:  # rendered before any file is written
        raise UserError(f"{out / 'results.json'}: unexpected content ({type(e).__name__}: {e}); "
                        "re-run the experiment to write a complete one") from None
    typer.echo(f"report: {out / 'report.html'}")
