"""The report's SVG plots (hand-written markup, report/svg.py): labels never overlap (boxes read back from the
markup), the markup is well-formed and escaped, ids are unique in the page, the colour scales and ticks behave, and
the same input gives the same bytes."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from clir_eval.report.html import html_report, scatter_figures
from clir_eval.report.svg import (
    coincident,
    colour,
    dot_centres,
    heat_colour,
    heat_scale,
    label_boxes,
    overlaps,
    place_labels,
    scatter_svg,
)

SVG_NS = "{http://www.w3.org/2000/svg}"


def results(n: int, seed: int = 0, names=None) -> dict:
    """n systems on a shared latent quality with a tight cluster (a quarter of them nearly equal)."""
    rng = np.random.default_rng(seed)
    q = rng.normal(0, 1, n)
    q[: n // 4] = q[0] + rng.normal(0, 0.02, n // 4)
    names = names or [f"nc{25000 * (1 + i % 4)}.bpe{8000 * (1 + i // 4 % 4)}.r{i}" for i in range(n)]
    systems = {s: {"mt": {m: float(30 + 6 * q[i] + rng.normal(0, 1.5)) for m in ("bleu", "chrf1")},
                   "ir": {"map": float(0.6 + 0.05 * q[i] + rng.normal(0, 0.01))}} for i, s in enumerate(names)}
    corr = [{"kind": "mt-ir", "x": x, "y": "map", "tau": 0.5, "p_value": 0.01, "n": n, "significant": True,
             "alpha": 0.05, "method": "kendall", "variant": "b"} for x in ("bleu", "chrf1")]
    return {"name": "t", "systems": systems, "correlations": corr, "signature": {}}


def dots(svg: str) -> list[tuple[float, float]]:
    return dot_centres(svg)


def tick_labels(svg: str) -> tuple[list[str], list[str]]:
    """The x and y tick labels of a scatter panel, read from the markup."""
    root = ET.fromstring(svg)
    out = []
    for axis in ("xtick", "ytick"):
        out.append([t.text for g in root.iter(SVG_NS + "g") if re.fullmatch(rf"[^\"]*-{axis}_\d+", g.get("id", ""))
                    for t in g.iter(SVG_NS + "text")])
    return out[0], out[1]


@pytest.mark.parametrize("n", [10, 20, 40])
def test_scatter_labels_never_overlap_each_other_or_a_dot(n):
    figs, numbered = scatter_figures(results(n))
    assert numbered  # long names: the dots carry numbers, the key names them
    for _, panels in figs:
        for svg, unlabelled in panels:
            ET.fromstring(svg)  # well-formed
            boxes = label_boxes(svg)
            names = [t for lbl, _ in boxes for t in lbl.split(",")]
            assert len(names) == len(set(names)) == n - unlabelled
            assert unlabelled <= max(1, n // 10), f"{unlabelled} of {n} dots unlabelled"
            w, h = (float(v) for v in re.search(r'width="(\d+)" height="(\d+)"', svg).groups())
            centres = dots(svg)
            assert len(centres) == n
            for i, (_, a) in enumerate(boxes):
                assert 0 <= a[0] and a[2] <= w and 0 <= a[1] and a[3] <= h
                for _, b in boxes[i + 1:]:
                    assert not overlaps(a, b), "two labels overlap"
                for x, y in centres:
                    assert not overlaps(a, (x - 3.5, y - 3.5, x + 3.5, y + 3.5)), "a label covers a dot"


def test_the_overlap_check_finds_an_overlap():
    a, b = (0, 0, 10, 10), (9, 9, 20, 20)
    assert overlaps(a, b) and overlaps(b, a) and not overlaps(a, (10, 0, 20, 10))
    svg = scatter_svg([(1, 1, "aaaa", ""), (2, 2, "b", "")], title="t", xlabel="x", ylabel="y")[0]
    text = re.findall(r'<text class="lbl"[^>]*>[^<]*</text>', svg)
    assert len(text) == 2
    moved = svg.replace(text[1], re.sub(r'x="[-\d.]+" y="[-\d.]+"', re.search(r'x="[-\d.]+" y="[-\d.]+"', text[0])
                                        .group(0), text[1]))
    boxes = [b for _, b in label_boxes(moved)]
    assert overlaps(boxes[0], boxes[1])


def test_a_label_with_no_free_place_is_left_out_not_overlapped():
    area = (0, 0, 40, 20)
    assert place_labels([(10, 10)], ["too long to fit"], area) == [None]
    (x, y, box, lead), = place_labels([(10, 10)], ["ab"], area)
    assert area[0] <= box[0] and box[2] <= area[2] and area[1] <= box[1] and box[3] <= area[3]
    assert not overlaps(box, (6.5, 6.5, 13.5, 13.5))


def test_names_are_shown_when_they_fit_and_escaped():
    names = ["a<b", "c&d", "e'f", 'g"h', "sys5"]
    figs, numbered = scatter_figures(results(5, names=names))
    assert not numbered
    svg = figs[0][1][0][0]
    root = ET.fromstring(svg)
    shown = sorted(t.text for t in root.iter(SVG_NS + "text") if t.get("class") == "lbl")
    hover = [t.text for g in root.iter(SVG_NS + "g") if re.search(r"-dot-\d+$", g.get("id", ""))
             for t in g.findall(SVG_NS + "title")]
    assert {x for s in shown for x in s.split(",")} == set(names)
    assert sorted(h.split(":")[0] for h in hover) == sorted(names)
    page = html_report(results(5, names=names))
    assert "a<b" not in page and "a&lt;b" in page


def test_dots_drawn_on_top_of_each_other_share_a_label():
    assert coincident([(0, 0), (3, 0), (20, 0), (2, 2)]) == [[0, 1, 3], [2]]
    svg, unlabelled = scatter_svg([(1.0, 1.0, "1", ""), (1.0, 1.0, "2", ""), (5.0, 3.0, "3", "")], title="t",
                                  xlabel="x", ylabel="y")
    assert sorted(lbl for lbl, _ in label_boxes(svg)) == ["1,2", "3"] and unlabelled == 0


def test_numbered_key_beside_each_figure_names_every_system():
    r = results(20)
    page = html_report(r)
    assert page.count("<aside class='key'>") == 1
    key = re.search(r"<aside class='key'>.*?</aside>", page).group(0)
    from clir_eval.report.blocks import natural_key

    order = sorted(r["systems"], key=natural_key)
    assert re.findall(r"<li value='(\d+)'>([^<]*)</li>", key) == [(str(i + 1), s) for i, s in enumerate(order)]


def test_heatmap_scale_separates_80_from_93():
    cmap, lo, hi = heat_scale([0.80, 0.93, 0.45, 0.95])
    a, b = (np.array(heat_colour(cmap, lo, hi, v)) for v in (0.80, 0.93))
    assert np.linalg.norm(a - b) > 0.3
    assert heat_scale([-0.5, 0.9])[0] == "RdBu"  # negatives: diverging about 0
    assert colour("RdBu", 0.5) == pytest.approx((0xf7 / 255,) * 3, abs=0.005)  # white at 0 (matplotlib's RdBu)


@pytest.mark.parametrize("spread", [0.0, 0.01])
def test_every_axis_of_a_40_system_report_has_at_least_three_tick_labels(spread):
    """An axis with two tick labels (0 and 1 on an AQWV axis from -0.9 to 1.1) cannot be read; at 40 systems
    every scatter panel labels at least three ticks on each axis."""
    res = results(40)
    for i, e in enumerate(res["systems"].values()):  # AQWV-like: -0.78 to 0.99, an axis from about -0.92 to 1.13
        e["ir"]["map"] = -0.78 + 1.77 * i / 39 + spread * np.sin(i) * (0 < i < 39)
    figs, _ = scatter_figures(res)
    for _, panels in figs:
        for svg, _ in panels:
            xs, ys = tick_labels(svg)
            assert len(xs) >= 3 and len(ys) >= 3, (xs, ys)
            assert all(re.fullmatch(r"-?\d+(\.\d+)?", t) for t in xs + ys), (xs, ys)  # no offset or exponent


def test_ids_are_unique_in_the_page_and_every_reference_resolves():
    """Every figure is inlined into one page: the ids of its dots, ticks, labels and cells are scoped per figure."""
    page = html_report(results(12))
    ids = re.findall(r'\bid="([^"]+)"', page)
    assert len(ids) == len(set(ids))
    assert sum(1 for i in ids if re.search(r"-dot-\d+$", i)) == 2 * 12  # two panels, a dot per system each
    assert sum(1 for i in ids if re.search(r"-cell-\d+-\d+$", i)) == 2  # the heatmap's cells
    refs = set(re.findall(r'url\(#([^)]+)\)', page)) | set(re.findall(r'href="#([^"]+)"', page))
    assert refs <= set(ids) | set(re.findall(r"\bid='([^']+)'", page))


def test_the_same_results_give_the_same_bytes():
    """Reproducible: the page (its plots included) is byte-identical when drawn again, here and in a fresh
    process."""
    import json
    import subprocess
    import sys

    res = results(12)
    page = html_report(res)
    assert html_report(res) == page
    code = ("import json, sys; from clir_eval.report.html import html_report; "
            "sys.stdout.write(html_report(json.loads(sys.stdin.read())))")
    other = subprocess.run([sys.executable, "-c", code], input=json.dumps(res), capture_output=True, text=True,
                           check=True).stdout
    assert other == page
    assert "<dc:date>" not in page and "<?xml" not in page


@pytest.mark.parametrize("big", [1e155, 1.7e308])
def test_extreme_scores_draw_a_well_formed_panel(big):
    """Scores near the ends of the float range (whose squares overflow) still give a panel: every dot placed
    inside it, labelled, the fit line drawn, no NaN or infinite coordinate."""
    svg, unlabelled = scatter_svg([(big, 0.5, "a", ""), (1.0, 0.6, "b", ""), (-big, 0.7, "c", "")], title="t",
                                  xlabel="x", ylabel="y")
    ET.fromstring(svg)
    assert unlabelled == 0 and sorted(lbl for lbl, _ in label_boxes(svg)) == ["a", "b", "c"]
    assert 'class="fit"' in svg and not re.search(r'"[^"]*(nan|inf)[^"]*"', svg)
    w, h = (float(v) for v in re.search(r'width="(\d+)" height="(\d+)"', svg).groups())
    assert all(0 < x < w and 0 < y < h for x, y in dots(svg)) and len(dots(svg)) == 3
