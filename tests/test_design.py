"""`clir-eval design`: power at assumed effects, from a model fitted on the pilot, with the run's own tests.

The generating model of the calibration tests: systems' true quality u ~ N(0, 1); per-query IR values
SU*u + query effect + noise; metric m = r_m u + sqrt(1 - r_m^2) (shared residual factor + own noise). Predictions
from a pilot drawn from it are compared with fresh studies drawn from it, each judged by the run's tests
(scipy's Kendall test; PERM-BOTH's exact p, checked against enumeration and the run's Monte Carlo test below,
with Holm over the metric pairs)."""

from __future__ import annotations

import itertools
import json
import math
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
import scipy.stats
from conftest import assert_one_line_error

from clir_eval.correlation import design as dz
from clir_eval.stats import adjust_p

SU, SV, SE = 0.1, 0.2, 0.3  # systems' spread, queries' spread, per-query noise
R_TRUE = np.array([0.75, 0.45, 0.4, 0.2])  # metrics' loadings on the systems' quality
C_RES = 0.6  # the metrics' correlation beyond it
SIDES = dz.run_sides()  # the run's PERM-BOTH: one-sided (the leader's tail) or two-sided


def study(rng, n: int, q: int, r=R_TRUE):
    u = rng.standard_normal(n)
    eta = math.sqrt(C_RES) * rng.standard_normal(n)[:, None] + math.sqrt(1 - C_RES) * rng.standard_normal((n, len(r)))
    X = u[:, None] * r + eta * np.sqrt(1 - r ** 2)
    pq = SU * u[:, None] + SV * rng.standard_normal((1, q)) + SE * rng.standard_normal((n, q))
    return X, pq


def true_tau(r: float, q: int) -> float:
    rel = SU ** 2 / (SU ** 2 + SE ** 2 / q)
    return 2 / math.pi * math.asin(r * math.sqrt(rel))


def run_pair_p(a, b, y) -> float:
    """The run's PERM-BOTH p of the pair, as its verdicts compute it (correlation/driver.py's exact stream: the
    run's setup, the leader's tail counted over every swap pattern, doubled when two-sided)."""
    from clir_eval.correlation.statistics import perm_both_exact_hits, perm_both_setup

    A, B, G, d = perm_both_setup(a, b, y, "kendall", "b")
    total = 2 ** len(A)
    if abs(d) <= 1e-12:
        return 1.0
    hits = perm_both_exact_hits(*((A, B) if d > 0 else (B, A)), G, abs(d), "kendall", "b")
    return min(SIDES * hits, total) / total


def fresh(rng, n: int, q: int, studies: int, r=R_TRUE, alpha: float = 0.05) -> tuple[float, float]:
    """Shares of fresh studies in which τ(m0, target) is significant (scipy's test) and in which the verdict
    declares m0 significantly above m1 (the run's PERM-BOTH p — design's ``pair_p``, equal to the run's by
    test_design_applies_the_runs_exact_perm_both_p_wherever_the_run_is_exact, vectorised over the studies —,
    Holm over the 6 pairs with the run's ``adjust_p``, m0 ranked above m1)."""
    drawn = [study(rng, n, q, r) for _ in range(studies)]
    X = np.stack([d[0] for d in drawn])  # (studies, n, 4)
    y = np.stack([d[1].mean(axis=1) for d in drawn])
    tau_hits = sum(scipy.stats.kendalltau(X[k, :, 0], y[k]).pvalue < alpha for k in range(studies))
    taus = np.stack([dz.kendall_rows(X[:, :, m], y) for m in range(4)], axis=1)
    ps = []
    for i, j in itertools.combinations(range(4), 2):
        lead = (taus[:, i] >= taus[:, j])[:, None]
        ps.append(dz.pair_p(np.where(lead, X[:, :, i], X[:, :, j]), np.where(lead, X[:, :, j], X[:, :, i]), y,
                            SIDES))
    P = np.stack(ps, axis=1)
    pair_hits = sum(taus[k, 0] > taus[k, 1] and adjust_p(list(P[k]), "holm")[0] < alpha for k in range(studies))
    return tau_hits / studies, pair_hits / studies


