"""Seed blocks of the correlation resampling: block k draws from default_rng([seed, k]), so the
CIs and permutation p-values are identical however the blocks are spread (serial, a process
pool; Ray in test_executor_ray.py)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.stats

from clir_eval.correlation.statistics import (
    RESAMPLE_BLOCK,
    ResampleBlock,
    bootstrap_ci,
    permutation_sigdiff,
    query_bootstrap_ci,
    resample_block,
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


# --------------------------------------------------------------------------- BOOT-BOTH and signflip blocks
def test_boot_both_and_paired_randomization_are_blocked_like_the_others():
    """Above one block, BOOT-BOTH and the paired randomization test draw block k from
    default_rng([seed, k]): equal to a plain loop over explicit blocks, and the same through a map."""
    from clir_eval.correlation.significance import boot_both_ci, joint_draws, paired_randomization

    x, _, _, pq = _data(q=12)
    pq[1, 1:] = np.nan  # system 1 has one judged query: draws without it have no mean for it (skipped)
    n = RESAMPLE_BLOCK + 250
    sys_idx, ys = joint_draws(pq, n, seed=9)
    rng0, rng1 = np.random.default_rng([9, 0]), np.random.default_rng([9, 1])
    assert np.array_equal(sys_idx[:RESAMPLE_BLOCK], rng0.integers(0, 8, (RESAMPLE_BLOCK, 8)))
    blk1 = rng1.integers(0, 8, (250, 8))
    q1 = rng1.integers(0, 12, (250, 12))
    assert np.array_equal(sys_idx[RESAMPLE_BLOCK:], blk1)
    for d in (0, 77, 249):  # the drawn systems' means over the drawn queries, NaN ignored
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = [np.nanmean(pq[s_, q1[d]]) for s_ in blk1[d]]
        np.testing.assert_allclose(ys[RESAMPLE_BLOCK + d], want, rtol=1e-12)
    assert 100 < np.isnan(ys).any(axis=1).sum() < n - 100
    calls = []

    def counting(fn, tasks):
        calls.append(len(tasks))
        return [fn(t) for t in tasks]

    ci = boot_both_ci(x, pq, n_resamples=n, seed=9)
    assert boot_both_ci(x, pq, n_resamples=n, seed=9, map=counting) == ci and calls == [2]
    taus = [scipy.stats.kendalltau(x[i], v).statistic for i, v in zip(sys_idx, ys) if not np.isnan(v).any()]
    assert ci == pytest.approx(tuple(np.percentile([t for t in taus if not np.isnan(t)], [2.5, 97.5])), abs=1e-9)

    pairs, diff, p = paired_randomization(pq, n, seed=4)
    assert paired_randomization(pq, n, seed=4, map=counting)[2].tolist() == p.tolist() and calls[-1] == 2
    signs = np.concatenate([np.where(np.random.default_rng([4, k]).random((m, 12)) < 0.5, -1.0, 1.0)
                            for k, m in ((0, RESAMPLE_BLOCK), (1, 250))])
    for (i, j), pv, dv in zip(pairs, p, diff):
        d = pq[i] - pq[j]
        ok = ~np.isnan(d)
        sims = signs[:, ok] @ d[ok] / ok.sum()
        assert dv == pytest.approx(d[ok].mean(), rel=1e-12)
        assert pv == (np.sum(np.abs(sims) >= abs(d[ok].mean()) - 1e-12 * max(1, abs(d[ok].mean()))) + 1) / (n + 1)


# --------------------------------------------------------------------------- batched
def _demo_inputs():
    """A run's score table of 7 systems x 30 queries: 3 MT metrics, 2 IR measures."""
    rng = np.random.default_rng(21)
    qids = [f"q{i}" for i in range(30)]
    sys_results = {}
    for s in range(7):
        base = s / 10
        pq = {q: {"map": float(np.clip(base + rng.normal(0, .2), 0, 1)),
                  "ndcg": float(np.clip(base + rng.normal(0, .3), 0, 1))} for q in qids}
        ir = {m: float(np.mean([v[m] for v in pq.values()])) for m in ("map", "ndcg")}
        mt = {"bleu": 20 + 3 * s + float(rng.normal(0, 2)), "chrf": 40 + s + float(rng.normal(0, 2)),
              "ter": 60 - 2 * s + float(rng.normal(0, 3))}
        sys_results[f"sys{s}"] = {"mt": mt, "ir": ir, "ir_per_query": pq, "human": {}}
    kinds = {"mt": ["bleu", "chrf", "ter"], "ir": ["map", "ndcg"], "human": [], "lower_is_better": ["ter"]}
    return sys_results, kinds


def _run_cfg(resamples: int):

    from clir_eval.correlation.settings import CorrelationInputs, CorrelationSettings

    return CorrelationInputs(CorrelationSettings(bootstrap=resamples, permutation=resamples))


