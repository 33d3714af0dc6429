#!/usr/bin/env python
"""Benchmark BM25 indexing and search against bm25s and rank-bm25, ratios printed in one run.

Generated corpus (written once as TSV): --docs documents of ~--len pseudo-words (uniform
length in [len/2, 3len/2]) from a Zipf(s=--zipf) vocabulary of --vocab words, with
capitals and punctuation; --queries queries of 2-6 words, top --depth. Every measurement
runs in a fresh process that first reads the TSV (not timed), so "peak RSS" is the peak of
the measured process itself (its texts included); for a sharded build the forked shard
workers' peak is reported separately ("children").

1. build + search, all --docs documents: the harness (default analyzer, the one ``run``
   uses; --shards shards on --jobs processes) vs bm25s (its own tokenizer, no stopwords,
   index, retrieve top-k on --jobs threads), both timed from texts in memory;
2. on the first --subset documents: rank-bm25 (BM25Okapi on the harness's tokens) vs the
   harness -- times, and whether the harness's scores are bit-identical for every query;
3. whole commands on the --subset documents (fresh process, reading files, writing a run):
   ``clir-eval retrieve`` (defaults: one process) and ``clir-eval retrieve --shards S --jobs J``
   (checked byte-identical) vs a bm25s script doing read + tokenise + index + retrieve + write.

bm25s is not a dependency: point --bm25s-python at an interpreter that has it, e.g.

    python -m venv /tmp/bm25s-venv && echo "$PWD/.venv/lib/python3.11/site-packages" \\
        > /tmp/bm25s-venv/lib/python3.11/site-packages/venv.pth && /tmp/bm25s-venv/bin/pip install --no-deps bm25s
    python scripts/bench_bm25.py --bm25s-python /tmp/bm25s-venv/bin/python            # 1M docs (slow: run once)
    python scripts/bench_bm25.py --docs 20000 --subset 5000 --bm25s-python ...      # quick

The machine may be shared: the load average is printed before and after; read the ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import benchlib
import numpy as np

ROOT = benchlib.ROOT


def generate(out: Path, n_docs: int, length: int, vocab: int, n_queries: int, zipf: float, seed: int) -> None:
    """docs.tsv and queries.tsv in ``out`` (deterministic for a seed)."""
    rng = np.random.default_rng(seed)
    letters = np.array(list("etaoinshrdlcumwfgypbvkjxqz"))
    lp = 1.0 / np.arange(1, 27) ** 0.7
    lp /= lp.sum()
    wl = rng.integers(2, 11, size=vocab)
    chars = rng.choice(letters, size=int(wl.sum()), p=lp)
    cuts = np.concatenate(([0], np.cumsum(wl)))
    words = sorted({"".join(chars[cuts[i] : cuts[i + 1]]) for i in range(vocab)}, key=lambda w: (len(w), w))
    words = np.array(words, dtype=object)
    rng.shuffle(words)
    v = len(words)
    cdf = np.cumsum(1.0 / np.arange(1, v + 1) ** zipf)
    cdf /= cdf[-1]
    lens = rng.integers(length // 2, length * 3 // 2 + 1, size=n_docs)
    with open(out / "docs.tsv", "w", encoding="utf-8") as fh:
        for start in range(0, n_docs, 10000):
            block = lens[start : start + 10000]
            ids = np.minimum(np.searchsorted(cdf, rng.random(int(block.sum()))), v - 1)
            toks = words[ids]
            punct = rng.random(len(toks)) < 0.07
            toks[punct] = np.char.add(toks[punct].astype(str), ",").astype(object)
            pos = 0
            lines = []
            for k, n in enumerate(block.tolist()):
                text = " ".join(toks[pos : pos + n].tolist())
                pos += n
                lines.append(f"doc{start + k:07d}\t{text[:1].upper()}{text[1:]}.\n")
            fh.write("".join(lines))
    with open(out / "queries.tsv", "w", encoding="utf-8") as fh:
        for q in range(n_queries):
            ids = np.minimum(np.searchsorted(cdf, rng.random(int(rng.integers(2, 7)))), v - 1)
            fh.write(f"q{q}\t{' '.join(words[ids].tolist())}\n")


def read_tsv(path: Path, limit: int | None = None) -> tuple[list[str], list[str]]:
    ids, texts = [], []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if limit is not None and len(ids) >= limit:
                break
            i, _, t = line.rstrip("\n").partition("\t")
            ids.append(i)
            texts.append(t)
    return ids, texts


peak_mib = benchlib.peak_rss_mib


def cpu_s() -> float:
    """CPU seconds of this process and its waited-for children (user + system)."""
    r, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime + c.ru_utime + c.ru_stime


# ------------------------------------------------------------------ measured children


def child_harness(a) -> dict:
    from clir_eval.io.readers import Documents
    from clir_eval.retrieval.analysis import get_analyzer
    from clir_eval.retrieval.bm25 import build_index

    ids, texts = read_tsv(a.dir / "docs.tsv", a.limit)
    _, qtexts = read_tsv(a.dir / "queries.tsv")
    docs = Documents(tuple(ids), tuple(texts), "bench")
    del ids, texts
    an = get_analyzer("default")
    an.tokenize("warm up the tokenizer tables")
    base = peak_mib()
    t, c = time.perf_counter(), cpu_s()
    idx = build_index(docs, an, shards=a.shards, jobs=a.jobs)
    build, build_cpu = time.perf_counter() - t, cpu_s() - c
    t, c = time.perf_counter(), cpu_s()
    run = idx.search({f"q{i}": q for i, q in enumerate(qtexts)}, depth=a.depth)
    search, search_cpu = time.perf_counter() - t, cpu_s() - c
    out = {"build": build, "search": search, "build_cpu": build_cpu, "search_cpu": search_cpu, "rss_texts": base, "peak": peak_mib(),
           "peak_children": peak_mib(resource.RUSAGE_CHILDREN), "n_terms": len(idx.inverted.terms),
           "postings": int(sum(len(s.rows) for s in idx.inverted.shards)),
           "returned": sum(len(v) for v in run.ranking.values())}  # fmt: skip
    if a.check_rank_bm25:
        out |= compare_rank_bm25(docs, an, idx, qtexts)
    return out


def compare_rank_bm25(docs, an, idx, qtexts) -> dict:
    import rank_bm25

    from clir_eval.retrieval.bm25 import _top_k

    t, c = time.perf_counter(), cpu_s()
    corpus = [an.tokenize(x) for x in docs.texts]
    ref = rank_bm25.BM25Okapi(corpus)
    del corpus
    build, build_cpu = time.perf_counter() - t, cpu_s() - c
    qtoks = [an.tokenize(q) for q in qtexts]
    t, c = time.perf_counter(), cpu_s()

    same = True
    for q in qtoks:
        s = ref.get_scores(q)
        _top_k(s, 1000, idx._id_rank)
        same &= s.tobytes() == idx.get_scores(q).tobytes()
    return {"rank_bm25_build": build, "rank_bm25_search": time.perf_counter() - t, "rank_bm25_build_cpu": build_cpu,
            "rank_bm25_search_cpu": cpu_s() - c, "bit_identical": bool(same)}  # fmt: skip


def child_bm25s(a) -> dict:
    import bm25s

    ids, texts = read_tsv(a.dir / "docs.tsv", a.limit)
    _, qtexts = read_tsv(a.dir / "queries.tsv")
    base = peak_mib()
    t, c = time.perf_counter(), cpu_s()
    tokens = bm25s.tokenize(texts, stopwords=None, show_progress=False)
    retriever = bm25s.BM25()
    retriever.index(tokens, show_progress=False)
    del tokens
    build, build_cpu = time.perf_counter() - t, cpu_s() - c
    t, c = time.perf_counter(), cpu_s()
    vocab = retriever.vocab_dict
    q = [[w for w in toks if w in vocab] or [next(iter(vocab))] for toks in bm25s.tokenize(qtexts, stopwords=None, return_ids=False, show_progress=False)]
    k = min(a.depth, len(ids))
    retriever.retrieve(q, k=k, show_progress=False, n_threads=a.jobs)
    search, search_cpu = time.perf_counter() - t, cpu_s() - c
    return {"build": build, "search": search, "build_cpu": build_cpu, "search_cpu": search_cpu, "rss_texts": base,
            "peak": peak_mib(), "version": bm25s.__version__}  # fmt: skip


BM25S_COMMAND = r'''
import sys, bm25s
docs, queries, out, k = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
ids, texts = [], []
for line in open(docs, encoding="utf-8"):
    i, _, t = line.rstrip("\n").partition("\t"); ids.append(i); texts.append(t)
qids, qtexts = [], []
for line in open(queries, encoding="utf-8"):
    i, _, t = line.rstrip("\n").partition("\t"); qids.append(i); qtexts.append(t)
r = bm25s.BM25()
r.index(bm25s.tokenize(texts, stopwords=None, show_progress=False), show_progress=False)
vocab = r.vocab_dict
q = [[w for w in t if w in vocab] or [next(iter(vocab))] for t in bm25s.tokenize(qtexts, stopwords=None, return_ids=False, show_progress=False)]
res, sc = r.retrieve(q, k=min(k, len(ids)), show_progress=False, n_threads=int(sys.argv[5]))
with open(out, "w") as fh:
    for qi, qid in enumerate(qids):
        for rank, (d, s) in enumerate(zip(res[qi], sc[qi]), 1):
            fh.write(f"{qid} Q0 {ids[d]} {rank} {s:.6f} bm25s\n")
'''


def timed_command(cmd: list[str]) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds (user + system, children included) and peak RSS (MiB of the
    largest process) of one command, via GNU time."""
    m = benchlib.command(cmd, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    return m.wall, m.cpu, m.rss


def run_child(kind: str, a, python: str, **kw) -> dict:
    cmd = [python, __file__, "--_child", kind, "--dir", str(a.dir), "--depth", str(a.depth),
           "--shards", str(kw.get("shards", a.shards)), "--jobs", str(a.jobs)]  # fmt: skip
    if kw.get("limit"):
        cmd += ["--limit", str(kw["limit"])]
    if kw.get("check"):
        cmd += ["--check-rank-bm25"]
    res = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    if res.returncode:
        raise SystemExit(f"{kind} child failed:\n{res.stderr}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def arguments():
    ap = benchlib.parser(__doc__, jobs=2)
    ap.add_argument("--docs", type=int, default=1_000_000)
    ap.add_argument("--subset", type=int, default=100_000)
    ap.add_argument("--len", type=int, default=150)
    ap.add_argument("--vocab", type=int, default=500_000)
    ap.add_argument("--zipf", type=float, default=1.0)
    ap.add_argument("--queries", type=int, default=150)
    ap.add_argument("--depth", type=int, default=1000)
    ap.add_argument("--shards", type=int, default=2)
    ap.add_argument("--seed", type=int, default=20240601)
    ap.add_argument("--bm25s-python", default=None, help="interpreter with bm25s installed (skip bm25s when absent)")
    ap.add_argument("--skip-full", action="store_true", help="skip part 1 (all --docs documents)")
    ap.add_argument("--corpus", type=Path, default=None, help="keep the generated TSVs here and reuse them if present")
    ap.add_argument("--dir", type=Path, default=None, help=argparse.SUPPRESS)
    ap.add_argument("--limit", type=int, default=None, help=argparse.SUPPRESS)
    ap.add_argument("--check-rank-bm25", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--_child", dest="child", default=None, help=argparse.SUPPRESS)
    return ap


def main() -> None:
    a = arguments().parse_args()
    if a.child:
        print(json.dumps({"harness": child_harness, "bm25s": child_bm25s}[a.child](a)))
        return

    from importlib.metadata import version

    print(f"# bench_bm25: {a.docs} docs x ~{a.len} tokens, vocab {a.vocab} (zipf {a.zipf}), {a.queries} queries, "
          f"depth {a.depth}, shards {a.shards}, jobs {a.jobs}, seed {a.seed}")  # fmt: skip
    print(f"# python {platform.python_version()}, numpy {np.__version__}, rank-bm25 {version('rank-bm25')}, "
          f"cpus {os.cpu_count()}, load average {os.getloadavg()[0]:.1f} (1 min) {os.getloadavg()[1]:.1f} (5 min)")  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="bench_bm25_") as tmp:
        a.dir = a.corpus or Path(tmp)
        a.dir.mkdir(parents=True, exist_ok=True)
        if not (a.dir / "docs.tsv").exists():
            t = time.perf_counter()
            generate(a.dir, a.docs, a.len, a.vocab, a.queries, a.zipf, a.seed)
            print(f"generated {a.dir / 'docs.tsv'} ({(a.dir / 'docs.tsv').stat().st_size / 2**20:.0f} MiB) in {time.perf_counter() - t:.0f} s")
        else:
            print(f"reusing {a.dir / 'docs.tsv'} (generated with the same options, not checked)")
        py = sys.executable
        rows = []
        if not a.skip_full:
            h = run_child("harness", a, py)
            rows.append(("harness", a.docs, h))
            if a.bm25s_python:
                b = run_child("bm25s", a, a.bm25s_python)
                rows.append((f"bm25s {b['version']}", a.docs, b))
        hs = run_child("harness", a, py, limit=a.subset, check=True)
        rows.append(("harness", a.subset, hs))
        rows.append(("rank-bm25", a.subset, {"build": hs["rank_bm25_build"], "search": hs["rank_bm25_search"],
                                             "build_cpu": hs["rank_bm25_build_cpu"], "search_cpu": hs["rank_bm25_search_cpu"]}))  # fmt: skip
        print()
        print(f"{'system':<14}{'docs':>9}{'build s':>9}{'search s':>9}{'total s':>9}{'CPU s':>9}"
              f"{'texts MiB':>11}{'peak MiB':>10}{'children':>10}")  # fmt: skip
        for name, n, r in rows:
            print(f"{name:<14}{n:>9}{r['build']:>9.1f}{r['search']:>9.2f}{r['build'] + r['search']:>9.1f}"
                  f"{r['build_cpu'] + r['search_cpu']:>9.1f}{r.get('rss_texts', float('nan')):>11.0f}"
                  f"{r.get('peak', float('nan')):>10.0f}{r.get('peak_children', float('nan')):>10.0f}")  # fmt: skip
        print("  build: harness = analyze + index (all shards); bm25s = its tokenize + index; rank-bm25 = harness "
              "tokens + BM25Okapi.\n  search: all queries, top-depth (rank-bm25: get_scores + top-depth). "
              "CPU s: build + search, shard workers included.\n  texts MiB: RSS with the texts read, before building; "
              "children: peak RSS of the largest shard worker.")
        total = lambda r: r["build"] + r["search"]  # noqa: E731
        cpu = lambda r: r["build_cpu"] + r["search_cpu"]  # noqa: E731
        print()
        if not a.skip_full:
            h = rows[0][2]
            print(f"harness, {a.docs} docs: build {h['build']:.1f} s wall, {h['build_cpu']:.1f} s CPU (target <= 40 s on 2 cores), peak RSS "
                  f"{h['peak'] / 1024:.2f} GiB, shard workers {h['peak_children'] / 1024:.2f} GiB (target <= 2.5 GiB); "
                  f"{h['n_terms']} terms, {h['postings']} postings")  # fmt: skip
            if a.bm25s_python:
                b = rows[1][2]
                print(f"harness vs bm25s, {a.docs} docs, build + search: {total(b) / total(h):.2f}x faster wall, "
                      f"{cpu(b) / cpu(h):.2f}x less CPU (target >= 1.5x); peak RSS {h['peak'] / b['peak']:.2f}x bm25s's")  # fmt: skip
        print(f"harness vs rank-bm25, {a.subset} docs, build + search: {total(rows[-1][2]) / total(hs):.1f}x faster wall, "
              f"{cpu(rows[-1][2]) / cpu(hs):.1f}x less CPU; "
              f"scores bit-identical for all {a.queries} queries: {hs['bit_identical']}")  # fmt: skip
        sub = a.dir / "sub.tsv"
        with open(a.dir / "docs.tsv", encoding="utf-8") as src, open(sub, "w", encoding="utf-8") as dst:
            for _, line in zip(range(a.subset), src):
                dst.write(line)
        exe = Path(sys.executable).parent / "clir-eval"
        cli = [str(exe)] if exe.exists() else [sys.executable, "-m", "clir_eval"]
        cli += ["retrieve", "--docs", str(sub), "--queries", str(a.dir / "queries.tsv"), "--out", str(a.dir / "h.run"),
                "--depth", str(a.depth)]  # fmt: skip
        w_h, c_h, m_h = timed_command(cli)
        print(f"clir-eval retrieve, {a.subset} docs, whole command: {w_h:.1f} s wall, {c_h:.1f} s CPU, peak {m_h:.0f} MiB")
        par = cli[:-4] + ["--out", str(a.dir / "h2.run"), "--depth", str(a.depth), "--shards", str(a.shards), "--jobs", str(a.jobs)]
        w_p, c_p, m_p = timed_command(par)
        same = (a.dir / "h.run").read_bytes() == (a.dir / "h2.run").read_bytes()
        print(f"clir-eval retrieve --shards {a.shards} --jobs {a.jobs}, {a.subset} docs: {w_p:.1f} s wall, {c_p:.1f} s CPU, "
              f"peak {m_p:.0f} MiB (largest process); run byte-identical to the default command's: {same}")  # fmt: skip
        if a.bm25s_python:
            script = a.dir / "bm25s_cmd.py"
            script.write_text(BM25S_COMMAND, encoding="utf-8")
            w_b, c_b, m_b = timed_command([a.bm25s_python, str(script), str(sub), str(a.dir / "queries.tsv"),
                                           str(a.dir / "b.run"), str(a.depth), str(a.jobs)])  # fmt: skip
            print(f"bm25s read + tokenise + index + retrieve + write, {a.subset} docs: {w_b:.1f} s wall, {c_b:.1f} s CPU, "
                  f"peak {m_b:.0f} MiB")  # fmt: skip
            print(f"clir-eval retrieve vs bm25s, whole command: {w_b / w_h:.2f}x faster wall, {c_b / c_h:.2f}x less CPU (target >= 4x); "
                  f"peak RSS {m_h / m_b:.2f}x bm25s's (target <= 1)")  # fmt: skip
            print(f"clir-eval retrieve --shards {a.shards} --jobs {a.jobs} vs bm25s: {w_b / w_p:.2f}x faster wall, "
                  f"{c_b / c_p:.2f}x less CPU")  # fmt: skip
    print(f"# load average after: {os.getloadavg()[0]:.1f} (1 min) {os.getloadavg()[1]:.1f} (5 min)")


if __name__ == "__main__":
    main()