def pilot_fit(seed: int, S: int, Q: int, r=R_TRUE) -> dz.Fit:
    X, pq = study(np.random.default_rng(seed), S, Q, r)
    data = dz.DesignData(tuple(f"s{i}" for i in range(S)), {f"m{k}": X[:, k] for k in range(4)},
                         {"y": dz.Target("y", pq.mean(axis=1), pq)})
    return dz.fit_target(data, "y")


def predict(fit: dz.Fit, n: int, q: int, effect: float, a=None, b=None, reps: int = 400) -> float:
    question = dz.Question("y", a, b, n, q, (effect,), reps, 0.05, "holm", 0, 1, sides=SIDES)
    return dz.run_question({"y": fit}, question)[0]["power"]


# --------------------------------------------------------------------------- the run's tests, exactly
@pytest.mark.parametrize("n", [5, 8, 10])
def test_design_pair_p_is_the_enumerated_perm_both_p(n):
    """Every one of the 2^n swap patterns with the run's coefficient (scipy's τ-b): the share whose Δτ reaches
    the observed one is design's p, one-sided and (for the leader, as the verdicts test it) two-sided."""
    from clir_eval.correlation.statistics import pair_coef, perm_both_setup

    rng = np.random.default_rng(n)
    a, b, y = rng.normal(size=(3, n))
    A, B, G, delta = perm_both_setup(a, b, y, "kendall", "b")
    hits = hits2 = 0
    for bits in itertools.product([False, True], repeat=n):
        sw = np.array(bits)
        d = pair_coef(np.where(sw, B, A), G, "kendall", "b") - pair_coef(np.where(sw, A, B), G, "kendall", "b")
        hits += d >= delta - 1e-12
        hits2 += abs(d) >= abs(delta) - 1e-12
    assert dz.pair_p(a[None], b[None], y[None], 1)[0] == pytest.approx(hits / 2 ** n, abs=1e-12)
    lead, other = (a, b) if delta > 0 else (b, a)  # two-sided: twice the leader's tail
    assert dz.pair_p(lead[None], other[None], y[None], 2)[0] == pytest.approx(hits2 / 2 ** n, abs=1e-12)


def test_exact_p_agrees_with_the_runs_monte_carlo_test():
    from clir_eval.correlation.statistics import permutation_sigdiff

    rng = np.random.default_rng(3)
    for n in (12, 20):
        u = rng.normal(size=n)
        a, b, y = u + 0.6 * rng.normal(size=n), u + 0.9 * rng.normal(size=n), u + 0.5 * rng.normal(size=n)
        _, p_mc = permutation_sigdiff(a, b, y, n_resamples=20000, seed=1, plus_one=True)
        p = dz.pair_p(a[None], b[None], y[None])[0]
        assert abs(p - p_mc) <= 4 * math.sqrt(p * (1 - p) / 20000) + 1e-4, (n, p, p_mc)


@pytest.mark.parametrize("n", [13, 36, 60])
def test_design_applies_the_runs_exact_perm_both_p_wherever_the_run_is_exact(n):
    """Up to the run's exact limit (60 systems) design's p of each simulated study is the p the run's verdicts
    compute for it, exactly (no approximation): 40 studies per size, the leader's test, one- or two-sided as
    the run's."""
    from clir_eval.correlation.statistics import EXACT_DP_MAX_N

    assert n <= EXACT_DP_MAX_N
    rng = np.random.default_rng(n)
    u = rng.normal(size=(40, n))
    a, b, y = u + 0.8 * rng.normal(size=u.shape), u + 1.2 * rng.normal(size=u.shape), u + rng.normal(size=u.shape)
    lead = (dz.kendall_rows(a, y) >= dz.kendall_rows(b, y))[:, None]  # the run tests the leader's tail
    L, O = np.where(lead, a, b), np.where(lead, b, a)
    mine = dz.pair_p(L, O, y, SIDES)
    assert [float(v) for v in mine] == [run_pair_p(L[k], O[k], y[k]) for k in range(len(u))], n
    assert 0 < (mine < 0.05).sum() < len(u)  # the sizes span decisions both ways


