"""Every figure of the harness is drawn with matplotlib and written here, as PNG bytes or as inline SVG markup.

``render(draw, "png" | "svg")`` imports matplotlib on first use (``clir-eval --help`` and the commands that draw
nothing never load it), selects the non-interactive Agg backend, and draws and saves inside one style
(:data:`STYLE`) so that the same input gives the same bytes on every run and machine with the same matplotlib:

- PNG: no ``Software`` (matplotlib version) text chunk;
- SVG: no ``Date`` metadata, a fixed ``svg.hashsalt`` (the ids of clip paths are hashes salted with it, else
  random), text kept as ``<text>`` (``svg.fonttype: none``: the browser draws it, it can be selected and read
  back), no XML prolog or DOCTYPE (the markup goes inline into an HTML page).

``draw(plt)`` builds and returns the figure; ``render`` closes it. Artists given a ``gid`` appear in the SVG as
``<g id="GID">``: :func:`decorate` adds a hover ``<title>`` or a class to them.
"""

from __future__ import annotations

import html
import io
import re
from typing import Any, Callable, Literal, Mapping

from .. import lazylibs

STYLE: dict[str, Any] = {
    "svg.hashsalt": "clir-eval",
    "svg.fonttype": "none",
    "svg.image_inline": True,
    "font.family": "DejaVu Sans",
    "axes.unicode_minus": False,
}
SVG_METADATA = {"Date": None, "Creator": None, "Format": None, "Type": None}
PNG_METADATA = {"Software": None}


def pyplot():
    """``matplotlib.pyplot`` on the Agg backend (imported on the first call: the one place this module loads it)."""
    return lazylibs.matplotlib_pyplot()


def render(draw: Callable[[Any], Any], fmt: Literal["png", "svg"] = "png", **savefig: Any) -> bytes | str:
    """Draw a figure with ``draw(pyplot)`` in :data:`STYLE` and return it as PNG bytes or as SVG markup (a
    ``<svg>`` element). ``savefig`` options (``dpi``, ``bbox_inches``) are passed on."""
    plt = pyplot()
    with plt.rc_context(STYLE):
        fig = draw(plt)
        return save(fig, fmt, **savefig)


def save(fig: Any, fmt: Literal["png", "svg"] = "png", **savefig: Any) -> bytes | str:
    """A figure drawn by the caller, as PNG bytes or SVG markup, byte-identical for the same figure (the style's
    saving settings apply); the figure is closed."""
    plt = pyplot()
    try:
        with plt.rc_context({k: v for k, v in STYLE.items() if k.startswith("svg.")}):
            buf = io.BytesIO()
            fig.savefig(buf, format=fmt, metadata=PNG_METADATA if fmt == "png" else SVG_METADATA, **savefig)
    finally:
        plt.close(fig)
    if fmt == "png":
        return buf.getvalue()
    text = buf.getvalue().decode("utf-8")
    return text[text.index("<svg"):].rstrip() + "\n"


def decorate(svg: str, titles: Mapping[str, str] = {}, classes: Mapping[str, str] = {},
             attrs: Mapping[str, str] = {}) -> str:
    """The SVG with a hover ``<title>`` added to each ``<g id=GID>`` of ``titles``, ``class`` and more attributes
    (``attrs``: "GID" to an attribute string) added to the first element inside each ``<g id=GID>`` of ``classes``
    (a text's ``<text>``, a patch's ``<path>``)."""

    def group(m: re.Match) -> str:
        gid = m.group(1)
        out = m.group(0)
        if gid in titles:
            out += f"\n   <title>{html.escape(titles[gid], quote=False)}</title>"
        return out

    svg = re.sub(r'<g id="([^"]+)">', group, svg)
    for gid, cls in classes.items():
        extra = f' class="{cls}"' + (f" {attrs[gid]}" if gid in attrs else "")
        svg = re.sub(rf'(<g id="{re.escape(gid)}">(?:\s*<title>[^<]*</title>)?\s*<\w+)', lambda m: m.group(1) + extra,
                     svg, count=1)
    return svg


def root_attrs(svg: str, **attrs: str) -> str:
    """The SVG with attributes (``class_`` for class) set on its root element, and its width and height in CSS
    pixels (matplotlib writes points, 1 pt = 1 unit of its viewBox at 72 dpi)."""
    head, rest = svg.split(">", 1)
    head = re.sub(r'(width|height)="([\d.]+)pt"', lambda m: f'{m.group(1)}="{float(m.group(2)):g}"', head)
    extra = "".join(f' {k.rstrip("_")}="{html.escape(v)}"' for k, v in attrs.items())
    return head + extra + ">" + rest


def scoped(svg: str, prefix: str) -> str:
    """The SVG with every id (and every reference to one) prefixed with ``PREFIX-``: figures inlined into one
    page must not share ids (matplotlib numbers them ``figure_1``, ``axes_1``... in every figure)."""
    svg = re.sub(r'\bid="([^"]+)"', lambda m: f'id="{prefix}-{m.group(1)}"', svg)
    svg = re.sub(r'\b((?:xlink:)?href)="#([^"]+)"', lambda m: f'{m.group(1)}="#{prefix}-{m.group(2)}"', svg)
    return re.sub(r"url\(#([^)]+)\)", lambda m: f"url(#{prefix}-{m.group(1)})", svg)
