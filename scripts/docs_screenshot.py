"""The picture of a report in README.md and the docs: the demo's report.html in headless Chromium.

    python scripts/docs_screenshot.py [--demo-out /tmp/shot-demo] [--png docs/images/report.png]

Runs `clir-eval demo` into --demo-out (unless it already holds report.html) and screenshots the top
of its report.html. Needs Chromium (Debian: apt-get install chromium; or CLIR_EVAL_CHROMIUM=PATH).
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


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--demo-out", type=Path, default=Path(tempfile.gettempdir()) / "clir-eval-shot-demo")
    ap.add_argument("--png", type=Path, default=ROOT / "docs" / "images" / "report.png")
    ap.add_argument("--size", default="1200,900", help="window WIDTH,HEIGHT in pixels")
    args = ap.parse_args()
    chromium = os.environ.get("CLIR_EVAL_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        sys.exit("error: headless Chromium not found (Debian: apt-get install chromium; or set CLIR_EVAL_CHROMIUM)")
    report = args.demo_out / "report.html"
    if not report.exists():
        subprocess.run([sys.executable, "-m", "clir_eval", "demo", "--out", str(args.demo_out), "--quiet"],
                       check=True, cwd=ROOT)
    args.png.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                        f"--user-data-dir={profile}", f"--screenshot={args.png.absolute()}", f"--window-size={args.size}",
                        report.absolute().as_uri()], check=True, capture_output=True, timeout=120)
    print(f"{args.png}: {args.png.stat().st_size} bytes, from {report}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
