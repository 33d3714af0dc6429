"""TREC run and qrels formats: typed records, readers and atomic writers (.gz ok).

A :class:`Run` keeps, per query, the ranked list of (docid, score) exactly in the order
the run file (or the retrieval backend) gives it; ranks are list positions. Readers sort
by the trec_eval convention (score desc, then docid desc) only when asked to.
"""

from __future__ import annotations

import gc
import math
import operator
import reprlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

from ..errors import UserError
from .files import BOM, READ_ERRORS, PathLike, atomic_write, iter_lines, open_binary
from .trec_columns import FileRanking, Malformed, parse_qrels_bytes, parse_run_bytes

_REL_MIN, _REL_MAX = -(2**31), 2**31 - 1  # trec_eval stores labels as C ints


@dataclass(frozen=True)
class Run:
    """Ranked results per query: ``{qid: [(docid, score), ...]}`` in rank order."""

    ranking: Mapping[str, list[tuple[str, float]]]
    tag: str = "clir-eval"

    def qids(self) -> list[str]:
        return list(self.ranking)

    def docids(self, qid: str) -> list[str]:
        """The query's document ids in rank order (a new list; empty for a query the run lacks)."""
        if isinstance(self.ranking, FileRanking):  # without converting the scores
            return self.ranking.docids(qid)
        return [d for d, _ in self.ranking.get(qid, [])]

    def __len__(self) -> int:
        return len(self.ranking)


@dataclass(frozen=True)
class Qrels:
    """Relevance judgements: ``{qid: {docid: rel}}`` (rel > 0 means relevant)."""

    judgements: Mapping[str, Mapping[str, int]] = field(default_factory=dict)

    def relevant(self, qid: str) -> set[str]:
        return {d for d, r in self.judgements.get(qid, {}).items() if r > 0}

    def qids(self) -> list[str]:
        return list(self.judgements)


def trec_order(items: Iterable[tuple[str, float]]) -> list[tuple[str, float]]:
    """Sort as trec_eval does: score descending, then docid descending."""
    return sorted(items, key=lambda x: (x[1], x[0]), reverse=True)


def run_score(value: Any, where: str) -> float:
    """A run's retrieval score: a finite number (text as in a run file, or a number); else a UserError
    at ``where`` (``file:line`` or ``run['q1']['d3']``). A NaN would make the ranking depend on input order."""
    try:
        score = float(value)
    except (TypeError, ValueError):
        raise UserError(f"{where}: score {reprlib.repr(value)} is not a number") from None
    except OverflowError:
        score = math.inf
    if not math.isfinite(score):
        raise UserError(f"{where}: score {reprlib.repr(value)} is not a finite number; give a real score (column 5 of a run)")
    return score


def relevance_label(value: Any, where: str) -> int:
    """A judgement's relevance label: an integer (text as in a qrels file, or an int) within trec_eval's C int
    range, as pytrec_eval and the qrels reader take it; a fraction (0.4), 1.0 or None is a UserError at ``where``,
    never truncated (trec_eval's atol would read 0.4 as 0, non-relevant)."""
    try:
        rel = int(value) if isinstance(value, str) else operator.index(value)
    except (TypeError, ValueError):
        raise UserError(f"{where}: relevance {reprlib.repr(value)} is not an integer; give an integer label (0, 1, 2, ...)") from None
    if not _REL_MIN <= rel <= _REL_MAX:
        raise UserError(f"{where}: relevance {reprlib.repr(rel)} is out of range; use a small integer label (0, 1, 2, ...)")
    return rel


def _entries(value: Any, what: str, inner: str) -> Mapping[str, Mapping[Any, Any]]:
    """``{qid: {docid: value}}`` with every query's entries a mapping and no two keys equal once made text."""
    if not isinstance(value, Mapping) or not all(isinstance(v, Mapping) for v in value.values()):
        shown = type(value).__name__ if not isinstance(value, Mapping) else next(
            f"{{{k!r}: {type(v).__name__}}}" for k, v in value.items() if not isinstance(v, Mapping))
        raise UserError(f"{what}: give a TREC file path or a mapping {{qid: {{docid: {inner}}}}}, not {shown}")
    out: dict[str, Mapping[Any, Any]] = {}
    for q, docs in value.items():
        if str(q) in out:
            raise UserError(f"{what}: query {str(q)!r} is given twice (as {q!r} and as text); give each query once")
        texts = {str(d) for d in docs}
        if len(texts) != len(docs):
            raise UserError(f"{what}[{str(q)!r}]: a document is given twice (keys equal as text); give each once")
        out[str(q)] = docs
    return out


