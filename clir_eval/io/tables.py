"""Score tables (TSV or CSV, plain or .gz) for ``correlate`` and external scores.

A table is a header row of column names followed by one row per system (or per system and
condition). The delimiter comes from the extension (``.tsv``/``.tab`` -> tab, ``.csv`` ->
comma, the same with ``.gz``); otherwise a tab in the header means TSV, else CSV. CSV is
parsed with the ``csv`` module (quoted fields may contain commas); blank lines are skipped;
empty fields after the header's last column (a trailing tab or comma) are no fields.
Errors name the file and line.

Missing values are empty cells or one of ``NA``, ``N/A``, ``NaN``, ``nan``, ``null``,
``None``, ``-``; they become NaN and are dropped per (x, y) pair by the correlation.
"""

from __future__ import annotations

import csv
import math
import operator
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from ..errors import UserError
from ..limits import MAX_DECIMALS
from ..stats import round_half_up
from .files import PathLike, iter_lines

MISSING = frozenset({"", "na", "n/a", "nan", "null", "none", "-"})
SYSTEM_COLUMNS = frozenset({"system", "systems", "sys", "system_id", "systemid", "system_name", "model", "name", "id"})


def to_float(cell: str) -> float:
    """``float(cell)`` without Python's extensions to the number syntax: a digit separator
    (``1_0`` is not 10) is a ValueError, as in every other tool that reads these tables."""
    if "_" in cell:
        raise ValueError(cell)
    return float(cell)


def score_cell(cell: str, path: PathLike, lineno: int, col: str) -> float | None:
    """A score cell of a table: a finite number, or None where it is marked missing (:data:`MISSING`:
    empty, NA, NaN, None, ...), never 0; anything else is an error naming the file, line and column."""
    cell = cell.strip()
    if cell.lower() in MISSING:
        return None
    try:
        v = to_float(cell)
    except ValueError:
        v = math.inf
    if math.isnan(v):
        return None
    if not math.isfinite(v):
        raise UserError(f"{path}:{lineno}: column {col!r} holds {cell!r}, not a number; give a number, or leave the "
                        "cell empty (or NA) for a missing score")
    return v


def _is_number(cell: str) -> bool:
    cell = cell.strip()
    if cell.lower() in MISSING:
        return True
    try:
        to_float(cell)
    except ValueError:
        return False
    return True