def test_perm_both_tail_p_counts_exactly_and_its_float_form_above_the_integer_limit():
    """Weights +1 (32 systems) and -1 (32): the share of swap patterns with sum_(i in A) W_i <= 0 is P(X <= Y) for
    X, Y ~ Bin(32, 1/2), (1 + C(64, 32) / 2^64) / 2 — the integer count at 62 systems and the floating-point
    recursion at 64 (above int64's range); the normal approximation used above the run's exact limit is close."""
    from clir_eval.correlation.statistics import (
        COUNT_EXACT_MAX_N,
        perm_both_tail_counts,
        perm_both_tail_p,
        perm_both_weights,
    )

    assert COUNT_EXACT_MAX_N == 62
    W = np.array([[1] * 31 + [-1] * 31])
    assert perm_both_tail_counts(W)[0] == 2 ** 61 + math.comb(62, 31) // 2
    W = np.array([[1] * 32 + [-1] * 32])
    assert perm_both_tail_p(W)[0] == pytest.approx((1 + math.comb(64, 32) / 2 ** 64) / 2, rel=1e-12)
    rng = np.random.default_rng(1)
    u = rng.normal(size=(100, 64))
    W, _ = perm_both_weights(u + rng.normal(size=u.shape), u + 1.3 * rng.normal(size=u.shape),
                             u + rng.normal(size=u.shape))
    assert np.abs(perm_both_tail_p(W) - dz.normal_p(W)).max() < 0.02


@pytest.mark.parametrize("method", ["holm", "bh", "none"])
def test_adjust_rows_is_the_runs_correction(method):
    P = np.random.default_rng(2).random((30, 6)) ** 3
    assert np.allclose(dz.adjust_rows(P, method), [adjust_p(list(r), method) for r in P])


def test_no_power_where_the_exact_test_cannot_reject():
    fit = pilot_fit(1, 12, 50)
    for e in (0.3, 0.9):
        assert predict(fit, 4, 50, e) == 0.0  # Kendall's exact test at 4 systems: smallest p 1/12 > 0.05
        assert predict(fit, 4, 50, e, "m0", "m1") == 0.0  # PERM-BOTH at 4 systems: smallest p 1/16 > 0.05
    assert predict(fit, 6, 50, 0.9) > 0.5


# --------------------------------------------------------------------------- calibration
SIZES = [(6, 50), (12, 50), (24, 50), (36, 50), (12, 25), (12, 200), (24, 200)]


CORNERS = [(6, 25), (6, 200), (36, 25), (36, 200)]  # the grid's corners: 6-36 systems x 25-200 queries


def _mahonian(n: int) -> list[int]:
    """Counts of the permutations of n items by number of inversions (Kendall's exact null, independently of
    scipy): the coefficients of prod_k (1 + x + ... + x^(k-1))."""
    c = [1]
    for k in range(1, n + 1):
        new = [0] * (len(c) + k - 1)
        for i, v in enumerate(c):
            for j in range(k):
                new[i + j] += v
        c = new
    return c


