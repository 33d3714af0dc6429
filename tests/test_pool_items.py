"""clir-eval pool, item level: the runs' within-item component pooled with tests valid for the crossed
systems x items design (whole-system swaps per run, summed over the runs).

The simulations draw each run from a crossed model: systems and items both random, every item judged by
the same systems. A metric's or the target's value of system s on item i is u_s + v_i + e_si (system
effect, item effect, the system x item part). "No within-item relation" means the e parts of the metrics
and the target are independent (the system and item effects may be shared): the pooled pair test must
reject at most α. A real within-item effect: metric a's e part correlated with the target's."""

from __future__ import annotations

import json
import math
import shutil

import numpy as np
import pytest

from clir_eval.correlation.items import ItemSettings
from clir_eval.pooling.items import interval, statistic, swap_block, swap_part

S_ = ItemSettings()
ALPHA = 0.05


def crossed_run(rng: np.random.Generator, S: int, I: int, sys_eff: bool, item_eff: bool, rho: float = 0.0):
    """(metric a, metric b, target), systems x items. System effects: the metrics and the target share the
    systems' overall quality (loading 1 and 0.8); item effects: every item has a difficulty all three share;
    the within-item parts: the target's and metric a's correlated ``rho``, metric b's independent of both."""
    u = rng.normal(size=(S, 1)) if sys_eff else np.zeros((S, 1))
    v = rng.normal(size=(1, I)) * 1.5 if item_eff else np.zeros((1, I))
    ey = rng.normal(size=(S, I))
    ea = rho * ey + math.sqrt(1 - rho ** 2) * rng.normal(size=(S, I))
    eb = rng.normal(size=(S, I))
    a = u + v + ea + 0.5 * rng.normal(size=(S, 1))
    b = 0.8 * u + v + eb + 0.5 * rng.normal(size=(S, 1))
    y = u + v + ey
    return a, b, y


def pooled_p(rng: np.random.Generator, R: int, sizes, I: int, sys_eff: bool, item_eff: bool, rho: float, k: int,
             rep: int):  # fmt: skip
    """(pooled Δτ statistic, two-sided Monte Carlo p with k draws, 95% interval) of one simulated study."""
    parts = []
    for r in range(R):
        a, b, y = crossed_run(rng, int(sizes[r % len(sizes)]), I, sys_eff, item_eff, rho)
        p = swap_part(a, b, y, 1 / R, (rep, r), S_)
        assert p is not None
        parts.append(p)
    obs = statistic(parts)
    c = int((np.abs(swap_block(parts, 0, k)) >= abs(obs) - 1e-12).sum())
    return obs, (c + 1) / (k + 1), interval(parts, obs, 0.95)


@pytest.mark.parametrize("sys_eff,item_eff", [(True, False), (False, True), (True, True)])
def test_pooled_item_pair_test_holds_its_level_without_a_within_item_relation(sys_eff, item_eff):
    """Null (≥ 100 simulated pooled studies per setting; 3 runs of 8, 12 and 16 systems x 50 items): metric
    a and b relate to the target only through system and item effects. The pooled two-sided test rejects at
    most α + 2 Monte Carlo se. (A per-item shuffle — one system in two items treated as two units — rejects
    far more often under system effects; docs/statistics.md.)"""
    rng = np.random.default_rng(17 + 2 * sys_eff + item_eff)
    reps, k = 120, 199
    rej = cover = 0
    for rep in range(reps):
        obs, p, ci = pooled_p(rng, 3, (8, 12, 16), 50, sys_eff, item_eff, 0.0, k, rep)
        rej += p < ALPHA
        cover += ci[0] <= 0 <= ci[1]
    assert rej / reps <= ALPHA + 2 * math.sqrt(ALPHA * (1 - ALPHA) / reps)
    # the interval (descriptive for coverage; measured figures in docs/pooling.md) covers the null Δτ = 0
    assert cover / reps >= 0.95 - 2 * math.sqrt(0.05 * 0.95 / reps)


def test_pooled_item_pair_test_finds_a_real_within_item_effect():
    """Power: metric a's within-item part correlated 0.4 with the target's (3 runs of 12 systems x 60 items,
    system and item effects as well): the pooled test finds a above b in at least 90% of studies."""
    rng = np.random.default_rng(5)
    reps, k = 40, 199
    found = 0
    for rep in range(reps):
        obs, p, _ = pooled_p(rng, 3, (12,), 60, True, True, 0.4, k, rep)
        found += p < ALPHA and obs > 0
    assert found / reps >= 0.9