@dataclass(frozen=True)
class Table:
    """Rows of string cells; ``linenos[i]`` is the 1-based file line of ``rows[i]``."""

    path: str
    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    linenos: tuple[int, ...] = field(default=())

    def index(self, column: str) -> int:
        """Position of ``column``; a UserError listing the table's columns when absent."""
        try:
            return self.columns.index(column)
        except ValueError:
            raise UserError(
                f"{self.path}: no column {column!r}; the table has columns: {', '.join(self.columns)}"
            ) from None

    def strings(self, column: str) -> list[str]:
        i = self.index(column)
        return [r[i] for r in self.rows]

    def numbers(self, column: str, ndigits: int | None = None) -> np.ndarray:
        """The column as floats (NaN for missing cells), optionally rounded half-up to
        ``ndigits`` decimals; a non-numeric cell is a UserError with file:line."""
        i = self.index(column)
        out = np.empty(len(self.rows), dtype=float)
        for k, (row, lineno) in enumerate(zip(self.rows, self.linenos)):
            cell = row[i].strip()
            if cell.lower() in MISSING:
                out[k] = math.nan
                continue
            try:
                v = to_float(cell)
            except ValueError:
                raise UserError(
                    f"{self.path}:{lineno}: column {column!r} has non-numeric value {cell!r}; "
                    f"use a number or leave the cell empty (or NA) for a missing value"
                ) from None
            if math.isinf(v):
                raise UserError(f"{self.path}:{lineno}: column {column!r} has infinite value {cell!r}")
            out[k] = v if ndigits is None or math.isnan(v) else round_half_up(v, ndigits)
        return out

    def label_columns(self, exclude: Sequence[str] = ()) -> list[str]:
        """The columns (not in ``exclude``) that name a row rather than score it: those
        holding a non-numeric value (system, language, condition, ...)."""
        out = []
        for i, c in enumerate(self.columns):
            if c not in exclude and any(not _is_number(r[i]) for r in self.rows):
                out.append(c)
        return out

    def check_unique(self, columns: Sequence[str], what: str) -> None:
        """Refuse two rows with the same values in ``columns`` (e.g. a system listed twice in
        one group, which would count it twice), naming both lines."""
        idx = [self.index(c) for c in columns]
        first: dict[tuple[str, ...], int] = {}
        for row, lineno in zip(self.rows, self.linenos):
            key = tuple(row[i].strip() for i in idx)
            if key in first:
                shown = ", ".join(f"{c}={v!r}" for c, v in zip(columns, key))
                raise UserError(
                    f"{self.path}:{lineno}: {what} ({shown}) appears twice, first on line {first[key]}; "
                    "keep one row per system and group (remove the repeated row)"
                )
            first[key] = lineno

    def check_no_repeats(self, group_cols: Sequence[str], used: Sequence[str]) -> None:
        """Refuse a system listed twice in a group of a per-system table (it would count twice
        in n and the p-value). The rows are keyed by their label columns (:meth:`label_columns`)
        and a column named like a system id (``system``, ``sys``, ``model``, ...) even when its ids
        are numbers; two rows of one system with the same ``used`` scores are a repeat whatever
        their other text columns say; a table with no label column at all (only numbers) may not
        hold two identical rows, since nothing tells the systems apart."""
        labels = self.label_columns(exclude=[*used, *group_cols])
        named = [c for c in self.columns if c.strip().lower() in SYSTEM_COLUMNS and c not in (*used, *group_cols)]
        keys = list(dict.fromkeys([*labels, *named]))
        if keys:
            self.check_unique([*group_cols, *keys], "the row")
            if named:
                self.check_unique([*group_cols, *named, *dict.fromkeys(used)], "the system with the same scores")
            return
        first: dict[tuple[str, ...], int] = {}
        for row, lineno in zip(self.rows, self.linenos):
            if row in first:
                raise UserError(
                    f"{self.path}:{lineno}: this row repeats line {first[row]} and no column names the systems, so "
                    "it would be counted twice; remove the repeated row (or add a 'system' column if these are "
                    "two systems with equal scores)"
                )
            first[row] = lineno

    def select(self, keep: Sequence[bool]) -> "Table":
        """The rows where ``keep`` is true."""
        rows = tuple(r for r, k in zip(self.rows, keep) if k)
        linenos = tuple(n for n, k in zip(self.linenos, keep) if k)
        return Table(self.path, self.columns, rows, linenos)


def _delimiter(path: Path, header: str) -> str:
    name = path.name.lower()
    if name.endswith(".gz"):
        name = name[:-3]
    if name.endswith((".tsv", ".tab")):
        return "\t"
    if name.endswith(".csv"):
        return ","
    return "\t" if "\t" in header else ","


def read_table(path: PathLike) -> Table:
    """Read a TSV/CSV score table (plain or .gz) with a header row; a row whose first cell starts with ``# ``
    (hash, space) is a comment and is skipped."""
    p = Path(path)
    lines = [(n, line) for n, line in iter_lines(p) if line.strip()]
    if not lines:
        raise UserError(f"{p}: empty table; expected a header row and one row per system")
    delim = _delimiter(p, lines[0][1])
    if delim == "\t":
        records = [(n, line.split("\t")) for n, line in lines]
    else:
        try:
            records = [(n, next(csv.reader([line]))) for n, line in lines]
        except csv.Error as e:
            raise UserError(f"{p}: cannot parse CSV ({e}); check quoting") from None
    header_line, header = records[0]
    header = _without_trailing_empty([h.strip() for h in header], 1)
    seen = set()
    for h in header:
        if not h:
            raise UserError(f"{p}:{header_line}: empty column name in the header row")
        if h in seen:
            raise UserError(f"{p}:{header_line}: column {h!r} appears twice in the header row")
        seen.add(h)
    rows, linenos = [], []
    for n, cells in records[1:]:
        if cells and cells[0].startswith("# "):  # a comment line, e.g. scores.tsv's English-side (ceiling) row
            continue
        cells = _without_trailing_empty(cells, len(header))
        if len(cells) != len(header):
            sep = "tab" if delim == "\t" else "comma"
            raise UserError(
                f"{p}:{n}: {len(cells)} {sep}-separated fields, but the header has {len(header)} columns"
            )
        rows.append(tuple(c.strip() for c in cells))
        linenos.append(n)
    return Table(str(p), tuple(header), tuple(rows), tuple(linenos))


