"""The Python API checks its inputs as the commands check theirs: one clear UserError (the message the
command prints) for a NaN run score, a fractional or non-numeric relevance, a table, rounding or path of the
wrong kind, a config with a lone surrogate; never a raw exception and never a silently wrong number."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import clir_eval
from clir_eval.errors import UserError

ROOT = Path(__file__).resolve().parents[1]
QRELS = {"q1": {"a": 1, "b": 0, "c": 1}, "q2": {"a": 1}}
TABLE = {"system": ["s1", "s2", "s3", "s4", "s5"], "m": [1.0, 2.0, 3.0, 4.0, 5.0], "y": [1.0, 3.0, 2.0, 4.0, 5.0]}


def cli_error(*args: str) -> str:
    """The one ``error:`` line a command prints (exit 2, no traceback)."""
    p = subprocess.run([sys.executable, "-m", "clir_eval", *args], capture_output=True, text=True, cwd=ROOT,
                       env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert p.returncode == 2, p.stderr
    assert "Traceback" not in p.stderr
    lines = [ln for ln in p.stderr.splitlines() if ln.startswith("error:")]
    assert len(lines) == 1, p.stderr
    return lines[0]


@pytest.mark.parametrize("order", [("a", "b", "c"), ("c", "b", "a"), ("b", "a", "c")])
def test_nan_run_score_is_refused_whatever_the_dict_order(order):
    scores = {"a": float("nan"), "b": 1.0, "c": 0.5}
    run = {"q1": {d: scores[d] for d in order}, "q2": {"a": 1.0}}
    with pytest.raises(UserError, match=r"run\['q1'\]\['a'\]: score nan is not a finite number"):
        clir_eval.score_ir(QRELS, run, "map")


@pytest.mark.parametrize("score", [float("inf"), float("-inf"), 10**400, "abc", None, [1]])
def test_bad_run_scores_are_user_errors(score):
    with pytest.raises(UserError, match=r"run\['q1'\]\['a'\]: score .* is not a (finite )?number"):
        clir_eval.score_ir(QRELS, {"q1": {"a": score, "b": 1.0}}, "map")


@pytest.mark.parametrize("rel", [0.4, 1.0, 0.9999, "abc", "0.4", None, 1e20, [1]])
def test_non_integer_relevance_is_refused_not_truncated(rel):
    """pytrec_eval refuses a non-int label and the qrels reader a non-integer one; the API does the same
    (int() would read 0.4 as 0: non-relevant)."""
    with pytest.raises(UserError, match=r"qrels\['q1'\]\['a'\]: relevance .* is not an integer"):
        clir_eval.score_ir({"q1": {"a": rel, "b": 1}}, {"q1": {"a": 2.0, "b": 1.0}}, "map")


@pytest.mark.parametrize("rel", [2**31, -(2**31) - 1, 10**20])
def test_relevance_beyond_trec_evals_int_is_refused(rel):
    with pytest.raises(UserError, match=r"relevance -?\d+ is out of range"):
        clir_eval.score_ir({"q1": {"a": rel}}, {"q1": {"a": 1.0}}, "map")


def test_integer_relevance_in_every_form_scores_as_the_file_does(tmp_path):
    """An int, an integer text and a numpy integer are one label; the scores equal the CLI's on the same files."""
    np = pytest.importorskip("numpy")
    run = {"q1": {"a": 3.0, "b": 2.0, "c": 1.0}, "q2": {"a": 1.0, "z": 2.0}}
    forms = [QRELS, {q: {d: str(r) for d, r in docs.items()} for q, docs in QRELS.items()},
             {q: {d: np.int64(r) for d, r in docs.items()} for q, docs in QRELS.items()}]
    values = [clir_eval.score_ir(f, run, "map,P_2")["aggregate"] for f in forms]
    assert values[0] == values[1] == values[2]
    assert values[0]["map"] == pytest.approx(((1 + 2 / 3) / 2 + 1 / 2) / 2)
    (tmp_path / "q.txt").write_text("".join(f"{q} 0 {d} {r}\n" for q, docs in QRELS.items() for d, r in docs.items()))
    (tmp_path / "r.txt").write_text("".join(f"{q} Q0 {d} {i} {s} t\n" for q, docs in run.items()
                                            for i, (d, s) in enumerate(sorted(docs.items(), key=lambda x: -x[1]), 1)))
    assert clir_eval.score_ir(str(tmp_path / "q.txt"), str(tmp_path / "r.txt"), "map,P_2")["aggregate"] == values[0]


