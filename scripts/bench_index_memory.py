#!/usr/bin/env python
"""Benchmark the sparse index's peak memory: a synthetic collection of N documents x T tokens
(Zipf(1.0) over V word types, seeded, written as a lines file in chunks) is indexed

* ``single``: in one process, the collection streamed (batches of texts dropped once analysed,
  triples freed as the postings are placed), as ``clir-eval retrieve`` and an unsharded pipeline
  collection do with the sparse backend;
* ``texts``: in one process with every text held (read_documents + build_inverted_index: the
  build of ``retrieve`` before streaming, still used with --shards/--jobs > 1 or rank_bm25), and
* ``spans``: as ``clir-eval run`` does with ``--shard-docs S``: one process per span (pass 1:
  read only the span, analyse, write its triples to the cache), then one merging process
  (global vocabulary, each span's postings over global ids, the BM25 index saved to disk).

Every process runs under ``/usr/bin/time``; its own peak RSS, CPU and wall time are printed,
with peak bytes per token. Every index built is checked against the first one (identical
arrays; the one-process builds' files byte for byte). Run with ``nice`` on a shared machine, once.

    python scripts/bench_index_memory.py --docs 1000000 --tokens 150 --shard-docs 250000
    python scripts/bench_index_memory.py --docs 3000000 --tokens 400 --shard-docs 250000 --modes spans
    python scripts/bench_index_memory.py --docs 20000 --tokens 150 --shard-docs 5000      # quick
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

import benchlib
import numpy as np


def generate(path: Path, n_docs: int, n_tokens: int, vocab: int, seed: int, chunk: int = 20_000) -> int:
    """Write ``n_docs`` lines of ``n_tokens`` words each; returns the file's bytes."""
    rng = np.random.default_rng(seed)
    p = 1.0 / np.arange(1, vocab + 1)
    cdf = np.cumsum(p / p.sum())
    words = np.array([f"w{i}" for i in range(vocab)], dtype=object)
    with open(path, "w", encoding="utf-8") as fh:
        for lo in range(0, n_docs, chunk):
            k = min(chunk, n_docs - lo)
            ids = np.minimum(np.searchsorted(cdf, rng.random(k * n_tokens)), vocab - 1).reshape(k, n_tokens)
            fh.writelines(" ".join(row) + "\n" for row in words[ids].tolist())
    return path.stat().st_size


def child(argv: list[str]) -> None:
    """One measured process: ``single DOCS OUTDIR`` | ``span DOCS CACHE FIRST LINES OFFSET`` | ``merge DOCS CACHE SHARD_DOCS OUTDIR``."""
    from clir_eval.pipeline.cache import Cache

    mode, docs = argv[0], argv[1]
    if mode == "single":
        from clir_eval.io.readers import DocumentStream
        from clir_eval.retrieval.analysis import get_analyzer
        from clir_eval.retrieval.bm25 import build_with
        from clir_eval.retrieval.settings import IndexSettings

        idx = build_with(DocumentStream(docs, fmt="lines"), get_analyzer("default"), IndexSettings())
        idx.inverted.save(argv[2], {})
        return
    if mode == "texts":
        from clir_eval.io.readers import read_documents
        from clir_eval.retrieval.analysis import get_analyzer
        from clir_eval.retrieval.index import build_inverted_index

        coll = read_documents(docs, fmt="lines")
        inv = build_inverted_index(coll.ids, coll.texts, get_analyzer("default"))
        del coll
        inv.save(argv[2], {})
        return
    from clir_eval.pipeline.shards import assemble, shard_stage, span_tasks

    task = index_task(docs, int(argv[3]) if mode == "merge" else 0)
    cache = Cache(Path(argv[2]))
    if mode == "span":
        st = next(s for s in span_tasks(task, int(argv[4]))[0] if s.first == int(argv[3]))
        shard_stage(st, cache)
    else:
        idx, _ = assemble(task, cache)
        idx.inverted.save(argv[4], {})


def index_task(docs: str, shard_docs: int):
    from dataclasses import replace

    from clir_eval.pipeline.shards import span_tasks
    from clir_eval.pipeline.tasks import IndexTask
    from clir_eval.retrieval.settings import IndexSettings

    task = IndexTask("bench", docs, "lines", IndexSettings())  # sparse backend, default analyzer, okapi
    return replace(task, shards=span_tasks(task, shard_docs)[0]) if shard_docs else task


def measured(args: list[str]) -> dict:
    m = benchlib.command([sys.executable, __file__, "--child", *args], env=benchlib.env())
    return {"rss": m.rss * 2**20, "wall": m.wall, "cpu": m.cpu}


