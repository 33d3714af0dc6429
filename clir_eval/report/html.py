"""report.html: self-contained page with the τ tables, scatter plots per target, a τ heatmap (PNGs embedded)."""

from __future__ import annotations

import base64
import html
import io
import math
from typing import Any, Mapping

from .blocks import Bullets, Heading, Para, Table, fmt_num, inline_spans, natural_key
from .tables import (KIND_TITLES, best_per_measure, cell_text, coefficient_name, direction_blocks, english_label, fmt_p,
                     fmt_tau, kind_table, queries_blocks, score_columns, signature_lines, tau_caption, tau_grid,
                     verdict_tests)


# --------------------------------------------------------------------------- plots
def _place_labels(ax, pts, labels, fontsize: float = 7.5) -> list[bool]:
    """Annotate points greedily at the first of several offsets whose box overlaps no placed
    label, no other point and stays inside the axes; a label that fits nowhere is left out."""
    renderer = ax.figure.canvas.get_renderer()  # the figure must have been drawn once (layout fixed)
    ax_box = ax.get_window_extent(renderer)
    disp = ax.transData.transform(pts)
    dot = 4.0
    taken = [(x - dot, y - dot, x + dot, y + dot) for x, y in disp]
    offsets = [(4, 3), (4, -10), (-4, 3), (-4, -10), (0, 8), (0, -14), (10, 0), (-10, 0), (8, 12), (-8, 12),
               (8, -18), (-8, -18)]
    placed = []
    for (x, y), (px, py), text in sorted(zip(pts, disp, labels), key=lambda t: natural_key(t[2])):
        ok = False
        for dx, dy in offsets:
            ann = ax.annotate(text, (x, y), fontsize=fontsize, xytext=(dx, dy), textcoords="offset points",
                              ha="left" if dx >= 0 else "right", color="#333")
            bb = ann.get_window_extent(renderer)
            box = (bb.x0, bb.y0, bb.x1, bb.y1)
            inside = bb.x0 >= ax_box.x0 and bb.x1 <= ax_box.x1 and bb.y0 >= ax_box.y0 and bb.y1 <= ax_box.y1
            if inside and not any(box[0] < t[2] and t[0] < box[2] and box[1] < t[3] and t[1] < box[3] for t in taken):
                taken.append(box)
                ok = True
                break
            ann.remove()
        placed.append(ok)
    return placed


