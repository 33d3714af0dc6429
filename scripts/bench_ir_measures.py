#!/usr/bin/env python3
"""Benchmark of clir_eval.ir.measures: score R runs x Q queries x depth D (default 16 x 150 x
1000, target < 2 s for all measures) and print per-measure times, with ratios against the
reference implementations measured in the same run:

- trec_eval measures: pytrec_eval called directly on the raw run dicts;
- RBO ext: PyPI ``rbo`` 0.1.3 ``RankingSimilarity(a, b).rbo_ext(p)`` when ``--rbo-python``
  points at a Python that has it (it needs numpy<2, e.g. /tmp/rbo-ref-venv/bin/python, see
  scripts/make_rbo_reference.py); its values are also compared with ours.

Synthetic data (seeded): a reference run of D documents per query from a 200k-document
collection, pseudo-qrels = its top 100, and each system run a perturbation of it (local
shuffles and replaced documents), like MT systems' runs against the English-side run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

import benchlib
import numpy as np
import pytrec_eval

from clir_eval.io.trec import Run
from clir_eval.ir.evaluate import Evaluator
from clir_eval.ir.measures import parse_measures
from clir_eval.ir.relevance import pseudo_qrels

MEASURES = ["map", "ndcg", "ndcg_cut_10", "P_10", "recall_100", "Rprec", "recip_rank", "gm_map",
            "rbo", "rbo:variant=min", "rbo:variant=res", "aqwv", "mqwv"]
COLLECTION = 200_000

_RBO_CHILD = r"""
import json, sys, time
from rbo import RankingSimilarity
pairs = json.load(open(sys.argv[1]))
t = time.perf_counter()
vals = [RankingSimilarity(a, b).rbo_ext(p=0.98) for a, b in pairs]
print(json.dumps({"seconds": time.perf_counter() - t, "values": vals}))
"""


def make_data(n_runs: int, n_queries: int, depth: int, seed: int):
    rng = np.random.default_rng(seed)
    ref, runs = {}, [{} for _ in range(n_runs)]
    for q in range(n_queries):
        qid = f"q{q:03d}"
        docs = rng.choice(COLLECTION, size=depth + depth // 2, replace=False)
        base = [f"doc{d:06d}" for d in docs[:depth]]
        spare = [f"doc{d:06d}" for d in docs[depth:]]
        ref[qid] = [(d, float(depth - i)) for i, d in enumerate(base)]
        for r in range(n_runs):
            noise = (r + 1) / n_runs
            keys = np.arange(depth) + rng.normal(0, 40 * noise, depth)
            order = np.argsort(keys, kind="stable")
            docs_r = [base[i] for i in order]
            swap = rng.random(depth) < 0.3 * noise
            pool = iter(spare)
            docs_r = [next(pool) if s else d for d, s in zip(docs_r, swap)]
            scores = np.round(np.sort(rng.gamma(2.0, 3.0, depth))[::-1], 2)  # rounded: many ties
            runs[r][qid] = list(zip(docs_r, scores.tolist()))
    return Run(ref, "en"), [Run(r, f"sys{i}") for i, r in enumerate(runs)]


def timed(fn):
    """(wall seconds, fn()) of one call."""
    return benchlib.best(fn, 1)


def arguments():
    ap = benchlib.parser(__doc__)
    ap.add_argument("--runs", type=int, default=16)
    ap.add_argument("--queries", type=int, default=150)
    ap.add_argument("--depth", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--rbo-python", default=None, help="Python with rbo==0.1.3 (e.g. /tmp/rbo-ref-venv/bin/python).")
    return ap


def main() -> int:
    args = arguments().parse_args()

    ref, runs = make_data(args.runs, args.queries, args.depth, args.seed)
    qrels = pseudo_qrels(ref, 100)
    print(f"{args.runs} runs x {args.queries} queries x depth {args.depth}, seed {args.seed}, "
          f"pseudo-qrels top-100, collection {COLLECTION}; cpus={os.cpu_count()} (shared machine: noisy)")

    Evaluator(qrels, MEASURES, reference_run=ref, collection_size=COLLECTION).evaluate(runs[0])  # warm-up
    ev_time, ev = timed(lambda: Evaluator(qrels, MEASURES, reference_run=ref, collection_size=COLLECTION))
    t_all, results = timed(lambda: [ev.evaluate(r) for r in runs])
    print(f"all {len(MEASURES)} measures: {ev_time + t_all:.3f} s (setup {ev_time:.3f} s + {len(runs)} runs {t_all:.3f} s)")

    print(f"{'measure alone':<22} {'seconds':>8}  (each includes the shared per-run preparation)")
    for m in parse_measures(MEASURES):
        e = Evaluator(qrels, [m], reference_run=ref, collection_size=COLLECTION)
        t, _ = timed(lambda: [e.evaluate(r) for r in runs])
        print(f"{m.name:<22} {t:8.3f}")

    trec = [m.name for m in parse_measures(MEASURES) if "|impl:pytrec" in m.signature]
    ours_trec = Evaluator(qrels, trec)
    t_ours, ours_res = timed(lambda: [ours_trec.evaluate(r) for r in runs])
    qd = {q: dict(j) for q, j in qrels.judgements.items()}
    raw = [{q: dict(r.ranking.get(q, [])) for q in qd} for r in runs]
    ref_ev = pytrec_eval.RelevanceEvaluator(qd, set(trec))  # built once, as ours is
    t_ref, _ = timed(lambda: [ref_ev.evaluate(x) for x in raw])
    print(f"trec_eval measures ({len(trec)}): ours {t_ours:.3f} s vs pytrec_eval direct {t_ref:.3f} s "
          f"(ratio {benchlib.ratio(t_ours, t_ref)}; ours re-scores ranks to fix the order)")

    if args.rbo_python:
        pairs, ours = [], []
        for r, res in zip(runs[:2], results[:2]):
            for q in qrels.judgements:
                pairs.append(([d for d, _ in r.ranking[q]], [d for d, _ in ref.ranking[q]]))
                ours.append(res["per_query"][q]["rbo"])
        e = Evaluator(qrels, ["rbo"], reference_run=ref)
        t_rbo, _ = timed(lambda: [e.evaluate(r) for r in runs[:2]])
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as fh:
            json.dump(pairs, fh)
        try:
            proc = subprocess.run([args.rbo_python, "-c", _RBO_CHILD, fh.name], capture_output=True, text=True, check=True)
        finally:
            os.unlink(fh.name)
        child = json.loads(proc.stdout.strip().splitlines()[-1])
        diff = float(np.max(np.abs(np.array(child["values"]) - np.array(ours))))
        print(f"rbo ext, {len(pairs)} ranking pairs: ours {t_rbo:.3f} s (incl. evaluator overhead) vs rbo 0.1.3 "
              f"{child['seconds']:.3f} s (ratio {t_rbo / child['seconds']:.3f}); max |diff| {diff:.1e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
