"""The pictures of a report in README.md and the docs: the demo's report.html in headless Chromium.

    python scripts/docs_screenshot.py [--demo-out /tmp/shot-demo] [--images docs/images]

Runs `clir-eval demo` into --demo-out (unless it already holds report.html) and writes
IMAGES/report.png (the top of report.html: the summary line, then the verdicts), IMAGES/report-heatmap.png and
IMAGES/report-scatter.png (those sections alone). Needs Chromium (Debian: apt-get install
chromium; or CLIR_EVAL_CHROMIUM=PATH).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# shows one section of the report alone: its <h2 id=...> and what follows up to the next <h2>
SHOW = """<script>(() => {const kids = [...document.body.children]; const i = kids.findIndex(e => e.id === '%s');
let j = kids.findIndex((e, k) => k > i && e.tagName === 'H2'); if (j < 0) j = kids.length;
kids.forEach((e, k) => { if (k < i || k >= j) e.style.display = 'none'; }); kids[i].style.marginTop = '0';})()</script>"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--demo-out", type=Path, default=Path(tempfile.gettempdir()) / "clir-eval-shot-demo")
    ap.add_argument("--images", type=Path, default=ROOT / "docs" / "images")
    args = ap.parse_args()
    chromium = os.environ.get("CLIR_EVAL_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        sys.exit("error: headless Chromium not found (Debian: apt-get install chromium; or set CLIR_EVAL_CHROMIUM)")
    report = args.demo_out / "report.html"
    if not report.exists():
        subprocess.run([sys.executable, "-m", "clir_eval", "demo", "--out", str(args.demo_out), "--quiet"],
                       check=True, cwd=ROOT)
    args.images.mkdir(parents=True, exist_ok=True)
    page = report.read_text(encoding="utf-8")
    for name, section, size in (("report.png", None, "1200,900"), ("report-heatmap.png", "heatmap", "1200,360"),
                                ("report-scatter.png", "scatter", "1200,760")):
        view = report.with_name(f"view-{section or 'top'}.html")
        view.write_text(page.replace("</body>", SHOW % section + "</body>") if section else page, encoding="utf-8")
        png = args.images / name
        with tempfile.TemporaryDirectory() as profile:
            subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                            "--virtual-time-budget=3000", f"--user-data-dir={profile}", f"--screenshot={png.absolute()}",
                            f"--window-size={size}", view.absolute().as_uri()], check=True, capture_output=True, timeout=120)
        print(f"{png}: {png.stat().st_size} bytes, from {report}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
