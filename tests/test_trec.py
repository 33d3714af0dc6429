"""TREC run and qrels readers/writers: round trips (.gz too), order, line-numbered errors."""

from __future__ import annotations

import pytest

from clir_eval.errors import UserError
from clir_eval.io.trec import Qrels, Run, read_qrels, read_run, trec_order, write_qrels, write_run


@pytest.mark.parametrize("suffix", [".txt", ".txt.gz"])
def test_run_round_trip_keeps_order(tmp_path, suffix):
    run = Run({"q2": [("b", 1.0), ("a", 2.5)], "q1": [("x", -0.125)]}, tag="sysA")
    path = tmp_path / f"run{suffix}"
    write_run(path, run)
    back = read_run(path)
    assert back.ranking == run.ranking and back.tag == "sysA"
    assert list(back.ranking) == ["q2", "q1"]
    assert read_run(path, sort=True).ranking["q2"] == [("a", 2.5), ("b", 1.0)]


def test_written_ranks_are_list_positions(tmp_path):
    path = tmp_path / "r.txt"
    write_run(path, {"q": [("d1", 0.5), ("d2", 0.7)]}, tag="t")
    assert path.read_text().splitlines() == ["q Q0 d1 1 0.5 t", "q Q0 d2 2 0.7 t"]


def test_trec_order_ties_by_docid_desc():
    assert trec_order([("a", 1.0), ("c", 2.0), ("b", 1.0)]) == [("c", 2.0), ("b", 1.0), ("a", 1.0)]


@pytest.mark.parametrize("suffix", [".txt", ".gz"])
def test_qrels_round_trip(tmp_path, suffix):
    q = Qrels({"1": {"a": 1, "b": 0, "c": 2}, "2": {"x": -1}})
    path = tmp_path / f"q{suffix}"
    write_qrels(path, q)
    assert read_qrels(path).judgements == q.judgements
    assert read_qrels(path).relevant("1") == {"a", "c"}


def test_blank_lines_are_skipped(tmp_path):
    path = tmp_path / "q.txt"
    path.write_text("\n1 0 a 1\n\n")
    assert read_qrels(path).judgements == {"1": {"a": 1}}


@pytest.mark.parametrize("text, lineno, message", [
    ("q Q0 a 1 1.0 t\nq Q0 b 2 1.0\n", 2, "6 columns"),
    ("q Q0 a 1 nan? t\n", 1, "not a number"),
    ("q Q0 a 1 1.0 t\nq Q0 a 2 0.5 t\n", 2, "appears twice"),
])
def test_run_errors(tmp_path, text, lineno, message):
    path = tmp_path / "run.txt"
    path.write_text(text)
    with pytest.raises(UserError, match=message) as e:
        read_run(path)
    assert f"{path}:{lineno}:" in str(e.value)


@pytest.mark.parametrize("text, lineno, message", [
    ("1 0 a 1\n1 0 b\n", 2, "4 columns"),
    ("1 0 a 1.5\n", 1, "not an integer"),
    ("1 0 a 1\n1 0 a 0\n", 2, "judged twice"),
])
def test_qrels_errors(tmp_path, text, lineno, message):
    path = tmp_path / "q.txt"
    path.write_text(text)
    with pytest.raises(UserError, match=message) as e:
        read_qrels(path)
    assert f"{path}:{lineno}:" in str(e.value)


def test_missing_file(tmp_path):
    with pytest.raises(UserError, match="file not found"):
        read_run(tmp_path / "nope.txt")


_RUN_TEXTS = [
    "q1 Q0 d1 1 2.5 t\nq1 Q0 d2 2 1.5 t\nq2 Q0 d1 1 3 t\n",
    "q1 Q0 d1 1 2.5 a\r\n\r\nq2 Q0 d9 1 0.5 a\r\nq1 Q0 d2 2 1e-3 b\r\n",  # CRLF, blank line, query split in two blocks
    "\n  \nq1\tQ0\td1\t1\t-0.0\tx\n",
    "",
    "q1 Q0 d1 1 2.5 t\nq1 Q0 d1 2 1.5 t\n",  # duplicate
    "q1 Q0 d1 1 2.5 t\nq2 Q0 d1 1 nan t\n",  # not finite
    "q1 Q0 d1 one 2.5 t\n",  # bad rank
    "q1 Q0 d1 1 2.5\n",  # 5 columns
    "q1 Q0 d1 1 2.5 t\nq1 Q0 d2 2 x t\n",  # bad score
    "q1 Q0 d\u00e9 1 2.5 t\nq1 Q0 d\u3000e 2 1 t\n",  # non-ASCII, an ideographic space splits a column
]
_QRELS_TEXTS = [
    "q1 0 d1 1\nq1 0 d2 0\nq2 0 d1 2\nq1 0 d3 1\n",
    "q1 0 d1 1\r\n\r\nq1 0 d1 1\r\n",  # judged twice with the same label: accepted
    "q1 0 d1 1\nq1 0 d1 2\n",  # different labels
    "q1 0 d1 x\n",
    "q1 0 d1 99999999999\n",
    "q1 0 d1\n",
    "",
]


def _outcome(fn, path):
    try:
        r = fn(path)
    except UserError as e:
        return "error", str(e)
    return "ok", (r.ranking, r.tag) if isinstance(r, Run) else r.judgements


@pytest.mark.parametrize("text", _RUN_TEXTS)
@pytest.mark.parametrize("suffix", ["", ".gz"])
def test_bulk_run_parse_equals_line_parse(tmp_path, text, suffix):
    """The whole-file parse gives exactly what the line-by-line parse gives, errors included."""
    from clir_eval.io.trec import _read_run_lines

    path = tmp_path / f"run.txt{suffix}"
    write_bytes(path, text.encode("utf-8"))
    assert _outcome(read_run, path) == _outcome(_read_run_lines, path)
    assert _outcome(lambda p: read_run(p, sort=True), path) == _outcome(lambda p: _read_run_lines(p, sort=True), path)


@pytest.mark.parametrize("text", _QRELS_TEXTS)
def test_bulk_qrels_parse_equals_line_parse(tmp_path, text):
    from clir_eval.io.trec import _read_qrels_lines

    path = tmp_path / "qrels.txt"
    path.write_bytes(text.encode("utf-8"))
    assert _outcome(read_qrels, path) == _outcome(_read_qrels_lines, path)


def test_bulk_parse_reports_invalid_utf8_at_its_line(tmp_path):
    path = tmp_path / "run.txt"
    path.write_bytes(b"q1 Q0 d1 1 2.5 t\nq1 Q0 d\xff 2 1 t\n")
    with pytest.raises(UserError, match=r"run.txt:2: not valid UTF-8"):
        read_run(path)


def write_bytes(path, data: bytes) -> None:
    import gzip

    path.write_bytes(gzip.compress(data) if path.suffix == ".gz" else data)
