"""Report assembly: the one τ-table renderer (Markdown, TSV, console, LaTeX), the verdict sections and
report.md / report.tex built from results.json (the TSV files: :mod:`.tsv`)."""

from __future__ import annotations

import json
import re
from typing import Any, Collection, Mapping, Sequence

from ..correlation.verdict import leaders
from .analyses import analyses_blocks
from .blocks import (Block, Bullets, Code, Heading, Para, Table, _md_table, blocks_markdown, fmt_num, natural_key,
                     table_block)
from .latex import PDFTEX_MISSING_NOTE, PREAMBLE, blocks_latex, latex_escape, latex_tabular, pdftex_missing

KIND_TITLES = {
    "mt-ir": "MT metric vs IR measure",
    "mt-human": "MT metric vs human judgement",
    "ir-human": "IR measure vs human judgement",
}


def fmt_tau(v: float | None) -> str:
    """Paper style: 3 decimals without the leading zero (.429, -.120, 1.000); n/a for None."""
    if v is None:
        return "n/a"
    s = f"{v:.3f}"
    if s.startswith("0."):
        return s[1:]
    if s.startswith("-0."):
        return "-" + s[2:]
    return s


def fmt_p(p: float | None) -> str:
    return "n/a" if p is None else f"{p:.3g}"


def cell_text(c: Mapping[str, Any] | None, ci: str | None = None) -> str:
    """``×`` (not significant) + τ, optionally `` [lo, hi]`` from the row's ``ci`` key pair."""
    if c is None or c.get("tau") is None:
        return "n/a"
    text = ("×" if c.get("significant") is False else "") + fmt_tau(c["tau"])
    if ci and c.get(ci) and c[ci][0] is not None:
        text += f" [{fmt_tau(c[ci][0])}, {fmt_tau(c[ci][1])}]"
    return text


def tau_rows(rows: Sequence[tuple[Sequence[str], Mapping[str, Mapping[str, Any] | None]]], cols: Sequence[str],
             lower: Collection[str] = (), ci: str | None = None) -> list[list[tuple[str, str]]]:
    """The one τ table: per row (label cells, {x: correlation row}) the cells as (text, class),
    class ``best`` for the row's leaders (:func:`clir_eval.correlation.verdict.leaders`), ``ns``
    for not significant."""
    out = []
    for labels, cells in rows:
        best = set(leaders({x: (cells.get(x) or {}).get("tau") for x in cols}, lower))
        line = [(lab, "") for lab in labels]
        for x in cols:
            c = cells.get(x)
            cls = "best" if x in best else ("ns" if c and c.get("significant") is False else "")
            line.append((cell_text(c, ci), cls))
        out.append(line)
    return out


def render(header: Sequence[str], rows: Sequence[Sequence[tuple[str, str]]], fmt: str = "md", n_labels: int = 1,
           align: str | None = None) -> str:
    """Render cells from :func:`tau_rows` as Markdown (best in bold), TSV, aligned console text or a
    LaTeX booktabs tabular (best in bold, names escaped). ``align``: ``l``/``r`` per column
    (default: ``n_labels`` left, the rest right)."""
    align = align or "l" * n_labels + "r" * (len(header) - n_labels)
    if fmt == "md":
        return "\n".join(_md_table(header, rows, align)) + "\n"
    if fmt == "latex":
        return latex_tabular(header, rows, align)
    if fmt == "tsv":
        lines = ["\t".join(header)] + ["\t".join(t for t, _ in r) for r in rows]
    else:
        table = [list(header)] + [[t + ("*" if cls == "best" else "") for t, cls in r] for r in rows]
        widths = [max(len(r[i]) for r in table) for i in range(len(header))]
        lines = ["  ".join(c.ljust(w) if i < n_labels else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths)))
                 for r in table]
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- verdicts
def _names(ms: Sequence[str]) -> str:
    return ", ".join(ms)


COEF = {"kendall": "τ", "pearson": "r", "spearman": "ρ"}


