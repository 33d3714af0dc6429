"""The one correlation driver: every (x, y) column pair of a score table, for ``run`` and ``correlate``.

Per pair: the coefficient with p-value and significance, pairwise accuracy, a bootstrap CI
over systems and (where per-query IR values exist) over queries. Rows missing a value are
dropped per pair (``n`` says how many remain). For ``run`` the best MT metric per target
(:mod:`.verdict`) is also compared with every other one by PERM-BOTH.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from ..config.schema import Config
from ..errors import UserError
from ..stats import round_half_up
from .statistics import (Correlation, Mapper, batched, bootstrap_ci, check_method, correlate, pairwise_accuracy,
                         permutation_sigdiff, query_bootstrap_ci)
from .verdict import ranking

PerQuery = Callable[[str, Sequence[str]], "np.ndarray | None"]


@dataclass(frozen=True)
class Settings:
    """How to correlate: coefficient, significance level, resampling and seeding."""

    method: str = "kendall"
    variant: str | None = "b"
    alpha: float = 0.05
    resamples: int = 0
    seed: int = 0
    level: float = 0.95
    seed_per_pair: bool = True  # pair i draws with seed + i (run); else every pair uses seed

    def __post_init__(self) -> None:
        method, variant = check_method(self.method, self.variant)
        object.__setattr__(self, "method", method)
        object.__setattr__(self, "variant", variant)


@dataclass(frozen=True)
class ScoreTable:
    """Score columns over the same systems (NaN = missing); ``per_query(y, systems)`` gives
    the systems x queries matrix whose row means are column ``y``, or None."""

    systems: tuple[str, ...]
    columns: Mapping[str, np.ndarray]
    per_query: PerQuery | None = None

    def values(self, column: str, systems: Sequence[str]) -> list[float]:
        pos = {s: i for i, s in enumerate(self.systems)}
        return [float(self.columns[column][pos[s]]) for s in systems]


@dataclass(frozen=True)
class PairResult:
    """One (x, y) correlation with its resampling intervals."""

    x: str
    y: str
    correlation: Correlation
    systems: tuple[str, ...]
    pairwise_accuracy: float | None
    ci_systems: tuple[float | None, float | None] | None = None
    ci_queries: tuple[float | None, float | None] | None = None
    seed: int = 0
    ci_both: tuple[float | None, float | None] | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)


def correlate_pairs(table: ScoreTable, pairs: Sequence[tuple[str, str]], s: Settings,
                    map: Mapper | None = None) -> list[PairResult]:  # fmt: skip
    """Correlate each (x, y) pair of ``table`` in order. Where per-query values exist, the
    BOOT-BOTH CI uses draws shared by every x of the same y (seed ``s.seed``). ``map`` runs
    the resampling seed blocks."""
    from .significance import boot_both_ci

    out = []
    for i, (x, y) in enumerate(pairs):
        xv, yv = np.asarray(table.columns[x], float), np.asarray(table.columns[y], float)
        keep = ~(np.isnan(xv) | np.isnan(yv))
        systems = tuple(s_ for s_, k in zip(table.systems, keep) if k)
        c = correlate(xv, yv, method=s.method, variant=s.variant, alpha=s.alpha)
        seed = s.seed + i if s.seed_per_pair else s.seed
        ci_s = ci_q = ci_b = None
        if s.resamples > 0:
            ci_s = bootstrap_ci(xv, yv, method=s.method, variant=s.variant, n_resamples=s.resamples,
                                seed=seed, level=s.level, map=map)
            m = table.per_query(y, systems) if table.per_query and c.tau is not None else None
            if m is not None and m.shape[1] >= 2:
                ci_q = query_bootstrap_ci(xv[keep], m, method=s.method, variant=s.variant,
                                          n_resamples=s.resamples, seed=seed, level=s.level, map=map)
                ci_b = boot_both_ci(xv[keep], m, method=s.method, variant=s.variant, n_resamples=s.resamples,
                                    seed=s.seed, level=s.level, map=map)
        pa = pairwise_accuracy(xv, yv) if c.n >= 2 else None
        out.append(PairResult(x, y, c, systems, pa, ci_s, ci_q, seed, ci_b))
    return out


# --------------------------------------------------------------------------- run
def _value(entry: Mapping[str, Any], kind: str, name: str) -> float:
    v = entry.get(kind, {}).get(name)
    return math.nan if v is None else float(v)


def _per_query_matrix(sys_results: Mapping[str, Any], measure: str, systems: Sequence[str],
                      aggregate: Sequence[float]) -> np.ndarray | None:
    """systems x queries matrix of a computed IR measure, when its aggregate is the mean."""
    rows = []
    qids = None
    for s, agg in zip(systems, aggregate):
        pq = sys_results[s].get("ir_per_query")
        if not pq:
            return None
        if qids is None:
            qids = sorted(pq)
        vals = []
        for q in qids:
            v = pq.get(q, {}).get(measure)
            if v is None:
                return None
            vals.append(float(v))
        if not vals or abs(float(np.mean(vals)) - agg) > 1e-6 * max(1.0, abs(agg)):
            return None  # aggregate is not the per-query mean (e.g. MQWV, gm_map)
        rows.append(vals)
    return np.asarray(rows, dtype=float) if rows else None


def run_table(cfg: Config, sys_results: Mapping[str, Any], kinds: Mapping[str, list[str]]) -> ScoreTable:
    """The experiment's systems as a score table (columns rounded as configured)."""
    rounding = cfg.correlation.round
    columns_known = [c for kind in ("mt", "ir", "human") for c in kinds.get(kind, [])]
    unknown = [k for k in rounding if k not in columns_known]
    if unknown:
        raise UserError(f"correlation.round.{unknown[0]}: no score of this run is called {unknown[0]!r}; "
                        f"use one of: {', '.join(columns_known)}")
    names = tuple(sys_results)
    columns: dict[str, np.ndarray] = {}
    for kind in ("mt", "ir", "human"):
        for col in kinds.get(kind, []):
            vals = [_value(sys_results[s], kind, col) for s in names]
            columns[col] = np.array([round_half_up(v, rounding[col]) if col in rounding else v for v in vals], float)
    ir = set(kinds.get("ir", []))

    def per_query(y: str, systems: Sequence[str]) -> np.ndarray | None:
        if y not in ir or y in rounding:
            return None
        agg = [float(columns[y][names.index(s)]) for s in systems]
        return _per_query_matrix(sys_results, y, systems, agg)

    return ScoreTable(names, columns, per_query)


