"""The README's main command: `clir-eval demo` end to end on generated data."""

import importlib.util
import json
from importlib.resources import files
from pathlib import Path

from clir_eval.correlation.design_items import run_pilot

ROOT = Path(__file__).resolve().parent.parent


def test_packaged_demo_config_is_the_one_in_configs():
    packaged = files("clir_eval").joinpath("data/demo.yaml").read_text(encoding="utf-8")
    assert packaged == (ROOT / "configs" / "demo.yaml").read_text(encoding="utf-8")


def test_demo_runs_end_to_end(cli, tmp_path):
    out = tmp_path / "demo"
    code, stdout, err = cli("demo", "--out", out, "--jobs", "2")
    assert code == 0, err
    res = json.loads((out / "results.json").read_text())
    assert len(res["systems"]) >= 8
    assert {"bleu", "chrf1", "macrof1", "microf1"} <= set(res["score_kinds"]["mt"])
    assert {"map", "rbo", "aqwv"} <= set(res["score_kinds"]["ir"])
    assert all(-1 <= c["tau"] <= 1 for c in res["correlations"] if c["tau"] is not None)
    assert res["signature"]["seed"] == 13
    # the summary: warnings, one verdict line per IR measure (all 5 shown), the item level's answers indented
    # below them, then where the report is
    lines = stdout.strip().splitlines()
    system_lines = [line for line in lines if "clusters {" in line and not line.startswith("    ")]
    assert len(system_lines) == len(res["score_kinds"]["ir"]) == 5
    assert sum("clusters {" in line for line in lines) == 5 + len(res["item_level"]["verdicts"])
    assert any(str(out / "report.html") in line for line in lines)
    assert (out / "report.html").stat().st_size > 10_000
    # the story its notes tell: the simulated rare-word errors make MacroF1 a significant winner
    # for MAP, while recip_rank (saturated) answers nothing
    tau = {c["x"]: c["tau"] for c in res["correlations"] if c["y"] == "map"}
    assert tau["macrof1"] > tau["bleu"]
    verdict = {v["target"]: v for v in res["verdicts"]}
    assert verdict["map"]["winner"] == "macrof1" and verdict["map"]["clusters"][0] == ["macrof1"]
    assert any("map" in line and "winner macrof1" in line for line in lines)
    assert any("PERM-BOTH at Holm-adjusted p < 0.05" in line for line in lines)  # the test behind the winners
    assert verdict["recip_rank"]["winner"] is None
    assert not any(p["significant"] for p in verdict["recip_rank"]["pairwise"])
    notes = " ".join(res["notes"])
    assert "for map, MacroF1 is the only metric in the first cluster" in notes and "For recip_rank there is no winner" in notes
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "For recip_rank there is no winner" in page
    # the answer first, in short lines; warnings, notes and timing on stderr
    assert lines[0].startswith("Answer (system level, 12 systems") and "macrof1 wins on map" in lines[1]
    head = lines[:next(i for i, ln in enumerate(lines) if ln.startswith("report: "))]
    assert len(head) <= 10 and max(map(len, head)) <= 110
    assert "demo finished in" in err and "demo finished in" not in stdout
    # design's note on the queries' item level says what the run directory holds (item_queries.json is kept)
    pilot = run_pilot(out, res)
    (note,) = [n for n in pilot.notes if "the queries' questions are not designed" in n]
    assert (out / "item_queries.json").is_file() and "item_queries.json" in note and "keeps only" not in note
    # the README's picture of this report was made from this demo's first screen (scripts/docs_screenshot.py)
    shot = _screenshot_script()
    made = json.loads((ROOT / "docs" / "images" / "report.json").read_text(encoding="utf-8"))
    fresh = shot.sidecar((out / "report.md").read_text(encoding="utf-8"))
    assert made["first_screen"] == fresh["first_screen"], (
        "docs/images/report.png shows an older demo: run `python scripts/docs_screenshot.py`")
    assert made["first_screen_sha256"] == fresh["first_screen_sha256"] and made["first_screen"].count("\n") > 5


def _screenshot_script():
    spec = importlib.util.spec_from_file_location("docs_screenshot", ROOT / "scripts" / "docs_screenshot.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_demo_is_deterministic(cli, tmp_path, monkeypatch):
    assert cli("demo", "--out", tmp_path / "a", "-j", "1", "-q")[0] == 0
    # a user's CLIR_EVAL_DATA (pointing at real data) must not redirect the demo's generated data
    monkeypatch.setenv("CLIR_EVAL_DATA", str(tmp_path / "elsewhere"))
    assert cli("demo", "--out", tmp_path / "b", "-j", "1", "-q")[0] == 0
    a = json.loads((tmp_path / "a" / "results.json").read_text())
    b = json.loads((tmp_path / "b" / "results.json").read_text())
    for r in (a, b):
        r.pop("timing"), r.pop("config")
    assert a == b


def test_the_story_note_is_only_in_the_config_of_the_seed_it_describes():
    from clir_eval.cli.demo import demo_config_text
    from clir_eval.io.safe_yaml import load_yaml

    packaged = files("clir_eval").joinpath("data/demo.yaml").read_text(encoding="utf-8")
    own, other = (load_yaml(demo_config_text(packaged, seed), "demo.yaml") for seed in (13, 14))
    assert own["seed"] == 13 and other["seed"] == 14 and own["data_root"] == other["data_root"] == "data"
    assert any(n.startswith("What to look for (seed 13)") for n in own["notes"])
    assert not any("What to look for" in n for n in other["notes"]) and len(other["notes"]) == len(own["notes"]) - 1
