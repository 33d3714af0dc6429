"""The report's plots as inline SVG, built as strings (no plotting library, milliseconds per figure).

Labels are drawn in a monospace font with ``textLength`` set, so the browser renders each label at
exactly the width computed here; :func:`place_labels` uses those boxes to place every label without
collision, and :func:`label_boxes` reads them back from the SVG text (tests and the report check).
"""

from __future__ import annotations

import html
import math
import re
from typing import Iterable, Mapping, Sequence

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
def nice_ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    """About ``n`` round tick values covering [lo, hi]; at least 3 (a finer step when the round one leaves
    fewer, e.g. [-0.93, 1.14] gets -0.5, 0, 0.5, 1 rather than 0, 1)."""
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        return [lo]
    ticks = _ticks(lo, hi, n)
    while len(ticks) < 3 and n < 12:
        n += 1
        ticks = _ticks(lo, hi, n)
    return ticks


def _ticks(lo: float, hi: float, n: int) -> list[float]:
    raw = (hi - lo) / max(n - 1, 1)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    start = math.ceil(lo / step - 1e-9) * step
    ticks, v = [], start
    while v <= hi + step * 1e-9:
        ticks.append(round(v, 12))
        v += step
    return ticks


def tick_text(v: float, ticks: Sequence[float]) -> str:
    step = abs(ticks[1] - ticks[0]) if len(ticks) > 1 else abs(v) or 1.0
    d = max(0, min(6, -math.floor(math.log10(step) + 1e-9))) if step > 0 else 0
    if step * 10 ** d % 1 > 1e-6:  # 2.5, 0.25 ...
        d += 1
    return f"{v:.{d}f}"


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


_LABEL_RE = re.compile(r"<text class='lbl' x='([-\d.]+)' y='([-\d.]+)' textLength='([-\d.]+)'[^>]*>([^<]*)</text>")


def label_boxes(svg: str, px: float = LABEL_PX) -> list[tuple[str, Box]]:
    """(label, box) of every dot label in an SVG made by :func:`scatter_svg`, read from the markup."""
    out = []
    for x, y, tl, text in _LABEL_RE.findall(svg):
        x, y, tl = float(x), float(y), float(tl)
        out.append((html.unescape(text), (x - 1, y - 0.8 * px - 1, x + tl + 1, y + 0.25 * px + 1)))
    return out


# --------------------------------------------------------------------------- scatter panel
def scatter_svg(points: Sequence[tuple[float, float, str, str]], *, title: str, xlabel: str, ylabel: str,
                width: int = 330, height: int = 270, title_class: str = "") -> tuple[str, int]:
    """One panel: a dot per (x, y, label, hover text), the least-squares line, axes with round
    ticks, every label placed without collision. Returns (svg, number of dots left unlabelled)."""
    ml, mr, mt, mb = 54, 10, 26, 40
    area = (ml, mt, width - mr, height - mb)
    parts = [f"<svg class='plot' width='{width}' height='{height}' "
             f"viewBox='0 0 {width} {height}' role='img'><title>{esc(title)}</title>",
             f"<rect x='{ml}' y='{mt}' width='{area[2] - ml}' height='{area[3] - mt}' fill='#fff' stroke='#a0aec0'/>"]
    unlabelled = 0
    if points:
        xs = [p[0] for p in points]
        ys = [p[1] for p in points]
        x0, x1 = _padded(xs)
        y0, y1 = _padded(ys)

        def sx(v):
            return ml + (v - x0) / (x1 - x0) * (area[2] - ml)

        def sy(v):
            return area[3] - (v - y0) / (y1 - y0) * (area[3] - mt)

        xt, yt = nice_ticks(x0, x1), nice_ticks(y0, y1)
        for v in xt:
            if x0 <= v <= x1:
                X = _f(sx(v))
                parts.append(f"<line x1='{X}' y1='{mt}' x2='{X}' y2='{area[3]}' stroke='#edf2f7'/>"
                             f"<text x='{X}' y='{area[3] + 12}' font-size='9' text-anchor='middle' fill='#4a5568'>"
                             f"{esc(tick_text(v, xt))}</text>")
        for v in yt:
            if y0 <= v <= y1:
                Y = _f(sy(v))
                parts.append(f"<line x1='{ml}' y1='{Y}' x2='{area[2]}' y2='{Y}' stroke='#edf2f7'/>"
                             f"<text x='{ml - 4}' y='{_f(sy(v) + 3)}' font-size='9' text-anchor='end' fill='#4a5568'>"
                             f"{esc(tick_text(v, yt))}</text>")
        if len(points) >= 2 and max(xs) > min(xs):
            mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
            a = sum((u - mx) * (v - my) for u, v in zip(xs, ys)) / sum((u - mx) ** 2 for u in xs)
            b = my - a * mx
            lx0, lx1 = min(xs), max(xs)
            if a:  # keep the line inside the frame
                ya, yb = sorted(((y0 - b) / a, (y1 - b) / a))
                lx0, lx1 = max(lx0, ya), min(lx1, yb)
            parts.append(f"<line class='fit' x1='{_f(sx(lx0))}' y1='{_f(sy(a * lx0 + b))}' x2='{_f(sx(lx1))}' "
                         f"y2='{_f(sy(a * lx1 + b))}' stroke='{FIT}' stroke-width='1.2' stroke-dasharray='5 3'/>")
        dots = [(sx(p[0]), sy(p[1])) for p in points]
        groups = coincident(dots)  # dots drawn on top of each other share one label "3,7"
        gdots = [dots[g[0]] for g in groups]
        texts = [",".join(points[i][2] for i in g) for g in groups]
        placed = place_labels(gdots, texts, (area[0] + 1, area[1] + 1, area[2] - 1, area[3] - 1),
                              others=[dots[i] for g in groups for i in g[1:]])
        for (x, y), pl in zip(gdots, placed):
            if pl is not None and pl[3] is not None:
                parts.append(f"<line x1='{_f(x)}' y1='{_f(y)}' x2='{_f(pl[3][0])}' y2='{_f(pl[3][1])}' "
                             "stroke='#a0aec0' stroke-width='0.8'/>")
        for (x, y), p in zip(dots, points):
            parts.append(f"<circle cx='{_f(x)}' cy='{_f(y)}' r='3.5' fill='{DOT}'><title>{esc(p[3])}</title></circle>")
        for pl, text, g in zip(placed, texts, groups):
            if pl is None:
                unlabelled += len(g)
                continue
            parts.append(f"<text class='lbl' x='{_f(pl[0])}' y='{_f(pl[1])}' textLength='{_f(text_width(text))}' "
                         f"lengthAdjust='spacingAndGlyphs' font-size='{_f(LABEL_PX)}' font-family=\"{FONT}\" "
                         f"fill='#2d3748'>{esc(text)}</text>")
    # centred on the panel; a title longer than the panel (by a generous estimate for a bold sans
    # serif) is squeezed to fit instead of running off its edge
    fit = f" textLength='{width - 10}' lengthAdjust='spacingAndGlyphs'" if len(title) * 12 * TITLE_EM > width - 10 else ""
    parts.append(f"<text class='{' '.join(['title', title_class]).strip()}' x='{_f(width / 2)}' y='16' "
                 f"font-size='12' font-weight='600' text-anchor='middle'{fit}>{esc(title)}</text>")
    parts.append(f"<text x='{_f((ml + area[2]) / 2)}' y='{height - 8}' font-size='10' text-anchor='middle' "
                 f"fill='#2d3748'>{esc(xlabel)}</text>")
    cy = (mt + area[3]) / 2
    parts.append(f"<text x='12' y='{_f(cy)}' font-size='10' text-anchor='middle' fill='#2d3748' "
                 f"transform='rotate(-90 12 {_f(cy)})'>{esc(ylabel)}</text>")
    parts.append("</svg>")
    return "".join(parts), unlabelled


