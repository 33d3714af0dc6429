"""A stage's cache key comes from what the stage reads: a config's name, notes and location key
nothing (a re-run after moving the file or editing a note reuses every cached stage)."""

from __future__ import annotations

import yaml
from test_cli_validate import _experiment

from clir_eval.config.load import load_config
from clir_eval.pipeline.run import run_experiment


def _keys(cache, stage: str) -> set[str]:
    return {p.name.split(".")[0] for p in (cache / stage).iterdir() if not p.name.startswith(".")}


def test_name_notes_and_location_key_no_stage(tmp_path):
    cfg = _experiment(tmp_path)
    cache = tmp_path / "cache"
    first = run_experiment(load_config(cfg), tmp_path / "out1", jobs=1, quiet=True, cache_dir=cache)
    before = {stage.name: _keys(cache, stage.name) for stage in cache.iterdir() if stage.is_dir()}
    assert before["correlation"] and before["mt"]
    data = yaml.safe_load(cfg.read_text())
    data["name"] = "renamed"
    data["notes"] = ["a note added after the first run"]
    moved = tmp_path / "elsewhere" / "moved.yaml"
    moved.parent.mkdir()
    moved.write_text(yaml.safe_dump(data))
    cfg.unlink()
    second = run_experiment(load_config(moved), tmp_path / "out2", jobs=1, quiet=True, cache_dir=cache)
    after = {stage.name: _keys(cache, stage.name) for stage in cache.iterdir() if stage.is_dir()}
    assert after == before
    assert second["correlations"] == first["correlations"] and second["name"] == "renamed"


def test_a_correlation_setting_keys_the_correlations(tmp_path):
    cfg = _experiment(tmp_path)
    cache = tmp_path / "cache"
    run_experiment(load_config(cfg), tmp_path / "out1", jobs=1, quiet=True, cache_dir=cache)
    data = yaml.safe_load(cfg.read_text())
    data["correlation"]["variant"] = "c"
    cfg.write_text(yaml.safe_dump(data))
    run_experiment(load_config(cfg), tmp_path / "out2", jobs=1, quiet=True, cache_dir=cache)
    assert len(_keys(cache, "correlation")) == 2