def run_pairs(kinds: Mapping[str, list[str]]) -> list[tuple[str, str, str]]:
    """(kind, x, y) of every correlation a run reports, in report order."""
    mt, ir, human = kinds.get("mt", []), kinds.get("ir", []), kinds.get("human", [])
    return ([("mt-ir", x, y) for x in mt for y in ir] + [("mt-human", x, y) for x in mt for y in human]
            + [("ir-human", x, y) for x in ir for y in human])


def run_record(kind: str, r: PairResult) -> dict[str, Any]:
    """A results.json correlation row."""
    c = r.correlation
    row: dict[str, Any] = {
        "kind": kind, "mt_metric": r.x, "ir_measure": r.y, "x": r.x, "y": r.y, "tau": c.tau,
        "p_value": c.p_value, "n": c.n, "significant": c.significant, "method": c.method,
        "variant": c.variant if c.method == "kendall" else None, "alpha": c.alpha, "reason": c.reason,
        "systems": list(r.systems),
    }
    if c.tau is not None:
        row["pairwise_accuracy"] = r.pairwise_accuracy
        if r.ci_systems is not None:
            row["ci_systems"] = list(r.ci_systems)
        if r.ci_queries is not None:
            row["ci_queries"] = list(r.ci_queries)
        if r.ci_both is not None:
            row["ci_both"] = list(r.ci_both)
    return row


def correlate_all(cfg: Config, sys_results: Mapping[str, Any], kinds: Mapping[str, list[str]]):
    """Return (correlations, comparisons) lists for results.json (without verdicts)."""
    res = correlate_run(cfg, sys_results, kinds, with_verdicts=False)
    return res["correlations"], res["comparisons"]


