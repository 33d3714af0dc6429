"""The item matrices of a run's item-level analysis, kept in the run directory for ``clir-eval design`` and
``clir-eval pool``: ``item_documents.json`` (per system and judged-relevant document: the item-level MT scores and
the document's retrievability, and how many queries judge each document relevant) and ``item_queries.json`` (per
system and query with a relevant document: the MT scores averaged over its relevant documents and the per-query IR
measures). results.json's ``item_level.documents_file`` / ``queries_file`` name them with their sha256, so a file
from another run or a changed file is refused when read back. Plain JSON (numbers written by ``repr``, so they read
back exactly; missing cells ``null``)."""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from ..errors import UserError
from ..limits import memory_bytes
from .files import read_bytes
from .results import finite_number

FILE = "item_documents.json"
FORMAT = "clir-eval item-level documents 1"
QUERIES_FILE = "item_queries.json"
QUERIES_FORMAT = "clir-eval item-level queries 1"
_RERUN = "re-run 'clir-eval run CONFIG --out {out}' with item_level enabled"


def _cells(m: np.ndarray) -> list[list[float | None]]:
    return [[None if math.isnan(v) else float(v) for v in row] for row in np.asarray(m, float).tolist()]


def documents_file(systems: Sequence[str], documents: Sequence[str], x: Mapping[str, np.ndarray],
                   y: Mapping[str, np.ndarray], queries: Sequence[int],
                   n_queries: int) -> tuple[str, dict[str, Any]]:  # fmt: skip
    """(the file's text, results.json's ``documents_file`` entry naming it)."""
    doc = {"format": FORMAT, "systems": list(systems), "documents": list(documents),
           "queries_per_document": [int(q) for q in queries], "n_queries": int(n_queries),
           "metrics": {k: _cells(v) for k, v in x.items()}, "targets": {k: _cells(v) for k, v in y.items()}}
    text = json.dumps(doc, ensure_ascii=False, separators=(",", ":"), allow_nan=False) + "\n"
    return text, {"file": FILE, "sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(),
                  "n_systems": len(systems), "n_documents": len(documents)}


def queries_file(systems: Sequence[str], queries: Sequence[str], x: Mapping[str, np.ndarray],
                 y: Mapping[str, np.ndarray]) -> tuple[str, dict[str, Any]]:  # fmt: skip
    """(the file's text, results.json's ``queries_file`` entry naming it)."""
    doc = {"format": QUERIES_FORMAT, "systems": list(systems), "queries": [str(q) for q in queries],
           "metrics": {k: _cells(v) for k, v in x.items()}, "targets": {k: _cells(v) for k, v in y.items()}}
    text = json.dumps(doc, ensure_ascii=False, separators=(",", ":"), allow_nan=False) + "\n"
    return text, {"file": QUERIES_FILE, "sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(),
                  "n_systems": len(systems), "n_queries": len(queries)}


def read_documents_file(out: Path, results: Mapping[str, Any]) -> dict[str, Any]:
    """The documents matrix of the run in ``out`` as arrays, checked against its results.json: the file
    results.json names, with the same sha256, the same systems and number of documents, every matrix
    systems x documents of numbers or null. Raises :class:`UserError` (one line, the fix) otherwise."""
    return _read(out, results, "documents")


def read_queries_file(out: Path, results: Mapping[str, Any]) -> dict[str, Any]:
    """The queries matrix of the run in ``out`` (``systems``, ``queries``, ``metrics``, ``targets``), checked as
    :func:`read_documents_file` checks the documents'."""
    return _read(out, results, "queries")


