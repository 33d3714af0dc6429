"""The report's plots (scatter panels, the τ heatmap, the frequency-bucket lines) as inline SVG, written as strings:
no plotting library, milliseconds per figure, the same bytes for the same input on every machine.

Dot labels are placed without collision (:func:`place_labels`, in the SVG's units) and drawn in a monospace font with
``textLength`` set, so the browser renders each label at exactly the width computed here; :func:`label_boxes` reads
the boxes back from the markup (tests and the report check). Each dot and heatmap cell carries a hover ``<title>``.
Every id is prefixed with the figure's ``scope`` (several figures are inlined in one page). PNG files (design.png,
``mt-buckets --plot``) are drawn with matplotlib (:mod:`clir_eval.io.figures`); pool's thresholds_*.png on a numpy
canvas with matplotlib's font (:mod:`clir_eval.io.raster`).
"""

from __future__ import annotations

import html
import math
import re
import sys
from typing import Any, Iterable, Mapping, Sequence

DOT = "#2b6cb0"
FIT = "#c05621"
FONT = "ui-monospace,'DejaVu Sans Mono',Menlo,Consolas,monospace"
SANS = "'DejaVu Sans',system-ui,sans-serif"
LABEL_PX = 10.0
TITLE_EM = 0.64  # width of a bold sans-serif character of a panel title, in em (an upper estimate)
CHAR_EM = 0.6  # label advance per character (textLength forces it)

Box = tuple[float, float, float, float]  # x0, y0, x1, y1 (SVG user units, y down)


def esc(s: object) -> str:
    return html.escape(str(s), quote=True)


def _f(v: float) -> str:
    return f"{v:.1f}".rstrip("0").rstrip(".")


# --------------------------------------------------------------------------- scales
def nice_ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    """About ``n`` round tick values (steps 1, 2, 2.5, 5 times a power of ten) inside [lo, hi]; at least 3 (a finer
    step when the round one leaves fewer, e.g. [-0.93, 1.14] gets -0.5, 0, 0.5, 1 rather than 0, 1)."""
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        return [lo]
    ticks = _ticks(lo, hi, n)
    while len(ticks) < 3 and n < 12:
        n += 1
        ticks = _ticks(lo, hi, n)
    return ticks


def _ticks(lo: float, hi: float, n: int) -> list[float]:
    raw = (hi / 2 - lo / 2) / max(n - 1, 1) * 2  # halves: no overflow at the ends of the float range
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    k0, k1 = math.ceil(lo / step - 1e-9), math.floor(hi / step + 1e-9)
    return [round(k * step, 12) + 0.0 for k in range(k0, k1 + 1)]  # + 0.0: no "-0"


def tick_text(v: float, ticks: Sequence[float]) -> str:
    """A tick value with as many decimals as the step needs (plain notation: no offset, no exponent)."""
    step = abs(ticks[1] / 2 - ticks[0] / 2) * 2 if len(ticks) > 1 else abs(v) or 1.0
    if step >= 1e6:
        return f"{v:.6g}"
    d = max(0, min(6, -math.floor(math.log10(step) + 1e-9))) if step > 0 else 0
    scaled = step * 10 ** d
    if abs(scaled - round(scaled)) > 1e-6:  # 2.5, 0.25 ...
        d += 1
    return f"{v:.{d}f}"


def _padded(vals: Sequence[float], frac: float = 0.08) -> tuple[float, float]:
    """The data's range widened by ``frac`` of it on each side (kept finite at the ends of the float range)."""
    lo, hi = min(vals), max(vals)
    half = hi / 2 - lo / 2 or (abs(hi) * 0.05 or 0.5)  # half the span: finite for any finite values
    return max(lo - 2 * half * frac, -sys.float_info.max), min(hi + 2 * half * frac, sys.float_info.max)


def _unit(v: float, lo: float, hi: float) -> float:
    """v's position in [lo, hi] as a fraction (halves: no overflow for values near the float range's ends)."""
    return (v / 2 - lo / 2) / (hi / 2 - lo / 2)


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


_LABEL_RE = re.compile(r'<text class="lbl" x="([-\d.]+)" y="([-\d.]+)" textLength="([-\d.]+)"[^>]*>([^<]*)</text>')
_DOT_RE = re.compile(r'<g id="[^"]*dot-\d+"><title>[^<]*</title><circle cx="([-\d.]+)" cy="([-\d.]+)"')


