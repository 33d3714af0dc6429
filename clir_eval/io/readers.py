"""Readers for document collections and queries (plain or .gz; errors name file and line).

Documents: JSONL (``{"id", "text"}``, or ``title`` + ``text``/``body``), TSV (``id<TAB>text``)
or line-aligned text (one document per line; ids are line numbers or come from an id file).
Empty documents are legal and kept -- an MT system may output nothing for a document, and
every system's collection must have the same id set.

Queries: classic TREC topics (``<top> <num> Number: 701 <title> ... <desc> Description: ...
<narr> Narrative: ... </top>``), TSV (``qid<TAB>text``) or JSONL; one or several files, a
directory or a glob.
"""

from __future__ import annotations

import functools
import glob as _glob
import hashlib
import json
import os
import re
import stat
import sys
from array import array
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Iterator, Mapping, Sequence

from ..errors import UserError
from .files import PathLike, iter_lines, read_lines, read_text

QUERY_FORMATS = ("trec", "tsv", "jsonl")
TOPIC_FIELDS = ("title", "desc", "narr")

_ID_KEYS = ("id", "docid", "_id")
_QID_KEYS = ("id", "qid", "query_id", "_id")
_FIELD_ALIASES = {"title": ("title",), "desc": ("desc", "description"), "narr": ("narr", "narrative")}


def _bad_id(ident: str) -> bool:
    return not ident or len(ident.split()) != 1 or ident.split()[0] != ident


@dataclass(frozen=True)
class Documents:
    """A collection: parallel tuples of unique document ids and texts (texts may be empty)."""

    ids: tuple[str, ...]
    texts: tuple[str, ...]
    source: str = ""

    def __post_init__(self) -> None:
        if len(self.ids) != len(self.texts):
            raise ValueError(f"{len(self.ids)} ids but {len(self.texts)} texts")
        where = f" in {self.source}" if self.source else ""
        if len(set(self.ids)) != len(self.ids):
            seen: set[str] = set()
            for i, d in enumerate(self.ids, 1):
                if d in seen:
                    raise UserError(f"duplicate document id {d!r}{where} (document {i}); document ids must be unique")
                seen.add(d)
        for i, d in enumerate(self.ids, 1):
            if not isinstance(d, str) or _bad_id(d):
                raise UserError(
                    f"bad document id {d!r}{where} (document {i}); ids must be non-empty and contain no whitespace"
                )
            if not isinstance(self.texts[i - 1], str):
                raise UserError(f"document {d!r}{where}: text must be a string, got {type(self.texts[i - 1]).__name__}")

    @classmethod
    def from_pairs(cls, pairs: Iterable[tuple[str, str]], source: str = "") -> "Documents":
        """Build from (id, text) pairs, e.g. by the WMT-XML and Europarl readers."""
        ids: list[str] = []
        texts: list[str] = []
        for ident, text in pairs:
            ids.append(ident)
            texts.append(text)
        return cls(tuple(ids), tuple(texts), source)

    def __len__(self) -> int:
        return len(self.ids)

    def __iter__(self):
        return iter(zip(self.ids, self.texts))

    @functools.cached_property
    def checksum(self) -> str:
        """sha1 over ids and texts in order (independent of the file format they came from)."""
        h = hashlib.sha1()
        self.update_checksum(h)
        return h.hexdigest()

    def update_checksum(self, h) -> None:
        """Feed ``h`` (a hash's ``update``, or a binary file's ``write``) the bytes :attr:`checksum`
        hashes, so that a collection read in parts hashes the same."""
        put = h.update if hasattr(h, "update") else h.write
        for ident, text in zip(self.ids, self.texts):
            put(b"%s\t%s\n" % (ident.encode("utf-8"), text.encode("utf-8", "surrogatepass")))


def _base_suffix(path: PathLike) -> str:
    name = Path(path).name.lower()
    if name.endswith(".gz"):
        name = name[:-3]
    return Path(name).suffix


def guess_doc_format(path: PathLike) -> str:
    """The document format named by the file's extension (``.gz`` aside)."""
    suffix = _base_suffix(path)
    fmt = next((f.name for f in DOCUMENT_FORMATS.values() if suffix in f.extensions), None)
    if fmt is None:
        exts = _or([e for f in DOCUMENT_FORMATS.values() for e in f.extensions])
        raise UserError(
            f"cannot tell the document format of {path} from its extension; name it {exts} "
            f"(optionally .gz) or pass the format ({', '.join(DOC_FORMATS)})"
        )
    return fmt


