"""The column-wise run parse (``clir_eval/io/trec_columns.py``) reads every run file as the line-by-line parse
does (the same rankings, scores, order and tag; the same one-line error at the same line), across the
whitespace, number and layout variants the TREC run format allows, with queries cut across blocks; it agrees
with pytrec_eval's own parser; and ``ir-score`` prints the same bytes whichever parse read the run."""

from __future__ import annotations

import random

import pytest

from clir_eval.errors import UserError
from clir_eval.io import trec_columns
from clir_eval.io.trec import Run, read_qrels, read_run

SEPARATORS = [" ", "\t", "  ", " \t ", "\x0b", "\x0c", "\x1c", "\x1f", "\r", " \r "]
ENDINGS = ["\n", "\r\n", " \n", "\t\r\n", "\x0c\n"]
BLANKS = ["\n", "   \n", "\r\n", "\t\x0b\n"]
RANKS = ["1", "2", "17", "+2", "007", "-1", "0", "1_0"]
BAD_RANKS = ["1.0", "one", "1e3", "_1", "--1", "0x1"]
SCORES = ["1.5", "-0.25", "+3", "5.", ".5", "-.5", "0", "-0", "29.982927322387695", "1e-3", "2E+10",
          "1_0.5", "1e-400", "12345678901234567890.125", "-7"]
BAD_SCORES = ["nan", "inf", "-Infinity", "1e400", "1.2.3", "+", ".", "--1", "0x10", "1e", "e5", "+-1", "1..2"]
QIDS = ["1", "q2", "Q-3", "701", "10"]
DOCS = ["d1", "d2", "doc-7", "LA010189-0001", "x", "FBIS3-10082", "d10", "d01", "a.b", "d" * 20]


def _line(rng: random.Random, fields: list[str]) -> str:
    lead = rng.choice(["", "", "", " ", "\t"])
    return lead + "".join(f + rng.choice(SEPARATORS) for f in fields[:-1]) + fields[-1] + rng.choice(ENDINGS)


def _run_text(rng: random.Random) -> tuple[str, str | None]:
    """A run file with valid lines in a random layout; some with one fault (or a line the column parse leaves
    to the others: a control byte, a long token, non-ASCII text)."""
    queries = rng.sample(QIDS, rng.randint(1, 3))
    lines = []
    for q in queries:
        for rank, d in enumerate(rng.sample(DOCS, rng.randint(1, 6)), 1):
            rank_s = rng.choice(RANKS) if rng.random() < 0.2 else str(rank)
            lines.append([q, rng.choice(["Q0", "0", "x"]), d, rank_s, rng.choice(SCORES), rng.choice(["t", "run-1"])])
    if rng.random() < 0.3:  # interleaved queries
        rng.shuffle(lines)
    fault = rng.choice([None] * 6 + ["rank", "score", "columns", "duplicate", "control", "long", "unicode"])
    i = rng.randrange(len(lines))
    if fault == "rank":
        lines[i][3] = rng.choice(BAD_RANKS)
    elif fault == "score":
        lines[i][4] = rng.choice(BAD_SCORES)
    elif fault == "columns":
        lines[i] = lines[i][:5] if rng.random() < 0.5 else lines[i] + ["extra"]
    elif fault == "duplicate":
        lines.insert(rng.randrange(len(lines) + 1), list(lines[i]))
    elif fault == "control":
        lines[i][2] += "\x01z"
    elif fault == "long":
        lines[i][2] = "d" * (trec_columns.MAX_TOKEN + rng.randint(1, 9))
    elif fault == "unicode":
        lines[i][2] = rng.choice(["d\u00e9", "d\u00a0e", "d\u3000e"])  # U+00A0 and U+3000 split a column
    out = [rng.choice(BLANKS)] if rng.random() < 0.2 else []
    for fields in lines:
        out.append(_line(rng, fields))
        if rng.random() < 0.1:
            out.append(rng.choice(BLANKS))
    text = "".join(out)
    return (text.rstrip("\r\n") if rng.random() < 0.2 else text), fault  # the last line without its newline


def _generated(tmp_path, monkeypatch, block: int, make):
    """150 files written by ``make(rng)`` (seeded by ``block``), read with ``block`` bytes per block: (path, text,
    fault) of each."""
    monkeypatch.setattr(trec_columns, "BLOCK", block)
    rng = random.Random(block)
    for k in range(150):
        text, fault = make(rng)
        path = tmp_path / f"file{k}.txt"
        path.write_bytes(text.encode("utf-8"))
        yield path, text, fault


def _outcome(fn, path):
    try:
        r = fn(path)
    except UserError as e:
        return "error", str(e)
    return "ok", [(q, list(docs)) for q, docs in r.ranking.items()], r.tag


