"""``validate`` and ``run`` share every check (sources/validate.py:check_settings): what one refuses
the other refuses with the same one-line error, before any output is made; a score table that leaves
a system out is a note for both."""

from __future__ import annotations

import pytest
import yaml
from conftest import assert_one_line_error
from test_wmt_experiments import _lines_experiment


def _experiment(tmp_path, **edit):
    cfg = _lines_experiment(tmp_path)
    data = yaml.safe_load(cfg.read_text())
    data["mt"] = {"refs": [str(tmp_path / "ref.txt")], "metrics": ["bleu", "chrf1"]}
    for s in data["systems"]:
        s["hyp"] = s["docs"]
    rows = "".join(f"S{i}\t0.{i}\t{i}\n" for i in range(4))
    (tmp_path / "ext.tsv").write_text("system\tbleurt\tcomet\n" + rows, encoding="utf-8")
    data.update(edit)
    cfg.write_text(yaml.safe_dump(data))
    return cfg


@pytest.mark.parametrize("edit, expect", [
    ({"item_level": {"metrics": ["nosuch"]}}, r"error: item_level\.metrics\[0\]: unknown metric 'nosuch'"),
    ({"external": [{"file": "ext.tsv", "kind": "mt", "columns": {"bleurt": "bleu"}}]},
     r"error: external\[0\]\.columns: score name 'bleu' is already used"),
    ({"external": [{"file": "ext.tsv", "kind": "ir", "columns": {"bleurt": "map"}}]},
     r"error: external\[0\]\.columns: score name 'map' is already used"),
    ({"external": [{"file": "ext.tsv", "kind": "mt", "columns": {"bleurt": "x"}},
                   {"file": "ext.tsv", "kind": "human", "columns": {"comet": "x"}}]},
     r"error: external\[1\]\.columns: score name 'x' is already used"),
])
def test_validate_refuses_what_run_refuses(tmp_path, cli, monkeypatch, edit, expect):
    monkeypatch.chdir(tmp_path)
    cfg = _experiment(tmp_path, **edit)
    code, _, err = cli("validate", cfg)
    line = assert_one_line_error(code, err, expect)
    code, _, err = cli("run", cfg, "--out", tmp_path / "out", "--jobs", "1", "--quiet")
    assert assert_one_line_error(code, err, expect) == line
    assert not (tmp_path / "out").exists()  # refused before any output is made


def test_validate_accepts_a_table_gap_as_run_does(tmp_path, cli, monkeypatch):
    monkeypatch.chdir(tmp_path)
    cfg = _experiment(tmp_path, external=[{"file": "ext.tsv", "kind": "mt", "columns": ["bleurt"]}])
    (tmp_path / "ext.tsv").write_text("system\tbleurt\nS0\t0.1\nS1\t0.2\nS2\t0.3\nsys3\t0.4\n", encoding="utf-8")
    code, _, err = cli("validate", cfg)
    assert code == 0, err
    assert "note: ext.tsv: no row for 1 of 4 system(s): S3 (closest: sys3)" in err
    assert "ok: external[0]: ext.tsv has a row for 3 of the 4 systems" in err
    code, _, err = cli("run", cfg, "--out", tmp_path / "out", "--jobs", "1", "--quiet")
    assert code == 0, err
    import json

    notes = json.loads((tmp_path / "out" / "results.json").read_text())["notes"]
    assert any("ext.tsv: no row for 1 system(s) (S3" in n for n in notes)
