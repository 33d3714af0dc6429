"""Seed blocks of the correlation resampling: block k draws from default_rng([seed, k]), so the
CIs and permutation p-values are identical however the blocks are spread (serial, a process
pool; Ray in test_executor_ray.py)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats

from clir_eval.correlation.statistics import (
    RESAMPLE_BLOCK, ResampleBlock, bootstrap_ci, permutation_sigdiff, query_bootstrap_ci, resample_block,
    resample_blocks,
)
from clir_eval.pipeline.executor import LocalExecutor


def _data(seed: int = 1, n: int = 8, q: int = 25):
    rng = np.random.default_rng(seed)
    x = rng.random(n)
    y = x + rng.random(n) * 0.6
    return x, rng.random(n), y, rng.random((n, q))


def test_blocks_cover_the_resamples_in_fixed_sizes():
    assert resample_blocks(1) == [(0, 1)]
    assert resample_blocks(RESAMPLE_BLOCK) == [(0, RESAMPLE_BLOCK)]
    assert resample_blocks(2 * RESAMPLE_BLOCK + 7) == [(0, RESAMPLE_BLOCK), (1, RESAMPLE_BLOCK), (2, 7)]


def test_one_block_draws_as_one_generator_seeded_with_seed():
    """Up to RESAMPLE_BLOCK resamples the draws are default_rng(seed)'s: the CI equals one
    computed here with scipy's Kendall τ-b on each drawn sample (an independent reference)."""
    x, _, y, _ = _data()
    n_res, seed = 300, 11
    idx = np.random.default_rng(seed).integers(0, len(x), (n_res, len(x)))
    taus = [scipy.stats.kendalltau(x[i], y[i]).statistic for i in idx]
    taus = np.asarray([t for t in taus if not np.isnan(t)])
    ref = np.percentile(taus, [2.5, 97.5])
    lo, hi = bootstrap_ci(x, y, n_resamples=n_res, seed=seed)
    assert lo == pytest.approx(ref[0], abs=1e-12) and hi == pytest.approx(ref[1], abs=1e-12)


def test_block_k_draws_from_seed_and_k_and_blocks_differ():
    x, _, y, _ = _data()
    blk = lambda k: resample_block(ResampleBlock("systems", (x, y), "kendall", "b", 5, k, 50))  # noqa: E731
    idx = np.random.default_rng([5, 2]).integers(0, len(x), (50, len(x)))
    ref = [scipy.stats.kendalltau(x[i], y[i]).statistic for i in idx]
    np.testing.assert_allclose(blk(2), ref, atol=1e-12)
    assert not np.array_equal(blk(0), blk(1))
    assert np.array_equal(blk(1), blk(1))


def _stats(x, x2, y, pq, map=None):
    n = 2 * RESAMPLE_BLOCK + 300  # three blocks
    return (
        bootstrap_ci(x, y, n_resamples=n, seed=3, map=map),
        query_bootstrap_ci(x, pq, method="spearman", n_resamples=n, seed=4, map=map),
        permutation_sigdiff(x, x2, y, n_resamples=n, seed=5, plus_one=True, map=map),
    )


def test_blocks_on_a_process_pool_equal_serial():
    x, x2, y, pq = _data()
    serial = _stats(x, x2, y, pq)
    calls = []

    def counting(fn, tasks):
        calls.append(len(tasks))
        return [fn(t) for t in tasks]

    assert _stats(x, x2, y, pq, map=counting) == serial
    assert calls == [3, 3, 3]
    with LocalExecutor(2) as ex:
        assert _stats(x, x2, y, pq, map=ex.map) == serial
    assert all(v is not None for ci in serial[:2] for v in ci) and serial[2][1] is not None