@pytest.mark.parametrize("block", [1, 40, 200, 1 << 22])
def test_column_parse_reads_as_the_line_parse(tmp_path, monkeypatch, block):
    """Rankings in order, scores, tag and errors equal to the line-by-line parse's; ``block`` bytes per block
    (1: every line is a block of its own; 40, 200: queries and lines cut across blocks)."""
    from clir_eval.io.trec import _read_run_lines

    for path, text, fault in _generated(tmp_path, monkeypatch, block, _run_text):
        for sort in (False, True):
            got = _outcome(lambda p: read_run(p, sort=sort), path)
            assert got == _outcome(lambda p: _read_run_lines(p, sort=sort), path), text
        data = text.encode("utf-8")
        if fault is None:  # read by the column parse itself
            assert trec_columns.parse_run_bytes(data) is not None, text
        elif fault in ("control", "long", "unicode"):  # left to the other parses
            assert trec_columns.parse_run_bytes(data) is None, text
        elif fault != "rank" or got[0] == "error":  # found by the column parse (a bad rank may be a valid one)
            with pytest.raises(trec_columns.Malformed):
                trec_columns.parse_run_bytes(data)


LABELS = ["0", "1", "2", "-1", "+1", "007", "1_0", "999999999", "2147483647", "-2147483648", "0000000000012"]
BAD_LABELS = ["1.5", "yes", "2147483648", "-2147483649", "99999999999", "1e3", "--1"]


def _qrels_text(rng: random.Random) -> tuple[str, str | None]:
    lines = []
    for q in rng.sample(QIDS, rng.randint(1, 3)):
        lines += [[q, rng.choice(["0", "Q0"]), d, rng.choice(LABELS)] for d in rng.sample(DOCS, rng.randint(1, 6))]
    if rng.random() < 0.3:
        rng.shuffle(lines)
    fault = rng.choice([None] * 6 + ["label", "columns", "same", "different", "control", "unicode"])
    i = rng.randrange(len(lines))
    if fault == "label":
        lines[i][3] = rng.choice(BAD_LABELS)
    elif fault == "columns":
        lines[i] = lines[i][:3] if rng.random() < 0.5 else lines[i] + ["extra"]
    elif fault in ("same", "different"):  # judged twice: with the same label (accepted) or another
        again = list(lines[i])
        again[3] = again[3] if fault == "same" else str(int(again[3]) + 1)
        lines.insert(rng.randrange(len(lines) + 1), again)
    elif fault == "control":
        lines[i][2] += "\x02"
    elif fault == "unicode":
        lines[i][2] += "\u00e9"
    out = [_line(rng, fields) + (rng.choice(BLANKS) if rng.random() < 0.1 else "") for fields in lines]
    return "".join(out), fault


@pytest.mark.parametrize("block", [1, 50, 1 << 20])
def test_column_qrels_parse_reads_as_the_line_parse(tmp_path, monkeypatch, block):
    """Judgements in order and labels, or the error, equal to the line-by-line parse's."""
    from clir_eval.io.trec import _REL_MAX, _REL_MIN, _read_qrels_lines

    for path, text, fault in _generated(tmp_path, monkeypatch, block, _qrels_text):

        def outcome(read):
            try:
                return "ok", [(q, list(j.items())) for q, j in read(path).judgements.items()]
            except UserError as e:
                return "error", str(e)

        got = outcome(read_qrels)
        assert got == outcome(_read_qrels_lines), text
        parse = lambda: trec_columns.parse_qrels_bytes(text.encode("utf-8"), _REL_MIN, _REL_MAX)  # noqa: E731
        if fault in (None, "same"):
            assert parse() is not None, text
        elif fault in ("control", "unicode"):
            assert parse() is None, text
        else:
            with pytest.raises(trec_columns.Malformed):
                parse()


@pytest.mark.parametrize("text, lineno, message", [
    ("q Q0 a 1 1.0 t\nq Q0 b 2 inf t\n", 2, "not a finite number"),
    ("q Q0 a 1 1.0 t\nq Q0 b 2 1e400 t\n", 2, "not a finite number"),
    ("q Q0 a 1 1.0 t\nq Q0 b 2.5 1.0 t\n", 2, "rank '2.5' is not an integer"),
    ("q Q0 a 1 1.0 t\nq Q0 b 2 1.0.0 t\n", 2, "score '1.0.0' is not a number"),
    ("q Q0 a 1 1.0 t\n\nq Q0 b 2 1.0 t x\n", 3, "6 columns"),
    ("q Q0 a 1 1.0 t\n" + "".join(f"q Q0 d{i} {i} 1.0 t\n" for i in range(2, 3000)) + "q Q0 a 3000 0.5 t\n",
     3000, "document 'a' appears twice for query 'q'"),
])
def test_bad_lines_named_as_before(cli, tmp_path, text, lineno, message):
    """One line ``error: FILE:LINE: ...`` and exit 2, also for a fault found blocks after the first line."""
    path = tmp_path / "run.txt"
    path.write_text(text)
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q 0 a 1\n")
    with pytest.raises(UserError, match=message) as e:
        read_run(path)
    assert str(e.value).startswith(f"{path}:{lineno}: ")
    code, out, err = cli("ir-score", "--qrels", qrels, "--run", path, "--measures", "map")
    assert (code, out) == (2, "") and err == f"error: {e.value}\n"