def correlate_run(cfg: Config, sys_results: Mapping[str, Any], kinds: Mapping[str, list[str]],
                  with_verdicts: bool = True, map: Mapper | None = None, chunks: int = 1,
                  ) -> dict[str, list[dict[str, Any]]]:  # fmt: skip
    """``{"correlations", "comparisons", "verdicts"}`` for results.json. With ``map`` (an
    executor's), every resampling seed block of every pair and test runs in one ``map`` call
    of ``chunks`` tasks (:func:`.statistics.batched`); the results do not depend on it."""
    return batched(lambda m: _correlate_run(cfg, sys_results, kinds, with_verdicts, m), map, chunks)


def _correlate_run(cfg: Config, sys_results: Mapping[str, Any], kinds: Mapping[str, list[str]],
                   with_verdicts: bool, map: Mapper) -> dict[str, list[dict[str, Any]]]:  # fmt: skip
    cc = cfg.correlation
    s = Settings(cc.method, cc.variant, cc.alpha, cc.bootstrap, cc.seed)
    table = run_table(cfg, sys_results, kinds)
    pairs = run_pairs(kinds)
    results = correlate_pairs(table, [(x, y) for _, x, y in pairs], s, map)
    out = [run_record(kind, r) for (kind, _, _), r in zip(pairs, results)]
    lower = list(kinds.get("lower_is_better", []))
    comparisons = compare_with_leader(table, out, kinds.get("ir", []) + kinds.get("human", []), lower, s,
                                      cc.permutation, map) if cc.permutation > 0 else []
    verdict_rows: list[dict[str, Any]] = []
    if with_verdicts and cc.permutation > 0:
        targets = [Target(y, kind, None, table, tuple(r for (k, _, yy), r in zip(pairs, results)
                                                       if yy == y and k == f"mt-{kind}"))
                   for kind in ("ir", "human") for y in kinds.get(kind, [])]
        v = VerdictSettings(cc.permutation, getattr(cc, "correction", "holm"))
        verdict_rows = verdicts([t for t in targets if t.results], lower, s, v, map)
        flags = {vd["target"]: vd for vd in verdict_rows}
        for row in out:
            vd = flags.get(row["y"]) if row["kind"] in ("mt-ir", "mt-human") else None
            if vd is not None:
                row["informative"] = vd["informative"]
    return {"correlations": out, "comparisons": comparisons, "verdicts": verdict_rows}


def compare_with_leader(table: ScoreTable, rows: Sequence[Mapping[str, Any]], targets: Sequence[str],
                        lower: Sequence[str], s: Settings, resamples: int, map: Mapper | None = None
                        ) -> list[dict[str, Any]]:  # fmt: skip
    """PERM-BOTH of the first MT metric of :func:`.verdict.ranking` against each other one, per target."""
    comparisons: list[dict[str, Any]] = []
    for y in targets:
        cand = [r for r in rows if r["y"] == y and r["kind"] in ("mt-ir", "mt-human") and r["tau"] is not None]
        if len(cand) < 2:
            continue
        first = ranking({r["x"]: r["tau"] for r in cand}, lower)[0]
        best = next(r for r in cand if r["x"] == first)
        for j, r in enumerate(cand):
            if r is best:
                continue
            common = [sy for sy in best["systems"] if sy in set(r["systems"])]
            if len(common) < 3:
                continue
            sign = lambda m: -1.0 if m in lower else 1.0  # noqa: E731
            xa = [sign(best["x"]) * v for v in table.values(best["x"], common)]
            xb = [sign(r["x"]) * v for v in table.values(r["x"], common)]
            delta, p = permutation_sigdiff(xa, xb, table.values(y, common), method=s.method, variant=s.variant,
                                           n_resamples=resamples, seed=s.seed + j, plus_one=True, map=map)
            comparisons.append({
                "ir_measure": y, "metric_a": best["x"], "metric_b": r["x"], "delta": delta, "p_value": p,
                "significant": (p is not None and p < s.alpha), "n": len(common),
                "oriented": sorted({best["x"], r["x"]} & set(lower)), "test": "PERM-BOTH", "resamples": resamples,
            })
    return comparisons


