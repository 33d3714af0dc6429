"""clir_eval.io.figures, through which every figure is drawn (matplotlib): the same figure gives the same bytes
in another process (PNG and SVG), the SVG goes inline (no prolog, scoped ids), and the hover titles and classes
land on the right elements."""

from __future__ import annotations

import json
import re
import subprocess
import sys

from clir_eval.io.figures import decorate, render, root_attrs, scoped

BUCKETS = {"buckets": [{"label": "1-10"}, {"label": "11-100"}, {"label": "101+"}],
           "systems": {"a": [{"macro_f": 50.0}, {"macro_f": 40.0}, {"macro_f": None}],
                       "b": [{"macro_f": 55.5}, {"macro_f": 30.0}, {"macro_f": 20.0}]}}
CHILD = ("import json, sys; from clir_eval.mt.frequency import plot_buckets; out = plot_buckets(json.loads(sys.argv[1]), "
         "sys.argv[2]); sys.stdout.buffer.write(out if isinstance(out, bytes) else out.encode())")


def _in_process(fmt: str) -> bytes:
    return subprocess.run([sys.executable, "-c", CHILD, json.dumps(BUCKETS), fmt], capture_output=True,
                          check=True).stdout


def test_a_figure_is_byte_identical_in_another_process():
    from clir_eval.mt.frequency import plot_buckets

    png = plot_buckets(BUCKETS)
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and b"Software" not in png and b"matplotlib" not in png
    assert _in_process("png") == png == plot_buckets(BUCKETS)
    svg = plot_buckets(BUCKETS, "svg")
    assert svg.startswith("<svg") and "<dc:date>" not in svg and "<text" in svg  # text kept as text
    assert _in_process("svg").decode() == svg


def test_the_hash_salt_is_what_makes_svg_ids_stable():
    """Without the fixed salt matplotlib's clip-path ids are random per process: the check can fail."""
    code = ("import matplotlib; matplotlib.use('Agg'); import io, matplotlib.pyplot as plt; f, ax = plt.subplots(); "
            "ax.plot([0, 1], [0, 1]); b = io.BytesIO(); f.savefig(b, format='svg', metadata={'Date': None}); "
            "print(sorted(set(__import__('re').findall(r'clip-path=\"url\\(#(\\w+)\\)', b.getvalue().decode()))))")
    ids = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
           for _ in range(2)}
    assert len(ids) == 2  # unsalted: differs between processes


def test_decorate_scope_and_root_attributes():
    def draw(plt):
        fig, ax = plt.subplots(figsize=(2, 2))
        ax.plot([0], [0], "o", gid="dot-0")
        fig.text(0.1, 0.1, "a<b", gid="lbl-0")
        return fig

    svg = render(draw, "svg")
    svg = decorate(svg, titles={"dot-0": "sys & co"}, classes={"lbl-0": "lbl"}, attrs={"lbl-0": 'textLength="12"'})
    assert re.search(r'<g id="dot-0">\s*<title>sys &amp; co</title>', svg)
    assert re.search(r'<g id="lbl-0">\s*<text class="lbl" textLength="12"[^>]*>a&lt;b</text>', svg)
    out = root_attrs(scoped(svg, "f1"), class_="plot")
    assert out.startswith("<svg") and ' class="plot"' in out.split(">", 1)[0] and 'width="144"' in out
    ids = re.findall(r'\bid="([^"]+)"', out)
    assert ids and all(i.startswith("f1-") for i in ids)
    refs = re.findall(r'url\(#([^)]+)\)', out) + re.findall(r'href="#([^"]+)"', out)
    assert refs and set(refs) <= set(ids)