def _read(out: Path, results: Mapping[str, Any], kind: str) -> dict[str, Any]:
    il = results.get("item_level") or {}
    fix = _RERUN.format(out=out)
    key, fmt = f"{kind}_file", (FORMAT if kind == "documents" else QUERIES_FORMAT)
    if not il or "skipped" in il:
        why = il.get("skipped", "no item_level block in results.json") if il else "no item_level block in results.json"
        raise UserError(f"{out / 'results.json'}: no item-level {kind} matrix ({why}); {fix}")
    entry = il.get(key)
    if not isinstance(entry, Mapping) or not isinstance(entry.get("file"), str) or not isinstance(entry.get("sha256"), str):
        raise UserError(f"{out / 'results.json'}: item_level has no {key} entry (the run predates it); {fix}")
    if Path(entry["file"]).name != entry["file"]:
        raise UserError(f"{out / 'results.json'}: item_level.{key}.file {entry['file']!r} is not a file name "
                        f"in the run directory; {fix}")
    path = out / entry["file"]
    data = _read_bytes(path, fix)
    if hashlib.sha256(data).hexdigest() != entry["sha256"]:
        raise UserError(f"{path}: its sha256 differs from the one results.json records (another run's file, or "
                        f"changed since); {fix}")
    try:
        doc = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise UserError(f"{path}: not valid JSON; {fix}") from None
    if not isinstance(doc, dict) or doc.get("format") != fmt:
        raise UserError(f"{path}: not a {fmt!r} file; {fix}")
    systems, documents = doc.get("systems"), doc.get(kind)
    if systems != list(il.get("systems") or []) or not isinstance(documents, list) or \
            len(documents) != (il.get("items", {}).get(kind, {}).get("n")):
        raise UserError(f"{path}: its systems or {kind} differ from results.json's item_level block; {fix}")
    S, D = len(systems), len(documents)

    def matrix(name: str, cells: Any) -> np.ndarray:
        ok = isinstance(cells, list) and len(cells) == S and all(isinstance(r, list) and len(r) == D for r in cells)
        if ok and all(v is None or finite_number(v) for r in cells for v in r):
            return np.array([[np.nan if v is None else float(v) for v in r] for r in cells], float)
        raise UserError(f"{path}: {name} is not a {S} x {D} matrix of finite numbers or null (systems x {kind}); "
                        f"{fix}")

    mats = {"metrics": {k: matrix(f"metrics.{k}", v) for k, v in (doc.get("metrics") or {}).items()},
            "targets": {k: matrix(f"targets.{k}", v) for k, v in (doc.get("targets") or {}).items()}}
    if kind == "queries":
        return {"systems": tuple(systems), "queries": tuple(documents), **mats}
    qpd = doc.get("queries_per_document")
    if not isinstance(qpd, list) or len(qpd) != D or not all(type(q) is int and q >= 1 for q in qpd):
        raise UserError(f"{path}: queries_per_document is not {D} positive whole numbers; {fix}")
    return {"systems": tuple(systems), "documents": tuple(documents), "queries_per_document": np.array(qpd),
            "n_queries": _count(doc.get("n_queries"), path, fix), **mats}


def _count(v: Any, path: Path, fix: str) -> int:
    if v is None:
        return 0
    if type(v) is not int or v < 0:
        raise UserError(f"{path}: n_queries is {v!r}, not a whole number; {fix}")
    return v


def _read_bytes(path: Path, fix: str) -> bytes:
    """The file's bytes with the checks every input gets (a FIFO or device refused without blocking), and a bound on
    its size: parsed, a matrix takes about twice its text in memory, so a file over a quarter of
    :func:`clir_eval.limits.memory_bytes` is refused before it is read."""
    if not path.exists() and not path.is_symlink():
        raise UserError(f"{path}: not found (results.json's item_level names it); {fix}")
    bound = memory_bytes() // 4
    try:
        size = path.stat().st_size
    except OSError as e:
        raise UserError(f"{path}: cannot be read ({e.strerror}); {fix}") from None
    if size > bound:
        raise UserError(f"{path}: {size} bytes, over the bound of {bound} bytes for an item matrix (a quarter of the "
                        "memory bound); check the file, or raise the bound with CLIR_EVAL_MAX_MEMORY_BYTES")
    try:
        return read_bytes(path)
    except UserError as e:
        raise UserError(f"{e}; {fix}") from None