def correction_phrase(correction: str) -> str:
    """"Holm-adjusted", "Benjamini-Hochberg-adjusted" or "unadjusted"."""
    return {"holm": "Holm-adjusted", "bh": "Benjamini-Hochberg-adjusted", "none": "unadjusted"}.get(
        correction, f"{correction}-adjusted")


def family_phrase(vds: Sequence[Mapping[str, Any]]) -> str:
    """The family the verdicts' correction adjusts over, said once."""
    fams = list(dict.fromkeys(v["family"] for v in vds))
    if len(fams) == 1:
        return fams[0]
    sizes = sorted({v["family_size"] for v in vds if v.get("family_size") is not None})
    n = f" ({sizes[0]}{'–' + str(sizes[-1]) if len(sizes) > 1 else ''} tests each)" if sizes else ""
    return f"each target's own metric pairs{n}"


def _vname(v: Mapping[str, Any], lab) -> str:
    return (f"{lab(v['group'])} / " if v.get("group") is not None else "") + lab(v["target"])


def fmt_ci(ci: Sequence[float | None] | None) -> str:
    if not ci or ci[0] is None:
        return "n/a"
    return f"[{fmt_tau(ci[0])}, {fmt_tau(ci[1])}]"


def verdict_blocks(vds: Sequence[Mapping[str, Any]], labels: Mapping[str, str] | None = None) -> list[Block]:
    """A paragraph and bullets (Markdown-inline) stating each ranking with its clusters, what is
    significant after adjustment, the power and the discriminability; loud notes first; then the
    table of every pairwise difference with its CI and p."""
    if not vds:
        return []
    lab = (lambda v: (labels or {}).get(v, v))  # noqa: E731
    first = vds[0]
    alpha = first.get("alpha", 0.05)
    coef = COEF.get(first.get("method", "kendall"), "τ")
    blocks: list[Block] = [Para(
        f"Ranking per target by oriented {coef}; clusters as mt-metrics-eval's AssignRanks: a metric opens a new "
        f"cluster when a metric of the current cluster beats it in PERM-BOTH at "
        f"{correction_phrase(first['correction'])} p < {alpha:g} (family: {family_phrase(vds)}). A winner is "
        "named only when the first cluster has one member.")]
    loud = [f"**{_vname(v, lab)}**: {n}" for v in vds for n in v.get("warnings", [])]
    if loud:
        blocks.append(Bullets(tuple(loud)))
    items = []
    for v in vds:
        cl = " > ".join("{" + _names([lab(m) for m in c]) + "}" for c in v["clusters"]) or "none ranked"
        if v.get("winner"):
            head = f"winner **{lab(v['winner'])}** (alone in the first cluster)"
        elif v["clusters"] and len(v["clusters"][0]) > 1:
            head = f"no single winner: {_names([lab(m) for m in v['clusters'][0]])} are not separable"
        else:
            head = "no ranking"
        sig = [f"{lab(p['a'])} > {lab(p['b'])} (Δ{coef} {p['delta']:+.3f} {fmt_ci(p.get('delta_ci'))}, "
               f"p_adj {p['p_adjusted']:.3g})" for p in v["pairwise"] if p.get("significant")]
        mst = v.get("min_significant_tau")
        nr = v.get("n_systems_range") or [v["n_systems"], v["n_systems"]]
        n_text = f"{nr[0]}–{nr[1]}" if nr[0] != nr[1] else f"{v['n_systems']}"
        if v.get("power_computed") is False:
            power = f"n = {n_text} systems; power not computed"
        elif mst is not None:
            power = f"n = {n_text} systems, min significant |{coef}| at n = {v['n_systems']}: {fmt_tau(mst)}"
        else:
            power = f"n = {n_text} systems: no |{coef}| can be significant"
        d = v.get("discriminability")
        disc = (f"; separates {d['pairs_separated']} of {d['pairs']} system pairs over {d['queries']} queries"
                if d else "")
        flag = "" if v.get("informative", True) else " — UNINFORMATIVE"
        items.append(f"**{_vname(v, lab)}**{flag}: {head}; clusters {cl}; significant differences: "
                     f"{'; '.join(sig) if sig else 'none'}; {power}{disc}.")
    tests = verdict_tests(vds)
    blocks += [Bullets(tuple(items))] + ([Para(tests)] if tests else [])
    table = delta_table(vds, labels)
    return blocks + ([table] if table is not None else [])


