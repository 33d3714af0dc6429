"""``clir-eval design``: how many systems and queries a study needs to answer (power by simulation)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Optional

import typer

from ..correlation.settings import CorrelationSettings, DesignSettings
from ..errors import UserError
from ..settings import default
from .app import app
from .options import build, setting_option


@app.command("design")
def design_cmd(
    out: Path = typer.Argument(..., help="A finished run's output directory (holding results.json)."),
    systems: str = typer.Option("", "--systems", help="Comma list of study sizes in systems (default: 6 sizes, "
                                "0.5x to 3x the observed)."),
    queries: str = typer.Option("", "--queries", help="Comma list of study sizes in queries (default: 6 sizes, "
                                "0.5x to 3x the observed)."),
    targets: str = typer.Option("", "--targets", help="Comma list of IR measures (default: every measure that is a "
                                "mean over queries)."),
    reps: int = setting_option(DesignSettings, "reps"),
    permutations: int = setting_option(DesignSettings, "permutations"),
    power: float = setting_option(DesignSettings, "power"),
    seed: int = setting_option(DesignSettings, "seed"),
    jobs: Optional[int] = typer.Option(None, "--jobs", "-j", min=1, help="Worker processes for the grid (default: 1)."),
    fmt: str = typer.Option("text", "--format", help="text | json."),
) -> None:
    """Power of a run's questions at other study sizes.

    Sizes in systems and queries; the finished run in OUT is resampled. Writes OUT/design.json, OUT/design.png and
    OUT/design.html, adds a Study design section to OUT's reports (and a design block to its results.json);
    prints a table and one line per metric pair and per τ (see "Study design" in the item-level page of the docs).

    \b
    Examples (after 'clir-eval demo --out demo-out'):
      clir-eval design demo-out --targets map --reps 50
      clir-eval design demo-out --targets map --systems 6,12,24 --queries 30,60 --format json
    """
    from ..correlation.design import answers, default_sizes, design, design_data
    from ..io.files import write_json
    from ..io.results import read_results
    from ..limits import MAX_JOBS, check_max
    from ..params import split_list

    if fmt not in ("text", "json"):
        raise UserError(f"unknown --format {fmt!r}; use text or json")
    build(DesignSettings, reps=reps, permutations=permutations, power=power, seed=seed)
    check_max(jobs or 1, MAX_JOBS, "--jobs")
    results = read_results(out)
    data = design_data(results)
    if targets:
        want = split_list(targets)
        unknown = [t for t in want if t not in data.targets]
        if unknown:
            raise UserError(f"--targets {unknown[0]}: not an IR measure with per-query values in {out / 'results.json'}"
                            f" (these are: {', '.join(data.targets)})")
        data = type(data)(data.systems, data.queries, data.metrics, {t: data.targets[t] for t in want})
    S, Q = len(data.systems), len(data.queries)
    n_sys = _sizes(systems, "--systems", 3) or default_sizes(S, 3)
    n_q = _sizes(queries, "--queries", 1) or default_sizes(Q, 1)
    alpha = (results.get("correlations") or [{}])[0].get("alpha", default(CorrelationSettings, "alpha"))
    if jobs and jobs > 1:
        from ..pipeline.executor import get_executor

        with get_executor("local", jobs) as ex:
            rows = design(data, n_sys, n_q, reps=reps, permutations=permutations, alpha=alpha, seed=seed, map=ex.map)
    else:
        rows = design(data, n_sys, n_q, reps=reps, permutations=permutations, alpha=alpha, seed=seed)
    lines = answers(rows, S, Q, power)
    doc = {"observed": {"n_systems": S, "n_queries": Q}, "settings": {
        "reps": reps, "permutations": permutations, "alpha": alpha, "seed": seed, "power": power,
        "systems": n_sys, "queries": n_q,
        "method": "systems and queries drawn from the observed ones with replacement; single τ: power of the exact untied "
                  "τ-b test for the debiased effect sqrt(max(0, τ² - bootstrap variance)), scaled per size by the bootstrap "
                  "mean τ there; pair separated: share of drawn studies where one-sided PERM-BOTH gives p=(c+1)/(k+1) < "
                  "alpha, no family correction"},
        "rows": rows, "answers": lines}
    write_json(out / "design.json", doc)
    _plots(doc, out)
    _add_to_reports(results, doc, out)
    if fmt == "json":
        sys.stdout.write(json.dumps(rows, indent=1, ensure_ascii=False) + "\n")
        return
    typer.echo(f"observed: {S} systems x {Q} queries; {reps} simulated studies per size, α = {alpha:g}")
    typer.echo(f"{'target':<14} {'a':<10} {'b':<10} {'systems':>7} {'queries':>7} {'power':>6}")
    for r in rows:
        typer.echo(f"{r['target']:<14} {r['a']:<10} {r.get('b') or '-':<10} {r['n_systems']:>7} {r['n_queries']:>7} "
                   f"{r['power']:>6.2f}")
    for line in lines:
        typer.echo(line)
    typer.echo(f"design: {out / 'design.html'} (also design.png, design.json)")


def _add_to_reports(results: dict, doc: dict, out: Path) -> None:
    """results.json gains a ``design`` block (observed size, settings, the rows at the observed size,
    the answers) and the run's reports a Study design section; all replaced as one set."""
    from ..io.files import write_set
    from ..report import render_reports

    S, Q = doc["observed"]["n_systems"], doc["observed"]["n_queries"]
    results["design"] = {
        "observed": doc["observed"],
        "settings": {k: doc["settings"][k] for k in ("reps", "permutations", "alpha", "seed", "power", "method")},
        "observed_rows": [r for r in doc["rows"] if (r["n_systems"], r["n_queries"]) == (S, Q)],
        "answers": doc["answers"],
    }
    files = render_reports(results)
    files["results.json"] = json.dumps(results, indent=1, ensure_ascii=False) + "\n"
    write_set(out, files, last="results.json")


