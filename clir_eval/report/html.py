"""report.html: self-contained page with the τ tables, the verdicts, a τ heatmap and scatter plots per target (inline SVG)."""

from __future__ import annotations

import html
import math
import re
from typing import Any, Mapping

from .analyses import analyses_blocks
from .blocks import Bullets, Heading, Para, Table, fmt_num, fmt_p, fmt_tau, inline_spans, natural_key
from .design import design_blocks
from .glossary import glossary
from .items import item_level_blocks
from .svg import DOT, FIT, buckets_svg, esc, heatmap_svg, scatter_layout, scatter_svg
from .tables import (
    KIND_TITLES,
    best_per_measure,
    cell_text,
    coefficient_name,
    design_pointer,
    direction_blocks,
    english_label,
    english_note,
    first_screen_lines,
    kind_table,
    levels_guide,
    no_correlations,
    queries_blocks,
    read_first,
    score_columns,
    signature_lines,
    tau_caption,
    tau_grid,
    uninformative_row,
)
from .verdicts import (
    ALPHA,
    UNINFORMATIVE_MARK,
    confound_blocks,
    correction_phrase,
    delta_table,
    family_phrase,
    fmt_ci,
    verdict_tests,
)

# --------------------------------------------------------------------------- plots
PANELS_WIDTH = 880  # page width (1200px less padding) less the key beside the panels
NUMBERED_ABOVE = 12  # more systems than this (or a name longer than 14 characters): dots carry numbers


def system_labels(results: Mapping[str, Any], numbered: bool | None = None) -> tuple[dict[str, str], bool]:
    """The short label of each system on the plots: its name, or its number in natural order when
    there are many systems or long names (the key beside each figure maps numbers to names)."""
    order = sorted(results.get("systems", {}), key=natural_key)
    if numbered is None:
        numbered = len(order) > NUMBERED_ABOVE or max((len(s) for s in order), default=0) > 14
    return {s: (str(i + 1) if numbered else s) for i, s in enumerate(order)}, numbered


def scatter_figures(results: Mapping[str, Any]) -> tuple[list[tuple[str, list[tuple[str, int]]]], bool]:
    """Per IR (or human) measure, one SVG panel per MT metric: a dot per system (hover: its name
    and scores), the least-squares line, labels placed without collision. Dots carry the systems'
    names when every name finds a free place in every panel, else their numbers. Returns
    ([(measure, [(svg, dots left unlabelled), ...]), ...], numbered)."""
    label, numbered = system_labels(results)
    if not numbered and any(scatter_layout(pts, w, h)["unlabelled"] for pts, w, h, _ in _scatter_panels(results, label)):
        label, numbered = system_labels(results, numbered=True)  # laid out first, drawn once
    return _scatter_figures(results, label), numbered


def _scatter_panels(results: Mapping[str, Any], label: Mapping[str, str]):
    """(points, width, height, title) of every panel with points, as :func:`_scatter_figures` draws them."""
    for y, panels in _scatter_figures(results, label, draw=False):
        yield from (p for p in panels if p[0])


def _scatter_figures(results: Mapping[str, Any], label: Mapping[str, str], draw: bool = True) -> list:
    systems = results.get("systems", {})
    w, h = (400, 320) if len(systems) > 20 or not next(iter(label.values()), "1").isdigit() else (330, 270)
    figs = []
    for kind in ("mt-ir", "mt-human"):
        rows, cols, cells = tau_grid(results, kind)
        ykind = "ir" if kind == "mt-ir" else "human"
        for y in rows:
            panels = []
            for x in cols:
                scope = f"s{len(figs)}-{len(panels)}-{kind[3]}"  # the panel's ids, unique in the page
                pts = [(float(e["mt"][x]), float(e[ykind][y]), label[s], f"{s}: {x} {e['mt'][x]:.4g}, {y} {e[ykind][y]:.4g}")
                       for s, e in sorted(systems.items(), key=lambda t: natural_key(t[0]))
                       if e.get("mt", {}).get(x) is not None and e.get(ykind, {}).get(y) is not None]
                c = cells.get((y, x))
                if c is None or c.get("tau") is None:
                    title = f"{x}: τ undefined"
                else:
                    title = f"{x}: τ = {fmt_tau(c['tau'])}" + ("" if c.get("significant") else " (n.s.)")
                    if c.get("informative") is False:
                        title += " — target UNINFORMATIVE"
                panels.append(scatter_svg(pts, title=title, xlabel=x, ylabel=y, width=w, height=h, scope=scope)
                              if draw else (pts, w, h, title))
            figs.append((y, panels))
    return figs


