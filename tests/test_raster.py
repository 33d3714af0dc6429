"""The PNG canvas of pool's threshold plots (clir_eval.io.raster): the file decodes (by PIL, an independent
decoder) to the canvas's pixels, lines, discs and text land where asked, and the plots are the same bytes in
another process without pyplot or matplotlib's renderer loaded."""

from __future__ import annotations

import io
import json
import subprocess
import sys

import numpy as np
import pytest

from clir_eval.io.raster import Canvas

PIL = pytest.importorskip("PIL.Image")


def decoded(png: bytes) -> np.ndarray:
    with PIL.open(io.BytesIO(png)) as im:
        assert im.format == "PNG" and im.mode == "RGB" and not im.info  # no text chunks
        return np.asarray(im)


def test_png_decodes_to_the_canvas_pixels():
    c = Canvas(37, 23)
    c.img[:] = np.random.default_rng(1).random(c.img.shape)
    png = c.png()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert np.array_equal(decoded(png), np.rint(c.img * 255).astype(np.uint8))


def test_a_line_covers_its_width_and_stays_in_its_clip():
    c = Canvas(60, 30)
    c.polyline(np.array([[5.0, 10.0], [55.0, 10.0]]), "#000000", 2.0, clip=(0, 0, 40, 30))
    dark = c.img[..., 0] < 0.5
    rows, cols = np.nonzero(dark)
    assert set(rows) == {9, 10}  # the pixel rows whose centres lie within 1 px of y = 10
    assert cols.min() == 4 and cols.max() == 39  # the round end reaches x = 4; clipped at x = 40
    assert (c.img[:8] == 1).all() and (c.img[12:] == 1).all()


def test_a_disc_is_round_and_blended():
    c = Canvas(40, 40)
    c.disc(20.0, 20.0, 8.0, "#ff0000", alpha=0.5)
    inside, outside = c.img[20, 20], c.img[20, 30]
    assert inside == pytest.approx([1.0, 0.5, 0.5]) and (outside == 1).all()
    red = c.img[..., 1] < 0.9
    assert abs(red.sum() - np.pi * 64) < 0.1 * np.pi * 64


def test_text_lies_between_its_ascent_and_descent_and_turns():
    c = Canvas(200, 60)
    c.text(10, 40, "Agy", 20)
    width, asc, desc = c.text_extent("Agy", 20)
    rows, cols = np.nonzero(c.img[..., 0] < 0.5)
    assert 40 - asc - 1 <= rows.min() < 40 - 0.6 * asc and 40 < rows.max() <= 40 + desc + 1  # A's top, y's tail
    assert 10 <= cols.min() <= 12 and abs(cols.max() - (10 + width)) < 3
    v = Canvas(60, 200)
    v.text(40, 100, "Agy", 20, ha="center", vertical=True)
    rows, cols = np.nonzero(v.img[..., 0] < 0.5)
    assert abs((rows.min() + rows.max()) / 2 - 100) < 3 and abs(rows.max() - rows.min() - width) < 4
    assert cols.max() <= 40 + desc + 1 and cols.min() >= 40 - asc - 1  # the baseline is the column x = 40


def test_a_character_the_font_lacks_is_drawn_as_a_question_mark(recwarn):
    a, b = Canvas(120, 40), Canvas(120, 40)
    a.text(5, 30, "m\t中\x00", 10)
    b.text(5, 30, "m???", 10)
    assert np.array_equal(a.img, b.img) and (a.img < 1).any() and not recwarn.list


CHILD = """
import json, sys
import numpy as np
from clir_eval.pooling.thresholds import _plots
rows, parts = json.loads(sys.argv[1])
pooled = {(m, t): [(np.array(dx), np.array(dy), None, None, None)] for m, t, dx, dy in parts}
figs = _plots(rows, pooled)
loaded = sorted(m for m in sys.modules if m.startswith(("matplotlib.pyplot", "matplotlib.backends.backend_",
                                                        "matplotlib.figure", "matplotlib.axes", "matplotlib.text")))
print(json.dumps([{m: b.hex() for m, b in figs.items()}, loaded]))
"""


def test_threshold_plots_are_the_same_bytes_in_another_process_without_pyplot():
    rng = np.random.default_rng(3)
    dx = rng.normal(0, 5, 60)
    dy = dx + rng.normal(0, 4, 60)
    rows = [{"metric": "bleu", "target": "map", "beta": 0.4, "accuracy": 0.8, "n_pairs": 60},
            {"metric": "bleu", "target": "ndcg", "beta": "inf", "accuracy": 1.0, "n_pairs": 60},
            {"metric": "chrf", "target": "map", "beta": None, "units": "mixed", "accuracy": 0.7, "n_pairs": 60}]
    parts = [["bleu", "map", list(dx), list(dy)], ["bleu", "ndcg", list(dx), list(dx)], ["chrf", "map", list(dx), list(dy)]]
    out = []
    for _ in range(2):
        p = subprocess.run([sys.executable, "-c", CHILD, json.dumps([rows, parts])], capture_output=True, text=True,
                           check=True)
        out.append(json.loads(p.stdout))
    (figs, loaded), (again, _) = out
    assert figs == again and sorted(figs) == ["bleu", "chrf"] and loaded == []
    img = decoded(bytes.fromhex(figs["bleu"]))
    assert img.shape == (400, 640, 3)
    blue = (np.abs(img.astype(int) - [0x1f, 0x77, 0xb4]).sum(axis=2) < 60)  # the map series (C0): dots, curve
    assert blue[32:352, 64:620].sum() > 200
