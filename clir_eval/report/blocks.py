"""The document model of the reports: blocks (headings, paragraphs, bullets, tables of (text, class)
cells, code), their Markdown, and the cell formatting every renderer shares. The LaTeX and HTML renderers
(:mod:`.latex`, :mod:`.html`) and the report assembly (:mod:`.tables`) build on it."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Sequence


def fmt_tau(v: float | None) -> str:
    """Paper style: 3 decimals without the leading zero (.429, -.120, 1.000); n/a for None."""
    if v is None:
        return "n/a"
    s = f"{v:.3f}"
    if s.startswith("0."):
        return s[1:]
    if s.startswith("-0."):
        return "-" + s[2:]
    return s


def fmt_p(p: float | None) -> str:
    return "n/a" if p is None else f"{p:.3g}"


def fmt_num(v: Any, digits: int = 4) -> str:
    """A score with ``digits`` decimals; empty for None/NaN."""
    if v is None:
        return ""
    if isinstance(v, float):
        return "" if math.isnan(v) else f"{v:.{digits}f}"
    return str(v)


def natural_key(name: str) -> list:
    """Sort key putting nc25000 before nc100000 (digit runs compare as numbers)."""
    return [(0, int(t), "") if t.isdigit() else (1, 0, t.lower()) for t in re.split(r"(\d+)", name) if t]


MD_MARKS = {"best": "**", "em": "*"}


def md_table(header: Sequence[str], rows: Sequence[Sequence[tuple[str, str]]], align: str) -> list[str]:
    """Markdown table lines; ``align``: ``l``, ``r`` (``---:``), ``n`` (a number column left as ``---``)
    or ``w`` (long text, wrapped in LaTeX)."""
    def cell(t: str, cls: str = "") -> str:
        return MD_MARKS.get(cls, "") + t.replace("|", "\\|") + MD_MARKS.get(cls, "")

    return (["| " + " | ".join(cell(h) for h in header) + " |",
             "|" + "".join("---:|" if a == "r" else "---|" for a in align)]
            + ["| " + " | ".join(cell(t, cls) for t, cls in r) + " |" for r in rows])


@dataclass(frozen=True)
class Heading:
    text: str
    level: int = 2


@dataclass(frozen=True)
class Para:
    """Markdown-inline text (``**bold**``, ```code```); several lines stay one paragraph."""
    text: str


@dataclass(frozen=True)
class Bullets:
    items: tuple[str, ...]
    lead: str = ""


@dataclass(frozen=True)
class Table:
    """A table of (text, class) cells (class ``best`` bold, ``em`` italic, ``ns`` not significant);
    ``align`` per column as in :func:`render`; the caption follows it as a paragraph in Markdown."""
    header: tuple[str, ...]
    rows: tuple[tuple[tuple[str, str], ...], ...]
    align: str
    caption: str = ""


@dataclass(frozen=True)
class Code:
    lines: tuple[str, ...]


Block = Heading | Para | Bullets | Table | Code


def inline_spans(text: str) -> list[tuple[str, str]]:
    """Markdown-inline text as (kind, text) spans: kind ``code`` (```x```), ``b`` (``**x**``) or
    ``""``; an unpaired marker stays a literal character."""
    parts = text.split("`")
    if len(parts) % 2 == 0:
        parts = [text]
    out = []
    for i, part in enumerate(parts):
        if i % 2:
            out.append(("code", part))
            continue
        bits = part.split("**")
        if len(bits) % 2 == 0:
            bits = [part]
        out += [("b" if j % 2 else "", b) for j, b in enumerate(bits) if b]
    return out


def table_block(header: Sequence[str], rows: Sequence[Sequence[tuple[str, str]]], align: str, caption: str = "") -> Table:
    return Table(tuple(header), tuple(tuple(r) for r in rows), align, caption)


def blocks_markdown(blocks: Sequence[Block]) -> str:
    """The blocks as Markdown, one blank line after each."""
    lines: list[str] = []
    for b in blocks:
        if isinstance(b, Heading):
            lines += ["#" * b.level + " " + b.text]
        elif isinstance(b, Para):
            lines += [b.text]
        elif isinstance(b, Bullets):
            lines += ([b.lead] if b.lead else []) + [f"- {i}" for i in b.items]
        elif isinstance(b, Table):
            lines += md_table(b.header, b.rows, b.align) + ([""] + [b.caption] if b.caption else [])
        else:
            lines += ["```", *b.lines, "```"]
        lines.append("")
    return "\n".join(lines)


TSV_DECIMALS = 12  # drops binary noise (0.8672499999999999 -> 0.86725), keeps every digit a score means


def tsv_float(v: float) -> str:
    """A float in a TSV cell: rounded to ``TSV_DECIMALS`` decimals, shortest form (``repr``)."""
    return repr(round(v, TSV_DECIMALS) + 0.0) if v == v and abs(v) != float("inf") else repr(v)
