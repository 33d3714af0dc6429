"""A small PNG canvas for line plots drawn in milliseconds (``pool``'s thresholds_*.png): anti-aliased polylines,
discs, rectangles and text on a numpy RGB array, written as an 8-bit PNG with zlib.

Text is matplotlib's own DejaVu Sans rendered by matplotlib's FreeType binding (``matplotlib.ft2font``, imported
on first use: no pyplot, no renderer, no font cache), each character rendered once per size and placed by its
linear advance (no kerning). The font file is the one matplotlib ships, so the same input gives the same bytes on
every machine with the same matplotlib and numpy. Coordinates are pixels, x to the right and y down, from the
top-left corner; sizes of text are points at the canvas's ``dpi``.
"""

from __future__ import annotations

import math
import os
import struct
import zlib
from typing import Sequence

import numpy as np

from .. import lazylibs

RGB = tuple[float, float, float]
BLACK: RGB = (0.0, 0.0, 0.0)
WHITE: RGB = (1.0, 1.0, 1.0)
STEP = 0.5  # pixels between the points a line is drawn through
_FONT: list = []  # the FT2Font, opened once per process
_GLYPHS: dict[tuple[float, str], tuple[np.ndarray, float, float, float]] = {}


def rgb(colour: str | RGB) -> RGB:
    """A colour as an (r, g, b) triple in [0, 1]: "#rrggbb" or a triple already."""
    if isinstance(colour, str):
        return tuple(int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5))  # type: ignore[return-value]
    return colour


def _font():
    if not _FONT:
        ft = lazylibs.ft2font()
        _FONT.append(ft.FT2Font(os.path.join(lazylibs.matplotlib_data_path(), "fonts", "ttf", "DejaVuSans.ttf")))
        flags = getattr(ft, "LoadFlags", None)
        _FONT.append(flags.FORCE_AUTOHINT if flags is not None else ft.LOAD_FORCE_AUTOHINT)
    return _FONT[0], _FONT[1]


def _glyph(ch: str, px: float) -> tuple[np.ndarray, float, float, float]:
    """(coverage bitmap, its left and top from the pen on the baseline, advance), rendered once per size; a
    character the font lacks is drawn as "?"."""
    key = (px, ch)
    if key not in _GLYPHS:
        font, flags = _font()
        if ch != "?" and font.get_char_index(ord(ch)) == 0:  # not in the font (or a control character)
            _GLYPHS[key] = _glyph("?", px)
            return _GLYPHS[key]
        font.set_size(px, 72.0)  # px pixels per em
        font.set_text(ch, 0.0, flags=flags)
        font.draw_glyphs_to_bitmap(antialiased=True)
        img = np.asarray(font.get_image())
        g = font.load_char(ord(ch), flags)
        cols = np.flatnonzero(img.any(axis=0))
        if len(cols):  # the ink's columns, from the glyph's left edge; the bitmap's last row lies on the baseline
            down = int(round(font.get_descent() / 64)) - (img.shape[0] - 1)
            bmp = img[:, cols[0]:cols[-1] + 1] / 255.0
            _GLYPHS[key] = (bmp, g.bbox[0] / 64, float(down), g.linearHoriAdvance / 65536)
        else:
            _GLYPHS[key] = (np.zeros((0, 0)), 0.0, 0.0, g.linearHoriAdvance / 65536)
    return _GLYPHS[key]