def label_boxes(svg: str, px: float = LABEL_PX) -> list[tuple[str, Box]]:
    """(label, box) of every dot label in an SVG made by :func:`scatter_svg`, read from the markup."""
    out = []
    for x, y, tl, text in _LABEL_RE.findall(svg):
        x, y, tl = float(x), float(y), float(tl)
        out.append((html.unescape(text), (x - 1, y - 0.8 * px - 1, x + tl + 1, y + 0.25 * px + 1)))
    return out


def dot_centres(svg: str) -> list[tuple[float, float]]:
    """The centre of every dot of an SVG made by :func:`scatter_svg`, read from the markup."""
    return [(float(x), float(y)) for x, y in _DOT_RE.findall(svg)]


# --------------------------------------------------------------------------- scatter panel
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
    dots = [(ml + _unit(u, x0, x1) * (area[2] - ml), area[3] - _unit(v, y0, y1) * (area[3] - mt))
            for u, v in zip(xs, ys)]
    groups = coincident(dots)  # dots drawn on top of each other share one label "3,7"
    gdots = [dots[g[0]] for g in groups]
    texts = [",".join(points[i][2] for i in g) for g in groups]
    placed = place_labels(gdots, texts, (area[0] + 1, area[1] + 1, area[2] - 1, area[3] - 1),
                          others=[dots[i] for g in groups for i in g[1:]])
    unlabelled = sum(len(g) for g, pl in zip(groups, placed) if pl is None)
    return {"limits": (x0, x1, y0, y1), "dots": dots, "groups": groups, "texts": texts, "placed": placed,
            "unlabelled": unlabelled}


def _axes(parts: list[str], scope: str, area: Box, limits: tuple[float, float, float, float]) -> None:
    """Grid lines and tick labels (at least three round ticks per axis), each tick a ``<g id=SCOPE-xtick_K>``."""
    ml, mt, right, bottom = area
    x0, x1, y0, y1 = limits
    for axis, lo, hi in (("x", x0, x1), ("y", y0, y1)):
        ticks = nice_ticks(lo, hi)
        for k, v in enumerate(ticks):
            label = esc(tick_text(v, ticks))
            if axis == "x":
                X = _f(ml + _unit(v, lo, hi) * (right - ml))
                parts.append(f'<g id="{scope}-xtick_{k}"><line x1="{X}" y1="{mt}" x2="{X}" y2="{bottom}" '
                             f'stroke="#edf2f7"/><text x="{X}" y="{bottom + 12}" font-size="9" text-anchor="middle" '
                             f'fill="#4a5568">{label}</text></g>')
            else:
                yv = bottom - _unit(v, lo, hi) * (bottom - mt)
                parts.append(f'<g id="{scope}-ytick_{k}"><line x1="{ml}" y1="{_f(yv)}" x2="{right}" y2="{_f(yv)}" '
                             f'stroke="#edf2f7"/><text x="{ml - 4}" y="{_f(yv + 3)}" font-size="9" text-anchor="end" '
                             f'fill="#4a5568">{label}</text></g>')


def _fit_line(points: Sequence[tuple[float, float, str, str]], dots: Sequence[tuple[float, float]], top: float,
              bottom: float) -> str:
    """The least-squares line of y on x over the dots' x range, kept inside the frame (``top`` to ``bottom``);
    empty with fewer than two x values. Fitted on the dots' positions, an affine image of the data's (the same
    line, and no overflow for extreme scores)."""
    if len(points) < 2 or max(p[0] for p in points) <= min(p[0] for p in points):
        return ""
    xs = [d[0] for d in dots]
    ys = [d[1] for d in dots]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    sxx = sum((u - mx) ** 2 for u in xs)
    if not sxx:
        return ""
    a = sum((u - mx) * (v - my) for u, v in zip(xs, ys)) / sxx
    b = my - a * mx
    lx0, lx1 = min(xs), max(xs)
    if a:
        ya, yb = sorted(((top - b) / a, (bottom - b) / a))
        lx0, lx1 = max(lx0, ya), min(lx1, yb)
    return (f'<line class="fit" x1="{_f(lx0)}" y1="{_f(a * lx0 + b)}" x2="{_f(lx1)}" y2="{_f(a * lx1 + b)}" '
            f'stroke="{FIT}" stroke-width="1.2" stroke-dasharray="5 3"/>')


