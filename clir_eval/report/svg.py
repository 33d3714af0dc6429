"""The report's plots (scatter panels, the τ heatmap) as inline SVG, drawn with matplotlib
(:mod:`clir_eval.io.figures`, like every figure of the harness).

What matplotlib does not do is here: dot labels are placed without collision (:func:`place_labels`, in the SVG's
units) and drawn in a monospace font with ``textLength`` set, so the browser renders each label at exactly the width
computed here; :func:`label_boxes` reads the boxes back from the markup (tests and the report check). Each dot and
heatmap cell carries a hover ``<title>``.
"""

from __future__ import annotations

import html
import math
import re
from typing import Any, Iterable, Mapping, Sequence

from ..io.figures import decorate, pyplot, render, root_attrs, scoped

DOT = "#2b6cb0"
FIT = "#c05621"
FONT = "ui-monospace,'DejaVu Sans Mono',Menlo,Consolas,monospace"
LABEL_PX = 10.0
TITLE_EM = 0.64  # width of a bold sans-serif character of a panel title, in em (an upper estimate)
CHAR_EM = 0.6  # label advance per character (textLength forces it)

Box = tuple[float, float, float, float]  # x0, y0, x1, y1 (SVG user units, y down)


def esc(s: object) -> str:
    return html.escape(str(s), quote=True)


def _f(v: float) -> str:
    return f"{v:.1f}".rstrip("0").rstrip(".")


# --------------------------------------------------------------------------- scales
def _padded(vals: Sequence[float], frac: float = 0.08) -> tuple[float, float]:
    lo, hi = min(vals), max(vals)
    span = hi - lo or (abs(hi) * 0.1 or 1.0)
    return lo - span * frac, hi + span * frac


# --------------------------------------------------------------------------- label geometry
def text_width(text: str, px: float = LABEL_PX) -> float:
    return len(text) * px * CHAR_EM


def _text_box(x: float, y: float, text: str, px: float) -> Box:
    """Box of a start-anchored label with its baseline at y (ascender to descender)."""
    return (x - 1, y - 0.8 * px - 1, x + text_width(text, px) + 1, y + 0.25 * px + 1)


def overlaps(a: Box, b: Box) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _seg_hits_box(p: tuple[float, float], q: tuple[float, float], b: Box) -> bool:
    """Whether segment p-q meets box b (Liang-Barsky clipping)."""
    (x0, y0), (x1, y1) = p, q
    dx, dy = x1 - x0, y1 - y0
    t0, t1 = 0.0, 1.0
    for pk, qk in ((-dx, x0 - b[0]), (dx, b[2] - x0), (-dy, y0 - b[1]), (dy, b[3] - y0)):
        if pk == 0:
            if qk < 0:
                return False
            continue
        t = qk / pk
        if pk < 0:
            t0 = max(t0, t)
        else:
            t1 = min(t1, t)
        if t0 > t1:
            return False
    return True


def _nearest(b: Box, x: float, y: float) -> tuple[float, float]:
    return min(max(x, b[0]), b[2]), min(max(y, b[1]), b[3])


_DIRS = [(math.cos(a), math.sin(a)) for a in (math.radians(d) for d in
                                             (-35, 35, 145, -145, -90, 90, 0, 180, -60, 60, 120, -120, -15, 15, 165, -165))]
_RADII = (5, 9, 14, 20, 27, 35, 44, 54, 66, 80)


