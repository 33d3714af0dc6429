"""Input resolution: sources (WMT XML, Europarl) turned into plain files, queries and qrels read."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..config.schema import Config, SystemSpec
from ..io.files import file_checksum
from ..io.trec import Qrels, read_qrels
from .cache import Cache, file_problem, seal_file


@dataclass
class Resolved:
    """Inputs after sources are materialised as plain files (filled in by ``sources.materialize``)."""

    systems: list[SystemSpec]
    mt_refs: tuple[str, ...] = ()
    english: str | None = None  # path of the English-side documents
    doc_format: str | None = None
    queries: dict[str, str] = field(default_factory=dict)
    query_skips: dict[str, int] = field(default_factory=dict)  # generated queries: reason -> documents skipped
    qrels: Qrels | None = None
    qrels_source: str = ""
    human: dict[str, dict[str, float]] = field(default_factory=dict)  # system -> {score_name: value}
    notes: list[str] = field(default_factory=list)


def resolve_inputs(cfg: Config, cache: Cache) -> Resolved:
    """Turn the config's sources into plain files and in-memory queries/qrels."""
    from ..io.readers import read_queries

    res = _fresh(cfg)
    if cfg.wmt is not None or cfg.europarl is not None:
        res = materialize_verified(cfg, cache)
    if cfg.collection is not None:
        res.english = cfg.collection.english
        res.doc_format = cfg.collection.format
    if cfg.queries is not None and cfg.queries.file:
        queries = read_queries(list(cfg.queries.file), fmt=cfg.queries.format, fields=tuple(cfg.queries.fields))
        if cfg.queries.limit:
            queries = dict(list(queries.items())[: cfg.queries.limit])
        res.queries = queries
    if cfg.relevance is not None and cfg.relevance.qrels:
        res.qrels = read_qrels(cfg.relevance.qrels)
        res.qrels_source = f"file:{Path(cfg.relevance.qrels).name}|sha1:{file_checksum(cfg.relevance.qrels)[:12]}"
    return res


def materialize_verified(cfg: Config, cache: Cache) -> Resolved:
    """Materialise the WMT / Europarl sources under ``cache/sources/``, trusting a file written
    by an earlier run only when it matches its manifest (size, SHA-1): a damaged one is
    regenerated with a note in ``cache.notes``, an unsealed one (a killed run) silently."""
    from ..sources.materialize import materialize

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
            p.unlink(missing_ok=True)
        res = _fresh(cfg)
        materialize(cfg, cache, res)
        used = _source_files(res, src)
    for p in used:
        if p not in before or p in redo:
            seal_file(p)
    return res


def _fresh(cfg: Config) -> Resolved:
    return Resolved(systems=list(cfg.systems), mt_refs=cfg.mt.refs if cfg.mt else ())


def _source_files(res: Resolved, src: Path) -> list[Path]:
    """The files under ``src`` that ``res`` uses, in a fixed order without repeats."""
    paths = [*res.mt_refs, res.english] + [f for s in res.systems for f in (s.hyp, s.docs)]
    out: dict[Path, None] = {}
    for f in paths:
        if f:
            p = Path(f).resolve()
            if p.is_relative_to(src):
                out[p] = None
    return list(out)
