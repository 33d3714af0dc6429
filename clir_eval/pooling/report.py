"""report.md, report.html and report.json of ``clir-eval pool``: what cannot be concluded first,
then per target the leaderboard, the metric pairs and the CLIR thresholds."""

from __future__ import annotations

import base64
import html
import json
import math
from pathlib import Path
from typing import Any

from ..io.files import safe_filename, write_set
from .core import PoolResult
from .summary import is_system as _system
from .summary import item_keys, summaries


def pool_num(v: Any, nd: int = 3) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "—"
    if isinstance(v, str):
        return v
    s = f"{v:+.{nd}f}" if isinstance(v, float) and v < 0 else f"{v:.{nd}f}"
    return s


def pool_ci(ci: Any, nd: int = 3) -> str:
    if not ci or ci[0] is None:
        return "—"
    lo, hi = ci
    return f"[{pool_num(lo, nd)}, {'∞' if hi is None else pool_num(hi, nd)}]"


def pool_delta(row: dict[str, Any], level: str) -> str:
    """A threshold row's Δ at ``level`` ("0.8", ...): "separated" where the fit is degenerate (perfect separation)."""
    return "separated" if row.get("fit") == "separated" else pool_num(row["delta_at"][level], 2)


def labels(res: PoolResult) -> dict[str, str]:
    """Short run labels: the run's name when unique, else its directory."""
    names = [t["name"] for t in res.tasks]
    return {t["run"]: (t["name"] if names.count(t["name"]) == 1 else t["run"]) for t in res.tasks}


def to_json(res: PoolResult) -> dict[str, Any]:
    """``pool --format json`` and report.json: :meth:`PoolResult.to_dict` (its ``summary`` included)."""
    return res.to_dict()