def place_labels(dots: Sequence[tuple[float, float]], texts: Sequence[str], area: Box, *,
                 px: float = LABEL_PX, dot_r: float = 3.5, order: Sequence[int] | None = None,
                 others: Sequence[tuple[float, float]] = ()) -> list[tuple[float, float, Box, tuple[float, float] | None] | None]:
    """Place each label near its dot: the first candidate (nearest rings first) whose box stays in
    ``area`` and meets no placed label, no dot (nor any of ``others``) and no leader line, and whose leader line (drawn
    beyond the first ring) crosses no placed label or other dot. Crowded dots are placed first.
    Returns per dot (text x, baseline y, box, leader end or None), or None where no place was free."""
    n = len(dots)
    dot_boxes = [(x - dot_r - 0.5, y - dot_r - 0.5, x + dot_r + 0.5, y + dot_r + 0.5) for x, y in [*dots, *others]]
    core = [(x - 2, y - 2, x + 2, y + 2) for x, y in dots]  # a leader line may graze a disc, not cross its middle
    if order is None:
        crowd = [sum(1 for j in range(n) if j != i and abs(dots[i][0] - dots[j][0]) < 30
                     and abs(dots[i][1] - dots[j][1]) < 20) for i in range(n)]
        order = sorted(range(n), key=lambda i: (-crowd[i], i))
    placed: list = [None] * n
    boxes: list[Box] = []
    leaders: list[tuple[tuple[float, float], tuple[float, float]]] = []
    for i in order:
        x, y = dots[i]
        w, h = text_width(texts[i], px), 1.05 * px
        for r in _RADII:
            hit = None
            for ux, uy in _DIRS:
                cx, cy = x + ux * (r + dot_r + w / 2), y + uy * (r + dot_r + h / 2)  # box centre
                tx, base = cx - w / 2, cy + 0.3 * px
                b = _text_box(tx, base, texts[i], px)
                if b[0] < area[0] or b[2] > area[2] or b[1] < area[1] or b[3] > area[3]:
                    continue
                if any(overlaps(b, o) for o in boxes) or any(overlaps(b, d) for d in dot_boxes):
                    continue
                if any(_seg_hits_box(p, q, b) for p, q in leaders):
                    continue
                lead = None
                if r > _RADII[1]:
                    end = _nearest(b, x, y)
                    start = (x + ux * dot_r, y + uy * dot_r)
                    if any(_seg_hits_box(start, end, o) for o in boxes):
                        continue
                    if any(j != i and _seg_hits_box(start, end, core[j]) for j in range(n)):
                        continue
                    lead = end
                hit = (tx, base, b, lead)
                break
            if hit:
                placed[i] = hit
                boxes.append(hit[2])
                if hit[3] is not None:
                    leaders.append(((x, y), hit[3]))
                break
    return placed


def coincident(dots: Sequence[tuple[float, float]], within: float = 7.0) -> list[list[int]]:
    """Groups of dots whose discs (r 3.5) overlap the group's first dot (closer than ``within`` pixels), in input order."""
    groups: list[list[int]] = []
    for i, (x, y) in enumerate(dots):
        for g in groups:
            gx, gy = dots[g[0]]
            if (x - gx) ** 2 + (y - gy) ** 2 < within ** 2:
                g.append(i)
                break
        else:
            groups.append([i])
    return groups


_TEXT_RE = re.compile(r"<text ([^>]*)>([^<]*)</text>")
_ATTR_RE = re.compile(r'([\w:-]+)="([^"]*)"')


def label_boxes(svg: str, px: float = LABEL_PX) -> list[tuple[str, Box]]:
    """(label, box) of every dot label in an SVG made by :func:`scatter_svg`, read from the markup."""
    out = []
    for attrs, text in _TEXT_RE.findall(svg):
        a = dict(_ATTR_RE.findall(attrs))
        if a.get("class") != "lbl":
            continue
        x, y, tl = float(a["x"]), float(a["y"]), float(a["textLength"])
        out.append((html.unescape(text), (x - 1, y - 0.8 * px - 1, x + tl + 1, y + 0.25 * px + 1)))
    return out


def dot_centres(svg: str) -> list[tuple[float, float]]:
    """The centre of every dot of an SVG made by :func:`scatter_svg`, read from the markup."""
    return [(float(x), float(y)) for x, y in
            re.findall(r'<g id="[^"]*dot-\d+">(?:(?!</g>).)*?<use [^>]*x="([-\d.]+)" y="([-\d.]+)"', svg, re.S)]