def _without_trailing_empty(cells: list[str], keep: int) -> list[str]:
    """Drop empty fields after the first ``keep`` (a trailing tab or comma ends a row in
    many published tables; an empty field within the header's width stays a missing value)."""
    while len(cells) > keep and not cells[-1].strip():
        cells = cells[:-1]
    return cells


def parse_filters(items: Sequence[str]) -> list[tuple[str, str, str]]:
    """Parse ``COL=VALUE`` (exact match) and ``COL~REGEX`` (regex search) conditions.

    Items may be comma lists; a piece without ``=``/``~`` continues the previous one (so a
    regex such as ``x{1,2}`` survives). Returns (column, op, value) triples.
    """
    out: list[list[str]] = []
    for item in items:
        for piece in item.split(","):
            m = re.match(r"^\s*([^=~]+?)\s*([=~])(.*)$", piece)
            if m:
                out.append([m.group(1), m.group(2), m.group(3).strip()])
            elif out:
                out[-1][2] += "," + piece
            elif piece.strip():
                raise UserError(f"bad filter {piece!r}; write COL=VALUE or COL~REGEX, e.g. expt=2B-ANALYSIS-QUERY1")
    for col, op, val in out:
        if op == "~":
            try:
                re.compile(val)
            except re.error as e:
                raise UserError(f"bad regular expression in filter {col}~{val}: {e}") from None
    return [tuple(f) for f in out]  # type: ignore[misc]


def apply_filters(table: Table, filters: Sequence[tuple[str, str, str]]) -> Table:
    """Keep rows matching the filters: conditions on the same column are OR-ed, on
    different columns AND-ed. ``=`` is exact string equality, ``~`` a regex search."""
    by_col: dict[str, list[tuple[str, str]]] = {}
    for col, op, val in filters:
        by_col.setdefault(col, []).append((op, val))
    keep = [True] * len(table.rows)
    for col, conds in by_col.items():
        values = table.strings(col)
        regexes = [(op, re.compile(v) if op == "~" else v) for op, v in conds]
        for k, v in enumerate(values):
            keep[k] = keep[k] and any((v == c) if op == "=" else bool(c.search(v)) for op, c in regexes)
    return table.select(keep)


def parse_rounding(items: Sequence[str], columns: Sequence[str]) -> dict[str, int]:
    """``N`` (every used column) or ``COL=N`` pairs, comma-separated -> {column: ndigits}."""
    out: dict[str, int] = {}
    for item in items:
        for piece in item.split(","):
            piece = piece.strip()
            if not piece:
                continue
            col, eq, digits = piece.rpartition("=")
            targets = list(columns) if not eq else [col.strip()]
            nd = _decimals(digits, piece)
            for t in targets:
                out[t] = nd
    return out


def _decimals(digits: Any, piece: str) -> int:
    """The decimals of one rounding ``piece`` (``COL=N``): an integer from 0 to MAX_DECIMALS (text or an int)."""
    try:
        nd = int(digits) if isinstance(digits, str) else operator.index(digits)
    except (TypeError, ValueError):
        raise UserError(f"bad rounding {piece!r}; write N or COL=N with N decimals, e.g. ChrF1=3") from None
    if isinstance(digits, bool) or not 0 <= nd <= MAX_DECIMALS:
        raise UserError(f"bad rounding {piece!r}: the number of decimals must be 0 to {MAX_DECIMALS}")
    return nd


def rounding_from_mapping(rounding: Mapping[str, Any] | None) -> dict[str, int]:
    """``{column: decimals}`` (the Python API's ``round=``) checked as :func:`parse_rounding` checks ``--round``."""
    if rounding is None:
        return {}
    if not isinstance(rounding, Mapping):
        raise UserError(f"round: give a mapping {{column: decimals}}, e.g. {{'chrf1': 1}}, not {type(rounding).__name__}")
    return {str(col): _decimals(nd, f"{col}={nd}") for col, nd in rounding.items()}


def parse_labels(items: Sequence[str]) -> dict[str, str]:
    """``VALUE=LABEL`` pairs (comma-separated) used to display group values / column names."""
    out: dict[str, str] = {}
    for item in items:
        for piece in item.split(","):
            if not piece.strip():
                continue
            key, eq, label = piece.partition("=")
            if not eq or not key.strip():
                raise UserError(f"bad label {piece!r}; write VALUE=LABEL, e.g. 2B-ANALYSIS-QUERY1=LT In")
            out[key.strip()] = label.strip()
    return out