def _or(items: Sequence[str]) -> str:
    return ", ".join(items[:-1]) + " or " + items[-1] if len(items) > 1 else "".join(items)


def _json_line(path: PathLike, lineno: int, line: str) -> dict:
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as e:
        raise UserError(f"{path}:{lineno}: invalid JSON ({e.msg}, column {e.colno})") from None
    if not isinstance(obj, dict):
        raise UserError(f"{path}:{lineno}: expected a JSON object per line, found {type(obj).__name__}")
    if _SURROGATE_ESCAPE.search(line):  # a \uD800-\uDFFF escape not part of a pair is no character
        _check_no_surrogate(path, lineno, obj)
    return obj


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _check_no_surrogate(path: PathLike, lineno: int, value) -> None:
    """Refuse a lone UTF-16 surrogate (e.g. ``"\\ud800"`` without its pair) in any string of a JSON
    value: it is no Unicode character and cannot be written as UTF-8."""
    if isinstance(value, dict):
        for k, v in value.items():
            _check_no_surrogate(path, lineno, k)
            _check_no_surrogate(path, lineno, v)
    elif isinstance(value, list):
        for v in value:
            _check_no_surrogate(path, lineno, v)
    elif isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as e:
            raise UserError(
                f"{path}:{lineno}: a lone surrogate \\u{ord(value[e.start]):04x} in a JSON string (half of a "
                "UTF-16 pair, no character); fix the escape or re-export the file as UTF-8"
            ) from None


def _json_id(path: PathLike, lineno: int, obj: dict, keys: Sequence[str], what: str) -> str:
    for key in keys:
        if key in obj:
            value = obj[key]
            if isinstance(value, bool) or not isinstance(value, (str, int)):
                raise UserError(f"{path}:{lineno}: {what} id {value!r} must be a string or an integer")
            return str(value)
    raise UserError(f"{path}:{lineno}: no {what} id; each line needs an {keys[0]!r} field")


def _json_str(path: PathLike, lineno: int, obj: dict, key: str) -> str:
    value = obj[key]
    if not isinstance(value, str):
        raise UserError(f'{path}:{lineno}: field {key!r} must be a string (use "" for an empty text)')
    return value


def _read_jsonl_docs(path: PathLike, span=None):
    for lineno, line in iter_lines(path, span=span):
        if not line.strip():
            continue
        obj = _json_line(path, lineno, line)
        ident = _json_id(path, lineno, obj, _ID_KEYS, "document")
        parts = []
        if "title" in obj:
            parts.append(_json_str(path, lineno, obj, "title"))
        body_key = "text" if "text" in obj else "body" if "body" in obj else None
        if body_key:
            parts.append(_json_str(path, lineno, obj, body_key))
        if not parts:
            raise UserError(f"{path}:{lineno}: document {ident!r} has no 'text' (or 'body'/'title') field")
        yield lineno, ident, " ".join(parts)


def _read_tsv_docs(path: PathLike, span=None):
    for lineno, line in iter_lines(path, span=span):
        if not line.strip():
            continue
        ident, tab, text = line.partition("\t")
        if not tab:
            raise UserError(f"{path}:{lineno}: expected 'id<TAB>text', found no tab")
        yield lineno, ident, text


Rows = Callable[[PathLike, "tuple[int, int | None, int] | None"], Iterator[tuple[int, str, str]]]


@dataclass(frozen=True)
class DocFormat:
    """A document file format: its extensions (format guessing), a short description for help texts,
    and the reader of its (line, id, text) rows (None: line-aligned text, ids are line numbers)."""

    name: str
    extensions: tuple[str, ...]
    description: str
    rows: Rows | None


DOCUMENT_FORMATS: dict[str, DocFormat] = {f.name: f for f in (
    DocFormat("jsonl", (".jsonl",), "", _read_jsonl_docs),
    DocFormat("tsv", (".tsv",), "id<TAB>text", _read_tsv_docs),
    DocFormat("lines", (".txt",), "one per line", None),
)}
DOC_FORMATS = tuple(DOCUMENT_FORMATS)


