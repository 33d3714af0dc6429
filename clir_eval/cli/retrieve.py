"""``clir-eval retrieve``: BM25 over a document collection, queries in, TREC run out."""

from __future__ import annotations

import sys
import time
from typing import List, Optional

import typer

from .app import app
from ..errors import UserError
from ..io.files import check_output_file
from ..io.readers import doc_files_help, doc_formats_help, read_documents, read_queries
from ..limits import MAX_DEPTH, MAX_JOBS, check_max


@app.command("retrieve")
def retrieve(
    docs: str = typer.Option(..., "--docs", help="Documents: .jsonl, .tsv (id<TAB>text) or .txt (one per line); .gz ok."),
    queries: List[str] = typer.Option(..., "--queries", help="Queries: TREC topics, .tsv or .jsonl; a file, directory or glob; repeatable."),
    out: str = typer.Option(..., "--out", help="Output TREC run (written atomically; .gz ok)."),
    backend: str = typer.Option("sparse", "--backend", help="sparse (fast, identical to rank-bm25) or rank_bm25 (reference)."),
    analyzer: str = typer.Option("default", "--analyzer", help="whitespace or default (Unicode words, lowercased)."),
    stopwords: Optional[str] = typer.Option(None, "--stopwords", help="'english' or a file of stopwords."),
    stem: Optional[str] = typer.Option(None, "--stem", help="Snowball language for PyStemmer, e.g. english."),
    variant: str = typer.Option("okapi", "--variant", help="BM25 variant: okapi, l, plus (rank-bm25 classes), lucene (Lucene's BM25, exact lengths) or lucene-byte (Lucene's one-byte lengths, float32)."),
    k1: Optional[float] = typer.Option(None, "--k1", help="Default 1.5 (0.9 for lucene variants)."),
    b: Optional[float] = typer.Option(None, "--b", help="Default 0.75 (0.4 for lucene variants)."),
    epsilon: float = typer.Option(0.25, "--epsilon", help="Okapi idf floor factor (rank-bm25)."),
    delta: Optional[float] = typer.Option(None, "--delta", help="BM25L/BM25Plus delta (defaults 0.5/1)."),
    depth: int = typer.Option(1000, "--depth", help="Documents kept per query."),
    docs_format: Optional[str] = typer.Option(None, "--docs-format", help="jsonl, tsv or lines (default: from the extension)."),
    doc_ids: Optional[str] = typer.Option(None, "--doc-ids", help="For line-aligned documents: a file of ids, one per line."),
    queries_format: Optional[str] = typer.Option(None, "--queries-format", help="trec, tsv or jsonl (default: guessed)."),
    fields: str = typer.Option("title", "--fields", help="TREC topic fields, e.g. title or title,desc."),
    index: Optional[str] = typer.Option(None, "--index", help="Index cache directory: reused when its signature matches; verified when read (a damaged one is an error, never used)."),
    shards: int = typer.Option(1, "--shards", help="Index the collection in this many document ranges (same results)."),
    jobs: int = typer.Option(1, "--jobs", help="Processes building shards in parallel."),
    tag: str = typer.Option("clir-eval", "--tag", help="Run tag (last column)."),
) -> None:
    """Rank documents for each query with BM25 and write a TREC run.

    \b
    Examples (after 'clir-eval demo --out demo-out'):
      clir-eval retrieve --docs demo-out/data/english.jsonl --queries demo-out/data/queries.tsv --out demo-out/en.run
      clir-eval retrieve --docs demo-out/data/systems/copier.jsonl --queries demo-out/data/queries.tsv --out demo-out/copier.run --depth 100
    """
    from ..retrieval.analysis import get_analyzer
    from ..retrieval.bm25 import _check_backend, build_or_load
    from ..retrieval.settings import IndexSettings
    from ..io.trec import write_run

    if depth <= 0:
        raise UserError(f"--depth {depth} must be a positive integer")
    if shards < 1 or jobs < 1:
        raise UserError(f"--shards {shards} and --jobs {jobs} must be positive integers")
    check_max(shards, MAX_JOBS, "--shards")
    check_max(jobs, MAX_JOBS, "--jobs")
    check_max(depth, MAX_DEPTH, "--depth")
    check_output_file(out)
    if not tag or len(tag.split()) != 1 or tag.split()[0] != tag:
        raise UserError(f"--tag {tag!r} must be one word without whitespace")
    backend = _check_backend(backend)
    an = get_analyzer(analyzer, stopwords=stopwords, stem=stem)
    params = IndexSettings(backend=backend, analyzer=an.name, stopwords=an.stopwords, stem=an.stem,
                           variant=variant.strip().lower(), k1=k1, b=b, epsilon=epsilon, delta=delta)
    t0 = time.perf_counter()
    qs = read_queries(queries if len(queries) > 1 else queries[0], fmt=queries_format, fields=fields)
    collection = read_documents(docs, fmt=docs_format, ids_path=doc_ids)
    t1 = time.perf_counter()
    idx, cached = build_or_load(index, collection, an, backend=backend, shards=shards, jobs=jobs, **params.bm25)
    t2 = time.perf_counter()
    run = idx.search(qs, depth=depth, tag=tag)
    t3 = time.perf_counter()
    write_run(out, run)
    sys.stderr.write(
        f"retrieve: {len(qs)} queries x {len(collection)} documents -> {out} "
        f"(read {t1 - t0:.2f}s, {'loaded' if cached else 'built'} index {t2 - t1:.2f}s, search {t3 - t2:.2f}s)\n"
        f"signature: {idx.signature}|depth:{depth}\n"
    )
