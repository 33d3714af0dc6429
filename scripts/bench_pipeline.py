#!/usr/bin/env python
"""Benchmark ``clir-eval run`` end to end: N systems x D documents x 150
queries, depth 1000, an MT test set per system, on generated data, with the local process
pool and with Ray on the same machine, in one run.

Everything is measured in this run:

* data generation (numpy, seeded; the seed and sizes are printed and written to the config);
* the reference: rank-bm25 (``BM25Okapi`` through the harness's ``rank_bm25`` backend, same
  analyzer) indexing one system's collection and running the queries to depth, next to the
  sparse backend on the same collection in this process, so the ratio is visible;
* one index build of one collection in a fresh process: CPU time and peak RSS above the
  interpreter's (the per-shard cost the 3M-document estimate is made from);
* ``clir-eval run CONFIG --out DIR --jobs N --executor E --quiet`` as a subprocess for each
  executor (``local``, ``ray``: a private local Ray started by the command): wall time, CPU
  time of the waited-for process tree, peak memory of the process tree (sum of RSS of the
  command and all its descendants, sampled from /proc every 50 ms), how the time divides by
  stage (``results.json["timing"]``), the ratio Ray / local, and whether the results are
  identical (except timing);
* a re-run with depth - 1 on the local output (indexes cached: re-search, no rebuild) and a
  fully cached re-run;
* extrapolations, printed as such: to ``--extrapolate-docs`` per collection (when smaller
  data were measured) and to a ``--study-docs`` study, with the cluster size for one hour.

The machine may be shared: read the ratios and CPU times, not single wall seconds.

    python scripts/bench_pipeline.py --docs 200000                # the issue's setting
    python scripts/bench_pipeline.py --docs 20000                 # 1/10, extrapolated to 200k
    python scripts/bench_pipeline.py --systems 4 --docs 2000 --no-reference --executors local   # quick
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from importlib.metadata import version
from pathlib import Path

import benchlib
import numpy as np
import yaml

ROOT = benchlib.ROOT

MEASURES = ["map", "ndcg", "P_10", "recip_rank", "rbo:p=0.98", "aqwv:beta=40,cutoff=10",
            "mqwv:beta=40,max_cutoff=50"]
METRICS = ["bleu", "chrf1", "macrof1", "microf1"]


# --------------------------------------------------------------------------- data
def _zipf_ids(rng: np.random.Generator, cdf: np.ndarray, n: int) -> np.ndarray:
    return np.minimum(np.searchsorted(cdf, rng.random(n)), len(cdf) - 1)


def _degrade(rng: np.random.Generator, ids: np.ndarray, bounds: np.ndarray, p_lose: np.ndarray,
             vocab: int) -> tuple[np.ndarray, np.ndarray]:
    """A system's output token ids and segment bounds: a lost word is deleted (60%) or copied
    in its foreign form (id + vocab, 40%); rarer words are lost more often (``p_lose`` per id)."""
    lost = rng.random(len(ids)) < p_lose[ids]
    copy = rng.random(len(ids)) < 0.4
    kept = ~(lost & ~copy)
    out = np.where(lost & copy, ids + vocab, ids)[kept]
    new_bounds = np.concatenate([[0], np.cumsum(np.add.reduceat(kept.astype(np.int64), bounds[:-1]))])
    return out, new_bounds


def _texts(words: np.ndarray, ids: np.ndarray, bounds: np.ndarray) -> list[str]:
    return [" ".join(words[ids[a:b]]) for a, b in zip(bounds[:-1], bounds[1:])]


def generate(root: Path, *, n_systems: int, n_docs: int, n_queries: int, mt_lines: int, vocab: int,
             seed: int, depth: int, jobs: int) -> Path:
    """Write the collection, queries, MT test set and systems under ``root``; return the config.

    English documents: 50-250 tokens from a Zipf(1.0) vocabulary of ``vocab`` word types.
    System k (0 = best) loses each word with probability
    ``min(0.9, a_k * (0.3 + log(rank+2)/log(vocab)))``, ``a_k`` from 0.03 to 0.6, in both the
    collection and the MT test set (2 independent streams). Queries: 2-5 words of rank >= 200
    from a random English document. Relevance: pseudo-qrels (top 100 of the English side).
    """
    rng = np.random.default_rng(seed)
    p = 1.0 / np.arange(1, vocab + 1)
    cdf = np.cumsum(p / p.sum())
    words = np.array([f"w{i}" for i in range(vocab)] + [f"xq{i}" for i in range(vocab)], dtype=object)
    root.mkdir(parents=True, exist_ok=True)
    (root / "systems").mkdir(exist_ok=True)
    (root / "mt").mkdir(exist_ok=True)

    lens = rng.integers(50, 251, size=n_docs)
    ids = _zipf_ids(rng, cdf, int(lens.sum()))
    bounds = np.concatenate([[0], np.cumsum(lens)])
    doc_ids = [f"d{i:05d}" for i in range(n_docs)]

    def write_docs(path: Path, texts: list[str]) -> None:
        with open(path, "w", encoding="utf-8") as fh:
            fh.writelines(f'{{"id": "{d}", "text": "{t}"}}\n' for d, t in zip(doc_ids, texts))

    english = _texts(words, ids, bounds)
    write_docs(root / "english.jsonl", english)

    s_lens = rng.integers(10, 41, size=mt_lines)
    s_ids = _zipf_ids(rng, cdf, int(s_lens.sum()))
    s_bounds = np.concatenate([[0], np.cumsum(s_lens)])
    (root / "mt" / "ref.txt").write_text("\n".join(_texts(words, s_ids, s_bounds)) + "\n", encoding="utf-8")

    with open(root / "queries.tsv", "w", encoding="utf-8") as fh:
        for q in range(n_queries):
            d = int(rng.integers(n_docs))
            cand = np.unique(ids[bounds[d]:bounds[d + 1]])
            cand = cand[cand >= 200]
            if len(cand) == 0:
                cand = np.unique(ids[bounds[d]:bounds[d + 1]])
            pick = rng.choice(cand, size=min(len(cand), int(rng.integers(2, 6))), replace=False)
            fh.write(f"q{q:03d}\t{' '.join(words[pick])}\n")

    rarity = 0.3 + np.log(np.arange(vocab) + 2) / np.log(vocab)
    for k in range(n_systems):
        a = 0.03 + (0.6 - 0.03) * k / max(n_systems - 1, 1)
        p_lose = np.minimum(0.9, a * rarity)
        out, ob = _degrade(np.random.default_rng([seed, k]), ids, bounds, p_lose, vocab)
        write_docs(root / "systems" / f"sys{k:02d}.jsonl", _texts(words, out, ob))
        out, ob = _degrade(np.random.default_rng([seed, k, 1]), s_ids, s_bounds, p_lose, vocab)
        (root / "mt" / f"sys{k:02d}.txt").write_text("\n".join(_texts(words, out, ob)) + "\n", encoding="utf-8")

    cfg = {
        "name": f"bench-{n_systems}x{n_docs}x{n_queries}",
        "seed": seed,
        "jobs": jobs,
        "notes": [f"scripts/bench_pipeline.py generated data: seed={seed} systems={n_systems} docs={n_docs} "
                  f"queries={n_queries} mt_lines={mt_lines} vocab={vocab}"],
        "systems": {"pattern": "systems/sys{k}.jsonl", "name": "sys{k}", "hyp": "mt/sys{k}.txt", "docs": "{path}"},
        "mt": {"refs": ["mt/ref.txt"], "metrics": METRICS},
        "collection": {"english": "english.jsonl"},
        "queries": {"file": "queries.tsv"},
        "relevance": {"pseudo": {"top_k": 100}},
        "retrieval": {"backend": "sparse", "analyzer": "default", "depth": depth},
        "ir": {"measures": MEASURES},
        "correlation": {"bootstrap": 1000, "permutation": 1000},
    }
    path = root / "bench.yaml"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False), encoding="utf-8")
    return path


# --------------------------------------------------------------------------- measurement
def run_cli(config: Path, out: Path, jobs: int, executor: str = "local", extra: tuple[str, ...] = ()) -> dict:
    """Run ``clir-eval run`` in a subprocess; wall time, CPU, peak tree RSS, results."""
    cmd = [sys.executable, "-m", "clir_eval", "run", str(config), "--out", str(out), "--jobs", str(jobs),
           "--executor", executor, "--quiet", *extra]  # fmt: skip
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}  # a private local Ray
    with benchlib.Tree() as tree:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        with benchlib.TreeRSS(proc.pid) as mon:
            stdout, stderr = proc.communicate()
    wall, cpu = tree.wall, tree.cpu
    if proc.returncode != 0:
        sys.exit(f"clir-eval run --executor {executor} failed ({proc.returncode}):\n{stderr}")
    results = json.loads((out / "results.json").read_text())
    return {"wall": wall, "cpu": cpu, "peak_tree": mon.peak, "peak_procs": mon.peak_procs, "results": results,
            "stderr": stderr, "peak_one": mon.peak_one}


BUILD_ONE = """
import resource, sys, time
from clir_eval.io.readers import read_documents
from clir_eval.retrieval.analysis import get_analyzer
from clir_eval.retrieval.bm25 import build_index