@pytest.mark.parametrize("n", [4, 6, 12, 36])
def test_at_effect_zero_a_single_taus_power_is_the_runs_test_size(n):
    """Effect 0: the systems' scores are independent of the target, so the power is the run's Kendall test's size:
    every number of discordant pairs weighted by its exact null probability (Mahonian numbers), judged by the
    run's own test (``correlate``: exact p up to 33 systems, normal approximation above). At every size and
    number of queries design gives that size, at most alpha + 0.02 (0.0510 at 36 systems, where the run's critical
    value comes from the normal approximation; 0 at 4 systems, where the test cannot reject)."""
    from clir_eval.correlation.significance import permutation_with_inversions
    from clir_eval.correlation.statistics import correlate

    counts = _mahonian(n)
    size = sum(c for d, c in enumerate(counts)
               if correlate(list(range(n)), permutation_with_inversions(n, d)).significant) / math.factorial(n)
    fit = pilot_fit(1, 12, 50)
    for q in (25, 50, 200):
        got = dz.run_question({"y": fit}, dz.Question("y", None, None, n, q, (0.0,), 400, 0.05, "holm", 0, 1))[0]
        assert got["power"] == pytest.approx(size, abs=1e-12) and got["mc_se"] == 0.0, (n, q, got, size)
    assert size <= 0.05 + 0.02


def test_at_effect_zero_a_pairs_predicted_power_is_at_most_alpha():
    """The old observed-power design predicted .13-.28 for a null pair; a null effect must predict <= α + 0.02 at
    the grid's corners (6-36 systems, 25-200 queries), for two pilots and two pairs each. 1000 simulated studies
    per point: a true rate of 0.10 would fail it (3 se)."""
    for seed in (1, 2):
        fit = pilot_fit(seed, 12, 50)
        for n, q in CORNERS:
            for a, b in (fit.metrics[:2], fit.metrics[1:3]):
                assert predict(fit, n, q, 0.0, a, b, reps=1000) <= 0.05 + 0.02, (seed, n, q, a, b)


def test_single_tau_prediction_matches_fresh_studies():
    """At the pilot's queries a single τ's power depends only on τ and n: every pilot predicts it. Along queries
    it rests on the pilot's variance components (12 systems): the mean over pilots is within 0.1."""
    rng = np.random.default_rng(11)
    fits = [pilot_fit(seed, 12, 50) for seed in range(1, 5)]
    for n, q in SIZES + CORNERS:
        truth = np.mean([scipy.stats.kendalltau(*(lambda X, pq: (X[:, 0], pq.mean(axis=1)))(*study(rng, n, q))
                                                ).pvalue < 0.05 for _ in range(400)])
        pred = [predict(f, n, q, true_tau(R_TRUE[0], 50)) for f in fits]
        if q == 50:
            assert max(abs(p - truth) for p in pred) <= 0.1, (n, q, pred, truth)
        assert abs(np.mean(pred) - truth) <= 0.1, (n, q, pred, truth)


def test_pair_prediction_matches_fresh_studies():
    """Pair power depends on the pilot's estimates of the metrics' correlations; over pilots of 24 systems x 100
    queries the mean prediction is within 0.1 of fresh studies, up to the corners 36 x 25 and 36 x 200
    (docs/item-level.md gives the spread; scripts/sim_design.py the figures over 24 pilots)."""
    rng = np.random.default_rng(7)
    delta = true_tau(R_TRUE[0], 100) - true_tau(R_TRUE[1], 100)
    fits = [pilot_fit(seed, 24, 100) for seed in range(1, 9)]
    for n, q in [(12, 100), (24, 100), (36, 100), (24, 25), (24, 200), (36, 25), (36, 200)]:
        truth = fresh(rng, n, q, 300)[1]
        pred = [predict(f, n, q, delta, "m0", "m1", reps=200) for f in fits]
        assert abs(np.mean(pred) - truth) <= 0.1, (n, q, pred, truth)


def test_a_sizes_power_does_not_depend_on_the_other_sizes_asked_for():
    fit = pilot_fit(3, 12, 50)
    a = dz.simulate({"y": fit}, dz.plan({"y": fit}, [8, 12], [50], [0.3], [0.3], reps=50, seed=5))
    b = dz.simulate({"y": fit}, dz.plan({"y": fit}, [12, 20, 30], [25, 50], [0.3], [0.3], reps=50, seed=5))
    key = lambda r: (r["a"], r.get("b"), r["n_systems"], r["n_queries"], r["effect"])  # noqa: E731
    shared = {key(r): r["power"] for r in a} .keys() & {key(r) for r in b}
    assert shared and all(next(r["power"] for r in a if key(r) == k) == next(r["power"] for r in b if key(r) == k)
                          for k in shared)