def _sizes(text: str, name: str, minimum: int) -> list[int]:
    from ..params import split_list

    out = []
    for v in split_list(text):
        try:
            n = int(v)
        except ValueError:
            raise UserError(f"{name}: {v!r} is not a whole number") from None
        if not minimum <= n <= 100_000:
            raise UserError(f"{name}: {n} is out of range; use {minimum} to 100000")
        out.append(n)
    return sorted(set(out))


def _plots(doc: dict, out: Path) -> None:
    """design.png (power vs systems and vs queries, a line per τ / pair) and design.html (it plus the answers)."""
    import base64
    import html
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ..io.files import atomic_write

    S, Q = doc["observed"]["n_systems"], doc["observed"]["n_queries"]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    keys = list(dict.fromkeys((r["target"], r["a"], r.get("b")) for r in doc["rows"]))
    for ax, (axis, fixed, other) in zip(axes, (("n_systems", "n_queries", Q), ("n_queries", "n_systems", S))):
        for k in keys:
            pts = sorted((r[axis], r["power"]) for r in doc["rows"]
                         if (r["target"], r["a"], r.get("b")) == k and r[fixed] == other)
            label = f"{k[0]}: {k[1]} vs {k[2]}" if k[2] else f"{k[0]}: τ({k[1]})"
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", linestyle="--" if k[2] is None else "-",
                    label=label)
        ax.axhline(doc["settings"]["power"], color="grey", linewidth=0.8)
        ax.set_xlabel(f"{axis.replace('n_', '')} (at {other} {fixed.replace('n_', '')})")
        ax.set_ylabel("power")
        ax.set_ylim(-0.02, 1.02)
    axes[1].legend(fontsize=6, loc="lower right")
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, metadata={"Software": None})
    plt.close(fig)
    png = buf.getvalue()
    with atomic_write(out / "design.png", "wb") as fh:
        fh.write(png)
    body = ("<!doctype html><html lang='en'><head><meta charset='utf-8'><title>study design</title></head><body>"
            f"<h1>Study design</h1><p>Observed: {S} systems × {Q} queries. {html.escape(doc['settings']['method'])}; "
            f"{doc['settings']['reps']} simulated studies per size, seed {doc['settings']['seed']}.</p><ul>"
            + "".join(f"<li>{html.escape(a)}</li>" for a in doc["answers"])
            + f"</ul><img alt='power curves' src='data:image/png;base64,{base64.b64encode(png).decode()}'></body></html>")
    with atomic_write(out / "design.html") as fh:
        fh.write(body)