def hwm():  # this process's own peak RSS (ru_maxrss would include what it inherited from its parent)
    return next(int(l.split()[1]) * 1024 for l in open("/proc/self/status") if l.startswith("VmHWM:"))

base, mem0 = resource.getrusage(resource.RUSAGE_SELF), hwm()
t0 = time.perf_counter()
idx = build_index(read_documents(sys.argv[1]), get_analyzer("default"))
r = resource.getrusage(resource.RUSAGE_SELF)
print(time.perf_counter() - t0, r.ru_utime + r.ru_stime - base.ru_utime - base.ru_stime, hwm() - mem0, len(idx))
"""


@contextlib.contextmanager
def workspace(workdir: Path | None, prefix: str):
    """The folder a benchmark works in: ``workdir`` when given (kept, so a later run reuses its data), else a
    temporary folder removed afterwards."""
    if workdir:
        yield workdir
        return
    tmp = tempfile.mkdtemp(prefix=prefix)
    try:
        yield Path(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def kept_or_generated(root: Path, **kw) -> Path:
    """The config of the data under ``root``: an earlier run's (a kept ``--workdir``) when there, else
    :func:`generate` with ``kw``."""
    config = root / "bench.yaml"
    return config if config.exists() else generate(root, **kw)


def build_one(docs_path: Path) -> dict:
    """Read + index one collection (default analyzer, sparse) in a fresh process."""
    out = subprocess.run([sys.executable, "-c", BUILD_ONE, str(docs_path)], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout.split()  # fmt: skip
    return {"wall": float(out[0]), "cpu": float(out[1]), "rss": int(out[2]), "docs": int(out[3])}


def stable(results: dict) -> str:
    return json.dumps({k: v for k, v in results.items() if k != "timing"}, ensure_ascii=False)


def describe(label: str, r: dict) -> None:
    timing = r["results"]["timing"]
    gib = 2**30
    print(f"{label}: wall {r['wall']:.1f} s, CPU {r['cpu']:.1f} s (waited-for process tree), peak RSS of the "
          f"process tree {r['peak_tree'] / gib:.2f} GiB over {r['peak_procs']} processes")
    stages = ("resolve", "systems", "ir", "external", "correlation", "report")
    print("  wall by stage (s): " + ", ".join(f"{k} {timing.get(k, 0):.1f}" for k in stages)
          + f"; outside results.json total (start-up, imports, executor start/stop) {r['wall'] - timing['total']:.1f}")
    cpu = {k: timing.get(f"cpu_{k}", 0.0) for k in ("mt", "retrieve", "ir")}
    cpu["english retrieval"] = timing.get("english_retrieval", 0.0)
    total = sum(cpu.values()) or 1.0
    print("  inside the systems stage, seconds of wall time in the workers (inflated by load): "
          + ", ".join(f"{k} {v:.1f} ({100 * v / total:.0f}%)" for k, v in cpu.items()))


def reference_retrieval(docs_path: Path, queries_path: Path, depth: int) -> dict:
    """Index one collection and run the queries with rank-bm25 and with the sparse backend."""
    from clir_eval.io.readers import read_documents, read_queries
    from clir_eval.retrieval.analysis import get_analyzer
    from clir_eval.retrieval.bm25 import build_index

    docs = read_documents(docs_path)
    queries = read_queries(queries_path)
    an = get_analyzer("default")
    an.tokenize("warm up")  # compiles the analyzer's Unicode word pattern once, outside the timings
    out = {}
    for backend in ("rank_bm25", "sparse"):
        t0 = time.perf_counter()
        idx = build_index(docs, an, backend=backend)
        t1 = time.perf_counter()
        run = idx.search(queries, depth=depth)
        t2 = time.perf_counter()
        out[backend] = {"build": t1 - t0, "search": t2 - t1, "total": t2 - t0, "run": run}
    a, b = out["rank_bm25"]["run"].ranking, out["sparse"]["run"].ranking
    out["same_ranking"] = all([d for d, _ in a[q]] == [d for d, _ in b[q]] for q in a)
    return out


# --------------------------------------------------------------------------- main
def study_estimate(one: dict, args, local: dict) -> None:
    """A study of ``--systems`` systems x ``--study-docs`` documents from the measured per-shard cost."""
    gib = 2**30
    cpu_doc, rss_doc = one["cpu"] / one["docs"], one["rss"] / one["docs"]
    shard = min(args.shard_docs, args.study_docs)
    shards, collections = -(-args.study_docs // shard), args.systems + 1
    shard_cpu, shard_mem = cpu_doc * shard, rss_doc * shard + 0.3 * gib
    build = shard_cpu * shards * collections
    t = local["results"]["timing"]
    search = sum(m.get("time_search", 0) for m in local["metas"]) / max(len(local["metas"]), 1)
    search *= args.study_docs / one["docs"] * collections  # search time grows with the postings scanned
    rest = t.get("cpu_mt", 0) + t.get("cpu_ir", 0)
    total = build + search + rest
    cores = int(-(-total // (3600 * 0.8)))
    per_node = max(1, min(args.node_cores, int(args.node_gib * gib // shard_mem)))
    nodes = -(-cores // per_node)
    print(f"\nESTIMATE (extrapolated from the build measured above, not measured at this size): {args.systems} systems "
          f"x {args.study_docs:,} documents = {collections} collections x {shards} shards of {shard:,} documents. "
          f"Per shard build: {shard_cpu / 60:.1f} CPU-min, {shard_mem / gib:.1f} GiB (measured {cpu_doc * 1e6:.0f} CPU-s "
          f"and {rss_doc * 1e6 / gib:.2f} GiB per million documents, + 0.3 GiB per worker). Index builds "
          f"{build / 3600:.1f} core-h, search {search / 3600:.2f} core-h, MT + IR {rest / 3600:.2f} core-h: total "
          f"{total / 3600:.1f} core-h. To finish in one hour at 80% utilisation: {cores} cores = {nodes} nodes of "
          f"{args.node_cores} cores / {args.node_gib} GiB ({per_node} shard builds at a time per node), inputs and "
          f"--out on a shared filesystem; the longest single task (one shard build, {shard_cpu / 60:.1f} min) must "
          "fit in the hour. Assumes build cost linear in documents and that the two-pass sharded index (item 3) adds "
          "only its small statistics pass; measured on a shared, loaded machine (CPU seconds, not wall).")


def arguments():
    ap = benchlib.parser(__doc__, jobs=2, full_doc=True)
    ap.add_argument("--systems", type=int, default=16)
    ap.add_argument("--docs", type=int, default=200_000)
    ap.add_argument("--queries", type=int, default=150)
    ap.add_argument("--mt-lines", type=int, default=2000)
    ap.add_argument("--vocab", type=int, default=50_000)
    ap.add_argument("--depth", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--executors", default="local,ray", help="comma list of executors to compare")
    ap.add_argument("--extrapolate-docs", type=int, default=200_000, help="print the systems stage scaled to this")
    ap.add_argument("--study-docs", type=int, default=3_000_000, help="documents per collection of the estimate")
    ap.add_argument("--shard-docs", type=int, default=500_000, help="documents per shard in the estimate")
    ap.add_argument("--node-cores", type=int, default=16, help="cores per cluster node in the estimate")
    ap.add_argument("--node-gib", type=int, default=64, help="memory per cluster node in the estimate")
    ap.add_argument("--workdir", type=Path, help="Keep data and output here (default: a temp dir, removed).")
    ap.add_argument("--no-reference", action="store_true", help="Skip the rank-bm25 reference timing.")
    return ap


def main() -> None:
    args = arguments().parse_args()
    executors = [e.strip() for e in args.executors.split(",") if e.strip()]

    tmp = None
    if args.workdir:
        work = args.workdir
        if work.exists():
            shutil.rmtree(work)
    else:
        tmp = tempfile.mkdtemp(prefix="bench-pipeline-")
        work = Path(tmp)
    try:
        print(f"python {platform.python_version()} numpy {np.__version__} rank-bm25 {version('rank-bm25')} "
              f"sacrebleu {version('sacrebleu')}; cpus {os.cpu_count()}; load avg {os.getloadavg()[0]:.1f} "
              "(shared machine: timings are noisy; run once)")
        print(f"setting: systems={args.systems} docs={args.docs} queries={args.queries} depth={args.depth} "
              f"mt_lines={args.mt_lines} vocab={args.vocab} seed={args.seed} jobs={args.jobs} executors={executors}")
        t0 = time.perf_counter()
        config = generate(work / "data", n_systems=args.systems, n_docs=args.docs, n_queries=args.queries,
                          mt_lines=args.mt_lines, vocab=args.vocab, seed=args.seed, depth=args.depth, jobs=args.jobs)
        size = sum(p.stat().st_size for p in (work / "data").rglob("*") if p.is_file())
        print(f"data generation: {time.perf_counter() - t0:.1f} s ({size / 2**20:.0f} MiB in {work / 'data'})")
        mid = work / "data" / "systems" / f"sys{args.systems // 2:02d}.jsonl"

        if not args.no_reference:
            ref = reference_retrieval(mid, work / "data" / "queries.tsv", args.depth)
            for b in ("rank_bm25", "sparse"):
                r = ref[b]
                print(f"one collection in-process, {b:<9}: build {r['build']:6.2f} s  search {r['search']:6.2f} s  "
                      f"total {r['total']:6.2f} s")
            print(f"  rank-bm25 / sparse: {ref['rank_bm25']['total'] / ref['sparse']['total']:.1f}x; "
                  f"identical rankings: {ref['same_ranking']}")
        one = build_one(mid)
        print(f"one index build in a fresh process ({one['docs']:,} documents, read + index): wall {one['wall']:.1f} s, "
              f"CPU {one['cpu']:.1f} s, peak RSS {one['rss'] / 2**30:.2f} GiB above the interpreter's "
              f"(file {mid.stat().st_size / 2**20:.0f} MiB: {one['rss'] / mid.stat().st_size:.1f}x, the scheduler "
              "estimates 8x)")

        runs = {}
        for ex in executors:
            runs[ex] = run_cli(config, work / f"out-{ex}", args.jobs, ex)
            runs[ex]["metas"] = [json.loads(p.read_text()) for p in (work / f"out-{ex}" / "cache" / "runs").glob("*.json") if not p.name.endswith(".manifest.json")]
            print()
            describe(f"clir-eval run --executor {ex} --jobs {args.jobs}", runs[ex])
        if "local" in runs and "ray" in runs:
            lo, ra = runs["local"], runs["ray"]
            print(f"\nray / local: wall {ra['wall'] / lo['wall']:.2f}x, CPU {ra['cpu'] / lo['cpu']:.2f}x, "
                  f"peak tree RSS {ra['peak_tree'] / lo['peak_tree']:.2f}x (target: wall within 1.15x; Ray's CPU misses "
                  "workers its raylet reaps, so compare wall); "
                  f"results identical except timing: {stable(lo['results']) == stable(ra['results'])}")
        base = runs.get("local") or next(iter(runs.values()))
        if args.docs < args.extrapolate_docs:
            f = args.extrapolate_docs / args.docs
            t = base["results"]["timing"]
            builds = one["cpu"] * (args.systems + 1)
            print(f"EXTRAPOLATED (not measured) to {args.extrapolate_docs:,} documents: index builds scale ~linearly in "
                  f"documents: {args.systems + 1} x {one['cpu']:.1f} CPU-s x {f:.0f} = {builds * f / 60:.1f} CPU-min, the "
                  f"rest of the run's {base['cpu']:.0f} CPU-s ({max(base['cpu'] - builds, 0):.0f} CPU-s) kept as is: "
                  f"{(builds * f + max(base['cpu'] - builds, 0)) / args.jobs / 60:.1f} min on {args.jobs} idle cores "
                  f"(target: 6 min end to end); at this machine's load the systems stage took {t['systems']:.0f} s "
                  f"(x {f:.0f} = {t['systems'] * f / 60:.0f} min)")

        out = work / f"out-{executors[0]}"
        cfg = yaml.safe_load(config.read_text())
        cfg["retrieval"]["depth"] = args.depth - 1
        config.write_text(yaml.safe_dump(cfg, sort_keys=False))
        again = run_cli(config, out, args.jobs, executors[0])
        metas = [json.loads(p.read_text()) for p in (out / "cache" / "runs").glob("*.json") if not p.name.endswith(".manifest.json")]
        fresh = [m for m in metas if m not in runs[executors[0]]["metas"]]
        print(f"\nre-run with depth {args.depth - 1} (new runs, cached indexes): wall {again['wall']:.1f} s, "
              f"CPU {again['cpu']:.1f} s; {sum(m.get('index_cached', False) for m in fresh)}/{len(fresh)} indexes loaded, "
              f"not rebuilt")
        cached = run_cli(config, out, args.jobs, executors[0])
        t2 = cached["results"]["timing"]
        print(f"cached re-run: wall {cached['wall']:.1f} s, CPU {cached['cpu']:.1f} s; correlation {t2.get('correlation', 0):.2f} s, "
              f"report {t2.get('report', 0):.2f} s; identical to the previous: {stable(again['results']) == stable(cached['results'])}")
        study_estimate(one, args, base)
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