def test_variance_components_recover_the_generating_ones():
    rng = np.random.default_rng(4)
    _, pq = study(rng, 200, 100)
    vs, ve, q = dz.variance_components(pq)
    assert q == 100 and vs == pytest.approx(SU ** 2, rel=0.25) and ve == pytest.approx(SE ** 2, rel=0.05)


# --------------------------------------------------------------------------- the command
@pytest.fixture(scope="module")
def demo_run(tmp_path_factory):
    """One demo run (a real results.json and reports) shared by the CLI tests below."""
    from clir_eval.cli import main

    out = tmp_path_factory.mktemp("design") / "demo"
    assert main(["demo", "--out", str(out), "--jobs", "1"]) == 0
    return out


def _env() -> dict:
    return {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}


def _clir(*args, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "clir_eval", *map(str, args)], capture_output=True, text=True,
                          env=_env(), **kw)


def test_design_answers_first_in_few_lines_and_writes_one_set(demo_run, tmp_path):
    import shutil

    out = tmp_path / "d"
    shutil.copytree(demo_run, out)
    p = _clir("design", out, "--reps", "40", "--jobs", "1")
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert len(lines) <= 120
    answers = [line for line in lines[:15] if "power" in line and ("τ=0.1" in line or "Δτ=0.1" in line)]
    targets = json.loads((out / "results.json").read_text())["design"]["observed"]
    assert len(answers) >= 4 and targets["n_systems"] == 12
    assert any("significantly above" in line and "observed Δτ" in line for line in answers)
    doc = json.loads((out / "design.json").read_text())
    assert {"rows", "answers", "notes", "fits", "settings", "dropped"} <= set(doc)
    md = (out / "report.md").read_text()
    # the Study design section after the verdicts and the τ tables
    assert md.index("## Verdicts") < md.index("## MT metric vs IR measure") < md.index("## Study design")
    page = (out / "report.html").read_text()
    contents = page[page.index("Contents:"):].split("</p>")[0]
    assert "study design" in contents and "queries evaluated" in contents and "notes" in contents


def test_design_json_rows_follow_the_contract(demo_run, tmp_path):
    import shutil

    out = tmp_path / "d"
    shutil.copytree(demo_run, out)
    p = _clir("design", out, "--targets", "map", "--systems", "4,8", "--queries", "30", "--effect", "0,0.3",
              "--reps", "30", "--format", "json", "--jobs", "1")
    assert p.returncode == 0, p.stderr
    rows = json.loads(p.stdout)
    keys = {"target", "a", "n_systems", "n_queries", "effect", "power", "mc_se"}
    singles = [r for r in rows if "b" not in r]
    pairs = [r for r in rows if "b" in r]
    assert singles and pairs and all(keys <= set(r) for r in rows)
    assert {r["effect"] for r in rows} == {0.0, 0.3}
    assert all(r["power"] == 0 for r in rows if r["n_systems"] == 4)
    assert {r["a"] for r in singles} == {"bleu", "chrf1", "macrof1", "microf1"}


def test_design_on_a_per_query_table(tmp_path):
    rng = np.random.default_rng(5)
    X, pq = study(rng, 10, 30)
    lines = ["system\tquery\tm0\tm1\tmap"] + [f"s{i}\tq{j}\t{X[i, 0]:.6f}\t{X[i, 1]:.6f}\t{pq[i, j]:.6f}"
                                              for i in range(10) for j in range(30)]
    (tmp_path / "t.tsv").write_text("\n".join(lines) + "\n")
    p = _clir("design", "--table", tmp_path / "t.tsv", "--system-col", "system", "--query-col", "query",
              "--x", "m0,m1", "--y", "map", "--systems", "6,10", "--queries", "30", "--effect", "0.2", "--reps", "30",
              "--format", "json", "--jobs", "1")
    assert p.returncode == 0, p.stderr
    rows = json.loads(p.stdout)
    assert {(r["a"], r.get("b")) for r in rows} >= {("m0", None), ("m1", None)}
    assert any("b" in r for r in rows) and all(r["target"] == "map" for r in rows)
    p = _clir("design", "--table", tmp_path / "t.tsv", "--x", "m0,nosuch", "--y", "map")
    assert p.returncode == 2 and "nosuch" in p.stderr and "Traceback" not in p.stderr


