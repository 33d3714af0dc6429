#!/usr/bin/env python
"""Benchmark index shards in ``clir-eval run``: three systems' collections
(the fewest a correlation accepts) and the English side, D documents each (generated, seeded, ~150 tokens, Zipfian), 150 queries,
run twice in the same session:

* ``--shard-docs D`` (each collection one index build in one worker), and
* ``--shard-docs S`` (each collection in D/S spans: pass-1 tasks, then the merge in the
  retrieval task),

printing for each wall time, CPU of the waited-for process tree, peak RSS of the process tree
and of the largest single process (what one worker needs: the memory bound sharding is for),
the index's shard count, and whether results.json (except timing) and every run file are
byte-identical.

    python scripts/bench_shards.py --docs 1000000 --shard-docs 250000
    python scripts/bench_shards.py --docs 20000 --shard-docs 5000          # quick
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import benchlib
from bench_pipeline import kept_or_generated, run_cli, stable, workspace


def arguments():
    ap = benchlib.parser(__doc__, jobs=2, full_doc=True)
    ap.add_argument("--docs", type=int, default=1_000_000)
    ap.add_argument("--shard-docs", type=int, default=250_000)
    ap.add_argument("--queries", type=int, default=150)
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--workdir", type=Path, help="Keep data and output here (default: a temp dir, removed).")
    return ap


def main() -> None:
    args = arguments().parse_args()
    with workspace(args.workdir, "bench-shards-") as work:
        measure(args, work)


def measure(args, work: Path) -> None:
    print(f"setting: docs={args.docs} shard_docs={args.shard_docs} queries={args.queries} jobs={args.jobs} "
          f"seed={args.seed}; cpus {os.cpu_count()}; load avg {os.getloadavg()[0]:.1f} (shared machine: one run)")
    t0 = time.perf_counter()
    config = kept_or_generated(work / "data", n_systems=3, n_docs=args.docs, n_queries=args.queries,
                               mt_lines=500, vocab=50_000, seed=args.seed, depth=1000, jobs=args.jobs)
    print(f"data: {time.perf_counter() - t0:.1f} s ({config})")
    gib = 2**30
    res = {}
    for label, shard in (("one index per collection", args.docs), (f"spans of {args.shard_docs:,}", args.shard_docs)):
        out = work / f"out-{shard}"
        shutil.rmtree(out, ignore_errors=True)
        r = run_cli(config, out, args.jobs, "local", ("--shard-docs", str(shard)))
        shards = [len(json.loads((d / "index.json").read_text())["shards"])
                  for d in (out / "cache" / "index").iterdir() if d.is_dir()]  # fmt: skip
        runs = {p.name: p.read_bytes() for p in (out / "cache" / "runs").glob("*.run")}
        t = r["results"]["timing"]
        print(f"{label}: wall {r['wall']:.1f} s, CPU {r['cpu']:.1f} s, peak RSS: tree {r['peak_tree'] / gib:.2f} GiB "
              f"({r['peak_procs']} processes), largest process {r['peak_one'] / gib:.2f} GiB; shards per index "
              f"{shards}; stage wall (s): systems {t.get('systems', 0):.1f}, shards {t.get('shards', 0):.1f}")
        res[shard] = (r, runs)
    (a, ra), (b, rb) = res[args.docs], res[args.shard_docs]
    print(f"sharded / one: wall {b['wall'] / a['wall']:.2f}x, CPU {b['cpu'] / a['cpu']:.2f}x, largest process "
          f"{b['peak_one'] / a['peak_one']:.2f}x; results identical except timing: "
          f"{stable(a['results']) == stable(b['results'])}; run files identical: {ra == rb and len(ra) == 4}")


if __name__ == "__main__":
    main()
