"""Input resolution: sources (WMT XML, Europarl) turned into plain files, queries and qrels read."""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..config.schema import Config, SystemSpec
from ..io.files import file_checksum
from ..io.readers import read_queries
from ..io.trec import Qrels, read_qrels
from ..sources import irds
from ..sources.collection import finish_collection
from ..sources.materialize import materialize
from ..sources.query_translation import file_query_translation
from ..sources.settings import QueriesConfig
from .cache import Cache, file_problem, seal_file


@dataclass
class Resolved:
    """Inputs after sources are materialised as plain files (filled in by ``sources.materialize``)."""

    systems: list[SystemSpec]
    mt_refs: tuple[str, ...] = ()
    mt_src: str | None = None  # source segments line-aligned with mt_refs (mt.source, or a WMT XML's <src>)
    mt_docids: str | None = None  # the document id of each MT test-set line (WMT XML sources), for document scores
    english: str | None = None  # path of the reference side's documents (the collection's language)
    language: str | None = None  # the collection's language where the source names it (WMT XML: the target side)
    doc_format: str | None = None
    queries: dict[str, str] = field(default_factory=dict)
    query_skips: dict[str, int] = field(default_factory=dict)  # generated queries: reason -> documents skipped
    qrels: Qrels | None = None
    qrels_source: str = ""
    human: dict[str, dict[str, float]] = field(default_factory=dict)  # system -> {score_name: value}
    notes: list[str] = field(default_factory=list)
    signature: dict[str, Any] = field(default_factory=dict)  # source settings to record (e.g. distractor sizes)


def read_config_queries(q: QueriesConfig) -> dict[str, str]:
    """The queries of ``queries.file`` (the first ``limit``). ``irds:`` queries arrive as TSV
    with the dataset's fields (e.g. ``text``) already applied, so they are read without fields."""
    exported = all(_is_export(f) for f in q.file)
    queries = read_queries(list(q.file), fmt=q.format, fields=("title",) if exported else tuple(q.fields))
    return dict(list(queries.items())[: q.limit]) if q.limit else queries


def _is_export(path: str) -> bool:
    return irds.is_export(path)


def resolve_inputs(cfg: Config, cache: Cache) -> Resolved:
    """Turn the config's sources into plain files and in-memory queries/qrels."""
    res = _fresh(cfg)
    if cfg.wmt is not None or cfg.europarl is not None:
        res = materialize_verified(cfg, cache)
    if cfg.collection is not None:
        finish_collection(cfg, cache, res)
    if cfg.queries is not None and cfg.queries.file:
        res.queries = read_config_queries(cfg.queries)
        if cfg.query_translation:
            file_query_translation(cfg, cache, res)
    if cfg.relevance is not None and cfg.relevance.qrels:
        res.qrels = read_qrels(cfg.relevance.qrels)
        res.qrels_source = f"file:{Path(cfg.relevance.qrels).name}|sha1:{file_checksum(cfg.relevance.qrels)[:12]}"
    return res


def materialize_verified(cfg: Config, cache: Cache) -> Resolved:
    """Materialise the WMT / Europarl sources under ``cache/sources/``, trusting a file written
    by an earlier run only when it matches its manifest (size, SHA-1): a damaged one is
    regenerated with a note in ``cache.notes``, an unsealed one (a killed run) silently."""
    src = (cache.root / "sources").resolve()
    before = {p for p in src.rglob("*") if p.is_file()} if src.exists() else set()
    res = _fresh(cfg)
    materialize(cfg, cache, res)
    used = _source_files(res, src)
    redo = []
    for p in used:
        why = file_problem(p) if p in before else None
        if why is None:
            continue
        redo.append(p)
        if why != "unsealed":
            cache.notes.append(
                f"cache: the sources file {p.relative_to(src)} failed verification ({why}); it was regenerated"
            )
    if redo:
        for p in redo:
            for q in (p, p.with_name(p.name + ".manifest.json")):
                if q.is_dir() and not q.is_symlink():
                    shutil.rmtree(q, ignore_errors=True)
                elif q is p or not q.is_file():
                    q.unlink(missing_ok=True)
        res = _fresh(cfg)
        materialize(cfg, cache, res)
        used = _source_files(res, src)
    for p in used:
        if p not in before or p in redo:
            seal_file(p)
    return res


def _fresh(cfg: Config) -> Resolved:
    return Resolved(systems=list(cfg.systems), mt_refs=cfg.mt.refs if cfg.mt else (),
                    mt_src=cfg.mt.source if cfg.mt else None)


def _source_files(res: Resolved, src: Path) -> list[Path]:
    """The files under ``src`` that ``res`` uses, in a fixed order without repeats."""
    paths = [*res.mt_refs, res.mt_src, res.mt_docids, res.english] + [f for s in res.systems
                                                                        for f in (s.hyp, s.docs, s.queries)]
    out: dict[Path, None] = {}
    for f in paths:
        if f:
            p = Path(f).resolve()
            if p.is_relative_to(src):
                out[p] = None
    return list(out)
