"""Pooling finished runs into one leaderboard per target: mean τ over the runs (weighted as
mt-metrics-eval's ``TaskSetResults.AssignWeights``), significance clusters from the runs' PERM-BOTH
draws summed with the weights (its ``AverageCorrMatrix``, then ``AssignRanks``), every metric pair's
pooled Δτ with a bootstrap CI and an equivalence statement (two one-sided tests at ±margin).

Each run's draws are re-drawn from its results.json with its own settings: the score table as its
correlations saw it (rounding included), its coefficient, and for each metric pair the seed its own
verdict test drew with (so one run pooled alone gives that run's own p-values). With two or more runs
each run's stream is seeded from its identity by content and the pool's seed as well (:func:`stream_seed`:
independent whatever the runs' config seeds) and its draws are scaled by :func:`swap_scale` (z-scored
swaps understate the variance of Δτ; unscaled, the pooled test rejected 6-8% at α = .05). All runs of a
pooled test draw the same number of times (no tiling of shorter draw lists, unlike
mt-metrics-eval); sequential resolution (:func:`clir_eval.correlation.significance.monte_carlo_family`)
draws more where a decision under the correction is still open.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from ..correlation.pairsums import cell_sums, tau_draws
from ..correlation.significance import Stream, adjust, jackknife_systems, monte_carlo_family, p_floor
from ..correlation.statistics import (
    ResampleBlock,
    percentile_ci,
    perm_both_setup,
    resample_block,
    resample_blocks,
    resample_draws,
)
from ..correlation.verdict import clusters as assign_clusters
from ..correlation.verdict import ranking
from ..errors import UserError
from ..limits import MAX_RESAMPLES, MAX_SEED, RUN_SEED, check_max, check_seed, memory_bytes
from ..stats import norm_ppf
from .items import pool_items
from .runs import Run, architecture, check_architectures, directions, load_run, pooled_tau, run_identity, shared_attr
from .summary import summaries
from .thresholds import threshold_rows

POOLED_KIND = "pooled-perm-both"
TOL = 1e-12  # as the runs' own tests: a draw within this of the observed difference counts as reaching it
CORRECTIONS = ("holm", "bh", "none")
POOL_METHOD = ("PERM-BOTH per run (each run's own settings), the draws' weighted sum against the weighted sum of the "
               "runs' observed Δτ (as mt-metrics-eval's AverageCorrMatrix), {sided}")
SWAP_SCALE = ("with two or more runs each run's draws are scaled by √(n/(n−1)) (n: its systems in the pair): z-scoring "
              "each metric at its own mean removes on average 1/n of the per-system metric differences the swaps "
              "move, so unscaled draws understate the variance of Δτ and the pooled test rejected 6-8% at α = .05 "
              "(docs/pooling.md); one run pooled alone draws as its own test")
STREAMS = ("with two or more runs each run's draws are seeded from its identity (tasks[].identity: sha256 of its "
           "name, scores, score kinds and correlation settings), the pool's seed and the run's own seed for the test, "
           "so runs draw independently whatever their config seeds; one run pooled alone draws with its own seeds")
SIDED = {True: "two-sided (|Δ| at least the observed |Δ|)",
         False: "one-sided in the direction the pooled ranking chose (mt-metrics-eval's; up to about 2α under the null)"}
MONTE_CARLO_WHY = (
    "pooled p-values are Monte Carlo with the resolution guard, not exact: a run's exact PERM-BOTH null is a sum of "
    "integers over its own τ-b denominator, and sums over runs with different denominators (or tied metric values) "
    "have no integer form a dynamic programme could count (docs/pooling.md)")
CI_METHOD = ("normal interval, se² = Σ w² (Sen's U-statistic variance of each run's Δτ over its systems + where the "
             "run kept per-query values the queries' share of the bootstrap variances); the 95% interval covered 92-98% "
             "of simulated pooled studies (97.5-98% where runs kept per-query values; docs/pooling.md)")
CI_METHOD_OTHER = ("percentile interval of the weighted sum of the runs' bootstrap-over-systems Δτ draws; where runs "
                   "kept per-query values, the runs' crossed interval (jackknife over systems + the queries' share of "
                   "the bootstrap variances) combined with the squared weights, in the shape of those draws")


def assign_weights(runs: Sequence[Run], attrs: Sequence[str], total: float = 1.0) -> list[float]:
    """mt-metrics-eval's ``TaskSetResults.AssignWeights``: ``total`` split evenly over the values of
    the first attribute, then recursively over the next within each; with no attribute, evenly
    over the runs."""
    if not runs:
        return []
    if not attrs:
        return [total / len(runs)] * len(runs)
    groups: dict[str, list[int]] = {}
    for i, r in enumerate(runs):
        groups.setdefault(shared_attr(r, attrs[0]), []).append(i)
    out = [0.0] * len(runs)
    for idx in groups.values():
        for i, w in zip(idx, assign_weights([runs[i] for i in idx], attrs[1:], total / len(groups))):
            out[i] = w
    return out


@dataclass
class PoolResult:
    """What :func:`pool` returns; ``to_dict()`` is the JSON of ``clir-eval pool --format json`` (with its
    ``summary``: the answer in short, per target)."""

    leaderboard: list[dict[str, Any]]
    pairs: list[dict[str, Any]]
    thresholds: list[dict[str, Any]]
    tasks: list[dict[str, Any]]
    warnings: list[str]
    notes: list[str]
    settings: dict[str, Any]
    plots: dict[str, bytes] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"leaderboard": self.leaderboard, "pairs": self.pairs, "thresholds": self.thresholds,
                "tasks": self.tasks, "warnings": self.warnings, "notes": self.notes, "settings": self.settings,
                "summary": summaries(self)}


def _sign(run: Run, metric: str) -> float:
    return -1.0 if metric in run.lower else 1.0


def perm_both_kendall_b(a: np.ndarray, b: np.ndarray, g: np.ndarray, swap: np.ndarray) -> np.ndarray:
    """τ-b(where(swap, b, a), g) − τ-b(where(swap, a, b), g) for each row of ``swap`` (k, n), the
    same floats as :func:`clir_eval.correlation.statistics.resample_block` gives for a PERM-BOTH
    block (undefined τ counts 0). A pair of systems' sign product, and whether it ties in x,
    depends only on the two systems' swap bits e, f: h(e, f) = h00 + (h10 − h00)e + (h01 − h00)f
    + (h11 − h10 − h01 + h00)ef, so each draw's integer counts are a constant, a linear and a
    quadratic form of its bits (one small matrix product; exact in float32 below 2**24);
    the other orientation is the same with every bit flipped."""
    n = len(a)
    iu, ju = np.triu_indices(n, k=1)
    sy = np.sign(g[iu] - g[ju])
    ny = int(np.abs(sy).sum())
    vals = (a, b)  # a system's value when its bit is 0, 1 (first orientation: where(swap, b, a))
    sx = {(e, f): np.sign(vals[e][iu] - vals[f][ju]) for e in (0, 1) for f in (0, 1)}
    S1 = swap.astype(np.float32)
    out = []
    for S in (S1, 1.0 - S1):  # the second orientation: every bit flipped
        counts = []
        for h in ({ef: v * sy for ef, v in sx.items()}, {ef: np.abs(v) for ef, v in sx.items()}):
            Q = np.zeros((n, n), np.float32)
            Q[iu, ju] = h[1, 1] - h[1, 0] - h[0, 1] + h[0, 0]
            L = np.zeros(n)
            np.add.at(L, iu, h[1, 0] - h[0, 0])
            np.add.at(L, ju, h[0, 1] - h[0, 0])
            q = ((S @ Q) * S).sum(axis=1, dtype=np.float64) + S @ L.astype(np.float32)
            counts.append(np.rint(q).astype(np.int64) + int(h[0, 0].sum()))
        num, nx = counts
        with np.errstate(invalid="ignore", divide="ignore"):
            val = num / np.sqrt(nx * ny)
        out.append(np.where((nx > 0) & (ny > 0), np.clip(val, -1.0, 1.0), 0.0))
    return out[0] - out[1]


def run_block(data: tuple, method: str, variant: str | None, seed: int, block: int, size: int) -> np.ndarray:
    """A run's own PERM-BOTH block (its seed, this block number): :func:`perm_both_kendall_b` for
    Kendall τ-b (the same floats, about ten times faster), else the run engine's block."""
    a, b, g = data
    if method == "kendall" and variant == "b" and len(a) < 2048:
        rng = np.random.default_rng([seed, block])
        return perm_both_kendall_b(a, b, g, rng.random((size, len(a))) < 0.5)  # as resample_block draws
    return resample_block(ResampleBlock("permutation", data, method, variant, seed, block, size))


