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

from ..errors import UserError
from ..limits import TABLE_SEED
from ..stats import round_half_up, t_ppf, t_sf
from .settings import MIN_SEPARATED_SHARE, CorrelationInputs, StatsSettings, VerdictSettings
from .significance import (
    FLOOR_SHARE,
    Stream,
    adjust,
    crossed_ci,
    crossed_interval,
    crossed_parts,
    min_significant_tau,
    monte_carlo_family,
    p_floor,
    settle_draws,
)
from .statistics import (
    Correlation,
    Mapper,
    batched,
    bootstrap_ci,
    correlate,
    pairwise_accuracy,
    percentile_ci,
    perm_both_exact_kind,
    perm_both_setup,
    permutation_sigdiff,
    query_bootstrap_ci,
    resample_draws,
)
from .verdict import clusters, ranking

PerQuery = Callable[[str, Sequence[str]], "np.ndarray | None"]


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
    seed: int = TABLE_SEED
    ci_both: tuple[float | None, float | None] | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)


def correlate_pairs(table: ScoreTable, pairs: Sequence[tuple[str, str]], s: StatsSettings,
                    map: Mapper | None = None) -> list[PairResult]:  # fmt: skip
    """Correlate each (x, y) pair of ``table`` in order. Where per-query values exist, the
    BOOT-BOTH CI uses draws shared by every x of the same y (seed ``s.seed``). ``map`` runs
    the resampling seed blocks."""
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
                ci_b = crossed_ci(xv[keep], yv[keep], m, method=s.method, variant=s.variant, n_resamples=s.resamples,
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


def run_table(inputs: CorrelationInputs, sys_results: Mapping[str, Any], kinds: Mapping[str, list[str]]) -> ScoreTable:
    """The experiment's systems as a score table (columns rounded as configured)."""
    rounding = inputs.correlation.round
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


def correlate_all(inputs: CorrelationInputs, sys_results: Mapping[str, Any], kinds: Mapping[str, list[str]]):
    """Return (correlations, comparisons) lists for results.json (without verdicts)."""
    res = correlate_run(inputs, sys_results, kinds, with_verdicts=False)
    return res["correlations"], res["comparisons"]


def correlate_run(inputs: CorrelationInputs, sys_results: Mapping[str, Any], kinds: Mapping[str, list[str]],
                  with_verdicts: bool = True, map: Mapper | None = None, chunks: int = 1,
                  ) -> dict[str, list[dict[str, Any]]]:  # fmt: skip
    """``{"correlations", "comparisons", "verdicts"}`` for results.json. With ``map`` (an
    executor's), every resampling seed block of every pair and test runs in one ``map`` call
    of ``chunks`` tasks (:func:`.statistics.batched`); the results do not depend on it."""
    return batched(lambda m: _correlate_run(inputs, sys_results, kinds, with_verdicts, m), map, chunks)


def _correlate_run(inputs: CorrelationInputs, sys_results: Mapping[str, Any], kinds: Mapping[str, list[str]],
                   with_verdicts: bool, map: Mapper) -> dict[str, list[dict[str, Any]]]:  # fmt: skip
    cc = inputs.correlation
    s = cc.stats()
    table = run_table(inputs, sys_results, kinds)
    pairs = run_pairs(kinds)
    results = correlate_pairs(table, [(x, y) for _, x, y in pairs], s, map)
    out = [run_record(kind, r) for (kind, _, _), r in zip(pairs, results)]
    lower = list(kinds.get("lower_is_better", []))
    verdict_rows: list[dict[str, Any]] = []
    comparisons: list[dict[str, Any]] = []
    if with_verdicts and cc.permutation > 0:
        targets = [Target(y, kind, None, table, tuple(r for (k, _, yy), r in zip(pairs, results)
                                                       if yy == y and k == f"mt-{kind}"))
                   for kind in ("ir", "human") for y in kinds.get(kind, [])]
        v = cc.verdicts()
        verdict_rows = verdicts([t for t in targets if t.results], lower, s, v, map)
        comparisons = comparisons_from_verdicts(verdict_rows, lower)
        flags = {vd["target"]: vd for vd in verdict_rows}
        for row in out:
            vd = flags.get(row["y"]) if row["kind"] in ("mt-ir", "mt-human") else None
            if vd is not None:
                row["informative"] = vd["informative"]
    elif cc.permutation > 0:
        comparisons = compare_with_leader(table, out, kinds.get("ir", []) + kinds.get("human", []), lower, s,
                                          cc.permutation, map)
    result = {"correlations": out, "comparisons": comparisons, "verdicts": verdict_rows}
    if with_verdicts:
        result["confounds"] = confounds(inputs, sys_results, kinds, table, out, s)
    return result


# --------------------------------------------------------------------------- confounds
def partial_kendall(txy: float, txz: float, tyz: float) -> float | None:
    """Kendall's partial τ of x and y given z (Kendall 1942): (τxy − τxz τyz) / √((1 − τxz²)(1 − τyz²))."""
    den = (1 - txz * txz) * (1 - tyz * tyz)
    return None if den <= 0 else float((txy - txz * tyz) / math.sqrt(den))


def _numeric_attrs(sys_results: Mapping[str, Any]) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for name, e in sys_results.items():
        for a, val in (e.get("attrs") or {}).items():
            if a in ("name", "system") or isinstance(val, bool):
                continue
            try:
                out.setdefault(a, {})[name] = float(val)
            except (TypeError, ValueError):
                out.setdefault(a, {})[name] = math.nan
    return {a: v for a, v in out.items() if not all(math.isnan(x) for x in v.values())}


def confounds(inputs: CorrelationInputs, sys_results: Mapping[str, Any], kinds: Mapping[str, list[str]], table: ScoreTable,
              rows: Sequence[Mapping[str, Any]], s: StatsSettings) -> dict[str, Any]:  # fmt: skip
    """What else could explain the correlations: τ between the MT metrics (why they cannot be
    separated), Kendall's partial τ of each MT metric and target given the hypothesis/reference
    length ratio (where the run scored MT) and each numeric system attribute, and notes on circular relevance, nested designs and metrics that correlate with
    no target."""
    mt = list(kinds.get("mt", []))
    agreement = []
    for i, a in enumerate(mt):
        for b in mt[i + 1:]:
            c = correlate(table.columns[a], table.columns[b], method="kendall", variant="b", alpha=s.alpha)
            agreement.append({"a": a, "b": b, "tau": c.tau, "n": c.n, "reason": c.reason})
    partial = []
    attrs = _numeric_attrs(sys_results)
    ratio = {n_: float(e["length_ratio"]) for n_, e in sys_results.items() if e.get("length_ratio") is not None}
    if ratio:
        attrs = {"length_ratio": ratio, **attrs}
    names = list(table.systems)
    for attr, vals in attrs.items():
        z = np.asarray([vals.get(n_, math.nan) for n_ in names], float)
        if len(set(z[~np.isnan(z)])) < 2:
            continue
        for r in rows:
            if r["kind"] not in ("mt-ir", "mt-human") or r["tau"] is None:
                continue
            x, y = np.asarray(table.columns[r["x"]], float), np.asarray(table.columns[r["y"]], float)
            keep = ~(np.isnan(x) | np.isnan(y) | np.isnan(z))
            cs = [correlate(u[keep], v[keep], method="kendall", variant="b").tau
                  for u, v in ((x, y), (x, z), (y, z))]
            if any(c is None for c in cs):
                continue
            partial.append({"x": r["x"], "y": r["y"], "covariate": attr, "tau": cs[0], "tau_x_covariate": cs[1],
                            "tau_y_covariate": cs[2], "partial_tau": partial_kendall(*cs), "n": int(keep.sum())})
    notes = []
    has_qrels = inputs.qrels
    circular = bool(mt and kinds.get("ir")) and not has_qrels  # between MT metrics and IR measures: both needed
    if circular and inputs.wmt:
        lang = inputs.reference_language
        side = "English reference side" if lang is None else f"reference side ({lang})"
        notes.append(f"circularity: relevance comes from the {side} of the same documents (pseudo-qrels "
                     "from its run, or queries generated from it) that the MT metrics score the translations against; "
                     "both the MT metrics and the IR measures reward closeness to that one reference, so part of "
                     "their correlation is built in")
    elif circular and inputs.pseudo_qrels:
        notes.append("circularity: relevance is the English side's own top-k (pseudo-qrels); where the MT references are "
                     "that English text, the MT metrics and the IR measures share the reference and part of their "
                     "correlation is built in")
    shared = []
    for a, vals in _raw_attrs(sys_results).items():
        counts: dict[str, int] = {}
        for v in vals.values():
            counts[v] = counts.get(v, 0) + 1
        if 1 < len(counts) < len(vals) and max(counts.values()) > 1:
            shared.append(f"{a} ({len(counts)} values)")
    if shared:
        notes.append(f"nested design: the {len(sys_results)} systems are variants sharing {', '.join(shared)}; they "
                     "are not independent samples of MT systems, so p-values that treat systems as independent are "
                     "optimistic and the verdicts speak for these variants only")
    for m in mt:
        mine = [r for r in rows if r["x"] == m and r["kind"] in ("mt-ir", "mt-human") and r["tau"] is not None]
        if mine and not any(r.get("significant") for r in mine):
            notes.append(f"{m} correlates significantly with no target (p ≥ {s.alpha:g} for all {len(mine)}); its place "
                         "in the rankings rests on correlations that are not themselves significant")
    return {"metric_agreement": agreement, "partial": partial, "notes": notes,
            "partial_method": "Kendall's partial τ (Kendall 1942) from three τ-b on the systems with all three values; "
                              "no p-value"}


def _raw_attrs(sys_results: Mapping[str, Any]) -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    for name, e in sys_results.items():
        for a, val in (e.get("attrs") or {}).items():
            if a not in ("name", "system"):
                out.setdefault(a, {})[name] = str(val)
    return {a: v for a, v in out.items() if len(v) == len(sys_results)}


def comparisons_from_verdicts(vds: Sequence[Mapping[str, Any]], lower: Sequence[str]) -> list[dict[str, Any]]:
    """results.json ``comparisons``: the first-ranked MT metric against each other one, per target,
    read from the verdicts' pairwise tests (the same test and draws): ``p_value`` unadjusted,
    ``significant`` after the verdicts' correction, as in the verdicts."""
    out = []
    for v in vds:
        if not v["ranking"]:
            continue
        first = v["ranking"][0]
        for p in v["pairwise"]:
            if p["a"] != first or p["p_value"] is None or p["n"] < 3:
                continue
            out.append({
                "ir_measure": v["target"], "metric_a": p["a"], "metric_b": p["b"], "delta": p["delta"],
                "p_value": p["p_value"], "p_adjusted": p["p_adjusted"], "significant": p["significant"],
                "correction": v["correction"], "family": v["family"], "n": p["n"], "systems": p["systems"],
                "oriented": sorted({p["a"], p["b"]} & set(lower)), "test": "PERM-BOTH", "resamples": p["resamples"],
                "p_se": p["p_se"], "delta_ci": p.get("delta_ci"), "source": "verdicts",
            })
    return out


def compare_with_leader(table: ScoreTable, rows: Sequence[Mapping[str, Any]], targets: Sequence[str],
                        lower: Sequence[str], s: StatsSettings, resamples: int, map: Mapper | None = None
                        ) -> list[dict[str, Any]]:  # fmt: skip
    """PERM-BOTH of the first MT metric of :func:`.verdict.ranking` against each other one, per target,
    unadjusted (``correction: none``); only where no verdicts are computed (they give these tests)."""
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
                                           n_resamples=resamples, seed=s.seed + j, plus_one=True, map=map,
                                           two_sided=True)
            comparisons.append({
                "ir_measure": y, "metric_a": best["x"], "metric_b": r["x"], "delta": delta, "p_value": p,
                "significant": (p is not None and p < s.alpha), "n": len(common),
                "oriented": sorted({best["x"], r["x"]} & set(lower)), "test": "PERM-BOTH", "resamples": resamples,
                "correction": "none", "systems": common,
            })
    return comparisons


