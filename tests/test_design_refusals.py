"""``design --table --level item`` says why a table fits no item-level model, and refuses before simulating a
study estimated to pass the memory bound (tables generated here; the command in a subprocess)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]


def write_pilot(path: Path, systems: int = 8, items: int = 60, missing_a: int = 0, missing_b: int = 0,
                constant_y: bool = False) -> None:
    """One row per system and item; metric a lacks system 0's score on every ``missing_a``-th item (b on every
    ``missing_b``-th); ``constant_y``: the target is equal across the systems on all but two items."""
    rng = np.random.default_rng(0)
    q = rng.standard_normal(systems)[:, None] + rng.standard_normal((systems, items))
    rows = ["system\titem\ta\tb\ty"]
    for s in range(systems):
        for i in range(items):
            a = "" if missing_a and s == 0 and i % missing_a == 0 else f"{q[s, i] + rng.normal() * .5:.5f}"
            b = "" if missing_b and s == 0 and i % missing_b == 0 else f"{q[s, i] + rng.normal():.5f}"
            y = f"{i:.1f}" if constant_y and i > 1 else f"{q[s, i] + rng.normal() * .7:.5f}"
            rows.append(f"s{s}\ti{i}\t{a}\t{b}\t{y}")
    path.write_text("\n".join(rows) + "\n")


def design(table: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "clir_eval", "design", "--table", str(table), "--level", "item",
                           "--x", "a,b", "--y", "y", "--query-col", "item", "--reps", "20", "-q", *args],
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})})


def one_error(p: subprocess.CompletedProcess) -> str:
    assert p.returncode == 2 and "Traceback" not in p.stderr and p.stdout == "", p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), p.stderr
    return lines[0]


def test_metrics_missing_on_too_many_items_are_named_with_their_shares(tmp_path):
    write_pilot(tmp_path / "t.tsv", missing_a=5, missing_b=3)
    msg = one_error(design(tmp_path / "t.tsv"))
    assert "every --x metric lacks a score (for some system) on more than 10% of the items (a on 20%, b on 33%)" in msg
    assert "fill the missing cells" in msg


def test_a_target_constant_on_the_items_is_named(tmp_path):
    write_pilot(tmp_path / "t.tsv", constant_y=True)
    msg = one_error(design(tmp_path / "t.tsv"))
    assert "only 2 item(s) have y varying across the systems" in msg and "at least 3" in msg


@pytest.mark.parametrize("args, study", [(["--systems", "300", "--items", "100000"], "300 systems x 60 items"),
                                         (["--items", "100000", "--jobs", "1"], None)])
def test_a_study_past_the_memory_bound_is_refused_before_simulating(tmp_path, args, study):
    write_pilot(tmp_path / "t.tsv")
    if study is None:  # 8 systems x 100,000 items: fits within 4 GiB; with the bound lowered it is refused
        msg = one_error(design(tmp_path / "t.tsv", *args, env={"CLIR_EVAL_MAX_MEMORY_BYTES": str(200 * 2**20)}))
        assert "the largest study simulated, 8 systems x 100000 items (28 system pairs per item)" in msg
        assert "over the bound of 0.20 GiB" in msg
        return
    msg = one_error(design(tmp_path / "t.tsv", *args))
    assert f"the largest study simulated, {study} (44850 system pairs per item), would need about" in msg
    assert "over the bound of 4.00 GiB; give smaller --systems or --items, fewer --jobs" in msg
