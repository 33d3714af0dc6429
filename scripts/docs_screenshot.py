"""The pictures of a report in README.md and the docs: the demo's report.html in headless Chromium.

    python scripts/docs_screenshot.py [--demo-out DIR] [--images docs/images]

Runs `clir-eval demo` into a fresh temporary directory (or into --demo-out, unless it already holds
report.html) and writes IMAGES/report.png (the top of report.html: the summary, then the verdicts),
IMAGES/report-heatmap.png and IMAGES/report-scatter.png (those sections alone), and IMAGES/report.json: the
first screen of the demo's report.md the pictures were made from. tests/test_demo_cli.py compares that with
a fresh demo's, so a change to the demo's answers fails until this script is run again. It also rewrites
the demo report's summary that docs/getting-started.md quotes (tests/test_docs_commands.py checks it).
Needs Chromium (Debian: apt-get install chromium; or CLIR_EVAL_CHROMIUM=PATH).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# shows one section of the report alone: its <h2 id=...> and what follows up to the next <h2>
SHOW = """<script>(() => {const kids = [...document.body.children]; const i = kids.findIndex(e => e.id === '%s');
let j = kids.findIndex((e, k) => k > i && e.tagName === 'H2'); if (j < 0) j = kids.length;
kids.forEach((e, k) => { if (k < i || k >= j) e.style.display = 'none'; }); kids[i].style.marginTop = '0';})()</script>"""


def first_screen(report_md: str) -> str:
    """What report.png shows, as text: report.md up to its first section after the verdicts."""
    head, sep, rest = report_md.partition("\n## Verdicts")
    return head + sep + rest.split("\n## ", 1)[0] if sep else head


def sidecar(report_md: str) -> dict:
    text = first_screen(report_md)
    return {"made_by": "python scripts/docs_screenshot.py", "from": "clir-eval demo (default seed)",
            "first_screen_sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(), "first_screen": text}


GUIDE = ROOT / "docs" / "getting-started.md"
QUOTED = re.compile(r"(one short line each:\n\n```text\n)(.*?)(```)", re.S)


def quote_summary(report_md: str) -> None:
    """docs/getting-started.md's quote of the report's summary (its bullets, wrapped), from this report.md."""
    block = next(p for p in report_md.split("\n\n") if p.startswith("- **System level**")).replace("**", "")
    text = "\n".join(w for line in block.splitlines() for w in textwrap.wrap(line, 104, subsequent_indent="  "))
    page = GUIDE.read_text(encoding="utf-8")
    new, n = QUOTED.subn(lambda m: m.group(1) + text + "\n" + m.group(3), page, count=1)
    if n != 1:
        sys.exit(f"error: {GUIDE}: the quoted summary block was not found")
    GUIDE.write_text(new, encoding="utf-8")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--demo-out", type=Path, default=None, help="default: a fresh temporary directory")
    ap.add_argument("--images", type=Path, default=ROOT / "docs" / "images")
    args = ap.parse_args()
    chromium = os.environ.get("CLIR_EVAL_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        sys.exit("error: headless Chromium not found (Debian: apt-get install chromium; or set CLIR_EVAL_CHROMIUM)")
    if args.demo_out is None:
        with tempfile.TemporaryDirectory() as tmp:
            return shoot(chromium, Path(tmp) / "demo-out", args.images)
    return shoot(chromium, args.demo_out, args.images)


def shoot(chromium: str, demo_out: Path, images: Path) -> int:
    report = demo_out / "report.html"
    if not report.exists():
        subprocess.run([sys.executable, "-m", "clir_eval", "demo", "--out", str(demo_out), "--quiet"],
                       check=True, cwd=ROOT)
    images.mkdir(parents=True, exist_ok=True)
    page = report.read_text(encoding="utf-8")
    for name, section, size in (("report.png", None, "1200,900"), ("report-heatmap.png", "heatmap", "1200,360"),
                                ("report-scatter.png", "scatter", "1200,760")):
        view = report.with_name(f"view-{section or 'top'}.html")
        view.write_text(page.replace("</body>", SHOW % section + "</body>") if section else page, encoding="utf-8")
        png = images / name
        with tempfile.TemporaryDirectory() as profile:
            subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                            "--virtual-time-budget=3000", f"--user-data-dir={profile}", f"--screenshot={png.absolute()}",
                            f"--window-size={size}", view.absolute().as_uri()], check=True, capture_output=True, timeout=120)
        print(f"{png}: {png.stat().st_size} bytes, from {report}")
    side = images / "report.json"
    side.write_text(json.dumps(sidecar(report.with_name("report.md").read_text(encoding="utf-8")), indent=1,
                               ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{side}: the first screen the pictures show")
    quote_summary(report.with_name("report.md").read_text(encoding="utf-8"))
    print(f"{GUIDE}: the quoted summary")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