def test_a_whole_run_s_blocks_go_through_one_map_call_with_serial_results(monkeypatch):
    import json

    from clir_eval.correlation import driver, statistics

    sys_results, kinds = _demo_inputs()
    cfg = _run_cfg(RESAMPLE_BLOCK + 100)  # two blocks per statistic
    serial = json.dumps(driver.correlate_run(cfg, sys_results, kinds))
    calls = []

    def counting(fn, tasks):
        calls.append((fn, len(tasks), sum(len(t) for t in tasks)))
        return [fn(t) for t in tasks]

    monkeypatch.setattr(statistics, "MIN_BATCH_COST", 0)
    assert json.dumps(driver.correlate_run(cfg, sys_results, kinds, map=counting, chunks=5)) == serial
    assert all(c[0] is statistics.run_block_chunk for c in calls) and calls[0][1] == 5
    # the first call: every statistic's two blocks: 6 pairs x (systems, queries, BOOT-BOTH), 2 discriminability
    # tests, and one block per exact PERM-BOTH test (3 verdict pairs x 2 targets); identical blocks run once.
    # Later calls: one per round of the sequential tests, only blocks of tests whose decision is still open
    assert calls[0][2] >= 2 * (6 * 3 + 2) + 6
    assert len(calls) >= 2 and sum(c[2] for c in calls[1:]) > 0  # some decisions needed more draws here
    with LocalExecutor(2) as ex:
        assert json.dumps(driver.correlate_run(cfg, sys_results, kinds, map=ex.map, chunks=8)) == serial
    monkeypatch.setattr(statistics, "MIN_BATCH_COST", 1e30)
    calls.clear()
    assert json.dumps(driver.correlate_run(cfg, sys_results, kinds, map=counting)) == serial
    assert calls == []  # too little work to spread: in this process


def test_batched_answers_blocks_it_did_not_foresee_in_a_later_pass():
    """A computation whose second statistic's seed depends on a resampled value asks for blocks the
    first pass could not know: they run through ``map`` in a second pass, and the result still
    equals serial."""
    from clir_eval.correlation.statistics import batched

    x, x2, y, _ = _data()

    def compute(m):
        lo, _ = bootstrap_ci(x, y, n_resamples=300, seed=3, map=m)
        seed = 0 if lo is None or np.isnan(lo) else int(abs(lo) * 1000)
        return lo, bootstrap_ci(x2, y, n_resamples=300, seed=seed, map=m)

    calls = []

    def counting(fn, tasks):
        calls.append(len(tasks))
        return [fn(t) for t in tasks]

    assert batched(compute, counting, chunks=3, min_cost=0) == compute(None)
    assert calls[0] == 2 and len(calls) == 2  # the two blocks recorded; then the block of the real seed


@pytest.mark.parametrize("q", [1, 7, 9, 60, 300])
def test_query_means_equal_nanmean_of_each_draw_bit_for_bit(q):
    """The queries bootstrap's vectorised means are numpy's nanmean of each draw, to the last bit
    (NaN cells ignored, a system with no drawn query NaN), also across the memory chunks."""
    from clir_eval.correlation.statistics import query_means

    rng = np.random.default_rng(q)
    pq = rng.random((9, q)) * 1e3
    pq[rng.random(pq.shape) < 0.25] = np.nan
    pq[4] = np.nan
    idx = rng.integers(0, q, (1500, q))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = np.stack([np.nanmean(pq[:, row], axis=1) for row in idx])
    assert query_means(pq, idx).tobytes() == want.tobytes()


def test_a_small_computation_through_map_runs_once_in_this_process(monkeypatch):
    """Below the cost worth spreading, blocks are computed as they are asked for: ``map`` is never
    called and the computation runs once (no recording pass), with the serial result."""
    from clir_eval.correlation import statistics

    x, x2, y, pq = _data()
    runs = []

    def compute(m):
        runs.append(1)
        return (bootstrap_ci(x, y, n_resamples=300, seed=3, map=m),
                query_bootstrap_ci(x2, pq, n_resamples=300, seed=4, map=m))

    serial = compute(None)
    runs.clear()
    calls = []

    def counting(fn, tasks):
        calls.append(len(tasks))
        return [fn(t) for t in tasks]

    monkeypatch.setattr(statistics, "MIN_BATCH_COST", 1e30)
    assert statistics.batched(compute, counting, chunks=4) == serial
    assert calls == [] and len(runs) == 1
    # a budget the first statistic's block fits in but not the second's: the first is computed
    # here, the second is recorded and runs through map, then a last pass gives the result
    first = statistics.block_cost(statistics.block_tasks("systems", (x, y), "kendall", "b", 300, 3)[0])
    runs.clear()
    assert statistics.batched(compute, counting, chunks=4, min_cost=first) == serial
    assert calls == [1] and len(runs) == 2


def test_batched_in_this_process_computes_a_repeated_block_once(monkeypatch):
    """Without an executor, a block asked for again (same data, settings, seed) is computed once and
    answered with the same draws; a block that differs in its data or seed is computed anew."""
    from clir_eval.correlation import statistics
    from clir_eval.correlation.statistics import batched

    x, x2, y, pq = _data()
    computed = []

    def counted(b):
        computed.append((b.kind, b.seed, b.block))
        return resample_block(b)

    def compute(m):
        return [bootstrap_ci(x, y, n_resamples=1500, seed=3, map=m), query_bootstrap_ci(x, pq, n_resamples=200, seed=3, map=m),
                bootstrap_ci(x, y, n_resamples=1500, seed=3, map=m), bootstrap_ci(x2, y, n_resamples=1500, seed=3, map=m),
                bootstrap_ci(x, y, n_resamples=1500, seed=4, map=m)]

    serial = compute(None)
    monkeypatch.setattr(statistics, "resample_block", counted)
    assert batched(compute) == serial
    assert sorted(computed) == sorted([("systems", 3, 0), ("systems", 3, 1), ("queries", 3, 0), ("systems", 3, 0),
                                       ("systems", 3, 1), ("systems", 4, 0), ("systems", 4, 1)])
    assert serial[0] == serial[2] and serial[0] != serial[4]
