"""Benchmark of `clir-eval design`: 16 systems x 150 queries (generated), 6 sizes of systems and 6 of
queries, 4 metrics, one IR measure; with --documents N (default 300) also the item-level τ over N
judged-relevant documents at 6 sizes of documents and the 6 sizes of systems, and the separation of every
pair of the 4 metrics within documents (PERM-BOTH, --doc-pair-reps studies x --doc-pair-permutations draws per
size and pair); prints the wall and CPU time of the simulation (systems/queries part, documents' τ, document pairs).

    python scripts/bench_design.py [--reps 100] [--permutations 100] [--jobs 2] [--documents 300]
                                   [--doc-pair-reps 40] [--doc-pair-permutations 100]
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as the CLI runs (clir_eval/cli/__init__.py): one BLAS thread per worker

import numpy as np  # noqa: E402

from clir_eval.correlation.design import (DesignData, DocumentData, default_sizes, design,  # noqa: E402
                                          design_document_pairs, design_documents)
from clir_eval.correlation.settings import DesignSettings  # noqa: E402
from clir_eval.settings import default  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--permutations", type=int, default=100)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--documents", type=int, default=300, help="judged-relevant documents (0: none)")
    ap.add_argument("--doc-pair-reps", type=int, default=default(DesignSettings, "doc_pair_reps"))
    ap.add_argument("--doc-pair-permutations", type=int, default=default(DesignSettings, "doc_pair_permutations"))
    a = ap.parse_args()
    rng = np.random.default_rng(1)
    S, Q = 16, 150
    quality = rng.normal(size=S)
    metrics = {m: quality + w * rng.normal(size=S) for m, w in (("chrf1", 0.5), ("bleu", 1.0), ("macrof1", 0.7),
                                                                 ("microf1", 0.8))}
    pq = quality[:, None] * 0.05 + rng.normal(size=(1, Q)) * 0.2 + rng.normal(size=(S, Q)) * 0.3
    data = DesignData(tuple(f"s{i}" for i in range(S)), tuple(f"q{j}" for j in range(Q)), metrics, {"map": pq})
    D = a.documents
    docs = None
    if D:
        diff = rng.normal(size=(1, D))
        x = {m: v[:, None] + diff + rng.normal(size=(S, D)) for m, v in metrics.items()}
        r = np.round(4 / (1 + np.exp(-(0.3 * x["chrf1"] - diff + 1.5 * rng.normal(size=(S, D)))))) / 4
        docs = DocumentData(data.systems, tuple(f"d{j}" for j in range(D)), x, r, Q)
    t0, c0 = time.perf_counter(), time.process_time()
    marks = [(t0, c0)]

    def simulate(map=None) -> list:
        rows = design(data, default_sizes(S, 3), default_sizes(Q, 1), reps=a.reps, permutations=a.permutations, map=map)
        marks.append((time.perf_counter(), time.process_time()))
        if docs is not None:
            rows += design_documents(docs, default_sizes(S, 3), default_sizes(D, 1), reps=a.reps, map=map)
            marks.append((time.perf_counter(), time.process_time()))
            rows += design_document_pairs(docs, default_sizes(S, 3), default_sizes(D, 1), reps=a.doc_pair_reps,
                                          permutations=a.doc_pair_permutations, map=map)
        marks.append((time.perf_counter(), time.process_time()))
        return rows

    if a.jobs > 1:
        from clir_eval.pipeline.executor import get_executor

        with get_executor("local", a.jobs) as ex:
            rows = simulate(ex.map)
    else:
        rows = simulate()
    wall, cpu = marks[-1][0] - t0, marks[-1][1] - c0
    parts = [w1 - w0 for (w0, _), (w1, _) in zip(marks, marks[1:])]
    split = (f"systems/queries {parts[0]:.1f} s, documents' τ {parts[1]:.1f} s, document pairs {parts[2]:.1f} s"
             if D else f"systems/queries {parts[0]:.1f} s")
    print(f"design 16 systems x 150 queries, sizes {default_sizes(S, 3)} x {default_sizes(Q, 1)}"
          + (f", documents {default_sizes(D, 1)}" if D else "") + f", reps {a.reps}, "
          f"permutations {a.permutations}"
          + (f", document pairs: {len(metrics) * (len(metrics) - 1) // 2} pairs, reps {a.doc_pair_reps}, "
             f"k {a.doc_pair_permutations}" if D else "")
          + f", jobs {a.jobs}: {len(rows)} rows, wall {wall:.1f} s ({split}), driver CPU {cpu:.1f} s, "
          f"load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
