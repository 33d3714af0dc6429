"""Item-level study design (correlation/design_items.py): the run's item-level tests, vectorised over simulated
studies, equal the run's own functions; at effect 0 the predicted power is at most α + 0.02; power is 0 where the
run's test cannot reject; at a true within-item effect the prediction from a pilot is within ±0.1 of fresh studies
from the same known model (scripts/sim_design_items.py holds the generator and prints the larger table of the docs).
"""

from __future__ import annotations

import importlib.util
import math
import os
from pathlib import Path

import numpy as np
import pytest

from clir_eval.correlation import design_items as di
from clir_eval.correlation.items import ItemSettings, crossed_pair_test, crossed_row, grouped

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as the CLI: one BLAS thread per process

_spec = importlib.util.spec_from_file_location("sim_design_items",
                                               Path(__file__).parents[1] / "scripts" / "sim_design_items.py")
sim = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(sim)


def _crossed(rng, S, I, r=0.3):
    f = rng.standard_normal((S, I))
    x = r * f + rng.standard_normal((S, I)) + 2 * rng.standard_normal((S, 1)) + rng.standard_normal((1, I))
    return x, f + rng.standard_normal((S, 1)) + 3 * rng.standard_normal((1, I))


@pytest.mark.parametrize("S,I", [(5, 20), (7, 12), (9, 30)])
def test_within_p_equals_the_runs(S, I):
    """The within row's crossed test, vectorised over studies: the same within τ and the same p as the run's
    items.crossed_row on each study (below and above 7 systems, where the interaction starts to be subtracted)."""
    s = ItemSettings()
    rng = np.random.default_rng(S)
    X, Y = np.empty((4, S, I)), np.empty((4, S, I))
    for rep in range(4):
        X[rep], Y[rep] = _crossed(rng, S, I, r=0.15 * rep)
    Xc, Yc = di.centred(X), di.centred(Y)
    p = di.tau_p(Xc, Yc)
    for rep in range(4):
        row = crossed_row(X[rep], Y[rep], "within", s)
        assert p[rep] == pytest.approx(row["p_value"], rel=1e-9, abs=1e-15)
        assert (p[rep] < di._cut(0.05)) == row["significant"]
        c, _ = di.loo_tau_b_full(Xc[rep:rep + 1], Yc[rep:rep + 1])
        assert c.mean() == pytest.approx(grouped(X[rep], Y[rep], "within")[0], abs=1e-12)


@pytest.mark.parametrize("S,I", [(6, 20), (9, 25), (12, 40)])
def test_pair_p_equals_the_runs(S, I):
    """A pair's crossed test of the within Δτ, vectorised: the same p as items.crossed_pair_test."""
    s = ItemSettings()
    rng = np.random.default_rng(100 + S)
    for rep in range(3):
        a, y = _crossed(rng, S, I, 0.5)
        b = 0.2 * y + rng.standard_normal((S, I)) + 2 * rng.standard_normal((1, I))
        delta, p_run, _ = crossed_pair_test(a, b, y, s)
        p = di.pair_p(di.centred(a[None]), di.centred(b[None]), di.centred(y[None]))[0]
        assert p == pytest.approx(p_run, rel=1e-9, abs=1e-15)
        assert delta == pytest.approx(grouped(a, y, "within")[0] - grouped(b, y, "within")[0], abs=1e-12)


def _pilot_fit(seed=0, S=12, I=50):
    X, Y = sim.known_model(S, I, 1, np.random.default_rng([seed, 99]))
    return di.fit_items({f"m{k}": X[0, :, :, k] for k in range(X.shape[3])}, "y", Y[0])


def test_effect_zero_predicts_at_most_alpha():
    """No within-item effect: the predicted power is the run's test's size, at most α + 0.02, for the single τ and
    for a pair (Holm over the pilot's 6 pairs, and uncorrected)."""
    fit = _pilot_fit()
    for S, I in ((8, 50), (12, 100)):
        q = di.ItemQuestion("y", None, None, ((S, I),), (0.0,), 400, 0.05, "holm", 0, 1, 1000)
        assert di.tau_power(q, S, I, 0.0)[0] <= 0.07
    for S, I, corr in ((12, 50, "holm"), (24, 50, "holm"), (12, 50, "none")):
        a, b = fit.metrics[:2]
        q = di.ItemQuestion("y", a, b, ((S, I),), (0.0,), 300, 0.05, corr, 0, 1, 1000)
        assert di.pair_power(fit, q, S, I, 0.0)[0] <= 0.07