def markdown(res: PoolResult, plots: dict[str, str] | None = None) -> str:
    lab = labels(res)
    s = res.settings
    L = [f"# Pooled over {len(res.tasks)} run(s)", ""]
    if res.warnings:
        L += ["## What these runs cannot show", ""]
        L += [f"- **{w}**" for w in res.warnings] + [""]
    L += ["## Answer", ""]
    L += [f"- {x['text']}" for x in summaries(res)] or ["- nothing pooled"]
    L += ["", f"Clusters: {s['test']}; {s['correction']} over each target's pairs; α = {s['alpha']:g}; draws "
          f"{s['first_draws']} per test ({s['resolution']}, up to {s['max_draws']}; {s['p_values']}). "
          f"Weights: {s['weights']}. "
          f"Δτ CIs: {s['ci_method']}; bootstrap draws where used: {s['bootstrap']}. Equivalent = the 90% CI inside "
          f"±{s['margin']:g} "
          "(two one-sided tests at 5%).", ""]
    if res.notes:
        L += ["Notes:", ""] + [f"- {n}" for n in res.notes] + [""]
    L += ["## Runs", "", "| run | name | systems | targets | metrics |", "|---|---|---:|---|---|"]
    for t in res.tasks:
        L.append(f"| {t['run']} | {t['name']} | {t['n_systems']} | {', '.join(t['targets'])} | {', '.join(t['metrics'])} |")
    L.append("")
    for t in dict.fromkeys(r["target"] for r in res.leaderboard if _system(r)):
        rows = [r for r in res.leaderboard if r["target"] == t and _system(r)]
        runs = list(rows[0]["taus"])
        L += [f"## {t}", "", "| cluster | metric | mean τ | " + " | ".join(lab[r] for r in runs) + " |",
              "|---:|---|---:|" + "---:|" * len(runs)]
        for r in rows:
            taus = [(pool_num(r["taus"][k]) if r["taus"][k] is not None else "missing") for k in runs]
            L.append(f"| {r['cluster'] if r['cluster'] else 'apart'} | {r['metric']} | {pool_num(r['mean_tau'])} | "
                     + " | ".join(taus) + " |")
        L += ["", f"Mean τ: weighted mean of the runs' own τ; n = {rows[0]['n_tasks']} runs. 'apart': not in every "
              "run, not ranked.", ""]
        pairs = [p for p in res.pairs if p["target"] == t and _system(p)]
        if pairs:
            L += [f"| a | b | Δτ | 95% CI | p adjusted | significant | equivalent ±{s['margin']:g} |",
                  "|---|---|---:|---|---:|---|---|"]
            for p in pairs:
                L.append(f"| {p['a']} | {p['b']} | {pool_num(p['delta'])} | {pool_ci(p['ci'])} | {pool_num(p['p_adjusted'])} | "
                         f"{'yes' if p['significant'] else 'no'} | {'yes' if p['equivalent'] else 'no'} |")
            L.append("")
    L += _item_markdown(res, lab)
    pooled = [r for r in res.thresholds if "run" not in r]
    if pooled:
        L += ["## CLIR thresholds (pooled)", "",
              "How often a metric's difference between two systems of a run points the way retrieval does, and the "
              "difference needed for 80/90/95% (fit; — = not reached within the observed differences; separated = every "
              "pair the metric separates agrees, no finite fit: see the notes).", "",
              "| metric | target | pairs | accuracy (95% CI) | Δ 80% | Δ 90% | Δ 95% | Δ 90% CI |",
              "|---|---|---:|---|---:|---:|---:|---|"]
        for r in pooled:
            L.append(f"| {r['metric']} | {r['target']} | {r['n_pairs']} | {pool_num(r['accuracy'])} {pool_ci(r['accuracy_ci'])} | "
                     f"{pool_delta(r, '0.8')} | {pool_delta(r, '0.9')} | {pool_delta(r, '0.95')} | {pool_ci(r['delta_at_ci']['0.9'], 2)} |")
        L.append("")
        for m, name in (plots or {}).items():
            L += [f"![{m}]({name})", ""]
        per = [r for r in res.thresholds if "run" in r]
        L += ["### Per run", "", "| run | metric | target | pairs | accuracy | Δ 80% | Δ 90% | Δ 95% |",
              "|---|---|---|---:|---:|---:|---:|---:|"]
        for r in per:
            L.append(f"| {lab[r['run']]} | {r['metric']} | {r['target']} | {r['n_pairs']} | {pool_num(r['accuracy'])} | "
                     f"{pool_delta(r, '0.8')} | {pool_delta(r, '0.9')} | {pool_delta(r, '0.95')} |")
        L.append("")
    return "\n".join(L)


ITEM_INTRO = ("Within-item τ (each run's item-level within grouping): every system's item scores on normal scores minus its own mean, "
              "τ across the systems per item, averaged over the items — on which items a system does worse than its "
              "own average, not which metric ranks the systems. Pooled over the runs that have an item level.")


def _item_tables(res: PoolResult, lab: dict[str, str]):
    """Per item-level analysis: (heading, leaderboard head, rows, pairs head, rows)."""
    s = res.settings
    for kind, t in item_keys(res):
        rows = [r for r in res.leaderboard if r.get("level") == "item" and (r["items"], r["target"]) == (kind, t)]
        runs = list(rows[0]["taus"])
        lb = [[(r["cluster"] or ("untested" if r.get("untested") else "apart")), r["metric"], pool_num(r["mean_tau"])]
              + [(pool_num(r["taus"][k]) if r["taus"][k] is not None else "missing") for k in runs] for r in rows]
        pairs = [p for p in res.pairs if p.get("level") == "item" and (p["items"], p["target"]) == (kind, t)
                 and p["p_adjusted"] is not None]
        pr = [[p["a"], p["b"], pool_num(p["delta"]), pool_ci(p["ci"]), pool_num(p["p_adjusted"]), "yes" if p["significant"] else "no",
               "yes" if p["equivalent"] else "no"] for p in pairs]
        yield (f"{t} over {kind}", ["cluster", "metric", "mean within τ"] + [lab[r] for r in runs], lb,
               ["a", "b", "Δτ", "95% CI", "p adjusted", "significant", f"equivalent ±{s['margin']:g}"], pr)


