"""Report figures: the cost of drawing report.html's plots with each plotting option, in the same run.

    python scripts/bench_report.py                                   # the demo's results (generated on the fly)
    python scripts/bench_report.py --before /tmp/old-checkout --repeat 5
    python scripts/bench_report.py --results DIR/results.json --repeat 3

Options measured, each in two fresh processes (CPU seconds: the machine may be shared):

- ``this``: this checkout's report.html (inline SVG written as strings, no plotting library);
- ``before``: another checkout's report.html (``--before DIR``, e.g. the matplotlib SVG of an older checkout);
- ``png``: the same figures drawn with matplotlib as PNG at 100 dpi (base64 in the page), the third option.

Printed per option: import time of the report module (matplotlib's included where it is used), CPU time to render
the page (best of REPEAT), the page's bytes and its figures' bytes, and whether the two processes wrote the same
bytes (the Reproducible standard). The ratios are against ``before`` when given.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import benchlib

CHILD = r'''
import hashlib, json, re, sys, time
results = json.loads(open(sys.argv[1], encoding="utf-8").read())
repeat, mode = int(sys.argv[2]), sys.argv[3]
import clir_eval.correlation.driver  # imported by any run before its report
t = time.process_time()
from clir_eval.report.html import html_report
if mode == "png":
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot
imp = time.process_time() - t
best = None
for _ in range(repeat):
    t = time.process_time()
    if mode == "png":
        sys.path.insert(0, sys.argv[4])
        from bench_report import png_figures
        page = html_report(results, plots=False)
        figs = png_figures(results)
        page = page + "".join(figs)
    else:
        page = html_report(results)
        figs = re.findall(r"<svg[^>]*class=.(?:plot|heat|buckets).*?</svg>", page, re.S)
    dt = time.process_time() - t
    best = dt if best is None else min(best, dt)
print(json.dumps({"import": imp, "render": best, "page": len(page.encode()), "figures": sum(len(f.encode()) for f in figs),
                  "n": len(figs), "sha": hashlib.sha256(page.encode()).hexdigest()}))
'''


def png_figures(results: dict) -> list[str]:
    """The scatter panels (one figure per measure, a panel per metric, labels, fit line) and the τ heatmap as
    matplotlib PNGs at 100 dpi, as base64 ``<img>`` elements."""
    import base64

    import numpy as np

    from clir_eval.io.figures import pyplot, save
    from clir_eval.report.tables import tau_grid

    plt = pyplot()
    systems = results["systems"]
    out = []
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
        out.append(save(fig, dpi=100))
    m = np.array([[cells[(r, x)]["tau"] for x in cols] for r in rows], float)
    fig, ax = plt.subplots(figsize=(1.1 * len(cols) + 2.5, 0.55 * len(rows) + 1.6))
    ax.imshow(m, aspect="auto")
    for i in range(len(rows)):
        for j in range(len(cols)):
            ax.text(j, i, f"{m[i, j]:.3f}", ha="center", va="center", fontsize=8)
    fig.tight_layout()
    out.append(save(fig, dpi=100))
    return [f"<img src='data:image/png;base64,{base64.b64encode(p).decode()}'>" for p in out]


def arguments():
    ap = benchlib.parser(__doc__, repeat=3, before=True)
    ap.add_argument("--results", type=Path, help="a results.json (default: run the demo into a temporary folder)")
    return ap


def measure(checkout: Path, results: Path, repeat: int, mode: str) -> dict:
    outs = []
    for _ in range(2):  # two fresh processes: are the bytes the same?
        p = subprocess.run([sys.executable, "-c", CHILD, str(results), str(repeat), mode, str(Path(__file__).parent)],
                           env=benchlib.env(checkout), cwd=checkout, capture_output=True, text=True)
        if p.returncode:
            sys.exit(f"{checkout} ({mode}) failed: {p.stderr[-2000:]}")
        outs.append(json.loads(p.stdout.strip().splitlines()[-1]))
    best = min(outs, key=lambda o: o["render"])
    return {**best, "import": min(o["import"] for o in outs), "same": outs[0]["sha"] == outs[1]["sha"]}


def main() -> int:
    args = arguments().parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        results = args.results
        if results is None:
            subprocess.run(benchlib.clir_eval("demo", "--out", Path(tmp) / "demo", "--quiet", "--jobs", "1"),
                           check=True, env=benchlib.env())
            results = Path(tmp) / "demo" / "results.json"
        n = len(json.loads(results.read_text(encoding="utf-8"))["systems"])
        rows = {"this": measure(benchlib.ROOT, results, args.repeat, "this")}
        if args.before:
            rows["before"] = measure(args.before.resolve(), results, args.repeat, "before")
        rows["png"] = measure(benchlib.ROOT, results, args.repeat, "png")
    ref = rows.get("before")
    print(f"{n} systems; CPU s, best of {args.repeat} renders, two fresh processes each; load {benchlib.load()}")
    print(f"{'option':<8} {'import s':>9} {'render s':>9} {'page KiB':>9} {'figures':>8} {'fig. KiB':>9} "
          f"{'same bytes':>10}" + ("   render / before, figure bytes / before" if ref else ""))
    for name, r in rows.items():
        line = (f"{name:<8} {r['import']:9.3f} {r['render']:9.3f} {r['page'] / 1024:9.1f} {r['n']:8d} "
                f"{r['figures'] / 1024:9.1f} {'yes' if r['same'] else 'NO':>10}")
        if ref:
            line += f"   {benchlib.ratio(r['render'], ref['render'])}, {benchlib.ratio(r['figures'], ref['figures'])}"
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
