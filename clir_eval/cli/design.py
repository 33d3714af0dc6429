"""``clir-eval design``: how many systems and queries a study needs to answer (power by simulation)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Optional

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
    documents: str = typer.Option("", "--documents", help="Comma list of study sizes in documents for the item-level "
                                  "τ and metric pairs over documents (default: 6 sizes, 0.5x to 3x the observed, when "
                                  "the run has an item-level documents matrix)."),
    targets: str = typer.Option("", "--targets", help="Comma list of IR measures, and retrievability for the item-level "
                                "τ and metric pairs over documents (default: every measure that is a mean over "
                                "queries, and retrievability when the run has item-level documents)."),
    reps: int = setting_option(DesignSettings, "reps"),
    permutations: int = setting_option(DesignSettings, "permutations"),
    doc_pair_reps: int = setting_option(DesignSettings, "doc_pair_reps"),
    doc_pair_permutations: int = setting_option(DesignSettings, "doc_pair_permutations"),
    power: float = setting_option(DesignSettings, "power"),
    seed: int = setting_option(DesignSettings, "seed"),
    jobs: Optional[int] = typer.Option(None, "--jobs", "-j", min=1, help="Worker processes for the grid (default: 1)."),
    fmt: str = typer.Option("text", "--format", help="text | json."),
) -> None:
    """Power of a run's questions at other study sizes.

    Sizes in systems and queries (and documents, for the item-level τ of a run with item level); the finished
    run in OUT is resampled. Writes OUT/design.json, OUT/design.png and
    OUT/design.html, adds a Study design section to OUT's reports (and a design block to its results.json);
    prints a table and one line per metric pair and per τ (see "Study design" in the item-level page of the docs).

    \b
    Examples (after 'clir-eval demo --out demo-out'):
      clir-eval design demo-out --targets map --reps 50
      clir-eval design demo-out --targets map --systems 6,12,24 --queries 30,60 --format json
    """
    from ..correlation.design import (DOC_METHOD, DOC_PAIR_METHOD, DOC_TARGET, METHOD, answers, default_sizes, design,
                                      design_data, design_document_pairs, design_documents, document_data,
                                      document_notes, has_documents)
    from ..io.files import write_json
    from ..io.results import read_results
    from ..limits import MAX_JOBS, check_max
    from ..params import split_list
    from ..report.verdicts import uninformative_targets

    if fmt not in ("text", "json"):
        raise UserError(f"unknown --format {fmt!r}; use text or json")
    build(DesignSettings, reps=reps, permutations=permutations, doc_pair_reps=doc_pair_reps,
          doc_pair_permutations=doc_pair_permutations, power=power, seed=seed)
    check_max(jobs or 1, MAX_JOBS, "--jobs")
    results = read_results(out)
    data = design_data(results)
    want = split_list(targets) if targets else None
    n_docs = _sizes(documents, "--documents", 1)
    docs = None
    if (want is None and (n_docs or has_documents(results))) or (want and DOC_TARGET in want):
        docs = document_data(out, results)  # checked against results.json; an error line when missing or stale
    elif n_docs:
        raise UserError(f"--documents: --targets leaves out {DOC_TARGET}, the target of the documents' item-level τ; "
                        f"add it to --targets")
    if want:
        known = [*data.targets, *([DOC_TARGET] if docs is not None else [])]
        unknown = [t for t in want if t not in known]
        if unknown:
            raise UserError(f"--targets {unknown[0]}: not an IR measure with per-query values in {out / 'results.json'}"
                            f" (these are: {', '.join(known)})")
        data = type(data)(data.systems, data.queries, data.metrics, {t: data.targets[t] for t in want if t != DOC_TARGET})
    S, Q = len(data.systems), len(data.queries)
    n_sys = _sizes(systems, "--systems", 3) or default_sizes(S, 3)
    n_q = _sizes(queries, "--queries", 1) or default_sizes(Q, 1)
    alpha = (results.get("correlations") or [{}])[0].get("alpha", default(CorrelationSettings, "alpha"))
    D = len(docs.documents) if docs is not None else None
    if docs is not None:
        n_docs = n_docs or default_sizes(D, 1)
    kw = dict(alpha=alpha, seed=seed)
    pair_kw = dict(reps=doc_pair_reps, permutations=doc_pair_permutations, **kw)

    def simulate(map: Any = None) -> list[dict]:
        rows = design(data, n_sys, n_q, reps=reps, permutations=permutations, map=map, **kw) if data.targets else []
        if docs is not None:
            rows += design_documents(docs, n_sys, n_docs, reps=reps, map=map, **kw)
            rows += design_document_pairs(docs, n_sys, n_docs, map=map, **pair_kw)
        return rows

    if jobs and jobs > 1:
        from ..pipeline.executor import get_executor

        with get_executor("local", jobs) as ex:
            rows = simulate(ex.map)
    else:
        rows = simulate()
    lines = answers(rows, S, Q, power, D)
    observed = {"n_systems": S, "n_queries": Q, **({"n_documents": D} if docs is not None else {})}
    doc = {"observed": observed, "settings": {
        "reps": reps, "permutations": permutations, "alpha": alpha, "seed": seed, "power": power,
        "systems": n_sys, "queries": n_q,
        "method": METHOD,
        **({"documents": n_docs, "documents_method": DOC_METHOD, "doc_pair_reps": doc_pair_reps,
            "doc_pair_permutations": doc_pair_permutations, "doc_pairs_method": DOC_PAIR_METHOD}
           if docs is not None else {})},
        "rows": rows, "answers": lines, **({"notes": document_notes(docs)} if docs is not None else {})}
    write_json(out / "design.json", doc)
    _plots(doc, out)
    _add_to_reports(results, doc, out)
    if fmt == "json":
        sys.stdout.write(json.dumps(rows, indent=1, ensure_ascii=False) + "\n")
        return
    if docs is None:
        typer.echo(f"observed: {S} systems x {Q} queries; {reps} simulated studies per size, α = {alpha:g}")
        typer.echo(f"{'target':<14} {'a':<10} {'b':<10} {'systems':>7} {'queries':>7} {'power':>6}")
    else:
        typer.echo(f"observed: {S} systems x {Q} queries, {D} judged-relevant documents; {reps} simulated studies per "
                   f"size (document pairs: {doc_pair_reps}, PERM-BOTH k={doc_pair_permutations}), α = {alpha:g}")
        typer.echo(f"{'target':<14} {'a':<10} {'b':<10} {'systems':>7} {'queries':>7} {'documents':>9} {'power':>6}")
    for r in rows:
        line = f"{r['target']:<14} {r['a']:<10} {r.get('b') or '-':<10} {r['n_systems']:>7} {r['n_queries']:>7} "
        if docs is not None:
            line += f"{r['n_documents'] if 'n_documents' in r else '-':>9} "
        line += f"{r['power']:>6.2f}"
        if "reps" in r:  # a document pair: its own (smaller) numbers of studies and permutations
            line += f"  (reps {r['reps']}, k {r['permutations']})"
        typer.echo(line)
    for note in doc.get("notes", []):
        typer.echo(f"note: {note}")
    flagged = [t for t in uninformative_targets(results) if any(r["target"] == t for r in rows)]
    if flagged:
        typer.echo(f"note: {', '.join(flagged)}: flagged UNINFORMATIVE by the run (report.md); power for a target that "
                   "barely separates the systems says little")
    for line in lines:
        typer.echo(line)
    typer.echo(f"design: {out / 'design.html'} (also design.png, design.json)")


def _add_to_reports(results: dict, doc: dict, out: Path) -> None:
    """results.json gains a ``design`` block (observed size, settings, the rows at the observed size,
    the answers) and the run's reports a Study design section; all replaced as one set."""
    from ..io.files import write_set
    from ..report import render_reports

    S, Q, D = doc["observed"]["n_systems"], doc["observed"]["n_queries"], doc["observed"].get("n_documents")
    keys = ("reps", "permutations", "alpha", "seed", "power", "method") + (
        ("documents_method", "doc_pair_reps", "doc_pair_permutations", "doc_pairs_method") if D else ())
    results["design"] = {
        "observed": doc["observed"],
        "settings": {k: doc["settings"][k] for k in keys},
        "observed_rows": [r for r in doc["rows"] if (r["n_systems"], r["n_queries"]) == (S, Q)
                          and r.get("n_documents", D) == D],
        "answers": doc["answers"],
        **({"notes": doc["notes"]} if doc.get("notes") else {}),
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
    """design.png (per target, power against systems and against queries or documents, a line per τ
    (dashed) and per pair) and design.html (it plus the answers)."""
    import base64
    import html
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ..io.files import atomic_write

    S, Q, D = doc["observed"]["n_systems"], doc["observed"]["n_queries"], doc["observed"].get("n_documents")
    # one row of two panels per target (a target's τ and pairs against systems and against queries or
    # documents), its legend to the right: a legend per target stays short enough to read
    groups = list(dict.fromkeys((r["target"], "n_documents" in r) for r in doc["rows"]))
    fig, axes = plt.subplots(len(groups), 2, figsize=(11, 2.6 * len(groups)), squeeze=False)
    for row, (target, docs) in zip(axes, groups):
        mine = [r for r in doc["rows"] if r["target"] == target and ("n_documents" in r) == docs]
        panels = ([("n_systems", "n_documents", D), ("n_documents", "n_systems", S)] if docs else
                  [("n_systems", "n_queries", Q), ("n_queries", "n_systems", S)])
        keys = list(dict.fromkeys((r["a"], r.get("b")) for r in mine))
        for ax, (axis, fixed, other) in zip(row, panels):
            for k in keys:
                pts = sorted((r[axis], r["power"]) for r in mine if (r["a"], r.get("b")) == k and r[fixed] == other)
                if pts:
                    ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", markersize=3,
                            linestyle="--" if k[1] is None else "-", label=f"{k[0]} vs {k[1]}" if k[1] else f"τ({k[0]})")
            ax.axhline(doc["settings"]["power"], color="grey", linewidth=0.8)
            ax.set_title(f"{target}{' (item level, documents)' if docs else ''}", fontsize=9)
            ax.set_xlabel(f"{axis.replace('n_', '')} (at {other} {fixed.replace('n_', '')})", fontsize=8)
            ax.set_ylabel("power", fontsize=8)
            ax.set_ylim(-0.02, 1.02)
            ax.tick_params(labelsize=7)
        row[1].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, metadata={"Software": None}, bbox_inches="tight")
    plt.close(fig)
    png = buf.getvalue()
    with atomic_write(out / "design.png", "wb") as fh:
        fh.write(png)
    body = ("<!doctype html><html lang='en'><head><meta charset='utf-8'><title>study design</title></head><body>"
            f"<h1>Study design</h1><p>Observed: {S} systems × {Q} queries. {html.escape(doc['settings']['method'])}; "
            f"{doc['settings']['reps']} simulated studies per size, seed {doc['settings']['seed']}.</p>"
            + (f"<p>Documents: {html.escape(doc['settings']['documents_method'])}.</p><p>Document pairs: "
               f"{html.escape(doc['settings']['doc_pairs_method'])}; {doc['settings']['doc_pair_reps']} simulated "
               f"studies per size, k = {doc['settings']['doc_pair_permutations']} permutations.</p>"
               if D is not None else "") + "<ul>"
            + "".join(f"<li>{html.escape(a)}</li>" for a in doc["answers"])
            + f"</ul><img alt='power curves' src='data:image/png;base64,{base64.b64encode(png).decode()}'></body></html>")
    with atomic_write(out / "design.html") as fh:
        fh.write(body)