def _item_markdown(res: PoolResult, lab: dict[str, str]) -> list[str]:
    keys = item_keys(res)
    if not keys:
        return []
    it = res.settings.get("item_level") or {}
    L = ["## Item level", "", ITEM_INTRO, "",
         f"Pairs: {it.get('test', '—')}; {res.settings['correction']} over each analysis's pairs; draws "
         f"{it.get('first_draws', '—')} per test ({it.get('resolution', '—')}, up to {it.get('max_draws', '—')}). "
         f"Δτ CIs: {it.get('ci_method', '—')}.", ""]
    for head, lh, lb, ph, pr in _item_tables(res, lab):
        L += [f"### {head}", "", "| " + " | ".join(lh) + " |", "|---:|---|" + "---:|" * (len(lh) - 2)]
        L += ["| " + " | ".join(str(x) for x in r) + " |" for r in lb] + [""]
        if pr:
            L += ["| " + " | ".join(ph) + " |", "|---|---|---:|---|---:|---|---|"]
            L += ["| " + " | ".join(str(x) for x in r) + " |" for r in pr] + [""]
    return L


_CSS = ("body{font-family:sans-serif;max-width:70em;margin:1em auto;padding:0 1em}table{border-collapse:collapse;"
        "margin:.5em 0}td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}td.l,th.l{text-align:left}"
        ".warn{background:#fff3cd;border:1px solid #e0c060;padding:.5em 1em}.sig{font-weight:bold}")