def scatter_svg(points: Sequence[tuple[float, float, str, str]], *, title: str, xlabel: str, ylabel: str,
                width: int = 330, height: int = 270, title_class: str = "", scope: str = "p") -> tuple[str, int]:
    """One panel: a dot per (x, y, label, hover text), the least-squares line, axes with at least three
    round ticks, every label placed without collision. Returns (svg, number of dots left unlabelled).
    ``scope`` prefixes the SVG's ids (unique per page: several panels are inlined in one page)."""
    ml, mr, mt, mb = MARGINS
    area = (ml, mt, width - mr, height - mb)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="plot" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" role="img" font-family="{SANS}"><title>{esc(title)}</title>',
             f'<rect x="{ml}" y="{mt}" width="{area[2] - ml}" height="{area[3] - mt}" fill="#fff"/>']
    unlabelled = 0
    if points:
        layout = scatter_layout(points, width, height)
        _axes(parts, scope, area, layout["limits"])
        parts.append(_fit_line(points, layout["dots"], mt, area[3]))
        groups, texts, placed, dots = layout["groups"], layout["texts"], layout["placed"], layout["dots"]
        for g, pl in zip(groups, placed):
            if pl is not None and pl[3] is not None:
                x, y = dots[g[0]]
                parts.append(f'<line x1="{_f(x)}" y1="{_f(y)}" x2="{_f(pl[3][0])}" y2="{_f(pl[3][1])}" '
                             'stroke="#a0aec0" stroke-width="0.8"/>')
        for i, ((x, y), p) in enumerate(zip(dots, points)):
            parts.append(f'<g id="{scope}-dot-{i}"><title>{esc(p[3])}</title>'
                         f'<circle cx="{_f(x)}" cy="{_f(y)}" r="3.5" fill="{DOT}"/></g>')
        for k, (pl, text) in enumerate(zip(placed, texts)):
            if pl is None:
                continue
            parts.append(f'<text class="lbl" x="{_f(pl[0])}" y="{_f(pl[1])}" textLength="{_f(text_width(text))}" '
                         f'lengthAdjust="spacingAndGlyphs" id="{scope}-lbl-{k}" font-size="{_f(LABEL_PX)}" '
                         f'font-family="{FONT}" fill="#2d3748">{esc(text)}</text>')
        unlabelled = layout["unlabelled"]
    parts.append(f'<rect x="{ml}" y="{mt}" width="{area[2] - ml}" height="{area[3] - mt}" fill="none" '
                 'stroke="#a0aec0"/>')
    # centred on the panel; a title longer than the panel (by a generous estimate for a bold sans serif) is
    # squeezed to fit instead of running off its edge
    fit = (f' textLength="{width - 10}" lengthAdjust="spacingAndGlyphs"'
           if len(title) * 12 * TITLE_EM > width - 10 else "")
    parts.append(f'<text class="{esc(" ".join(["title", title_class]).strip())}" id="{scope}-title" '
                 f'x="{_f(width / 2)}" y="16" font-size="12" font-weight="bold" text-anchor="middle"{fit}>'
                 f'{esc(title)}</text>')
    parts.append(f'<text x="{_f((ml + area[2]) / 2)}" y="{height - 8}" font-size="10" text-anchor="middle" '
                 f'fill="#2d3748">{esc(xlabel)}</text>')
    cy = _f((mt + area[3]) / 2)
    parts.append(f'<text x="12" y="{cy}" font-size="10" text-anchor="middle" fill="#2d3748" '
                 f'transform="rotate(-90 12 {cy})">{esc(ylabel)}</text></svg>')
    return "".join(parts), unlabelled


# --------------------------------------------------------------------------- colours
# matplotlib's colormaps sampled at evenly spaced stops (viridis 17, RdBu 11), linear between them
_VIRIDIS = ["#440154", "#48186a", "#472d7b", "#424086", "#3b528b", "#33638d", "#2c728e", "#26828e", "#21918c",
            "#1fa088", "#28ae80", "#3fbc73", "#5ec962", "#84d44b", "#addc30", "#d8e219", "#fde725"]
