"""Report assembly: the one τ-table renderer (Markdown, TSV, console, LaTeX) and report.md / report.tex
built from results.json (the verdict sections: :mod:`.verdicts`; the TSV files: :mod:`.tsv`)."""

from __future__ import annotations

import json
import re
from typing import Any, Collection, Mapping, Sequence

from ..correlation.statistics import summarize
from ..correlation.verdict import best_per_target, leaders
from .analyses import analyses_blocks
from .answer import answer_lines as answer_lines  # re-exported: cli.options prints it
from .blocks import (
    Block,
    Bullets,
    Code,
    Heading,
    Para,
    blocks_markdown,
    fmt_num,
    fmt_p,
    fmt_tau,
    md_table,
    natural_key,
    table_block,
)
from .design import design_blocks, design_summary
from .items import item_level_blocks, level_disagreements, level_summary_lines
from .latex import PDFTEX_MISSING_NOTE, PREAMBLE, blocks_latex, latex_escape, latex_tabular, pdftex_missing
from .verdicts import ALPHA, UNINFORMATIVE_MARK, confound_blocks, correction_phrase, family_phrase, verdict_blocks

KIND_TITLES = {
    "mt-ir": "MT metric vs IR measure",
    "mt-human": "MT metric vs human judgement",
    "ir-human": "IR measure vs human judgement",
}


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
        return "\n".join(md_table(header, rows, align)) + "\n"
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


TAU_CAPTION = ("× = p ≥ α for this metric alone (two-sided test of no association, not adjusted for the other "
               "cells). {ci} A p-value and a CI can disagree: the p-value comes from the null distribution of "
               "rankings (is there any association?), the CI from resampling {unit} (how much would τ move with "
               "other {unit}?); with few systems a bootstrap CI is wide and can include 0 while p < α, or exclude 0 "
               "while p ≥ α. {ranking}")
RANKING_IN_VERDICTS = "The metric ranking and its significance are in the verdicts above, not in the bold."
RANKING_NOT_TESTED = ("Bold is a point estimate: whether one metric correlates significantly better than another is "
                      "not tested here (--verdicts tests it).")


def tau_caption(ci: str | None, verdicts: bool = True) -> str:
    """The caption under a τ table: which CI it shows, why p and CI can disagree, and where (or
    whether) the metric ranking is tested: ``verdicts=False`` when no verdicts come with the table."""
    text = {None: "No CI in the cells (results.json: ci_systems, ci_queries, ci_both; correlations.tsv).",
            "ci_systems": "Brackets: 95% percentile bootstrap CI resampling systems (results.json also has "
                          "ci_queries, resampling queries (these systems fixed), and ci_both, for systems and queries both random).",
            "ci": "Brackets: percentile bootstrap CI resampling rows (systems).",
            "none-table": "No CI in the cells (--ci N adds a bootstrap CI over rows)."}[ci]
    unit = "systems" if ci != "ci_queries" else "queries"
    return TAU_CAPTION.format(ci=text, unit=unit, ranking=RANKING_IN_VERDICTS if verdicts else RANKING_NOT_TESTED)


# --------------------------------------------------------------------------- results.json views
def lower_is_better(results: Mapping[str, Any] | None) -> list[str]:
    """The run's MT metrics whose scores fall as quality rises, as results.json records them (each metric
    declares it: ``MTMetric.higher_is_better``)."""
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
    """(target, leading MT metric(s), the first one's correlation row) per target of a run
    (:func:`clir_eval.correlation.verdict.best_per_target`, oriented by the run's lower-is-better metrics)."""
    return best_per_target(results.get("correlations", []), lower_is_better(results))


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


def console_warnings(results: Mapping[str, Any]) -> list[str]:
    """The WARNING and CAVEAT lines of a finished run (``run`` prints them on stderr)."""
    lines = [f"WARNING {v['target']}: {w}" for v in results.get("verdicts") or [] for w in v.get("warnings", [])]
    return lines + [f"CAVEAT {w.replace('**', '')}" for w in read_first(results) if w.startswith("**circularity**")]


