"""Figures: the PNG files (clir_eval.io.figures, matplotlib) are byte-identical in another process, and report.html's
inline SVG figures are drawn without any plotting library (matplotlib is not even imported)."""

from __future__ import annotations

import json
import subprocess
import sys

BUCKETS = {"buckets": [{"label": "1-10"}, {"label": "11-100"}, {"label": "101+"}],
           "systems": {"a": [{"macro_f": 50.0}, {"macro_f": 40.0}, {"macro_f": None}],
                       "b": [{"macro_f": 55.5}, {"macro_f": 30.0}, {"macro_f": 20.0}]}}
CHILD = ("import json, sys; from clir_eval.mt.frequency import plot_buckets; "
         "sys.stdout.buffer.write(plot_buckets(json.loads(sys.argv[1])))")


def test_a_png_figure_is_byte_identical_in_another_process():
    from clir_eval.mt.frequency import plot_buckets

    png = plot_buckets(BUCKETS)
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and b"Software" not in png and b"matplotlib" not in png
    other = subprocess.run([sys.executable, "-c", CHILD, json.dumps(BUCKETS)], capture_output=True, check=True).stdout
    assert other == png == plot_buckets(BUCKETS)


def test_report_html_draws_its_figures_without_matplotlib():
    """Scatter panels, τ heatmap and frequency buckets are in the page, and no plotting library was loaded."""
    from test_report_svg import results

    from clir_eval.mt.frequency import frequency_buckets

    res = results(6)
    hyps = [("a", ["the cat sat on the mat", "a dog"]), ("b", ["the cat sat", "the dog barked"])]
    refs = [["the cat sat on the mat", "the dog barked"]]
    res["analyses"] = {"frequency_buckets": {**frequency_buckets(hyps, refs, [2, 4]).to_dict(), "beta": 1.0}}
    code = ("import json, sys; from clir_eval.report.html import html_report; "
            "page = html_report(json.loads(sys.stdin.read())); "
            "print(json.dumps([page.count('<svg xmlns'), page.count('class=\"buckets\"'), "
            "sorted(m for m in sys.modules if m.split('.')[0] in ('matplotlib', 'PIL'))]))")
    p = subprocess.run([sys.executable, "-c", code], input=json.dumps(res), capture_output=True, text=True, check=True)
    svgs, buckets, loaded = json.loads(p.stdout)
    assert svgs == 2 + 1 + 1 and buckets == 1  # two scatter panels, the heatmap, the bucket lines
    assert loaded == []
