"""Study design: predicted power against the rejection rate of repeated independent simulated studies."""

from __future__ import annotations

import json

import numpy as np
import pytest

from clir_eval.correlation.design import DesignData, design, needed
from clir_eval.correlation.significance import min_significant_tau
from clir_eval.correlation.statistics import correlate


def population_study(rng, n_sys: int, n_q: int):
    """A study drawn from a known population: metric A tracks the systems' IR quality, B is noise."""
    quality = rng.normal(size=n_sys)
    a = quality + 0.6 * rng.normal(size=n_sys)
    b = rng.normal(size=n_sys)
    per_query = quality[:, None] * 0.05 + rng.normal(size=(1, n_q)) * 0.2 + rng.normal(size=(n_sys, n_q)) * 0.3
    return a, b, per_query


def test_predicted_power_matches_independent_studies():
    n_sys, n_q = 12, 40
    rng = np.random.default_rng(21)
    # truth: how often fresh studies of this size find τ(A, IR) significant, and τ(B, IR)
    hits_a = hits_b = 0
    trials = 300
    for _ in range(trials):
        a, b, pq = population_study(rng, n_sys, n_q)
        y = pq.mean(axis=1)
        hits_a += bool(correlate(a, y).significant)
        hits_b += bool(correlate(b, y).significant)
    # prediction from single observed studies of the same size, averaged over a few observed studies
    preds_a, preds_b = [], []
    for k in range(8):
        a, b, pq = population_study(np.random.default_rng(100 + k), n_sys, n_q)
        data = DesignData(tuple(f"s{i}" for i in range(n_sys)), tuple(f"q{j}" for j in range(n_q)),
                          {"A": a, "B": b}, {"map": pq})
        rows = design(data, [n_sys], [n_q], reps=200, permutations=20, seed=k)
        preds_a.append(next(r["power"] for r in rows if r.get("b") is None and r["a"] == "A"))
        preds_b.append(next(r["power"] for r in rows if r.get("b") is None and r["a"] == "B"))
    assert np.mean(preds_a) == pytest.approx(hits_a / trials, abs=0.1), (np.mean(preds_a), hits_a / trials)
    # B has no effect: fresh studies reject at about α, and so must the prediction (a bootstrap share of
    # rejections, centred on the observed noisy τ, said about 0.2 here)
    assert hits_b / trials < 0.1
    assert np.mean(preds_b) == pytest.approx(hits_b / trials, abs=0.1), (np.mean(preds_b), hits_b / trials)


def test_tau_power_is_alpha_without_an_effect_and_grows_with_it_and_with_size():
    from clir_eval.correlation.design import tau_power

    assert tau_power(0.0, 12, 0.05) <= 0.05 + 1e-9  # exact critical τ: at most α (discreteness)
    assert tau_power(0.0, 200, 0.05) == pytest.approx(0.05, abs=0.005)
    assert tau_power(0.2, 12, 0.05) < tau_power(0.4, 12, 0.05) < tau_power(0.4, 30, 0.05)
    assert tau_power(-0.4, 30, 0.05) == pytest.approx(tau_power(0.4, 30, 0.05))


def test_needed_interpolates_and_says_when_unreachable():
    assert needed([(5, 0.2), (10, 0.6), (20, 1.0)], 0.8) == pytest.approx(15.0)
    assert needed([(5, 0.2), (10, 0.5)], 0.8) is None


def test_design_cli_json_rows(tmp_path, cli):
    rng = np.random.default_rng(3)
    systems = {}
    for i in range(6):
        pq = {f"q{j}": {"map": float(v)} for j, v in enumerate(rng.random(15) * (i + 1) / 6)}
        systems[f"s{i}"] = {"mt": {"bleu": float(i + rng.random()), "chrf1": float(rng.random())},
                            "ir": {"map": float(np.mean([v["map"] for v in pq.values()]))}, "ir_per_query": pq}
    results = {"name": "gen", "signature": {}, "systems": systems, "score_kinds": {"mt": ["bleu", "chrf1"], "ir": ["map"]},
               "correlations": [{"x": "bleu", "y": "map", "tau": None, "alpha": 0.05}]}
    (tmp_path / "results.json").write_text(json.dumps(results))
    code, out, err = cli("design", str(tmp_path), "--systems", "4,8", "--queries", "10,20", "--reps", "20",
                         "--permutations", "20", "--format", "json")
    assert code == 0, err
    rows = json.loads(out)
    assert {tuple(sorted(k for k in r if k in ("target", "a", "b", "n_systems", "n_queries", "power"))) for r in rows} \
        >= {("a", "n_queries", "n_systems", "power", "target"), ("a", "b", "n_queries", "n_systems", "power", "target")}
    assert all(0 <= r["power"] <= 1 for r in rows)
    assert (tmp_path / "design.png").stat().st_size > 1000 and (tmp_path / "design.html").exists()


def test_answers_bound_at_the_smallest_size_and_interpolate_inside_the_grid():
    from clir_eval.correlation.design import answers

    def rows(powers_s, powers_q):
        out = [{"target": "map", "a": "bleu", "n_systems": n, "n_queries": 50, "power": p} for n, p in powers_s]
        out += [{"target": "map", "a": "bleu", "n_systems": 10, "n_queries": q, "power": p} for q, p in powers_q]
        return out

    # power already 0.9 at the smallest sizes tried: the study size is at most that, not about it
    (line,) = answers(rows([(5, 0.9), (10, 0.95)], [(30, 0.85), (50, 0.95)]), 10, 50)
    assert "≈" not in line
    assert "≤ 5 systems at 50 queries" in line and "≤ 30 queries at 10 systems" in line
    # power crosses 0.8 between grid sizes: an interpolated estimate
    (line,) = answers(rows([(5, 0.5), (10, 0.9)], [(30, 0.1), (50, 0.9)]), 10, 50)
    assert "≈ 9 systems at 50 queries" in line and "≈ 48 queries at 10 systems" in line


def test_answers_say_when_the_observed_tau_is_within_its_noise():
    from clir_eval.correlation.design import answers

    rows = [{"target": "map", "a": "bleu", "n_systems": n, "n_queries": q, "power": 0.04, "effect": 0.0}
            for n, q in ((6, 60), (12, 60), (12, 30), (12, 90))]
    (line,) = answers(rows, 12, 60)
    assert "not reachable" in line and "debiased effect 0" in line
    rows = [dict(r, effect=0.1) for r in rows]
    assert "debiased" not in answers(rows, 12, 60)[0]