def run_from_mapping(value: Any, what: str = "run") -> Run:
    """A :class:`Run` from ``{qid: {docid: score}}``, ranked as trec_eval ranks (score desc, docid desc); every
    score checked as :func:`read_run` checks a run file's (:func:`run_score`)."""
    return Run({q: trec_order((str(d), run_score(s, f"{what}[{q!r}][{str(d)!r}]")) for d, s in docs.items())
                for q, docs in _entries(value, what, "score").items()})


def qrels_from_mapping(value: Any, what: str = "qrels") -> Qrels:
    """:class:`Qrels` from ``{qid: {docid: relevance}}``, every label checked as :func:`read_qrels` checks a
    qrels file's (:func:`relevance_label`)."""
    return Qrels({q: {str(d): relevance_label(r, f"{what}[{q!r}][{str(d)!r}]") for d, r in docs.items()}
                  for q, docs in _entries(value, what, "relevance").items()})


def _read_whole(path: PathLike) -> bytes | None:
    """The file's bytes read at once, or None when it cannot be read that way (the line-by-line parse then
    says why)."""
    p = Path(path)
    if not p.is_file():
        return None
    try:
        with open_binary(p) as fh:
            return fh.read()
    except READ_ERRORS:
        return None


def _bulk(data: bytes | None, parse):
    """``parse(lines)`` over the whole file's bytes decoded at once, with the cyclic garbage
    collector paused (the parse allocates several objects per line and frees none, so a
    collection cannot free anything and on a large heap costs more than the parse); None when
    the file cannot be read that way or ``parse`` finds a line it does not accept."""
    if data is None:
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if text.startswith(BOM):  # the line-by-line parse removes it and says so
        return None
    was = gc.isenabled()
    gc.disable()
    try:
        return parse(text.split("\n"))  # the lines iter_lines counts (b"\n"); split() drops a trailing "\r"
    except (Malformed, ValueError):
        return None
    finally:
        if was:
            gc.enable()


def _parse_run(lines: list[str]) -> Run:
    ranking: dict[str, list[tuple[str, float]]] = {}
    seen: dict[str, set[str]] = {}
    tag = None
    isfinite = math.isfinite
    for line in lines:
        parts = line.split()
        if len(parts) != 6:
            if parts:
                raise Malformed
            continue
        qid, _, docid, rank_s, score_s, tag = parts
        int(rank_s)
        score = float(score_s)
        if not isfinite(score):
            raise Malformed
        s = seen.get(qid)
        if s is None:
            s = seen[qid] = set()
            ranking[qid] = []
        if docid in s:
            raise Malformed
        s.add(docid)
        ranking[qid].append((docid, score))
    return Run(ranking, tag or "clir-eval")


def read_run(path: PathLike, *, sort: bool = False) -> Run:
    """Read a TREC run (``qid Q0 docid rank score tag``).

    Lines keep file order per query unless ``sort`` (trec_eval order). Duplicate
    (qid, docid) pairs are an error. The whole file is parsed at once, column by column where it
    can be (:mod:`.trec_columns`: scores are converted when first used); when any line is wrong it is
    read again line by line, which names the first bad line (``file:line``).
    """
    data = _read_whole(path)
    try:
        columns = parse_run_bytes(data) if data is not None else None
    except Malformed:
        return _read_run_lines(path, sort=sort)
    if columns is not None:
        run = Run(columns[0], columns[1] or "clir-eval")
    else:
        run = _bulk(data, _parse_run)
    del data
    if run is None:
        return _read_run_lines(path, sort=sort)
    if sort:
        return Run({q: trec_order(v) for q, v in run.ranking.items()}, run.tag)
    return run