# --------------------------------------------------------------------------- correlate (score tables)
def correlate_groups(groups: Sequence[tuple[str | None, ScoreTable]], xs: Sequence[str], ys: Sequence[str],
                     s: StatsSettings, rounding: Mapping[str, int], v: "VerdictSettings | None" = None,
                     lower: Sequence[str] = ()) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """``correlate``: (rows, verdicts) for every x against every y per group; verdicts (one
    family over all groups and ys) only with ``v``."""
    rows, targets = [], []
    for g, sub in groups:
        results = correlate_pairs(sub, [(x, y) for y in ys for x in xs], s)
        rows += [table_record(g, r, rounding, s) for r in results]
        targets += [Target(y, "table", g, sub, tuple(r for r in results if r.y == y)) for y in ys]
    return rows, (verdicts(targets, lower, s, v) if v is not None else [])


def table_record(group: str | None, r: PairResult, rounding: Mapping[str, int], s: StatsSettings) -> dict[str, Any]:
    """A ``correlate`` JSON row."""
    c = r.correlation
    rec = {"group": group, "x": r.x, "y": r.y, **c.to_dict()}
    rnd = [f"{col}={rounding[col]}" for col in (r.x, r.y) if col in rounding]
    rec["rounding"] = {col: rounding[col] for col in (r.x, r.y) if col in rounding}
    rec["signature"] = c.signature + "|round:" + (",".join(rnd) if rnd else "none")
    rec["pairwise_accuracy"] = r.pairwise_accuracy
    rec["systems"] = list(r.systems)
    if r.ci_systems is not None:
        rec.update(ci_low=r.ci_systems[0], ci_high=r.ci_systems[1], ci_level=s.level, ci_resamples=s.resamples,
                   seed=r.seed)
    return rec