# --------------------------------------------------------------------------- scatter panel
def _dot_groups(svg: str, n: int) -> str:
    """Each of the ``n`` dots of the scatter collection (``<g id="dots">``, one ``<use>`` per dot in the points'
    order) wrapped in its own ``<g id="dot-I">``, so that it can carry its hover title."""
    head, sep, rest = svg.partition('<g id="dots">')
    if not sep:
        return svg
    body, end, tail = rest.partition("</g>")  # the first </g> closes the collection's clip group
    uses = iter(range(n))
    body = re.sub(r"<use [^>]*/>", lambda m: f'<g id="dot-{next(uses)}">{m.group(0)}</g>', body, count=n)
    return head + sep + body + end + tail


MARGINS = (54, 10, 26, 40)  # left, right, top, bottom of a scatter panel's axes, in the SVG's units


def scatter_layout(points: Sequence[tuple[float, float, str, str]], width: int, height: int) -> dict[str, Any]:
    """Where a panel's dots and labels go, in the SVG's units (y down), before anything is drawn: the axis limits,
    the dots, the groups of dots drawn on top of each other, their label texts and places (None: no free place)."""
    ml, mr, mt, mb = MARGINS
    area = (ml, mt, width - mr, height - mb)
    xs = [p[0] for p in points]
    ys = [p[1] for p in points]
    x0, x1 = _padded(xs)
    y0, y1 = _padded(ys)
    # matplotlib's transform of a linear axis at 72 dpi, y flipped to the SVG's
    dots = [(ml + (u - x0) / (x1 - x0) * (area[2] - ml), area[3] - (v - y0) / (y1 - y0) * (area[3] - mt))
            for u, v in zip(xs, ys)]
    groups = coincident(dots)  # dots drawn on top of each other share one label "3,7"
    gdots = [dots[g[0]] for g in groups]
    texts = [",".join(points[i][2] for i in g) for g in groups]
    placed = place_labels(gdots, texts, (area[0] + 1, area[1] + 1, area[2] - 1, area[3] - 1),
                          others=[dots[i] for g in groups for i in g[1:]])
    unlabelled = sum(len(g) for g, pl in zip(groups, placed) if pl is None)
    return {"limits": (x0, x1, y0, y1), "dots": dots, "groups": groups, "texts": texts, "placed": placed,
            "unlabelled": unlabelled}