# --------------------------------------------------------------------------- correlate (score tables)
def correlate_groups(groups: Sequence[tuple[str | None, ScoreTable]], xs: Sequence[str], ys: Sequence[str],
                     s: Settings, rounding: Mapping[str, int], v: "VerdictSettings | None" = None,
                     lower: Sequence[str] = ()) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """``correlate``: (rows, verdicts) for every x against every y per group; verdicts (one
    family over all groups and ys) only with ``v``."""
    rows, targets = [], []
    for g, sub in groups:
        results = correlate_pairs(sub, [(x, y) for y in ys for x in xs], s)
        rows += [table_record(g, r, rounding, s) for r in results]
        targets += [Target(y, "table", g, sub, tuple(r for r in results if r.y == y)) for y in ys]
    return rows, (verdicts(targets, lower, s, v) if v is not None else [])


def table_record(group: str | None, r: PairResult, rounding: Mapping[str, int], s: Settings) -> dict[str, Any]:
    """A ``correlate`` JSON row."""
    c = r.correlation
    rec = {"group": group, "x": r.x, "y": r.y, **c.to_dict()}
    rnd = [f"{col}={rounding[col]}" for col in (r.x, r.y) if col in rounding]
    rec["rounding"] = {col: rounding[col] for col in (r.x, r.y) if col in rounding}
    rec["signature"] = c.signature + "|round:" + (",".join(rnd) if rnd else "none")
    rec["pairwise_accuracy"] = r.pairwise_accuracy
    if r.ci_systems is not None:
        rec.update(ci_low=r.ci_systems[0], ci_high=r.ci_systems[1], ci_level=s.level, ci_resamples=s.resamples,
                   seed=r.seed)
    return rec


# --------------------------------------------------------------------------- verdicts
MIN_SEPARATED_SHARE = 0.10  # a target separating fewer system pairs than this is uninformative


@dataclass(frozen=True)
class VerdictSettings:
    """Ranking with significance clusters: PERM-BOTH draws, correction, discriminability draws."""

    resamples: int = 1000
    correction: str = "holm"
    discriminability: bool = True


@dataclass(frozen=True)
class Target:
    """The correlations of every MT metric with one target: an IR measure (kind ``ir``), a human
    score (``human``) or a score-table column per group (``table``)."""

    name: str
    kind: str
    group: str | None
    table: ScoreTable
    results: tuple[PairResult, ...]


def _power_note(n: int, alpha: float, min_tau: float | None, s: Settings) -> tuple[str | None, bool]:
    """(note, loud) on what n systems can show."""
    if s.method != "kendall" or s.variant not in ("b", "c"):
        return f"power not computed: it is read from the exact null of Kendall τ-b/τ-c, not {s.method} {s.variant or ''}", False
    if min_tau is None:
        return (f"NO CORRELATION CAN BE SIGNIFICANT: with n = {n} systems even a perfect ranking (|τ| = 1) "
                f"has p ≥ {alpha:g}; this experiment cannot answer the question"), True
    if min_tau >= 1 - 1e-12:
        return (f"ONLY A PERFECT RANKING CAN BE SIGNIFICANT: with n = {n} systems only |τ| = 1 reaches "
                f"p < {alpha:g}; add systems before reading anything into the τ values"), True
    return None, False


def _discriminability(t: Target, s: Settings, v: VerdictSettings, seed: int,
                      map: Mapper | None = None) -> dict[str, Any] | None:  # fmt: skip
    from .significance import adjust, paired_randomization

    if not (v.discriminability and t.kind == "ir" and t.table.per_query):
        return None
    col = np.asarray(t.table.columns[t.name], float)
    systems = [sy for sy, val in zip(t.table.systems, col) if not np.isnan(val)]
    m = t.table.per_query(t.name, systems)
    if m is None or m.shape[1] < 2 or len(systems) < 2:
        return None
    pairs, _, p = paired_randomization(m, v.resamples, seed, map=map)
    p_adj = adjust(list(p), v.correction)
    separated = sum(1 for q in p_adj if q < s.alpha)
    return {"pairs_separated": separated, "pairs": len(pairs), "queries": int(m.shape[1]),
            "test": f"paired randomization over queries (two-sided, mean difference, k={v.resamples}, "
                    f"p=(c+1)/(k+1), seed {seed}), {v.correction} over the {len(pairs)} system pairs, α={s.alpha:g}",
            "separated": [[systems[i], systems[j]] for (i, j), q in zip(pairs, p_adj) if q < s.alpha]}


