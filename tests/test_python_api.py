"""The public Python API (clir_eval/__init__.py, clir_eval/api.py): docs/python-api.md's examples
run in order after the demo; run()'s results equal results.json; each function answers as its
command does; ``import clir_eval`` imports nothing else."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import clir_eval
from clir_eval.cli import main

DOC = Path(__file__).resolve().parent.parent / "docs" / "python-api.md"


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """A directory holding demo-out/ (the demo's data, results and cache)."""
    root = tmp_path_factory.mktemp("api")
    assert main(["demo", "--out", str(root / "demo-out"), "--jobs", "2", "--quiet"]) == 0
    return root


def _blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S)


def test_docs_examples_run_and_results_equal_results_json(demo, monkeypatch, capsys):
    monkeypatch.chdir(demo)
    ns: dict = {}
    blocks = _blocks()
    assert len(blocks) >= 5
    for code in blocks:
        exec(compile(code, str(DOC), "exec"), ns)  # noqa: S102 - the documentation's own examples
    res = ns["res"]
    on_disk = json.loads((demo / "demo-out" / "results.json").read_text(encoding="utf-8"))
    assert res.verdicts == on_disk["verdicts"] and res.verdicts
    assert res.correlations == on_disk["correlations"]
    assert res.item_level == on_disk.get("item_level") and res.item_level is not None
    assert res.systems == on_disk["systems"] and dict(res) == on_disk == res.to_dict()
    small = json.loads((demo / "demo-out" / "from-dict" / "results.json").read_text(encoding="utf-8"))
    assert ns["small"].correlations == small["correlations"] and small["name"] == "demo-from-a-dict"
    assert {r["mt_metric"] for r in small["correlations"]} == {"bleu", "macrof1"}
    assert "Results('demo-out': 12 systems" in capsys.readouterr().out


def _cli_json(*args: str):
    proc = subprocess.run([sys.executable, "-m", "clir_eval", *args], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_each_function_answers_as_its_command(demo):
    d = demo / "demo-out"
    rows = clir_eval.correlate(str(d / "scores.tsv"), x="bleu,macrof1", y="map,P_10", resamples=100)
    assert rows == _cli_json("correlate", "--table", str(d / "scores.tsv"), "--x", "bleu,macrof1", "--y", "map,P_10",
                             "--ci", "100", "--format", "json")
    hyp, ref = d / "data" / "mt" / "literal.txt", d / "data" / "mt" / "ref.en.txt"
    scores = clir_eval.score_mt(str(hyp), str(ref), "bleu,chrf1,macrof1")
    assert {n: s.to_dict() for n, s in scores.items()} == _cli_json(
        "mt-score", "--hyp", str(hyp), "--ref", str(ref), "--metrics", "bleu,chrf1,macrof1", "--format", "json")
    lines = ref.read_text(encoding="utf-8").splitlines()
    assert clir_eval.score_mt(lines, [lines], ["bleu"])["bleu"].score == pytest.approx(100)
    run = d / "run.txt"
    assert main(["retrieve", "--docs", str(d / "data" / "english.jsonl"), "--queries", str(d / "data" / "queries.tsv"),
                 "--out", str(run), "--depth", "100"]) == 0
    qrels = d / "data" / "qrels.txt"
    ir = clir_eval.score_ir(str(qrels), str(run), ["map", "P_10", "nDCG@10"])
    cli = _cli_json("ir-score", "--qrels", str(qrels), "--run", str(run), "--measures", "map,P_10,nDCG@10",
                    "--format", "json")
    assert ir["aggregate"] == cli["aggregate"] and ir["per_query"] == cli["per_query"]


def test_dict_inputs_and_bad_input():
    from clir_eval.errors import UserError

    rows = clir_eval.correlate([{"a": 1, "b": 2}, {"a": 2, "b": 1}, {"a": 3, "b": 4}, {"a": 4, "b": 3.5}], "a", "b")
    assert rows[0]["tau"] == pytest.approx(1 / 3) and rows[0]["n"] == 4
    rows = clir_eval.correlate({"a": [1, 2, 3, None], "b": [1, 2, 3, 4]}, "a", "b")
    assert rows[0]["n"] == 3  # a missing value drops the row, as an empty cell does
    with pytest.raises(UserError, match="column 'c' is not in the table"):
        clir_eval.correlate({"a": [1, 2, 3], "b": [1, 2, 3]}, "a", "c")
    with pytest.raises(UserError, match=r"give one reference's segments as \[segments\]"):
        clir_eval.score_mt(["a b c"], ["a b d"], "bleu")
    ir = clir_eval.score_ir({"q1": {"d1": 1}}, {"q1": {"d2": 3.0, "d1": 2.0}}, "map,P_10")
    assert ir["aggregate"] == {"map": 0.5, "P_10": 0.1}
    with pytest.raises(AttributeError, match="no attribute 'nosuch'"):
        clir_eval.nosuch  # noqa: B018


def test_to_pandas(demo):
    pd = pytest.importorskip("pandas")
    res = clir_eval.load(demo / "demo-out")
    frame = res.to_pandas()
    assert isinstance(frame, pd.DataFrame) and len(frame) == len(res.correlations)
    assert set(res.to_pandas("systems").index) == set(res.systems)


def test_results_record_is_what_results_json_is_written_from(demo, tmp_path):
    """load() gives the record the run wrote results.json from: typed per-system entries, frozen, written
    again byte for byte (a block it does not know, e.g. the one clir-eval design adds, kept in place)."""
    import dataclasses

    from clir_eval.io.results import RunResults, SystemResult, load_results

    text = (demo / "demo-out" / "results.json").read_text(encoding="utf-8")
    on_disk = json.loads(text)
    res = clir_eval.load(demo / "demo-out")
    assert isinstance(res, RunResults) and res.to_json() == text
    strong = res.systems["strong"]
    assert isinstance(strong, SystemResult) and strong.mt == on_disk["systems"]["strong"]["mt"] and strong.mt
    assert strong.queries == on_disk["systems"]["strong"]["queries"] and strong.ir_per_query
    assert res.timing == on_disk["timing"] and res.item_segments == on_disk["item_segments"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        res.verdicts = []  # type: ignore[misc]
    changed = dataclasses.replace(res, notes=[*res.notes, "one more"])
    assert json.loads(changed.to_json())["notes"] == on_disk["notes"] + ["one more"] and res.to_json() == text
    on_disk["design"] = {"pilot": {"systems": 12}}
    (tmp_path / "results.json").write_text(json.dumps(on_disk, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    again = load_results(tmp_path)
    assert again.extra == {"design": {"pilot": {"systems": 12}}} and again["design"] == on_disk["design"]
    assert again.to_json() == (tmp_path / "results.json").read_text(encoding="utf-8") and again == on_disk


def test_import_clir_eval_imports_nothing_else():
    code = "import sys, clir_eval\nprint(*sorted(m for m in sys.modules if m.startswith('clir_eval')))"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["clir_eval", "clir_eval.version"]
    assert set(clir_eval.__all__) <= set(dir(clir_eval))