# --------------------------------------------------------------------------- verdicts
VERDICT_PROCEDURE = "6"  # bump when the verdicts or the confound notes change: cached correlation results are recomputed
@dataclass(frozen=True)
class Target:
    """The correlations of every MT metric with one target: an IR measure (kind ``ir``), a human
    score (``human``) or a score-table column per group (``table``)."""

    name: str
    kind: str
    group: str | None
    table: ScoreTable
    results: tuple[PairResult, ...]


def _label(t: Target) -> str:
    return f"{t.group} / {t.name}" if t.group is not None else t.name


def min_significant(n: int, s: StatsSettings) -> tuple[float | None, str | None]:
    """(smallest |coefficient| with p < α at n systems, why it is not computed): Kendall τ-b/τ-c
    from the exact null of untied rankings; Pearson and Spearman from the t distribution their
    p-values use (r = t / sqrt(n - 2 + t²), t at 1 - α/2 with n - 2 degrees of freedom); acc23
    has no p-value. None with no reason: no coefficient can be significant."""
    if s.method == "kendall" and s.variant in ("b", "c"):
        return min_significant_tau(n, s.alpha, s.variant), None
    if s.method in ("pearson", "spearman"):
        if n < 3:
            return None, None
        t = t_ppf(1 - s.alpha / 2, n - 2)
        return t / math.sqrt(n - 2 + t * t), None
    return None, "acc23 has no p-value (use the CIs)"


