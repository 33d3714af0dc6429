#!/usr/bin/env python
"""Benchmark ``clir-eval ir-score`` against a plain pytrec_eval script, whole-command CPU.

Both read the same synthetic TREC run (Q queries x D documents, seeded) and qrels from files,
evaluate the same trec_eval measures and print JSON; each runs REPEAT times as a fresh process
under ``/usr/bin/time`` (CPU = user + sys, so start-up, reading and evaluation all count), the
commands alternating, and the medians and their ratio are printed in the same run, with the load
average. Each command runs once first, untimed, with Python allowed to write its bytecode cache
(even where ``PYTHONDONTWRITEBYTECODE`` is set), so that clir_eval's modules start from compiled
bytecode as an installed package's and pytrec_eval's do. ``--before DIR`` also measures another
checkout and checks that its output is the same bytes. The reference script is
``pytrec_eval.parse_run``/``parse_qrel`` + ``RelevanceEvaluator.evaluate`` + ``json.dumps`` of
the per-query values and their means, i.e. what ``ir-score --format json`` prints.

    python scripts/bench_ir_score.py [--queries 150] [--depth 1000] [--repeat 5] [--before DIR]
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
from pathlib import Path

import benchlib
import numpy as np

MEASURES = {"map": "map", "ndcg": "ndcg", "P_10": "P_10", "recip_rank": "recip_rank", "recall_1000": "recall_1000"}

REFERENCE = r"""
import json, sys
import pytrec_eval
with open(sys.argv[1]) as f:
    qrels = pytrec_eval.parse_qrel(f)
with open(sys.argv[2]) as f:
    run = pytrec_eval.parse_run(f)
measures = sys.argv[3].split(",")
per_query = pytrec_eval.RelevanceEvaluator(qrels, set(measures)).evaluate(run)
agg = {m: sum(v[m] for v in per_query.values()) / len(per_query) for m in measures}
print(json.dumps({"aggregate": agg, "per_query": per_query}))
"""


def write_data(work: Path, n_queries: int, depth: int, seed: int) -> tuple[Path, Path]:
    rng = np.random.default_rng(seed)
    run, qrels = work / "run.txt", work / "qrels.txt"
    with open(run, "w") as r, open(qrels, "w") as q:
        for i in range(n_queries):
            qid = str(701 + i)
            docs = rng.choice(2_000_000, size=depth, replace=False)
            scores = np.unique((rng.random(depth) * 30).astype(np.float32))  # distinct as float32, the precision
            while len(scores) < depth:  # trec_eval orders a run by (pytrec_eval and clir-eval then agree)
                scores = np.unique(np.concatenate([scores, (rng.random(depth - len(scores)) * 30).astype(np.float32)]))
            scores = scores[::-1].astype(np.float64)
            r.writelines(f"{qid} Q0 doc{d} {k} {s!r} bm25\n" for k, (d, s) in enumerate(zip(docs, scores.tolist()), 1))
            rel = rng.choice(docs, size=100, replace=False)
            q.writelines(f"{qid} 0 doc{d} {int(rng.integers(1, 3))}\n" for d in rel)
            judged = set(rel.tolist())  # a document judged once per query (pytrec_eval asserts it)
            q.writelines(f"{qid} 0 doc{d} 0\n" for d in rng.choice(2_000_000, size=50, replace=False) if d not in judged)
    return run, qrels


def alternating(cases: dict[str, tuple[list[str], dict]], repeat: int, cwd: Path) -> dict[str, benchlib.Measured]:
    """Each case once untimed (bytecode cached), then ``repeat`` rounds of every case in turn: the medians. The
    commands run in ``cwd`` (``python -m`` puts the working directory first on the path)."""
    for argv, env in cases.values():
        benchlib.command(argv, env={k: v for k, v in env.items() if k != "PYTHONDONTWRITEBYTECODE"}, cwd=cwd)
    rounds: dict[str, list[benchlib.Measured]] = {name: [] for name in cases}
    for _ in range(repeat):
        for name, (argv, env) in cases.items():
            rounds[name].append(benchlib.command(argv, env=env, cwd=cwd))
    return {name: benchlib.Measured(*(statistics.median(getattr(m, f) for m in ms) for f in ("cpu", "wall", "rss")),
                                    stdout=ms[-1].stdout) for name, ms in rounds.items()}


def arguments():
    ap = benchlib.parser(__doc__, repeat=5, before=True)
    ap.add_argument("--queries", type=int, default=150)
    ap.add_argument("--depth", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=7)
    return ap


def main() -> None:
    args = arguments().parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        run, qrels = write_data(Path(tmp), args.queries, args.depth, args.seed)
        ref = [sys.executable, "-c", REFERENCE, str(qrels), str(run), ",".join(MEASURES.values())]
        ours = benchlib.clir_eval("ir-score", "--qrels", qrels, "--run", run, "--measures", ",".join(MEASURES),
                                  "--format", "json")
        cases = {"ref": (ref, benchlib.env(None)), "this": (ours, benchlib.env())}
        if args.before:
            cases["before"] = (ours, benchlib.env(args.before.resolve()))
        load = benchlib.load()
        got = alternating(cases, args.repeat, Path(tmp))
    a, b = json.loads(got["ref"].stdout)["aggregate"], json.loads(got["this"].stdout)["aggregate"]
    same = all(abs(a[MEASURES[m]] - b[m]) < 1e-12 for m in MEASURES)
    print(f"{args.queries} queries x {args.depth} docs, measures {','.join(MEASURES)}; {args.repeat} runs each, "
          f"alternating, medians; load average {load} before, {benchlib.load()} after")
    r = got["ref"]
    print(f"pytrec_eval script   {r.cpu:6.3f} CPU-s  {r.rss:6.0f} MiB")
    for name in ("before", "this"):
        if name in got:
            m = got[name]
            print(f"clir-eval ir-score{' (' + name + ')' if args.before else '':9s} {m.cpu:6.3f} CPU-s  {m.rss:6.0f} MiB"
                  f"   ratio to the script {benchlib.ratio(m.cpu, r.cpu)} CPU, {benchlib.ratio(m.rss, r.rss)} RSS")
    print(f"aggregates equal to the script's: {same}" + (
        f"; output the same bytes as before: {got['before'].stdout == got['this'].stdout}" if args.before else ""))


if __name__ == "__main__":
    main()