def heatmap_figure(results: Mapping[str, Any]) -> str | None:
    """The τ heatmap (MT metrics as columns, IR and human measures as rows) as SVG."""
    rows, cols, cells = tau_grid(results, "mt-ir")
    hrows, hcols, hcells = tau_grid(results, "mt-human")
    rows = rows + [r for r in hrows if r not in rows]
    cells = {**cells, **hcells}
    cols = cols + [c for c in hcols if c not in cols]
    if not rows or not cols or all(c.get("tau") is None for c in cells.values()):
        return None
    title = "τ: MT metric (columns) vs " + ("IR / human measure" if hrows else "IR measure") + " (rows)"
    mark = {r: r + (" (UNINFORMATIVE)" if uninformative_row(cells, r) else "") for r in rows}
    cells = {(mark[r], x): c for (r, x), c in cells.items()}
    return heatmap_svg([mark[r] for r in rows], cols, cells, cell_text, title)


def _key_html(results: Mapping[str, Any], unlabelled: int, numbered: bool) -> str:
    """The key beside a figure: what the marks mean and, when dots are numbered, number = system."""
    label, _ = system_labels(results, numbered)
    parts = ["<aside class='key'><b>Key</b><ul class='marks'>",
             f"<li><svg width='14' height='10'><circle cx='7' cy='5' r='3.5' fill='{DOT}'/></svg> one system "
             "(hover for its name and scores)</li>",
             f"<li><svg width='22' height='10'><line x1='1' y1='5' x2='21' y2='5' stroke='{FIT}' stroke-width='1.2' "
             "stroke-dasharray='5 3'/></svg> least-squares line</li>",
             "<li>τ in each title: agreement of the two rankings of the systems (1 = same order, 0 = unrelated, "
             "−1 = reversed); (n.s.) = not significant (p ≥ α in the two-sided test of no association, as × in "
             "the τ tables)</li>"]
    if unlabelled:
        parts.append(f"<li>{unlabelled} dot label{'s' if unlabelled > 1 else ''} left out where there was no free "
                     "place: hover the dot</li>")
    parts.append("</ul>")
    if numbered:
        wide = max((len(s) for s in label), default=0) > 12
        parts.append(f"<ol class='systems{' one' if wide else ''}'>" + "".join(f"<li value='{esc(n)}'>{esc(s)}</li>" for s, n in label.items())
                     + "</ol>")
    parts.append("</aside>")
    return "".join(parts)


def _heatmap_html(results: Mapping[str, Any]) -> str:
    hm = heatmap_figure(results)
    if not hm:
        return ""
    return ("<h2 id='heatmap'>τ heatmap</h2><p class='note'>Each cell: Kendall's τ between an MT metric's and a "
            "measure's ranking of the systems; × = not significant; faded rows: an UNINFORMATIVE target. Hover a "
            f"cell for p and n.</p><div class='figure'>{hm}</div>")