@pytest.mark.parametrize("label, line", [("0.4", "relevance '0.4' is not an integer"),
                                         ("abc", "relevance 'abc' is not an integer")])
def test_the_cli_and_the_api_refuse_a_label_with_the_same_words(tmp_path, label, line):
    (tmp_path / "q.txt").write_text(f"q1 0 a {label}\n")
    (tmp_path / "r.txt").write_text("q1 Q0 a 1 2.0 t\n")
    cli = cli_error("ir-score", "--qrels", str(tmp_path / "q.txt"), "--run", str(tmp_path / "r.txt"), "--measures", "map")
    with pytest.raises(UserError) as e:
        clir_eval.score_ir({"q1": {"a": label}}, {"q1": {"a": 2.0}}, "map")
    assert line in cli and line in str(e.value)
    assert cli.split(": ", 2)[2] == str(e.value).split(": ", 1)[1]  # the same text after the location


def test_the_cli_and_the_api_refuse_a_nan_score_with_the_same_words(tmp_path):
    (tmp_path / "q.txt").write_text("q1 0 a 1\n")
    (tmp_path / "r.txt").write_text("q1 Q0 a 1 nan t\n")
    cli = cli_error("ir-score", "--qrels", str(tmp_path / "q.txt"), "--run", str(tmp_path / "r.txt"), "--measures", "map")
    with pytest.raises(UserError) as e:
        clir_eval.score_ir({"q1": {"a": 1}}, {"q1": {"a": "nan"}}, "map")
    assert cli.split(": ", 2)[2] == str(e.value).split(": ", 1)[1]


@pytest.mark.parametrize("qrels, run, pattern", [
    ([("q1", "a", 1)], {"q1": {"a": 1.0}}, r"qrels: give a TREC file path or a mapping .* not list"),
    ({"q1": {"a": 1}}, [1, 2], r"run: give a TREC file path or a mapping .* not list"),
    ({"q1": [("a", 1)]}, {"q1": {"a": 1.0}}, r"qrels: give .* not \{'q1': list\}"),
    ({"q1": {"a": 1}}, {"1": {"a": 1.0}, 1: {"b": 1.0}}, r"run: query '1' is given twice"),
    ({"q1": {"a": 1}}, {"q9": {"a": 1.0}}, r"run: none of its 1 queries \('q9'\) is judged in qrels"),
    ({"q1": {"a": 1}}, {"q1": {}}, r"run: the run has no ranked documents"),
])
def test_wrongly_shaped_runs_and_qrels_are_user_errors(qrels, run, pattern):
    with pytest.raises(UserError, match=pattern):
        clir_eval.score_ir(qrels, run, "map")


@pytest.mark.parametrize("size", ["abc", 1.5, 0, float("inf"), True])
def test_a_bad_collection_size_is_a_user_error(size):
    with pytest.raises(UserError, match="collection size must be a positive integer"):
        clir_eval.score_ir({"q1": {"a": 1}}, {"q1": {"a": 1.0}}, "aqwv", collection_size=size)


@pytest.mark.parametrize("table, pattern", [
    ({"m": 1, "y": 2}, r"table: column 'm' is int, not a list of values"),
    ({"m": "1234", "y": "1243"}, r"table: column 'm' is str, not a list of values"),
    ([1, 2, 3], r"table: row 0 is int, not a mapping"),
    ([{"m": 1, "y": 2}, "m"], r"table: row 1 is str, not a mapping"),
    (5, r"table: give a TSV/CSV path, .* not int"),
    (None, r"table: give a TSV/CSV path, .* not NoneType"),
])
def test_tables_of_the_wrong_shape_are_user_errors(table, pattern):
    with pytest.raises(UserError, match=pattern):
        clir_eval.correlate(table, "m", "y")