def test_swap_block_is_the_sum_of_the_runs_own_swap_draws():
    """A pooled draw is the weighted sum of each run's whole-system swap Δτ with that run's own bits
    (items.system_swap_deltas on swap_bits of its key and block), independent between runs."""
    from clir_eval.correlation.items import swap_bits, system_swap_deltas

    rng = np.random.default_rng(3)
    parts = [swap_part(*crossed_run(rng, S, 30, True, True), w, (9, j), S_) for j, (S, w) in enumerate([(7, .3), (10, .7)])]
    tot = np.zeros(50)
    for p in parts:
        W = swap_bits(np.random.default_rng([*p.key, 4]), (50, p.y.shape[0]))
        tot += p.coef * system_swap_deltas(p.a, p.b, p.y, W, S_)
    assert np.array_equal(swap_block(parts, 4, 50), tot)
    assert not np.array_equal(swap_block(parts, 4, 50), swap_block(parts, 5, 50))


# ---------------------------------------------------------------------------- real runs
@pytest.fixture(scope="module")
def demo_runs(tmp_path_factory):
    """A demo run (item level on: documents and queries) and a second demo run on other generated data (a byte copy
    would be refused: one collection counted twice), plus a run without item level (scores from a table)."""
    from test_pool import make_run

    from clir_eval.cli import main

    tmp = tmp_path_factory.mktemp("pool-items")
    out = tmp / "demo"
    assert main(["demo", "--out", str(out), "--jobs", "1", "--quiet"]) == 0
    copy = tmp / "demo-7"
    assert main(["demo", "--out", str(copy), "--seed", "7", "--jobs", "1", "--quiet"]) == 0
    plain = make_run(tmp, "plain", 1, n=8, metrics=("bleu", "chrf1", "macrof1", "microf1"), targets=("map",))
    return out, copy, plain


def test_item_rows_carry_level_item_and_the_runs_without_item_level_are_named(demo_runs, cli):
    demo, copy, plain = demo_runs
    code, stdout, err = cli("pool", demo, copy, plain, "--format", "json", "--bootstrap", "200")
    assert code == 0, err
    d = json.loads(stdout)
    item_lb = [r for r in d["leaderboard"] if r["level"] == "item"]
    item_pairs = [p for p in d["pairs"] if p["level"] == "item"]
    assert item_lb and item_pairs
    own = [{(c["items"], c["target"], c["mt_metric"]): c["tau"]
            for c in json.loads((d / "results.json").read_text())["item_level"]["correlations"]
            if c["grouping"] == "within"} for d in (demo, copy)]
    for r in item_lb:  # the mean within τ is the two demo runs' mean (equal weights); the third has no item level
        key = r["items"], r["target"], r["metric"]
        if r.get("apart"):
            continue
        assert r["mean_tau"] == pytest.approx((own[0][key] + own[1][key]) / 2, abs=1e-12)
        assert set(r["taus"]) == {str(demo), str(copy)}
    assert any("not in plain" in n and "item level" in n for n in d["notes"])
    docs = [p for p in item_pairs if p["items"] == "documents"]
    assert docs and all(p["p_adjusted"] is not None and p["ci"][0] is not None for p in docs)
    clusters = [r["cluster"] for r in item_lb if r["items"] == "documents"]
    assert clusters[0] == 1 and all(b - a in (0, 1) for a, b in zip(clusters, clusters[1:]))
    queries = [r for r in item_lb if r["items"] == "queries"]  # the runs keep the queries matrix: tested too
    assert queries and all(r["cluster"] is not None and "untested" not in r for r in queries)
    q_pairs = [p for p in item_pairs if p["items"] == "queries"]
    assert q_pairs and all(p["p_adjusted"] is not None and p["ci"][0] is not None for p in q_pairs)
    assert not any("item_documents.json" in n and "queries" in n for n in d["notes"])
    assert any(s.get("level") == "item" for s in d["summary"])
    code, text, err = cli("pool", demo, copy, plain, "--bootstrap", "200")
    assert code == 0, err
    assert "item level, retrievability over documents" in text and "not in plain" not in text
    assert any(ln.startswith("note: ") and "not in plain" in ln for ln in err.splitlines())  # notes: stderr