def delta_table(vds: Sequence[Mapping[str, Any]], labels: Mapping[str, str] | None = None) -> Table | None:
    """Every pairwise difference of the verdicts: Δ, its CI, the PERM-BOTH p with its Monte Carlo
    standard error, the adjusted p, the draws and the systems used."""
    lab = (lambda v: (labels or {}).get(v, v))  # noqa: E731
    rows = []
    williams = any("williams_p" in p for v in vds for p in v["pairwise"])
    for v in vds:
        for p in v["pairwise"]:
            if p.get("p_value") is None:
                continue
            mark = "" if p.get("settled", True) else " †"
            se = f" ± {p['p_se']:.1g}" if p.get("p_se") is not None else ""
            rows.append([(_vname(v, lab), ""), (lab(p["a"]), ""), (lab(p["b"]), ""), (str(p.get("n", "")), ""),
                         (f"{p['delta']:+.3f}", ""), (fmt_ci(p.get("delta_ci")), ""), (f"{p['p_value']:.3g}{se}", ""),
                         (f"{p['p_adjusted']:.3g}{mark}", "best" if p.get("significant") else ""),
                         (str(p.get("resamples", "")), "")]
                        + ([(fmt_p(p.get("williams_p")), "")] if williams else []))
    if not rows:
        return None
    first = vds[0]
    coef = COEF.get(first.get("method", "kendall"), "τ")
    methods = sorted({p.get("delta_ci_method") for v in vds for p in v["pairwise"] if p.get("delta_ci_method")})
    level = next((p.get("delta_ci_level") for v in vds for p in v["pairwise"] if p.get("delta_ci_level")), 0.95)
    cap = (f"Every pairwise difference: Δ{coef} = oriented {coef}(a) − {coef}(b) on the n systems both metrics and "
           f"the target share; CI: {level:.0%} percentile, {' or '.join(methods) or 'not computed'}; p: PERM-BOTH, "
           f"one-sided, (c+1)/(k+1) ± its Monte Carlo standard error over the draws shown; p_adj: "
           f"{correction_phrase(first['correction'])} within the family; **bold** = p_adj < {first.get('alpha', 0.05):g}"
           + ("; † = decision not settled at the maximum draws" if any(
               p.get("settled") is False for v in vds for p in v["pairwise"]) else "")
           + ("; Williams p: Williams' test for dependent correlations (one-sided, assumes normal scores; shown "
              "beside PERM-BOTH, which decides the clusters)" if williams else "") + ".")
    return table_block(["target", "a", "b", "n", f"Δ{coef}", "CI", "p ± MC se", "p_adj", "draws"]
                       + (["Williams p"] if williams else []), rows, "lllrrrrrr" + ("r" if williams else ""), cap)


def confound_blocks(results: Mapping[str, Any]) -> list[Block]:
    """Caveats (circularity, nested designs, metrics that correlate with nothing), τ between the MT
    metrics, and Kendall's partial τ given each numeric system attribute."""
    c = results.get("confounds")
    if not c:
        return []
    blocks: list[Block] = [Heading("Confounds and caveats")]
    if c.get("notes"):
        blocks.append(Bullets(tuple(c["notes"])))
    agr = [a for a in c.get("metric_agreement", []) if a.get("tau") is not None]
    if agr:
        rows = [[(a["a"], ""), (a["b"], ""), (fmt_tau(a["tau"]), ""), (str(a["n"]), "")] for a in agr]
        blocks.append(table_block(["MT metric", "MT metric", "τ-b", "n"], rows, "llrr",
                                  "Agreement between the MT metrics (Kendall τ-b over the systems): metrics that rank the "
                                  "systems almost alike cannot be told apart by any target."))
    part = [p for p in c.get("partial", []) if p.get("partial_tau") is not None]
    if part:
        rows = [[(p["x"], ""), (p["y"], ""), (p["covariate"], ""), (fmt_tau(p["tau"]), ""),
                 (fmt_tau(p["partial_tau"]), ""), (str(p["n"]), "")] for p in part]
        blocks.append(table_block(["MT metric", "target", "given", "τ", "partial τ", "n"], rows, "lllrrr",
                                  "Kendall's partial τ of MT metric and target given a system attribute (Kendall 1942; no "
                                  "p-value): a partial τ much closer to 0 than τ means the attribute explains much of "
                                  "the correlation."))
    return blocks if len(blocks) > 1 else []