def _power_note(n: int, alpha: float, min_tau: float | None, why: str | None, s: StatsSettings) -> tuple[str | None, bool]:
    """(note, loud) on what n systems can show."""
    coef = {"kendall": "τ", "pearson": "r", "spearman": "ρ"}[s.method]
    if why is not None:
        return f"power not computed: {why}", False
    if min_tau is None:
        return (f"NO CORRELATION CAN BE SIGNIFICANT: with n = {n} systems even a perfect ranking (|{coef}| = 1) "
                f"has p ≥ {alpha:g}; this experiment cannot answer the question"), True
    if min_tau >= 1 - 1e-12:
        return (f"ONLY A PERFECT RANKING CAN BE SIGNIFICANT: with n = {n} systems only |{coef}| = 1 reaches "
                f"p < {alpha:g}; add systems before reading anything into the {coef} values"), True
    return None, False


def williams_p(r_ag: float, r_bg: float, r_ab: float, n: int) -> float | None:
    """One-sided p of Williams' test (Steiger 1980, eq. 7) that a correlates with g better than
    b does, for Pearson correlations sharing g over the same n systems (as WMT metrics tasks)."""
    if n < 4:
        return None
    det = 1 - r_ag ** 2 - r_bg ** 2 - r_ab ** 2 + 2 * r_ag * r_bg * r_ab
    rbar = (r_ag + r_bg) / 2
    denom = 2 * (n - 1) / (n - 3) * det + rbar ** 2 * (1 - r_ab) ** 3
    if denom <= 0:
        return None
    t = (r_ag - r_bg) * math.sqrt((n - 1) * (1 + r_ab) / denom)
    return t_sf(t, n - 3)


def _pair_test_stream(k: int, setup: tuple, s: StatsSettings, seed: int, exact: bool = True):
    """Two-sided PERM-BOTH of one pair as a stream of the verdict engine (a two-sided test): the draws
    whose |Δ| reaches the observed |Δ|. Which metric is "a" is chosen by the data (the one ranked above), so a one-sided p in
    that direction would reject twice as often as α under the null. Exact (every swap pattern, see
    :func:`.statistics.perm_both_exact_kind`) where ``exact`` and that is cheap, else Monte Carlo. Exact:
    swapping every system negates Δ, so for |Δ| > 0 the two tails hold equally many patterns and the count
    is twice the upper tail's; for Δ = 0 every pattern counts."""
    a, b, g, delta = setup
    if exact and perm_both_exact_kind(a, b, s.method, s.variant) is not None:
        total = 1 << len(a)
        if abs(delta) <= 1e-12:
            return Stream("permutation-exact", s.method, s.variant, seed, (k,), lambda mem: (a, b, g, 0.0),
                          lambda r, mem: np.array([total]), patterns=total)
        aa, bb = (a, b) if delta > 0 else (b, a)
        return Stream("permutation-exact", s.method, s.variant, seed, (k,), lambda mem: (aa, bb, g, abs(delta)),
                      lambda r, mem: np.minimum(2 * np.asarray(r[:1]), total), patterns=total)
    return Stream("permutation", s.method, s.variant, seed, (k,), lambda mem: (a, b, g),
                  lambda r, mem: np.array([int((np.abs(r) >= abs(delta) - 1e-12).sum())]))


def _delta_draws(t: Target, metric: str, keep: np.ndarray, s: StatsSettings, k: int, lower: Sequence[str],
                 cache: dict, map: Mapper | None) -> np.ndarray | None:  # fmt: skip
    """Oriented per-draw coefficients of ``metric`` over the systems ``keep``: BOOT-BOTH draws
    (systems and queries, seed ``s.seed``) where the target has per-query values, else a bootstrap
    over systems; the draws of two metrics over the same systems are paired."""
    key = (metric, keep.tobytes())
    if key in cache:
        return cache[key]
    x = np.asarray(t.table.columns[metric], float)[keep]
    systems = [sy for sy, kk in zip(t.table.systems, keep) if kk]
    m = t.table.per_query(t.name, systems) if (t.table.per_query and t.kind == "ir") else None
    if m is not None and m.shape[1] >= 2:
        d = resample_draws("both", (x, m), s.method, s.variant, k, s.seed, map)
    else:
        y = np.asarray(t.table.columns[t.name], float)[keep]
        d = resample_draws("systems", (x, y), s.method, s.variant, k, s.seed, map)
    d = -d if metric in lower else d
    cache[key] = d
    return d


CROSSED_METHOD = ("crossed (systems and queries random): jackknife over systems + the queries' part of the "
                  "three bootstraps, normal")