_RDBU = ["#67001f", "#b1182b", "#d6604d", "#f3a481", "#fddbc7", "#f6f7f7", "#d1e5f0", "#90c4dd", "#4393c3",
         "#2065ab", "#053061"]
COLORMAPS = {"viridis": _VIRIDIS, "RdBu": _RDBU}
CYCLE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
         "#17becf"]  # matplotlib's default line colours (tab10)


def colour(cmap: str, t: float) -> tuple[float, float, float]:
    """RGB in [0, 1] of position t in [0, 1] of a colormap (linear between its stops)."""
    stops = COLORMAPS[cmap]
    t = min(max(t, 0.0), 1.0) * (len(stops) - 1)
    i = min(int(t), len(stops) - 2)
    f = t - i
    a = [int(stops[i][k:k + 2], 16) / 255 for k in (1, 3, 5)]
    b = [int(stops[i + 1][k:k + 2], 16) / 255 for k in (1, 3, 5)]
    return tuple(u + (v - u) * f for u, v in zip(a, b))


def _hex(rgb: Iterable[float]) -> str:
    return "#" + "".join(f"{round(c * 255):02x}" for c in rgb)


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


# --------------------------------------------------------------------------- heatmap
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
    cmap, lo, hi = heat_scale(c.get("tau") for c in cells.values() if c)
    p = [f'<svg xmlns="http://www.w3.org/2000/svg" class="heat" width="{width}" height="{height}" '
         f'viewBox="0 0 {width} {height}" role="img" font-family="{SANS}"><title>{esc(title)}</title>',
         f'<text x="4" y="14" font-size="12" font-weight="bold">{esc(title)}</text>']
    for j, c in enumerate(cols):
        x, y = _f(lw + cw * j + cw / 2), _f(top - 6)
        p.append(f'<text x="{x}" y="{y}" font-size="{px}" transform="rotate(-35 {x} {y})">{esc(c)}</text>')
    for i, r in enumerate(rows):
        y = top + ch * i
        p.append(f'<text x="{_f(lw - 6)}" y="{_f(y + ch / 2 + 4)}" font-size="{px}" text-anchor="end">{esc(r)}</text>')
        for j, x in enumerate(cols):
            c = cells.get((r, x))
            v = c.get("tau") if c else None
            rgb = heat_colour(cmap, lo, hi, v) if v is not None else (1.0, 1.0, 1.0)
            dark = 0.2126 * rgb[0] + 0.7152 * rgb[1] + 0.0722 * rgb[2] < 0.5
            tip = f"{r} vs {x}: " + (f"τ = {v:.3f}, p = {c.get('p_value')}, n = {c.get('n')}" if v is not None else "n/a")
            dim = ' opacity="0.4"' if c and c.get("informative") is False else ""  # greyed, as in the τ tables
            p.append(f'<g id="{scope}-cell-{i}-{j}"{dim}><title>{esc(tip)}</title><rect x="{_f(lw + cw * j)}" '
                     f'y="{_f(y)}" width="{cw}" height="{ch}" fill="{_hex(rgb)}" stroke="#fff"/><text '
                     f'x="{_f(lw + cw * j + cw / 2)}" y="{_f(y + ch / 2 + 4)}" font-size="{px}" text-anchor="middle" '
                     f'fill="{"#fff" if dark else "#000"}">{esc(cell_text(c))}</text></g>')
    bx, by, bh = lw + cw * len(cols) + 14, top, max(ch * len(rows), 60)
    steps = 32
    for k in range(steps):
        p.append(f'<rect x="{_f(bx)}" y="{_f(by + bh * k / steps)}" width="12" height="{_f(bh / steps + 0.5)}" '
                 f'fill="{_hex(colour(cmap, 1 - (k + 0.5) / steps))}"/>')
    p.append(f'<rect x="{_f(bx)}" y="{_f(by)}" width="12" height="{_f(bh)}" fill="none" stroke="#a0aec0"/>')
    for v, yy in ((hi, by + 4), (lo, by + bh)):
        p.append(f'<text x="{_f(bx + 16)}" y="{_f(yy)}" font-size="9">{esc(f"{v:.2f}")}</text>')
    p.append("</svg>")
    return "".join(p)


