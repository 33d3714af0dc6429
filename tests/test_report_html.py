"""report.html in headless Chromium: it renders (screenshot not blank, plots painted), the DOM
holds the τ table with the values of results.json, the plots are inline SVG that the browser
lays out (no two dot labels intersect as Chromium draws them, at 40 systems too), and the page
makes no network request (static scan + Chromium's net log).

Skipped when Chromium is absent (Debian: ``apt-get install chromium``; or set
CLIR_EVAL_CHROMIUM to a Chromium/Chrome binary).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest
from test_pipeline import make_experiment

from clir_eval.config.load import load_config
from clir_eval.pipeline.run import run_experiment

CHROMIUM = (os.environ.get("CLIR_EVAL_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
            or shutil.which("google-chrome"))
pytestmark = pytest.mark.skipif(
    not CHROMIUM, reason="headless Chromium not found (Debian: apt-get install chromium; or set CLIR_EVAL_CHROMIUM)"
)

WIDTH, HEIGHT = 1280, 5000  # the scatter plots come after the verdicts, caveats and item level
FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--hide-scrollbars", "--host-resolver-rules=MAP * ~NOTFOUND",  # nothing can reach the network
]
SCATTER_RGB = (0x2B, 0x6C, 0xB0)  # the dot colour of report/svg.py
# per inline SVG: its laid-out size and, for scatter panels, the rendered boxes of the dot labels
PROBE = """<script>addEventListener('load', () => {
  const out = [...document.querySelectorAll('svg')].filter(s => s.classList.contains('plot') || s.classList.contains('heat'))
    .map(s => { const r = s.getBoundingClientRect();
      return [s.getAttribute('class'), r.width, r.height,
              [...s.querySelectorAll('text.lbl')].map(t => { const b = t.getBoundingClientRect();
                                                             return [b.left, b.top, b.right, b.bottom]; })]; });
  document.body.setAttribute('data-probe', JSON.stringify(out)); });</script>"""


def chromium(url: str, profile: Path, *extra: str) -> subprocess.CompletedProcess:
    cmd = [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", *extra, url]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=180)


def page_requests(netlog: Path) -> list[str]:
    """URLs the page itself asked for: URL requests with an initiator origin (Chromium's own
    background requests carry ``initiator: "not an origin"``; a file:// page's is ``null``)."""
    log = json.loads(netlog.read_text())
    start = log["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"]
    return [e["params"]["url"] for e in log["events"]
            if e["type"] == start and e.get("params", {}).get("initiator") not in (None, "not an origin")]


class _Doc(HTMLParser):
    """Tables (rows of cell texts), image sources, resource-bearing attributes, non-text markup."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tables: list[list[list[str]]] = []
        self.imgs: list[str] = []
        self.refs: list[tuple[str, str, str]] = []  # (tag, attribute, value)
        self.code: list[str] = []  # <style>/<script> bodies and style attributes
        self._in: list[str] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        self._in.append(tag)
        a = dict(attrs)
        if tag == "table":
            self.tables.append([])
        elif tag == "tr" and self.tables:
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self._cell = []
        if tag == "img":
            self.imgs.append(a.get("src") or "")
        for k, v in attrs:
            if k in ("src", "href", "srcset", "action", "poster", "data", "background", "formaction", "xlink:href"):
                self.refs.append((tag, k, v or ""))
            elif k == "style":
                self.code.append(v or "")

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None and self.tables and self.tables[-1]:
            self.tables[-1][-1].append("".join(self._cell).strip())
            self._cell = None
        while self._in and self._in.pop() != tag:
            pass

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)
        if self._in and self._in[-1] in ("style", "script"):
            self.code.append(data)


def parse(html: str) -> _Doc:
    d = _Doc()
    d.feed(html)
    d.close()
    return d


def _tau_text(v: float) -> str:
    s = f"{v:.3f}"
    return s.replace("0.", ".", 1) if s.startswith(("0.", "-0.")) else s


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("exp")
    cfg = make_experiment(root)
    out = root / "out"
    results = run_experiment(load_config(cfg), out, jobs=1, quiet=True)
    return {"dir": out, "html": out / "report.html", "results": results, "tmp": tmp_path_factory.mktemp("chromium")}


@pytest.fixture(scope="module")
def screenshot(report) -> dict:
    tmp = report["tmp"]
    png, netlog = tmp / "report.png", tmp / "net.json"
    p = chromium(report["html"].resolve().as_uri(), tmp / "profile-shot", f"--screenshot={png}",
                 f"--window-size={WIDTH},{HEIGHT}", f"--log-net-log={netlog}")
    assert png.exists(), f"chromium wrote no screenshot (exit {p.returncode}): {p.stderr[-2000:]}"
    return {"png": png, "netlog": netlog}


def test_screenshot_is_not_blank_and_shows_the_plots(screenshot):
    import matplotlib.image as mpimg

    png = screenshot["png"]
    assert png.stat().st_size > 30_000
    img = mpimg.imread(png)
    assert img.shape[:2] == (HEIGHT, WIDTH)
    rgb = np.round(img[..., :3] * 255).astype(np.int32)
    colours = np.unique(rgb.reshape(-1, 3) @ np.array([65536, 256, 1]))
    assert len(colours) > 1500, f"{len(colours)} colours: blank or text-only page (text alone gives ~800)"
    ink = (rgb < 235).any(axis=2)
    assert ink.mean() > 0.02, f"only {ink.mean():.1%} of the page is not white"
    rows = ink.any(axis=1)
    assert rows[: HEIGHT // 4].mean() > 0.2 and rows[HEIGHT // 4:].mean() > 0.2, "content only in one part of the page"
    dots = (np.abs(rgb - np.array(SCATTER_RGB)) <= 12).all(axis=2)
    assert dots.sum() > 200, "no scatter-plot dots painted: the inline SVG plots did not render"


def test_dom_has_the_tau_table_and_inline_plots_laid_out(report):
    probe = report["tmp"] / "report-probe.html"
    probe.write_text(report["html"].read_text(encoding="utf-8").replace("</body>", PROBE + "</body>"), encoding="utf-8")
    p = chromium(probe.as_uri(), report["tmp"] / "profile-dom", "--dump-dom", "--virtual-time-budget=10000")
    assert p.returncode == 0, p.stderr[-2000:]
    dom = parse(p.stdout)

    corr = [c for c in report["results"]["correlations"] if c.get("kind", "mt-ir") == "mt-ir"]
    assert corr
    metrics = sorted({c["x"] for c in corr})
    table = next((t for t in dom.tables if t and set(metrics) <= set(t[0])), None)
    assert table is not None, f"no table with the MT metrics {metrics} as columns"
    header, body = table[0], {r[0]: r for r in table[1:] if r}
    for c in corr:
        cell = body[c["y"]][header.index(c["x"])]
        want = _tau_text(c["tau"])
        assert cell.lstrip("×").startswith(want), f"{c['y']}/{c['x']}: {cell!r}, results.json τ={c['tau']}"
        assert cell.startswith("×") != bool(c["significant"]), f"{c['y']}/{c['x']}: significance mark in {cell!r}"

    svgs = probe_svgs(p.stdout)
    assert [c for c, *_ in svgs].count("heat") == 1 and [c for c, *_ in svgs].count("plot") >= 2
    assert all(w > 100 and h > 100 for _, w, h, _ in svgs), f"plots Chromium did not lay out: {svgs}"
    assert no_overlaps(svgs) and sum(len(b) for *_, b in svgs) > 0


def probe_svgs(dom: str) -> list:
    m = re.search(r'data-probe="([^"]*)"', dom)
    assert m, "load-event probe did not run"
    return json.loads(m.group(1).replace("&quot;", '"'))


def no_overlaps(svgs) -> bool:
    """No two label boxes of one scatter panel intersect, as Chromium laid them out."""
    for _, _, _, boxes in svgs:
        for i, a in enumerate(boxes):
            for b in boxes[i + 1:]:
                if a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]:
                    return False
    return True


def test_labels_do_not_overlap_in_chromium_at_40_systems(report):
    from test_report_svg import results

    from clir_eval.report.html import html_report

    page = report["tmp"] / "forty.html"
    page.write_text(html_report(results(40)).replace("</body>", PROBE + "</body>"), encoding="utf-8")
    p = chromium(page.as_uri(), report["tmp"] / "profile-40", "--dump-dom", "--virtual-time-budget=10000")
    svgs = probe_svgs(p.stdout)
    assert sum(len(b) for *_, b in svgs) >= 40  # two panels with many labels (dots on top of each other share one)
    assert no_overlaps(svgs)
    # the check sees an overlap when there is one
    assert not no_overlaps([("plot", 1, 1, [[0, 0, 10, 10], [5, 5, 15, 15]])])


def test_no_external_references_in_the_markup(report):
    html = report["html"].read_text(encoding="utf-8")
    doc = parse(html)
    for tag, attr, value in doc.refs:
        assert value.startswith(("data:", "#")), f"<{tag} {attr}={value[:80]!r}> loads a resource"
    code = "\n".join(doc.code)
    assert not re.search(r"url\(|@import|https?:", code, re.I), "CSS/JS refers to an external resource"
    assert "<link" not in html.lower() and "<iframe" not in html.lower() and "<script" not in html.lower()


def test_chromium_makes_no_page_request(screenshot, report):
    assert page_requests(screenshot["netlog"]) == []
    # the detector finds a page request when there is one
    tmp = report["tmp"]
    bad = tmp / "external.html"
    bad.write_text("<!doctype html><html><body><img src='https://example.invalid/x.png'>x</body></html>")
    netlog = tmp / "net-bad.json"
    chromium(bad.as_uri(), tmp / "profile-bad", "--dump-dom", f"--log-net-log={netlog}")
    assert page_requests(netlog) == ["https://example.invalid/x.png"]


# the key's numbered system list: per item, the box of its text and of its "N." marker (an outside
# marker ends at the item's left edge; its width is measured with the same text in the same font)
KEY_PROBE = """<script>addEventListener('load', () => {
  const out = [...document.querySelectorAll('.key ol li')].map(li => {
    const r = li.getBoundingClientRect(), range = document.createRange(); range.selectNodeContents(li);
    const t = [...range.getClientRects()].map(b => [b.left, b.top, b.right, b.bottom]);
    const s = document.createElement('span'); s.textContent = li.getAttribute('value') + '. ';
    s.style.font = getComputedStyle(li).font; s.style.whiteSpace = 'pre'; document.body.appendChild(s);
    const w = s.getBoundingClientRect().width; s.remove();
    return [li.textContent, [r.left - w, r.top, r.left, r.top + t[0][3] - t[0][1]], t]; });
  document.body.setAttribute('data-probe', JSON.stringify(out)); });</script>"""


def test_key_numbers_do_not_run_into_the_other_column(report):
    """The key lists the numbered systems in two columns: no item's number overlaps another item's name."""
    from test_report_svg import results

    from clir_eval.report.html import html_report

    names = ["copier", "deleter", "fluent-oov", "literal", "medium", "paraphraser", "smooth-oov", "strong",
             "truncating", "very-weak", "weak", "word-by-word", "paraphraser2"]  # the demo's, and one more: numbered
    page = report["tmp"] / "key.html"
    html = html_report(results(len(names), names=names))
    assert "(n.s.) = not significant (p ≥ α in the two-sided test of no association" in html  # the test is named
    page.write_text(html.replace("</body>", KEY_PROBE + "</body>"), encoding="utf-8")
    p = chromium(page.as_uri(), report["tmp"] / "profile-key", "--dump-dom", "--virtual-time-budget=10000",
                 "--window-size=1400,3000")
    items = probe_svgs(p.stdout)
    assert len(items) >= len(names), items  # one key per figure, each naming every system
    assert len({round(m[2]) for _, m, _ in items}) >= 2, "the key's list is not in two columns"
    for name, marker, _ in items:
        for other, _, texts in items:
            if other != name:
                assert no_overlaps([("key", 0, 0, [marker, box]) for box in texts]), f"{name}'s number overlaps {other}"


TITLE_PROBE = """<script>addEventListener('load', () => {
  const out = [...document.querySelectorAll('svg.plot')].map(s => { const r = s.getBoundingClientRect(),
    t = s.querySelector("text.title"), b = t.getBoundingClientRect();
    return [t.textContent, [r.left, r.right], [b.left, b.right]]; });
  document.body.setAttribute('data-probe', JSON.stringify(out)); });</script>"""


@pytest.mark.parametrize("n", [12, 40])  # the two panel widths
def test_scatter_titles_stay_inside_their_panels(report, n):
    """The longest titles (an uninformative target, a long metric name) are drawn whole inside the panel."""
    from test_report_svg import results

    from clir_eval.report.html import html_report

    res = results(n)
    for c in res["correlations"]:
        c.update(significant=False, informative=False)
    res["correlations"].append({**res["correlations"][0], "x": "bleu-sbp:tokenize=intl"})
    for e in res["systems"].values():
        e["mt"]["bleu-sbp:tokenize=intl"] = e["mt"]["bleu"]
    page = report["tmp"] / f"titles-{n}.html"
    page.write_text(html_report(res).replace("</body>", TITLE_PROBE + "</body>"), encoding="utf-8")
    p = chromium(page.as_uri(), report["tmp"] / f"profile-titles-{n}", "--dump-dom", "--virtual-time-budget=10000")
    titles = probe_svgs(p.stdout)
    assert len(titles) == 3 and all("target UNINFORMATIVE" in t for t, *_ in titles), titles
    for text, (left, right), (tl, tr) in titles:
        assert left <= tl and tr <= right, f"title {text!r} spans {tl:.0f}..{tr:.0f}, its panel {left:.0f}..{right:.0f}"