def doc_files_help() -> str:
    """The document files readable, for help texts: ``.jsonl, .tsv (id<TAB>text) or .txt (one per line)``."""
    return _or([", ".join(f.extensions) + (f" ({f.description})" if f.description else "")
                for f in DOCUMENT_FORMATS.values()])


def doc_formats_help() -> str:
    """The format names, for help texts: ``jsonl, tsv or lines``."""
    return _or(list(DOC_FORMATS))


def _collection_format(path: PathLike, fmt: str | None, ids_path: PathLike | None,
                       span: tuple[int, int | None, int] | None) -> str:
    """The collection's format (given or guessed from the extension), checked with the id file and span."""
    if span is not None and ids_path is not None:
        raise ValueError("span and ids_path cannot be combined")
    fmt = (fmt or guess_doc_format(path)).lower()
    if fmt not in DOC_FORMATS:
        raise UserError(f"unknown document format {fmt!r}; choose one of {', '.join(DOC_FORMATS)}")
    if ids_path is not None and fmt != "lines":
        raise UserError(f"a document id file only applies to line-aligned text (format 'lines'), not {fmt!r}")
    return fmt


def read_documents(path: PathLike, fmt: str | None = None, ids_path: PathLike | None = None,
                   span: tuple[int, int | None, int] | None = None) -> Documents:  # fmt: skip
    """Read a collection; ``fmt`` in jsonl|tsv|lines, guessed from the extension when None.

    ``ids_path`` (lines format only): one document id per line, aligned with the documents.
    ``span = (first line, its byte offset or None, line count)``: only the documents on those
    lines (an index shard; ids of the lines format stay the line numbers, duplicates are
    checked within the span, and the span may hold no document).
    """
    fmt = _collection_format(path, fmt, ids_path, span)
    rows_of = DOCUMENT_FORMATS[fmt].rows
    if rows_of is None:
        texts = [line for _, line in iter_lines(path, span=span)]
        if ids_path is not None:
            ids = read_lines(ids_path)
            _check_id_file(ids_path, ids, path, len(texts))
        else:
            first = 1 if span is None else span[0]
            ids = [str(i) for i in range(first, first + len(texts))]
        docs = Documents(tuple(ids), tuple(texts), str(path))
    else:
        rows = rows_of(path, span)
        ids, texts, seen = [], [], {}
        for lineno, ident, text in rows:
            if _bad_id(ident):
                raise UserError(f"{path}:{lineno}: bad document id {ident!r}; ids must be non-empty without whitespace")
            if ident in seen:
                raise UserError(f"{path}:{lineno}: duplicate document id {ident!r} (first on line {seen[ident]})")
            seen[ident] = lineno
            ids.append(ident)
            texts.append(text)
        docs = Documents(tuple(ids), tuple(texts), str(path))
    if not len(docs) and span is None:
        raise UserError(f"{path} contains no documents")
    return docs


