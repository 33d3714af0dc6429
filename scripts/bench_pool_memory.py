#!/usr/bin/env python
"""Peak memory (RSS) of ``clir-eval pool --bootstrap K`` against the estimate pool refuses by
(:func:`clir_eval.pooling.core.pool_memory`, bound 4 GiB unless CLIR_EVAL_MAX_MEMORY_BYTES raises it).

The runs are built first (not measured): configs whose MT and IR scores come from generated tables
(``external:``), of SIZES systems (default 30,30,60: the case that peaked at 4.9 GB before the
estimate), 4 MT metrics, 2 IR targets. Then ``clir-eval pool RUN... --bootstrap K --format json`` runs
once per K as a fresh process under /usr/bin/time (peak RSS of the command alone), with ``--before
DIR`` also from another checkout. Printed per K: the estimate, the peak, peak / estimate, and the largest
K accepted under the bound for these runs.

    python scripts/bench_pool_memory.py [--sizes 30,30,60] [--bootstrap 1000,2000,4000]
    python scripts/bench_pool_memory.py --bootstrap 10000 --before ../main
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import benchlib

sys.path.insert(0, str(benchlib.ROOT / "tests"))


def arguments():
    ap = benchlib.parser(__doc__, before=True)
    ap.add_argument("--sizes", default="30,30,60", help="systems per run, comma-separated (default 30,30,60)")
    ap.add_argument("--bootstrap", default="1000,2000,4000", help="--bootstrap values, comma-separated")
    return ap


def main() -> None:
    args = arguments().parse_args()
    from test_pool import make_run  # noqa: E402  (the tests' run builder)

    from clir_eval.limits import memory_bytes
    from clir_eval.pooling.core import pool_memory

    sizes = [int(s) for s in args.sizes.split(",")]
    ks = [int(k) for k in args.bootstrap.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        runs = [make_run(t, f"r{i:02d}", 100 + i, n=n, rseed=13 + i) for i, n in enumerate(sizes)]
        bound = memory_bytes()
        top = max(k for k in range(100, 100_001, 100) if pool_memory(sizes, k) <= bound)
        print(f"runs of {', '.join(map(str, sizes))} systems, 4 metrics, 2 targets; bound {bound / 2**30:.1f} GiB: "
              f"the largest --bootstrap accepted is {top}; load {benchlib.load()}")
        print(f"{'checkout':>9} {'K':>7} {'estimate MiB':>13} {'peak MiB':>9} {'peak/est':>8} {'wall s':>7}")
        for k in ks:
            for who, path in benchlib.checkouts(args.before).items():
                m = benchlib.command(benchlib.clir_eval("pool", *runs, "--bootstrap", k, "--format", "json"),
                                     env=benchlib.env(path), cwd=path, check=False)
                est = pool_memory(sizes, k) / 2**20
                what = f"{m.rss:9.0f} {m.rss / est:8.2f}" if m.returncode == 0 else \
                    f" refused: {(m.stderr.strip().splitlines() or [''])[-1][:90]}"
                print(f"{who:>9} {k:>7} {est:13.0f} {what} {m.wall:7.1f}")


if __name__ == "__main__":
    main()