def systems_tau_b_draws(x: np.ndarray, y: np.ndarray, k: int, seed: int) -> np.ndarray:
    """The run engine's bootstrap-over-systems τ-b draws (``resample_draws("systems", ...)``: the same seed
    blocks, the same floats) from each draw's multiplicities of the systems by
    :func:`clir_eval.correlation.pairsums.tau_draws` (one matrix product per block)."""
    n = len(x)
    gs = cell_sums(x, y)
    out = []
    for block, size in resample_blocks(k):
        idx = np.random.default_rng([int(seed), block]).integers(0, n, (size, n))  # as resample_block draws
        U = np.zeros((size, n))
        np.add.at(U, (np.repeat(np.arange(size), n), idx.ravel()), 1.0)
        out.append(tau_draws(gs, U, "b"))
    return np.concatenate(out)


def _pooled_block(b: ResampleBlock) -> np.ndarray:
    """One seed block of a pooled test: per run, its own PERM-BOTH block (its seed, this block
    number), oriented and weighted, summed over the runs."""
    parts, _ = b.data
    tot = np.zeros(b.size)
    for data, method, variant, seed, coef in parts:
        tot = tot + coef * run_block(data, method, variant, seed, b.block, b.size)
    return tot


def swap_scale(n: int) -> float:
    """The factor a run's PERM-BOTH draws of ``n`` systems are scaled by when runs are pooled: √(n/(n−1)). On a
    common scale the squared per-system metric differences the swaps move sum to (n−1)σ² + n(ā − b̄)², of which
    z-scoring each metric at its own mean keeps the first part only (the second is σ² on average under the null);
    measured by ``scripts/sim_pool_coverage.py --level``, docs/pooling.md."""
    return math.sqrt(n / (n - 1)) if n > 1 else 1.0