def console_summary(results: Mapping[str, Any], limit: int = 5) -> list[str]:
    """The table ``run`` prints after its answer: per target the clusters (or, without verdicts, the leaders)."""
    vds = results.get("verdicts") or []
    none = no_correlations(results)
    if none:
        return [f"  no correlations: {none}"]
    if not vds:
        lines = []
        for y, x, c in best_per_measure(results)[:limit]:
            sig = "" if c.get("significant") else " (not significant)"
            lines.append(f"  {y:<24} highest tau: {x:<14} tau={fmt_tau(c['tau'])} p={fmt_p(c['p_value'])}{sig}")
        return lines
    lines: list[str] = []
    items = item_answers(results)
    names = [v["target"] + ("" if v.get("informative", True) else UNINFORMATIVE_MARK) for v in vds[:limit]]
    width = max(24, *map(len, names), *(len(t) + 2 for t, _ in items[:limit]))
    if items:
        lines.append(f"  system level ({max(v.get('n_systems') or 0 for v in vds)} systems; use it to choose a metric "
                     "for ranking MT systems):")
    for name, v in zip(names, vds[:limit]):
        lines.append(f"  {name:<{width}} {_clusters_text(v)}")
    if len(vds) > limit:
        lines.append(f"  ... {len(vds) - limit} more target(s) in report.md")
    first = vds[0]
    lines.append(f"  (clusters: PERM-BOTH at {correction_phrase(first['correction'])} p < {first['alpha']:g}, family: "
                 f"{family_phrase(vds)}; a winner is alone in the first cluster; Δτ CIs and p in report.md)")
    if items:
        lines.append("  item level (on which documents or queries a system does worse than its own average; use it "
                     "to diagnose which items a metric misjudges, not to choose one):")
        lines += [f"    {t:<{width - 2}} {text}" for t, text in items[:limit + 1]]
        if len(items) > limit + 1:
            lines.append(f"    ... {len(items) - limit - 1} more item-level target(s) in report.md")

        lines += [f"  levels disagree: {c}" for c in level_disagreements(results)]
    return lines


def _clusters_text(v: Mapping[str, Any]) -> str:
    """``winner X; clusters {..} > {..}`` of one verdict (system or item level), or why there is no ranking."""
    clusters = v.get("clusters") or []
    if not clusters:
        return "no ranking: no MT metric has a defined τ with this target (see the τ tables)"
    cl = " > ".join("{" + ", ".join(c) + "}" for c in clusters)
    return (f"winner {v['winner']}" if v.get("winner") else "no single winner") + f"; clusters {cl}"