def _crossed_parts(t: Target, metric: str, keep: np.ndarray, s: StatsSettings, k: int, lower: Sequence[str],
                   cache: dict, map: Mapper | None) -> dict[str, np.ndarray]:  # fmt: skip
    """:func:`.significance.crossed_parts` of ``metric`` (oriented) against the target over the systems
    ``keep`` (seed ``s.seed``: the parts of two metrics are paired)."""
    key = ("crossed", metric, keep.tobytes())
    if key not in cache:
        x = np.asarray(t.table.columns[metric], float)[keep]
        y = np.asarray(t.table.columns[t.name], float)[keep]
        m = t.table.per_query(t.name, [sy for sy, kk in zip(t.table.systems, keep) if kk])
        parts = crossed_parts(x, y, m, s.method, s.variant, k, s.seed, map)
        cache[key] = {k_: (-v if metric in lower else v) for k_, v in parts.items()}
    return cache[key]


def _delta_ci(da: np.ndarray, db: np.ndarray, level: float) -> list[float | None]:
    lo, hi = percentile_ci(da - db, level)
    return [lo, hi]


def verdicts(targets: Sequence[Target], lower: Sequence[str], s: StatsSettings, v: VerdictSettings,
             map: Mapper | None = None) -> list[dict[str, Any]]:  # fmt: skip
    """Per target: PERM-BOTH on every pair of ranked metrics, p adjusted within the family
    (``v.family``: each target's pairs, or all pairs of all targets), drawn until each decision is
    settled (``v.resolution``), AssignRanks clusters, a CI of every Δτ, power and (IR measures)
    discriminability."""
    tests, orders = _pair_tests(targets, lower, s)
    tested = [k for k, tst in enumerate(tests) if tst["setup"] is not None]
    pos = {k: j for j, k in enumerate(tested)}
    if v.family == "all":
        families = [list(range(len(tested)))]
    else:
        families = [[pos[k] for k in tested if tests[k]["ti"] == ti] for ti in range(len(targets))]
    sequential = v.resolution == "sequential"  # fixed: k Monte Carlo draws per test, as mt-metrics-eval
    streams = [_pair_test_stream(pos[k], tests[k]["setup"], s, tests[k]["seed"], sequential) for k in tested]
    mc = monte_carlo_family(streams, len(tested), families, v.correction, s.alpha, v.resamples, sequential, map)
    adjusted: dict[int, float] = {}
    for fam in families:
        adjusted.update(zip(fam, adjust([float(mc.p[j]) for j in fam], v.correction)))
    disc_all = _discriminability_all(targets, s, v, map)
    out = []
    for ti, (t, order) in enumerate(zip(targets, orders)):
        fam = families[0] if v.family == "all" else families[ti]
        if v.family == "all":
            family = (f"all {len(tested)} metric pairs over {len(targets)} target(s) "
                      f"({', '.join(dict.fromkeys(_label(t) for t in targets))})")
        else:
            family = f"the {len(fam)} metric pairs of {_label(t)}"
        cache: dict = {}
        pairwise = [_pair_row(t, tst, pos.get(k), adjusted, mc, s, v, lower, cache, map)
                    for k, tst in enumerate(tests) if tst["ti"] == ti]
        against = [r for r in pairwise if r["delta"] is not None and r["delta"] < 0]  # see the note below
        for r in against:  # "significant": a, ranked above, correlates better than b; its Δτ says it does not
            r.update(significant=False, against_ranking=True)
        groups = clusters(order, {(r["a"], r["b"]): (None if r in against else r["p_adjusted"]) for r in pairwise},
                          s.alpha)
        ns, min_tau, why, informative, warnings, notes, disc = _target_caveats(t, s, v, disc_all.get(ti))
        notes += [f"{r['a']} is ranked above {r['b']} (each metric's τ on the systems it has), but on the {r['n']} "
                  f"systems both have its Δτ is {r['delta']:+.3f}: missing scores make the ranking and this Δτ use "
                  "different systems, so the pair does not separate them in the clusters; read its Δτ and p"
                  for r in against]
        n_sys = max(ns)
        resolution, w, nn = _family_resolution(fam, mc, pairwise, s, v)
        warnings += w
        notes += nn
        by_x = {r.x: r.correlation for r in t.results}
        weak = [m for m in (groups[0] if groups else []) if by_x[m].significant is False]
        if weak and informative:
            notes.append(f"{', '.join(weak)}: in the first cluster, but {'its' if len(weak) == 1 else 'their'} "
                         f"correlation with {t.name} is itself not significant (p ≥ {s.alpha:g})")
        winner = groups[0][0] if groups and len(groups[0]) == 1 and len(order) > 1 else None
        out.append({
            "target": t.name, "kind": t.kind, **({"group": t.group, "y": t.name} if t.kind == "table" else {}),
            "ranking": order, "clusters": groups, "winner": winner, "pairwise": pairwise,
            "test": "PERM-BOTH (Deutsch et al. 2021), two-sided (|Δ| reaches the observed; a significant pair: a, "
                    "ranked above, correlates better than b); "
                    + _draws_text(v, mc.max_draws, bool(mc.exact.any())) + ", p=(c+1)/(k+1)"
                    + (" (exact: share of the 2^n patterns)" if mc.exact.any() else ""),
            "correction": v.correction, "family": family, "family_size": len(fam), "alpha": s.alpha,
            "method": s.method, "variant": s.variant,
            "n_systems": n_sys, "n_systems_range": [min(ns), max(ns)], "systems": _target_systems(t),
            "min_significant_tau": min_tau, "power_computed": why is None, "resolution": resolution,
            "discriminability": disc, "informative": informative,
            "warnings": warnings, "notes": warnings + notes,
        })
    return out


