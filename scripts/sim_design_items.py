"""Calibration of item-level study design (``clir-eval design --level item``) against fresh studies from a known
crossed model: pilots drawn from the model are fitted (:func:`clir_eval.correlation.design_items.fit_items`), the
power they predict for the model's true within-item effect is compared with the share of fresh studies from the
model itself that the run's item-level tests answer (the vectorised tests of ``design_items``, which
tests/test_design_items.py checks equal to the run's functions in ``correlation/items.py``).

    python scripts/sim_design_items.py [--pilots 8] [--reps 400] [--fresh 1000]

The generator (:func:`known_model`) is the test suite's; it is written independently of ``simulate_items``: every
variable is system effect + item effect + within part, explicitly.
"""

from __future__ import annotations

import argparse
import math

import numpy as np

# the known model: 4 metrics and a target
R_WITHIN = (0.12, 0.04, 0.03, 0.0)  # correlation of each metric's within part with the target's
RHO_METRICS = 0.5  # the metrics' within parts' correlation beyond the target
SD_ITEM = (1.0, 0.6, 1.4, 0.8, 1.5)  # item effects' sd (metrics, target) relative to within sd 1
RHO_ITEM = 0.6  # the metrics' item effects' correlation (the target's independent)
SD_SYSTEM = (2.0, 1.5, 1.0, 0.5, 1.0)
RHO_SYSTEM = 0.7


def true_tau(i: int) -> float:
    return 2 / math.pi * math.asin(R_WITHIN[i])


def known_model(S: int, I: int, reps: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(metrics (reps, S, I, 4), target (reps, S, I)) from the known crossed model."""
    M = len(R_WITHIN)
    r = np.array(R_WITHIN)
    # within: target f; metric m = r_m f + sqrt(1 - r_m^2) (common g sqrt(RHO) + own sqrt(1 - RHO))
    f = rng.standard_normal((reps, S, I))
    g = rng.standard_normal((reps, S, I, 1))
    own = rng.standard_normal((reps, S, I, M))
    within = f[..., None] * r + np.sqrt(1 - r ** 2) * (math.sqrt(RHO_METRICS) * g + math.sqrt(1 - RHO_METRICS) * own)
    ci = rng.standard_normal((reps, 1, I, 1))
    item = (math.sqrt(RHO_ITEM) * ci + math.sqrt(1 - RHO_ITEM) * rng.standard_normal((reps, 1, I, M))) \
        * np.array(SD_ITEM[:M])
    cs = rng.standard_normal((reps, S, 1, 1))
    system = (math.sqrt(RHO_SYSTEM) * cs + math.sqrt(1 - RHO_SYSTEM) * rng.standard_normal((reps, S, 1, M))) \
        * np.array(SD_SYSTEM[:M])
    X = 0.5 + within + item + system
    Y = f + SD_ITEM[M] * rng.standard_normal((reps, 1, I)) + SD_SYSTEM[M] * rng.standard_normal((reps, S, 1))
    return X, Y


def fresh_power(S: int, I: int, n: int, seed: int, alpha: float = 0.05, permutation: int = 1000,
                single: bool = True, pair: bool = True) -> tuple[float | None, float | None]:  # fmt: skip
    """(single within τ of metric 0, pair metric 0 above metric 1) power over n fresh studies of the known model,
    judged by the run's tests (Holm over the 6 pairs); None for a question not asked."""
    from clir_eval.correlation import design_items as di

    rng = np.random.default_rng([seed, S, I])
    X, Y = known_model(S, I, n, rng)
    one = float((di.tau_p(di.centred(X[..., 0]), di.centred(Y)) < di._cut(alpha)).mean()) if single else None
    two = float(di.pair_rejects(X, Y, 0, 1, alpha, "holm").mean()) if pair else None
    return one, two


def predicted(pilot_S: int, pilot_I: int, seed: int, sizes, reps: int, single: bool = True, null: bool = False
              ) -> list[tuple[float | None, float]]:  # fmt: skip
    """The (single, pair) power one pilot of the known model predicts at each size for the true effects (``null``:
    for effect 0) (the single τ's does not depend on the pilot: ``single`` False skips it)."""
    from clir_eval.correlation import design_items as di

    X, Y = known_model(pilot_S, pilot_I, 1, np.random.default_rng([seed, 99]))
    fit = di.fit_items({f"m{k}": X[0, :, :, k] for k in range(X.shape[3])}, "y", Y[0])
    out = []
    for S, I in sizes:
        q1 = di.ItemQuestion("y", None, None, ((S, I),), (true_tau(0),), reps, 0.05, "holm", 0, seed, 1000)
        q2 = di.ItemQuestion("y", "m0", "m1", ((S, I),), (true_tau(0) - true_tau(1),), reps, 0.05, "holm", 0, seed,
                             1000)
        single = di.tau_power(q1, S, I, 0.0 if null else true_tau(0))[0] if single else None
        pair = di.pair_power(fit, q2, S, I, 0.0 if null else true_tau(0) - true_tau(1))[0]
        out.append((single, pair))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pilots", type=int, default=8)
    ap.add_argument("--pilot", default="12x50", help="pilot size SxI")
    ap.add_argument("--reps", type=int, default=400)
    ap.add_argument("--fresh", type=int, default=1000)
    ap.add_argument("--sizes", default="8x50,12x50,24x50,12x150,24x150")
    a = ap.parse_args()
    pS, pI = map(int, a.pilot.split("x"))
    sizes = [tuple(map(int, s.split("x"))) for s in a.sizes.split(",")]
    print(f"true within τ: {true_tau(0):.3f} (metric 0), Δτ {true_tau(0) - true_tau(1):.3f} (metric 0 - metric 1); "
          f"pilots {pS} x {pI} ({a.pilots}), {a.reps} simulated studies per prediction, {a.fresh} fresh studies")
    preds = [predicted(pS, pI, k, sizes, a.reps, single=k == 0) for k in range(a.pilots)]
    nulls = [predicted(pS, pI, k, sizes, a.reps, single=k == 0, null=True) for k in range(a.pilots)]
    print("| size | τ fresh | τ predicted | Δτ fresh | Δτ predicted, mean (range) over pilots | effect 0: τ predicted "
          "| effect 0: Δτ predicted, max over pilots |")
    print("|---|---|---|---|---|---|---|")
    for j, (S, I) in enumerate(sizes):
        fs, fp = fresh_power(S, I, a.fresh, 7)
        pp = [p[j][1] for p in preds]
        print(f"| {S} × {I} | {fs:.3f} | {preds[0][j][0]:.3f} | {fp:.3f} | {np.mean(pp):.3f} ({min(pp):.2f}–"
              f"{max(pp):.2f}) | {nulls[0][j][0]:.3f} | {max(p[j][1] for p in nulls):.3f} |", flush=True)


if __name__ == "__main__":
    main()