def item_answers(results: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The item level's answers as (``target (items)``, clusters text), one per item-level verdict."""
    return [(f"{w['target']} ({w.get('items', 'items')})", _clusters_text(w))
            for w in (results.get("item_level") or {}).get("verdicts") or []]


def first_screen_lines(results: Mapping[str, Any]) -> list[str]:
    """The report's answer under its title, one short line (a bullet) each: each level's answer, where they
    disagree, the power at this size once ``clir-eval design`` has run."""
    return [*filter(None, [architecture_summary(results)]), *level_summary_lines(results),
            *filter(None, [design_summary(results)])]


def levels_guide(results: Mapping[str, Any]) -> str | None:
    """For the first screen, when the run answers at both levels: which question each answers, and which one to
    use to choose a metric."""
    vds = results.get("verdicts") or []
    if not vds or not item_answers(results):
        return None
    n = max((v.get("n_systems") or 0 for v in vds), default=0)
    return (f"**Which level answers what**: to choose an MT metric for ranking MT systems by their value for CLIR, "
            f"use the system level (the verdicts: each metric's ranking of the {n} systems against retrieval's "
            f"ranking of them). The item level answers another question: on which documents and queries does a system "
            "do worse than its own average, and which metric's scores follow that? Use it to diagnose which "
            "documents and queries a metric misjudges, not to choose the metric; where the levels disagree both can "
            "hold, and the system-level verdict is the one that answers the choice.")


def read_first(results: Mapping[str, Any]) -> list[str]:
    """The first screen's warnings (Markdown-inline): each verdict's warnings, then the circularity caveat
    when relevance comes from the same English side that the MT metrics score against."""
    items = [f"**{v['target']}**: {w}" for v in results.get("verdicts") or [] for w in v.get("warnings", [])]
    for note in (results.get("confounds") or {}).get("notes") or []:
        if note.startswith("circularity:"):
            items.append("**circularity**:" + note[len("circularity:"):]
                         + " (it inflates every τ alike; compare metrics with each other, not with a fixed bar)")
    return items


def no_correlations(results: Mapping[str, Any]) -> str | None:
    """Why a run has no correlation at all (every τ undefined or none made), in words; None when it has one."""
    corr = results.get("correlations") or []
    if any(c.get("tau") is not None for c in corr):
        return None
    n = len(results.get("systems") or {})
    kinds = results.get("score_kinds") or {}
    why = []
    if n < 3:
        why.append(f"{n} system{'' if n == 1 else 's'}; at least 3 needed")
    if sum(bool(kinds.get(k)) for k in ("mt", "ir", "human")) < 2:
        have = next((k for k in ("ir", "mt", "human") if kinds.get(k)), None)
        why.append({"ir": "no MT metrics or human scores to set against the IR measures (no mt section or MT score "
                          "tables)",
                    "mt": "no IR measures or human scores to set against the MT metrics",
                    "human": "no MT metrics or IR measures to set against the human scores",
                    None: "no scores"}[have])
    if not why:
        reasons = sorted({c["reason"] for c in corr if c.get("reason")})
        why.append(f"every τ is undefined ({'; '.join(reasons)})" if reasons else "no correlation was computed")
    return ". ".join(w[0].upper() + w[1:] for w in why)


def design_pointer(results: Mapping[str, Any], out: str = "OUT") -> str | None:
    """One line pointing to ``clir-eval design`` when the run supports a study design (3 or more systems
    with MT scores and per-query IR values) and none has been run on it yet."""
    if results.get("design"):
        return None
    systems = (results.get("systems") or {}).values()
    if sum(bool(e.get("mt") and e.get("ir_per_query")) for e in systems) < 3:
        return None
    where = " (OUT: this report's directory)" if out == "OUT" else ""
    return (f"Power: not estimated; `clir-eval design {out}`{where} simulates with what power each question could "
            "be answered at this and other study sizes.")


def english_label(results: Mapping[str, Any]) -> str:
    """"English side (ceiling)" only when the relevance judgements come from the English run itself; a collection
    in another language (``signature.architecture.language``) is called the reference side, with its language."""
    sig = results.get("signature") or {}
    rel = str(sig.get("relevance") or "")
    lang = str((sig.get("architecture") or {}).get("language") or "en")
    if lang.lower().split("-")[0].split("_")[0] != "en":
        return (f"reference side, {lang} (ceiling: relevance from this run)" if rel.startswith("pseudo:") else
                f"reference side, {lang}")
    return "English side (ceiling: relevance from this run)" if rel.startswith("pseudo:") else "English reference"


def architecture_summary(results: Mapping[str, Any]) -> str | None:
    """One sentence naming the CLIR architecture where it is query translation (document translation, the
    default, is named in the signature)."""
    arch = (results.get("signature") or {}).get("architecture") or {}
    if arch.get("translate") != "queries":
        return None
    lang = f" (language: {arch['language']})" if arch.get("language") else ""
    return ("**Architecture: query translation.** Each system's translations of the queries search one collection"
            f"{lang}, indexed once; the MT metrics score the query translations against the human ones, and the "
            "reference side runs the human translations.")


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
    alpha = corr[0].get("alpha", ALPHA) if corr else ALPHA
    lower = lower_is_better(results)
    vds = results.get("verdicts") or []
    none = no_correlations(results)
    blocks: list[Block] = [Heading(str(results.get("name", "clir-eval")), 1), Para(
        f"**No correlations**: {none}. The sections below hold what the run measured." if none else
        f"{coefficient_name(corr)} between system-level scores over {len(results.get('systems', {}))} systems; "
        f"× marks p ≥ {alpha} (not significant), **bold** is the highest τ in its row (a point estimate, not a verdict)."
        + (f" Lower is better for {', '.join(sorted(lower))}: its τ counts negated when ranking."
           if lower else ""))]

    summary = first_screen_lines(results)
    if summary:
        blocks.append(Bullets(tuple(summary)))
    guide, warn = levels_guide(results), read_first(results)
    blocks += ([Para(guide)] if guide else []) + ([Bullets(tuple(warn), lead="**Read this first:**")] if warn else [])
    if vds:
        blocks += [Heading("Verdicts: which MT metric predicts each target")] + verdict_blocks(vds, warnings=False)
    blocks += confound_blocks(results)

    blocks += item_level_blocks(results)
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
    blocks += design_blocks(results)  # after the verdicts and the τ tables: how large a study would answer
    if not vds:
        blocks += _best_blocks(results)
    blocks += scores_blocks(results)
    blocks += analyses_blocks(results)
    notes = results.get("notes") or []
    if notes:
        blocks += [Heading("Notes"), Bullets(tuple(notes))]
    pointer = design_pointer(results)
    return (blocks + [Heading("Signature"), Code(tuple(signature_lines(results.get("signature", {}))))]
            + ([Para(pointer)] if pointer else []))


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
    note = english_note(results)
    return ([Heading("System scores"), table_block(["system", *(n for _, n in cols)], rows, "l" + "n" * len(cols))]
            + ([Para(note)] if note else []))


def english_note(results: Mapping[str, Any]) -> str | None:
    """One line on the English side's row when relevance is its own top k (pseudo-qrels): why it is a ceiling,
    and why a measure stays below 1 for it."""
    rel = str((results.get("signature") or {}).get("relevance") or "")
    eng = (results.get("english") or {}).get("ir") or {}
    m = re.match(r"pseudo:top_k=(\d+)", rel)
    if not m or not eng:
        return None
    k = int(m.group(1))
    ones = [n for n, v in eng.items() if v is not None and abs(v - 1.0) < 1e-6]  # float sums: RBO 0.9999999...
    below = []
    for n, v in eng.items():
        if v is None or v > 1.0 - 1e-6:
            continue
        cut = re.fullmatch(r"P(?:_|@)(\d+)", n)
        why = (f"some queries share a term with fewer than {k} documents, and the empty ranks count as misses "
               "(`clir-eval validate` counts them)" if cut and int(cut.group(1)) == k
               else f"its cut-off or definition differs from the top {k}")
        below.append(f"{n} is {v:.2f} because {why}")
    return (f"The English side's row is a ceiling by construction: the relevant documents are its own top {k}"
            + (f", so it scores 1 on {', '.join(ones)}" if ones else "") + ("; " + "; ".join(below) if below else "")
            + ".")


# --------------------------------------------------------------------------- correlate
def correlate_markdown(results: list[dict], xs: list[str], ys: list[str], labels: dict[str, str] | None = None,
                       alpha: float = ALPHA, lower: Collection[str] = (), vds: Sequence[Mapping[str, Any]] = ()) -> str:
    """``correlate --format md``: :func:`correlate_blocks` as Markdown."""
    return blocks_markdown(correlate_blocks(results, xs, ys, labels, alpha, lower, vds))


def correlate_blocks(results: list[dict], xs: list[str], ys: list[str], labels: dict[str, str] | None = None,
                     alpha: float = ALPHA, lower: Collection[str] = (), vds: Sequence[Mapping[str, Any]] = ()) -> list[Block]:
    """Verdicts (when computed), the τ table of ``correlate`` (rows = group × y, columns = x) with
    its caption, then the Table-3-style summary per x column and notes on undefined values."""
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
        Para(tau_caption("ci" if has_ci else "none-table", verdicts=bool(vds)))]
    summary = [[(lab(s["x"]), ""), (fmt_tau(s["mean_significant_tau"]), ""), (fmt_tau(s["median_significant_tau"]), ""),
                (f"{s['n_significant']}/{s['n']}", ""), (str(s["wins"]), "")] for s in summarize(results, xs, lower)]
    blocks.append(table_block(["Metric", "mean τ (significant)", "median τ (significant)", "significant", "wins"],
                              summary, "lrrrr", "wins = number of rows (group × measure) where the metric has the "
                              "highest τ (ties count for each; a count of point estimates, not a significance test)."))
    if notes:
        blocks.append(Bullets(tuple(notes), lead="Undefined values:"))
    return blocks