def verdicts(targets: Sequence[Target], lower: Sequence[str], s: Settings, v: VerdictSettings,
             map: Mapper | None = None) -> list[dict[str, Any]]:  # fmt: skip
    """Per target: PERM-BOTH on every pair of ranked metrics, p adjusted over all pairs of all
    targets (one family), AssignRanks clusters, power and (IR measures) discriminability."""
    from .significance import adjust, min_significant_tau
    from .verdict import clusters

    sign = lambda m: -1.0 if m in lower else 1.0  # noqa: E731
    tests: list[tuple[int, str, str, float | None, float | None, int]] = []  # (target, a, b, delta, p, n)
    orders = []
    for ti, t in enumerate(targets):
        taus = {r.x: r.correlation.tau for r in t.results}
        order = ranking(taus, lower)
        orders.append(order)
        y = np.asarray(t.table.columns[t.name], float)
        for i, a in enumerate(order):
            for b in order[i + 1:]:
                xa, xb = sign(a) * np.asarray(t.table.columns[a], float), sign(b) * np.asarray(t.table.columns[b], float)
                n = int((~(np.isnan(xa) | np.isnan(xb) | np.isnan(y))).sum())
                delta, p = permutation_sigdiff(xa, xb, y, method=s.method, variant=s.variant, n_resamples=v.resamples,
                                               seed=s.seed + len(tests), plus_one=True, map=map)
                tests.append((ti, a, b, delta, p, n))
    tested = [k for k, tst in enumerate(tests) if tst[4] is not None]
    adjusted = dict(zip(tested, adjust([tests[k][4] for k in tested], v.correction)))
    family = (f"all {len(tested)} metric pairs over {len(targets)} target(s) "
              f"({', '.join(dict.fromkeys(t.name for t in targets))})")
    out = []
    for ti, (t, order) in enumerate(zip(targets, orders)):
        pairwise = [{"a": a, "b": b, "delta": d, "p_value": p, "p_adjusted": adjusted.get(k), "n": n,
                     "significant": adjusted.get(k) is not None and adjusted[k] < s.alpha}
                    for k, (tj, a, b, d, p, n) in enumerate(tests) if tj == ti]
        groups = clusters(order, {(r["a"], r["b"]): r["p_adjusted"] for r in pairwise}, s.alpha)
        n_sys = max((r.correlation.n for r in t.results), default=0)
        exact_null = s.method == "kendall" and s.variant in ("b", "c")
        min_tau = min_significant_tau(n_sys, s.alpha, s.variant) if exact_null else None
        notes = [f"{r.x}: not ranked ({r.correlation.reason})" for r in t.results if r.correlation.tau is None]
        power, loud = _power_note(n_sys, s.alpha, min_tau, s)
        disc = _discriminability(t, s, v, s.seed + 7919 * (ti + 1), map)
        informative = not (exact_null and min_tau is None)
        if disc is None and t.kind == "ir" and v.discriminability:
            notes.append(f"discriminability not computed: {t.name} has no per-query values whose mean is its score "
                         "(external or rounded scores, or a measure that is not a mean over queries)")
        warnings = [power] if power and loud else []
        if power and not loud:
            notes.append(power)
        if disc is not None and disc["pairs_separated"] < max(1, math.ceil(MIN_SEPARATED_SHARE * disc["pairs"])):
            informative = False
            warnings.append(f"UNINFORMATIVE: {t.name} separates only {disc['pairs_separated']} of {disc['pairs']} "
                            f"system pairs (adjusted p < {s.alpha:g}, fewer than {MIN_SEPARATED_SHARE:.0%}); its "
                            "differences between systems are mostly noise, so a correlation with it says little")
        winner = groups[0][0] if groups and len(groups[0]) == 1 and len(order) > 1 else None
        out.append({
            "target": t.name, "kind": t.kind, **({"group": t.group, "y": t.name} if t.kind == "table" else {}),
            "ranking": order, "clusters": groups, "winner": winner, "pairwise": pairwise,
            "test": "PERM-BOTH (Deutsch et al. 2021), one-sided: a (ranked above) correlates better than b; "
                    f"k={v.resamples}, p=(c+1)/(k+1)",
            "correction": v.correction, "family": family, "alpha": s.alpha, "n_systems": n_sys,
            "min_significant_tau": min_tau, "discriminability": disc, "informative": informative,
            "warnings": warnings, "notes": warnings + notes,
        })
    return out