def _pair_tests(targets: Sequence[Target], lower: Sequence[str], s: StatsSettings) -> tuple[list[dict], list[list[str]]]:
    """Every pair of ranked metrics of every target, in ranking order, with its PERM-BOTH set-up and
    seed (the run's seed + the test's index); and each target's ranking."""
    sign = lambda m: -1.0 if m in lower else 1.0  # noqa: E731
    tests: list[dict[str, Any]] = []
    orders = []
    for ti, t in enumerate(targets):
        taus = {r.x: r.correlation.tau for r in t.results}
        order = ranking(taus, lower)
        orders.append(order)
        y = np.asarray(t.table.columns[t.name], float)
        for i, a in enumerate(order):
            for b in order[i + 1:]:
                xa, xb = sign(a) * np.asarray(t.table.columns[a], float), sign(b) * np.asarray(t.table.columns[b], float)
                keep = ~(np.isnan(xa) | np.isnan(xb) | np.isnan(y))
                setup = perm_both_setup(xa, xb, y, s.method, s.variant, (a, b))
                tests.append({"ti": ti, "a": a, "b": b, "setup": setup, "keep": keep, "seed": s.seed + len(tests)})
    return tests, orders


def _pair_row(t: Target, tst: dict, j: int | None, adjusted: dict[int, float], mc, s: StatsSettings,
              v: VerdictSettings, lower: Sequence[str], cache: dict, map: Mapper | None) -> dict[str, Any]:  # fmt: skip
    """One pairwise row of a target's verdict: Δτ, its p-values and, when asked, its CI (``j``: the
    test's index among those tested; None when the pair could not be tested)."""
    keep = tst["keep"]
    row: dict[str, Any] = {"a": tst["a"], "b": tst["b"], "delta": None, "p_value": None, "p_adjusted": None,
                           "n": int(keep.sum()), "significant": False,
                           "systems": [sy for sy, kk in zip(t.table.systems, keep) if kk]}
    if j is None:
        return row
    p_adj = adjusted[j]
    row.update(delta=float(tst["setup"][3]), p_value=float(mc.p[j]), p_adjusted=p_adj,
               significant=p_adj < s.alpha, p_se=float(mc.se[j]), resamples=int(mc.draws[j]),
               settled=bool(mc.settled[j]), exact=bool(mc.exact[j]))
    ci_k = s.resamples if s.resamples > 0 else v.ci_resamples
    if ci_k > 0:
        crossed = _has_queries(t, keep)
        if crossed:
            pa = _crossed_parts(t, tst["a"], keep, s, ci_k, lower, cache, map)
            pb = _crossed_parts(t, tst["b"], keep, s, ci_k, lower, cache, map)
            row["delta_ci"] = list(crossed_interval(float(tst["setup"][3]), {
                k_: pa[k_] - pb[k_] for k_ in pa}, s.level, bound=2.0))
        else:
            da = _delta_draws(t, tst["a"], keep, s, ci_k, lower, cache, map)
            db = _delta_draws(t, tst["b"], keep, s, ci_k, lower, cache, map)
            row["delta_ci"] = _delta_ci(da, db, s.level)
        row["delta_ci_level"] = s.level
        row["delta_ci_resamples"] = ci_k
        row["delta_ci_method"] = (CROSSED_METHOD if crossed else "bootstrap over systems")
    if s.method == "pearson":
        a_, b_, g_, _ = tst["setup"]
        rr = np.corrcoef(np.vstack([a_, b_, g_]))
        w1 = williams_p(float(rr[0, 2]), float(rr[1, 2]), float(rr[0, 1]), len(g_))
        row["williams_p"] = None if w1 is None else min(1.0, 2 * min(w1, 1 - w1))  # two-sided
    return row