def test_power_is_zero_where_the_runs_test_cannot_reject():
    """The crossed tests need 4 systems: the run gives no p with 3 (even on perfectly agreeing data), and the
    design's power is 0 there without simulating; with 5 systems a strong effect is found."""
    s = ItemSettings()
    y = np.random.default_rng(2).standard_normal((3, 8))
    assert grouped(y * 2, y, "within")[0] == 1.0
    assert crossed_row(y * 2, y, "within", s)["p_value"] is None
    q = di.ItemQuestion("y", None, None, ((3, 50),), (0.9,), 50, 0.05, "holm", 0, 1, 1000)
    assert di.tau_power(q, 3, 50, 0.9) == (0.0, 0.0, "cannot reject")
    q = di.ItemQuestion("y", None, None, ((5, 50),), (0.9,), 50, 0.05, "holm", 0, 1, 1000)
    assert di.tau_power(q, 5, 50, 0.9)[0] > 0.5
    fit = _pilot_fit()
    a, b = fit.metrics[:2]
    q = di.ItemQuestion("y", a, b, ((3, 50),), (0.5,), 50, 0.05, "holm", 0, 1, 1000)
    assert di.pair_power(fit, q, 3, 50, 0.5) == (0.0, 0.0, "cannot reject")


def test_prediction_within_a_tenth_of_fresh_studies():
    """Pilots of 12 systems x 50 items from the known crossed model (system effects, item effects, within parts;
    scripts/sim_design_items.py, which prints the docs' larger table): the predictions for the model's true within τ
    and Δτ are within ±0.1 of 300 fresh studies judged by the run's tests, at sizes where the power is neither 0
    nor 1 (the single τ's prediction does not depend on the pilot; a pair's: the mean over 3 pilots)."""
    fresh_tau, _ = sim.fresh_power(12, 50, 300, 7, pair=False)
    q = di.ItemQuestion("y", None, None, ((12, 50),), (sim.true_tau(0),), 300, 0.05, "holm", 0, 1, 1000)
    pred_tau = di.tau_power(q, 12, 50, sim.true_tau(0))[0]
    print(f"12x50: within τ {sim.true_tau(0):.3f}: fresh {fresh_tau:.3f}, predicted {pred_tau:.3f}")
    assert 0.3 < fresh_tau < 0.9 and abs(pred_tau - fresh_tau) <= 0.1
    _, fresh_pair = sim.fresh_power(24, 100, 300, 7, single=False)
    preds = [sim.predicted(12, 50, k, [(24, 100)], 150, single=False)[0][1] for k in range(3)]
    print(f"24x100: within Δτ {sim.true_tau(0) - sim.true_tau(1):.3f}: fresh {fresh_pair:.3f}, predicted mean "
          f"{np.mean(preds):.3f} (pilots {min(preds):.2f}-{max(preds):.2f})")
    assert 0.2 < fresh_pair < 0.9 and abs(np.mean(preds) - fresh_pair) <= 0.1


def test_fit_recovers_the_known_model():
    """A large pilot recovers the within loadings (Greiner), the item- and system-effect scales."""
    X, Y = sim.known_model(40, 400, 1, np.random.default_rng(5))
    fit = di.fit_items({f"m{k}": X[0, :, :, k] for k in range(4)}, "y", Y[0])
    assert fit.metrics[0] == "m0"
    k0 = fit.metrics.index("m0")
    assert fit.taus[k0] == pytest.approx(sim.true_tau(0), abs=0.03)
    assert fit.scale_item[k0] == pytest.approx(sim.SD_ITEM[0], rel=0.2)
    assert fit.scale_system[k0] == pytest.approx(sim.SD_SYSTEM[0], rel=0.35)
    assert fit.corr_item[fit.metrics.index("m0"), fit.metrics.index("m2")] == pytest.approx(sim.RHO_ITEM, abs=0.15)
    assert fit.n_items == 400 and math.isclose(fit.loadings[k0], math.sin(math.pi / 2 * fit.taus[k0]))


def test_design_table_item_level(tmp_path, cli):
    """design --table --level item: a per-item score table (MT columns hold each item's score) gives item-level rows
    with the contract's fields; --level both with --table is refused in one line."""
    import json

    from conftest import assert_one_line_error

    X, Y = sim.known_model(8, 30, 1, np.random.default_rng(4))
    cell = lambda v: repr(float(v))  # noqa: E731
    lines = ["system\titem\tm0\tm1\ty"] + [
        f"s{s}\td{i}\t{cell(X[0, s, i, 0])}\t{cell(X[0, s, i, 1])}\t{cell(Y[0, s, i])}" for s in range(8) for i in range(30)]
    (tmp_path / "t.tsv").write_text("\n".join(lines) + "\n")
    args = ["design", "--table", str(tmp_path / "t.tsv"), "--query-col", "item", "--x", "m0,m1", "--y", "y",
            "--level", "item", "--systems", "3,8", "--items", "30", "--effect", "0.1", "--reps", "20", "--jobs", "1",
            "-q"]
    code, out, err = cli(*args, "--format", "json")
    assert code == 0, err
    rows = json.loads(out)
    assert rows and all(r["level"] == "item" and r["items"] == "items" and r["target"] == "y" for r in rows)
    assert {r["a"] for r in rows if "b" not in r} == {"m0", "m1"}  # a single τ's power repeated per metric
    assert all(r["power"] == 0 and r.get("note") == "cannot reject" for r in rows if r["n_systems"] == 3)
    code, out, err = cli(*args)
    assert code == 0 and "y over items: within-item τ(metric, y) significant with 80% power at 30 items" in out
    both = list(args)
    both[args.index("--level") + 1] = "both"
    code, out, err = cli(*both)
    assert_one_line_error(code, err, "--level both")