def test_column_parse_agrees_with_pytrec_eval(tmp_path):
    """The scores pytrec_eval's own parser reads from a run with ties, signs, exponents and mixed whitespace."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    rng = random.Random(3)
    lines = []
    for q in ("301", "302", "q3"):
        for rank, d in enumerate(rng.sample(range(10_000), 300), 1):
            score = rng.choice(["7.25", "7.25", "-1e-3", "+4", ".5", "3.", repr(rng.random() * 30)])
            sep = rng.choice([" ", "\t", "  "])
            lines.append(sep.join([q, "Q0", f"doc{d}", str(rank), score, "tag"]) + rng.choice(["\n", "\r\n"]))
    path = tmp_path / "run.txt"
    path.write_text("".join(lines))
    data = path.read_bytes()
    assert trec_columns.parse_run_bytes(data) is not None  # the column parse read it
    with open(path) as fh:
        expected = pytrec_eval.parse_run(fh)
    run = read_run(path)
    assert {q: dict(docs) for q, docs in run.ranking.items()} == expected
    assert list(run.ranking) == list(expected)


def test_scores_are_converted_when_first_used(tmp_path):
    path = tmp_path / "run.txt"
    path.write_text("q Q0 a 1 2.5 t\nq Q0 b 2 1e-3 t\nr Q0 c 1 -0 t\n")
    run = read_run(path)
    ranking = run.ranking
    assert isinstance(ranking, trec_columns.FileRanking)
    docs = run.docids("q")
    docs.append("z")  # a new list each time
    assert run.docids("q") == ["a", "b"] and run.docids("nope") == []
    assert not ranking._lists  # no score converted yet
    assert ranking["q"] == [("a", 2.5), ("b", 0.001)] and list(ranking) == ["q", "r"] and len(ranking) == 2
    assert ranking["q"] is ranking["q"]
    assert ranking == {"q": [("a", 2.5), ("b", 0.001)], "r": [("c", -0.0)]} and run == Run(dict(ranking), "t")
    with pytest.raises(KeyError):
        ranking["nope"]


@pytest.mark.parametrize("fmt", ["json", "tsv"])
@pytest.mark.parametrize("order", [[], ["--trec-order"]])
def test_ir_score_same_bytes_with_either_parse(cli, tmp_path, monkeypatch, fmt, order):
    """``ir-score``'s output from the column parse, and from the whole-file text parse it replaced."""
    rng = random.Random(5)
    run, qrels, ref = (tmp_path / f"{n}.txt" for n in ("run", "qrels", "ref"))
    with open(run, "w") as r, open(qrels, "w") as j, open(ref, "w") as e:
        for q in range(20):
            docs = rng.sample(range(500), 100)
            scores = sorted((round(rng.random() * 10, 1) for _ in docs), reverse=True)  # ties
            r.writelines(f"{q}\tQ0\tD{d} {k} {s} sys\n" for k, (d, s) in enumerate(zip(docs, scores), 1))
            e.writelines(f"{q} Q0 D{d} {k} {100 - k} en\n" for k, d in enumerate(rng.sample(range(500), 50), 1))
            j.writelines(f"{q} 0 D{d} {rng.randint(0, 2)}\n" for d in rng.sample(range(500), 40))
    args = ["ir-score", "--qrels", qrels, "--run", run, "--reference-run", ref, "--collection-size", "1000",
            "--measures", "map,ndcg_cut_10,P_10,recip_rank,rbo,aqwv,aqwv:threshold=5,mqwv", "--format", fmt, *order]
    code, columns, err = cli(*args)
    assert code == 0, err
    monkeypatch.setattr("clir_eval.io.trec.parse_run_bytes", lambda data: None)
    code, text, err = cli(*args)
    assert code == 0, err
    assert columns == text


def test_the_run_reader_loads_numpy_only_when_it_reads():
    """``io.trec`` (which ``retrieve --help`` imports) loads numpy when a file is read, not on import."""
    import subprocess
    import sys

    code = ("import sys\nfrom clir_eval.cli import main\nmain(['retrieve', '--help'])\n"
            "print('trec', 'clir_eval.io.trec' in sys.modules, 'numpy', 'numpy' in sys.modules)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-1] == "trec True numpy False"