def _target_caveats(t: Target, s: StatsSettings, v: VerdictSettings, disc: dict | None):
    """What bounds a target's verdict: the systems counted (``ns``), the smallest significant τ and why
    it is not computed, whether the target can inform at all, and its warnings and notes (power, ties,
    missing scores, discriminability, which ``disc`` carries)."""
    ns = [r.correlation.n for r in t.results if r.correlation.tau is not None] or \
         [r.correlation.n for r in t.results] or [0]
    n_sys = max(ns)
    min_tau, why = min_significant(n_sys, s)
    notes = [f"{r.x}: not ranked ({r.correlation.reason})" for r in t.results if r.correlation.tau is None]
    power, loud = _power_note(n_sys, s.alpha, min_tau, why, s)
    informative = not (min_tau is None and why is None)
    warnings = [power] if power and loud else []
    if power and not loud:
        notes.append(power)
    y = np.asarray(t.table.columns[t.name], float)
    yv = y[~np.isnan(y)]
    if len(yv) >= 1 and np.all(yv == yv[0]):
        informative = False
        warnings.append(f"UNINFORMATIVE: {t.name} has the same value ({yv[0]:g}) for all {len(yv)} systems "
                        "(all tied), so no metric can be ranked against it")
    if min(ns) != max(ns):
        notes.append("missing scores: the correlations use " + ", ".join(
            f"{r.x} n = {r.correlation.n}" for r in t.results if r.correlation.n != n_sys)
            + f" (the others n = {n_sys}); each pairwise test uses the systems both metrics and the target share")
    if disc is None and t.kind == "ir" and v.discriminability:
        notes.append(f"discriminability not computed: {t.name} has no per-query values whose mean is its score "
                     "(external or rounded scores, or a measure that is not a mean over queries)")
    if disc is not None:
        notes += disc.pop("_notes", [])
        warnings += disc.pop("_warnings", [])
        if disc["pairs_separated"] < max(1, math.ceil(MIN_SEPARATED_SHARE * disc["pairs"])):
            informative = False
            warnings.append(f"UNINFORMATIVE: {t.name} separates only {disc['pairs_separated']} of {disc['pairs']} "
                            f"system pairs (adjusted p < {s.alpha:g}, fewer than {MIN_SEPARATED_SHARE:.0%}); its "
                            "differences between systems are mostly noise, so a correlation with it says little")
    return ns, min_tau, why, informative, warnings, notes, disc


def _family_resolution(fam: list[int], mc, pairwise: list[dict], s: StatsSettings, v: VerdictSettings):
    """How far a family's Monte Carlo draws went (the verdict's ``resolution``), with its warnings and notes."""
    fam_draws = [int(mc.draws[j]) for j in fam if not mc.exact[j]]
    n_exact = sum(1 for j in fam if mc.exact[j])
    if fam_draws or not fam:
        floor = p_floor(len(fam), mc.max_draws, v.correction)
    else:  # every test exact: the smallest p is 1/2^n
        floor = min(1.0, (1 if v.correction == "none" else len(fam)) / max(1, max(int(mc.draws[j]) for j in fam)))
    unsettled = [f"{r['a']} > {r['b']}" for r in pairwise if r.get("settled") is False]
    settle = settle_draws(mc, [fam], v.correction, s.alpha) if unsettled else None
    resolution = {"mode": v.resolution, "first": v.resamples, "max": mc.max_draws,
                  "draws": [min(fam_draws), max(fam_draws)] if fam_draws else None, "exact": n_exact,
                  "floor": floor, "unsettled": len(unsettled), "settle_draws": settle}
    w, nn = _resolution_notes("PERM-BOTH", len(fam), v, mc.max_draws, floor, s.alpha, unsettled, settle,
                              monte_carlo=bool(fam_draws))
    return resolution, w, nn


def _target_systems(t: Target) -> list[str]:
    y = np.asarray(t.table.columns[t.name], float)
    return [sy for sy, val in zip(t.table.systems, y) if not np.isnan(val)]


def _has_queries(t: Target, keep: np.ndarray) -> bool:
    if not (t.table.per_query and t.kind == "ir"):
        return False
    m = t.table.per_query(t.name, [sy for sy, kk in zip(t.table.systems, keep) if kk])
    return m is not None and m.shape[1] >= 2


def _draws_text(v: VerdictSettings, cap: int, exact: bool = False) -> str:
    if v.resolution == "fixed":
        return f"k={v.resamples} draws per test (fixed)"
    return (("exact (all 2^n swap patterns) where cheap, else " if exact else "")
            + f"k={v.resamples} draws per test, more (up to {cap}) where a decision is still open "
            "(sequential, 99.9% Clopper-Pearson intervals)")


