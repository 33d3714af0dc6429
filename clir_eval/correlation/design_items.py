"""Study design at item level: the power of a run's item-level (``within``) questions at other study sizes, for an
assumed effect, with the run's own crossed-design tests (never the observed effect; G*Power/simr, as
:mod:`.design` does for the system level).

1. **The pilot** is the run's documents matrix (``item_documents.json``: per system and judged-relevant document the
   item-level MT scores and the document's retrievability). Every variable v (each MT metric, oriented higher =
   better, and the target) follows the crossed model ``V[s, i] = mu_v + a_v[s] + b_v[i] + e_v[s, i]``: system effects
   a, item effects b and the within-item (system x item interaction) part e, each jointly normal across the
   variables. Fitted (:func:`fit_items`) on the items every variable has and whose target varies across the systems
   (the items the run's tests use): the variance components of every variable and the correlations of the system
   and the item effects between variables by the moment (two-way MANOVA) estimates, and the within parts'
   correlations, metric with target and metric with metric, from the pilot's ``within`` τ by Greiner's relation
   ``rho = sin(pi tau / 2)``.
2. **The effect is an input**: a single τ is the population ``within`` τ of a metric with the target — the Kendall τ
   across systems, within one item, of the system-centred values; in the model ``(2/pi) asin(rho_e)``, the same at
   every number of items. A pair's effect is the population Δτ = τ_a − τ_b of two metrics' ``within`` τ, their mean τ
   and every other metric kept as in the pilot.
3. **New studies** (new systems x new items) are drawn from the fitted model, and
4. **the run's item-level tests** are applied to each, vectorised over the studies (each checked against the run's
   functions in tests/test_design_items.py): a single τ is significant when the ``within`` row's crossed test
   (:func:`.items.crossed_item_test`: the item-averaged τ over its standard error for systems and items both random,
   t with Satterthwaite's degrees of freedom, two-sided) gives p < alpha (and its interval excludes 0). A pair is
   "a significantly above b" when a's within τ is above b's and the crossed test of their Δτ
   (:func:`.items.crossed_pair_test`, two-sided) adjusted with the run's correction over the run's family (the
   target's metric pairs) is below alpha. Both need 4 systems.
5. **Power** = the share of ``reps`` simulated studies that answer, with its Monte Carlo se.

Ties: the model's values are continuous. Retrieval targets such as a document's retrievability have many ties (and
items whose target is constant, which the tests leave out: the item counts here are of items whose target varies
across the systems); the prediction is for untied scores with the pilot's dependence.
"""

from __future__ import annotations

import functools
import math
import zlib
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from ..io.item_matrix import read_documents_file
from ..limits import RUN_SEED
from . import design as dz
from .items import (
    CROSSED_MIN_SYSTEMS,
    DISCRETE_LEVELS,
    ItemSettings,
    crossed_moments_full,
    crossed_p,
    discrete_scales,
    grouped,
    loo_tau_b_full,
    within_full,
)
from .verdict import ranking

LEVEL = "item"
BLOCK = 4_000_000  # cells per block of arithmetic (studies x systems x systems x items): memory bounded
MAX_MISSING = 0.1  # a metric missing on more than this share of the items is left out (named in a note)

METHOD = ("item level (within grouping): crossed model fitted on the pilot's documents matrix (system effects, item "
          "effects and within-item parts of every metric and the target, moment estimates; the within parts' "
          "correlations from the pilot's within τ, sin(pi tau/2)); the effect assumed (population within τ, or Δτ "
          "between two metrics' within τ); new systems and items simulated; the run's item-level tests applied: "
          "a single τ by the crossed test of the within τ (systems and items both random; two-sided, uncorrected), "
          "a pair by the crossed test of the within Δτ (two-sided) "
          "after the run's correction over the target's metric pairs; power with its Monte Carlo se")