def scatter_svg(points: Sequence[tuple[float, float, str, str]], *, title: str, xlabel: str, ylabel: str,
                width: int = 330, height: int = 270, title_class: str = "", scope: str = "p") -> tuple[str, int]:
    """One panel: a dot per (x, y, label, hover text), the least-squares line, axes with at least three
    round ticks, every label placed without collision. Returns (svg, number of dots left unlabelled).
    ``scope`` prefixes the SVG's ids (unique per page: several panels are inlined in one page)."""
    ml, mr, mt, mb = MARGINS
    area = (ml, mt, width - mr, height - mb)
    titles: dict[str, str] = {}
    labels: dict[str, str] = {}
    layout = scatter_layout(points, width, height) if points else None

    def draw(plt):
        fig = plt.figure(figsize=(width / 72, height / 72), dpi=72)
        ax = fig.add_axes((ml / width, mb / height, (area[2] - ml) / width, (area[3] - mt) / height))
        ax.set_facecolor("#fff")
        for side in ax.spines.values():
            side.set_edgecolor("#a0aec0")
        ax.tick_params(labelsize=9, colors="#4a5568", length=0, pad=3)
        ax.grid(True, color="#edf2f7", linewidth=1)
        ax.set_axisbelow(True)
        fy = (mt + area[3]) / 2  # the title centred on the panel, squeezed when longer than the panel
        size = min(12.0, (width - 10) / max(len(title) * TITLE_EM, 1))
        fig.text(0.5, 1 - 16 / height, title, ha="center", va="baseline", fontsize=size, fontweight="bold",
                 gid="title")
        fig.text((ml + area[2]) / 2 / width, 8 / height, xlabel, ha="center", va="baseline", fontsize=10,
                 color="#2d3748")
        fig.text(12 / width, 1 - fy / height, ylabel, ha="center", va="center", rotation=90, fontsize=10,
                 color="#2d3748")
        if not points:
            ax.set_xticks([])
            ax.set_yticks([])
            return fig
        xs = [p[0] for p in points]
        ys = [p[1] for p in points]
        x0, x1, y0, y1 = layout["limits"]
        ax.set_xlim(x0, x1)
        ax.set_ylim(y0, y1)
        for axis in (ax.xaxis, ax.yaxis):
            axis.set_major_locator(plt.MaxNLocator(nbins=5, steps=[1, 2, 2.5, 5, 10], min_n_ticks=3))
        ax.ticklabel_format(useOffset=False, style="plain")
        if len(points) >= 2 and max(xs) > min(xs):
            # fitted in powers of two near the largest |x| and |y| (exact scalings): no square overflows
            sx, sy = (math.ldexp(1.0, math.frexp(max(abs(v) for v in vals) or 1.0)[1]) for vals in (xs, ys))
            us, vs = [u / sx for u in xs], [v / sy for v in ys]
            mx, my = sum(us) / len(us), sum(vs) / len(vs)
            a = sum((u - mx) * (v - my) for u, v in zip(us, vs)) / sum((u - mx) ** 2 for u in us)
            a, b = a * (sy / sx), (my - a * mx) * sy
            lx0, lx1 = min(xs), max(xs)
            if a:  # keep the line inside the frame
                ya, yb = sorted(((y0 - b) / a, (y1 - b) / a))
                lx0, lx1 = max(lx0, ya), min(lx1, yb)
            ax.plot([lx0, lx1], [a * lx0 + b, a * lx1 + b], color=FIT, linewidth=1.2, dashes=(5, 3), gid="fit")
        groups, texts, placed = layout["groups"], layout["texts"], layout["placed"]
        gdots = [layout["dots"][g[0]] for g in groups]
        for (x, y), pl in zip(gdots, placed):
            if pl is not None and pl[3] is not None:
                fig.add_artist(plt.Line2D([x / width, pl[3][0] / width], [1 - y / height, 1 - pl[3][1] / height],
                                      color="#a0aec0", linewidth=0.8))
        ax.scatter(xs, ys, s=49, color=DOT, linewidths=0, gid="dots")  # one <use> per dot, in order
        for k, (pl, text) in enumerate(zip(placed, texts)):
            if pl is None:
                continue
            fig.text(pl[0] / width, 1 - pl[1] / height, text, ha="left", va="baseline", fontsize=LABEL_PX,
                     family="DejaVu Sans Mono", color="#2d3748", gid=f"lbl-{k}")
            labels[f"lbl-{k}"] = f'textLength="{_f(text_width(text))}" lengthAdjust="spacingAndGlyphs"'
        return fig

    svg = _dot_groups(render(draw, "svg", dpi=72), len(points))
    titles.update({f"dot-{i}": p[3] for i, p in enumerate(points)})
    svg = decorate(svg, titles=titles, classes={"title": " ".join(["title", title_class]).strip(),
                                                **{k: "lbl" for k in labels}}, attrs=labels)
    return root_attrs(scoped(svg, scope), class_="plot", role="img"), layout["unlabelled"] if layout else 0


# --------------------------------------------------------------------------- heatmap
def colour(cmap: str, t: float) -> tuple[float, float, float]:
    """RGB in [0, 1] of position t in [0, 1] of a matplotlib colormap."""
    return tuple(float(c) for c in pyplot().colormaps[cmap](min(max(t, 0.0), 1.0))[:3])