def _png(fig) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    import matplotlib.pyplot as plt

    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def scatter_pngs(results: Mapping[str, Any]) -> tuple[list[tuple[str, str]], dict[int, str]]:
    """One figure per IR (or human) measure: a panel per MT metric, a dot per system, labels
    placed without overlap; with many (or long) system names the dots carry numbers and the
    second value is the key {number: system} (natural order)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    figs = []
    systems = results.get("systems", {})
    order = sorted(systems, key=natural_key)
    number = {s: i + 1 for i, s in enumerate(order)}
    numbered = len(order) > 12 or max((len(s) for s in order), default=0) > 14
    for kind in ("mt-ir", "mt-human"):
        rows, cols, cells = tau_grid(results, kind)
        ykind = "ir" if kind == "mt-ir" else "human"
        for y in rows:
            n = len(cols)
            ncol = min(n, 4)
            nrow = math.ceil(n / ncol)
            fig, axes = plt.subplots(nrow, ncol, figsize=(3.6 * ncol, 3.2 * nrow), squeeze=False)
            pending = []
            for i, x in enumerate(cols):
                ax = axes[i // ncol][i % ncol]
                pts = [(e["mt"].get(x), e[ykind].get(y), s) for s, e in systems.items()
                       if e.get("mt", {}).get(x) is not None and e.get(ykind, {}).get(y) is not None]
                if pts:
                    xs = np.array([p[0] for p in pts], float)
                    ys = np.array([p[1] for p in pts], float)
                    ax.scatter(xs, ys, s=22, color="#2b6cb0", zorder=3)
                    ax.margins(0.12)
                    labels = [p[2] if not numbered else str(number[p[2]]) for p in pts]
                    pending.append((ax, np.column_stack([xs, ys]), labels))
                    if len(pts) >= 2 and np.ptp(xs) > 0:
                        a, b = np.polyfit(xs, ys, 1)
                        grid = np.linspace(xs.min(), xs.max(), 20)
                        ax.plot(grid, a * grid + b, "--", color="#c05621", lw=1, zorder=2)
                c = cells.get((y, x))
                if c is None or c.get("tau") is None:
                    title = f"{x}: τ undefined"
                else:
                    title = f"{x}: τ = {fmt_tau(c['tau'])}" + ("" if c.get("significant") else " (n.s.)")
                ax.set_title(title, fontsize=10)
                ax.set_xlabel(x, fontsize=8)
                ax.set_ylabel(y, fontsize=8)
                ax.tick_params(labelsize=7)
                ax.grid(alpha=0.3)
            for j in range(n, nrow * ncol):
                axes[j // ncol][j % ncol].axis("off")
            fig.tight_layout()
            fig.canvas.draw()
            for args in pending:
                _place_labels(*args)
            figs.append((f"{y}", _png(fig)))
    return figs, ({number[s]: s for s in order} if numbered else {})


def heat_scale(m) -> tuple[str, float, float]:
    """(colormap, vmin, vmax): a sequential scale over the data's range when no τ is negative
    (so .80 and .93 get clearly different colours), else a diverging one symmetric about 0."""
    import numpy as np

    vals = m[~np.isnan(m)]
    if vals.size == 0:
        return "viridis", 0.0, 1.0
    lo, hi = float(vals.min()), float(vals.max())
    if lo >= 0:
        lo, hi = max(0.0, lo - 0.05), min(1.0, hi + 0.02)
        return "viridis", lo, hi if hi > lo else lo + 0.1
    top = max(abs(lo), abs(hi), 0.1)
    return "RdBu", -top, top


def heatmap_png(results: Mapping[str, Any]) -> str | None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    rows, cols, cells = tau_grid(results, "mt-ir")
    hrows, hcols, hcells = tau_grid(results, "mt-human")
    rows = rows + [r for r in hrows if r not in rows]
    cells = {**cells, **hcells}
    cols = cols + [c for c in hcols if c not in cols]
    if not rows or not cols:
        return None
    m = np.full((len(rows), len(cols)), np.nan)
    for i, r in enumerate(rows):
        for j, x in enumerate(cols):
            c = cells.get((r, x))
            if c and c["tau"] is not None:
                m[i, j] = c["tau"]
    fig, ax = plt.subplots(figsize=(1.1 * len(cols) + 2.5, 0.55 * len(rows) + 1.6))
    cmap, vmin, vmax = heat_scale(m)
    im = ax.imshow(m, cmap=cmap, vmin=vmin, vmax=vmax, aspect="auto")
    ax.set_xticks(range(len(cols)), cols, rotation=35, ha="right", fontsize=8)
    ax.set_yticks(range(len(rows)), rows, fontsize=8)
    norm = plt.Normalize(vmin, vmax)
    for i, r in enumerate(rows):
        for j, x in enumerate(cols):
            rgb = plt.get_cmap(cmap)(norm(m[i, j]))[:3] if not np.isnan(m[i, j]) else (1, 1, 1)
            dark = 0.2126 * rgb[0] + 0.7152 * rgb[1] + 0.0722 * rgb[2] < 0.5
            ax.text(j, i, cell_text(cells.get((r, x))), ha="center", va="center", fontsize=8,
                    color="white" if dark else "black")
    fig.colorbar(im, ax=ax, fraction=0.04)
    ax.set_title("τ: MT metric (columns) vs " + ("IR / human measure" if hrows else "IR measure") + " (rows)", fontsize=9)
    fig.tight_layout()
    return _png(fig)


# --------------------------------------------------------------------------- HTML
_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2em auto;max-width:1200px;color:#1a202c;padding:0 1em}
h1{font-size:1.6em}h2{font-size:1.25em;margin-top:1.6em;border-bottom:1px solid #e2e8f0;padding-bottom:.2em}
table{border-collapse:collapse;margin:.6em 0;font-size:.9em}th,td{border:1px solid #cbd5e0;padding:.25em .6em;text-align:right}
th:first-child,td:first-child{text-align:left}th{background:#edf2f7}td.best{font-weight:700;background:#f0fff4}
td.ns{color:#a0aec0}td.em{font-style:italic}td.l,th.l{text-align:left;max-width:22em}img{max-width:100%;border:1px solid #e2e8f0;margin:.4em 0}
pre{background:#f7fafc;padding:.8em;overflow:auto;font-size:.8em}.note{color:#4a5568}
.caption{color:#4a5568;font-size:.85em;max-width:60em}.warn{border:2px solid #c53030;background:#fff5f5;padding:.4em 1em;margin:1em 0}
table.verdicts td{text-align:left}tr.uninf td{color:#9b2c2c;background:#fff5f5}
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
    from .analyses import analyses_blocks

    blocks = analyses_blocks(results)
    if not blocks:
        return ""
    out = "<a id='analyses'></a>" + _blocks_html(blocks)
    buckets = (results.get("analyses") or {}).get("frequency_buckets")
    if plots and buckets:
        from ..mt.frequency import plot_buckets

        png = base64.b64encode(plot_buckets(buckets)).decode("ascii")
        out += f"<img alt='MacroF per frequency bucket' src='data:image/png;base64,{png}'>"
    return out


def _verdicts_html(vds) -> str:
    if not vds:
        return ""
    warn = [(v["target"], w) for v in vds for w in v.get("warnings", [])]
    parts = []
    if warn:
        parts.append("<div class='warn'><b>Read this first</b><ul>" + "".join(
            f"<li><b>{html.escape(t)}</b>: {html.escape(w)}</li>" for t, w in warn) + "</ul></div>")
    first = vds[0]
    corr = {"holm": "Holm", "bh": "Benjamini-Hochberg"}.get(first["correction"], first["correction"])
    parts.append("<h2 id='verdicts'>Verdicts: which MT metric predicts each target</h2><p class='note'>Metrics are "
                 "ranked by oriented τ and grouped into clusters as mt-metrics-eval's AssignRanks does: a metric "
                 "opens a new cluster when a metric of the current cluster beats it in a PERM-BOTH test at "
                 f"{corr}-adjusted p &lt; {first['alpha']:g} (family: {html.escape(first['family'])}). A winner is "
                 "named only when it is alone in the first cluster.</p>")
    rows = []
    for v in vds:
        cl = " &gt; ".join("{" + html.escape(", ".join(c)) + "}" for c in v["clusters"])
        win = f"<b>{html.escape(v['winner'])}</b>" if v.get("winner") else "none (first cluster has several members)"
        sig = "; ".join(f"{html.escape(p['a'])} &gt; {html.escape(p['b'])} (Δτ {p['delta']:+.3f}, p<sub>adj</sub> "
                        f"{p['p_adjusted']:.3g})" for p in v["pairwise"] if p.get("significant")) or "none"
        mst = v.get("min_significant_tau")
        d = v.get("discriminability")
        disc = f"{d['pairs_separated']} / {d['pairs']} pairs ({d['queries']} queries)" if d else "n/a (no per-query values)"
        cls = "" if v.get("informative", True) else " class='uninf'"
        rows.append(f"<tr{cls}><td>{html.escape(v['target'])}</td><td>{win}</td><td>{cl}</td><td>{sig}</td>"
                    f"<td>{v['n_systems']}: {fmt_tau(mst) if mst is not None else 'none'}</td><td>{disc}</td></tr>")
    parts.append("<table class='verdicts'><thead><tr><th>target</th><th>winner</th><th>clusters (best first)</th>"
                 "<th>significant differences (adjusted)</th><th>systems: min significant |τ|</th>"
                 "<th>system pairs the measure separates</th></tr></thead><tbody>" + "".join(rows) + "</tbody></table>")
    tests = verdict_tests(vds)
    if tests:
        parts.append(f"<p class='caption'>{html.escape(tests)}</p>")
    return "\n".join(parts)


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
    return ("<h2 id='scores'>System scores</h2><p class='note'>Systems in natural order; each column shows as many "
            "decimals as it needs to tell the systems apart.</p>" + _table_html(["system", *(n for _, n in cols)], rows)
            + (f"<h2>{html.escape(acc[0].text)}</h2>" + _table_html(list(acc[1].header), acc[1].rows) if acc else ""))


def html_report(results: Mapping[str, Any], *, plots: bool = True) -> str:
    name = html.escape(str(results.get("name", "clir-eval")))
    parts = [f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>{name} — clir-eval</title>",
             f"<style>{_CSS}</style></head><body>", f"<h1>{name}</h1>"]
    corr = results.get("correlations", [])
    alpha = corr[0].get("alpha", 0.05) if corr else 0.05
    coef = coefficient_name(corr)
    vds = results.get("verdicts") or []
    parts.append(f"<p class='note'>{len(results.get('systems', {}))} systems. Cells: {coef} between the systems' "
                 f"scores; × = not significant (p ≥ {alpha}); bold = highest τ in its row (a point estimate; the "
                 "verdicts say which differences are significant).</p>")
    parts.append(_verdicts_html(vds))
    notes = results.get("notes") or []
    if notes:
        parts.append("<h2>Notes</h2><ul>" + "".join(f"<li>{html.escape(n)}</li>" for n in notes) + "</ul>")
    parts.append("<p class='note'>Contents: <a href='#verdicts'>verdicts</a> · <a href='#tables'>τ tables</a> · "
                 "<a href='#heatmap'>heatmap</a> · <a href='#scatter'>scatter plots</a> · "
                 "<a href='#scores'>system scores</a> · "
                 + ("<a href='#analyses'>analyses</a> · " if results.get("analyses") else "")
                 + "<a href='#signature'>signature</a></p><a id='tables'></a>")
    if not vds:
        summ = best_per_measure(results)
        if summ:
            parts.append("<h2>Highest τ per measure (no significance clusters in these results)</h2><ul>")
            for y, x, c in summ:
                parts.append(f"<li><b>{html.escape(y)}</b>: {html.escape(x)} (τ = {fmt_tau(c['tau'])}, "
                             f"p = {fmt_p(c['p_value'])})</li>")
            parts.append("</ul>")
    for kind, title in KIND_TITLES.items():
        table = kind_table(results, kind, ci="ci_systems")
        if table is not None:
            parts.append(f"<h2>{html.escape(title)}</h2>" + _table_html(*table)
                         + f"<p class='caption'>{html.escape(tau_caption('ci_systems'))}</p>")
    parts.append(_blocks_html(direction_blocks(results)))
    if plots:
        hm = heatmap_png(results)
        if hm:
            parts.append(f"<h2 id='heatmap'>τ heatmap</h2><img alt='tau heatmap' src='data:image/png;base64,{hm}'>")
        figs, key = scatter_pngs(results)
        if figs:
            parts.append("<h2 id='scatter'>Scatter plots (one dot per system, dashed: least-squares fit)</h2>")
            if key:
                parts.append("<p class='note'>Dots are numbered: " + html.escape(
                    ", ".join(f"{i} = {s}" for i, s in key.items())) + "</p>")
            for y, png in figs:
                parts.append(f"<h3>{html.escape(y)}</h3><img alt='scatter {html.escape(y)}' src='data:image/png;base64,{png}'>")
    parts.append(_scores_html(results))
    parts.append(_analyses_html(results, plots))
    parts.append("<h2 id='signature'>Signature</h2><pre>" + html.escape("\n".join(signature_lines(results.get("signature", {})))) + "</pre>")
    parts.append("</body></html>")
    return "\n".join(parts)