def stream_seed(identity: str, pool_seed: int, run_seed: int) -> int:
    """The seed a run's pooled draws use (two or more runs): a 63-bit number from the run's identity
    (:func:`clir_eval.pooling.runs.run_identity`), the pool's seed and the run's own seed for the test, so that
    runs draw independently whatever their config seeds, and the same run draws the same wherever it lies."""
    h = hashlib.sha256(f"{identity}:{int(pool_seed)}:{int(run_seed)}".encode("ascii")).digest()
    return int.from_bytes(h[:8], "big") >> 1


def _mapper(map: Callable | None) -> Callable:
    run = map or (lambda fn, tasks: [fn(t) for t in tasks])

    def m(fn, tasks):
        return run(_dispatch, tasks) if any(t.kind == POOLED_KIND for t in tasks) else run(fn, tasks)

    return m


def _dispatch(t: ResampleBlock) -> np.ndarray:
    return _pooled_block(t) if t.kind == POOLED_KIND else resample_block(t)


def _run_pair(run: Run, target: str, a: str, b: str) -> tuple | None:
    """(run-orientation data, seed, +1/-1 to orient to a above b, observed δ(a - b), kept systems mask)."""
    if (target, a, b) in run.seeds:
        first, second, sgn = a, b, 1.0
    elif (target, b, a) in run.seeds:
        first, second, sgn = b, a, -1.0
    else:
        return None
    x1 = _sign(run, first) * run.column(first)
    x2 = _sign(run, second) * run.column(second)
    y = run.column(target)
    setup = perm_both_setup(x1, x2, y, run.stats.method, run.stats.variant,
                            (f"{run.path}: {first}", f"{run.path}: {second}"))
    if setup is None:
        return None
    keep = ~(np.isnan(x1) | np.isnan(x2) | np.isnan(y))
    return (setup[0], setup[1], setup[2]), run.seeds[(target, first, second)], sgn, sgn * setup[3], keep


def _per_query(run: Run, target: str, keep: np.ndarray) -> np.ndarray | None:
    systems = [sy for sy, kk in zip(run.systems, keep) if kk]
    m = run.table.per_query(target, systems) if (run.table.per_query and run.target_kind.get(target) == "ir") else None
    return m if m is not None and m.shape[1] >= 2 else None