class DocumentStream:
    """A collection read batch by batch (for an index build that must not hold every text):
    :meth:`batches` yields lists of texts of about ``max_chars`` code points, each dropped by
    the reader once yielded, and checks the file exactly as :func:`read_documents` does, with
    the same messages. Once a pass has ended, :attr:`ids`, :attr:`checksum` (as
    :attr:`Documents.checksum`) and :attr:`n_empty` are set; every pass reads the file again.
    """

    def __init__(self, path: PathLike, fmt: str | None = None, ids_path: PathLike | None = None,
                 span: tuple[int, int | None, int] | None = None):  # fmt: skip
        fmt = _collection_format(path, fmt, ids_path, span)
        self.path, self.fmt, self.ids_path, self.span, self.source = path, fmt, ids_path, span, str(path)
        self.ids: tuple[str, ...] | None = None
        self.checksum: str | None = None
        self.n_empty: int | None = None

    def __len__(self) -> int:
        if self.ids is None:
            raise RuntimeError("the collection has not been read yet")
        return len(self.ids)

    def batches(self, max_chars: int = 1 << 22, sink: Callable[[bytes], object] | None = None) -> Iterator[list[str]]:
        """Yield the texts in order, a batch at a time; sets ids, checksum and n_empty at the end.
        ``sink`` gets the bytes the checksum hashes (:meth:`Documents.update_checksum`)."""
        h = hashlib.sha1()
        ids: list[str] = []
        n_empty = 0
        batch: list[str] = []
        size = 0
        for ident, text in self._pairs(ids):
            if not text.strip():
                n_empty += 1
            batch.append(text)
            size += len(text) + 1
            if size >= max_chars:
                self._hash(h, ids, batch, sink)
                yield batch
                batch, size = [], 0
        if batch:
            self._hash(h, ids, batch, sink)
            yield batch
        self.ids, self.checksum, self.n_empty = tuple(ids), h.hexdigest(), n_empty

    def scan(self) -> None:
        """One pass without keeping texts: sets ids, checksum and n_empty (and checks the file)."""
        for _ in self.batches():
            pass

    def read(self) -> Documents:
        """The whole collection in memory (:func:`read_documents`)."""
        return read_documents(self.path, fmt=self.fmt, ids_path=self.ids_path, span=self.span)

    @staticmethod
    def _hash(h, ids: list[str], batch: list[str], sink=None) -> None:
        """Hash the batch's documents (the last ``len(batch)`` ids) as :meth:`Documents.update_checksum`."""
        rows = map("\t".join, zip(ids[len(ids) - len(batch) :], batch))
        data = ("\n".join(rows) + "\n").encode("utf-8", "surrogatepass")  # "id\ttext\n" per document
        h.update(data)
        if sink is not None:
            sink(data)

    def _pairs(self, ids: list[str]) -> Iterator[tuple[str, str]]:
        """(id, text) per document, each id appended to ``ids`` (for the lines format with an id
        file, the ids file's errors come after the texts' own, as in :func:`read_documents`)."""
        path = self.path
        rows_of = DOCUMENT_FORMATS[self.fmt].rows
        if rows_of is None and self.ids_path is None:
            for lineno, line in iter_lines(path, span=self.span):
                ids.append(str(lineno))
                yield ids[-1], line
            if not ids and self.span is None:
                raise UserError(f"{path} contains no documents")
            return
        if rows_of is None:
            try:
                given, error = read_lines(self.ids_path), None
            except UserError as e:
                given, error = [], e
            n = 0
            for _, line in iter_lines(path):
                ids.append(given[n] if n < len(given) else "")
                n += 1
                yield ids[-1], line
            if error is not None:
                raise error
            _check_id_file(self.ids_path, given, path, n)
            if not ids:
                raise UserError(f"{path} contains no documents")
            return
        seen: set[str] = set()
        lines = array("q")
        for lineno, ident, text in rows_of(path, self.span):
            if _bad_id(ident):
                raise UserError(f"{path}:{lineno}: bad document id {ident!r}; ids must be non-empty without whitespace")
            if ident in seen:
                first = lines[ids.index(ident)]
                raise UserError(f"{path}:{lineno}: duplicate document id {ident!r} (first on line {first})")
            seen.add(ident)
            lines.append(lineno)
            ids.append(ident)
            yield ident, text
        if not ids and self.span is None:
            raise UserError(f"{path} contains no documents")


def _check_id_file(ids_path: PathLike, ids: Sequence[str], path: PathLike, n_texts: int) -> None:
    """The checks of a line-aligned id file (count, bad ids, duplicates), in this order."""
    if len(ids) != n_texts:
        raise UserError(f"{ids_path} has {len(ids)} ids but {path} has {n_texts} lines; they must be line-aligned")
    for lineno, ident in enumerate(ids, 1):
        if _bad_id(ident):
            raise UserError(f"{ids_path}:{lineno}: bad document id {ident!r}; one id per line, no whitespace")
    seen: dict[str, int] = {}
    for lineno, ident in enumerate(ids, 1):
        if ident in seen:
            raise UserError(f"{ids_path}:{lineno}: duplicate document id {ident!r} (first on line {seen[ident]})")
        seen[ident] = lineno


# ---------------------------------------------------------------- queries

_TAG_RE = re.compile(r"<\s*(/?)\s*(top|num|title|desc|narr)\s*>", re.I)
_PREFIX = {"num": re.compile(r"^\s*number\s*:", re.I), "desc": re.compile(r"^\s*description\s*:", re.I),
           "narr": re.compile(r"^\s*narrative\s*:", re.I)}  # fmt: skip