# --------------------------------------------------------------------------- fit
@dataclass(frozen=True)
class ItemFit:
    """The fitted crossed model of one item-level target (:func:`fit_items`)."""

    target: str
    items: str  # the item kind (documents)
    n_systems: int
    n_items: int  # items used: every value defined and the target varying across systems
    metrics: tuple[str, ...]  # ranked by the pilot's within τ, best first
    taus: tuple[float, ...]  # the pilot's within τ of each metric with the target
    loadings: np.ndarray  # (M,) correlation of each metric's within part with the target's, sin(pi tau/2)
    corr: np.ndarray  # (M, M) the metrics' within parts' correlations (sin(pi tau/2) of their within τ)
    scale_item: np.ndarray  # (M+1,) sd of the item effects / sd of the within part (metrics, then the target)
    scale_system: np.ndarray  # (M+1,) the same for the system effects
    corr_item: np.ndarray  # (M+1, M+1) correlations of the item effects
    corr_system: np.ndarray  # (M+1, M+1) correlations of the system effects
    variances: Mapping[str, Mapping[str, float]] = field(default_factory=dict)  # per variable: system, item, within
    notes: tuple[str, ...] = ()
    step_valued: tuple[str, ...] = ()  # metrics that, like the target, take few values: their within τ is not tested


