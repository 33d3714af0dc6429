"""``clir-eval retrieve``: BM25 over a document collection, queries in, TREC run out."""

from __future__ import annotations

import sys
import time
from typing import List, Optional

import typer

from ..errors import UserError
from ..io.files import check_output_file
from ..io.readers import DocumentStream, doc_files_help, doc_formats_help, read_documents, read_queries
from ..io.trec import write_run
from ..limits import MAX_JOBS, check_max
from ..retrieval.settings import RetrievalSettings
from .app import app
from .options import build, setting_option


@app.command("retrieve")
def retrieve(
    docs: str = typer.Option(..., "--docs", help=f"Documents: {doc_files_help()}; .gz ok."),
    queries: List[str] = typer.Option(..., "--queries", help="Queries: TREC topics, .tsv or .jsonl; a file, directory or glob; repeatable."),
    out: str = typer.Option(..., "--out", help="Output TREC run (written atomically; .gz ok)."),
    backend: str = setting_option(RetrievalSettings, "backend"),
    analyzer: str = setting_option(RetrievalSettings, "analyzer"),
    stopwords: Optional[str] = setting_option(RetrievalSettings, "stopwords"),
    stem: Optional[str] = setting_option(RetrievalSettings, "stem"),
    language: Optional[str] = setting_option(RetrievalSettings, "language"),
    variant: str = setting_option(RetrievalSettings, "variant"),
    k1: Optional[float] = setting_option(RetrievalSettings, "k1"),
    b: Optional[float] = setting_option(RetrievalSettings, "b"),
    epsilon: float = setting_option(RetrievalSettings, "epsilon"),
    delta: Optional[float] = setting_option(RetrievalSettings, "delta"),
    depth: int = setting_option(RetrievalSettings, "depth"),
    docs_format: Optional[str] = typer.Option(None, "--docs-format", help=f"{doc_formats_help()} (default: from the extension)."),
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
    from ..retrieval.bm25 import build_or_load, check_backend, streams

    if shards < 1 or jobs < 1:
        raise UserError(f"--shards {shards} and --jobs {jobs} must be positive integers")
    check_max(shards, MAX_JOBS, "--shards")
    check_max(jobs, MAX_JOBS, "--jobs")
    check_output_file(out)
    if not tag or len(tag.split()) != 1 or tag.split()[0] != tag:
        raise UserError(f"--tag {tag!r} must be one word without whitespace")
    settings = build(RetrievalSettings, backend=check_backend(backend), analyzer=analyzer.strip().lower(),
                     stopwords=stopwords, stem=stem, language=language, variant=variant.strip().lower(), k1=k1, b=b,
                     epsilon=epsilon, delta=delta, depth=depth)  # fmt: skip
    an = get_analyzer(settings.analyzer, stopwords=stopwords, stem=stem, language=settings.language)
    t0 = time.perf_counter()
    qs = read_queries(queries if len(queries) > 1 else queries[0], fmt=queries_format, fields=fields)
    streamed = streams(settings.backend, shards, jobs)  # texts read batch by batch while indexing
    if streamed:
        collection = DocumentStream(docs, fmt=docs_format, ids_path=doc_ids)
    else:
        collection = read_documents(docs, fmt=docs_format, ids_path=doc_ids)
    t1 = time.perf_counter()
    idx, cached = build_or_load(index, collection, an, backend=settings.backend, shards=shards, jobs=jobs,
                                **settings.index.bm25)
    t2 = time.perf_counter()
    run = idx.search(qs, depth=settings.depth, tag=tag)
    t3 = time.perf_counter()
    write_run(out, run)
    sys.stderr.write(
        f"retrieve: {len(qs)} queries x {len(collection)} documents -> {out} "
        f"(read {t1 - t0:.2f}s, {'loaded' if cached else 'built'} index {t2 - t1:.2f}s"
        f"{' (documents read meanwhile)' if streamed else ''}, search {t3 - t2:.2f}s)\n"
        f"signature: {idx.signature}|depth:{depth}\n"
    )