class Canvas:
    """``width`` x ``height`` pixels, white; ``dpi`` converts points (text sizes, line widths) to pixels."""

    def __init__(self, width: int, height: int, dpi: float = 100.0):
        self.width, self.height, self.dpi = int(width), int(height), float(dpi)
        self.img = np.ones((self.height, self.width, 3), np.float32)

    def px(self, points: float) -> float:
        return points * self.dpi / 72.0

    # ------------------------------------------------------------------ painting
    def paint(self, top: int, left: int, cover: np.ndarray, colour: str | RGB, alpha: float = 1.0) -> None:
        """Blend ``colour`` into the canvas with the coverage array ``cover`` (0-1) whose corner is (left, top)."""
        h, w = cover.shape
        y0, x0, y1, x1 = max(top, 0), max(left, 0), min(top + h, self.height), min(left + w, self.width)
        if y0 >= y1 or x0 >= x1:
            return
        a = cover[y0 - top:y1 - top, x0 - left:x1 - left, None] * alpha
        region = self.img[y0:y1, x0:x1]
        region += a * (np.asarray(rgb(colour), np.float32) - region)

    def rect(self, x0: float, y0: float, x1: float, y1: float, colour: str | RGB, alpha: float = 1.0) -> None:
        """Fill the pixels whose centres lie in [x0, x1) x [y0, y1)."""
        c0, r0, c1, r1 = (int(math.floor(v + 0.5)) for v in (x0, y0, x1, y1))
        if c1 > c0 and r1 > r0:
            self.paint(r0, c0, np.ones((r1 - r0, c1 - c0)), colour, alpha)

    def polyline(self, xy: np.ndarray, colour: str | RGB, width: float, clip: Sequence[float] | None = None,
                 alpha: float = 1.0) -> None:
        """An anti-aliased line ``width`` pixels wide through the points ``xy`` (n, 2), round ends and joins,
        drawn only inside ``clip`` (x0, y0, x1, y1): the pixels within ``width / 2`` of points every
        :data:`STEP` pixels along it (each pixel covered once, by its nearest point)."""
        xy = np.asarray(xy, float)
        if len(xy) < 2:
            return
        hw = width / 2
        box = clip if clip is not None else (0, 0, self.width, self.height)
        left, top = max(int(math.floor(box[0])), 0), max(int(math.floor(box[1])), 0)
        right, bottom = min(int(math.ceil(box[2])), self.width), min(int(math.ceil(box[3])), self.height)
        if right <= left or bottom <= top:
            return
        along = np.r_[0.0, np.cumsum(np.hypot(*np.diff(xy, axis=0).T))]
        s = np.linspace(0.0, along[-1], max(2, int(math.ceil(along[-1] / STEP)) + 1))
        px, py = np.interp(s, along, xy[:, 0]), np.interp(s, along, xy[:, 1])
        r = int(math.ceil(hw + 1))
        off = np.arange(-r, r + 1)
        cols = (np.floor(px)[:, None, None] + off[None, None, :]).astype(int)
        rows = (np.floor(py)[:, None, None] + off[None, :, None]).astype(int)
        cover = np.clip(hw + 0.5 - np.hypot(cols + 0.5 - px[:, None, None], rows + 0.5 - py[:, None, None]), 0, 1)
        cols, rows = np.broadcast_to(cols, cover.shape), np.broadcast_to(rows, cover.shape)
        keep = (cover > 0) & (cols >= left) & (cols < right) & (rows >= top) & (rows < bottom)
        pixel, where = np.unique(rows[keep] * self.width + cols[keep], return_inverse=True)
        most = np.zeros(len(pixel))
        np.maximum.at(most, where, cover[keep])
        flat = self.img.reshape(-1, 3)
        flat[pixel] += (most * alpha)[:, None] * (np.asarray(rgb(colour), np.float32) - flat[pixel])

    def hline(self, y: float, x0: float, x1: float, colour: str | RGB, dotted: bool = False) -> None:
        """A one-pixel horizontal line on the pixel row around ``y`` (dotted: every third pixel)."""
        c0, c1 = int(math.floor(x0 + 0.5)), int(math.floor(x1 + 0.5))
        if c1 > c0:
            cover = np.ones((1, c1 - c0))
            if dotted:
                cover[0, (np.arange(c0, c1) % 3) != 0] = 0.0
            self.paint(int(math.floor(y)), c0, cover, colour)

    def disc(self, cx: float, cy: float, radius: float, colour: str | RGB, alpha: float = 1.0) -> None:
        """A filled anti-aliased disc."""
        c0, r0 = int(math.floor(cx - radius - 1)), int(math.floor(cy - radius - 1))
        c1, r1 = int(math.ceil(cx + radius + 1)), int(math.ceil(cy + radius + 1))
        d = np.hypot(np.arange(c0, c1) + 0.5 - cx, np.arange(r0, r1)[:, None] + 0.5 - cy)
        self.paint(r0, c0, np.clip(radius + 0.5 - d, 0.0, 1.0), colour, alpha)

    # ------------------------------------------------------------------ text
    def text_extent(self, s: str, size: float) -> tuple[float, float, float]:
        """(width, ascent, descent) of ``s`` at ``size`` points, in pixels (ascent and descent: the font's)."""
        px = self.px(size)
        return sum(_glyph(ch, px)[3] for ch in s), 0.928 * px, 0.236 * px  # DejaVu Sans: 1901 / 2048, 483 / 2048

    def text(self, x: float, y: float, s: str, size: float, colour: str | RGB = BLACK, ha: str = "left",
             va: str = "baseline", vertical: bool = False) -> None:
        """Write ``s`` at (x, y): ``ha`` left | center | right of its advance, ``va`` baseline | top | center |
        bottom of its line (ascent to descent); ``vertical``: turned 90° anticlockwise (read bottom to top), ``ha``
        then placing it along y (left: starting at y) and ``va`` across x (baseline: on the column x)."""
        px = self.px(size)
        width, asc, desc = self.text_extent(s, size)
        pad = 2
        h, w = int(math.ceil(asc + desc)) + 2 * pad, int(math.ceil(width)) + 2 * pad
        base = pad + int(round(asc))
        cover = np.zeros((h, w))
        pen = float(pad)
        for ch in s:
            bmp, dx, dy, adv = _glyph(ch, px)
            if bmp.size:
                r, c = base + int(round(dy)), int(round(pen + dx))
                r0, c0 = max(r, 0), max(c, 0)
                r1, c1 = min(r + bmp.shape[0], h), min(c + bmp.shape[1], w)
                sub = cover[r0:r1, c0:c1]
                np.maximum(sub, bmp[r0 - r:r1 - r, c0 - c:c1 - c], out=sub)
            pen += adv
        across = {"baseline": base, "top": pad, "center": pad + (asc + desc) / 2, "bottom": pad + asc + desc}[va]
        along = {"left": pad, "center": pad + width / 2, "right": pad + width}[ha]
        if vertical:  # turned: the line's start at the bottom, its top to the left
            self.paint(int(round(y - (w - along))), int(round(x - across)), np.rot90(cover), colour)
        else:
            self.paint(int(round(y - across)), int(round(x - along)), cover, colour)

    # ------------------------------------------------------------------ output
    def png(self) -> bytes:
        """The canvas as an 8-bit RGB PNG (no text chunks: the same pixels give the same bytes)."""
        pixels = np.clip(np.rint(self.img * 255.0), 0, 255).astype(np.uint8)
        raw = np.zeros((self.height, 1 + 3 * self.width), np.uint8)  # each row: filter type 0, then its bytes
        raw[:, 1:] = pixels.reshape(self.height, -1)

        def chunk(kind: bytes, data: bytes) -> bytes:
            return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

        header = struct.pack(">IIBBBBB", self.width, self.height, 8, 2, 0, 0, 0)
        return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw.tobytes(), 1))
                + chunk(b"IEND", b""))
