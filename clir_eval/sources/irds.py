"""ir_datasets as a source: a dataset's queries, qrels or documents from the local ir_datasets store, as plain files.

A config names them ``irds:<dataset id>`` (``queries.file``, ``relevance.qrels``,
``collection.english``; documents may pick fields: ``irds:neuclir/1/fa?fields=title,text``).
Nothing is downloaded: ir_datasets' network downloaders are switched off while reading, and a
dataset whose files are not in the local store (``IR_DATASETS_HOME``, default
``~/.ir_datasets``) is an error that says how to fetch them once. The export is rewritten on
every load (atomically), so it is never trusted stale.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
from pathlib import Path
from typing import Iterator, Sequence

from .. import lazylibs
from ..errors import UserError
from ..io.files import atomic_write, safe_filename

PREFIX = "irds:"
DOC_FIELDS = ("title", "text")


def is_irds(value: str) -> bool:
    return isinstance(value, str) and value.startswith(PREFIX)


def is_export(path: str) -> bool:
    """A file written by :func:`export` (its fields are already applied)."""
    if Path(path).parent.name != "clir_eval-exports":
        return False  # decided without importing ir_datasets (a third of a second) or creating its home
    return Path(path).parent == Path(lazylibs.ir_datasets_util().home_path()) / "clir_eval-exports"


def parse(value: str) -> tuple[str, tuple[str, ...] | None]:
    """``irds:ID[?fields=a,b]`` -> (ID, fields or None)."""
    spec = value[len(PREFIX):].strip()
    ds_id, _, query = spec.partition("?")
    fields = None
    if query:
        key, _, val = query.partition("=")
        if key != "fields" or not val.strip():
            raise UserError(f"{value!r}: the only option is ?fields=a,b (e.g. irds:{ds_id}?fields=title,text)")
        fields = tuple(f.strip() for f in val.split(",") if f.strip())
    if not ds_id:
        raise UserError(f"{value!r}: give an ir_datasets id, e.g. irds:hc4/ru/test")
    return ds_id, fields


class _Offline(Exception):
    pass


@contextlib.contextmanager
def _no_downloads(attempted: list[str]) -> Iterator[None]:
    """Make every network downloader of ir_datasets raise (recording what it wanted) instead of
    fetching, and keep ir_datasets' own download warnings off the console."""
    download = lazylibs.ir_datasets_util().download
    classes = [c for c in download.BaseDownload.__subclasses__() if c is not download.LocalDownload]

    def refuse(self, *a, **kw):
        attempted.append(repr(self))
        raise _Offline(repr(self))

    saved = {c: c.__dict__.get("stream") for c in classes}
    disabled = logging.root.manager.disable
    logging.disable(logging.WARNING)  # ir_datasets' loggers set their own levels; its warnings here are ours to word
    for c in classes:
        c.stream = refuse
    try:
        yield
    finally:
        logging.disable(disabled)
        for c, fn in saved.items():
            if fn is None:
                del c.stream
            else:
                c.stream = fn


def _dataset(ds_id: str, where: str):
    ir_datasets = lazylibs.ir_datasets()
    try:
        return ir_datasets.load(ds_id)
    except KeyError:
        raise UserError(f"{where}: {ds_id!r} is not an ir_datasets id (see https://ir-datasets.com)") from None


def _records(ds_id: str, part: str, where: str):
    """The dataset's records of one part (queries|qrels|docs), read without downloading."""
    ds = _dataset(ds_id, where)
    if not getattr(ds, f"has_{part}")():
        raise UserError(f"{where}: ir_datasets {ds_id!r} has no {part}")
    it = getattr(ds, f"{part}_iter")()
    fetch = (f"fetch them once: python -c \"import ir_datasets; "
             f"[None for _ in ir_datasets.load('{ds_id}').{part}_iter()]\" (needs network; some datasets need a "
             "licence or a manual download, see https://ir-datasets.com)")
    attempted: list[str] = []
    try:
        with _no_downloads(attempted):
            yield from it
    except UserError:
        raise
    except Exception as e:  # ir_datasets' own errors (missing manual download, corrupt file, ...)
        if attempted:
            raise UserError(f"{where}: the {part} of ir_datasets {ds_id!r} are not in the local store "
                            f"(it would download {attempted[0]}); {fetch}") from None
        raise UserError(f"{where}: ir_datasets {ds_id!r} {part}: {type(e).__name__}: {e}") from None


def _text(record, fields: Sequence[str], ds_id: str, where: str) -> str:
    missing = [f for f in fields if not hasattr(record, f)]
    if missing:
        have = ", ".join(n for n in record._fields if isinstance(getattr(record, n), str))
        raise UserError(f"{where}: ir_datasets {ds_id!r} records have no field {missing[0]!r}; fields: {have}")
    return " ".join(str(getattr(record, f)).replace("\t", " ").replace("\n", " ").strip() for f in fields).strip()


def _out(ds_id: str, part: str, fields: Sequence[str] | None, suffix: str) -> Path:
    home_path = lazylibs.ir_datasets_util().home_path
    tag = hashlib.sha256(json.dumps([ds_id, part, list(fields or ())]).encode()).hexdigest()[:12]
    d = Path(home_path()) / "clir_eval-exports"
    d.mkdir(parents=True, exist_ok=True)
    return d / f"{safe_filename(ds_id)}.{part}.{tag}{suffix}"


def export(value: str, part: str, fields: Sequence[str] = ("title",), where: str = "") -> str:
    """Write one part of an ir_datasets dataset as a plain file and return its path:
    queries -> TSV ``qid<TAB>text`` (the given fields joined), qrels -> TREC qrels,
    docs -> JSONL ``{"id", "text"}`` (fields from the spec, default title + text)."""
    ds_id, spec_fields = parse(value)
    where = where or value
    if part == "queries":
        fields = tuple(spec_fields or fields)
        path = _out(ds_id, part, fields, ".tsv")
        with atomic_write(path) as fh:
            for q in _records(ds_id, "queries", where):
                fh.write(f"{q.query_id}\t{_text(q, fields, ds_id, where)}\n")
    elif part == "qrels":
        path = _out(ds_id, part, None, ".txt")
        with atomic_write(path) as fh:
            for r in _records(ds_id, "qrels", where):
                fh.write(f"{r.query_id} 0 {r.doc_id} {int(r.relevance)}\n")
    elif part == "docs":
        path = _out(ds_id, part, spec_fields, ".jsonl")
        with atomic_write(path) as fh:
            for d in _records(ds_id, "docs", where):
                use = spec_fields or tuple(f for f in DOC_FIELDS if hasattr(d, f)) or ("text",)
                fh.write(json.dumps({"id": d.doc_id, "text": _text(d, use, ds_id, where)}, ensure_ascii=False) + "\n")
    else:
        raise ValueError(part)
    return str(path)
