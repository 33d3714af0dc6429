"""``clir-eval pool``: one leaderboard of MT metrics over several finished runs, and CLIR thresholds."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import List, Optional

import typer

from ..errors import UserError
from ..io.files import check_output_dir
from ..limits import RUN_SEED
from .app import app


@app.command("pool")
def pool_cmd(
    runs: List[Path] = typer.Argument(..., help="Output directories of finished runs (each holding results.json)."),
    out: Optional[Path] = typer.Option(None, "--out", help="Write report.md, report.html, report.json and the "
                                       "thresholds plots here."),
    weights: str = typer.Option("equal", "--weights", help="equal (each run weighs the same), or attributes "
                                "separated by commas: the weight is split evenly over the first attribute's values, "
                                "then the next (mt-metrics-eval's AssignWeights); 'name' is the run's name, any other "
                                "an attribute all of a run's systems share."),
    margin: float = typer.Option(0.1, "--margin", help="Equivalence margin in Δτ: a pair is 'equivalent within ±M' "
                                 "when its 90% CI lies inside (two one-sided tests)."),
    correction: str = typer.Option("holm", "--correction", help="holm, bh or none (none: mt-metrics-eval's "
                                   "AverageCorrMatrix), over each target's metric pairs."),
    bootstrap: int = typer.Option(1000, "--bootstrap", help="Bootstrap draws of the Δτ and threshold intervals."),
    seed: int = typer.Option(RUN_SEED, "--seed", help="Seed of the thresholds' bootstrap and, with two or more runs, of "
                             "the PERM-BOTH draws (each run's stream from this seed and the run's content; one run "
                             "alone draws with its own seeds)."),
    one_sided: bool = typer.Option(False, "--one-sided", help="Test a pair one-sided in the direction the pooled "
                                   "ranking chose, as mt-metrics-eval does (with --correction none: its clusters); "
                                   "rejects up to about 2α under the null. Default: two-sided."),
    mix_architectures: bool = typer.Option(False, "--mix-architectures", help="Pool runs of document translation "
                                           "and of query translation together (default: refused; pool each "
                                           "architecture on its own)."),
    fmt: str = typer.Option("text", "--format", help="text | json | md."),
) -> None:
    """Pool finished runs: a metric leaderboard, CLIR thresholds.

    Mean τ over the runs, significance clusters from the runs' PERM-BOTH draws summed with the runs'
    weights, each pair's pooled Δτ with a 95% CI and an equivalence statement, and for each metric the
    difference between two systems that retrieval agrees with 80/90/95% of the time.

    Give several runs' output directories (clir-eval pool OUT1 OUT2 ...); one run alone is its own ranking.

    \b
    Examples (after 'clir-eval demo --out demo-out'):
      clir-eval pool demo-out --out demo-out/pooled
      clir-eval pool demo-out --margin 0.05 --format json
    """
    from ..pooling import pool
    from ..pooling.report import json_text, markdown, summaries, write_reports

    if fmt not in ("text", "json", "md"):
        raise UserError(f"unknown --format {fmt!r}; use text, json or md")
    if out is not None:
        check_output_dir(out)
        _check_out_is_not_a_run(out, runs)
    res = pool([str(r) for r in runs], weights=weights, margin=margin, correction=correction, bootstrap=bootstrap,
               seed=seed, plots=out is not None, two_sided=not one_sided, mix_architectures=mix_architectures)
    if out is not None:
        write_reports(res, out)
    if fmt == "json":
        print(json_text(res), end="")
    elif fmt == "md":
        print(markdown(res))
    else:
        _text(res, summaries(res), out)


def answer_lines(res, summary: list[dict]) -> list[str]:
    """The pooled answer in at most ten short lines, the first starting with ``Answer``: per system-level
    target its first cluster and how many metric pairs differ or are equivalent; then what follows."""
    from ..pooling.report import pool_num

    system = [s for s in summary if s.get("level", "system") == "system"]
    lines = [f"Answer (pooled over {len(res.tasks)} run(s), system level; clusters at "
             f"{res.settings['correction']}-adjusted p < {res.settings['alpha']:g}):"]
    for s in system[:7]:
        rows = [r for r in res.leaderboard if r["target"] == s["target"] and r.get("level", "system") == "system"]
        first = [r for r in rows if r.get("cluster") == 1]
        lead = (f"{{{', '.join(r['metric'] for r in first)}}} first (mean τ {pool_num(first[0]['mean_tau'])})"
                if first else "no ranking")
        lines.append(f"  {s['target']}: {lead}; {s['significant']} of {s['n_pairs']} pairs differ, "
                     f"{s['equivalent']} equivalent within ±{res.settings['margin']:g}")
    if len(system) > 7:
        lines.append(f"  {len(system) - 7} more target(s) below")
    if not system:
        lines.append("  no system-level target pooled")
    items = len(summary) - len(system)
    if items:
        lines.append(f"Item level: {items} analyses below (which items a metric misjudges; a diagnosis, not a choice)")
    if res.warnings:
        lines.append(f"Limits: {len(res.warnings)} WARNING line(s) on stderr say what these runs cannot show")
    return lines


def _check_out_is_not_a_run(out: Path, runs: List[Path]) -> None:
    """--out must not be a run's own directory: the pool's report.md / report.html would replace the run's."""
    target = out.resolve()
    for r in runs:
        if Path(r).resolve() == target:
            raise UserError(f"--out {out} is the run directory {r} given to pool; its report.md and report.html "
                            f"would be replaced: give a directory of its own (e.g. {out}/pooled)")
    if (out / "results.json").exists():
        raise UserError(f"--out {out} holds a run's results.json (a run's output directory); pool's reports would "
                        f"replace that run's report.md and report.html: give a directory of its own (e.g. {out}/pooled)")