def html_report(res: PoolResult, plots: dict[str, bytes] | None = None) -> str:
    """The same content as :func:`markdown`, as one self-contained page (plots inlined)."""
    lab = labels(res)
    s = res.settings
    e = html.escape
    H = [f"<!doctype html><html><head><meta charset='utf-8'><title>clir-eval pool</title><style>{_CSS}</style>"
         f"</head><body><h1>Pooled over {len(res.tasks)} run(s)</h1>"]
    if res.warnings:
        H.append("<div class='warn'><h2>What these runs cannot show</h2><ul>"
                 + "".join(f"<li><b>{e(w)}</b></li>" for w in res.warnings) + "</ul></div>")
    H.append("<h2>Answer</h2><ul>" + "".join(f"<li>{e(x['text'])}</li>" for x in summaries(res)) + "</ul>")
    H.append(f"<p>Clusters: {e(s['test'])}; {e(s['correction'])} over each target's pairs; α = {s['alpha']:g}; "
             f"{e(s['p_values'])}. "
             f"Δτ CIs: {e(s['ci_method'])}. Equivalent = the 90% CI inside ±{s['margin']:g}.</p>")
    if res.notes:
        H.append("<details open><summary>Notes</summary><ul>" + "".join(f"<li>{e(n)}</li>" for n in res.notes)
                 + "</ul></details>")

    def table(head: list[str], rows: list[list[str]], left: int = 1) -> str:
        h = "<table><tr>" + "".join(f"<th class='{'l' if i < left else ''}'>{e(x)}</th>" for i, x in enumerate(head))
        for r in rows:
            h += "<tr>" + "".join(f"<td class='{'l' if i < left else ''}'>{e(str(x))}</td>" for i, x in enumerate(r)) + "</tr>"
        return h + "</table>"

    H.append("<h2>Runs</h2>" + table(["run", "name", "systems", "targets", "metrics"],
                                     [[t["run"], t["name"], t["n_systems"], ", ".join(t["targets"]),
                                       ", ".join(t["metrics"])] for t in res.tasks], 5))
    for t in dict.fromkeys(r["target"] for r in res.leaderboard if _system(r)):
        rows = [r for r in res.leaderboard if r["target"] == t and _system(r)]
        runs = list(rows[0]["taus"])
        H.append(f"<h2>{e(t)}</h2>" + table(
            ["cluster", "metric", "mean τ"] + [lab[r] for r in runs],
            [[r["cluster"] or "apart", r["metric"], pool_num(r["mean_tau"])]
             + [(pool_num(r["taus"][k]) if r["taus"][k] is not None else "missing") for k in runs] for r in rows], 2))
        pairs = [p for p in res.pairs if p["target"] == t and _system(p)]
        if pairs:
            H.append(table(["a", "b", "Δτ", "95% CI", "p adjusted", "significant", f"equivalent ±{s['margin']:g}"],
                           [[p["a"], p["b"], pool_num(p["delta"]), pool_ci(p["ci"]), pool_num(p["p_adjusted"]),
                             "yes" if p["significant"] else "no", "yes" if p["equivalent"] else "no"] for p in pairs], 2))
    if item_keys(res):
        it = s.get("item_level") or {}
        H.append(f"<h2>Item level</h2><p>{e(ITEM_INTRO)}</p><p>Pairs: {e(str(it.get('test', '—')))}; "
                 f"{e(s['correction'])} over each analysis's pairs. Δτ CIs: {e(str(it.get('ci_method', '—')))}.</p>")
        for head, lh, lb, ph, pr in _item_tables(res, lab):
            H.append(f"<h3>{e(head)}</h3>" + table(lh, lb, 2) + (table(ph, pr, 2) if pr else ""))
    pooled = [r for r in res.thresholds if "run" not in r]
    if pooled:
        H.append("<h2>CLIR thresholds (pooled)</h2>" + table(
            ["metric", "target", "pairs", "accuracy", "95% CI", "Δ 80%", "Δ 90%", "Δ 95%"],
            [[r["metric"], r["target"], r["n_pairs"], pool_num(r["accuracy"]), pool_ci(r["accuracy_ci"])]
             + [pool_delta(r, k) for k in ("0.8", "0.9", "0.95")] for r in pooled], 2))
        for m, png in (plots or {}).items():
            H.append(f"<figure><img alt='{e(m)}' src='data:image/png;base64,{base64.b64encode(png).decode()}'>"
                     f"<figcaption>{e(m)}</figcaption></figure>")
        per = [r for r in res.thresholds if "run" in r]
        H.append("<details><summary>Per run</summary>" + table(
            ["run", "metric", "target", "pairs", "accuracy", "Δ 80%", "Δ 90%", "Δ 95%"],
            [[lab[r["run"]], r["metric"], r["target"], r["n_pairs"], pool_num(r["accuracy"])]
             + [pool_delta(r, k) for k in ("0.8", "0.9", "0.95")] for r in per], 3) + "</details>")
    H.append("</body></html>")
    return "".join(H)


def plot_name(metric: str) -> str:
    return f"thresholds_{safe_filename(metric)}.png"


def write_reports(res: PoolResult, out: Path) -> list[str]:
    """report.json, report.md, report.html and one thresholds PNG per metric, written as one set."""
    names = {m: plot_name(m) for m in res.plots}
    files: dict[str, str | bytes] = {names[m]: png for m, png in res.plots.items()}
    files["report.md"] = markdown(res, names)
    files["report.html"] = html_report(res, res.plots)
    files["report.json"] = json_text(res)
    out.mkdir(parents=True, exist_ok=True)
    stale = [p.name for p in out.glob("thresholds_*.png") if p.name not in files]  # an earlier pool's plots
    write_set(out, files, last="report.json", stale=stale)
    return list(files)


def json_text(res: PoolResult) -> str:
    """report.json's text (``--format json``): strict JSON, never NaN or Infinity."""
    return json.dumps(to_json(res), indent=1, ensure_ascii=False, allow_nan=False) + "\n"
