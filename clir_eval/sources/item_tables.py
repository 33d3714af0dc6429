"""External per-document MT scores for the item-level analysis: ``external:`` entries with ``item_col``
(a TSV/CSV table with one row per system and document) or ``documents`` (mt-metrics-eval ``.seg.score`` /
``.doc.score`` files and the test set's ``.docs`` file). They are read and checked when a run starts, before
any stage runs, and join the documents matrix beside the registry metrics (:func:`item_arrays`)."""

from __future__ import annotations

import glob
import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Mapping, Sequence

import numpy as np

from ..config.schema import Config, SystemSpec
from ..errors import UserError
from ..io.files import file_checksum
from ..io.mtme import document_scores, parse_name
from ..io.tables import score_cell
from ..templates import substitute
from .materialize import read_score_table
from .settings import ExternalTable

AGGREGATION = "doc:mean-of-segments"  # a document's score from segment scores (None left out)


@dataclass(frozen=True)
class ExternalItems:
    """Per-document MT scores of the external item tables: ``scores[name][system][docid]`` (a missing cell
    is absent, never 0), a signature per score name and notes for the report."""

    scores: Mapping[str, Mapping[str, Mapping[str, float]]] = field(default_factory=dict)
    signatures: Mapping[str, str] = field(default_factory=dict)
    notes: Sequence[str] = ()


def file_sha256(path: str) -> str:
    return file_checksum(path, "sha256")


def item_tables(cfg: Config) -> list[ExternalTable]:
    return [t for t in cfg.external if t.per_item]


def read_external_items(cfg: Config, systems: Sequence[SystemSpec], collection_ids: Iterable[str],
                        taken: Iterable[str] = ()) -> ExternalItems:  # fmt: skip
    """Every item table of the config, checked against the run's systems and its collection's document
    ids: an unknown document, a duplicate (system, document), a non-numeric cell, a run system without a
    row, a score name already used (``taken``) or a ``.docs`` file that does not fit the score file is a
    :class:`UserError` naming the file and the fix."""
    ids = set(collection_ids)
    used = set(taken)
    scores: dict[str, dict[str, dict[str, float]]] = {}
    sigs: dict[str, str] = {}
    notes: list[str] = []
    for t in item_tables(cfg):
        if t.item_col is not None:
            got, extra = _table_items(t, systems)
            src = f"src:{Path(t.file).name}|items:{t.item_col}"
            digest = file_sha256(t.file)
        else:
            got, extra = _mtme_items(t, systems)
            src = f"src:{Path(t.file).name}|docs:{Path(t.documents).name}"
            digest = hashlib.sha256("".join(file_sha256(p) for p in (*_mtme_paths(t.file), t.documents)).encode()).hexdigest()
        where = f"{t.where}.{'item_col' if t.item_col is not None else 'documents'}"
        named = {d for vals in got.values() for per in vals.values() for d in per}
        unknown = sorted(named - ids)
        if unknown and (t.unknown_documents == "error" or len(unknown) == len(named)):
            raise UserError(f"{t.file}: {len(unknown)} of its {len(named)} document id(s) are not documents of the "
                            f"run's collection (first: {', '.join(map(repr, unknown[:3]))}); {where}: check that the "
                            "ids are the collection's document ids" + (
                                ", or drop those rows (or set unknown_documents: ignore when the file covers more "
                                "documents than the run keeps)" if t.unknown_documents == "error" else ""))
        if unknown:
            got = {n: {s: {d: v for d, v in vals.items() if d in ids} for s, vals in per.items()}
                   for n, per in got.items()}
            notes.append(f"{Path(t.file).name}: {len(unknown)} of its {len(named)} documents are not in the run's "
                         "collection and were left out (unknown_documents: ignore)")
        for name, per_sys in got.items():
            if name in used:
                raise UserError(f"{t.where}.columns: score name {name!r} is already used; rename it "
                                "(columns: {column: new_name})")
            used.add(name)
            scores[name] = per_sys
            level = "" if t.item_col is not None else "|" + (AGGREGATION if "seg" in _levels(t.file) else "doc:file")
            sigs[name] = f"{src}|sha256:{digest[:16]}{level}"
            cells = sum(len(v) for v in per_sys.values())
            notes.append(f"{name}: external per-document MT scores from {Path(t.file).name} ({cells} cells of "
                         f"{len(per_sys)} systems; cells the file leaves empty or None are missing, not 0)"
                         + (f"; lower is better ({t.where}.lower_is_better): ranked by -τ"
                            if name in t.lower_is_better else ""))
        if extra:
            notes.append(f"{Path(t.file).name}: rows of {len(extra)} system(s) not in the run were not used "
                         f"({', '.join(extra[:5])}{', ...' if len(extra) > 5 else ''})")
    return ExternalItems(scores, sigs, notes)


def describe_item_table(t: ExternalTable, systems: Sequence[SystemSpec]) -> str:
    """``validate``'s line for an item table: read and checked against the systems (the documents are
    checked against the collection when the run starts)."""
    got, _ = _table_items(t, systems) if t.item_col is not None else _mtme_items(t, systems)
    docs = {d for per_sys in got.values() for vals in per_sys.values() for d in vals}
    return (f"{t.where}: {Path(t.file).name}: per-document scores {', '.join(got)} for each of the {len(systems)} "
            f"systems, {len(docs)} documents (item level)")