def _text(res, summary, out: Optional[Path]) -> None:
    from ..pooling.report import labels, pool_ci, pool_delta, pool_num

    lab = labels(res)
    for line in answer_lines(res, summary):
        print(line)
    print()
    for s in summary:
        print(s["text"])
    key = lambda r: (r.get("level", "system"), r.get("items"), r["target"])  # noqa: E731
    for k in dict.fromkeys(key(r) for r in res.leaderboard):
        rows = [r for r in res.leaderboard if key(r) == k]
        runs = list(rows[0]["taus"])
        what = f"{k[2]} (mean τ" if k[0] == "system" else f"item level, {k[2]} over {k[1]} (mean within-item τ"
        print(f"\n{what} over {rows[0]['n_tasks']} runs; per run: {', '.join(lab[r] for r in runs)})")
        width = max(len(r["metric"]) for r in rows)
        for r in rows:
            taus = " ".join(f"{pool_num(r['taus'][k]):>6}" if r["taus"][k] is not None else "  miss" for k in runs)
            print(f"  {str(r['cluster'] or ('?' if r.get('untested') else '-')):>2} {r['metric']:<{width}} {pool_num(r['mean_tau']):>6}   {taus}")
    pooled = [r for r in res.thresholds if "run" not in r]
    if pooled:
        print("\nCLIR thresholds (pooled): metric target pairs accuracy Δ80% Δ90% Δ95%")
        for r in pooled:
            print(f"  {r['metric']} {r['target']} {r['n_pairs']} {pool_num(r['accuracy'])} {pool_ci(r['accuracy_ci'])} "
                  f"{pool_delta(r, '0.8')} {pool_delta(r, '0.9')} {pool_delta(r, '0.95')}")
    if out is not None:
        print(f"\nreports: {out / 'report.html'}, {out / 'report.md'}, {out / 'report.json'}")
    sys.stdout.flush()
    for w in res.warnings:
        print(f"WARNING: {w}", file=sys.stderr)
    for n in res.notes:
        print(f"note: {n}", file=sys.stderr)