def _read_run_lines(path: PathLike, *, sort: bool = False) -> Run:
    """:func:`read_run` one line at a time: the reference parse, and the one that reports errors."""
    ranking: dict[str, list[tuple[str, float]]] = {}
    seen: dict[str, set[str]] = {}
    tag = None
    for lineno, line in iter_lines(path):
        if not line.strip():
            continue
        parts = line.split()
        if len(parts) != 6:
            raise UserError(
                f"{path}:{lineno}: a TREC run line needs 6 columns 'qid Q0 docid rank score tag', found {len(parts)}"
            )
        qid, _, docid, rank_s, score_s, tag = parts
        try:
            int(rank_s)
        except ValueError:
            raise UserError(f"{path}:{lineno}: rank {rank_s!r} is not an integer; column 4 must be the rank 1, 2, ...") from None
        score = run_score(score_s, f"{path}:{lineno}")
        s = seen.setdefault(qid, set())
        if docid in s:
            raise UserError(f"{path}:{lineno}: document {docid!r} appears twice for query {qid!r}; remove the duplicate")
        s.add(docid)
        ranking.setdefault(qid, []).append((docid, score))
    if sort:
        ranking = {q: trec_order(v) for q, v in ranking.items()}
    return Run(ranking, tag or "clir-eval")


def write_run(path: PathLike, run: Run | Mapping[str, list[tuple[str, float]]], *, tag: str | None = None) -> None:
    """Write a TREC run atomically, ranks 1..n in list order."""
    ranking = run.ranking if isinstance(run, Run) else run
    tag = tag or (run.tag if isinstance(run, Run) else "clir-eval")
    with atomic_write(path) as fh:
        for qid, docs in ranking.items():  # one write per query
            head, tail = f"{qid} Q0 ", f" {tag}\n"
            fh.write("".join([f"{head}{docid} {rank} {score!r}{tail}" for rank, (docid, score) in enumerate(docs, 1)]))


def _parse_qrels(lines: list[str]) -> Qrels:
    judgements: dict[str, dict[str, int]] = {}
    for line in lines:
        parts = line.split()
        if len(parts) != 4:
            if parts:
                raise Malformed
            continue
        qid, _, docid, rel_s = parts
        rel = int(rel_s)
        if not _REL_MIN <= rel <= _REL_MAX:
            raise Malformed
        q = judgements.get(qid)
        if q is None:
            q = judgements[qid] = {}
        if docid in q and q[docid] != rel:
            raise Malformed
        q[docid] = rel
    return Qrels(judgements)


def read_qrels(path: PathLike) -> Qrels:
    """Read TREC qrels (``qid iter docid rel``), the whole file at once (column by column where it can be,
    :mod:`.trec_columns`); when any line is wrong it is read again line by line, which names the first bad
    line (``file:line``)."""
    data = _read_whole(path)
    try:
        columns = parse_qrels_bytes(data, _REL_MIN, _REL_MAX) if data is not None else None
    except Malformed:
        return _read_qrels_lines(path)
    qrels = Qrels(columns) if columns is not None else _bulk(data, _parse_qrels)
    return _read_qrels_lines(path) if qrels is None else qrels


def _read_qrels_lines(path: PathLike) -> Qrels:
    """:func:`read_qrels` one line at a time: the reference parse, and the one that reports errors."""
    judgements: dict[str, dict[str, int]] = {}
    for lineno, line in iter_lines(path):
        if not line.strip():
            continue
        parts = line.split()
        if len(parts) != 4:
            raise UserError(
                f"{path}:{lineno}: a qrels line needs 4 columns 'qid 0 docid relevance', found {len(parts)}"
            )
        qid, _, docid, rel_s = parts
        rel = relevance_label(rel_s, f"{path}:{lineno}")
        q = judgements.setdefault(qid, {})
        if docid in q and q[docid] != rel:
            raise UserError(f"{path}:{lineno}: document {docid!r} judged twice for query {qid!r} with different labels")
        q[docid] = rel
    return Qrels(judgements)


def write_qrels(path: PathLike, qrels: Qrels | Mapping[str, Mapping[str, int]]) -> None:
    """Write TREC qrels atomically."""
    judgements = qrels.judgements if isinstance(qrels, Qrels) else qrels
    with atomic_write(path) as fh:
        for qid, docs in judgements.items():
            for docid, rel in docs.items():
                fh.write(f"{qid} 0 {docid} {rel}\n")
