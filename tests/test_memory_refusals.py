"""Computations whose memory grows with one input are refused before they start (the bound named, one
``error:`` line) or run in bounded memory: a long segment for chrF/chrF++/BLEU/MacroF/TER, Kendall's pair
counts of a long table. Peak figures: scripts/bench_memory_bounds.py."""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

import clir_eval
from clir_eval.correlation.kendall import PAIRWISE_MAX_N, pair_stats
from clir_eval.errors import UserError

ROOT = Path(__file__).resolve().parents[1]


def brute_pair_stats(x, y):
    """(concordant, discordant, tied only in x, tied only in y, tied in both), pair by pair."""
    out = [0, 0, 0, 0, 0]
    for i, j in itertools.combinations(range(len(x)), 2):
        dx, dy = (x[i] > x[j]) - (x[i] < x[j]), (y[i] > y[j]) - (y[i] < y[j])
        k = 4 if dx == dy == 0 else 2 if dx == 0 else 3 if dy == 0 else 0 if dx == dy else 1
        out[k] += 1
    return tuple(out)


@pytest.mark.parametrize("seed", range(6))
def test_pair_counts_equal_a_pair_by_pair_count(seed):
    rng = np.random.default_rng(seed)
    for _ in range(40):
        n, k = int(rng.integers(0, 45)), int(rng.integers(1, 9))
        x, y = rng.integers(0, k, n).astype(float), rng.integers(0, k, n).astype(float)
        assert pair_stats(x, y) == brute_pair_stats(x.tolist(), y.tolist())
    for n in (PAIRWISE_MAX_N, PAIRWISE_MAX_N + 1, 3 * PAIRWISE_MAX_N // 2):  # both ways of counting
        k = int(rng.integers(2, 40))
        x, y = rng.integers(0, k, n).astype(float), rng.integers(0, k, n).astype(float)
        assert pair_stats(x, y) == brute_pair_stats(x.tolist(), y.tolist())


def test_pair_counts_of_a_long_column_take_linear_memory():
    """20,000 rows: n x n sign matrices would take 3.2 GB each; the counts need a few arrays of n."""
    rng = np.random.default_rng(1)
    x, y = rng.integers(0, 500, 20_000).astype(float), rng.random(20_000)
    tracemalloc.start()
    con, dis, tx, ty, both = pair_stats(x, y)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 30 * 2**20, peak
    assert con + dis + tx + ty + both == 20_000 * 19_999 // 2
    assert abs(con - dis) < 0.02 * (con + dis)  # independent columns


def long_line(n: int, seed: int) -> str:
    rng = np.random.default_rng(seed)
    words = ["".join(chr(97 + c) for c in rng.integers(0, 26, 6)) for _ in range(5000)]
    text = " ".join(rng.choice(words, n // 6))
    return text[:n]


@pytest.mark.parametrize("metric", ["chrf++", "chrf", "bleu", "macrof1", "ter"])
def test_a_segment_too_long_for_the_bound_is_refused_before_counting(metric):
    """With the default bound (4 GiB): two 50M-character lines are refused at once, naming the segment."""
    line = "abcdefgh " * 5_600_000
    with pytest.raises(UserError) as e:
        clir_eval.score_mt(["short", line], [["short", line]], metric)
    msg = str(e.value)
    assert msg.startswith("segment 2 (line 2 of the hypotheses) has 100800000 characters")
    assert f"{metric} would need about" in msg and "over the bound of 4.00 GiB" in msg
    assert "CLIR_EVAL_MAX_MEMORY_BYTES" in msg


def test_chrf_plus_plus_is_refused_where_chrf_is_scored():
    """chrF++ counts with sacrebleu's Counters (about 5x chrF's numpy counts): 6M + 6M characters are
    over the bound for it, not for chrF."""
    h, r = long_line(6_000_000, 1), long_line(6_000_000, 2)
    with pytest.raises(UserError, match=r"segment 1 .* chrf\+\+ would need about [45]\.\d+ GiB"):
        clir_eval.score_mt([h], [[r]], "chrf++")
    with pytest.raises(UserError, match=r"ter would need about"):
        clir_eval.score_mt([h], [[r]], "ter")


def test_the_cli_refuses_a_long_line_with_one_error_line_and_streams_it_in_chunks(tmp_path):
    """mt-score streams in chunks: the refusal names the line in the file, not in the chunk."""
    short = "the cat sat on the mat\n" * 2500  # past the first chunk of 2,000 lines
    (tmp_path / "h.txt").write_text(short + long_line(1_000_000, 1) + "\n")
    (tmp_path / "r.txt").write_text(short + long_line(1_000_000, 2) + "\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "CLIR_EVAL_MAX_MEMORY_BYTES": str(300 * 2**20)}
    for metric, refused in (("chrf++", True), ("chrf", True), ("bleu", False)):
        p = subprocess.run([sys.executable, "-m", "clir_eval", "mt-score", "--hyp", str(tmp_path / "h.txt"), "--ref",
                            str(tmp_path / "r.txt"), "--metrics", metric], capture_output=True, text=True, env=env)
        if refused:
            assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
            assert p.stderr.startswith("error: segment 2501 (line 2501 of the hypotheses) has 2000000 characters")
            assert p.stdout == ""
        else:
            assert p.returncode == 0, p.stderr
            assert '"bleu"' in p.stdout


def test_kendall_draws_over_a_long_table_are_refused_up_front(tmp_path, monkeypatch):
    """Resampled Kendall draws compare every pair of rows at once (72 bytes a pair): with the bound at
    400 MiB, 2,000 rows (2M pairs, about 0.43 GiB) are refused by the CLI and the API; Pearson draws and the
    coefficient alone grow with the rows only and run."""
    rng = np.random.default_rng(2)
    x, y = rng.random(2000), rng.random(2000)
    t = tmp_path / "t.tsv"
    t.write_text("system\tm\ty\n" + "".join(f"s{i}\t{a:.6f}\t{b:.6f}\n" for i, (a, b) in enumerate(zip(x, y))))
    env = {**os.environ, "PYTHONPATH": str(ROOT), "CLIR_EVAL_MAX_MEMORY_BYTES": str(400 * 2**20)}
    base = [sys.executable, "-m", "clir_eval", "correlate", "--table", str(t), "--x", "m", "--y", "y"]
    p = subprocess.run([*base, "--ci", "1"], capture_output=True, text=True, env=env)
    assert p.returncode == 2 and p.stdout == "", p.stderr
    assert p.stderr.startswith("error: Kendall's τ of resampled draws (--ci or resamples, --verdicts) over 2000 rows")
    assert "about 0.43 GiB, over the bound of 0.39 GiB" in p.stderr
    for extra in ([], ["--ci", "1", "--method", "pearson"]):
        assert subprocess.run([*base, *extra], capture_output=True, env=env).returncode == 0
    monkeypatch.setenv("CLIR_EVAL_MAX_MEMORY_BYTES", str(400 * 2**20))
    with pytest.raises(UserError, match="over 2000 rows compares every pair"):
        clir_eval.correlate({"m": x, "y": y}, "m", "y", resamples=1)
    assert clir_eval.correlate({"m": x, "y": y}, "m", "y")[0]["n"] == 2000