def _scatter_html(results: Mapping[str, Any]) -> str:
    figs, numbered = scatter_figures(results)
    if not figs:
        return ""
    parts = ["<h2 id='scatter'>Scatter plots</h2><p class='note'>One figure per retrieval (or human) measure, "
             "one panel per MT metric: each dot is a system, placed by its MT score (across) and its "
             "retrieval score (up). Dots rising to the right mean the metric ranks systems as retrieval "
             "does.</p>"]
    for y, panels in figs:
        width = int(re.search(r'width="(\d+)"', panels[0][0]).group(1)) if panels else 330
        cols = max(1, min(len(panels), PANELS_WIDTH // (width + 8)))  # the key sits right beside them
        parts.append(f"<h3>{esc(y)}</h3><div class='fig'><div class='panels' "
                     f"style='grid-template-columns:repeat({cols},auto)'>"
                     + "".join(svg for svg, _ in panels) + "</div>"
                     + _key_html(results, sum(u for _, u in panels), numbered) + "</div>")
    return "\n".join(parts)


def _glossary_html(results: Mapping[str, Any]) -> str:
    cols = score_columns(results)
    if not cols:
        return ""
    items = glossary([("mt" if k == "mt" else ("human" if k == "human" else "ir"), n) for k, n in cols])
    return ("<h2 id='columns'>What the columns mean</h2><dl class='gloss'>"
            + "".join(f"<dt>{esc(n)}</dt><dd>{esc(t)}</dd>" for n, t in items) + "</dl>")


# --------------------------------------------------------------------------- HTML
_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2em auto;max-width:1200px;color:#1a202c;padding:0 1em}
h1{font-size:1.6em}h2{font-size:1.25em;margin-top:1.6em;border-bottom:1px solid #e2e8f0;padding-bottom:.2em}
table{border-collapse:collapse;margin:.6em 0;font-size:.9em}th,td{border:1px solid #cbd5e0;padding:.25em .6em;text-align:right}
th:first-child,td:first-child{text-align:left}th{background:#edf2f7}thead th{position:sticky;top:0;z-index:1}td.best{font-weight:700;background:#f0fff4}
td.ns{color:#a0aec0}td.em{font-style:italic}td.l,th.l{text-align:left;max-width:22em}img{max-width:100%;border:1px solid #e2e8f0;margin:.4em 0}
pre{background:#f7fafc;padding:.8em;overflow:auto;font-size:.8em}.note{color:#4a5568}
.caption{color:#4a5568;font-size:.85em;max-width:60em}.warn{border:2px solid #c53030;background:#fff5f5;padding:.4em 1em;margin:1em 0}
table.verdicts td,table.verdicts th{text-align:left}tr.uninf td{color:#9b2c2c;background:#fff5f5}
.fig{display:flex;gap:1em;align-items:flex-start}.panels{display:grid;gap:.4em;flex:0 1 auto;min-width:0}
.key{flex:0 0 19em;font-size:.8em;color:#2d3748;border-left:1px solid #e2e8f0;padding-left:.8em;position:sticky;top:.5em}
.key ul{list-style:none;padding:0;margin:.3em 0}.key li{margin:.2em 0}.key ol{padding-left:2.4em;margin:.3em 0;columns:2;column-gap:2.2em}.key ol.one{columns:1}.key li{overflow-wrap:anywhere}
svg.plot,svg.heat{border:1px solid #e2e8f0;background:#fff}dl.gloss dt{font-weight:600;margin-top:.4em}
dl.gloss dd{margin-left:1.5em;color:#4a5568}
"""


def _table_html(headers: list[str], rows: list[list[tuple[str, str]]], align: str = "") -> str:
    """A table of (text, class) cells; columns whose ``align`` letter is ``w`` (long text) are left-aligned."""
    left = {i for i, a in enumerate(align) if a == "w"}
    th = ["<th class='l'>" if i in left else "<th>" for i in range(len(headers))]
    h = "<table><thead><tr>" + "".join(f"{t}{html.escape(x)}</th>" for t, x in zip(th, headers)) + "</tr></thead><tbody>"
    for r in rows:
        h += "<tr>" + "".join(f'<td class="{cls}{" l" if i in left else ""}">{html.escape(txt)}</td>'
                              for i, (txt, cls) in enumerate(r)) + "</tr>"
    return h + "</tbody></table>"


def _inline_html(text: str) -> str:
    wrap = {"code": "<code>{}</code>", "b": "<b>{}</b>", "": "{}"}
    return "".join(wrap[kind].format(html.escape(t)) for kind, t in inline_spans(text))


def _blocks_html(blocks) -> str:
    """Report blocks (:mod:`.tables`) as HTML: headings, notes, tables with their captions."""
    parts = []
    for b in blocks:
        if isinstance(b, Heading):
            parts.append(f"<h{b.level}>{html.escape(b.text)}</h{b.level}>")
        elif isinstance(b, Para):
            parts.append(f"<p class='note'>{_inline_html(b.text)}</p>")
        elif isinstance(b, Bullets):
            parts.append("<ul>" + "".join(f"<li>{_inline_html(i)}</li>" for i in b.items) + "</ul>")
        elif isinstance(b, Table):
            parts.append(_table_html(list(b.header), b.rows, b.align)
                         + (f"<p class='caption'>{_inline_html(b.caption)}</p>" if b.caption else ""))
    return "\n".join(parts)


def _analyses_html(results: Mapping[str, Any], plots: bool) -> str:
    """The favoritism and frequency-bucket sections, with the bucket plot."""
    blocks = analyses_blocks(results)
    if not blocks:
        return ""
    out = "<a id='analyses'></a>" + _blocks_html(blocks)
    buckets = (results.get("analyses") or {}).get("frequency_buckets")
    if plots and buckets:
        out += buckets_svg(buckets)
    return out


def _first_screen_html(results: Mapping[str, Any]) -> str:
    """Which level answers what (when the run has both), then the red Read this first box (warnings, circularity)."""
    guide, warn = levels_guide(results), read_first(results)
    return ((_blocks_html([Para(guide)]) if guide else "")
            + ("<div class='warn'><b>Read this first</b><ul>" + "".join(f"<li>{_inline_html(w)}</li>" for w in warn)
               + "</ul></div>" if warn else ""))


def _verdicts_html(vds) -> str:
    if not vds:
        return ""
    parts = []
    first = vds[0]
    parts.append("<h2 id='verdicts'>Verdicts: which MT metric predicts each target</h2><p class='note'>Metrics are "
                 "ranked by oriented τ and grouped into clusters as mt-metrics-eval's AssignRanks does: a metric "
                 "opens a new cluster when a metric of the current cluster beats it in a PERM-BOTH test at "
                 f"{correction_phrase(first['correction'])} p &lt; {first['alpha']:g} (family: "
                 f"{html.escape(family_phrase(vds))}). A winner is named only when it is alone in the first cluster.</p>")
    rows = []
    for v in vds:
        cl = " &gt; ".join("{" + html.escape(", ".join(c)) + "}" for c in v["clusters"])
        win = f"<b>{html.escape(v['winner'])}</b>" if v.get("winner") else "none (first cluster has several members)"
        sig = "; ".join(f"{html.escape(p['a'])} &gt; {html.escape(p['b'])} (Δτ {p['delta']:+.3f} "
                        f"{fmt_ci(p.get('delta_ci'))}, p<sub>adj</sub> {p['p_adjusted']:.3g})"
                        for p in v["pairwise"] if p.get("significant")) or "none"
        mst = v.get("min_significant_tau")
        power = ("not computed" if v.get("power_computed") is False
                 else fmt_tau(mst) if mst is not None else "none can be significant")
        d = v.get("discriminability")
        disc = f"{d['pairs_separated']} / {d['pairs']} pairs ({d['queries']} queries)" if d else "n/a (no per-query values)"
        cls = "" if v.get("informative", True) else " class='uninf'"
        flag = "" if v.get("informative", True) else UNINFORMATIVE_MARK
        rows.append(f"<tr{cls}><td>{html.escape(v['target'])}{flag}</td><td>{win}</td><td>{cl}</td><td>{sig}</td>"
                    f"<td>{v['n_systems']}: {power}</td><td>{disc}</td></tr>")
    parts.append("<table class='verdicts'><thead><tr><th>target</th><th>winner</th><th>clusters (best first)</th>"
                 "<th>significant differences (adjusted)</th><th>systems: min significant |τ|</th>"
                 "<th>system pairs the measure separates</th></tr></thead><tbody>" + "".join(rows) + "</tbody></table>")
    tests = verdict_tests(vds)
    if tests:
        parts.append(f"<p class='caption'>{html.escape(tests)}</p>")
    table = delta_table(vds)
    if table is not None:
        parts.append("<details><summary>Every pairwise difference (Δτ with CI, p, draws)</summary>"
                     + _blocks_html([table]) + "</details>")
    return "\n".join(parts)


def _confounds_html(results: Mapping[str, Any]) -> str:
    """The confounds section: its notes shown, its tables folded (they can be long)."""
    blocks = confound_blocks(results)
    tables = [b for b in blocks if isinstance(b, Table)]
    out = _blocks_html([b for b in blocks if not isinstance(b, Table)])
    if tables:
        out += ("<details><summary>τ between the MT metrics; partial τ given length ratio and system attributes"
                "</summary>" + _blocks_html(tables) + "</details>")
    return out


def _digits(values, base: int) -> int:
    """Fewest decimals (>= base, <= 6) at which distinct values stay distinct."""
    vals = sorted({float(v) for v in values if isinstance(v, (int, float)) and not math.isnan(v)})
    for d in range(base, 7):
        if len({round(v, d) for v in vals}) == len(vals):
            return d
    return 6


def _scores_html(results: Mapping[str, Any]) -> str:
    cols = score_columns(results)
    if not cols:
        return ""
    systems = results.get("systems", {})
    names = sorted(systems, key=natural_key)
    digits = {(k, n): _digits([systems[s].get(k, {}).get(n) for s in names], 2 if k == "mt" else 4) for k, n in cols}
    rows = [[(s, "")] + [(fmt_num(systems[s].get(k, {}).get(n), digits[(k, n)]), "") for k, n in cols] for s in names]
    eng = results.get("english")
    if eng and eng.get("ir"):
        rows.append([(english_label(results), "")] + [(fmt_num(eng["ir"].get(n), digits[(k, n)]) if k == "ir" else "", "")
                                                        for k, n in cols])
    acc = queries_blocks(results)

    note = english_note(results) if eng and eng.get("ir") else None
    return ("<h2 id='scores'>System scores</h2><p class='note'>Systems in natural order; each column shows as many "
            "decimals as it needs to tell the systems apart.</p>" + _table_html(["system", *(n for _, n in cols)], rows)
            + (_blocks_html([Para(note)]) if note else "")
            + (f"<h2>{html.escape(acc[0].text)}</h2>" + _table_html(list(acc[1].header), acc[1].rows) if acc else ""))


def html_report(results: Mapping[str, Any], *, plots: bool = True) -> str:
    """The page: title, what the cells are (or why there are none), a Contents line linking the sections the
    page has, the first-screen summary, then the sections in report.md's order where both have them."""
    name = html.escape(str(results.get("name", "clir-eval")))
    corr = results.get("correlations", [])
    alpha = corr[0].get("alpha", ALPHA) if corr else ALPHA
    coef = coefficient_name(corr)
    vds = results.get("verdicts") or []
    none = no_correlations(results)
    head = (_blocks_html([Para(f"**No correlations**: {none}. The sections below hold what the run measured.")]) if none
            else f"<p class='note'>{len(results.get('systems', {}))} systems. Cells: {coef} between the systems' "
                 f"scores; × = not significant (p ≥ {alpha}); bold = highest τ in its row (a point estimate; the "
                 "verdicts say which differences are significant).</p>")
    summary = first_screen_lines(results)
    # (anchor, Contents label, html): a section is linked only when it has content; html that carries its
    # own id gets no extra anchor
    sections = [("verdicts", "verdicts", _verdicts_html(vds)),
                ("caveats", "caveats", _confounds_html(results)),
                ("item-level", "item level", _blocks_html(item_level_blocks(results)))]
    notes = results.get("notes") or []
    sections.append(("notes", "notes", "<h2>Notes</h2><ul>" + "".join(f"<li>{html.escape(n)}</li>" for n in notes) + "</ul>"
                     if notes else ""))
    tables = []
    if not vds:
        summ = best_per_measure(results)
        if summ:
            tables.append("<h2>Highest τ per measure (no significance clusters in these results)</h2><ul>")
            for y, x, c in summ:
                tables.append(f"<li><b>{html.escape(y)}</b>: {html.escape(x)} (τ = {fmt_tau(c['tau'])}, "
                              f"p = {fmt_p(c['p_value'])})</li>")
            tables.append("</ul>")
    captioned = False
    for kind, title in KIND_TITLES.items():
        table = kind_table(results, kind, ci="ci_systems")
        if table is not None:
            cap = tau_caption("ci_systems") if not captioned else "Cells as in the first τ table above."
            captioned = True
            tables.append(f"<h2>{html.escape(title)}</h2>" + _table_html(*table)
                          + f"<p class='caption'>{html.escape(cap)}</p>")
    sections += [("tables", "τ tables", "\n".join(tables)),
                 ("direction", "translation direction", _blocks_html(direction_blocks(results))),
                 ("design", "study design", _blocks_html(design_blocks(results))),
                 ("heatmap", "heatmap", _heatmap_html(results) if plots else ""),
                 ("scatter", "scatter plots", _scatter_html(results) if plots else ""),
                 ("scores", "system scores", _scores_html(results)),
                 ("columns", "columns explained", _glossary_html(results)),
                 ("analyses", "analyses", _analyses_html(results, plots))]
    links = [(a, label) for a, label, body in sections if a and body] + [("signature", "signature")]
    queries = "<h2>Queries evaluated"  # inside the system scores' section: its own anchor and link
    if any(queries in body for _, _, body in sections):
        sections = [(a, label, body.replace(queries, "<a id='queries'></a>" + queries)) for a, label, body in sections]
        links.insert(links.index(("scores", "system scores")) + 1, ("queries", "queries evaluated"))
    contents = ("<p class='note'>Contents: " + " · ".join(f"<a href='#{a}'>{label}</a>" for a, label in links)
                + "</p>")
    parts = [f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>{name} — clir-eval</title>",
             f"<style>{_CSS}</style></head><body>", f"<h1>{name}</h1>", head, contents]
    if summary:
        parts.append(_blocks_html([Bullets(tuple(summary))]))
    parts.append(_first_screen_html(results))
    for anchor, _, body in sections:
        if body:
            parts.append((f"<a id='{anchor}'></a>" if anchor and f"id='{anchor}'" not in body else "") + body)
    parts.append("<h2 id='signature'>Signature</h2><pre>" + html.escape("\n".join(signature_lines(results.get("signature", {})))) + "</pre>")
    pointer = design_pointer(results)
    if pointer:
        parts.append(_blocks_html([Para(pointer)]))
    parts.append("</body></html>")
    return "\n".join(parts)