def same_index(a: Path, b: Path) -> bool:
    ha, hb = (json.loads((d / "index.json").read_text()) for d in (a, b))
    if [ha["n_docs"], ha["n_terms"]] != [hb["n_docs"], hb["n_terms"]]:
        return False
    load = lambda d, n: np.load(d / f"{n}.npy")  # noqa: E731
    if any(not np.array_equal(load(a, n), load(b, n)) for n in ("dl", "df")):
        return False
    if (a / "terms.json").read_bytes() != (b / "terms.json").read_bytes():
        return False
    # postings: concatenate each term's rows (as global document numbers) and tf over the shards
    def postings(d, h):
        out = []
        for k, (start, _) in enumerate(h["shards"]):
            ip, rows, tf = (load(d, f"shard-{k}-{n}") for n in ("indptr", "rows", "tf"))
            out.append((ip, rows.astype(np.int64) + start, tf.astype(np.int64)))
        return out
    pa, pb = postings(a, ha), postings(b, hb)
    def by_term(parts):
        n = len(parts[0][0]) - 1
        counts = sum(np.diff(ip) for ip, _, _ in parts)
        order = np.concatenate([np.repeat(np.arange(n), np.diff(ip)) for ip, _, _ in parts])
        rows = np.concatenate([r for _, r, _ in parts])
        tf = np.concatenate([t for _, _, t in parts])
        o = np.lexsort((rows, order))
        return counts, rows[o], tf[o]
    return all(np.array_equal(x, y) for x, y in zip(by_term(pa), by_term(pb)))


def arguments():
    ap = benchlib.parser(__doc__)
    ap.add_argument("--docs", type=int, default=1_000_000)
    ap.add_argument("--tokens", type=int, default=150)
    ap.add_argument("--vocab", type=int, default=500_000)
    ap.add_argument("--shard-docs", type=int, default=250_000)
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--modes", default="texts,single,spans", help="comma-separated: texts, single, spans")
    ap.add_argument("--workdir", type=Path, help="where the collection and outputs go (default: a temp dir)")
    ap.add_argument("--text", type=Path, help="an existing lines file made by this script with the same --docs, "
                    "--tokens, --vocab and --seed (not generated again; kept)")
    return ap


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2:])
        return
    args = arguments().parse_args()
    modes = args.modes.split(",")
    with tempfile.TemporaryDirectory(dir=args.workdir) as tmp:
        t = Path(tmp)
        docs = args.text or t / "docs.txt"
        t0 = time.perf_counter()
        size = docs.stat().st_size if args.text else generate(docs, args.docs, args.tokens, args.vocab, args.seed)
        n_tok = args.docs * args.tokens
        print(f"{args.docs} docs x {args.tokens} tokens = {n_tok / 1e6:.0f}M tokens, vocabulary {args.vocab}, "
              f"{size / 2**20:.0f} MiB of text (generated in {time.perf_counter() - t0:.0f} s); "
              f"load {os.getloadavg()[0]:.1f}")
        print(f"{'process':<22} {'peak RSS MiB':>12} {'B/token':>8} {'CPU s':>8} {'wall s':>8}   (B/token: over the "
              f"process's own tokens)")
        row = lambda name, m, tok=n_tok: print(f"{name:<22} {m['rss'] / 2**20:12.0f} {m['rss'] / tok:8.2f} "  # noqa: E731
                                               f"{m['cpu']:8.1f} {m['wall']:8.1f}")
        built, summary = [], []
        for mode, label in (("texts", "one process, all texts"), ("single", "one process, streamed")):
            if mode in modes:
                m = measured([mode, str(docs), str(t / mode)])
                row(label, m)
                built.append(mode)
                summary.append(f"{label}: peak {m['rss'] / 2**20:.0f} MiB = {m['rss'] / n_tok:.2f} B/token, "
                               f"CPU {m['cpu']:.1f} s, wall {m['wall']:.1f} s")
        if "spans" in modes:
            from clir_eval.pipeline.shards import span_tasks

            spans = span_tasks(index_task(str(docs), 0), args.shard_docs)[0]
            worst, cpu, wall = 0, 0.0, 0.0
            for st in spans:
                m = measured(["span", str(docs), str(t / "cache"), str(st.first), str(args.shard_docs), ""])
                row(f"span {st.first}+{st.lines}", m, st.lines * args.tokens)
                worst, cpu, wall = max(worst, m["rss"]), cpu + m["cpu"], wall + m["wall"]
            m = measured(["merge", str(docs), str(t / "cache"), str(args.shard_docs), str(t / "merged")])
            row("merge (+ save)", m)
            built.append("merged")
            summary.append(f"spans of {args.shard_docs} + merge: largest process {max(worst, m['rss']) / 2**20:.0f} MiB "
                           f"= {max(worst, m['rss']) / n_tok:.2f} B/token, CPU {cpu + m['cpu']:.1f} s, "
                           f"wall {wall + m['wall']:.1f} s (spans one after another)")
        for line in summary:
            print(line)
        for other in built[1:]:
            same = same_index(t / built[0], t / other)
            if other != "merged":
                same = same and all((t / built[0] / f.name).read_bytes() == f.read_bytes() for f in (t / other).iterdir())
            print(f"{other} index identical to {built[0]}: {same}")


if __name__ == "__main__":
    main()