def test_design_names_what_it_drops(demo_run, tmp_path):
    import shutil

    out = tmp_path / "d"
    shutil.copytree(demo_run, out)
    res = json.loads((out / "results.json").read_text())
    first = next(iter(res["systems"]))
    del res["systems"][first]["mt"]["bleu"]
    (out / "results.json").write_text(json.dumps(res))
    p = _clir("design", out, "--targets", "map", "--systems", "12", "--queries", "60", "--reps", "20", "--jobs", "1")
    assert p.returncode == 0, p.stderr
    assert f"note: bleu: MT metric without a score for 1 of 12 systems ({first})" in p.stderr  # a diagnostic
    assert "note:" not in p.stdout
    assert any(d["name"] == "bleu" for d in json.loads((out / "design.json").read_text())["dropped"])


def test_design_takes_the_runs_lock_and_an_interrupted_design_leaves_the_previous_set(demo_run, tmp_path):
    import shutil

    out = tmp_path / "d"
    shutil.copytree(demo_run, out)
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file() and not p.name.startswith(".")}
    slow = subprocess.Popen([sys.executable, "-m", "clir_eval", "design", str(out), "--reps", "50000", "--jobs", "1",
                             "-q"], env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        lock = out / ".clir-eval.lock"
        for _ in range(200):
            if lock.exists() and f"pid {slow.pid}" in lock.read_text(errors="replace"):
                break
            time.sleep(0.1)
        else:
            pytest.fail("design did not take the lock")
        # a run (or a second design) into the same directory is refused, naming the holder
        p = _clir("run", out / "demo.yaml", "--out", out)
        assert p.returncode == 2 and f"pid {slow.pid}" in p.stderr and "Traceback" not in p.stderr
        p = _clir("design", out, "--reps", "20")
        assert_one_line_error(p.returncode, p.stderr, f"pid {slow.pid}")
    finally:
        slow.send_signal(signal.SIGKILL)
        slow.wait()
    after = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file() and not p.name.startswith(".")}
    assert after == before  # killed while simulating: every file as it was, no design.* beside old reports


def test_design_refuses_bad_options_in_one_line(demo_run):
    for args, expect in ((["--reps", "100001"], "100000"), (["--effect", "1.5"], "--effect"),
                         (["--systems", "2"], "--systems"), (["--pairs", "some"], "--pairs")):
        p = _clir("design", demo_run, *args)
        assert_one_line_error(p.returncode, p.stderr, expect)


def test_design_applies_perm_both_as_the_run_does(demo_run):
    """One-sided or two-sided: the design's pair test is the one the run's verdicts report."""
    test = json.loads((demo_run / "results.json").read_text())["verdicts"][0]["test"]
    assert test.startswith("PERM-BOTH") and ("two-sided" in test) == (dz.run_sides() == 2)
    rng = np.random.default_rng(8)
    u = rng.normal(size=(50, 10))
    X = np.stack([u + rng.normal(size=u.shape), u + 2 * rng.normal(size=u.shape)], axis=2)
    Y = u + rng.normal(size=u.shape)
    one = dz.verdict_rejects(X, Y, 0, 1, 0.05, "none", sides=1)
    two = dz.verdict_rejects(X, Y, 0, 1, 0.05, "none", sides=2)
    assert (two <= one).all() and two.sum() < one.sum()


def test_needed_interpolates_and_says_when_unreachable():
    assert dz.needed([(5, 0.2), (10, 0.6), (20, 1.0)], 0.8) == pytest.approx(15.0)
    assert dz.needed([(5, 0.2), (10, 0.5)], 0.8) is None


