"""A cache shared by several output directories (``--cache DIR`` / ``$CLIR_EVAL_CACHE``): a
second output directory reuses finished work, with the same keys and verification, and runs
that share a cache take turns (a second one waits for the first, then reuses its entries)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from test_pipeline import make_experiment

from clir_eval.pipeline.output import cache_locked

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture()
def experiment(tmp_path):
    (tmp_path / "exp").mkdir()
    return make_experiment(tmp_path / "exp")


def _stable(out: Path) -> dict:
    r = json.loads((out / "results.json").read_text())
    r.pop("timing")
    return r


def _files(root: Path) -> dict[str, int]:
    return {str(p.relative_to(root)): p.stat().st_mtime_ns for p in root.rglob("*") if p.is_file()
            and p.name != ".clir-eval-cache.lock"}


def _cli(*args, env=None):
    env = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    return subprocess.Popen([sys.executable, "-m", "clir_eval", *map(str, args)], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_second_output_directory_reuses_the_shared_cache(experiment, tmp_path, cli):
    shared = tmp_path / "shared-cache"
    assert cli("run", experiment, "--out", tmp_path / "a", "--cache", shared, "-j", "1", "-q")[0] == 0
    assert not (tmp_path / "a" / "cache").exists() and any(shared.iterdir())
    before = _files(shared)
    code, _, err = cli("run", experiment, "--out", tmp_path / "b", "--cache", shared, "-j", "1", "-q")
    assert code == 0, err
    assert _files(shared) == before, "the second directory recomputed or rewrote cache entries"
    assert _stable(tmp_path / "a") == _stable(tmp_path / "b")
    assert cli("run", experiment, "--out", tmp_path / "own", "-j", "1", "-q")[0] == 0  # its own OUT/cache
    assert _stable(tmp_path / "own") == _stable(tmp_path / "a")


def test_damaged_shared_entry_is_verified_and_recomputed(experiment, tmp_path, cli):
    shared = tmp_path / "c"
    assert cli("run", experiment, "--out", tmp_path / "a", "--cache", shared, "-j", "1", "-q")[0] == 0
    victim = sorted(p for p in (shared / "mt").glob("*.json") if not p.name.endswith(".manifest.json"))[0]
    victim.write_text(victim.read_text()[:-5])
    code, _, err = cli("run", experiment, "--out", tmp_path / "b", "--cache", shared, "-j", "1", "-q")
    assert code == 0 and "failed verification" in err, err
    assert _stable(tmp_path / "b")["systems"] == _stable(tmp_path / "a")["systems"]


def test_environment_variable_names_the_shared_cache(experiment, tmp_path):
    shared = tmp_path / "env-cache"
    p = _cli("run", experiment, "--out", tmp_path / "a", "-j", "1", "-q", env={"CLIR_EVAL_CACHE": str(shared)})
    _, err = p.communicate(timeout=300)
    assert p.returncode == 0, err
    assert (shared / "mt").is_dir() and not (tmp_path / "a" / "cache").exists()


def test_a_run_waits_for_the_run_holding_the_cache(experiment, tmp_path):
    shared = tmp_path / "c"
    shared.mkdir()
    notes = []
    with cache_locked(shared.absolute(), notes.append):
        p = _cli("run", experiment, "--out", tmp_path / "a", "--cache", shared, "-j", "1", "-q")
        time.sleep(3)
        assert p.poll() is None, "the run went on while another run held the cache"
        assert not (tmp_path / "a" / "results.json").exists()
    _, err = p.communicate(timeout=300)
    assert p.returncode == 0, err
    assert "another clir-eval run is using this cache" in err and f"pid {os.getpid()}" in err
    assert (tmp_path / "a" / "results.json").exists()


def test_concurrent_runs_on_one_cache_are_safe(experiment, tmp_path, cli):
    shared = tmp_path / "c"
    shared.mkdir()
    with cache_locked(shared.absolute(), print):  # all three start while the cache is busy, then race for it
        procs = [_cli("run", experiment, "--out", tmp_path / f"o{i}", "--cache", shared, "-j", "1", "-q")
                 for i in range(3)]
        lines: list[list[str]] = [[] for _ in procs]
        readers = [threading.Thread(target=lambda p=p, got=got: got.extend(p.stderr), daemon=True)
                   for p, got in zip(procs, lines)]
        for r in readers:
            r.start()
        deadline = time.monotonic() + 300
        while not all(any("waiting" in ln for ln in got) for got in lines) and time.monotonic() < deadline:
            assert all(p.poll() is None for p in procs), lines
            time.sleep(0.2)
    for p, r in zip(procs, readers):
        p.wait(timeout=600)
        r.join()
    errs = ["".join(got) for got in lines]
    assert [p.returncode for p in procs] == [0, 0, 0], errs
    assert not any("failed verification" in e for e in errs), errs
    assert all("waiting for it to finish" in e for e in errs), errs
    assert cli("run", experiment, "--out", tmp_path / "serial", "-j", "1", "-q")[0] == 0
    want = _stable(tmp_path / "serial")
    assert all(_stable(tmp_path / f"o{i}") == want for i in range(3))
