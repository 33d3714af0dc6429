"""CLIR thresholds (after Kocmi et al. 2024, "Navigating the Metrics Maze", and their MT-Thresholds
tool, which does this for human judgements): for every pair of systems within a run, does the
MT metric's sign agree with the retrieval target's?

- Pairs: every pair of systems as the run lists them (a scored reference is a system), on the
  runs' full-precision scores (not a ``correlation.round``); pairs tied on the target are left
  out; a metric tie counts as a disagreement. Accuracy = agreeing pairs / pairs.
- Fit: each pair oriented so that the metric delta Δ ≥ 0, y = 1 when the target improves in that
  orientation; P(y = 1 | Δ) = 1 / (1 + exp(-βΔ)) by maximum likelihood (no intercept: a zero
  delta says nothing, P = .5; this is the fit on both orientations of every pair). The delta
  needed for accuracy p is logit(p)/β, reported when β > 0 and it lies within the largest
  observed delta ("not reached" otherwise: null).
- CIs: bootstrap over systems (within each run, systems drawn with replacement; a drawn pair of
  distinct systems counts once per copy of each, copies of one system are tied and left out).
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from ..io.raster import BLACK, WHITE, Canvas
from ..limits import RUN_SEED
from ..report.svg import CYCLE, nice_ticks, tick_text
from .runs import Run

LEVELS = (0.8, 0.9, 0.95)
NEWTON_STEPS = 60
SCALE_RATIO = 10  # a metric whose largest |score| differs this much between runs is on different scales
UNIT_SPAN = 2.0  # ... as is one whose scores stay within ±1 in one run (0-1) and pass ±2 in another (0-100)
BETA_MAX = 1e12
PLOT_AREA = (64.0, 32.0, 620.8, 352.0)  # left, top, right, bottom of the plots' data area, in pixels


def pair_deltas(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Every pair i < j of the given order with both values: (i, j, metric delta x_j - x_i,
    target delta y_j - y_i), pairs tied on the target left out."""
    ok = np.flatnonzero(~(np.isnan(x) | np.isnan(y)))
    i, j = np.triu_indices(len(ok), k=1)
    i, j = ok[i], ok[j]
    dx, dy = x[j] - x[i], y[j] - y[i]
    keep = dy != 0
    return i[keep], j[keep], dx[keep], dy[keep]


def accuracy(dx: np.ndarray, dy: np.ndarray, w: np.ndarray | None = None) -> float | None:
    """Share of (weighted) pairs whose metric delta has the target delta's sign (metric ties disagree)."""
    agree = (np.sign(dx) == np.sign(dy)) & (dx != 0)
    if w is None:
        return float(agree.mean()) if len(agree) else None
    tot = w.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (w * agree).sum(axis=-1) / tot  # type: ignore[return-value]


