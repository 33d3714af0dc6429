"""Indexes cached apart from runs; cached correlations; memory-aware local pool."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from test_pipeline import make_experiment

from clir_eval.config.load import load_config


def _metas(out: Path) -> dict[str, dict]:
    """Run metadata by run file name (``system-key``)."""
    runs = (out / "cache" / "runs").glob("*.json")
    return {p.stem: json.loads(p.read_text()) for p in runs if not p.name.endswith(".manifest.json")}


def _stable(out: Path) -> dict:
    r = json.loads((out / "results.json").read_text())
    r.pop("timing")
    r.pop("config")
    return r


def _edit(config: Path, **retrieval) -> None:
    cfg = yaml.safe_load(config.read_text())
    cfg["retrieval"].update(retrieval)
    config.write_text(yaml.safe_dump(cfg, sort_keys=False))


def test_new_depth_researches_cached_indexes_and_equals_a_clean_run(tmp_path, cli):
    (tmp_path / "d").mkdir()
    config = make_experiment(tmp_path / "d")
    out = tmp_path / "out"
    assert cli("run", config, "--out", out, "-j", "1", "-q")[0] == 0
    first = _metas(out)
    assert len(first) == 6 and not any(m["index_cached"] for m in first.values())
    indexes = sorted(p.name for p in (out / "cache" / "index").iterdir())
    assert len([p for p in (out / "cache" / "index").iterdir() if p.is_dir()]) == 6

    _edit(config, depth=49)
    assert cli("run", config, "--out", out, "-j", "1", "-q")[0] == 0
    second = {k: m for k, m in _metas(out).items() if k not in first}
    assert len(second) == 6 and all(m["index_cached"] for m in second.values())
    assert sorted(p.name for p in (out / "cache" / "index").iterdir()) == indexes
    clean = tmp_path / "clean"
    assert cli("run", config, "--out", clean, "-j", "1", "-q")[0] == 0
    assert _stable(out) == _stable(clean)

    # a damaged index is not trusted: rebuilt, same results
    victim = next(p for p in (out / "cache" / "index").iterdir() if p.name.startswith("sys2-") and p.is_dir())
    (victim / "dl.npy").write_bytes((victim / "dl.npy").read_bytes()[:-8] + bytes(8))
    _edit(config, depth=48)
    code, _, err = cli("run", config, "--out", out, "-j", "1", "-q")
    assert code == 0 and err.count("failed verification") == 1 and "index entry of sys2" in err, err
    assert cli("run", config, "--out", clean, "-j", "1", "-q")[0] == 0
    damaged = _stable(out)
    damaged["notes"] = [n for n in damaged["notes"] if "failed verification" not in n]
    assert damaged == _stable(clean)
    rebuilt = [m for k, m in _metas(out).items() if k.startswith("sys2-") and not m["index_cached"]]
    assert len(rebuilt) == 2  # the first run's and the one after the damage


def test_cached_rerun_reuses_correlations_and_reports(tmp_path, cli, monkeypatch):
    (tmp_path / "d").mkdir()
    config = make_experiment(tmp_path / "d")
    out = tmp_path / "out"
    assert cli("run", config, "--out", out, "-j", "1", "-q")[0] == 0
    before = {f: (out / f).stat().st_mtime_ns for f in ("report.md", "report.html", "scores.tsv")}
    results = _stable(out)

    import clir_eval.correlation.driver as driver

    def fail(*a, **k):
        raise AssertionError("correlations recomputed on a cached re-run")

    monkeypatch.setattr(driver, "correlate_run", fail)
    code, _, err = cli("run", config, "--out", out, "-j", "1", "-q")
    assert code == 0, err
    assert _stable(out) == results
    assert {f: (out / f).stat().st_mtime_ns for f in before} == before


def test_local_pool_lowered_to_fit_index_builds_in_memory(tmp_path, capsys, monkeypatch):
    import clir_eval.pipeline.run as pl

    (tmp_path / "d").mkdir()
    config = make_experiment(tmp_path / "d")
    monkeypatch.setattr(pl, "available_memory", lambda: 1)
    pl.run_experiment(load_config(config), tmp_path / "low", jobs=2, quiet=False)
    err = capsys.readouterr().err
    assert "note: memory: 1 index build(s) at a time instead of --jobs 2" in err
    monkeypatch.setattr(pl, "available_memory", lambda: 2**50)
    pl.run_experiment(load_config(config), tmp_path / "high", jobs=2, quiet=False)
    assert "note: memory" not in capsys.readouterr().err
    assert _stable(tmp_path / "low") == _stable(tmp_path / "high")


def test_reference_backend_index_is_cached_too_and_reruns_equal_a_clean_build(tmp_path, cli):
    """``backend: rank_bm25``: a new depth re-searches the cached postings (rank-bm25 re-initialised
    from them, without tokenising again): every run file byte-identical to a clean build's."""
    (tmp_path / "d").mkdir()
    config = make_experiment(tmp_path / "d")
    _edit(config, backend="rank_bm25")
    out, clean = tmp_path / "out", tmp_path / "clean"
    assert cli("run", config, "--out", out, "-j", "1", "-q")[0] == 0
    first = _metas(out)
    assert len(first) == 6 and not any(m["index_cached"] for m in first.values())
    assert all("backend:rank_bm25" in m["signature"] for m in first.values())
    _edit(config, depth=49)
    assert cli("run", config, "--out", out, "-j", "1", "-q")[0] == 0
    second = {k: m for k, m in _metas(out).items() if k not in first}
    assert len(second) == 6 and all(m["index_cached"] for m in second.values())
    assert cli("run", config, "--out", clean, "-j", "1", "-q")[0] == 0
    assert _stable(out) == _stable(clean)
    runs = lambda o: {p.name: p.read_bytes() for p in (o / "cache" / "runs").glob("*.run")}  # noqa: E731
    assert {k: v for k, v in runs(out).items() if k in runs(clean)} == runs(clean) and len(runs(clean)) == 6