def _components(V: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(system, item, within) covariance matrices of the K variables of V (S, I, K) by the two-way MANOVA moment
    estimates without replication: E[MCP_within] = Σ_e, E[MCP_items] = S Σ_b + Σ_e, E[MCP_systems] = I Σ_a + Σ_e."""
    S, I, K = V.shape
    row, col, grand = V.mean(axis=1), V.mean(axis=0), V.mean(axis=(0, 1))
    R = V - row[:, None, :] - col[None, :, :] + grand
    cov_e = np.einsum("sik,sil->kl", R, R) / ((S - 1) * (I - 1))
    dc, dr = col - grand, row - grand
    mcp_i = S * (dc.T @ dc) / (I - 1)
    mcp_s = I * (dr.T @ dr) / (S - 1)
    return (mcp_s - cov_e) / I, (mcp_i - cov_e) / S, cov_e


def _corr_and_sd(cov: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(a valid correlation matrix, the sds) of a moment-estimated covariance (negative variances taken as 0)."""
    sd = np.sqrt(np.maximum(np.diag(cov), 0.0))
    with np.errstate(invalid="ignore", divide="ignore"):
        C = cov / np.outer(sd, sd)
    C = np.where(np.outer(sd, sd) > 0, C, 0.0)
    return dz.residual_correlation(np.zeros(len(sd)), C)[0], sd


def _sin(tau: float) -> float:
    return max(-dz.MAX_R, min(dz.MAX_R, math.sin(math.pi / 2 * tau)))


def fit_items(metrics: Mapping[str, np.ndarray], target: str, Y: np.ndarray, items: str = "documents",
              method: str = "kendall", variant: str | None = "b") -> ItemFit | None:  # fmt: skip
    """The crossed model of ``target`` (Y: systems x items) with the MT metrics (oriented: higher = better; same
    shape; NaN: missing) on the pilot (module docstring, step 1); None with fewer than 3 systems, 3 usable items or
    one metric. Metrics ranked by the pilot's within τ (the run's ranking)."""
    Y = np.asarray(Y, float)
    notes: list[str] = []
    usable = {}
    for m, X in metrics.items():
        miss = np.isnan(np.asarray(X, float)).any(axis=0).mean() if X.size else 1.0
        if miss > MAX_MISSING:
            notes.append(f"{target} over {items}: {m} is missing on {miss:.0%} of the {items} (more than "
                         f"{MAX_MISSING:.0%}); left out of the item-level design")
        else:
            usable[m] = np.asarray(X, float)
    if not usable:
        return None
    with np.errstate(invalid="ignore"):
        keep = ~np.isnan(Y).any(axis=0) & (np.nanmax(Y, axis=0) > np.nanmin(Y, axis=0))
    for X in usable.values():
        keep &= ~np.isnan(X).any(axis=0)
    S, I = Y.shape[0], int(keep.sum())
    if S < 3 or I < 3:
        return None
    Xk = {m: X[:, keep] for m, X in usable.items()}
    Yk = Y[:, keep]
    taus = {m: grouped(X, Yk, "within", method, variant)[0] for m, X in Xk.items()}
    order = [m for m in ranking(taus) if taus[m] is not None]
    if not order:
        return None
    M = len(order)
    C = np.eye(M)
    for i in range(M):
        for j in range(i + 1, M):
            t = grouped(Xk[order[i]], Xk[order[j]], "within", method, variant)[0]
            C[i, j] = C[j, i] = _sin(t or 0.0)
    r = np.array([_sin(taus[m]) for m in order])
    change = dz.corr_change(tuple(order), r, C)
    if change is not None:
        notes.append(f"{target} over {items}: the metrics' within-item correlations, less what their loadings on the "
                     "target's explain, are not a valid correlation matrix; the nearest valid one is simulated: "
                     + dz.change_text(change))
    V = np.stack([Xk[m] for m in order] + [Yk], axis=2)
    cov_a, cov_b, cov_e = _components(V)
    sd_e = np.sqrt(np.maximum(np.diag(cov_e), 1e-300))
    corr_a, sd_a = _corr_and_sd(cov_a)
    corr_b, sd_b = _corr_and_sd(cov_b)
    names = list(order) + [target]
    variances = {n: {"system": float(max(cov_a[k, k], 0.0)), "item": float(max(cov_b[k, k], 0.0)),
                     "within": float(cov_e[k, k])} for k, n in enumerate(names)}
    return ItemFit(target, items, S, I, tuple(order), tuple(float(taus[m]) for m in order), r, C, sd_b / sd_e,
                   sd_a / sd_e, corr_b, corr_a, variances, tuple(notes),
                   tuple(m for m in order if discrete_scales(Xk[m], Yk)))


# --------------------------------------------------------------------------- simulation
def _chol(C: np.ndarray) -> np.ndarray:
    return np.linalg.cholesky(C + 1e-9 * np.eye(len(C)))


def simulate_items(fit: ItemFit, r: np.ndarray, n: int, n_items: int, reps: int, rng: np.random.Generator
                   ) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """``reps`` new studies of ``n`` systems x ``n_items`` items from the fitted model with within loadings ``r``:
    metrics (R, n, I, M) and the target (R, n, I)."""
    M = len(r)
    L = _chol(dz.residual_correlation(r, fit.corr)[0])
    cells = reps * n * n_items
    f = rng.standard_normal((reps, n, n_items))
    # metric axis first: one BLAS product mixes the M independent normals of every cell
    E = (L @ rng.standard_normal((M, cells))).reshape(M, reps, n, n_items)
    E *= np.sqrt(1 - r ** 2)[:, None, None, None]
    E += r[:, None, None, None] * f[None]
    B = (rng.standard_normal((reps, n_items, M + 1)) @ _chol(fit.corr_item).T) * fit.scale_item
    A = (rng.standard_normal((reps, n, M + 1)) @ _chol(fit.corr_system).T) * fit.scale_system
    E += np.moveaxis(B[:, None, :, :M], 3, 0) + np.moveaxis(A[:, :, None, :M], 3, 0)
    Y = f + B[:, None, :, M] + A[:, :, None, M]
    return np.moveaxis(E, 0, 3), Y


def centred(V: np.ndarray) -> np.ndarray:
    """The ``within`` grouping's values of each study (:func:`.items.system_centred`: normal scores, then each
    system's values minus its own mean over the items): (R, S, I)."""
    return within_full(V)


LEVEL_CI = ItemSettings().level  # the run's ``ci_crossed`` level: a row is significant only where it excludes 0


def tau_p(Xc: np.ndarray, Yc: np.ndarray) -> np.ndarray:
    """Per study, the ``within`` row's crossed test's two-sided p (:func:`.items.crossed_item_test`) of the
    ``within`` values (:func:`centred`) of X and Y (R, S, I)."""
    c, loo = loo_tau_b_full(Xc, Yc)
    return crossed_p(*crossed_moments_full(c, loo), True)


def _cut(alpha: float) -> float:
    """The p below which the run calls a row or pair significant: p < α, and its ``ci_crossed`` (level
    :data:`LEVEL_CI`, the same statistic) excludes 0, i.e. p < 1 − level."""
    return min(alpha, 1 - LEVEL_CI)


def pair_p(a: np.ndarray, b: np.ndarray, Yc: np.ndarray) -> np.ndarray:
    """Per study, the verdicts' crossed test's two-sided p of within τ(a) − within τ(b)
    (:func:`.items.crossed_pair_test`) for the ``within`` values of two metrics and the target (R, S, I)."""
    ca, la = loo_tau_b_full(a, Yc)
    cb, lb = loo_tau_b_full(b, Yc)
    return crossed_p(*crossed_moments_full(ca - cb, la - lb), False)


def pair_rejects(X: np.ndarray, Y: np.ndarray, ia: int, ib: int, alpha: float, correction: str,
                 extra_family: int = 0) -> np.ndarray:  # fmt: skip
    """Per study (X: (R, S, I, M) metrics, Y: (R, S, I) target): whether the run's item-level verdict declares
    metric ia significantly above ib: ia's within τ above ib's, and the crossed test's two-sided p, adjusted with
    ``correction`` over every pair of the M metrics (and ``extra_family`` pairs counted as not rejected), below
    alpha (and below 1 − the interval's level)."""
    R, S, I, M = X.shape
    Yc = centred(Y)
    C = {m: centred(X[..., m]) for m in (ia, ib)}
    (ca, la), (cb, lb) = loo_tau_b_full(C[ia], Yc), loo_tau_b_full(C[ib], Yc)
    above = ca.mean(axis=1) > cb.mean(axis=1)
    out = np.zeros(R, bool)
    if not above.any():
        return out
    Yo = Yc[above]
    p_focal = crossed_p(*crossed_moments_full(ca[above] - cb[above], la[above] - lb[above]), False)
    cut = _cut(alpha)
    K = M * (M - 1) // 2 + extra_family
    if correction == "none" or K == 1:
        out[above] = p_focal < cut
        return out
    sure, open_ = p_focal < cut / K, (p_focal >= cut / K) & (p_focal < cut)
    decided = sure.copy()
    if open_.any():
        pairs = [(i, j) for i in range(M) for j in range(i + 1, M)]
        focal = pairs.index((min(ia, ib), max(ia, ib)))
        Xo = X[above][open_]
        Co = {m: C[m][above][open_] if m in C else centred(Xo[..., m]) for m in range(M)}
        Pm = np.ones((int(open_.sum()), K))
        for k, (i, j) in enumerate(pairs):
            Pm[:, k] = p_focal[open_] if k == focal else pair_p(Co[i], Co[j], Yo[open_])
        decided[open_] = (dz.adjust_rows(Pm, correction)[:, focal] < alpha) & (p_focal[open_] < cut)
    out[above] = decided
    return out


# --------------------------------------------------------------------------- questions
@dataclass(frozen=True)
class ItemQuestion:
    """One item-level grid task: a single within τ (``a`` None) or pair ``a`` above ``b`` of ``target``, at the
    ``sizes`` (systems, items) along one axis, smallest first, for every assumed effect. Power rises with systems
    and items, so once every simulated study of a size answers (power 1), the larger sizes of the axis are not
    simulated for that effect (their rows are absent; :func:`run_question`)."""

    target: str
    a: str | None
    b: str | None
    sizes: tuple[tuple[int, int], ...]
    effects: tuple[float, ...]
    reps: int
    alpha: float
    correction: str
    extra_family: int
    seed: int
    permutation: int  # the run's joint permutation count (above 7 systems)


def _rng(q: ItemQuestion, n: int, n_items: int, effect: float) -> np.random.Generator:
    key = zlib.crc32(f"item\0{q.target}\0{q.a}\0{q.b}".encode())
    return np.random.default_rng([q.seed, 3 if q.b else 2, key, n, n_items, int(round(effect * 1e6))])


def _chunks(reps: int, cells: int) -> list[int]:
    per = max(1, BLOCK // max(1, cells))
    return [min(per, reps - s) for s in range(0, reps, per)]


UNTESTED = "untested: both scales step-valued"


def tau_power(q: ItemQuestion, S: int, I: int, effect: float) -> tuple[float, float, str | None]:
    """(power, Monte Carlo se, note) of the single within τ at population within τ ``effect`` with S systems and I
    items. Only the within parts enter the test (centring removes system effects, an item effect is a constant
    within its item; the model's values are normal, so the normal scores change them little), so the power
    depends only on τ, the systems, the items and α."""
    if S < CROSSED_MIN_SYSTEMS:
        return 0.0, 0.0, "cannot reject"
    rho = _sin(effect)
    rng = _rng(q, S, I, effect)
    hits = 0
    for size in _chunks(q.reps, S * S * I):
        f = rng.standard_normal((size, S, I))
        e = rho * f + math.sqrt(1 - rho ** 2) * rng.standard_normal((size, S, I))
        hits += int((tau_p(centred(e), centred(f)) < _cut(q.alpha)).sum())
    p = hits / q.reps
    return p, math.sqrt(p * (1 - p) / q.reps), None


def _pair_loadings(fit: ItemFit, ia: int, ib: int, effect: float) -> tuple[np.ndarray, bool]:
    """The within loadings with metrics ia, ib at τ-bar ± effect/2 (their pilot mean τ-bar, shifted down where the
    upper one would exceed the model's largest); whether it had to shift."""
    top = 2 / math.pi * math.asin(dz.MAX_R)
    bar = (fit.taus[ia] + fit.taus[ib]) / 2
    ta = bar + effect / 2
    shifted = ta > top
    ta = min(ta, top)
    r = fit.loadings.copy()
    r[ia], r[ib] = _sin(ta), _sin(ta - effect)
    return r, shifted


def pair_power(fit: ItemFit, q: ItemQuestion, S: int, I: int, effect: float) -> tuple[float, float, str | None]:
    """(power, Monte Carlo se, note) of "a significantly above b" at population within Δτ ``effect``."""
    if S < CROSSED_MIN_SYSTEMS:
        return 0.0, 0.0, "cannot reject"
    ia, ib = fit.metrics.index(q.a), fit.metrics.index(q.b)
    r, shifted = _pair_loadings(fit, ia, ib, effect)
    rng = _rng(q, S, I, effect)
    hits = 0
    for size in _chunks(q.reps, S * I * (len(r) + 1)):
        X, Y = simulate_items(fit, r, S, I, size, rng)
        hits += int(pair_rejects(X, Y, ia, ib, q.alpha, q.correction, q.extra_family).sum())
    p = hits / q.reps
    return p, math.sqrt(p * (1 - p) / q.reps), "shifted" if shifted else None


def run_question(fits: Mapping[str, ItemFit], q: ItemQuestion) -> list[dict[str, Any]]:
    """The rows of one item-level task (per effect, each size up to the first where every study answered): the
    system level's fields, ``n_queries`` holding the number of items, plus ``"level": "item"`` and ``"items"``
    (the item kind)."""
    fit = fits[q.target]
    out = []
    for e in q.effects:
        for S, I in q.sizes:
            if q.b and {q.a, q.b} & set(fit.step_valued):  # the run does not test this pair
                p, se, note = 0.0, 0.0, UNTESTED
            else:
                p, se, note = pair_power(fit, q, S, I, e) if q.b else tau_power(q, S, I, e)
            row = {"target": q.target, "a": q.a, **({"b": q.b} if q.b else {}), "n_systems": S, "n_queries": I,
                   "effect": e, "power": p, "mc_se": se, "level": LEVEL, "items": fit.items}
            if note:
                row["note"] = note
            if q.b and note != UNTESTED:  # the assumed within correlations, where the pair's loadings made them invalid
                change = dz.corr_change(fit.metrics, _pair_loadings(fit, fit.metrics.index(q.a),
                                                                    fit.metrics.index(q.b), e)[0], fit.corr)
                if change is not None:
                    row["corr_change"] = change
            out.append(row)
            if p == 1.0:
                break
    return out


def plan(fits: Mapping[str, ItemFit], systems: Sequence[int], items: Sequence[int], effects: Sequence[float], *,
         pairs: str = "adjacent", reps: int = 400, alpha: float = 0.05, correction: str = "holm",
         extra_family: Mapping[str, int] | None = None, seed: int = RUN_SEED, permutation: int = 1000,
         metrics: Sequence[str] | None = None) -> list[ItemQuestion]:  # fmt: skip
    """Per target and question (the single within τ; the pilot's leading pair in its within ranking, or with
    ``pairs="all"`` every pair): one task along the systems (every size of ``systems`` at the pilot's items) and one
    along the items (every size of ``items`` at the pilot's systems)."""
    out = []
    for name, fit in fits.items():
        S, I = fit.n_systems, fit.n_items
        axes = [tuple((n, I) for n in sorted(set(systems))), tuple((S, i) for i in sorted(set(items)) if i != I)]
        chosen = [(a, b) for i, a in enumerate(fit.metrics) for b in fit.metrics[i + 1:]] if pairs == "all" \
            else list(zip(fit.metrics, fit.metrics[1:]))[:1]
        if metrics is not None:
            chosen = [(a, b) for a, b in chosen if a in metrics and b in metrics]
        extra = (extra_family or {}).get(name, 0)
        for sizes in axes:
            if not sizes:
                continue
            for a, b in [(None, None)] + chosen:
                out.append(ItemQuestion(name, a, b, sizes, tuple(effects), reps, alpha, correction, extra, seed,
                                        permutation))
    return out


def simulate(fits: Mapping[str, ItemFit], questions: Sequence[ItemQuestion],
             map: Callable[[Callable, list], list] | None = None) -> list[dict[str, Any]]:  # fmt: skip
    """Every task's rows, in task order (``map``: an executor's, or serial)."""
    run = map or (lambda f, xs: [f(x) for x in xs])
    return [row for rows in run(functools.partial(run_question, dict(fits)), list(questions)) for row in rows]


# --------------------------------------------------------------------------- a run as the pilot
@dataclass(frozen=True)
class ItemPilot:
    """A run's item level as a design pilot: fitted targets, the run's item-level test settings, notes."""

    fits: Mapping[str, ItemFit]
    alpha: float
    correction: str
    family: str
    permutation: int
    extra_family: Mapping[str, int]
    notes: tuple[str, ...]
    observed: Mapping[tuple[str, str, str], float] = field(default_factory=dict)  # the run's within Δτ per pair


def run_pilot(out: Any, results: Mapping[str, Any], targets: Sequence[str] | None = None) -> ItemPilot:
    """The pilot of a finished run's item level: its documents matrix (``item_documents.json``, checked against
    results.json; a :class:`~clir_eval.errors.UserError` naming the fix where there is none) with every document
    target (``targets``: only those), metrics oriented (lower-is-better negated), and the run's item-level settings.
    The queries' matrix (``item_queries.json``, a query's MT score the mean over its relevant documents) is tested
    by the run but not simulated here, so the queries' questions are not designed (a note says so)."""
    il = results.get("item_level") or {}
    d = read_documents_file(out, results)
    st = il.get("settings") or {}
    lower = set((results.get("score_kinds") or {}).get("lower_is_better", []))
    metrics = {m: (-v if m in lower else v) for m, v in d["metrics"].items()}
    method, variant = st.get("method", "kendall"), st.get("variant", "b")
    fits, notes = {}, []
    for y, Y in d["targets"].items():
        if targets is not None and y not in targets:
            continue
        fit = fit_items(metrics, y, Y, "documents", method, variant)
        if fit is None:
            notes.append(f"{y} over documents: too few systems, documents or metrics with a within-document τ to fit "
                         "the item-level model; not designed")
            continue
        fits[y] = fit
        notes += fit.notes
    family = str(st.get("family", "target"))
    verdicts = [v for v in il.get("verdicts") or [] if not v.get("same_as")]
    total = sum(len(v.get("pairwise") or []) for v in verdicts)
    extra = {}
    for y, fit in fits.items():
        own = next((len(v.get("pairwise") or []) for v in verdicts if v.get("items") == "documents"
                    and v.get("target") == y), len(fit.metrics) * (len(fit.metrics) - 1) // 2)
        extra[y] = max(0, total - own) if family == "all" else 0
    queries = (il.get("items") or {}).get("queries") or {}
    if queries.get("targets") and (targets is None or set(queries["targets"]) & set(targets)):
        notes.append("item level: the queries' questions are not designed (a query's MT score is the mean over its "
                     "relevant documents: the simulation fits the documents matrix only; the run's item_queries.json "
                     "is tested by the run, not simulated)")
    observed = {(v["target"], p["a"], p["b"]): p["delta"] for v in verdicts if v.get("items") == "documents"
                for p in v.get("pairwise") or [] if p.get("delta") is not None}
    return ItemPilot(fits, float(st.get("alpha", 0.05)), str(st.get("correction", "holm")), family,
                     int(st.get("permutation", 1000)), extra, tuple(notes), observed)


def default_level(results: Mapping[str, Any]) -> str:
    """``design``'s default --level: ``both`` where the run keeps its item level's documents matrix, else
    ``system`` (a run without an item level is designed exactly as before)."""
    il = results.get("item_level") or {}
    return "both" if item_targets(results) and il.get("documents_file") else "system"


def item_targets(results: Mapping[str, Any]) -> list[str]:
    """The document targets of a run's item level (empty without one)."""
    il = results.get("item_level") or {}
    return list(((il.get("items") or {}).get("documents") or {}).get("targets") or [])


def size_text(points: Sequence[tuple[int, float]], goal: float, unit: str) -> str:
    """"≤ N unit" / "≈ N unit" / "> N unit": the smallest size with power >= goal (:func:`.design.needed`)."""
    n = dz.needed(points, goal)
    if n is None:
        return f"> {max(s for s, _ in points)} {unit}"
    return f"{'≤' if n <= min(s for s, _ in points) else '≈'} {math.ceil(n)} {unit}"


def answers(rows: Sequence[Mapping[str, Any]], fits: Mapping[str, ItemFit], goal: float,
            observed: Mapping[tuple[str, str, str], float] | None = None) -> list[str]:  # fmt: skip
    """Per item-level question (per target the single within τ and the pilot's leading pair): a line with, per
    assumed effect, the systems needed at the pilot's items and the power at the pilot's size (and the run's
    observed within Δτ of the pair, an estimate, not the effect planned for); a line with the items needed at the
    pilot's systems."""
    out = []
    for name, fit in fits.items():
        S, I, unit = fit.n_systems, fit.n_items, fit.items
        one = {"documents": "document", "queries": "query"}.get(unit, "item")
        questions = [(None, f"within-{one} τ(metric, {name}) significant", "τ")]
        if len(fit.metrics) > 1:
            questions.append(((fit.metrics[0], fit.metrics[1]),
                              f"{fit.metrics[0]} significantly above {fit.metrics[1]} (within-{one} τ)", "Δτ"))
        for pair, what, sym in questions:
            mine = [r for r in rows if r["target"] == name and (("b" not in r) if pair is None
                                                                else (r["a"], r.get("b")) == pair)]
            if not mine:
                continue
            parts, i_parts = [], []
            for e in dict.fromkeys(r["effect"] for r in mine):
                along = sorted((r["n_systems"], r["power"]) for r in mine if r["effect"] == e and r["n_queries"] == I)
                here = next((r for r in mine if r["effect"] == e and (r["n_systems"], r["n_queries"]) == (S, I)), None)
                full = next((n for n, p in along if p == 1.0), None)
                tail = (f" (power here {here['power']:.2f})" if here else
                        f" (power 1.00 from {full} systems on)" if full is not None and full < S else "")
                if along:
                    parts.append(f"{sym}={e:g}: {size_text(along, goal, 'systems')}{tail}")
                items_along = sorted((r["n_queries"], r["power"]) for r in mine if r["effect"] == e
                                     and r["n_systems"] == S)
                if items_along:
                    i_parts.append(f"{sym}={e:g}: {size_text(items_along, goal, unit)}")
            seen = (observed or {}).get((name, *pair)) if pair else None
            if parts:
                out.append(f"{name} over {unit}: {what} with {goal:.0%} power at {I} {unit}: " + "; ".join(parts)
                           + (f" [observed within Δτ {seen:+.3f}]" if seen is not None else ""))
            if i_parts:
                out.append(f"{name} over {unit}: {what} at {S} systems: " + "; ".join(i_parts))
    return out


def analyse(pilot: ItemPilot, systems: Sequence[int], items: Sequence[int], effects: Sequence[float], *, pairs: str,
            reps: int, seed: int, goal: float, map: Callable[[Callable, list], list] | None = None
            ) -> dict[str, Any]:  # fmt: skip
    """The item-level part of ``clir-eval design``: rows, one-line answers, notes and the fitted models (for
    design.json). ``systems``/``items`` empty: 6 sizes around the pilot's (x0.5 to x3). ``map(function, tasks)``
    runs the grid's tasks (an executor's, with a progress bar; serial when None)."""
    rows: list[dict[str, Any]] = []
    fits = pilot.fits
    if fits:
        some = next(iter(fits.values()))
        n_sys = list(systems) or dz.default_sizes(some.n_systems, 3)
        n_items = list(items) or dz.default_sizes(some.n_items, 3)
        questions = plan(fits, n_sys, n_items, effects, pairs=pairs, reps=reps, alpha=pilot.alpha,
                         correction=pilot.correction, extra_family=pilot.extra_family, seed=seed,
                         permutation=pilot.permutation)
        rows = simulate(fits, questions, map)
    notes = list(pilot.notes)
    if any(r.get("note") == "cannot reject" for r in rows):
        notes.append(f"item level: power 0 where the run's test cannot reject at that size (the crossed tests need "
                     f"{CROSSED_MIN_SYSTEMS} systems)")
    changed = [r for r in rows if r.get("corr_change")]
    if changed:
        w = max(changed, key=lambda r: r["corr_change"]["max_change"])
        notes.append(f"item level: {len({(r['target'], r['a'], r['b'], r['effect']) for r in changed})} pair "
                     "question(s): the assumed Δτ's within loadings do not fit the pilot's within-item correlations "
                     "between the metrics (not a valid correlation matrix); the nearest valid one is simulated (each "
                     "row's corr_change): " + dz.change_text(w["corr_change"]) + f", at {w['target']}: {w['a']} above "
                     f"{w['b']}, Δτ {w['effect']:g}")
    if any(r.get("note") == "shifted" for r in rows):
        notes.append("item level: some pairs' assumed Δτ do not fit around the pair's pilot within τ; both shifted "
                     "down by the excess")
    if rows:
        notes.append("item level: along each axis, sizes larger than one where every simulated study answered "
                     "(power 1.00) are not simulated (power only grows with systems and items); item counts are of "
                     "items whose target varies across the systems (the items the run's tests use)")
    # a single τ's power is every metric's (it depends only on τ and the size): one row per metric, as the system
    # level; 0 for a metric that the run does not test against this target (both scales step-valued)
    shown = [dict(r, a=m) if m not in fits[r["target"]].step_valued or "b" in r
             else dict(r, a=m, power=0.0, mc_se=0.0, note=UNTESTED)
             for r in rows for m in (fits[r["target"]].metrics if "b" not in r else [r["a"]])]
    notes += [f"item level: power 0 for {', '.join(f.step_valued)} against {n} (single τ and every pair with it): "
              f"in the pilot both scales are step-valued (each at most {DISCRETE_LEVELS} distinct values), where system-centring "
              "cannot remove overall quality, so the run reports that within τ as descriptive, untested"
              for n, f in fits.items() if f.step_valued]
    return {"rows": shown, "answers": answers(rows, fits, goal, pilot.observed), "notes": notes,
            "settings": {"alpha": pilot.alpha, "correction": pilot.correction, "family": pilot.family,
                         "permutation": pilot.permutation, "method": METHOD},
            "fits": {n: {"items": f.items, "n_systems": f.n_systems, "n_items": f.n_items, "ranking": list(f.metrics),
                         "within_taus": dict(zip(f.metrics, f.taus)), "variances": dict(f.variances)}
                     for n, f in fits.items()}}


def table_pilot(systems: Sequence[str], items: Sequence[str], sys_index: np.ndarray, item_index: np.ndarray,
                x: Mapping[str, np.ndarray], y: str, y_values: np.ndarray, *, permutation: int = 1000,
                alpha: float = 0.05) -> ItemPilot:  # fmt: skip
    """The pilot of a score table with one row per system and item (``design --table --level item``): per-item MT
    scores ``x`` (name -> value per row, oriented higher = better) and the target ``y``, as systems x items
    matrices (a missing row: NaN), with the run's default item-level settings (Holm over the target's pairs)."""
    S, I = len(systems), len(items)

    def matrix(v: np.ndarray) -> np.ndarray:
        m = np.full((S, I), np.nan)
        m[sys_index, item_index] = v
        return m

    fit = fit_items({m: matrix(v) for m, v in x.items()}, y, matrix(y_values), "items")
    fits = {y: fit} if fit is not None else {}
    notes = [] if fit is not None else [f"{y} over items: too few systems, items (with a target that varies across "
                                        "the systems) or metrics to fit the item-level model; not designed"]
    observed = {(y, a, b): fit.taus[i] - fit.taus[j] for i, a in enumerate(fit.metrics)
                for j, b in enumerate(fit.metrics) if i < j} if fit is not None else {}
    return ItemPilot(fits, alpha, "holm", "target", permutation, {y: 0}, tuple(notes + list(fit.notes if fit else [])),
                     observed)
