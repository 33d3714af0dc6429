"""The harness's PNG figures design.png and ``mt-buckets --plot`` are drawn with matplotlib and written here; pool's
thresholds_*.png on a numpy canvas with matplotlib's FreeType text (:mod:`clir_eval.io.raster`, no pyplot);
report.html's figures are inline SVG written as strings (:mod:`clir_eval.report.svg`), no plotting library.

``render(draw)`` imports matplotlib on first use (``clir-eval --help``, ``run`` and the commands that write no PNG
never load it), selects the non-interactive Agg backend, and draws and saves inside one style (:data:`STYLE`) so
that the same input gives the same bytes on every run and machine with the same matplotlib: no ``Software``
(matplotlib version) text chunk. ``draw(plt)`` builds and returns the figure; ``render`` closes it.
"""

from __future__ import annotations

import io
from typing import Any, Callable

from .. import lazylibs

STYLE: dict[str, Any] = {
    "font.family": "DejaVu Sans",
    "axes.unicode_minus": False,
}
PNG_METADATA = {"Software": None}


def pyplot():
    """``matplotlib.pyplot`` on the Agg backend (imported on the first call: the one place this module loads it)."""
    return lazylibs.matplotlib_pyplot()


def render(draw: Callable[[Any], Any], **savefig: Any) -> bytes:
    """Draw a figure with ``draw(pyplot)`` in :data:`STYLE` and return it as PNG bytes. ``savefig`` options
    (``dpi``, ``bbox_inches``) are passed on."""
    plt = pyplot()
    with plt.rc_context(STYLE):
        return save(draw(plt), **savefig)


def save(fig: Any, **savefig: Any) -> bytes:
    """A figure drawn by the caller as PNG bytes, byte-identical for the same figure; the figure is closed."""
    plt = pyplot()
    try:
        buf = io.BytesIO()
        fig.savefig(buf, format="png", metadata=PNG_METADATA, **savefig)
    finally:
        plt.close(fig)
    return buf.getvalue()