def verdict_tests(vds: Sequence[Mapping[str, Any]]) -> str:
    """The tests behind the verdicts' power, draws and discriminability figures (a caption)."""
    import re

    from ..correlation.driver import MIN_SEPARATED_SHARE

    alpha = vds[0].get("alpha", 0.05) if vds else 0.05
    method = vds[0].get("method", "kendall") if vds else "kendall"
    parts = []
    if any(v.get("min_significant_tau") is not None for v in vds):
        if method == "kendall":
            parts.append(f"Min significant |τ|: the smallest |τ| with p < {alpha:g} for n untied systems, from the "
                         "exact null distribution of Kendall's τ (scipy's exact test; asymptotic above 33 systems).")
        else:
            c = COEF.get(method, "r")
            parts.append(f"Min significant |{c}|: the smallest |{c}| with p < {alpha:g} at n systems, from the t "
                         f"distribution the p-values use ({c} = t/√(n−2+t²)).")
    res = [v["resolution"] for v in vds if v.get("resolution")]
    if res:
        mode = res[0]["mode"]
        hi = max(r["max"] for r in res)
        used = [r["draws"] for r in res if r.get("draws")]
        span = f"{min(u[0] for u in used)}–{max(u[1] for u in used)}" if used else "none"
        floor = max(r["floor"] for r in res)
        parts.append(
            (f"PERM-BOTH draws: {res[0]['first']} per test, then more (doubling, up to {hi}) only for tests whose "
             "decision could still change (99.9% Clopper-Pearson interval of p on both sides of its threshold)"
             if mode == "sequential" else f"PERM-BOTH draws: {res[0]['first']} per test (fixed)")
            + f"; draws used {span}; smallest attainable adjusted p {floor:.2g}.")
    d = next((v["discriminability"] for v in vds if (v.get("discriminability") or {}).get("test")), None)
    if d:
        test = re.sub(r"over the \d+ system pairs", "over each measure's system pairs", re.sub(r", seed \d+", "", d["test"]))
        parts.append(f"System pairs a measure separates: {test} (seeds per target in results.json); a measure "
                     f"separating fewer than {MIN_SEPARATED_SHARE:.0%} of the pairs is flagged UNINFORMATIVE.")
    return " ".join(parts)


TAU_CAPTION = ("× = p ≥ α for this metric alone (two-sided test of no association, not adjusted for the other "
               "cells). {ci} A p-value and a CI can disagree: the p-value comes from the null distribution of "
               "rankings (is there any association?), the CI from resampling {unit} (how much would τ move with "
               "other {unit}?); with few systems a bootstrap CI is wide and can include 0 while p < α, or exclude 0 "
               "while p ≥ α. The metric ranking and its significance are in the verdicts above, not in the bold.")


def tau_caption(ci: str | None) -> str:
    """The caption under a τ table: which CI it shows and why p and CI can disagree."""
    text = {None: "No CI in the cells (results.json: ci_systems, ci_queries, ci_both; correlations.tsv).",
            "ci_systems": "Brackets: 95% percentile bootstrap CI resampling systems (results.json also has "
                          "ci_queries, resampling queries, and ci_both = BOOT-BOTH, resampling both).",
            "ci": "Brackets: percentile bootstrap CI resampling rows (systems).",
            "none-table": "No CI in the cells (--ci N adds a bootstrap CI over rows)."}[ci]
    unit = "systems" if ci != "ci_queries" else "queries"
    return TAU_CAPTION.format(ci=text, unit=unit)