def _resolution_notes(test: str, m: int, v: VerdictSettings, cap: int, floor: float, alpha: float,
                      unsettled: Sequence[str], settle: int | None = None, monte_carlo: bool = True
                      ) -> tuple[list[str], list[str]]:  # fmt: skip
    """(warnings, notes) on what the number of draws lets the test show, and on the decisions the
    maximum draws left open with the draws that would settle them (``settle``)."""
    warnings, notes = [], []
    if m == 0:
        return warnings, notes
    corr = {"none": "unadjusted"}.get(v.correction, f"{v.correction}-adjusted")
    what = f"{cap} draws per test" if monte_carlo else "the exact null distributions"
    if floor >= alpha:
        warnings.append(f"NO {test} RESULT CAN BE SIGNIFICANT AT THIS RESOLUTION: {what} over a family "
                        f"of {m} tests give a smallest attainable {corr} p of {floor:.3g} ≥ α = {alpha:g}; "
                        + ("use resolution: sequential (the default) or more draws" if monte_carlo else
                           "add systems or test fewer pairs"))
    elif floor > FLOOR_SHARE * 10 * alpha:
        notes.append(f"{test} resolution: {what} over {m} tests give a smallest attainable {corr} p of "
                     f"{floor:.3g}, close to α = {alpha:g}: decisions near α may be set by the "
                     + ("draws" if monte_carlo else "number of systems"))
    if unsettled:
        fix = (f"about {settle} draws per test would settle {'it' if len(unsettled) == 1 else 'them'} "
               f"(correlation.permutation / --permutation {settle})" if settle else
               "a p sits on its threshold, so no number of draws settles it")
        notes.append(f"{test}: {len(unsettled)} decision(s) not settled after {cap} draws (p within Monte Carlo error "
                     f"of its threshold; decided by the estimate; {fix}): " + ", ".join(unsettled[:8])
                     + (" ..." if len(unsettled) > 8 else ""))
    return warnings, notes


def _discriminability_all(targets: Sequence[Target], s: StatsSettings, v: VerdictSettings,
                          map: Mapper | None) -> dict[int, dict[str, Any]]:  # fmt: skip
    """Per IR target with per-query values: the paired randomization test over queries for every
    pair of systems, p adjusted over the target's pairs, drawn like the verdicts' tests."""
    prepared = {}
    for ti, t in enumerate(targets):
        if not (v.discriminability and t.kind == "ir" and t.table.per_query):
            continue
        col = np.asarray(t.table.columns[t.name], float)
        systems = [sy for sy, val in zip(t.table.systems, col) if not np.isnan(val)]
        m = t.table.per_query(t.name, systems)
        if m is None or m.shape[1] < 2 or len(systems) < 2:
            continue
        pairs = [(i, j) for i in range(len(systems)) for j in range(i + 1, len(systems))]
        d = np.stack([m[i] - m[j] for i, j in pairs])
        ok = ~np.isnan(d)
        cnt = ok.sum(axis=1)
        d0 = np.where(ok, d, 0.0)
        with np.errstate(invalid="ignore", divide="ignore"):
            obs = d0.sum(axis=1) / cnt
        prepared[ti] = (systems, pairs, d0, cnt, obs, m.shape[1])
    streams, families, index = [], [], {}
    n = 0
    for ti, (systems, pairs, d0, cnt, obs, q) in prepared.items():
        live = [p for p in range(len(pairs)) if cnt[p] > 0]
        members = tuple(range(n, n + len(live)))
        local = {g: live[g - n] for g in members}
        index[ti] = (members, live)
        families.append(list(members))
        n += len(live)
        if live:
            streams.append(Stream(
                "signflip", "paired-mean", None, s.seed + 7919 * (ti + 1), members,
                lambda mem, d0=d0, cnt=cnt, obs=obs, local=local: (d0[[local[g] for g in mem]],
                                                                    cnt[[local[g] for g in mem]],
                                                                    obs[[local[g] for g in mem]]),
                lambda r, mem: r))
    if not prepared:
        return {}
    mc = monte_carlo_family(streams, n, families, v.correction, s.alpha, v.resamples, v.resolution == "sequential", map)
    out = {}
    for ti, (systems, pairs, d0, cnt, obs, q) in prepared.items():
        members, live = index[ti]
        p = np.ones(len(pairs))
        p[live] = mc.p[list(members)]
        p_adj = adjust(list(p), v.correction)
        separated = [k for k, x in enumerate(p_adj) if x < s.alpha]
        seed = s.seed + 7919 * (ti + 1)
        floor = p_floor(len(pairs), mc.max_draws, v.correction)
        draws = [int(mc.draws[g]) for g in members]
        unsettled = [f"{systems[pairs[live[g - members[0]]][0]]} vs {systems[pairs[live[g - members[0]]][1]]}"
                     for g in members if not mc.settled[g]]
        settle = settle_draws(mc, [list(members)], v.correction, s.alpha) if unsettled else None
        w, nn = _resolution_notes("discriminability", len(pairs), v, mc.max_draws, floor, s.alpha, unsettled, settle)
        corr = "unadjusted" if v.correction == "none" else f"{v.correction} over the {len(pairs)} system pairs"
        out[ti] = {
            "pairs_separated": len(separated), "pairs": len(pairs), "queries": int(q),
            "test": f"paired randomization over queries (two-sided, mean difference, {_draws_text(v, mc.max_draws)}, "
                    f"p=(c+1)/(k+1), seed {seed}), {corr}, α={s.alpha:g}",
            "separated": [[systems[pairs[k][0]], systems[pairs[k][1]]] for k in separated],
            "resolution": {"mode": v.resolution, "first": v.resamples, "max": mc.max_draws,
                           "draws": [min(draws), max(draws)] if draws else None, "floor": floor,
                           "unsettled": len(unsettled), "settle_draws": settle},
            "_warnings": w, "_notes": nn,
        }
    return out