def oriented(dx: np.ndarray, dy: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(|Δ|, y): y = 1 when the target moves the metric's way (Δ = 0: y = 1 when the target rises)."""
    s = np.where(dx < 0, -1.0, 1.0)
    return np.abs(dx), (s * dy > 0).astype(float)


def fit_beta(x: np.ndarray, y: np.ndarray, w: np.ndarray | None = None, start: float = 0.0) -> np.ndarray:
    """Maximum-likelihood slope of P(y=1|x) = 1/(1+exp(-βx)) for each row of pair weights ``w``
    (k, pairs) (one fit when None): Newton's method from β = ``start`` (0, or the fit on all pairs for
    bootstrap rows), the log-likelihood being concave;
    +inf where no pair with x > 0 has y = 0 (separated: no finite maximum), -inf where none has y = 1.

    Speed: the first step, where every row is at ``start``, is two matrix-vector products of the weights;
    later steps visit only the pairs each row weighs (a bootstrap row weighs about 40% of them), one
    contiguous segment per row (sums by ``np.add.reduceat``), and each step only the rows still moving: a row's
    sums depend only on its own segment, so dropping a converged row changes no other row's bits."""
    W = np.ones((1, len(x))) if w is None else np.atleast_2d(np.asarray(w, float))
    pos = (x > 0)
    n1 = W[:, pos & (y == 1)].sum(axis=1)  # weights are whole numbers: these sums are exact (and need no BLAS)
    n0 = W[:, pos & (y == 0)].sum(axis=1)
    scale = float(np.max(x)) if len(x) and np.max(x) > 0 else 1.0
    xs = x / scale  # fit on a unit scale, report in the metric's units
    k = len(W)
    beta = np.full(k, start * scale if math.isfinite(start) else 0.0)
    live = np.flatnonzero((n0 > 0) & (n1 > 0))
    moving = np.zeros(k, bool)
    moving[live] = True
    Wl = W if len(live) == k else W[live]
    if len(live):  # the first step: every row at the same β, so the sums are matrix-vector products
        p0 = _expit(beta[0] * xs)
        g = Wl @ (xs * (y - p0))
        h = Wl @ (xs * xs * p0 * (1 - p0))
        _newton(beta, moving, live, g, h)
    nz = Wl != 0
    cnt = np.count_nonzero(nz, axis=1)
    flat = np.flatnonzero(nz)  # row by row, so each row's entries are one segment
    del nz
    cols = flat % max(1, Wl.shape[1])
    xc = xs[cols]
    wx = Wl.ravel()[flat] * xc
    del flat
    wxx = wx * xc
    g0 = np.add.reduceat(wx * y[cols], np.cumsum(cnt) - cnt) if len(wx) else np.zeros(len(live))
    del cols
    act = live
    for _ in range(NEWTON_STEPS - 1):
        keep_rows = moving[act]
        if not keep_rows.any() or not len(xc):
            break
        if not keep_rows.all():  # drop the settled rows' entries
            keep = np.repeat(keep_rows, cnt)
            act, cnt, g0 = act[keep_rows], cnt[keep_rows], g0[keep_rows]
            xc, wx, wxx = xc[keep], wx[keep], wxx[keep]
        starts = np.cumsum(cnt) - cnt
        p = _expit_inplace(np.repeat(beta[act], cnt) * xc)
        g = g0 - np.add.reduceat(wx * p, starts)
        p *= np.subtract(1, p)
        p *= wxx
        _newton(beta, moving, act, g, np.add.reduceat(p, starts))
    beta = beta / scale
    beta = np.where(n0 == 0, np.where(n1 > 0, np.inf, 0.0), beta)
    beta = np.where((n1 == 0) & (n0 > 0), -np.inf, beta)
    return beta if w is not None else beta[:1]


def _expit(z: np.ndarray) -> np.ndarray:
    """The logistic function as 1/2 + tanh(z/2)/2 (within 2.3e-16 of lazylibs.scipy_special().expit, about twice as fast)."""
    return 0.5 + 0.5 * np.tanh(0.5 * z)


def _expit_inplace(z: np.ndarray) -> np.ndarray:
    """:func:`_expit` of a new array ``z``, computed in its place (the same operations in the same order)."""
    z *= 0.5
    np.tanh(z, out=z)
    z *= 0.5
    z += 0.5
    return z


def _newton(beta: np.ndarray, moving: np.ndarray, idx: np.ndarray, g: np.ndarray, h: np.ndarray) -> None:
    """One damped Newton step of the rows ``idx`` still moving (score ``g``, information ``h``), in place;
    a row stops moving when its step is below 1e-9 of its β (at least 1e-9)."""
    mv = moving[idx]
    with np.errstate(invalid="ignore", divide="ignore"):
        step = np.where(mv & (h > 0), g / h, 0.0)
    step = np.minimum(np.maximum(step, -5.0), 5.0)  # damped: far from the optimum p(1-p) is tiny
    beta[idx] += step
    moving[idx] = mv & (np.abs(step) >= 1e-9 * np.maximum(1.0, np.abs(beta[idx])))


def delta_at(beta: float, p: float) -> float | None:
    """The delta at which the fit reaches accuracy p; None when it never does (β ≤ 0) or when the fit is
    degenerate (β = +inf, perfect separation: every delta observed reaches it, so it is below the smallest one)."""
    if not beta > 0 or math.isinf(beta):
        return None
    return math.log(p / (1 - p)) / beta


def _counts(n: int, k: int, rng: np.random.Generator) -> np.ndarray:
    idx = rng.integers(0, n, (k, n))
    return np.stack([np.bincount(row, minlength=n) for row in idx]).astype(float)


def _row(metric: str, target: str, dx: np.ndarray, dy: np.ndarray, W: np.ndarray | None, level: float = 0.95
         ) -> dict[str, Any]:  # fmt: skip
    x, y = oriented(dx, dy)
    acc = accuracy(dx, dy)
    beta = float(fit_beta(x, y)[0]) if len(x) else float("nan")
    max_d = float(np.max(x)) if len(x) else None
    row: dict[str, Any] = {"metric": metric, "target": target, "n_pairs": int(len(dx)), "accuracy": acc,
                           "beta": beta if math.isfinite(beta) else (None if math.isnan(beta) else
                                                                     ("inf" if beta > 0 else "-inf")),
                           "max_delta": max_d, "delta_at": {}, "delta_at_fit": {},
                           "delta_at_ci": {f"{p:g}": [None, None] for p in LEVELS}, "accuracy_ci": [None, None]}
    if beta == math.inf:  # perfect separation: the smallest delta already agrees; no finite threshold
        pos = x[x > 0]
        row["fit"] = "separated"
        row["min_delta"] = float(np.min(pos)) if len(pos) else None
    for p in LEVELS:
        d = delta_at(beta, p) if len(x) else None
        row["delta_at_fit"][f"{p:g}"] = d
        row["delta_at"][f"{p:g}"] = d if (d is not None and max_d is not None and d <= max_d) else None
    if W is not None and len(x):
        tail = (1 - level) / 2 * 100
        accs = accuracy(dx, dy, W)
        accs = np.asarray(accs)[~np.isnan(accs)]
        if len(accs):
            row["accuracy_ci"] = [float(v) for v in np.percentile(accs, [tail, 100 - tail])]
        betas = fit_beta(x, y, W, start=beta if math.isfinite(beta) else 0.0)
        for p in LEVELS if "fit" not in row else ():  # a separated fit has no interval either
            with np.errstate(divide="ignore", invalid="ignore"):
                ds = np.where(betas > 0, math.log(p / (1 - p)) / betas, np.inf)
            ds = ds[~np.isnan(ds)]
            lo, hi = _percentiles(ds, tail) if len(ds) else (np.nan, np.nan)
            row["delta_at_ci"][f"{p:g}"] = [float(lo) if np.isfinite(lo) else None,
                                            float(hi) if np.isfinite(hi) else None]
    return row


def _percentiles(vals: np.ndarray, tail: float) -> tuple[float, float]:
    """numpy's default (linear) percentiles of values that may hold +inf: a percentile that
    interpolates towards +inf is +inf (unbounded)."""
    fin = vals[np.isfinite(vals)]
    top = float(fin.max()) if len(fin) else 0.0
    big = np.where(np.isfinite(vals), vals, np.finfo(float).max / 4)
    lo, hi = np.percentile(big, [tail, 100 - tail])
    return (float(lo) if lo <= top else np.inf), (float(hi) if hi <= top else np.inf)


def threshold_rows(runs: Sequence[Run], bootstrap: int = 1000, seed: int = RUN_SEED, plots: bool = False
                   ) -> tuple[list[dict[str, Any]], list[str], dict[str, bytes]]:  # fmt: skip
    """Per run and pooled threshold rows (pooled rows have no "run"), notes, and one PNG per metric."""
    rows: list[dict[str, Any]] = []
    notes: list[str] = []
    counts = [_counts(len(r.systems), bootstrap, np.random.default_rng([seed, i])) for i, r in enumerate(runs)]
    pooled: dict[tuple[str, str], list] = {}
    last = _LastWeights()
    scale: dict[str, dict[str, float]] = {}
    for r, C in zip(runs, counts):
        for t in r.targets:
            y = r.column(t, raw=True)
            for m in r.kinds.get("mt", []):
                if m not in r.taus.get(t, {}):
                    continue
                x = (-1.0 if m in r.lower else 1.0) * r.column(m, raw=True)
                i, j, dx, dy = pair_deltas(x, y)
                row = _row(m, t, dx, dy, last.get(C, i, j))
                rows.append({"run": r.path, **row})
                pooled.setdefault((m, t), []).append((dx, dy, C, i, j))  # weights made again when pooled
                vals = np.abs(x[~np.isnan(x)])
                if len(vals):
                    scale.setdefault(m, {})[r.path] = float(np.max(vals))
    out = []
    for (m, t), parts in pooled.items():
        dx = np.concatenate([p[0] for p in parts])
        dy = np.concatenate([p[1] for p in parts])
        row = _row(m, t, dx, dy, last.get(*[x for _, _, C, i, j in parts for x in (C, i, j)]))
        row["n_tasks"] = len(parts)
        out.append(row)
    mixed = set()
    for m, by_run in scale.items():
        vals = [v for v in by_run.values() if v > 0]
        if len(vals) > 1 and _scales_differ(vals):
            mixed.add(m)
            hi = max(by_run, key=by_run.get)  # type: ignore[arg-type]
            lo = min(by_run, key=by_run.get)  # type: ignore[arg-type]
            names = [r.name for r in runs]
            lab = {r.path: (r.name if names.count(r.name) == 1 else r.path) for r in runs}
            notes.append(f"thresholds: {m}'s scales differ between runs (largest |score| {by_run[hi]:.3g} in {lab[hi]}, "
                         f"{by_run[lo]:.3g} in {lab[lo]}); its deltas are in each run's own units, so its pooled rows give "
                         "accuracy only (no deltas, \"units\": \"mixed\" where the runs pooled differ): read the "
                         "per-run rows")
    for row in out:
        m = row["metric"]
        pooled_runs = [r.path for r in runs if (m, row["target"]) in pooled and m in r.kinds.get("mt", [])
                       and row["target"] in r.targets]
        vals = [scale.get(m, {}).get(p, 0) for p in pooled_runs]
        vals = [v for v in vals if v > 0]
        if m in mixed and len(vals) > 1 and _scales_differ(vals):
            row["units"] = "mixed"
            for key in ("delta_at", "delta_at_fit"):
                row[key] = {k: None for k in row[key]}
            row["delta_at_ci"] = {k: [None, None] for k in row["delta_at_ci"]}
            row["beta"] = None
    for row in out:
        if row.get("fit") == "separated":
            notes.append(f"thresholds: {row['metric']} / {row['target']} (pooled): the fit is degenerate (perfect "
                         "separation: every pair the metric separates agrees with retrieval), so no Δ80/90/95 or its "
                         f"interval is estimated; the smallest observed difference, {row['min_delta']:.3g}, already "
                         "agrees: any threshold lies below it")
    notes.append("thresholds: pairs tied on the target are left out; a metric tie counts as a disagreement")
    figs = _plots(out, pooled) if plots else {}
    return out + rows, notes, figs


class _LastWeights:
    """The bootstrap pair weights ``C[:, i] * C[:, j]`` (runs' parts side by side) of the last call, given again
    while the same runs' pairs are asked for (a run's metrics usually share their target's pairs); one held at a
    time, as the weights of every row would not fit in memory."""

    def __init__(self) -> None:
        self.key: tuple = ()
        self.weights: np.ndarray | None = None

    def get(self, *parts: Any) -> np.ndarray:
        """The weights of ``parts``: C, i, j, C, i, j, ... (each run's counts and pairs)."""
        key = tuple(id(p) if k % 3 == 0 else p.tobytes() for k, p in enumerate(parts))
        if key != self.key or self.weights is None:
            self.key, self.weights = (), None  # the previous weights go before the next are made
            trips = [parts[k:k + 3] for k in range(0, len(parts), 3)]
            self.weights = np.concatenate([C[:, i] * C[:, j] for C, i, j in trips], axis=1)
            self.key = key
        return self.weights


def _scales_differ(vals: Sequence[float]) -> bool:
    """Whether a metric's largest |score| in each run (``vals``, > 0) says the runs use different units: they differ
    more than :data:`SCALE_RATIO` times, or one run's scores all lie within ±1 (a 0-1 scale) while another's reach
    past ±:data:`UNIT_SPAN` (a 0-100 scale), whatever the ratio."""
    lo, hi = min(vals), max(vals)
    return hi / lo > SCALE_RATIO or (lo <= 1.0 and hi > UNIT_SPAN)


def _plots(pooled_rows: list[dict[str, Any]], pooled: dict) -> dict[str, bytes]:
    """One PNG per metric: per target, the pooled pairs' accuracy in bins of the metric delta
    (dots, size = pairs) and the fitted curve, with 80/90/95% lines (as MT-Thresholds' plots)."""
    by_metric: dict[str, list[dict[str, Any]]] = {}
    for row in pooled_rows:
        by_metric.setdefault(row["metric"], []).append(row)
    return {m: _plot(m, rows, pooled) for m, rows in by_metric.items()}


def _plot(m: str, rows: list[dict[str, Any]], pooled: dict) -> bytes:
    """One metric's figure (:func:`_plots`), 640 x 400 pixels at 100 dpi."""
    c = Canvas(640, 400, dpi=100)
    left, top, right, bottom = PLOT_AREA
    series = []  # (colour, legend label, dots (x, share, pairs) or None, fitted β or None, largest delta)
    for k, row in enumerate(rows):
        dx = np.concatenate([p[0] for p in pooled[(m, row["target"])]])
        dy = np.concatenate([p[1] for p in pooled[(m, row["target"])]])
        x, y = oriented(dx, dy)
        if not len(x):
            continue
        colour = CYCLE[k % len(CYCLE)]
        if row.get("units") == "mixed":
            series.append((colour, f"{row['target']}: units differ between runs (see per-run rows)", None, None, 0.0))
            continue
        dots = None
        edges = np.unique(np.quantile(x, np.linspace(0, 1, 9)))
        if len(edges) > 1:
            b = np.clip(np.searchsorted(edges, x, side="right") - 1, 0, len(edges) - 2)
            sels = [sel for sel in (b == bi for bi in range(len(edges) - 1)) if sel.any()]
            dots = [(x[sel].mean(), float(((x[sel] > 0) & (y[sel] == 1)).mean()), int(sel.sum())) for sel in sels]
        beta = row["beta"]
        fit = beta if isinstance(beta, float) and math.isfinite(beta) else None
        label = (f"{row['target']} (accuracy {row['accuracy']:.2f}, {row['n_pairs']} pairs)" if fit is not None
                 else f"{row['target']} (no finite fit)")
        series.append((colour, label, dots, fit, float(x.max())))
    hi = max([s[4] for s in series] + [0.0]) or 1.0
    lo, hi = -0.05 * hi, 1.05 * hi  # the data's range with 5% margins, as matplotlib's autoscale

    def sx(v):
        return left + (np.asarray(v, float) - lo) / (hi - lo) * (right - left)

    def sy(v):
        return bottom - np.asarray(v, float) / 1.02 * (bottom - top)

    for p in LEVELS:
        c.hline(float(sy(p)), left, right, (0.5, 0.5, 0.5), dotted=True)
    area = (left, top, right, bottom)
    for colour, _, dots, _, _ in series:
        for dxm, share, n in dots or ():
            c.disc(float(sx(dxm)), float(sy(share)), c.px(math.sqrt(10 + 8 * math.sqrt(n)) / 2), colour, alpha=0.6)
    for colour, _, _, fit, xmax in series:
        if fit is not None:
            grid = np.linspace(0, xmax, 200)
            c.polyline(np.c_[sx(grid), sy(1 / (1 + np.exp(-fit * grid)))], colour, c.px(1.5), clip=area)
    _frame(c, sx, sy, lo, hi, m)
    _legend(c, [(colour, label) for colour, label, *_ in series])
    return c.png()


def _frame(c: Canvas, sx, sy, lo: float, hi: float, m: str) -> None:
    """The plot area's box, ticks and labels, the axis labels and the title."""
    left, top, right, bottom = PLOT_AREA
    for x0, y0, x1, y1 in ((left, top, right, top + 1), (left, bottom, right, bottom + 1), (left, top, left + 1, bottom + 1),
                           (right, top, right + 1, bottom + 1)):
        c.rect(x0 - 0.5, y0 - 0.5, x1 - 0.5, y1 - 0.5, BLACK)
    tick, pad = c.px(3.5), c.px(3.5)
    xt = [v for v in nice_ticks(lo, hi, 10) if lo <= v <= hi]
    for v in xt:
        x = float(sx(v))
        c.rect(x - 0.5, bottom, x + 0.5, bottom + tick, BLACK)
        c.text(x, bottom + tick + pad, tick_text(v, xt), 10, ha="center", va="top")
    yt = [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
    for v in yt:
        y = float(sy(v))
        c.rect(left - tick, y - 0.5, left, y + 0.5, BLACK)
        c.text(left - tick - pad, y, tick_text(v, yt), 10, ha="right", va="center")
    c.text((left + right) / 2, 393, f"{m} delta between two systems (metric units)", 10, ha="center")
    c.text(19, (top + bottom) / 2, "share of pairs where retrieval agrees", 10, ha="center", vertical=True)
    c.text((left + right) / 2, top - c.px(6), f"{m}: does a better score mean better retrieval? (pooled)", 12,
           ha="center")


def _legend(c: Canvas, entries: list[tuple[str, str]]) -> None:
    """matplotlib's legend, lower right, 7 points: a line of each series' colour and its label."""
    if not entries:
        return
    left, top, right, bottom = PLOT_AREA
    em = c.px(7)
    width = max(c.text_extent(label, 7)[0] for _, label in entries)
    row, gap, pad = 1.164 * em, 0.5 * em, 0.4 * em
    w = 2 * pad + 2.0 * em + 0.8 * em + width
    h = 2 * pad + len(entries) * row + (len(entries) - 1) * gap
    x1, y1 = right - 0.5 * em, bottom - 0.5 * em
    x0, y0 = x1 - w, y1 - h
    c.rect(x0, y0, x1, y1, WHITE, alpha=0.8)
    for a, b, d, e in ((x0, y0, x1, y0 + 1), (x0, y1 - 1, x1, y1), (x0, y0, x0 + 1, y1), (x1 - 1, y0, x1, y1)):
        c.rect(a, b, d, e, (0.8, 0.8, 0.8))
    for i, (colour, label) in enumerate(entries):
        mid = y0 + pad + i * (row + gap) + row / 2
        c.rect(x0 + pad, round(mid) - 1, x0 + pad + 2.0 * em, round(mid) + 1, colour)  # two pixel rows (1.5 points)
        c.text(x0 + pad + 2.8 * em, mid, label, 7, va="center")
