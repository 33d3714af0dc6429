"""Report rendering cost: report.html with its SVG plots vs the same figures drawn with matplotlib
(Agg, tight_layout, PNG at 100 dpi: how the report drew them before), in the same run.

    python scripts/bench_report.py                      # the demo's results (generated on the fly)
    python scripts/bench_report.py --results DIR/results.json --repeat 3

Prints the seconds of each and the ratio matplotlib / SVG. Imports are timed separately.
"""

from __future__ import annotations

import io
import json
import sys
import tempfile
import time
from pathlib import Path

import benchlib


def matplotlib_figures(results: dict) -> int:
    """The scatter figures (a panel per MT metric, a figure per measure, labels, fit line) and the
    τ heatmap as PNGs with matplotlib, as the report used to draw them. Returns the PNG bytes."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    from clir_eval.report.tables import tau_grid

    systems = results["systems"]
    total = 0
    rows, cols, cells = tau_grid(results, "mt-ir")
    for y in rows:
        ncol = min(len(cols), 4)
        nrow = -(-len(cols) // ncol)
        fig, axes = plt.subplots(nrow, ncol, figsize=(3.6 * ncol, 3.2 * nrow), squeeze=False)
        for i, x in enumerate(cols):
            ax = axes[i // ncol][i % ncol]
            pts = [(e["mt"][x], e["ir"][y], s) for s, e in systems.items()]
            xs, ys = np.array([p[0] for p in pts]), np.array([p[1] for p in pts])
            ax.scatter(xs, ys, s=22)
            a, b = np.polyfit(xs, ys, 1)
            ax.plot(xs, a * xs + b, "--")
            for px, py, s in pts:
                ax.annotate(s, (px, py), fontsize=7.5, xytext=(4, 3), textcoords="offset points")
            ax.set_title(x)
        fig.tight_layout()
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=100)
        plt.close(fig)
        total += len(buf.getvalue())
    m = np.array([[cells[(r, x)]["tau"] for x in cols] for r in rows], float)
    fig, ax = plt.subplots(figsize=(1.1 * len(cols) + 2.5, 0.55 * len(rows) + 1.6))
    ax.imshow(m, aspect="auto")
    for i in range(len(rows)):
        for j in range(len(cols)):
            ax.text(j, i, f"{m[i, j]:.3f}", ha="center", va="center", fontsize=8)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    plt.close(fig)
    return total + len(buf.getvalue())


def best(fn, repeat: int) -> float:
    return benchlib.best(fn, repeat)[0]


def arguments():
    ap = benchlib.parser(__doc__, repeat=3)
    ap.add_argument("--results", type=Path, help="a results.json (default: run the demo into a temporary folder)")
    return ap


def main() -> int:
    args = arguments().parse_args()
    if args.results:
        results = json.loads(args.results.read_text(encoding="utf-8"))
    else:
        import subprocess

        tmp = Path(tempfile.mkdtemp()) / "demo"
        subprocess.run(benchlib.clir_eval("demo", "--out", tmp, "--quiet", "--jobs", "1"), check=True)
        results = json.loads((tmp / "results.json").read_text(encoding="utf-8"))
    import clir_eval.correlation.driver  # noqa: F401  (imported by any run before its report)

    t = time.perf_counter()
    from clir_eval.report.html import html_report

    t_imp_svg = time.perf_counter() - t
    t = time.perf_counter()
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot  # noqa: F401

    t_imp_mpl = time.perf_counter() - t
    svg = best(lambda: html_report(results), args.repeat)
    mpl = best(lambda: matplotlib_figures(results), args.repeat)
    n = len(results["systems"])
    print(f"{n} systems; best of {args.repeat}")
    print(f"report.html with SVG plots (whole page): {svg * 1000:8.1f} ms   import {t_imp_svg * 1000:.0f} ms")
    print(f"matplotlib figures alone (PNG, Agg):    {mpl * 1000:8.1f} ms   import {t_imp_mpl * 1000:.0f} ms")
    print(f"ratio matplotlib / SVG: {mpl / svg:.0f}x (imports included: {(mpl + t_imp_mpl) / (svg + t_imp_svg):.0f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
