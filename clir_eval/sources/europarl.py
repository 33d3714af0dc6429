"""Reader for the Europarl v7 *source release* (``txt/<lang>/ep-YY-MM-DD[-NNN[-NN]].txt``).

Each file is one day (or one chapter) of proceedings with line-level markup::

    <CHAPTER ID="014">
    A chapter title
    <SPEAKER ID="12" NAME="A. Member" AFFILIATION="XYZ">
    (IT) Madam President, ...
    <P>
    ...

Cleaning follows the rules Lignos et al. (2019, EMNLP; github
ConstantineLignos/mt-clir-emnlp-2019) state for their Europarl CLIR collection (their
preprocessing script is not part of that repository; the rules are the ones described
for the collection): markup lines (``<CHAPTER>``, ``<SPEAKER>``, ``<P>``, any other
line that is a single tag) are dropped, ``<BRK>`` is removed, leading parentheticals
("(DE) ...", "(The sitting was opened at 9 a.m.)") are removed (a line that was only a
parenthetical disappears), and documents with fewer than 3 text lines are skipped.

Granularity:

- ``file``: one document per file, docid = file stem (``ep-11-06-23-014``); the
  fewer-than-``min_lines`` rule applies to the file.
- ``speaker``: one document per ``<SPEAKER>`` turn, docid =
  ``<stem>:<chapter id>:<speaker id>`` with ``-<k>`` appended for the k-th (k >= 2)
  turn carrying the same (chapter, speaker id) in that file. SPEAKER ids repeat in
  the release (e.g. written explanations of vote share one id), and the sequence of
  SPEAKER tags is the same in every language, so these ids line up across
  languages. The fewer-than-``min_lines`` rule applies to the *file* (Lignos et
  al.'s document unit); a turn is kept when it has at least ``min_turn_lines`` (1)
  text lines. Why not 3 per turn: on the sample day ep-11-06-23-014 most turns are
  one paragraph, so a per-turn minimum of 3 keeps only 85 cs / 83 de / 83 en of the
  719 turns, and the kept ids differ across languages (translators split paragraphs
  differently), whereas minimum 1 keeps all 719 turns with identical ids in cs/de/en.
  Text before the first SPEAKER of a chapter (the chapter title) belongs to no turn.

Document text is the cleaned lines joined with ``\\n`` (line structure is kept so
systems can translate line by line).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping, NamedTuple, Sequence

from ..errors import UserError
from ..io.files import PathLike, iter_lines
from .settings import GRANULARITIES

_TAG_LINE = re.compile(r"^\s*<\s*/?\s*([A-Za-z]+)\b[^<>]*>\s*$")
_ATTR = re.compile(r"""\b([A-Za-z]+)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))""")
_BRK = re.compile(r"<\s*BRK\s*/?\s*>", re.IGNORECASE)
_LEADING_PAREN = re.compile(r"^\s*\([^()]*\)\s*")
_FILE_NAME = re.compile(r"^ep-.*\.txt(\.gz)?$")


@dataclass(frozen=True)
class Turn:
    """One SPEAKER turn: its position ids, speaker name and cleaned text lines."""

    file: str
    chapter: str
    speaker: str
    occurrence: int
    name: str
    lines: tuple[str, ...]

    @property
    def docid(self) -> str:
        base = f"{self.file}:{self.chapter}:{self.speaker}"
        return base if self.occurrence == 1 else f"{base}-{self.occurrence}"


@dataclass(frozen=True)
class EuroparlFile:
    """A parsed source-release file: all cleaned text lines in order, and its turns."""

    path: Path
    stem: str
    lines: tuple[str, ...]
    turns: tuple[Turn, ...]


def clean_line(line: str) -> str | None:
    """Cleaned text of one line; ``None`` for a markup line, ``""`` if nothing is left."""
    if _TAG_LINE.match(line):
        return None
    text = _BRK.sub(" ", line).strip()
    while True:
        stripped = _LEADING_PAREN.sub("", text, count=1)
        if stripped == text:
            break
        text = stripped
    return " ".join(text.split())


def _attrs(tag_line: str) -> dict[str, str]:
    out = {}
    for m in _ATTR.finditer(tag_line):
        value = next(v for v in m.groups()[1:] if v is not None)
        out[m.group(1).upper()] = value
    return out


def file_stem(path: PathLike) -> str:
    """``ep-11-06-23-014`` for ``.../ep-11-06-23-014.txt`` or ``.txt.gz``."""
    name = Path(path).name
    for suffix in (".gz", ".txt"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    return name


def parse_file(path: PathLike) -> EuroparlFile:
    """Parse one source-release file (plain or .gz, strict UTF-8) into lines and turns."""
    p = Path(path)
    stem = file_stem(p)
    lines: list[str] = []
    turns: list[Turn] = []
    seen: Counter[tuple[str, str]] = Counter()
    chapter = "0"
    current: dict | None = None

    def close() -> None:
        nonlocal current
        if current is not None:
            turns.append(Turn(stem, current["chapter"], current["speaker"],
                              current["occurrence"], current["name"], tuple(current["lines"])))
        current = None

    for _, raw in iter_lines(p):
        m = _TAG_LINE.match(raw)
        if m:
            tag = m.group(1).upper()
            if tag == "CHAPTER":
                close()
                chapter = _attrs(raw).get("ID", "0") or "0"
            elif tag == "SPEAKER":
                close()
                attrs = _attrs(raw)
                speaker = attrs.get("ID", "") or "x"
                seen[(chapter, speaker)] += 1
                current = {"chapter": chapter, "speaker": speaker,
                           "occurrence": seen[(chapter, speaker)],
                           "name": attrs.get("NAME", ""), "lines": []}
            continue
        text = clean_line(raw)
        if not text:
            continue
        lines.append(text)
        if current is not None:
            current["lines"].append(text)
    close()
    return EuroparlFile(p, stem, tuple(lines), tuple(turns))


def europarl_files(source: PathLike | Sequence[PathLike], lang: str | None = None) -> list[Path]:
    """The ep-*.txt[.gz] files of ``source``, sorted by name.

    ``source`` is a list of files, one file, a release root holding ``txt/<lang>/``
    (or ``<lang>/``), or a directory holding the files themselves.
    """
    if isinstance(source, (list, tuple)):
        files = [Path(f) for f in source]
        for f in files:
            if not f.is_file():
                raise UserError(f"Europarl file not found: {f}; check the path")
        return files
    root = Path(source)
    if root.is_file():
        return [root]
    if not root.is_dir():
        raise UserError(f"Europarl directory not found: {root}; give the release root "
                        f"(holding txt/<lang>/) or a directory of ep-*.txt files")
    candidates = [root / "txt" / lang, root / lang] if lang else []
    candidates.append(root)
    for d in candidates:
        if not d.is_dir():
            continue
        files = sorted(f for f in d.iterdir() if f.is_file() and _FILE_NAME.match(f.name))
        if files:
            stems = Counter(file_stem(f) for f in files)
            dup = [s for s, n in stems.items() if n > 1]
            if dup:
                raise UserError(f"{d}: both .txt and .txt.gz for {dup[0]}; keep one of them")
            return files
    where = f"{root}/txt/{lang}/ or {root}/{lang}/" if lang else f"{root}/"
    raise UserError(f"no Europarl files (ep-*.txt) found in {where}; "
                    f"check the path and the language code")


def read_europarl(source: PathLike | Sequence[PathLike], lang: str | None = None,
                  granularity: str = "speaker", *, min_lines: int = 3,
                  min_turn_lines: int = 1) -> list[tuple[str, str]]:
    """Documents ``[(docid, text), ...]`` of one language of the source release.

    Files with fewer than ``min_lines`` cleaned text lines are skipped (both
    granularities); at ``speaker`` granularity turns with fewer than
    ``min_turn_lines`` lines are skipped too. Order: files by name, turns in file order.
    """
    if granularity not in GRANULARITIES:
        raise UserError(f"unknown Europarl granularity {granularity!r}; "
                        f"use one of {', '.join(GRANULARITIES)}")
    docs: list[tuple[str, str]] = []
    for path in europarl_files(source, lang):
        parsed = parse_file(path)
        if len(parsed.lines) < min_lines:
            continue
        if granularity == "file":
            docs.append((parsed.stem, "\n".join(parsed.lines)))
        else:
            docs.extend((t.docid, "\n".join(t.lines)) for t in parsed.turns
                        if len(t.lines) >= max(min_turn_lines, 1))
    return docs


def reader_signature(granularity: str = "speaker", *, min_lines: int = 3,
                     min_turn_lines: int = 1) -> str:
    """Settings string recorded with every collection read by :func:`read_europarl`."""
    sig = f"europarl-v7-source|granularity:{granularity}|min_lines:{min_lines}"
    if granularity == "speaker":
        sig += f"|min_turn_lines:{min_turn_lines}"
    return sig + "|drop:markup,brk,leading-paren"


class Alignment(NamedTuple):
    """Collections restricted to the ids they all share (in the first one's order)."""

    collections: dict[str, list[tuple[str, str]]]
    common: list[str]
    dropped: dict[str, list[str]]

    def summary(self) -> str:
        parts = [f"{name}: kept {len(self.common)}, dropped {len(ids)}"
                 + (f" (e.g. {', '.join(ids[:3])})" if ids else "")
                 for name, ids in self.dropped.items()]
        return "; ".join(parts)


def align_collections(collections: Mapping[str, Iterable[tuple[str, str]]], *,
                      strict: bool = False) -> Alignment:
    """Keep only the docids present in every collection; report what each one lost.

    ``strict=True`` raises :class:`UserError` instead of dropping anything.
    """
    if not collections:
        raise UserError("align_collections: no collections given")
    pairs = {name: list(docs) for name, docs in collections.items()}
    for name, docs in pairs.items():
        counts = Counter(d for d, _ in docs)
        dup = [d for d, n in counts.items() if n > 1]
        if dup:
            raise UserError(f"collection {name!r}: duplicate docid {dup[0]!r}; ids must be unique")
    first = next(iter(pairs.values()))
    shared = set.intersection(*({d for d, _ in docs} for docs in pairs.values()))
    common = [d for d, _ in first if d in shared]
    dropped = {name: [d for d, _ in docs if d not in shared] for name, docs in pairs.items()}
    result = Alignment({name: [(d, t) for d, t in docs if d in shared]
                        for name, docs in pairs.items()}, common, dropped)
    if strict and any(dropped.values()):
        raise UserError(f"collections do not line up: {result.summary()}; "
                        f"check that every language has the same files and SPEAKER tags")
    return result


def read_europarl_aligned(source: PathLike, langs: Sequence[str], granularity: str = "speaker",
                          *, min_lines: int = 3, min_turn_lines: int = 1,
                          strict: bool = False) -> Alignment:
    """Read ``langs`` from one release root and align them by docid."""
    return align_collections(
        {lang: read_europarl(source, lang, granularity, min_lines=min_lines,
                             min_turn_lines=min_turn_lines) for lang in langs},
        strict=strict)