def _parse_trec_topics(path: PathLike, fields: Sequence[str]) -> list[tuple[int, str, str]]:
    """(line, qid, text) per topic of a classic TREC topics file."""
    text = read_text(path)

    def line_of(pos: int) -> int:
        return text.count("\n", 0, pos) + 1

    out: list[tuple[int, str, str]] = []
    current: dict[str, str] | None = None
    top_pos = 0
    open_field: tuple[str, int] | None = None

    def close_field(end: int) -> None:
        nonlocal open_field
        if open_field is not None and current is not None:
            name, start = open_field
            value = text[start:end]
            if name in _PREFIX:
                value = _PREFIX[name].sub("", value, count=1)
            current.setdefault(name, " ".join(value.split()))
        open_field = None

    for m in _TAG_RE.finditer(text):
        closing, tag = m.group(1) == "/", m.group(2).lower()
        if tag == "top":
            if not closing:
                if current is not None:
                    raise UserError(f"{path}:{line_of(m.start())}: <top> inside another topic; missing </top>")
                current, top_pos, open_field = {}, m.start(), None
                continue
            if current is None:
                raise UserError(f"{path}:{line_of(m.start())}: </top> without a matching <top>")
            close_field(m.start())
            lineno = line_of(top_pos)
            qid = current.get("num", "")
            if not qid:
                raise UserError(f"{path}:{lineno}: topic without a <num> number")
            if _bad_id(qid):
                raise UserError(f"{path}:{lineno}: bad topic number {qid!r}; it must be one token")
            parts = []
            for f in fields:
                if f not in current:
                    raise UserError(f"{path}:{lineno}: topic {qid} has no <{f}> field; choose other query fields")
                parts.append(current[f])
            out.append((lineno, qid, " ".join(p for p in parts if p)))
            current = None
            continue
        if current is None:
            raise UserError(f"{path}:{line_of(m.start())}: <{tag}> outside a <top> ... </top> topic")
        close_field(m.start())
        if not closing:
            open_field = (tag, m.end())
    if current is not None:
        raise UserError(f"{path}:{line_of(top_pos)}: topic not closed; add </top>")
    if not out:
        raise UserError(f"{path}: no TREC topics found (expected <top> <num> Number: ... <title> ... </top>)")
    return out


def _read_tsv_queries(path: PathLike) -> list[tuple[int, str, str]]:
    out = []
    for lineno, line in iter_lines(path):
        if not line.strip():
            continue
        qid, tab, text = line.partition("\t")
        if not tab:
            raise UserError(f"{path}:{lineno}: expected 'qid<TAB>query text', found no tab")
        out.append((lineno, qid, text))
    return out


def _read_jsonl_queries(path: PathLike, fields: Sequence[str]) -> list[tuple[int, str, str]]:
    out = []
    for lineno, line in iter_lines(path):
        if not line.strip():
            continue
        obj = _json_line(path, lineno, line)
        qid = _json_id(path, lineno, obj, _QID_KEYS, "query")
        if "text" in obj:
            text = _json_str(path, lineno, obj, "text")
        else:
            parts = []
            for f in fields:
                key = next((k for k in _FIELD_ALIASES[f] if k in obj), None)
                if key is None:
                    raise UserError(f"{path}:{lineno}: query {qid!r} has neither 'text' nor {f!r}")
                parts.append(" ".join(_json_str(path, lineno, obj, key).split()))
            text = " ".join(p for p in parts if p)
        out.append((lineno, qid, text))
    return out


def _expand_paths(path) -> list[Path]:
    items = [path] if isinstance(path, (str, Path)) or not isinstance(path, Sequence) else list(path)
    out: list[Path] = []
    for item in items:
        s = str(item)
        p = Path(s)
        if p.is_dir():
            files = sorted(f for f in p.iterdir() if not f.name.startswith(".") and not f.is_dir())
            if not files:
                raise UserError(f"query directory {p} contains no files")
            out.extend(_regular(f, f"query directory {p}") for f in files)
        elif not p.exists() and any(c in s for c in "*?["):
            matches = sorted(Path(m) for m in _glob.glob(s) if not Path(m).is_dir())
            if not matches:
                raise UserError(f"no query files match {s!r}")
            out.extend(_regular(f, f"query files {s!r}") for f in matches)
        else:
            out.append(p)
    if not out:
        raise UserError("no query files given")
    return out


