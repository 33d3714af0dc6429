"""The pooled PERM-BOTH at its level: each run's swap draws scaled by √(n/(n−1)) keep the variance of the exact
permutation null, and each run draws from a stream of its own (its identity by content and the pool's seed),
whatever the runs' config seeds. Small null simulations here; scripts/sim_pool_coverage.py --level has the
full-size ones (docs/pooling.md)."""

from __future__ import annotations

import json
import math
import shutil

import numpy as np
from test_pool import make_run

from clir_eval.correlation.statistics import perm_both_setup
from clir_eval.pooling.core import perm_both_kendall_b, run_block, stream_seed, swap_scale

ALPHA = 0.05


def null_run(rng, n):
    """Exchangeable metrics a, b (the same expected τ with the target y), on a common scale; the pool's setup."""
    while True:
        mu = rng.normal(size=n)
        y = mu + 0.7 * rng.normal(size=n)
        a, b = mu + 0.8 * rng.normal(size=n), mu + 0.8 * rng.normal(size=n)
        s = perm_both_setup(a, b, y, "kendall", "b")
        if s is not None:
            return a, b, s


def test_scaled_draws_have_the_variance_of_the_exact_swap_null():
    """On a common scale, swapping the raw values is the exact permutation test; the pool swaps z-scored values
    (metrics on any scale). Over 600 null data sets of 6-12 systems the scaled z-scored draws' variance is within
    a few per cent of the raw swaps' (the unscaled draws' is 7% lower here: the pooled test rejected 6-7%)."""
    rng = np.random.default_rng(11)
    vz = vs = vr = 0.0
    for _ in range(600):
        n = int(rng.integers(6, 13))
        a, b, (za, zb, y, _) = null_run(rng, n)
        S = rng.random((400, n)) < 0.5
        d = perm_both_kendall_b(za, zb, y, S).var()
        vz += d
        vs += swap_scale(n) ** 2 * d
        vr += perm_both_kendall_b(a, b, y, S).var()
    assert 0.95 <= vs / vr <= 1.10, (vs / vr, vz / vr)  # measured 1.063; unscaled 0.932 (fails the bound)


def test_pooled_test_holds_alpha_with_runs_that_share_their_config_seed():
    """Seven runs of six systems, all with the same config seed (before: the same swap bits in every run, so the
    pooled draws were not independent). With each run's stream from its identity they are, and the pooled
    two-sided test holds α within 2 Monte Carlo se over 500 null pooled studies."""
    rng = np.random.default_rng(5)
    studies, draws, runs, n = 500, 400, 7, 6
    rej = 0
    for s in range(studies):
        tot, obs = np.zeros(draws), 0.0
        streams = set()
        for r in range(runs):
            _, _, (za, zb, y, delta) = null_run(rng, n)
            seed = stream_seed(f"study {s} run {r}", 13, 13)  # every run's own seed for the test: 13
            streams.add(seed)
            tot += swap_scale(n) * run_block((za, zb, y), "kendall", "b", seed, 0, draws) / runs
            obs += delta / runs
        assert len(streams) == runs
        rej += (1 + int((np.abs(tot) >= abs(obs) - 1e-12).sum())) / (draws + 1) <= ALPHA
    assert rej / studies <= ALPHA + 2 * math.sqrt(ALPHA * (1 - ALPHA) / studies), rej / studies


def test_runs_are_identified_by_content_and_seed_the_pooled_draws(tmp_path):
    """Two runs with the same config seed but different scores have different identities (and so independent
    streams); a copy of a run elsewhere has its run's identity; the pool's --seed changes the pooled draws, the
    same command gives the same bytes (one run pooled alone keeps its own seeds: test_pool.py)."""
    from clir_eval.pooling import pool

    a = make_run(tmp_path, "aa", 1, n=8, targets=("map",), resolution="fixed")
    b = make_run(tmp_path, "bb", 2, n=9, targets=("map",), resolution="fixed")
    (tmp_path / "copy").mkdir()
    c = tmp_path / "copy" / "out"
    shutil.copytree(a, c)
    res = pool([a, b], bootstrap=200, thresholds=False)
    ident = {t["run"]: t["identity"] for t in res.tasks}
    assert len(set(ident.values())) == 2 and all(len(v) == 64 for v in ident.values())
    assert pool([c, b], bootstrap=200, thresholds=False).tasks[0]["identity"] == ident[str(a)]
    assert "identity" in res.settings["streams"] and "√(n/(n−1))" in res.settings["swap_scale"]
    again = pool([a, b], bootstrap=200, thresholds=False)
    assert json.dumps(again.to_dict()) == json.dumps(res.to_dict())
    other = pool([a, b], bootstrap=200, thresholds=False, seed=14)
    ps = [(p["p_value"], q["p_value"]) for p, q in zip(res.pairs, other.pairs) if p["p_value"] is not None]
    assert ps and any(x != y for x, y in ps)
