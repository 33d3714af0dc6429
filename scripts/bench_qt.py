#!/usr/bin/env python
"""Benchmark query translation against document translation in ``clir-eval run``: the same generated collection
(D documents, ~150 tokens, Zipfian; scripts/bench_pipeline.py's data), S systems, Q queries, run both ways in the
same session:

* document translation (the default): each system's translated collection is indexed and searched, plus the
  reference side: S + 1 indexes;
* query translation (``translate: queries``): system k's query translations (each query word lost with system k's
  probability, as its documents lose words in the first run) search the one reference collection, indexed once.

Both without the item level and with 100 permutation draws (correlations are not what is compared). Printed for
each: wall time and CPU of the waited-for process tree, the seconds the retrieval stage spent (the
reference side's task and the systems' tasks, summed), and the number of indexes built; then query translation's
retrieval seconds against one system's document translation (the reference side's task plus the mean system
task: what a run with one system would spend), the ratio the claim "QT costs about one system's DT" is about.

    python scripts/bench_qt.py --docs 20000 --systems 8
    python scripts/bench_qt.py --docs 2000 --systems 4 --queries 50          # quick
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import benchlib
import numpy as np
import yaml
from bench_pipeline import kept_or_generated, run_cli, workspace


def arguments():
    ap = benchlib.parser(__doc__, jobs=2, full_doc=True)
    ap.add_argument("--docs", type=int, default=20_000)
    ap.add_argument("--systems", type=int, default=8)
    ap.add_argument("--queries", type=int, default=150)
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--workdir", type=Path, help="Keep data and output here (default: a temp dir, removed).")
    return ap


def qt_config(dt_config: Path, n_systems: int, seed: int) -> Path:
    """The query-translation config beside ``dt_config``: system k drops each query word with probability
    0.03 + 0.57 k / (S - 1) (the first run's loss rates, without the rarity factor)."""
    root = dt_config.parent
    (root / "qt").mkdir(exist_ok=True)
    rows = [line.split("\t", 1) for line in (root / "queries.tsv").read_text(encoding="utf-8").splitlines()]
    for k in range(n_systems):
        rng = np.random.default_rng([seed, k, 2])
        a = 0.03 + (0.6 - 0.03) * k / max(n_systems - 1, 1)
        with open(root / "qt" / f"sys{k:02d}.tsv", "w", encoding="utf-8") as fh:
            for qid, text in rows:
                kept = [w for w in text.split() if rng.random() >= a]
                fh.write(f"{qid}\t{' '.join(kept)}\n")
    cfg = yaml.safe_load(dt_config.read_text(encoding="utf-8"))
    fast(dt_config, cfg)
    cfg.update(name=cfg["name"] + "-qt", translate="queries",
               systems={"pattern": "qt/sys{k}.tsv", "name": "sys{k}", "queries": "{path}"},
               collection={"reference": "english.jsonl"})
    cfg["mt"].pop("refs")
    path = root / "bench-qt.yaml"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False), encoding="utf-8")
    return path


def fast(path: Path, cfg: dict) -> None:
    """Both runs without the item level and with few resampling draws (the same in both; what is compared is
    retrieval): ``cfg`` updated and written back to ``path``."""
    cfg.update(item_level=False, correlation={"bootstrap": 0, "permutation": 100})
    path.write_text(yaml.safe_dump(cfg, sort_keys=False), encoding="utf-8")


def retrieval_seconds(results: dict) -> tuple[float, float]:
    """(the reference side's retrieval task, the systems' retrieval tasks summed), in seconds."""
    t = results["timing"]
    return t.get("english_retrieval", 0.0), t.get("cpu_retrieve", 0.0)


def main() -> None:
    args = arguments().parse_args()
    with workspace(args.workdir, "bench-qt-") as work:
        measure(args, work)


def measure(args, work: Path) -> None:
    print(f"setting: docs={args.docs} systems={args.systems} queries={args.queries} jobs={args.jobs} "
          f"seed={args.seed}; cpus {os.cpu_count()}; load avg {benchlib.load()} (shared machine: one run each)")
    t0 = time.perf_counter()
    dt = kept_or_generated(work / "data", n_systems=args.systems, n_docs=args.docs, n_queries=args.queries,
                           mt_lines=args.queries, vocab=50_000, seed=args.seed, depth=1000, jobs=args.jobs)
    qt = qt_config(dt, args.systems, args.seed)
    print(f"data: {time.perf_counter() - t0:.1f} s ({dt.parent})")
    got = {}
    for label, config in (("document translation", dt), ("query translation", qt)):
        out = work / f"out-{config.stem}"
        shutil.rmtree(out, ignore_errors=True)
        r = run_cli(config, out, args.jobs)
        ref, systems = retrieval_seconds(r["results"])
        n_index = len(list((out / "cache" / "index").glob("*.manifest.json")))
        got[label] = (r, ref, systems)
        print(f"{label}: wall {r['wall']:.1f} s, CPU {r['cpu']:.1f} s; retrieval: reference side {ref:.2f} s + "
              f"systems {systems:.2f} s = {ref + systems:.2f} s; indexes built: {n_index}")
    _, dref, dsys = got["document translation"]
    _, qref, qsys = got["query translation"]
    one = dref + dsys / args.systems
    print(f"one system's document translation (reference side + mean system task): {one:.2f} s; query "
          f"translation with {args.systems} systems: {qref + qsys:.2f} s = {benchlib.ratio(qref + qsys, one)}; "
          f"document translation with {args.systems} systems: {dref + dsys:.2f} s = "
          f"{benchlib.ratio(dref + dsys, one)}")
    dw, qw = got["document translation"][0], got["query translation"][0]
    print(f"whole run, query / document translation: wall {benchlib.ratio(qw['wall'], dw['wall'])}, CPU "
          f"{benchlib.ratio(qw['cpu'], dw['cpu'])} (query translation also scores {args.queries} queries "
          "instead of the MT test set)")


if __name__ == "__main__":
    main()