def _regular(f: Path, where: str) -> Path:
    """``f``, a file of a query directory or glob: a regular file (through a link), never skipped silently."""
    try:
        mode = os.stat(f).st_mode
    except OSError as e:
        raise UserError(f"{where}: cannot read {f} ({e.strerror}); remove it or fix the link") from None
    if not stat.S_ISREG(mode):
        raise UserError(f"{where}: {f} is not a regular file (a FIFO, device or socket); remove it from the "
                        "directory or give the query files one by one")
    return f


def _guess_query_format(path: Path) -> str:
    suffix = _base_suffix(path)
    if suffix == ".tsv":
        return "tsv"
    if suffix == ".jsonl":
        return "jsonl"
    head = read_text(path, 65536).lower()
    if "<top>" in head:
        return "trec"
    raise UserError(
        f"cannot tell the query format of {path}; use .tsv or .jsonl, TREC topics (<top>...), "
        f"or pass the format ({', '.join(QUERY_FORMATS)})"
    )


def _normalize_fields(fields) -> tuple[str, ...]:
    if isinstance(fields, str):
        fields = [f for f in re.split(r"[,+\s]+", fields) if f]
    out = tuple(f.strip().lower() for f in fields)
    if not out:
        raise UserError(f"no query fields given; choose from {', '.join(TOPIC_FIELDS)}")
    for f in out:
        if f not in TOPIC_FIELDS:
            raise UserError(f"unknown query field {f!r}; choose from {', '.join(TOPIC_FIELDS)} (e.g. 'title,desc')")
    return out


def read_queries(path, fmt: str | None = None, fields: Sequence[str] | str = ("title",)) -> dict[str, str]:
    """Read queries into ``{qid: text}`` in file order.

    ``path``: a file, a directory (all its files, sorted), a glob, or a list of these.
    ``fmt``: trec|tsv|jsonl (guessed per file when None). ``fields`` (TREC topics and
    field-wise JSONL): any of title, desc, narr, joined with a space in the given order.
    Query ids must be unique across all files.
    """
    fields = _normalize_fields(fields)
    if fmt is not None and fmt.lower() not in QUERY_FORMATS:
        raise UserError(f"unknown query format {fmt!r}; choose one of {', '.join(QUERY_FORMATS)}")
    queries: dict[str, str] = {}
    where: dict[str, str] = {}
    blank: list[str] = []
    for p in _expand_paths(path):
        f = fmt.lower() if fmt else _guess_query_format(p)
        if f == "trec":
            rows = _parse_trec_topics(p, fields)
        elif f == "tsv":
            rows = _read_tsv_queries(p)
        else:
            rows = _read_jsonl_queries(p, fields)
        for lineno, qid, text in rows:
            if _bad_id(qid):
                raise UserError(f"{p}:{lineno}: bad query id {qid!r}; ids must be non-empty without whitespace")
            if not text.strip():
                blank.append(f"{p}:{lineno}: {qid!r}")
            if qid in queries:
                raise UserError(f"{p}:{lineno}: duplicate query id {qid!r} (first at {where[qid]})")
            queries[qid] = text
            where[qid] = f"{p}:{lineno}"
    if not queries:
        raise UserError(f"no queries found in {path}")
    if blank:
        more = f" and {len(blank) - 1} more" if len(blank) > 1 else ""
        sys.stderr.write(f"note: {len(blank)} of {len(queries)} queries have no text ({blank[0]}{more}); a blank "
                         "query retrieves nothing and scores 0 on every measure -- give it a text or remove it\n")
    return queries


def queries_from_mapping(queries: Mapping[str, str]) -> dict[str, str]:
    """Validate an in-memory query mapping (ids without whitespace, string texts)."""
    out = {}
    for qid, text in queries.items():
        if not isinstance(qid, str) or _bad_id(qid):
            raise UserError(f"bad query id {qid!r}; ids must be non-empty without whitespace")
        if not isinstance(text, str):
            raise UserError(f"query {qid!r}: text must be a string")
        out[qid] = text
    return out