def kendall_kernel(x: np.ndarray, y: np.ndarray) -> np.ndarray | None:
    """τ-b(x, y) as the mean of a kernel over the pairs of systems: K[i, j] = sign(x_i − x_j)·sign(y_i − y_j)·P/D
    (P pairs, D = √(pairs untied in x · pairs untied in y), τ-b's denominator), so that a U-statistic's variance
    estimate applies (:func:`sen_variance`; the denominator is taken as fixed); None where τ-b is undefined."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    n = len(x)
    if n < 3:
        return None
    sx = np.sign(x[:, None] - x[None, :])
    sy = np.sign(y[:, None] - y[None, :])
    iu = np.triu_indices(n, k=1)
    nx, ny = int(np.count_nonzero(sx[iu])), int(np.count_nonzero(sy[iu]))
    if nx == 0 or ny == 0:
        return None
    return sx * sy * (len(iu[0]) / math.sqrt(nx * ny))


def sen_variance(H: np.ndarray) -> float:
    """Sen's (1960) estimate of the variance of a U-statistic of degree 2 (the mean of the symmetric kernel
    ``H`` over the pairs of systems): 4/n times the sample variance of the systems' mean kernel values
    ψ_i = Σ_j H[i, j] / (n − 1) (Hoeffding's first-order term; the usual variance estimate for Kendall's τ)."""
    n = len(H)
    iu = np.triu_indices(n, k=1)
    u = float(H[iu].mean())
    psi = H.sum(axis=1) / (n - 1)
    return 4.0 / n * float(((psi - u) ** 2).sum()) / (n - 1)


def tau_parts(x: np.ndarray, y: np.ndarray, per_query: np.ndarray | None, method: str, variant: str | None, k: int,
              seed: int) -> dict[str, np.ndarray]:  # fmt: skip
    """What the pooled interval (:func:`pooled_interval`) needs of one metric's τ with the target over a run's
    systems: for Kendall τ-b its kernel (``kern``, :func:`kendall_kernel`); otherwise its bootstrap over systems
    (``systems``, ``seed``, so two metrics' draws over the same systems are paired); where the run kept per-query
    values of the target (``per_query``, systems x queries) also ``systems``, ``queries`` and ``both`` (BOOT-BOTH)
    draws and ``jack`` (each system left out): the queries' share of the crossed interval."""
    parts: dict[str, np.ndarray] = {}
    kern = kendall_kernel(x, y) if method == "kendall" and variant == "b" else None
    if kern is not None:
        parts["kern"] = kern
    if kern is None or per_query is not None:
        if method == "kendall" and variant == "b":
            parts["systems"] = systems_tau_b_draws(x, y, k, seed)
        else:
            parts["systems"] = resample_draws("systems", (x, y), method, variant, k, seed, None)
    if per_query is not None:
        parts["queries"] = resample_draws("queries", (x, per_query), method, variant, k, seed, None)
        parts["both"] = resample_draws("both", (x, per_query), method, variant, k, seed, None)
        parts["jack"] = jackknife_systems(x, y, method, variant)
    return parts


def _tau_parts(run: Run, target: str, metric: str, keep: np.ndarray, k: int, cache: dict) -> dict[str, np.ndarray]:
    """:func:`tau_parts` of ``metric`` (oriented) over the systems ``keep`` of ``run``, with the run's seed."""
    key = (target, metric, keep.tobytes())
    if key not in cache:
        s = run.stats
        parts = tau_parts(run.column(metric)[keep], run.column(target)[keep], _per_query(run, target, keep),
                          s.method, s.variant, k, s.seed)
        sg = _sign(run, metric)
        cache[key] = {name: sg * v for name, v in parts.items()}
    return cache[key]


def _queries_share(pa: dict, pb: dict) -> float:
    """The part of a run's Δτ variance that only the choice of queries adds (crossed design): 2 V_queries +
    V_systems − V_both of the Δτ bootstraps, at least 0 (the interaction counted three times by BOOT-BOTH)."""
    v = {name: float(np.nanvar(pa[name] - pb[name])) for name in ("systems", "queries", "both")}
    return max(0.0, 2 * v["queries"] + v["systems"] - v["both"])


def pooled_interval(estimate: float, runs: list[tuple[float, dict, dict]], level: float) -> list[float | None]:
    """The pooled Δτ's ``level`` interval from the runs' parts (weight, parts of a, parts of b).

    Kendall τ-b (every run has kernels): a normal interval, se² = Σ w² (Sen's variance of the run's Δτ kernel
    (:func:`sen_variance` of K_a − K_b) + where the run kept per-query values the queries' share,
    :func:`_queries_share`). Its coverage was measured by simulation (docs/pooling.md; tests/test_pool.py): the
    95% interval 92-98% (97.5-98% where runs kept per-query values). Other coefficients: the percentile interval
    of the weighted sum of the runs' bootstrap-over-systems Δτ draws, or, where runs kept per-query values, the
    runs' crossed variance (jackknife over systems + the queries' share) in the shape of those draws."""
    if all("kern" in pa and "kern" in pb for _, pa, pb in runs):
        var = 0.0
        for w, pa, pb in runs:
            v = sen_variance(pa["kern"] - pb["kern"])
            if "queries" in pa:
                v += _queries_share(pa, pb)
            var += w * w * v
        if math.isnan(var):
            return [None, None]
        z = norm_ppf(1 - (1 - level) / 2)
        se = math.sqrt(var)
        return [max(-2.0, estimate - z * se), min(2.0, estimate + z * se)]
    if any("systems" not in pa or "systems" not in pb for _, pa, pb in runs):
        return [None, None]
    tot = sum(w * (pa["systems"] - pb["systems"]) for w, pa, pb in runs)
    if not any("jack" in pa for _, pa, _ in runs):
        return list(percentile_ci(tot, level))
    var = 0.0
    for w, pa, pb in runs:
        sys_d = pa["systems"] - pb["systems"]
        if "jack" in pa:
            jack = pa["jack"] - pb["jack"]
            jack = jack[~np.isnan(jack)]
            if len(jack) < 3:
                return [None, None]
            n = len(jack)
            v_jack = (n - 1) / n * float(((jack - jack.mean()) ** 2).sum())
            var += w * w * (v_jack + _queries_share(pa, pb))
        else:
            var += w * w * float(np.nanvar(sys_d))
    sd = float(np.nanvar(tot)) ** 0.5
    draws = tot[~np.isnan(tot)]
    if not len(draws) or math.isnan(var):
        return [None, None]
    se = var ** 0.5
    if sd > 0:
        tail = (1 - level) / 2 * 100
        ql, qh = np.percentile(draws, [tail, 100 - tail])
        r = se / sd
        lo, hi = estimate - max(0.0, estimate - ql) * r, estimate + max(0.0, qh - estimate) * r
    else:
        z = norm_ppf(1 - (1 - level) / 2)
        lo, hi = estimate - z * se, estimate + z * se
    return [max(-2.0, float(lo)), min(2.0, float(hi))]


def _check_arguments(dirs: Any, weights: Any, margin: Any, correction: Any, bootstrap: Any, seed: Any) -> list:
    """One error line for each bad argument of :func:`pool` (the CLI's checks, for the Python API too); the
    run directories as a list."""
    if isinstance(dirs, (str, bytes, Path)) or not isinstance(dirs, Iterable):
        raise UserError(f"dirs: give a list of run directories, not {type(dirs).__name__} {str(dirs)[:80]!r} "
                        "(pool(['out/a', 'out/b']))")
    dirs = list(dirs)
    for d in dirs:
        if not isinstance(d, (str, Path)):
            raise UserError(f"dirs: {d!r} is not a path; give run directories as strings or pathlib.Path")
    if not isinstance(correction, str) or correction not in CORRECTIONS:
        raise UserError(f"--correction {correction!r}: use one of {', '.join(CORRECTIONS)}")
    if not isinstance(weights, str):
        raise UserError(f"--weights {weights!r}: give equal, or attribute names separated by commas")
    if isinstance(margin, bool) or not (isinstance(margin, (int, float)) and 0 < margin <= 2):
        raise UserError(f"--margin {margin}: give a Δτ margin between 0 and 2 (e.g. 0.1)")
    if isinstance(bootstrap, bool) or not isinstance(bootstrap, (int, np.integer)) or bootstrap < 100:
        raise UserError(f"--bootstrap {bootstrap!r}: give a whole number of draws, at least 100 (1000 or more for "
                        "95% intervals)")
    check_max(int(bootstrap), MAX_RESAMPLES, "--bootstrap")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise UserError(f"--seed {seed!r}: use an integer from 0 to {MAX_SEED}")
    check_seed(int(seed))
    if not dirs:
        raise UserError("no run directories given; pass the output directories of finished runs")
    seen: dict[str, str] = {}
    for d in dirs:
        key = str(Path(d).resolve())
        if key in seen:
            raise UserError(f"{d}: given twice (as {seen[key]}); pass each run once")
        seen[key] = str(d)
    return dirs


def pool_memory(n_systems: Sequence[int], bootstrap: int) -> int:
    """Estimated peak bytes of pool's bootstrap: the thresholds' fit on the pooled pairs of one metric and target
    (every run's pairs of systems x the draws: the draws' pair weights, their nonzero entries and the Newton
    steps' arrays, six float64 copies), the draws' system counts, and 300 MiB of interpreter and libraries.
    Measured on runs of 30, 30 and 60 systems (scripts/bench_pool_memory.py): peak RSS 217 MiB at 1000 draws,
    1183 MiB at 10000 and 3426 MiB at 31100, the largest accepted under 4 GiB (estimates 422, 1518, 4087 MiB)."""
    pairs = sum(n * (n - 1) // 2 for n in n_systems)
    return 300 * 2**20 + 8 * int(bootstrap) * (6 * pairs + sum(n_systems))


def _check_memory(runs: Sequence[Run], bootstrap: int) -> None:
    """Refuse up front, naming the bound, a pool whose bootstrap is estimated (:func:`pool_memory`) to need more
    memory than :func:`clir_eval.limits.memory_bytes` (4 GiB unless raised)."""
    ns = [len(r.systems) for r in runs]
    need, bound = pool_memory(ns, bootstrap), memory_bytes()
    if need > bound:
        raise UserError(f"--bootstrap {bootstrap}: the thresholds' bootstrap over {len(runs)} runs of "
                        f"{', '.join(map(str, ns))} systems would need about {need / 2**30:.1f} GiB, over the bound of "
                        f"{bound / 2**30:.1f} GiB; lower --bootstrap, or raise the bound with CLIR_EVAL_MAX_MEMORY_BYTES")


def _check_distinct(runs: Sequence[Run]) -> None:
    """One error line when two runs hold the same content (:func:`clir_eval.pooling.runs.content_id`): a copy of a
    run would enter the pool as a second, independent collection."""
    seen: dict[str, Run] = {}
    for r in runs:
        if r.identity in seen:
            raise UserError(f"{r.path}: the same systems with the same scores as {seen[r.identity].path} (a copy of "
                            "that run, or a second run of the same systems); pooling it would count one collection "
                            "twice: pass each run once")
        seen[r.identity] = r


def _pooled_targets(runs: list[Run], lab: dict[str, str], warnings: list[str], notes: list[str]) -> list[str]:
    """The targets at least two runs share (all of one run's, pooled alone); appends the warnings and notes."""
    all_targets = list(dict.fromkeys(t for r in runs for t in r.targets))
    pooled_targets = []
    for t in all_targets:
        have = [r for r in runs if t in r.targets]
        lacking = [lab[r.path] for r in runs if t not in r.targets]
        if len(have) < 2 <= len(runs):
            warnings.append(f"{t}: only in run {lab[have[0].path]}; NOT POOLED (a target one run has is that run's result; "
                            "see its own report)")
            continue
        if lacking:
            notes.append(f"{t}: pooled over the {len(have)} runs that have it; not in {', '.join(lacking)}")
        pooled_targets.append(t)
    if not pooled_targets:
        warnings.append("NO TARGET IS SHARED BY TWO RUNS: nothing can be pooled; name IR measures the same way in "
                        "the runs' configs (e.g. map) to pool them")
    return pooled_targets


def _plan_tests(runs: list[Run], pooled_targets: list[str], attrs: list[str], lab: dict[str, str],
                notes: list[str], seed_of: Callable[[Run, int], int]) -> tuple[list[dict[str, Any]], list]:  # fmt: skip
    """Each pooled target's weights, means and ranking (the plans), and its metric pairs' tests in ranking order;
    ``seed_of(run, its own seed for the test)`` is the seed the run's draws use."""
    tests: list[dict[str, Any]] = []
    plans = []
    for t in pooled_targets:
        have = [r for r in runs if t in r.targets] if len(runs) > 1 else runs
        w = assign_weights(have, attrs)
        wsum = sum(w)
        w = [x / wsum for x in w]
        metrics = list(dict.fromkeys(m for r in have for m in r.taus[t]))
        every = [m for m in metrics if all(r.taus[t].get(m) is not None for r in have)]
        lower, mixed = directions(have, metrics, lab, t, notes)
        mean = {m: float(sum(wi * pooled_tau(r, r.taus[t][m], m, mixed) for wi, r in zip(w, have)))  # type: ignore[misc]
                for m in every}
        order = ranking(mean, lower)
        first_test = len(tests)
        for i, a in enumerate(order):
            for b in order[i + 1:]:
                parts, obs, keeps, ok = [], 0.0, [], True
                for wi, r in zip(w, have):
                    rp = _run_pair(r, t, a, b)
                    if rp is None:
                        ok = False
                        break
                    data, sd, sgn, delta, keep = rp
                    scale = swap_scale(len(data[0])) if len(have) > 1 else 1.0
                    parts.append((data, r.stats.method, r.stats.variant, seed_of(r, int(sd)), wi * sgn * scale))
                    obs += wi * delta
                    keeps.append(keep)
                tests.append({"target": t, "a": a, "b": b, "parts": parts if ok else None, "obs": obs,
                              "keeps": keeps, "runs": have, "w": w})
        plans.append((t, have, w, metrics, every, mean, order, lower, first_test, len(tests), mixed))
    return tests, plans


def _permutation_tests(tests: list[dict[str, Any]], plans: list, two_sided: bool, correction: str, alpha: float,
                       first: int, sequential: bool, map: Callable | None):  # fmt: skip
    """PERM-BOTH, sequential, all targets at once: (test index -> stream index, families, the Monte Carlo result or
    None, stream index -> adjusted p)."""
    tested = [k for k, x in enumerate(tests) if x["parts"] is not None]
    pos = {k: j for j, k in enumerate(tested)}
    streams = []
    for k in tested:
        x = tests[k]
        D = x["obs"]
        if two_sided:
            hits = (lambda r, mem, D=D: np.array([int((np.abs(r) >= abs(D) - TOL).sum())]))
        else:
            hits = (lambda r, mem, D=D: np.array([int((r >= D - TOL).sum())]))
        streams.append(Stream(POOLED_KIND, x["parts"][0][1], x["parts"][0][2], 0, (pos[k],),
                              (lambda mem, x=x: (tuple(x["parts"]), x["obs"])), hits))
    families = [[pos[k] for k in range(p[8], p[9]) if k in pos] for p in plans]
    mc = monte_carlo_family(streams, len(tested), families, correction, alpha, first, sequential, _mapper(map)) \
        if tested else None
    adjusted: dict[int, float] = {}
    if mc is not None:
        for fam in families:
            adjusted.update(zip(fam, adjust([float(mc.p[j]) for j in fam], correction)))
    return pos, families, mc, adjusted


def _target_rows(plan: tuple, tests: list[dict[str, Any]], pos: dict[int, int], mc, adjusted: dict[int, float],
                 alpha: float, margin: float, bootstrap: int, z90: float, n_runs: int, lab: dict[str, str],
                 out: tuple[list, list, list[str], list[str]]) -> None:  # fmt: skip
    """One pooled target's pair rows and leaderboard rows, appended to ``out`` (leaderboard, pair rows, warnings,
    notes) with its warnings and notes."""
    leaderboard, pair_rows, warnings, notes = out
    (t, have, w, metrics, every, mean, order, lower, k0, k1, mixed) = plan
    caches = [dict() for _ in have]
    p_better: dict[tuple[str, str], float | None] = {}
    for k in range(k0, k1):
        x = tests[k]
        j = pos.get(k)
        a, b = x["a"], x["b"]
        row: dict[str, Any] = {"target": t, "a": a, "b": b, "level": "system",
                               "delta": _oriented_mean(mean, a, lower) - _oriented_mean(mean, b, lower),
                               "ci": [None, None], "ci90": [None, None], "p_value": None, "p_adjusted": None,
                               "significant": False, "equivalent": False, "n_tasks": len(have)}
        if j is not None:
            row.update(p_value=float(mc.p[j]), p_adjusted=float(adjusted[j]), draws=int(mc.draws[j]),
                       settled=bool(mc.settled[j]), statistic=float(x["obs"]))
            row["significant"] = row["p_adjusted"] < alpha
            p_better[(a, b)] = row["p_adjusted"]
            parts = [(wi, _tau_parts(r, t, a, keep, bootstrap, cache), _tau_parts(r, t, b, keep, bootstrap, cache))
                     for wi, r, keep, cache in zip(x["w"], x["runs"], x["keeps"], caches)]
            row["ci"] = pooled_interval(float(x["obs"]), parts, 0.95)
            row["ci90"] = pooled_interval(float(x["obs"]), parts, z90)
            lo, hi = row["ci90"]
            row["equivalent"] = lo is not None and -margin < lo and hi < margin
        pair_rows.append(row)
    groups = assign_clusters(order, p_better, alpha)
    cluster_of = {m: ci + 1 for ci, g in enumerate(groups) for m in g}
    for m in order:
        leaderboard.append({"target": t, "metric": m, "level": "system", "mean_tau": mean[m],
                            "cluster": cluster_of[m], "n_tasks": len(have),
                            "taus": {r.path: r.taus[t].get(m) for r in have}, "missing": []})
    for m in metrics:
        if m in every:
            continue
        got = [(wi, r) for wi, r in zip(w, have) if r.taus[t].get(m) is not None]
        ws = sum(wi for wi, _ in got)
        leaderboard.append({
            "target": t, "metric": m, "level": "system",
            "mean_tau": (float(sum(wi * pooled_tau(r, r.taus[t][m], m, mixed) for wi, r in got) / ws)  # type: ignore[misc]
                         if got else None),
            "cluster": None, "n_tasks": len(got), "taus": {r.path: r.taus[t].get(m) for r in have},
            "missing": [r.path for r in have if r.taus[t].get(m) is None], "apart": True})
        notes.append(f"{t}: {m} is not in every run (missing or undefined in "
                     f"{', '.join(lab[r.path] for r in have if r.taus[t].get(m) is None)}); listed apart, not ranked")
    flagged = [lab[r.path] for r in have if r.informative.get(t) is False]
    if flagged:
        notes.append(f"{t}: flagged UNINFORMATIVE in its own report by {', '.join(flagged)} (see those reports); "
                     "their τ enter the pool as they are")
    if len(have) < 3 and n_runs > 1:
        warnings.append(f"{t}: FEW TASKS — pooled over {len(have)} runs; a pooled ranking over so few collections "
                        "says little about a new one")


def _resolution_notes(mc, families: list[list[int]], pair_rows: list[dict[str, Any]], correction: str, alpha: float,
                      warnings: list[str], notes: list[str]) -> None:  # fmt: skip
    """The notes on unsettled and untested pairs, and the warning when no pooled p can reach α."""
    if mc is not None and not bool(np.all(mc.settled)):
        notes.append(f"{int((~mc.settled).sum())} pooled decision(s) not settled after {mc.max_draws} draws "
                     "(p within Monte Carlo error of its threshold; decided by the estimate)")
    unreached = [r for r in pair_rows if r["p_adjusted"] is None]
    for r in unreached:
        notes.append(f"{r['target']}: {r['a']} vs {r['b']} not tested (a run where either τ is undefined on the "
                     "systems both have)")
    if mc is not None:
        m_max = max((len(f) for f in families), default=1)
        floor = p_floor(m_max, mc.max_draws, correction)
        if floor >= alpha:
            warnings.append(f"NO POOLED RESULT CAN BE SIGNIFICANT AT THIS RESOLUTION: at most {mc.max_draws} draws "
                            f"per test over {m_max} tests give a smallest adjusted p of {floor:.3g} ≥ α = {alpha:g}")


def _task_rows(runs: list[Run], plans: list) -> list[dict[str, Any]]:
    """One row per pooled run: its settings and its weight in each target it enters."""
    tasks = []
    for r in runs:
        tasks.append({"run": r.path, "name": r.name, "n_systems": len(r.systems), "targets": r.targets,
                      "metrics": list(r.kinds.get("mt", [])), "architecture": architecture(r),
                      "seed": r.stats.seed, "method": r.stats.method,
                      "variant": r.stats.variant, "alpha": r.stats.alpha, "permutation": r.verdict.resamples,
                      "resolution": r.verdict.resolution, "rounding": dict(r.results["config"]["correlation"].get("round") or {}),
                      "weights": {t: p[2][p[1].index(r)] for p in plans for t in [p[0]] if r in p[1]}})
    return tasks


def pool(dirs: Sequence[str | Path], weights: str = "equal", margin: float = 0.1, correction: str = "holm",
         bootstrap: int = 1000, seed: int = RUN_SEED, thresholds: bool = True, plots: bool = False,
         two_sided: bool = True, map: Callable | None = None, item_level: bool = True,
         mix_architectures: bool = False) -> PoolResult:  # fmt: skip
    """Pool the finished runs in ``dirs``: leaderboard, pairs, CLIR thresholds (see docs/pooling.md).

    ``weights``: ``equal`` or comma-separated attributes (``name`` or an attribute every system of a
    run shares) for :func:`assign_weights`; ``margin``: the equivalence margin in Δτ; ``correction``:
    holm, bh or none over each target's metric pairs; ``bootstrap``: draws of the Δτ CIs and the
    thresholds' CIs; ``seed``: the thresholds' bootstrap seed and, with two or more runs, the pooled tests'
    (:func:`stream_seed`); ``two_sided``: p = share of summed draws
    with |Δ| at least the observed |Δ| (default; holds α), else one-sided in the direction the pooled
    ranking chose (mt-metrics-eval's AverageCorrMatrix; rejects up to about 2α under the null); ``item_level``: pool
    the runs' item-level (within-item) component too, where they have one (:mod:`.items`; rows ``"level": "item"``);
    ``mix_architectures``: pool runs of document and of query translation together (else an error)."""
    dirs = _check_arguments(dirs, weights, margin, correction, bootstrap, seed)
    runs = [load_run(d) for d in dirs]
    _check_distinct(runs)
    if thresholds:
        _check_memory(runs, bootstrap)
    methods = {(r.stats.method, r.stats.variant) for r in runs}
    if len(methods) > 1:
        raise UserError("the runs use different coefficients (" + ", ".join(
            f"{r.path}: {r.stats.method}{'-' + r.stats.variant if r.stats.variant else ''}" for r in runs)
            + "); pool runs whose correlation.method and variant agree")
    run_names = [r.name for r in runs]
    lab = {r.path: (r.name if run_names.count(r.name) == 1 else r.path) for r in runs}  # names in notes
    alphas = sorted({r.stats.alpha for r in runs})
    alpha = alphas[0]
    attrs = [] if weights == "equal" else [a.strip() for a in weights.split(",") if a.strip()]
    if weights != "equal" and not attrs:
        raise UserError(f"--weights {weights!r}: give equal, or attribute names separated by commas")
    warnings: list[str] = []
    notes: list[str] = []
    if len(alphas) > 1:
        notes.append(f"the runs use different α ({', '.join(f'{a:g}' for a in alphas)}); pooled tests use α = {alpha:g}")
    check_architectures(runs, lab, mix_architectures, notes, warnings)
    if len(runs) < 2:
        warnings.append(f"ONE RUN: nothing is pooled; the leaderboard is {lab[runs[0].path]}'s own ranking "
                        "(its report says the same with its own notes)")
    names = [r.path for r in runs]
    pooled_targets = _pooled_targets(runs, lab, warnings, notes)

    sequential = any(r.verdict.resolution == "sequential" for r in runs)
    first = max(r.verdict.resamples for r in runs)
    leaderboard: list[dict[str, Any]] = []
    pair_rows: list[dict[str, Any]] = []
    identity = {r.path: run_identity(r) for r in runs}

    def seed_of(r: Run, own: int) -> int:
        return own if len(runs) < 2 else stream_seed(identity[r.path], seed, own)

    tests, plans = _plan_tests(runs, pooled_targets, attrs, lab, notes, seed_of)
    pos, families, mc, adjusted = _permutation_tests(tests, plans, two_sided, correction, alpha, first, sequential,
                                                     map)
    z90 = 0.90
    for plan in plans:
        _target_rows(plan, tests, pos, mc, adjusted, alpha, margin, bootstrap, z90, len(runs), lab,
                     (leaderboard, pair_rows, warnings, notes))
    _resolution_notes(mc, families, pair_rows, correction, alpha, warnings, notes)

    thr: list[dict[str, Any]] = []
    plot_bytes: dict[str, bytes] = {}
    if thresholds:
        thr, tnotes, plot_bytes = threshold_rows(runs, bootstrap=bootstrap, seed=seed, plots=plots)
        notes += tnotes
    item_rows, item_pairs, item_settings = [], [], {}
    if item_level:
        def weights_of(rs: Sequence[Run]) -> list[float]:
            ws = assign_weights(rs, attrs)
            return [x / sum(ws) for x in ws]

        item_rows, item_pairs, iwarn, inotes, item_settings = pool_items(runs, weights_of, lab, correction, alpha,
                                                                         margin, seed_of)
        warnings += iwarn
        notes += inotes
    if not item_rows:
        notes.append("item level: none of these runs has one (no item_level block in their results.json), so nothing "
                     "is pooled at item level" if item_level else "item level: not pooled (item_level=False)")
    tasks = _task_rows(runs, plans)
    for row in tasks:
        row["identity"] = identity[row["run"]]
    ci_method = CI_METHOD if (runs[0].stats.method, runs[0].stats.variant) == ("kendall", "b") else CI_METHOD_OTHER
    settings = {"weights": weights, "margin": margin, "correction": correction, "alpha": alpha,
                "family": "each target's metric pairs", "resolution": "sequential" if sequential else "fixed",
                "first_draws": first, "max_draws": int(mc.max_draws) if mc is not None else None,
                "bootstrap": bootstrap, "seed": seed, "ci_level": 0.95, "equivalence_level": z90,
                "test": POOL_METHOD.format(sided=SIDED[two_sided]), "two_sided": two_sided, "exact": False,
                "p_values": MONTE_CARLO_WHY, "swap_scale": SWAP_SCALE, "streams": STREAMS, "ci_method": ci_method,
                "runs": names}
    if item_rows:
        settings["item_level"] = item_settings
    return PoolResult(leaderboard + item_rows, pair_rows + item_pairs, thr, tasks, warnings, notes, settings,
                      plot_bytes)


def _oriented_mean(mean: dict[str, float], m: str, lower: Sequence[str]) -> float:
    return -mean[m] if m in lower else mean[m]