def heat_scale(values: Iterable[float | None]) -> tuple[str, float, float]:
    """(colormap, vmin, vmax): a sequential scale over the data's range when no τ is negative
    (so .80 and .93 get clearly different colours), else a diverging one symmetric about 0."""
    vals = [float(v) for v in values if v is not None and not math.isnan(float(v))]
    if not vals:
        return "viridis", 0.0, 1.0
    lo, hi = min(vals), max(vals)
    if lo >= 0:
        lo, hi = max(0.0, lo - 0.05), min(1.0, hi + 0.02)
        return "viridis", lo, hi if hi > lo else lo + 0.1
    top = max(abs(lo), abs(hi), 0.1)
    return "RdBu", -top, top


def heat_colour(cmap: str, lo: float, hi: float, v: float) -> tuple[float, float, float]:
    return colour(cmap, (v - lo) / (hi - lo) if hi > lo else 0.5)


def heatmap_svg(rows: Sequence[str], cols: Sequence[str], cells: Mapping[tuple[str, str], Mapping],
                cell_text, title: str, scope: str = "h") -> str:
    """The τ grid: a coloured cell per (row, column) with its text, row names left, column names
    above (rotated), a colour bar on the right; hover a cell for its p-value and n. Cells of an
    uninformative target (``informative: false``) are drawn faded, as the τ tables grey them."""
    cw, ch, px = 64, 26, 11
    lw = max(text_width(r, px) for r in rows) + 12
    th = max(text_width(c, px) for c in cols) * 0.72 + 18
    top = 22 + th
    width = int(lw + cw * len(cols) + 90)
    height = int(top + ch * len(rows) + 12)
    vals = [c.get("tau") for c in cells.values() if c]
    cmap, lo, hi = heat_scale(vals)
    titles: dict[str, str] = {}

    def draw(plt):
        fig = plt.figure(figsize=(width / 72, height / 72), dpi=72)
        gw, gh = cw * len(cols), ch * len(rows)
        ax = fig.add_axes((lw / width, (height - top - gh) / height, gw / width, gh / height))
        ax.set_xlim(0, len(cols))
        ax.set_ylim(len(rows), 0)
        ax.set_axis_off()
        fig.text(4 / width, 1 - 14 / height, title, fontsize=12, fontweight="bold", va="baseline")
        for j, c in enumerate(cols):
            ax.text(j + 0.5, -6 / ch, c, fontsize=px, rotation=35, rotation_mode="anchor", ha="left", va="baseline")
        for i, r in enumerate(rows):
            ax.text(-6 / cw, i + 0.5, r, fontsize=px, ha="right", va="center")
            for j, x in enumerate(cols):
                c = cells.get((r, x))
                v = c.get("tau") if c else None
                rgb = heat_colour(cmap, lo, hi, v) if v is not None else (1.0, 1.0, 1.0)
                dark = 0.2126 * rgb[0] + 0.7152 * rgb[1] + 0.0722 * rgb[2] < 0.5
                alpha = 0.4 if c and c.get("informative") is False else 1.0  # greyed, as in the τ tables
                gid = f"cell-{i}-{j}"
                titles[gid] = f"{r} vs {x}: " + (f"τ = {v:.3f}, p = {c.get('p_value')}, n = {c.get('n')}"
                                                 if v is not None else "n/a")
                ax.add_patch(plt.Rectangle((j, i), 1, 1, facecolor=rgb, edgecolor="#fff", linewidth=1, alpha=alpha,
                                       gid=gid))
                ax.text(j + 0.5, i + 0.5, cell_text(c), fontsize=px, ha="center", va="center", alpha=alpha,
                        color="#fff" if dark else "#000")
        bar = fig.add_axes(((lw + gw + 14) / width, (height - top - max(gh, 60)) / height, 12 / width,
                            max(gh, 60) / height))
        cb = fig.colorbar(plt.cm.ScalarMappable(plt.Normalize(lo, hi), cmap), cax=bar, ticks=[lo, hi])
        cb.ax.set_yticklabels([f"{lo:.2f}", f"{hi:.2f}"], fontsize=9)
        cb.outline.set_edgecolor("#a0aec0")
        return fig

    svg = decorate(render(draw, "svg", dpi=72), titles=titles)
    return root_attrs(scoped(svg, scope), class_="heat", role="img")
