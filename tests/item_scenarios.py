"""Null scenarios of the item-level tests (crossed systems x items) and their generator, shared by
tests/test_item_within_null.py and scripts/sim_item_within.py.

Every scenario builds each metric and the target from latent scores on the model of docs/statistics.md, "Item level":

    metric  L_X[s, i] = a[s] + b[i] + e[s, i]        target  L_Y[s, i] = c[s] + d[i] + f[s, i]

a, c the systems' overall qualities (corr ``rho_sys``; 0.8 by default, which must not count for ``within``), b, d
the items' difficulties (corr 0.7), e, f the within-item parts (corr ``rho``: 0 under the null). The scenarios:

- ``additive``: as above, continuous;
- ``system slope``: the metric's within part is β[s]·f + e, β[s] ~ N(0, 0.7²): the association varies by system
  around 0;
- ``item slope``: γ[i]·f + e, γ[i] ~ N(0, 0.7²): it varies by item around 0;
- ``multiplicative``: X = a[s]·l[i] + b[i] + e, Y = c[s]·m[i] + d[i] + f with independent item loadings l, m
  ~ N(0, 1): a system's quality acts per item with a sign that the metric and the target do not share;
- ``noise scale``: e and f multiplied by σ[s] = exp(0.5·N(0, 1)), the same for the metric and the target;
- ``bounded vs RR``: X = 100·Φ(L_X), Y = the reciprocal rank 1/r, r = 1 + ⌊exp(1 − 1.2·L_Y)⌋, 0 beyond rank 100;
- ``P@10 both``: X = round(10·Φ(L_X))/10, Y = round(10·Φ(L_Y))/10 (0..1 in steps of 0.1);
- ``BLEU floor vs RR``: X = max(0, 10 + 10·L_X) (a floor at 0 for about 16% of the cells), Y as ``bounded vs RR``.

The power scenario is ``additive`` with ρ = 0.3 (true within-item correlation of the latent parts)."""

from __future__ import annotations

import math

import numpy as np

SCENARIOS = ("additive", "system slope", "item slope", "multiplicative", "noise scale", "bounded vs RR", "P@10 both",
             "BLEU floor vs RR")
CONTINUOUS = SCENARIOS[:5]


def _ndtr(v: np.ndarray) -> np.ndarray:
    from scipy.special import ndtr

    return ndtr(v)


def reciprocal_rank(L: np.ndarray) -> np.ndarray:
    rank = 1 + np.floor(np.exp(1.0 - 1.2 * L))
    return np.where(rank <= 100, 1 / rank, 0.0)


def generate(rng: np.random.Generator, S: int, I: int, scenario: str, n_metrics: int = 1, rho: float = 0.0,
             rho_sys: float = 0.8) -> tuple[list[np.ndarray], np.ndarray]:  # fmt: skip
    """``n_metrics`` metric matrices and one target (systems x items) of ``scenario``; every metric has its own
    system, item and within parts (each metric related to the target alike: by ``rho_sys`` and ``rho``)."""
    c, d = rng.normal(size=S), rng.normal(size=I)
    f = rng.normal(size=(S, I))
    sigma = np.exp(0.5 * rng.normal(size=(S, 1))) if scenario == "noise scale" else 1.0
    m_load = rng.normal(size=I)
    LY = (c[:, None] * m_load[None] if scenario == "multiplicative" else c[:, None]) + d[None] + sigma * f
    Xs = []
    for _ in range(n_metrics):
        a = rho_sys * c + math.sqrt(1 - rho_sys ** 2) * rng.normal(size=S)
        b = 0.7 * d + math.sqrt(0.51) * rng.normal(size=I)
        e = rho * f + math.sqrt(1 - rho ** 2) * rng.normal(size=(S, I))
        if scenario == "system slope":
            e = e + rng.normal(0, 0.7, size=(S, 1)) * f
        elif scenario == "item slope":
            e = e + rng.normal(0, 0.7, size=(1, I)) * f
        sys_part = a[:, None] * rng.normal(size=I)[None] if scenario == "multiplicative" else a[:, None]
        Xs.append(sys_part + b[None] + sigma * e)
    if scenario == "bounded vs RR":
        return [100 * _ndtr(X) for X in Xs], reciprocal_rank(LY)
    if scenario == "P@10 both":
        return [np.round(10 * _ndtr(X)) / 10 for X in Xs], np.round(10 * _ndtr(LY)) / 10
    if scenario == "BLEU floor vs RR":
        return [np.maximum(0.0, 10 + 10 * X) for X in Xs], reciprocal_rank(LY)
    if scenario not in CONTINUOUS:
        raise ValueError(f"unknown scenario {scenario!r}")
    return Xs, LY


def rate(hits: int, n: int) -> str:
    p = hits / n
    return f"{p:.3f} ± {math.sqrt(p * (1 - p) / n):.3f}"
