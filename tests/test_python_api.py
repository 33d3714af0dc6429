"""The public Python API (clir_eval/__init__.py, clir_eval/api.py): docs/python-api.md's examples
run in order after the demo; run()'s results equal results.json; each function answers as its
command does; ``import clir_eval`` imports nothing else."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import clir_eval
from clir_eval.cli import main

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "python-api.md"


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """A directory holding demo-out/ (the demo's data, results and cache)."""
    root = tmp_path_factory.mktemp("api")
    assert main(["demo", "--out", str(root / "demo-out"), "--jobs", "2", "--quiet"]) == 0
    return root


def _blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S)


# Appended to the documentation's examples (which define res, small and pooled): what they returned, as JSON.
CHECK = """
import json as _json
with open("api-check.json", "w", encoding="utf-8") as _fh:
    _json.dump({"res": res.to_dict(), "verdicts": res.verdicts, "item_level": res.item_level,
                "small": small.correlations, "pooled": pooled.to_dict()}, _fh)
"""


def _script(path: Path, code: str, cwd: Path) -> subprocess.CompletedProcess:
    """``python SCRIPT`` as a user runs a saved script: no ``if __name__ == "__main__"`` guard."""
    path.write_text(code, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, str(path)], cwd=cwd, capture_output=True, text=True, env=env, timeout=600)


def test_docs_examples_run_as_a_script_and_results_equal_results_json(demo):
    blocks = _blocks()
    assert len(blocks) >= 5 and "__main__" not in "".join(blocks)
    proc = _script(demo / "examples.py", "\n".join(blocks) + CHECK, demo)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Results('demo-out': 12 systems" in proc.stdout
    got = json.loads((demo / "api-check.json").read_text(encoding="utf-8"))
    on_disk = json.loads((demo / "demo-out" / "results.json").read_text(encoding="utf-8"))
    assert got["res"] == on_disk and got["verdicts"] == on_disk["verdicts"] and on_disk["verdicts"]
    assert got["item_level"] == on_disk.get("item_level") and got["item_level"] is not None
    small = json.loads((demo / "demo-out" / "from-dict" / "results.json").read_text(encoding="utf-8"))
    assert got["small"] == small["correlations"] and small["name"] == "demo-from-a-dict"
    assert {r["mt_metric"] for r in small["correlations"]} == {"bleu", "macrof1"}
    # PoolResult.to_dict() is `clir-eval pool --format json`, its summary included
    cli = subprocess.run([sys.executable, "-m", "clir_eval", "pool", "demo-out", "demo-out/from-dict", "--margin", "0.1",
                          "--bootstrap", "200", "--format", "json"], cwd=demo, capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert cli.returncode == 0, cli.stderr
    assert got["pooled"] == json.loads(cli.stdout) and got["pooled"]["summary"]
    # the documented pool example keeps to the system level: its map rows are the system-level leaderboard's
    shown = re.search(r"^\[\(.*\)\]$", proc.stdout.splitlines()[-1])
    assert shown and proc.stdout.splitlines()[-1].count("(") == len(
        [r for r in got["pooled"]["leaderboard"] if r["target"] == "map" and r.get("level", "system") == "system"])


SMALL_RUN = """
import clir_eval

cfg = {"name": "in-a-script", "systems": {"pattern": "demo-out/data/systems/{system}.jsonl",
                                          "hyp": "demo-out/data/mt/{system}.txt", "docs": "{path}"},
       "mt": {"refs": ["demo-out/data/mt/ref.en.txt"], "metrics": ["bleu"]},
       "collection": {"english": "demo-out/data/english.jsonl"},
       "queries": {"file": "demo-out/data/queries.tsv"}, "relevance": {"qrels": "demo-out/data/qrels.txt"},
       "ir": {"measures": ["map"]}, "correlation": {"bootstrap": 0, "permutation": 50}}
res = clir_eval.run(cfg, out="script-out", jobs=2)
print(res)
"""


def test_run_with_workers_from_a_plain_script_needs_no_main_guard(demo):
    """Two worker processes started from a script without a guard: they do not run the script again (spawn's
    default would, and each copy would call run() again and trip over the first one's lock)."""
    proc = _script(demo / "plain.py", SMALL_RUN, demo)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.count("Results('script-out'") == 1 and "Traceback" not in proc.stderr
    assert (demo / "script-out" / "results.json").is_file()


def test_workers_that_cannot_start_are_named_in_one_line(tmp_path):
    """Workers whose interpreter exits before it runs a task: one UserError saying they could not start, not
    'killed or out of memory'."""
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\nsleep 0.5\nexit 3\n", encoding="utf-8")
    fake.chmod(0o755)
    code = f"""
import multiprocessing
from clir_eval.errors import UserError
from clir_eval.pipeline.executor import LocalExecutor
multiprocessing.set_executable({str(fake)!r})
try:
    with LocalExecutor(2) as ex:
        ex.map(abs, [1, -2, 3])
except UserError as e:
    print("error:", e)
"""
    proc = _script(tmp_path / "nostart.py", code, tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (line,) = [ln for ln in proc.stdout.splitlines() if ln.startswith("error:")]
    assert "worker processes could not start" in line and "jobs=1" in line and "out of memory" not in line


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
