"""Query translation (``translate: queries``), the second CLIR architecture: each MT system translates the
queries, and every system's translated queries search one collection in its own language, indexed once.

The reference side runs the human translations of the queries over the same collection (its run is the RBO
reference and, with pseudo-qrels, the relevance); MT metrics score each system's query translations against
the human ones. From a WMT XML file the queries are a segment of each news document (the headline, or the lead
with ``first-sentence``): the reference's segment is the reference side's query, each ``<hyp>``'s is that
system's, the ``<src>``'s the MT source, and the collection is the reference documents without the query
segments. From files, each system gives its query translations (``systems[].queries``) with the ids of
``queries.file``, the human translations.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Mapping, Sequence

from ..config.schema import Config, SystemSpec
from ..errors import UserError
from ..io.files import atomic_write, safe_filename, text_checksum
from ..io.readers import read_queries

QUERY_SEGMENT = {"headline": 0, "first-sentence": 1}
"""The 0-based segment that is a generated query (:mod:`.querygen`), in every translation of a document."""


def write_queries(path: Path, queries: Mapping[str, str]) -> str:
    """Write ``{qid: text}`` as JSONL (``{"id", "text"}`` per line) once (content-addressed name); return the path."""
    if not path.exists():
        with atomic_write(path) as fh:
            for q, t in queries.items():
                fh.write(json.dumps({"id": q, "text": t}, ensure_ascii=False) + "\n")
    return str(path)


def write_lines(path: Path, lines: Sequence[str]) -> str:
    if not path.exists():
        with atomic_write(path) as fh:
            for line in lines:
                fh.write(" ".join(line.split()) + "\n")
    return str(path)


def segment_query(segments: Sequence[str] | None, index: int) -> str:
    """A translation's query: its segment ``index`` with whitespace normalised as the generator does;
    empty when the translation lacks the document (a system that outputs nothing retrieves nothing)."""
    if segments is None or len(segments) <= index:
        return ""
    return " ".join(segments[index].split())


def wmt_query_translation(cfg: Config, ts, labels: list[tuple[str, str]], queries: Mapping[str, str], d: Path,
                          res) -> None:
    """Systems, MT files and notes of query translation from WMT XML ``ts`` (a :class:`~.wmt.WmtTestSet`):
    ``labels`` (system name, translation label) from ``wmt:``, ``queries`` the reference side's (qid = docid),
    ``d`` the cache directory; fills ``res`` (:class:`~clir_eval.pipeline.inputs.Resolved`)."""
    w = cfg.wmt
    kind = cfg.queries.generate
    index = QUERY_SEGMENT[kind]
    qids = list(queries)
    systems = []
    lacking: dict[str, int] = {}
    for name, lb in labels:
        docs = ts.translation(lb)
        sq = {q: segment_query(docs.get(q), index) for q in qids}
        missing = sum(1 for q in qids if q not in docs)
        if missing:
            lacking[name] = missing
        path = write_queries(d / f"queries-{safe_filename(name)}-{text_checksum(*sq.values(), *qids)[:12]}.jsonl", sq)
        systems.append(SystemSpec(name, None, None, {"name": name, "label": lb}, path))
    for name, n in lacking.items():
        res.notes.append(f"{name} lacks {n} of {len(qids)} query documents; their queries are empty (retrieve "
                         "nothing) and left out of MT scoring")
    if cfg.mt is not None:
        common = [q for q in qids if all(q in ts.translation(lb) for _, lb in labels)]
        if len(common) < len(qids):
            res.notes.append(f"MT metrics are computed on the {len(common)} queries every system translates")
        ref = ts.references[w.reference]
        res.mt_refs = (write_lines(d / f"qt-ref-{w.reference}-{kind}.{len(common)}.txt",
                                   [segment_query(ref[q], index) for q in common]),)
        res.mt_src = write_lines(d / f"qt-src-{kind}.{len(common)}.txt", [segment_query(ts.source[q], index) for q in common])
        res.mt_docids = write_lines(d / f"qt-docids-{text_checksum(*common)[:12]}.txt", common)
        systems = [SystemSpec(s.name, write_lines(d / f"qt-hyp-{safe_filename(s.name)}-{kind}.{len(common)}.txt",
                                                  [segment_query(ts.translation(lb).get(q), index) for q in common]),
                              None, s.attrs, s.queries) for s, (_, lb) in zip(systems, labels)]
    res.systems = systems + list(res.systems)
    res.notes.append(f"Query translation: each system's translation of the {kind} of {len(qids)} documents is its "
                     f"query; one collection (reference {w.reference}, without the {kind}s) is indexed once and "
                     "searched by every system and by the reference side (the human translations)")


def file_query_translation(cfg: Config, cache, res) -> None:
    """Query translation from files: every system's query file must have the reference queries' ids (each
    query translated; an empty text where a system produced none). With ``mt:``, the MT test set is the queries:
    each system's translations line by line against the human ones (query order), written to the cache."""
    want = list(res.queries)
    d = cache.root / "sources" / f"qt-{text_checksum(*want, *res.queries.values())[:12]}"
    d.mkdir(parents=True, exist_ok=True)
    systems = []
    for s in res.systems:
        got = read_queries(s.queries, fmt=cfg.queries.format, fields=cfg.queries.fields)
        missing = [q for q in want if q not in got]
        extra = [q for q in got if q not in res.queries]
        if missing or extra:
            what = (f"lacks {len(missing)} of the {len(want)} queries (e.g. {missing[0]!r})" if missing else
                    f"has {len(extra)} query id(s) that queries.file lacks (e.g. {extra[0]!r})")
            raise UserError(f"systems[{s.name}].queries: {s.queries} {what}; a system's query translations must "
                            "have the ids of queries.file, each query once (an empty text where the system produced "
                            "none)")
        hyp = None
        if cfg.mt is not None:
            hyp = write_lines(d / f"hyp-{safe_filename(s.name)}-{text_checksum(*(got[q] for q in want))[:12]}.txt",
                              [got[q] for q in want])
        systems.append(SystemSpec(s.name, hyp, None, s.attrs, s.queries))
    res.systems = systems
    if cfg.mt is not None:
        res.mt_refs = (write_lines(d / "ref.txt", [res.queries[q] for q in want]),)
    res.notes.append(f"Query translation: {len(want)} queries translated by each system search one collection "
                     f"({Path(res.english).name}), indexed once; the reference side runs the human translations")


def system_queries(spec: SystemSpec, reference: Mapping[str, str], cfg: Config) -> tuple[tuple[str, str], ...]:
    """A system's translated queries in the reference queries' order (QT); the file was checked when the
    inputs were resolved (:func:`file_query_translation`) or written by :func:`wmt_query_translation`."""
    fmt, fields = (cfg.queries.format, cfg.queries.fields) if cfg.wmt is None else ("jsonl", ("title",))
    got = read_queries(spec.queries, fmt=fmt, fields=fields)
    return tuple((q, got.get(q, "")) for q in reference)
