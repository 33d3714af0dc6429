"""Render report.html for simulated results at several system counts, screenshot each in headless
Chromium and check in the browser that no two dot labels of a scatter panel overlap.

    python scripts/report_screenshots.py --out /tmp/shots --systems 10,20,40

Writes OUT/report-N.html and OUT/report-N.png (first screen of the scatter plots) and prints, per N,
the labels drawn, the labels left out and the overlapping pairs Chromium measured (must be 0).
Needs Chromium (Debian: apt-get install chromium; or CLIR_EVAL_CHROMIUM=/path/to/chrome).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from clir_eval.report.html import html_report  # noqa: E402

MT = ("bleu", "chrf1", "macrof1", "microf1")
IR = ("map", "ndcg", "P_10", "rbo:p=0.98")

# In the browser: per scatter SVG, the rendered boxes of its labels; pairs that intersect.
PROBE = """<script>addEventListener('load', () => {
  const out = [];
  document.querySelectorAll('svg.plot').forEach((svg, k) => {
    const b = [...svg.querySelectorAll('text.lbl')].map(t => t.getBoundingClientRect());
    let bad = 0;
    for (let i = 0; i < b.length; i++) for (let j = i + 1; j < b.length; j++)
      if (b[i].left < b[j].right && b[j].left < b[i].right && b[i].top < b[j].bottom && b[j].top < b[i].bottom) bad++;
    out.push([b.length, bad]);
  });
  document.body.setAttribute('data-labels', JSON.stringify(out));
});</script>"""


def simulated_results(n: int, seed: int = 0, long_names: bool = True) -> dict:
    """Results of n systems with a shared latent quality, two tight clusters and long names."""
    from scipy.stats import kendalltau

    rng = np.random.default_rng(seed)
    q = rng.normal(0, 1, n)
    q[: n // 4] = q[0] + rng.normal(0, 0.02, n // 4)  # a tight cluster
    q[n // 4: n // 2] = q[n // 4] + rng.normal(0, 0.05, n // 2 - n // 4)
    names = [f"nc{25000 * (1 + i % 4)}.bpe{8000 * (1 + i // 4 % 4)}.r{i}" if long_names else f"sys{i + 1}"
             for i in range(n)]
    systems = {}
    for i, s in enumerate(names):
        systems[s] = {"mt": {m: float(30 + 6 * q[i] + rng.normal(0, 1.5)) for m in MT},
                      "ir": {y: float(0.6 + 0.05 * q[i] + rng.normal(0, 0.015)) for y in IR}}
    corr = []
    for y in IR:
        for x in MT:
            t, p = kendalltau([systems[s]["mt"][x] for s in names], [systems[s]["ir"][y] for s in names])
            corr.append({"kind": "mt-ir", "x": x, "y": y, "tau": float(t), "p_value": float(p), "n": n,
                         "significant": bool(p < 0.05), "alpha": 0.05, "method": "kendall", "variant": "b"})
    return {"name": f"simulated, {n} systems", "systems": systems, "correlations": corr, "signature": {}}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--systems", default="10,20,40")
    ap.add_argument("--short-names", action="store_true")
    args = ap.parse_args()
    chromium = (os.environ.get("CLIR_EVAL_CHROMIUM") or shutil.which("chromium") or shutil.which("google-chrome"))
    if not chromium:
        print("error: Chromium not found (apt-get install chromium, or set CLIR_EVAL_CHROMIUM)", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"]
    bad_total = 0
    for n in (int(v) for v in args.systems.split(",")):
        page = html_report(simulated_results(n, long_names=not args.short_names))
        html_path = args.out / f"report-{n}.html"
        html_path.write_text(page, encoding="utf-8")
        probe = args.out / f"probe-{n}.html"
        probe.write_text(page.replace("</body>", PROBE + "</body>"), encoding="utf-8")
        p = subprocess.run([chromium, *flags, f"--user-data-dir={args.out / 'profile'}", "--dump-dom",
                            "--virtual-time-budget=5000", probe.as_uri()], capture_output=True, text=True, timeout=120)
        m = re.search(r'data-labels="([^"]*)"', p.stdout)
        panels = json.loads(m.group(1).replace("&quot;", '"')) if m else None
        # the first screen of the scatter plots
        scroll = args.out / f"shot-{n}.html"
        scroll.write_text(page.replace("<h2 id='scatter'>", "<h2 id='scatter' style='margin-top:0'>")
                          .replace("<body>", "<body><style>body>*:not(.fig):not(#scatter){display:none}</style>"),
                          encoding="utf-8")
        png = args.out / f"report-{n}.png"
        subprocess.run([chromium, *flags, f"--user-data-dir={args.out / 'profile'}", f"--screenshot={png}",
                        "--window-size=1280,1400", scroll.as_uri()], capture_output=True, text=True, timeout=120)
        drawn = sum(a for a, _ in panels) if panels else 0
        bad = sum(b for _, b in panels) if panels else -1
        bad_total += bad if bad > 0 else (1 if bad < 0 else 0)
        left_out = page.count(" left out where there was no free place")
        print(f"{n} systems: {len(panels or [])} panels, {drawn} labels drawn, overlapping label pairs in Chromium: "
              f"{bad if bad >= 0 else 'probe failed'}; figures with labels left out: {left_out}; screenshot {png}")
    return 1 if bad_total else 0


if __name__ == "__main__":
    sys.exit(main())
