"""The item-level component of pooling: each run's ``within`` grouping (every system's item scores minus its own
mean, τ across the systems per item, averaged over the items; :mod:`clir_eval.correlation.items`) pooled over the
runs that have it, with tests valid for the crossed systems x items design.

- **mean τ**: the weighted mean of the runs' own ``within`` τ (results.json ``item_level.correlations``).
- **pairs**: per run, the two metrics' whole-system swap draws (:func:`clir_eval.correlation.items.system_swap_deltas`:
  one swap bit per system, the same in every item, as the run's own item-level verdicts draw them), weighted and
  summed over the runs against the weighted sum of the runs' observed Δτ: the crossed-design analogue of summing
  PERM-BOTH draws (mt-metrics-eval's ``AverageCorrMatrix``). Under the null (within every run the two metrics'
  system-centred rows are exchangeable within each system) each run's swap distribution is symmetric and the runs
  are independent, so the summed draws are the null distribution of the summed statistic. Two-sided,
  p = (c+1)/(k+1), decided by the verdict engine (:func:`clir_eval.correlation.significance.monte_carlo_family`:
  the same correction and resolution guard as the system level).
- **interval**: per run se² = the systems' share (Sen's U-statistic variance) + the items' share − the system x item
  interaction both hold (:func:`run_variance`); pooled se² = Σ w² se²; normal interval; coverage measured by
  ``scripts/sim_pool_coverage.py --item-level`` (docs/pooling.md).

Only item kinds whose matrices the run directory keeps can be re-drawn: the documents (``item_documents.json``) and
the queries (``item_queries.json``), each checked against results.json's sha256. Runs written before the queries'
matrix was kept have none, so where one of them is pooled the queries' pooled ``within`` τ is shown without a test
(said in a note)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from ..correlation.items import ItemSettings, group_coefs, swap_bits, swap_setup, system_swap_deltas
from ..correlation.significance import Source, adjust, monte_carlo_family, p_floor, settle_summary
from ..correlation.verdict import clusters as assign_clusters
from ..correlation.verdict import ranking
from ..io.item_matrix import read_documents_file, read_queries_file
from ..stats import norm_ppf
from .runs import Run, directions, pooled_tau

GROUPING = "within"
TOL = 1e-12
TEST = ("whole-system swaps per run (one swap bit per system, the same in every item, as the runs' own item-level "
        "verdicts), the draws' weighted sum against the weighted sum of the runs' observed within-item Δτ, two-sided, "
        "p = (c+1)/(k+1)")
CI = ("normal interval, se² = Σ w² (systems' share by Sen's U-statistic variance + items' share, the system x item "
      "interaction counted once) per run; the 95% interval covered 96-98% of simulated pooled studies (errs wide; "
      "docs/pooling.md)")


@dataclass
class ItemRun:
    """A run's item level: ``taus[(items, target)][metric]`` (the ``within`` rows), its item settings, and the
    matrices of the item kinds the run directory keeps (``mats[items] = (metrics, targets)``)."""

    run: Run
    taus: dict[tuple[str, str], dict[str, float | None]]
    settings: ItemSettings
    mats: dict[str, tuple[Mapping[str, np.ndarray], Mapping[str, np.ndarray]]]
    why_no_mats: str | None = None


def item_run(run: Run) -> ItemRun | None:
    """The item level of ``run`` (None when its results.json has none, or it was skipped)."""
    il = run.results.get("item_level")
    if not isinstance(il, Mapping) or "skipped" in il or not il.get("correlations"):
        return None
    taus: dict[tuple[str, str], dict[str, float | None]] = {}
    for c in il["correlations"]:
        if not isinstance(c, Mapping) or c.get("grouping") != GROUPING:
            continue
        t = c.get("tau")
        taus.setdefault((str(c["items"]), str(c["target"])), {})[str(c["mt_metric"])] = (
            None if t is None or (isinstance(t, float) and math.isnan(t)) else float(t))
    if not taus:
        return None
    st = il.get("settings") or {}
    cs = run.stats
    s = ItemSettings(method=st.get("method", cs.method), variant=st.get("variant", cs.variant),
                     alpha=float(st.get("alpha", cs.alpha)), permutation=int(st.get("permutation", 1000) or 0),
                     seed=int(st.get("seed", cs.seed)), correction=str(st.get("correction", "holm")),
                     resolution=str(st.get("resolution", "sequential")))
    mats: dict[str, tuple[Mapping[str, np.ndarray], Mapping[str, np.ndarray]]] = {}
    why = None
    for kind, read in (("documents", read_documents_file), ("queries", read_queries_file)):
        if il.get(f"{kind}_file"):  # a run written before item_queries.json: its queries stay untested (a note)
            d = read(Path(run.path), run.results)  # a file that does not match: one error line, the fix
            mats[kind] = (d["metrics"], d["targets"])
        elif kind == "documents":
            why = "its run directory keeps no item-level documents matrix (results.json item_level.documents_file)"
    return ItemRun(run, taus, s, mats, why)


@dataclass(frozen=True)
class SwapPart:
    """One run's share of a pooled item-level pair test: the two metrics' swap data (:func:`swap_setup`),
    the coefficient (weight x orientation to a above b), the seed key of its swap draws, its settings, the
    observed within-item Δτ (of the run's first metric minus its second) and its per-item Δτ."""

    a: np.ndarray
    b: np.ndarray
    y: np.ndarray
    coef: float
    key: tuple[int, ...]
    settings: ItemSettings
    delta: float
    per_item: np.ndarray


def _mean(v: np.ndarray) -> float | None:
    v = v[~np.isnan(v)]
    return float(v.mean()) if len(v) else None


def swap_part(Xa: np.ndarray, Xb: np.ndarray, Y: np.ndarray, coef: float, key: tuple[int, ...],
              s: ItemSettings) -> SwapPart | None:  # fmt: skip
    """A run's share of the pooled test of metrics a, b (oriented: higher = better) against ``Y`` (systems x
    items); None where either within-item τ is undefined."""
    a, b, y = swap_setup(np.asarray(Xa, float), np.asarray(Xb, float), np.asarray(Y, float))
    ca, cb = group_coefs(a, y, "item", s.method, s.variant), group_coefs(b, y, "item", s.method, s.variant)
    ta, tb = _mean(ca), _mean(cb)
    if ta is None or tb is None or y.shape[0] < 3:
        return None
    return SwapPart(a, b, y, float(coef), tuple(int(k) for k in key), s, ta - tb, ca - cb)


def swap_block(parts: Sequence[SwapPart], block: int, size: int) -> np.ndarray:
    """``size`` null draws of the pooled statistic Σ coef·Δτ: per run an independent block of whole-system swap
    patterns (``default_rng([*key, block])``, fair bits per system), its Δτ (:func:`system_swap_deltas`)."""
    tot = np.zeros(size)
    for p in parts:
        W = swap_bits(np.random.default_rng([*p.key, int(block)]), (size, p.y.shape[0]))
        tot += p.coef * system_swap_deltas(p.a, p.b, p.y, W, p.settings)
    return tot


def statistic(parts: Sequence[SwapPart]) -> float:
    return float(sum(p.coef * p.delta for p in parts))


def hits(parts: Sequence[SwapPart], block: int, size: int) -> int:
    """How many of a block's draws reach the observed |Σ coef·Δτ| (two-sided)."""
    return int((np.abs(swap_block(parts, block, size)) >= abs(statistic(parts)) - TOL).sum())


def run_variance(p: SwapPart) -> float | None:
    """A run's se² of its within-item Δτ for the crossed systems x items design.

    Per item the τ-b of each metric is the mean over the pairs of systems of a kernel (the pair's sign product,
    scaled by the item's P/√(pairs untied in x · pairs untied in y)), so Δτ is the mean of K(s, s', i) = kernel of a
    minus kernel of b over pairs and items. With ψ(s, i) = mean over s' of K(s, s', i): the systems' share is Sen's
    (1960) estimate 4/S · var_s(mean_i ψ(s, i)) (as at system level), the items' share var_i(Δτ_i) / I; each also
    holds the system x item interaction, estimated from the double-centred ψ as 4 Σ R² / ((S−1)(I−1)) / (S·I) and
    counted once: se² = V_systems + V_items − V_interaction, at least the larger of the two shares. Where a cell is
    missing, the jackknife over systems (each system's row left out) plus V_items (counts the interaction twice:
    wider)."""
    ok = ~np.isnan(p.per_item)
    d = p.per_item[ok]
    if len(d) < 2 or p.y.shape[0] < 3:
        return None
    a, b, y = p.a[:, ok], p.b[:, ok], p.y[:, ok]
    S, I = y.shape
    v_items = float(d.var(ddof=1)) / I
    if np.isnan(a).any() or np.isnan(b).any() or np.isnan(y).any():
        v_jack = _jackknife_systems(p)
        return None if v_jack is None else v_jack + v_items
    iu = np.triu_indices(S, k=1)
    sy = np.sign(y.T[:, :, None] - y.T[:, None, :])  # (I, S, S)
    ny = np.count_nonzero(sy[:, iu[0], iu[1]], axis=1)

    def kernel(x: np.ndarray) -> np.ndarray:
        sx = np.sign(x.T[:, :, None] - x.T[:, None, :])
        nx = np.count_nonzero(sx[:, iu[0], iu[1]], axis=1)
        return sx * sy * (len(iu[0]) / np.sqrt(nx * ny))[:, None, None]

    psi = (kernel(a) - kernel(b)).sum(axis=2) / (S - 1)  # (I, S)
    mean = float(psi.mean())
    psi_s = psi.mean(axis=0)
    v_sys = 4.0 / S * float(((psi_s - mean) ** 2).sum()) / (S - 1)
    R = psi - psi.mean(axis=0, keepdims=True) - psi.mean(axis=1, keepdims=True) + mean
    v_int = 4.0 * float((R ** 2).sum()) / ((S - 1) * max(1, I - 1)) / (S * I)
    return max(v_sys + v_items - v_int, v_sys, v_items)


def _jackknife_systems(p: SwapPart) -> float | None:
    S = p.y.shape[0]
    s = p.settings
    jack = []
    for i in range(S):
        keep = np.arange(S) != i
        ta = _mean(group_coefs(p.a[keep], p.y[keep], "item", s.method, s.variant))
        tb = _mean(group_coefs(p.b[keep], p.y[keep], "item", s.method, s.variant))
        if ta is not None and tb is not None:
            jack.append(ta - tb)
    if len(jack) < 3:
        return None
    j = np.asarray(jack)
    n = len(j)
    return (n - 1) / n * float(((j - j.mean()) ** 2).sum())


def interval(parts: Sequence[SwapPart], estimate: float, level: float) -> list[float | None]:
    """The pooled within-item Δτ's normal interval: se² = Σ coef² · :func:`run_variance`."""
    var = 0.0
    for p in parts:
        v = run_variance(p)
        if v is None:
            return [None, None]
        var += p.coef ** 2 * v
    z = norm_ppf(1 - (1 - level) / 2)
    se = math.sqrt(var)
    return [max(-2.0, estimate - z * se), min(2.0, estimate + z * se)]


def pair_key(run_seed: int, items: str, target: str, a: str, b: str, metrics: Sequence[str]) -> tuple[int, ...]:
    """A stable seed key of a run's swap draws for a pair (the same bits for (a, b) and (b, a): a swap pattern
    gives −Δτ for the reversed pair, the same |Δτ|), independent of the other runs and of their order."""
    ia, ib = sorted((metrics.index(a), metrics.index(b)))
    kind = sum(ord(c) * 31 ** k for k, c in enumerate(items)) % (2 ** 31)
    tgt = sum(ord(c) * 37 ** k for k, c in enumerate(target)) % (2 ** 31)
    return (int(run_seed), 7411, kind, tgt, ia, ib)


def pooled_test_source(tests: Sequence[Sequence[SwapPart]]):
    """A :class:`clir_eval.correlation.significance.Source` over the pooled item-level tests (test j: its
    runs' parts): block ``j`` of every run's swap draws depends only on its key and ``j``."""
    def draw(members: list[int], block: int, size: int) -> np.ndarray:
        return np.array([hits(tests[m], block, size) for m in members], np.int64)

    return Source(tuple(range(len(tests))), draw)


def _item_plans(runs: Sequence[Run], have_runs: list, keys: list, weights_of, lab: Mapping[str, str],
                warnings: list[str], seed_of=None) -> tuple[list, list[list[SwapPart]], set[str]]:  # fmt: skip
    """Each pooled (item kind, target)'s weights, means, ranking and pairs (the plans), the pairs' tests (the runs'
    swap parts), and the item kinds left untested; appends the warnings."""
    plans = []
    tests: list[list[SwapPart]] = []
    untested_kinds: set[str] = set()
    for key in keys:
        kind, t = key
        have = [(r, ir) for r, ir in have_runs if key in ir.taus]
        if len(have) < 2 <= len(runs):
            warnings.append(f"{t} over {kind} (item level): only in run {lab[have[0][0].path]}; NOT POOLED (see its "
                            "own report)")
            continue
        w = weights_of([r for r, _ in have])
        metrics = list(dict.fromkeys(m for _, ir in have for m in ir.taus[key]))
        lower, mixed = directions([r for r, _ in have], metrics, lab, f"{t} over {kind} (item level)", [])
        every = [m for m in metrics if all(ir.taus[key].get(m) is not None for _, ir in have)]
        mean = {m: float(sum(wi * pooled_tau(r, ir.taus[key][m], m, mixed)  # type: ignore[misc]
                             for wi, (r, ir) in zip(w, have))) for m in every}
        order = ranking(mean, lower)
        testable = all(kind in ir.mats and t in ir.mats[kind][1] for _, ir in have)
        if not testable:
            untested_kinds.add(kind)
        first = len(tests)
        pair_list = []
        for i, a in enumerate(order):
            for b in order[i + 1:]:
                parts: list[SwapPart] | None = [] if testable else None
                for wi, (r, ir) in zip(w, have):
                    if parts is None:
                        break
                    X, Y = ir.mats[kind]
                    if a not in X or b not in X:
                        parts = None
                        break
                    sa, sb = (-1.0 if a in r.lower else 1.0), (-1.0 if b in r.lower else 1.0)
                    part = swap_part(sa * X[a], sb * X[b], Y[t], wi,
                                     pair_key(seed_of(r, ir.settings.seed) if seed_of else ir.settings.seed, kind,
                                              t, a, b, list(X)), ir.settings)
                    if part is None:
                        parts = None
                        break
                    parts.append(part)
                pair_list.append((a, b, len(tests) if parts is not None else None))
                if parts is not None:
                    tests.append(parts)
        plans.append((key, have, w, metrics, every, mean, order, lower, pair_list, range(first, len(tests)), mixed))
    return plans, tests, untested_kinds


def _item_rows(plan: tuple, tests: list[list[SwapPart]], mc, adjusted: dict[int, float], alpha: float,
               margin: float, n_runs: int, out: tuple[list, list, list[str], list[str]]) -> None:  # fmt: skip
    """One pooled (item kind, target)'s pair rows and leaderboard rows, appended to ``out`` (leaderboard, pair rows,
    warnings, notes) with its warnings and notes."""
    lb, pair_rows, warnings, notes = out
    (key, have, w, metrics, every, mean, order, lower, pair_list, _, mixed) = plan
    kind, t = key
    p_better: dict[tuple[str, str], float | None] = {}
    for a, b, j in pair_list:
        row: dict[str, Any] = {"target": t, "items": kind, "a": a, "b": b, "level": "item",
                               "delta": _oriented(mean, a, lower) - _oriented(mean, b, lower),
                               "ci": [None, None], "ci90": [None, None], "p_value": None, "p_adjusted": None,
                               "significant": False, "equivalent": False, "n_tasks": len(have)}
        if j is not None and mc is not None:
            parts = tests[j]
            obs = statistic(parts)
            row.update(p_value=float(mc.p[j]), p_adjusted=float(adjusted[j]), draws=int(mc.draws[j]),
                       settled=bool(mc.settled[j]), statistic=obs)
            row["significant"] = row["p_adjusted"] < alpha
            p_better[(a, b)] = row["p_adjusted"]
            row["ci"] = interval(parts, obs, 0.95)
            row["ci90"] = interval(parts, obs, 0.90)
            lo, hi = row["ci90"]
            row["equivalent"] = lo is not None and hi is not None and -margin < lo and hi < margin
        pair_rows.append(row)
    tested = any(j is not None for _, _, j in pair_list)
    groups = assign_clusters(order, p_better, alpha) if tested else []
    cluster_of = {m: ci + 1 for ci, g in enumerate(groups) for m in g}
    for m in order:
        lb.append({"target": t, "items": kind, "metric": m, "level": "item", "mean_tau": mean[m],
                   "cluster": cluster_of.get(m), "n_tasks": len(have),
                   "taus": {r.path: ir.taus[key].get(m) for r, ir in have}, "missing": [],
                   **({} if tested else {"untested": True})})
    for m in metrics:
        if m in every:
            continue
        got = [(wi, r, ir) for wi, (r, ir) in zip(w, have) if ir.taus[key].get(m) is not None]
        ws = sum(wi for wi, _, _ in got)
        lb.append({"target": t, "items": kind, "metric": m, "level": "item",
                   "mean_tau": (float(sum(wi * pooled_tau(r, ir.taus[key][m], m, mixed)  # type: ignore[misc]
                                          for wi, r, ir in got) / ws) if got else None),
                   "cluster": None, "n_tasks": len(got), "taus": {r.path: ir.taus[key].get(m) for r, ir in have},
                   "missing": [r.path for r, ir in have if ir.taus[key].get(m) is None], "apart": True})
        notes.append(f"{t} over {kind} (item level): {m} is not in every run's item level; listed apart, not "
                     "ranked")
    if len(have) < 3 and n_runs > 1:
        warnings.append(f"{t} over {kind} (item level): FEW TASKS — pooled over {len(have)} runs")


def pool_items(runs: Sequence[Run], weights_of, lab: Mapping[str, str], correction: str, alpha: float,
               margin: float, seed_of=None) -> tuple[list, list, list[str], list[str], dict[str, Any]]:  # fmt: skip
    """Item-level leaderboard rows, pair rows, warnings, notes and settings (``"level": "item"``), or empty
    lists when no run has an item level. ``weights_of(runs)`` gives the runs' weights (summing to 1);
    ``seed_of(run, its item level's seed)`` the seed its swap draws use (default: its own)."""
    items = [(r, item_run(r)) for r in runs]
    have_runs = [(r, ir) for r, ir in items if ir is not None]
    without = [lab[r.path] for r, ir in items if ir is None]
    if not have_runs:
        return [], [], [], [], {}
    warnings: list[str] = []
    notes: list[str] = []
    if without:
        notes.append(f"item level: pooled over the runs that have one; not in {', '.join(without)} (no item_level "
                     "block, or it was skipped: item level needs MT metrics and a collection with an English side)")
    for r, ir in have_runs:
        if ir.why_no_mats:
            notes.append(f"item level: {lab[r.path]}'s within-item τ enter the means, but {ir.why_no_mats}, so its "
                         "pairs cannot be re-drawn; its item-level pairs are not tested")
    keys = list(dict.fromkeys(k for _, ir in have_runs for k in ir.taus))
    lb: list[dict[str, Any]] = []
    plans, tests, untested_kinds = _item_plans(runs, have_runs, keys, weights_of, lab, warnings, seed_of)

    settings: dict[str, Any] = {"test": TEST, "ci_method": CI, "grouping": GROUPING}
    mc = None
    families = [list(p[9]) for p in plans]
    if tests:
        sequential = any(ir.settings.resolution == "sequential" for _, ir in have_runs)
        # the runs' item_level.permutation (a run that drew none, permutation 0, counts as the default 1000)
        first_draws = max(ir.settings.permutation or ItemSettings().permutation for _, ir in have_runs)
        mc = monte_carlo_family([pooled_test_source(tests)], len(tests), [f for f in families if f], correction,
                                alpha, first_draws, sequential)
        settings.update(first_draws=first_draws, max_draws=int(mc.max_draws),
                        resolution="sequential" if sequential else "fixed")
    adjusted: dict[int, float] = {}
    if mc is not None:
        for fam in families:
            if fam:
                adjusted.update(zip(fam, adjust([float(mc.p[j]) for j in fam], correction)))
    pair_rows: list[dict[str, Any]] = []
    for plan in plans:
        _item_rows(plan, tests, mc, adjusted, alpha, margin, len(runs), (lb, pair_rows, warnings, notes))
    if "queries" in untested_kinds:
        notes.append("item level over queries: runs written before item_queries.json keep only the documents' item "
                     "matrix (item_documents.json), not the queries' per-query MT scores, so the queries' pooled "
                     "within-query τ is the weighted mean of the runs' own τ, shown without a test or cluster "
                     "('untested')")
    for kind in sorted(untested_kinds - {"queries"}):
        notes.append(f"item level over {kind}: not every run keeps its matrices; pooled within-item τ shown without a "
                     "test ('untested')")
    if mc is not None:
        fams = [f for f in families if f]
        if not bool(np.all(mc.settled)):
            notes.append("item level: " + str(settle_summary(mc, fams, correction, alpha, "pooled whole-system swaps",
                                                             "item_level.permutation of the runs")))
        m_max = max((len(f) for f in fams), default=1)
        floor = p_floor(m_max, mc.max_draws, correction)
        if floor >= alpha:
            warnings.append(f"item level: NO POOLED RESULT CAN BE SIGNIFICANT AT THIS RESOLUTION: at most "
                            f"{mc.max_draws} draws per test over {m_max} tests give a smallest adjusted p of "
                            f"{floor:.3g} ≥ α = {alpha:g}")
    notes.append("item level (within-item τ: each system's item scores on normal scores minus its own mean, τ across the systems per "
                 "item, averaged over the items): on which items a system does worse than its own average, pooled "
                 "over the runs; a question apart from the system level's (which metric ranks the systems)")
    return lb, pair_rows, warnings, notes, settings


def _oriented(mean: Mapping[str, float], m: str, lower: Sequence[str]) -> float:
    return -mean[m] if m in lower else mean[m]