# --------------------------------------------------------------------------- frequency buckets
def buckets_svg(res: Mapping[str, Any], scope: str = "b") -> str:
    """MacroF per reference-frequency bucket (x, most frequent first), one line per system with its legend entry
    (results.json's ``analyses.frequency_buckets``); a bucket without a value breaks the line."""
    labels = [b["label"] for b in res["buckets"]]
    systems = res["systems"]
    vals = [row["macro_f"] for rows in systems.values() for row in rows[:len(labels)] if row["macro_f"] is not None]
    ml, mt, mb = 54, 12, 64
    legend_w = max((text_width(s, 9) for s in systems), default=0) + 34
    plot_w = max(280, 70 * len(labels))
    width, height = int(ml + plot_w + 10 + legend_w), int(max(260, mt + mb + 14 * len(systems)))
    area = (ml, mt, ml + plot_w, height - mb)
    p = [f'<svg xmlns="http://www.w3.org/2000/svg" class="buckets" width="{width}" height="{height}" '
         f'viewBox="0 0 {width} {height}" role="img" aria-label="MacroF per frequency bucket" font-family="{SANS}">'
         '<title>MacroF per frequency bucket</title>',
         f'<rect x="{ml}" y="{mt}" width="{plot_w}" height="{_f(area[3] - mt)}" fill="#fff" stroke="#a0aec0"/>']
    lo, hi = _padded(vals) if vals else (0.0, 1.0)
    step = plot_w / max(len(labels), 1)

    def sx(k):
        return ml + step * (k + 0.5)

    def sy(v):
        return area[3] - (v - lo) / (hi - lo) * (area[3] - mt)

    ticks = nice_ticks(lo, hi)
    for v in ticks:
        y = _f(sy(v))
        p.append(f'<line x1="{ml}" y1="{y}" x2="{area[2]}" y2="{y}" stroke="#edf2f7"/><text x="{ml - 4}" '
                 f'y="{_f(sy(v) + 3)}" font-size="9" text-anchor="end" fill="#4a5568">{esc(tick_text(v, ticks))}</text>')
    for k, lab in enumerate(labels):
        x, y = _f(sx(k)), _f(area[3] + 12)
        p.append(f'<text x="{x}" y="{y}" font-size="9" text-anchor="end" fill="#4a5568" '
                 f'transform="rotate(-30 {x} {y})">{esc(lab)}</text>')
    for n, (name, rows) in enumerate(systems.items()):
        col = CYCLE[n % len(CYCLE)]
        pts = [(sx(k), sy(r["macro_f"])) if r["macro_f"] is not None else None for k, r in enumerate(rows[:len(labels)])]
        run: list[str] = []
        for pt in [*pts, None]:
            if pt is None:
                if len(run) > 1:
                    p.append(f'<polyline points="{" ".join(run)}" fill="none" stroke="{col}" stroke-width="1.5"/>')
                run = []
            else:
                run.append(f"{_f(pt[0])},{_f(pt[1])}")
        p.append(f'<g id="{scope}-sys-{n}" fill="{col}"><title>{esc(name)}</title>'
                 + "".join(f'<circle cx="{_f(x)}" cy="{_f(y)}" r="3"/>' for x, y in filter(None, pts)) + "</g>")
        ly = mt + 10 + 14 * n
        lx = area[2] + 10
        p.append(f'<line x1="{lx}" y1="{ly - 3}" x2="{lx + 18}" y2="{ly - 3}" stroke="{col}" stroke-width="1.5"/>'
                 f'<circle cx="{lx + 9}" cy="{ly - 3}" r="3" fill="{col}"/>'
                 f'<text x="{lx + 24}" y="{ly}" font-size="9">{esc(name)}</text>')
    p.append(f'<text x="{_f(ml + plot_w / 2)}" y="{height - 6}" font-size="10" text-anchor="middle" fill="#2d3748">'
             'reference-frequency rank of the type</text>')
    cy = _f((mt + area[3]) / 2)
    p.append(f'<text x="12" y="{cy}" font-size="10" text-anchor="middle" fill="#2d3748" '
             f'transform="rotate(-90 12 {cy})">MacroF (mean F per type)</text></svg>')
    return "".join(p)