@pytest.mark.parametrize("digits, piece", [("x", "m=x"), (10**6, "m=1000000"), (-1, "m=-1"), (1.5, "m=1.5"),
                                           (True, "m=True")])
def test_round_is_checked_as_the_clis_round(digits, piece):
    with pytest.raises(UserError) as e:
        clir_eval.correlate(TABLE, "m", "y", round={"m": digits})
    assert f"bad rounding {piece!r}" in str(e.value)


def test_round_minus_one_is_refused_by_both_with_the_same_words(tmp_path):
    t = tmp_path / "t.tsv"
    t.write_text("system\tm\ty\n" + "".join(f"{s}\t{m}\t{y}\n" for s, m, y in zip(*TABLE.values())))
    cli = cli_error("correlate", "--table", str(t), "--x", "m", "--y", "y", "--round", "m=-1")
    with pytest.raises(UserError) as e:
        clir_eval.correlate(TABLE, "m", "y", round={"m": -1})
    assert cli == f"error: {e.value}"


def test_round_in_range_rounds_as_the_cli_does(tmp_path):
    table = {"m": [1.04, 1.06, 2.0, 3.0, 4.0], "y": [1.0, 2.0, 3.0, 4.0, 5.0]}
    tau = clir_eval.correlate(table, "m", "y", round={"m": 1})[0]["tau"]
    assert tau == pytest.approx(clir_eval.correlate({"m": [1.0, 1.1, 2.0, 3.0, 4.0], "y": table["y"]}, "m", "y")[0]["tau"])
    with pytest.raises(UserError, match=r"round: give a mapping \{column: decimals\}"):
        clir_eval.correlate(table, "m", "y", round=[1])


@pytest.mark.parametrize("kwargs, pattern", [({"foo": 1}, r"unknown option 'foo'"),
                                             ({"group_by": 3}, r"group_by: give a column name"),
                                             ({"seed": -1}, r"seed=-1 must be >= 0")])
def test_correlate_options_are_checked(kwargs, pattern):
    with pytest.raises(UserError, match=pattern):
        clir_eval.correlate(TABLE, "m", "y", **kwargs)


@pytest.mark.parametrize("value", [None, 5, b"out"])
def test_load_of_a_non_path_is_a_user_error(value):
    with pytest.raises(UserError, match=r"load: give a directory path"):
        clir_eval.load(value)


@pytest.mark.parametrize("field", ["name", "notes"])
def test_a_lone_surrogate_in_a_dict_config_is_a_user_error_before_the_run_starts(tmp_path, field):
    (tmp_path / "h.txt").write_text("a b\n")
    cfg = {"name": "x", "mt": {"refs": [str(tmp_path / "h.txt")]},
           "systems": [{"name": f"s{i}", "hyp": str(tmp_path / "h.txt")} for i in range(3)]}
    cfg[field] = "bad\udcff" if field == "name" else ["ok", "bad\ud800"]
    where = "name: 'bad\\udcff'" if field == "name" else "notes[1]: 'bad\\ud800'"
    with pytest.raises(UserError) as e:
        clir_eval.run(cfg, tmp_path / "out")
    assert f"config: {where} is not valid text (a lone surrogate at character 3)" in str(e.value)
    assert not (tmp_path / "out").exists()


def test_a_lone_surrogate_in_a_key_is_named_without_printing_it(tmp_path):
    with pytest.raises(UserError) as e:
        clir_eval.run({"name": "x", "systems": {"attrs": {"k\udcff": "v"}}}, tmp_path / "out")
    assert "systems.attrs (a key)" in str(e.value)
    str(e.value).encode("utf-8")  # the message itself can be printed