@pytest.mark.parametrize("name, old, new", [("item_documents.json", '"n_queries":', '"n_queries": 1, "x":'),
                                             ("item_queries.json", '"queries":[', '"queries":["x",')])
def test_a_changed_item_matrix_is_refused_in_one_line_naming_it(demo_runs, tmp_path, cli, name, old, new):
    from conftest import assert_one_line_error

    demo, copy, _ = demo_runs
    bad = tmp_path / "bad"
    shutil.copytree(copy, bad)
    f = bad / name
    f.write_text(f.read_text().replace(old, new, 1))
    code, _, err = cli("pool", demo, bad)
    assert name in assert_one_line_error(code, err, "sha256")


def test_runs_written_before_the_queries_matrix_still_pool_with_queries_untested(demo_runs, tmp_path, cli):
    """A run directory from before item_queries.json (no queries_file entry, no file): its documents are
    tested, its queries' pooled τ is shown untested, with the note."""
    demo, copy, _ = demo_runs
    old = tmp_path / "old"
    shutil.copytree(copy, old)
    res = json.loads((old / "results.json").read_text())
    del res["item_level"]["queries_file"]
    (old / "results.json").write_text(json.dumps(res))
    (old / "item_queries.json").unlink()
    code, stdout, err = cli("pool", demo, old, "--format", "json", "--bootstrap", "200")
    assert code == 0, err
    d = json.loads(stdout)
    item_lb = [r for r in d["leaderboard"] if r["level"] == "item"]
    queries = [r for r in item_lb if r["items"] == "queries"]
    assert queries and all(r["cluster"] is None and r["untested"] for r in queries)
    assert all(r["cluster"] is not None for r in item_lb if r["items"] == "documents")
    assert any("item_documents.json" in n and "queries" in n for n in d["notes"])


def test_one_run_pooled_alone_at_item_level_is_its_own_verdict(demo_runs):
    """The pooled statistic of one run is its own item-level verdict's Δτ (the same within values). (The run's
    item-level pairs are decided by the crossed test of Δτ, the pool's by whole-system swaps: their p-values are
    different tests and are not compared here.)"""
    import clir_eval

    demo = demo_runs[0]
    res = json.loads((demo / "results.json").read_text())
    pooled = clir_eval.pool([demo], bootstrap=200, thresholds=False).to_dict()
    kinds = set()
    for verdict in res["item_level"]["verdicts"]:  # documents (item_documents.json) and queries (item_queries.json)
        if verdict.get("same_as") or not verdict.get("pairwise"):
            continue
        kinds.add(verdict["items"])
        rows = {(p["a"], p["b"]): p for p in pooled["pairs"]
                if p["level"] == "item" and p["items"] == verdict["items"] and p["target"] == verdict["target"]}
        assert len(rows) == len(verdict["pairwise"])
        for w in verdict["pairwise"]:
            p = rows[w["a"], w["b"]]
            assert p["statistic"] == pytest.approx(w["delta"], abs=1e-12)
            assert 0 < p["p_value"] <= 1 and w["p_adjusted"] >= w["p_value"]
    assert kinds == {"documents", "queries"}


def test_system_level_output_does_not_depend_on_the_item_level(demo_runs, tmp_path):
    """Pooling the item level adds rows, never changes a system-level one; markdown and HTML get an item-level
    section only when a run has an item level."""
    import clir_eval
    from clir_eval.pooling.report import html_report, markdown

    demo, copy, plain = demo_runs
    on = clir_eval.pool([demo, copy, plain], bootstrap=200).to_dict()
    off = clir_eval.pool([demo, copy, plain], bootstrap=200, item_level=False).to_dict()
    for k in ("thresholds", "tasks"):
        assert on[k] == off[k]
    assert [r for r in on["leaderboard"] if r["level"] == "system"] == off["leaderboard"]
    assert [r for r in on["pairs"] if r["level"] == "system"] == off["pairs"]
    res = clir_eval.pool([demo, copy], bootstrap=200, thresholds=False)
    assert "## Item level" in markdown(res) and "<h2>Item level</h2>" in html_report(res)
    assert "Item level" not in markdown(clir_eval.pool([plain], bootstrap=200, thresholds=False))