def item_arrays(ext: ExternalItems, systems: Sequence[str], docs: Sequence[str]) -> dict[str, np.ndarray]:
    """``{name: systems x docs array}`` of the external scores (NaN where a cell is missing)."""
    out = {}
    for name, per_sys in ext.scores.items():
        out[name] = np.array([[per_sys.get(s, {}).get(d, np.nan) for d in docs] for s in systems], float)
    return out


def missing_note(name: str, arr: np.ndarray) -> str | None:
    n = int(np.isnan(arr).sum())
    return (f"{name}: {n} of {arr.size} (system, document) cells have no external score and are missing"
            if n else None)


# --------------------------------------------------------------------------- readers
def _system_keys(t: ExternalTable, systems: Sequence[SystemSpec]) -> dict[tuple[str, ...], str]:
    """Match-column values -> run system (systems whose attributes cannot fill the templates have none)."""
    keys: dict[tuple[str, ...], str] = {}
    for s in systems:
        try:
            key = tuple(substitute(tmpl, s.attrs, f"{t.where}.match") for tmpl in t.match.values())
        except (KeyError, IndexError, ValueError):
            continue
        keys[key] = s.name
    return keys


def _table_items(t: ExternalTable, systems: Sequence[SystemSpec]) -> tuple[dict, list[str]]:
    header, rows = read_score_table(t.file)
    for col, what in [(t.item_col, "item_col"), *((c, "match") for c in t.match), *((c, "columns") for c in t.columns)]:
        if col not in header:
            raise UserError(f"{t.file}: no column {col!r} ({t.where}.{what}); the table has columns: "
                            f"{', '.join(header)}")
    keys = _system_keys(t, systems)
    got: dict[str, dict[str, dict[str, float]]] = {name: {} for name in t.columns.values()}
    seen: dict[tuple[str, str], int] = {}
    extra: dict[str, None] = {}
    for ln, r in rows:
        key = tuple(r[c].strip() for c in t.match)
        doc = r[t.item_col].strip()
        if not doc:
            raise UserError(f"{t.file}:{ln}: column {t.item_col!r} ({t.where}.item_col) is empty; every row needs "
                            "a document id")
        sysname = keys.get(key)
        if sysname is None:
            extra[",".join(key)] = None
            continue
        if (sysname, doc) in seen:
            raise UserError(f"{t.file}:{ln}: system {sysname!r} and document {doc!r} already have a row (line "
                            f"{seen[sysname, doc]}); keep one row per (system, document)")
        seen[sysname, doc] = ln
        for col, name in t.columns.items():
            v = score_cell(r[col], t.file, ln, col)
            if v is not None:
                got[name].setdefault(sysname, {})[doc] = v
    _check_systems(t, systems, {s for s, _ in seen}, list(extra))
    return got, list(extra)


def _mtme_paths(pattern: str) -> list[str]:
    return sorted(glob.glob(pattern)) if any(c in pattern for c in "*?[") else [pattern]


def _levels(pattern: str) -> set[str]:
    return {parse_name(p).level for p in _mtme_paths(pattern)}


def _mtme_items(t: ExternalTable, systems: Sequence[SystemSpec]) -> tuple[dict, list[str]]:
    paths = _mtme_paths(t.file)
    if not paths or not Path(paths[0]).exists():
        raise UserError(f"{t.file}: no mt-metrics-eval score file matches ({t.where}.file)")
    files = {f.name: f for f in map(parse_name, paths)}
    keys = _system_keys(t, systems)
    if len(t.match) != 1:
        raise UserError(f"{t.where}.match: mt-metrics-eval files have one system column; match: {{system: TEMPLATE}}")
    got: dict[str, dict[str, dict[str, float]]] = {}
    present: set[str] = set()
    extra: dict[str, None] = {}
    for col, name in t.columns.items():
        if col not in files:
            raise UserError(f"{t.where}.columns: no score file of metric {col!r} matches {t.file} (metrics: "
                            f"{', '.join(sorted(files))})")
        docs, per_sys = document_scores(files[col], t.documents)
        got[name] = {}
        for sysname, vals in per_sys.items():
            run_name = keys.get((sysname,))
            if run_name is None:
                extra[sysname] = None
                continue
            present.add(run_name)
            got[name][run_name] = {d: v for d, v in zip(docs, vals) if v is not None}
    _check_systems(t, systems, present, list(extra))
    return got, list(extra)


def _check_systems(t: ExternalTable, systems: Sequence[SystemSpec], present: set[str], extra: list[str]) -> None:
    lacking = [s.name for s in systems if s.name not in present]
    if lacking:
        raise UserError(f"{t.file}: no rows for system(s) {', '.join(lacking[:5])}{', ...' if len(lacking) > 5 else ''}"
                        f" of the run (systems in the file not matched: {', '.join(extra[:5]) or 'none'}); "
                        f"{t.where}.match: fix the system names or templates so every system has its rows")