def test_the_docs_design_excerpt_is_what_the_command_prints(demo_run, tmp_path):
    """docs/item-level.md quotes `clir-eval design demo-out --targets map --reps 100 -q`: the same lines (the
    observed Δτ's interval, which is the run's own, checked only for its presence)."""
    import re
    import shutil
    from pathlib import Path

    shutil.copytree(demo_run, tmp_path / "demo-out")
    p = _clir("design", "demo-out", "--targets", "map", "--reps", "100", "-q", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    doc = (Path(__file__).resolve().parent.parent / "docs" / "item-level.md").read_text(encoding="utf-8")
    block = doc.split("`clir-eval design demo-out --targets map --reps 100 -q` prints:\n\n```\n")[1].split("```")[0]
    strip = lambda s: re.sub(r" \[observed Δτ [^\]]*\]", "", s)  # noqa: E731
    quoted = block.strip("\n").splitlines()
    got = p.stdout.splitlines()[:len(quoted)]
    assert [strip(line) for line in quoted] == [strip(line) for line in got], (
        "docs/item-level.md's design excerpt is stale (the run's tests or the demo changed): after 'clir-eval demo "
        "--out demo-out', paste the first lines of 'clir-eval design demo-out --targets map --reps 100 -q':\n"
        + "\n".join(got))
    assert "[observed Δτ" in p.stdout


def test_design_item_level_rows_and_a_run_without_item_level_unchanged(demo_run, tmp_path):
    """The demo keeps an item level: design adds its rows ("level": "item", the system level's fields; the item
    count in n_queries). A run without an item level gives by default exactly the system-level rows (the same as
    --level system with the item level there), and --level item is refused there in one line."""
    import shutil

    full, bare = tmp_path / "full", tmp_path / "bare"
    shutil.copytree(demo_run, full)
    shutil.copytree(demo_run, bare)
    res = json.loads((bare / "results.json").read_text())
    del res["item_level"]
    (bare / "results.json").write_text(json.dumps(res, indent=1, ensure_ascii=False) + "\n")
    (bare / "item_documents.json").unlink()
    grid = ["--systems", "5,12", "--queries", "60", "--items", "40", "--effect", "0.05", "--reps", "30", "--jobs", "1",
            "--format", "json"]
    p = _clir("design", full, "--targets", "map,retrievability", *grid)
    assert p.returncode == 0, p.stderr
    rows = json.loads(p.stdout)
    item = [r for r in rows if r.get("level") == "item"]
    assert item and all(r["target"] == "retrievability" and r["items"] == "documents" for r in item)
    assert {"target", "a", "n_systems", "n_queries", "effect", "power", "mc_se", "level"} <= set(item[0])
    assert any("b" in r for r in item) and any("b" not in r for r in item)
    assert {r["n_queries"] for r in item} <= {40, 298}  # the pilot's documents whose target varies, or --items
    assert all(0 <= r["power"] <= 1 for r in item)
    # the crossed test has no permutation floor: more systems never lose power (beyond Monte Carlo error)
    by = {(r["a"], r.get("b"), r["n_queries"], r["n_systems"]): r for r in item}
    for (a, b, n, s), r in by.items():
        big = by.get((a, b, n, 12))
        if s == 5 and big is not None:
            assert big["power"] >= r["power"] - 3 * max(big["mc_se"], r["mc_se"], 0.05), (r, big)
    system = [r for r in rows if r.get("level") != "item"]
    p_sys = _clir("design", full, "--targets", "map", "--level", "system", *grid)
    p_bare = _clir("design", bare, "--targets", "map", *grid)
    assert p_sys.returncode == p_bare.returncode == 0, p_bare.stderr
    assert json.loads(p_sys.stdout) == json.loads(p_bare.stdout) == system
    p = _clir("design", bare, "--level", "item", "--reps", "20")
    assert_one_line_error(p.returncode, p.stderr, "item_level")