# --------------------------------------------------------------------------- heatmap
_VIRIDIS = ["#440154", "#482878", "#3e4989", "#31688e", "#26828e", "#1f9e89", "#35b779", "#6ece58", "#b5de2b",
            "#fde725"]
_RDBU = ["#67001f", "#b2182b", "#d6604d", "#f4a582", "#fddbc7", "#f7f7f7", "#d1e5f0", "#92c5de", "#4393c3",
         "#2166ac", "#053061"]
COLORMAPS = {"viridis": _VIRIDIS, "RdBu": _RDBU}


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


def heatmap_svg(rows: Sequence[str], cols: Sequence[str], cells: Mapping[tuple[str, str], Mapping],
                cell_text, title: str) -> str:
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
    p = [f"<svg class='heat' width='{width}' height='{height}' "
         f"viewBox='0 0 {width} {height}' role='img'><title>{esc(title)}</title>",
         f"<text x='4' y='14' font-size='12' font-weight='600'>{esc(title)}</text>"]
    for j, c in enumerate(cols):
        x = lw + cw * j + cw / 2
        p.append(f"<text x='{_f(x)}' y='{_f(top - 6)}' font-size='{px}' transform='rotate(-35 {_f(x)} {_f(top - 6)})'"
                 f">{esc(c)}</text>")
    for i, r in enumerate(rows):
        y = top + ch * i
        p.append(f"<text x='{_f(lw - 6)}' y='{_f(y + ch / 2 + 4)}' font-size='{px}' text-anchor='end'>{esc(r)}</text>")
        for j, x in enumerate(cols):
            c = cells.get((r, x))
            v = c.get("tau") if c else None
            rgb = heat_colour(cmap, lo, hi, v) if v is not None else (1.0, 1.0, 1.0)
            dark = 0.2126 * rgb[0] + 0.7152 * rgb[1] + 0.0722 * rgb[2] < 0.5
            tip = f"{r} vs {x}: " + (f"τ = {v:.3f}, p = {c.get('p_value')}, n = {c.get('n')}" if v is not None else "n/a")
            dim = " opacity='0.4'" if c and c.get("informative") is False else ""  # greyed, as in the τ tables
            p.append(f"<g{dim}><title>{esc(tip)}</title><rect x='{_f(lw + cw * j)}' y='{_f(y)}' width='{cw}' height='{ch}' "
                     f"fill='{_hex(rgb)}' stroke='#fff'/><text x='{_f(lw + cw * j + cw / 2)}' y='{_f(y + ch / 2 + 4)}' "
                     f"font-size='{px}' text-anchor='middle' fill='{'#fff' if dark else '#000'}'>"
                     f"{esc(cell_text(c))}</text></g>")
    bx, by, bh = lw + cw * len(cols) + 14, top, max(ch * len(rows), 60)
    steps = 24
    for k in range(steps):
        t = 1 - (k + 0.5) / steps
        p.append(f"<rect x='{_f(bx)}' y='{_f(by + bh * k / steps)}' width='12' height='{_f(bh / steps + 0.5)}' "
                 f"fill='{_hex(colour(cmap, t))}'/>")
    p.append(f"<rect x='{_f(bx)}' y='{_f(by)}' width='12' height='{_f(bh)}' fill='none' stroke='#a0aec0'/>")
    for v, yy in ((hi, by + 4), (lo, by + bh)):
        p.append(f"<text x='{_f(bx + 16)}' y='{_f(yy)}' font-size='9'>{esc(f'{v:.2f}')}</text>")
    p.append("</svg>")
    return "".join(p)