def test_power_is_zero_where_the_run_leaves_within_untested():
    """A metric that, like the target, takes few values (steps of 0.1) on the pilot: the run does not test its
    within τ nor its pairs (both scales step-valued), so the design gives it power 0 with a note saying why; the
    continuous metric's single τ is simulated as before."""
    rng = np.random.default_rng(7)
    x, y = _crossed(rng, 8, 60, r=0.6)
    step = lambda v: np.round(10 * (v - v.min()) / np.ptp(v)) / 10  # noqa: E731
    X, Y = {"cont": x, "step": step(x + 0.3 * rng.standard_normal(x.shape))}, step(y)
    s = ItemSettings(bootstrap=0)
    assert "untested_reason" in crossed_row(X["step"], Y, "within", s)
    assert "untested_reason" not in crossed_row(X["cont"], Y, "within", s)
    fit = di.fit_items(X, "y", Y)
    assert fit.step_valued == ("step",)
    pilot = di.ItemPilot({"y": fit}, 0.05, "holm", "target", 1000, {}, ())
    out = di.analyse(pilot, [8], [60], [0.5], pairs="adjacent", reps=40, seed=1, goal=0.8)
    single = {r["a"]: r for r in out["rows"] if "b" not in r}
    assert single["step"]["power"] == 0.0 and single["step"]["note"] == di.UNTESTED
    assert single["cont"]["power"] > 0.5 and "note" not in single["cont"]
    [pair] = [r for r in out["rows"] if "b" in r]
    assert pair["power"] == 0.0 and pair["note"] == di.UNTESTED
    assert any("power 0 for step against y" in n and "step-valued" in n for n in out["notes"]), out["notes"]


def _close_pair_fit():
    """Two metrics whose within-item parts agree closely (about .9) and load about .5 on the target's: a within Δτ
    of .1 around their mean τ fits the pilot's correlation between them, one of .6 does not."""
    rng = np.random.default_rng(11)
    f = rng.standard_normal((10, 80))
    u = 0.55 * f + rng.standard_normal((10, 80))
    X = {"m0": u + 0.3 * rng.standard_normal((10, 80)), "m1": u + 0.3 * rng.standard_normal((10, 80))}
    return di.fit_items(X, "y", f + rng.standard_normal((10, 1)) + rng.standard_normal((1, 80)))


def test_item_corr_change_is_what_the_simulated_studies_show():
    """Where a pair's assumed within Δτ gives loadings that do not fit the pilot's within correlation of the two
    metrics, ``corr_change`` says the assumed and the simulated correlation, and the simulated studies' within parts
    (double-centred) correlate as it says (within .01); the rows carry it and a note says by how much."""
    fit = _close_pair_fit()
    assert not fit.notes
    assert _change(fit, 0.1) is None
    change = _change(fit, 0.6)
    assert change is not None and change["metrics"] == ["m0", "m1"]
    assert change["assumed"] == pytest.approx(fit.corr[0, 1], abs=0)
    X, _ = di.simulate_items(fit, di._pair_loadings(fit, 0, 1, 0.6)[0], 20, 200, 40, np.random.default_rng(1))
    R = X - X.mean(axis=1, keepdims=True) - X.mean(axis=2, keepdims=True) + X.mean(axis=(1, 2), keepdims=True)
    observed = float(np.corrcoef(R[..., 0].ravel(), R[..., 1].ravel())[0, 1])
    assert abs(observed - change["simulated"]) < 0.01, (observed, change)
    assert abs(observed - change["assumed"]) > 0.1
    pilot = di.ItemPilot({"y": fit}, 0.05, "holm", "target", 1000, {}, ())
    out = di.analyse(pilot, [10], [80], [0.1, 0.6], pairs="adjacent", reps=20, seed=1, goal=0.8)
    pairs = [r for r in out["rows"] if "b" in r]
    assert pairs and all(("corr_change" in r) == (r["effect"] == 0.6) for r in pairs), pairs
    assert all(r["corr_change"] == change for r in pairs if r["effect"] == 0.6)
    [note] = [n for n in out["notes"] if "nearest valid one is simulated" in n]
    assert f"{change['assumed']:.3f} assumed → {change['simulated']:.3f} simulated" in note and "Δτ 0.6" in note


def _change(fit, effect):
    return di.dz.corr_change(fit.metrics, di._pair_loadings(fit, 0, 1, effect)[0], fit.corr)