# --------------------------------------------------------------------------- results.json views
def lower_is_better(results: Mapping[str, Any] | None) -> list[str]:
    return list(((results or {}).get("score_kinds") or {}).get("lower_is_better", []))


def score_columns(results: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(kind, name) of every score column, in a stable order."""
    kinds = results.get("score_kinds") or {}
    return [(k, n) for k in ("mt", "ir", "human") for n in kinds.get(k, [])]


def tau_grid(results: Mapping[str, Any], kind: str) -> tuple[list[str], list[str], dict[tuple[str, str], dict]]:
    """Rows (y), columns (x) and cells of one correlation kind (mt-ir, mt-human, ir-human)."""
    rows: list[str] = []
    cols: list[str] = []
    cells: dict[tuple[str, str], dict] = {}
    for c in results.get("correlations", []):
        if c.get("kind", "mt-ir") != kind:
            continue
        if c["y"] not in rows:
            rows.append(c["y"])
        if c["x"] not in cols:
            cols.append(c["x"])
        cells[(c["y"], c["x"])] = c
    return rows, cols, cells


def kind_table(results: Mapping[str, Any], kind: str, ci: str | None = None):
    """(header, cell rows) of one correlation kind of a run, or None when it has no rows."""
    rows, cols, cells = tau_grid(results, kind)
    if not rows:
        return None
    uninf = {r for r in rows if uninformative_row(cells, r)}
    spec = [([r + (" (UNINFORMATIVE)" if r in uninf else "")], {x: cells.get((r, x)) for x in cols}) for r in rows]
    out = tau_rows(spec, cols, lower_is_better(results), ci)
    # an uninformative target's cells say little: greyed, no highest-τ mark
    out = [[(t, "ns" if (r in uninf and j > 0) else cls) for j, (t, cls) in enumerate(line)]
           for r, line in zip(rows, out)]
    return ["", *cols], out


def uninformative_row(cells: Mapping[tuple[str, str], Mapping[str, Any]], target: str) -> bool:
    """Whether the verdicts flagged ``target`` uninformative (its correlation rows say so)."""
    return any(c.get("informative") is False for (r, _), c in cells.items() if r == target)


def best_per_measure(results: Mapping[str, Any]) -> list[tuple[str, str, dict]]:
    """(target, leading MT metric(s) joined by " = ", the first one's correlation row) per target."""
    out = []
    for kind in ("mt-ir", "mt-human"):
        rows, cols, cells = tau_grid(results, kind)
        for r in rows:
            lead = leaders({x: cells[(r, x)]["tau"] for x in cols if (r, x) in cells}, lower_is_better(results))
            if lead:
                out.append((r, " = ".join(lead), cells[(r, lead[0])]))
    return out


def coefficient_name(corr: Sequence[Mapping[str, Any]]) -> str:
    method = corr[0]["method"] if corr else "kendall"
    variant = corr[0].get("variant") if corr else "b"
    return {"kendall": f"Kendall's τ-{variant}" if variant != "acc23" else "acc23",
            "pearson": "Pearson's r", "spearman": "Spearman's ρ"}.get(method, "τ")


def signature_lines(sig: Mapping[str, Any], prefix: str = "") -> list[str]:
    out = []
    for k, v in sig.items():
        if isinstance(v, Mapping):
            out += signature_lines(v, f"{prefix}{k}.")
        else:
            out.append(f"{prefix}{k}: {v}")
    return out


def console_summary(results: Mapping[str, Any], limit: int = 5) -> list[str]:
    """The lines ``run`` prints: warnings, then per target the clusters (or, without verdicts, the leaders)."""
    vds = results.get("verdicts") or []
    if not vds:
        lines = []
        for y, x, c in best_per_measure(results)[:limit]:
            sig = "" if c.get("significant") else " (not significant)"
            lines.append(f"  {y:<24} highest tau: {x:<14} tau={fmt_tau(c['tau'])} p={fmt_p(c['p_value'])}{sig}")
        return lines
    lines = [f"  WARNING {v['target']}: {w}" for v in vds for w in v.get("warnings", [])]
    for v in vds[:limit]:
        cl = " > ".join("{" + ", ".join(c) + "}" for c in v["clusters"])
        win = f"winner {v['winner']}" if v.get("winner") else "no single winner"
        lines.append(f"  {v['target']:<24} {win}; clusters {cl}")
    if len(vds) > limit:
        lines.append(f"  ... {len(vds) - limit} more target(s) in report.md")
    return lines


def english_label(results: Mapping[str, Any]) -> str:
    """"English side (ceiling)" only when the relevance judgements come from the English run itself."""
    rel = str((results.get("signature") or {}).get("relevance") or "")
    return "English side (ceiling: relevance from this run)" if rel.startswith("pseudo:") else "English reference"


def markdown(results: Mapping[str, Any]) -> str:
    """report.md: verdicts and warnings first, then the τ tables with captions, scores, notes, signature."""
    return blocks_markdown(report_blocks(results))


def latex_report(results: Mapping[str, Any]) -> str:
    """report.tex: the content of report.md as a standalone document. It compiles with pdflatex
    whatever the names and texts hold: characters pdflatex cannot typeset are declared as a ? in
    pdflatex only (with a note saying so); lualatex/xelatex show them."""
    blocks = report_blocks(results)
    missing = pdftex_missing(blocks_latex(blocks))
    pre = note = ""
    if missing:
        pre = ("\\ifPDFTeX\n  \\newcommand{\\clirevalmissing}{\\textbf{?}}\n"
               + "".join(f"  \\DeclareUnicodeCharacter{{{ord(ch):04X}}}{{\\clirevalmissing}}\n" for ch in missing)
               + "\\fi\n")
        note = "\\ifPDFTeX\n" + latex_escape(PDFTEX_MISSING_NOTE.format(n=len(missing))) + "\n\\fi\n\n"
    return ("% report.tex written by clir-eval from results.json (same content as report.md)\n" + PREAMBLE + pre
            + "\\begin{document}\n\n" + blocks_latex(blocks[:1]) + note + blocks_latex(blocks[1:], placement="H")
            + "\\end{document}\n")


def report_blocks(results: Mapping[str, Any]) -> list[Block]:
    """The content of report.md and report.tex: verdicts and warnings first, then the τ tables with
    captions, scores, notes, signature."""
    corr = results.get("correlations", [])
    alpha = corr[0].get("alpha", 0.05) if corr else 0.05
    lower = lower_is_better(results)
    vds = results.get("verdicts") or []
    blocks: list[Block] = [Heading(str(results.get("name", "clir-eval")), 1), Para(
        f"{coefficient_name(corr)} between system-level scores over {len(results.get('systems', {}))} systems; "
        f"× marks p ≥ {alpha} (not significant), **bold** is the highest τ in its row (a point estimate, not a verdict)."
        + (f" Lower is better for {', '.join(sorted(lower))}: its τ counts negated when ranking."
           if lower else ""))]
    if vds:
        blocks += [Heading("Verdicts: which MT metric predicts each target")] + verdict_blocks(vds)
    blocks += confound_blocks(results)
    blocks += queries_blocks(results)
    captioned = False
    for kind, title in KIND_TITLES.items():
        table = kind_table(results, kind)
        if table is None:
            continue
        cap = tau_caption(None) if not captioned else "Cells as in the first τ table above."
        captioned = True
        blocks += [Heading(title), table_block(*table, align="l" + "r" * (len(table[0]) - 1), caption=cap)]
        reasons = sorted({f"{c['x']} vs {c['y']}: {c['reason']}" for c in corr if c.get("kind", "mt-ir") == kind
                          and c.get("reason")})
        if reasons:
            blocks.append(Para("Not computed: " + "; ".join(reasons)))
    blocks += direction_blocks(results)
    if not vds:
        blocks += _best_blocks(results)
    blocks += scores_blocks(results)
    blocks += analyses_blocks(results)
    notes = results.get("notes") or []
    if notes:
        blocks += [Heading("Notes"), Bullets(tuple(notes))]
    return blocks + [Heading("Signature"), Code(tuple(signature_lines(results.get("signature", {}))))]


def _best_blocks(results: Mapping[str, Any]) -> list[Block]:
    """Without verdicts (permutation: 0): the leaders and the old leader-vs-rest tests."""
    blocks: list[Block] = []
    summ = best_per_measure(results)
    if summ:
        items = []
        for y, x, c in summ:
            ci = c.get("ci_systems")
            ci_s = f", 95% CI [{fmt_tau(ci[0])}, {fmt_tau(ci[1])}]" if ci and ci[0] is not None else ""
            items.append(f"**{y}**: {x} (τ = {fmt_tau(c['tau'])}, p = {fmt_p(c['p_value'])}{ci_s})")
        blocks += [Heading("Highest τ per target (no significance clusters in these results)"), Bullets(tuple(items))]
    comps = results.get("comparisons") or []
    if comps:
        rows = [[(c["ir_measure"], ""), (c["metric_a"], ""), (c["metric_b"], ""),
                 ("–" if c["delta"] is None else f"{c['delta']:+.3f}", ""),
                 ("–" if c["p_value"] is None else f"{c['p_value']:.3f}", "")] for c in comps]
        blocks += [Heading("Highest τ vs each other metric (PERM-BOTH, not adjusted)"),
                   table_block(["IR measure", "highest", "vs", "Δτ", "p"], rows, "lllnn")]
    return blocks


def queries_blocks(results: Mapping[str, Any]) -> list[Block]:
    """How many queries each system was evaluated on, and why the rest were skipped (one row
    for all systems when they agree)."""
    systems = results.get("systems", {})
    acc = {s: systems[s]["queries"] for s in sorted(systems, key=natural_key) if systems[s].get("queries")}
    if not acc:
        return []
    shared = len({json.dumps(a, sort_keys=True) for a in acc.values()}) == 1
    rows = []
    for s, q in (list(acc.items())[:1] if shared else acc.items()):
        per = q if "evaluated" not in q else {"": q}
        for measure, a in per.items():
            why = ", ".join(f"{k}: {v}" for k, v in a.get("skipped", {}).items()) or "none skipped"
            rows.append([("all systems" if shared else s, ""), (measure or "all", ""),
                         (f"{a['evaluated']} / {a['total']}", ""), (why, "")])
    return [Heading("Queries evaluated"),
            table_block(["system", "measure", "evaluated / total", "skipped"], rows, "llrl")]


DIRECTION_SUBSETS = ("source-original", "target-original")


def direction_blocks(results: Mapping[str, Any]) -> list[Block]:
    """``wmt.direction: both``: τ on all documents and on each origlang subset side by side
    (× = not significant), the documents per subset, and why a subset was not evaluated."""
    d = results.get("direction")
    if not d:
        return []
    sub = {s: {(c["x"], c["y"]): c for c in d.get(s, {}).get("correlations", [])} for s in DIRECTION_SUBSETS}
    rows = [[(c["x"], ""), (c["y"], "")] + [(cell_text(o), "ns" if o and o.get("significant") is False else "")
                                          for o in [c] + [sub[s].get((c["x"], c["y"])) for s in DIRECTION_SUBSETS]]
            for c in results.get("correlations", [])]
    head = ["x", "y", "all documents"] + [f"{s} ({d[s]['documents']} docs)" for s in DIRECTION_SUBSETS]
    why = [f"{s}: not evaluated — {d[s]['reason']}" for s in DIRECTION_SUBSETS if d[s].get("reason")]
    return [Heading("Translation direction"), table_block(head, rows, "llrrr", caption=(
        "τ on all documents and on each origlang subset, each subset a complete experiment on its documents "
        "(its own queries and collection); × marks p ≥ α. The table does not test whether τ differs between "
        "subsets: each subset has fewer documents and queries, so its τ is less certain."))] + ([Para("; ".join(why))] if why else [])


def scores_blocks(results: Mapping[str, Any]) -> list[Block]:
    cols = score_columns(results)
    if not cols:
        return []
    rows = [[(s, "")] + [(fmt_num(e.get(k, {}).get(n), 4), "") for k, n in cols]
            for s, e in results.get("systems", {}).items()]
    eng = results.get("english")
    if eng and eng.get("ir"):
        rows.append([(english_label(results), "em")]
                    + [(fmt_num(eng["ir"].get(n), 4) if k == "ir" else "", "") for k, n in cols])
    return [Heading("System scores"), table_block(["system", *(n for _, n in cols)], rows, "l" + "n" * len(cols))]


# --------------------------------------------------------------------------- correlate
def correlate_markdown(results: list[dict], xs: list[str], ys: list[str], labels: dict[str, str] | None = None,
                       alpha: float = 0.05, lower: Collection[str] = (), vds: Sequence[Mapping[str, Any]] = ()) -> str:
    """``correlate --format md``: :func:`correlate_blocks` as Markdown."""
    return blocks_markdown(correlate_blocks(results, xs, ys, labels, alpha, lower, vds))


def correlate_blocks(results: list[dict], xs: list[str], ys: list[str], labels: dict[str, str] | None = None,
                     alpha: float = 0.05, lower: Collection[str] = (), vds: Sequence[Mapping[str, Any]] = ()) -> list[Block]:
    """Verdicts (when computed), the τ table of ``correlate`` (rows = group × y, columns = x) with
    its caption, then the Table-3-style summary per x column and notes on undefined values."""
    from ..correlation.statistics import summarize

    labels = labels or {}
    lab = lambda v: labels.get(v, v)  # noqa: E731
    groups = list(dict.fromkeys(r["group"] for r in results))
    grouped = groups != [None]
    by_key = {(r["group"], r["y"], r["x"]): {**r, "ci": [r.get("ci_low"), r.get("ci_high")]} for r in results}
    spec, notes = [], []
    for g in groups:
        for y in ys:
            spec.append((([lab(g)] if grouped else []) + [lab(y)], {x: by_key[(g, y, x)] for x in xs}))
            notes += [f"{lab(g) + ', ' if grouped else ''}{lab(y)} vs {lab(x)}: {by_key[(g, y, x)]['reason']}"
                      for x in xs if by_key[(g, y, x)].get("reason") and by_key[(g, y, x)]["tau"] is None]
    has_ci = any(r.get("ci_low") is not None for r in results)
    head = (["Group"] if grouped else []) + ["Measure"] + [lab(x) for x in xs]
    first = results[0] if results else {}
    name = {"kendall": f"Kendall τ-{first.get('variant')}", "pearson": "Pearson r", "spearman": "Spearman ρ"}
    ns = sorted({r["n"] for r in results})
    caption = [f"{name.get(first.get('method'), 'τ')}; × = not significant (p ≥ {alpha:g}); bold = highest in its row; "
               f"n = {', '.join(map(str, ns))} systems per cell."]
    sigs: dict[str, int] = {}
    for r in results:
        sigs[r["signature"]] = sigs.get(r["signature"], 0) + 1
    caption += [f"Signature ({count} cells): `{sig}`." for sig, count in sigs.items()]
    n_labels = 2 if grouped else 1
    blocks = verdict_blocks(vds, labels) + [
        table_block(head, tau_rows(spec, xs, lower, "ci" if has_ci else None), "l" * n_labels + "r" * len(xs),
                    "\n".join(caption)),
        Para(tau_caption("ci" if has_ci else "none-table"))]
    summary = [[(lab(s["x"]), ""), (fmt_tau(s["mean_significant_tau"]), ""), (fmt_tau(s["median_significant_tau"]), ""),
                (f"{s['n_significant']}/{s['n']}", ""), (str(s["wins"]), "")] for s in summarize(results, xs, lower)]
    blocks.append(table_block(["Metric", "mean τ (significant)", "median τ (significant)", "significant", "wins"],
                              summary, "lrrrr", "wins = number of rows (group × measure) where the metric has the "
                              "highest τ (ties count for each)."))
    if notes:
        blocks.append(Bullets(tuple(notes), lead="Undefined values:"))
    return blocks
