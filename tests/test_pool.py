"""clir-eval pool: pooled leaderboard, metric pairs and CLIR thresholds over finished runs.

The runs are real runs of tiny configs whose scores come from a table (``external:``), so each
takes about a second; the reference implementations (mt-metrics-eval's AverageCorrMatrix and
AssignRanks, an independent pair count, scipy's optimiser) are written here from their
definitions."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from conftest import assert_one_line_error

from clir_eval.correlation.statistics import ResampleBlock, perm_both_setup, resample_block

METRICS = ("bleu", "chrf1", "macrof1", "microf1")


def _table(path: Path, rng: np.random.Generator, n: int, metrics, targets, noise=(0.5, 0.8, 1.1, 1.4)) -> list[str]:
    names = [f"sys{i:02d}" for i in range(n)]
    q = rng.normal(size=n)
    cols = {m: 30 + 10 * (q + rng.normal(size=n) * noise[i % len(noise)]) for i, m in enumerate(metrics)}
    for t in targets:
        cols[t] = 0.5 + 0.1 * (q + rng.normal(size=n) * 0.7)
    head = ["system", *cols]
    lines = ["\t".join(head)] + ["\t".join([s, *(repr(float(cols[c][i])) for c in cols)]) for i, s in enumerate(names)]
    path.write_text("\n".join(lines) + "\n")
    return names


def make_run(tmp: Path, name: str, seed: int, n: int = 8, metrics=METRICS, targets=("map", "rbo"),
             attrs: dict | None = None, resolution: str = "sequential", rseed: int = 13) -> Path:  # fmt: skip
    """A finished run of a config whose MT and IR scores come from a generated table."""
    from clir_eval.config.load import load_config
    from clir_eval.pipeline.run import run_experiment

    d = tmp / name
    d.mkdir()
    names = _table(d / "scores.tsv", np.random.default_rng(seed), n, metrics, targets)
    a = {"lang": name[:2], **(attrs or {})}
    systems = "\n".join(f"  - {{name: {s}, attrs: {{{', '.join(f'{k}: {v}' for k, v in a.items())}}}}}" for s in names)
    cfg = d / "c.yaml"
    cfg.write_text(f"""name: {name}
seed: {rseed}
jobs: 1
systems:
{systems}
external:
  - file: scores.tsv
    kind: mt
    columns: [{', '.join(metrics)}]
  - file: scores.tsv
    kind: ir
    columns: [{', '.join(targets)}]
correlation:
  bootstrap: 1000
  permutation: 1000
  resolution: {resolution}
  seed: {rseed}
""")
    out = d / "out"
    run_experiment(load_config(cfg), out, quiet=True)
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> list[Path]:
    tmp = tmp_path_factory.mktemp("pool")
    return [make_run(tmp, "aa", 1, n=8), make_run(tmp, "bb", 2, n=11, rseed=5), make_run(tmp, "cc", 3, n=9, rseed=7)]


def _results(d: Path) -> dict:
    return json.loads((d / "results.json").read_text())


def _tau(res: dict, x: str, y: str) -> float:
    return next(c["tau"] for c in res["correlations"] if c["x"] == x and c["y"] == y)


def test_mean_tau_is_the_mean_of_the_runs_own_tau(runs):
    from clir_eval.pooling import pool

    res = pool(runs, bootstrap=200)
    rs = [_results(d) for d in runs]
    rows = [r for r in res.leaderboard if r["cluster"] is not None]
    assert {(r["target"], r["metric"]) for r in rows} == {(t, m) for t in ("map", "rbo") for m in METRICS}
    for r in rows:
        own = [_tau(x, r["metric"], r["target"]) for x in rs]
        assert r["mean_tau"] == pytest.approx(float(np.mean(own)), abs=1e-15)
        assert list(r["taus"].values()) == own
        assert r["n_tasks"] == 3
    for t in ("map", "rbo"):  # clusters numbered from 1, +1 per new cluster, down the ranking by mean tau
        trows = [r for r in rows if r["target"] == t]
        assert [r["mean_tau"] for r in trows] == sorted((r["mean_tau"] for r in trows), reverse=True)
        cl = [r["cluster"] for r in trows]
        assert cl[0] == 1 and all(b - a in (0, 1) for a, b in zip(cl, cl[1:]))


def test_one_run_pooled_alone_gives_its_own_verdicts(tmp_path):
    """The pooled draws are the run's own (its seeds, its blocks): with the run's Monte Carlo draws
    (resolution fixed) and its sidedness, p, adjusted p and clusters agree. The CI is the pooled one (Sen's
    variance, normal), here computed from its definition with loops over the systems."""
    from clir_eval.pooling import pool

    d = make_run(tmp_path, "solo", 2, n=11, rseed=5, resolution="fixed")
    own = _results(d)["verdicts"]
    two = "two-sided" in own[0]["test"]
    res = pool([d], bootstrap=1000, two_sided=two, thresholds=False)
    for v in own:
        mine = {(p["a"], p["b"]): p for p in res.pairs if p["target"] == v["target"]}
        for p in v["pairwise"]:
            q = mine[(p["a"], p["b"])]
            assert q["p_value"] == p["p_value"] and q["p_adjusted"] == p["p_adjusted"]
            assert q["ci"] == pytest.approx(_sen_interval(d, v["target"], p["a"], p["b"], q["statistic"]), abs=1e-12)
        cl = {r["metric"]: r["cluster"] for r in res.leaderboard if r["target"] == v["target"]}
        assert [[m for m in v["ranking"] if cl[m] == i + 1] for i in range(len(v["clusters"]))] == v["clusters"]


def _sen_interval(d: Path, target: str, a: str, b: str, est: float) -> list[float]:
    """est ± 1.96·se, se² = Sen's (1960) estimate for the U-statistic τ-b(a) − τ-b(b) (no ties here: τ-a):
    4/n · sample variance over systems i of ψ_i = mean over j ≠ i of the pair's kernel."""
    from clir_eval.pooling.runs import load_run

    run = load_run(d)
    x1, x2, y = (run.column(c).tolist() for c in (a, b, target))
    n = len(y)
    sg = lambda v: (v > 0) - (v < 0)  # noqa: E731
    psi = [sum((sg(x1[i] - x1[j]) - sg(x2[i] - x2[j])) * sg(y[i] - y[j]) for j in range(n) if j != i) / (n - 1)
           for i in range(n)]
    u = sum(psi) / n
    se = math.sqrt(4 / n * sum((p - u) ** 2 for p in psi) / (n - 1))
    return [est - 1.959963984540054 * se, est + 1.959963984540054 * se]


# ---------------------------------------------------------------------------- mt-metrics-eval, from its definitions
def _mtme_average_corr_matrix(corrs: list[dict[str, float]], draws, weights, pval):
    """tasks.py TaskSetResults.AverageCorrs + AverageCorrMatrix (range (-1, 1) mapped to (0, 1)) and
    data.py AssignRanks, re-implemented from their definitions. ``draws[k][(m1, m2)]``: task k's
    (corr1, corr2) resampling draws of m1 versus m2."""
    avg = {}
    for m in corrs[0]:
        avg[m] = sum(w * (c[m] + 1) / 2 for c, w in zip(corrs, weights))
    avg = dict(sorted(avg.items(), key=lambda x: -x[1]))
    metrics = list(avg)
    n = len(metrics)
    sig = np.zeros((n, n))
    for i in range(n):
        for j in range(i + 1, n):
            m1, m2 = metrics[i], metrics[j]
            diff = avg[m1] - avg[m2]
            per_task = []
            for k, w in enumerate(weights):
                d = draws[k][(m1, m2)]
                d = w * (d + 1) / 2
                per_task.append(d[:, 0] - d[:, 1])
            sig[i, j] = np.mean(np.sum(per_task, axis=0) >= diff)
    ranks, cur, start = [0] * n, 1, 0
    for i in range(n):
        if any(sig[:, i][start:i] <= pval):
            cur += 1
            start = i
        ranks[i] = cur
    return metrics, ranks, sig


def test_clusters_equal_mt_metrics_eval_average_corr_matrix(tmp_path):
    """Fixed draws, no correction: the pooled clusters are AverageCorrMatrix + AssignRanks fed the
    same per-run PERM-BOTH draws (each run's stream seeded from its identity and the pool's seed, the draws
    scaled by √(n/(n−1)): tests/test_pool_level.py)."""
    from clir_eval.pooling import pool
    from clir_eval.pooling.core import stream_seed, swap_scale
    from clir_eval.pooling.runs import load_run, run_identity

    dirs = [make_run(tmp_path, f"r{i}", 20 + i, n=7 + i, resolution="fixed", targets=("map",)) for i in range(3)]
    res = pool(dirs, correction="none", bootstrap=200, thresholds=False, two_sided=False)
    rl = [load_run(d) for d in dirs]
    corrs = [r.taus["map"] for r in rl]
    draws = []
    for r in rl:
        dd = {}
        for (t, a, b), seed in r.seeds.items():
            setup = perm_both_setup(r.column(a), r.column(b), r.column(t), "kendall", "b")
            stream = stream_seed(run_identity(r), 13, seed)
            diff = swap_scale(len(setup[0])) * resample_block(ResampleBlock("permutation", setup[:3], "kendall", "b",
                                                                           stream, 0, 1000))
            # (corr1, corr2) pairs whose difference is the draw; mt-metrics-eval only uses the difference
            pair = np.stack([diff, np.zeros_like(diff)], axis=1)
            dd[(a, b)] = pair
            dd[(b, a)] = pair[:, [1, 0]]  # as TaskResults.Draws for the reversed order
        draws.append(dd)
    metrics, ranks, sig = _mtme_average_corr_matrix(corrs, draws, [1 / 3] * 3, 0.05)
    mine = [r for r in res.leaderboard if r["target"] == "map"]
    assert [r["metric"] for r in mine] == metrics
    assert [r["cluster"] for r in mine] == ranks
    pos = {m: i for i, m in enumerate(metrics)}
    for p in (p for p in res.pairs if p["target"] == "map"):
        k = p["draws"]
        theirs = sig[pos[p["a"]], pos[p["b"]]]
        assert k == 1000
        assert abs(p["p_value"] * (k + 1) - 1 - theirs * k) <= 1  # (c+1)/(k+1) against c/k: the same c
    assert len({r["cluster"] for r in mine}) >= 1


def test_assign_weights_as_mt_metrics_eval(runs, tmp_path):
    """AssignWeights: even over the first attribute's values, then within; mean τ is the weighted mean."""
    from clir_eval.pooling import assign_weights, pool
    from clir_eval.pooling.runs import load_run

    extra = make_run(tmp_path, "aa2", 9, n=6)  # a second run with lang "aa"
    rl = [load_run(d) for d in [*runs, extra]]
    assert assign_weights(rl, ["lang"]) == [1 / 6, 1 / 3, 1 / 3, 1 / 6]
    assert assign_weights(rl, []) == [0.25] * 4
    res = pool([*runs, extra], weights="lang", bootstrap=200, thresholds=False)
    row = next(r for r in res.leaderboard if r["target"] == "map" and r["metric"] == "bleu")
    own = [r.taus["map"]["bleu"] for r in rl]
    assert row["mean_tau"] == pytest.approx(sum(w * t for w, t in zip([1 / 6, 1 / 3, 1 / 3, 1 / 6], own)), abs=1e-15)


def test_different_metric_sets_targets_and_system_counts(tmp_path, runs):
    from clir_eval.pooling import pool

    odd = make_run(tmp_path, "dd", 4, n=5, metrics=("bleu", "chrf1", "ter_like"), targets=("map", "ndcg"))
    res = pool([*runs, odd], bootstrap=200, thresholds=False)
    ranked = {r["metric"] for r in res.leaderboard if r["target"] == "map" and r["cluster"] is not None}
    assert ranked == {"bleu", "chrf1"}
    apart = {r["metric"]: r for r in res.leaderboard if r["target"] == "map" and r["cluster"] is None}
    assert set(apart) == {"macrof1", "microf1", "ter_like"}
    assert apart["ter_like"]["missing"] == [str(d) for d in runs] and apart["ter_like"]["n_tasks"] == 1
    assert any("ndcg: only in run" in w and "NOT POOLED" in w for w in res.warnings)
    assert any(n.startswith("rbo: pooled over the 3 runs") and n.endswith("not in dd") for n in res.notes)
    assert any("macrof1 is not in every run" in n for n in res.notes)
    assert not any(r["target"] == "ndcg" for r in res.leaderboard)


# ---------------------------------------------------------------------------- thresholds
def test_threshold_accuracy_is_an_independent_count(runs):
    from clir_eval.pooling import pool

    res = pool(runs, bootstrap=200)
    rs = [_results(d) for d in runs]
    for m in METRICS:
        for t in ("map", "rbo"):
            agree = total = 0
            for d, r in zip(runs, rs):
                sy = list(r["systems"].values())
                a_run = t_run = 0
                for i in range(len(sy)):
                    for j in range(i + 1, len(sy)):
                        dt = sy[j]["ir"][t] - sy[i]["ir"][t]
                        if dt == 0:
                            continue
                        dm = sy[j]["mt"][m] - sy[i]["mt"][m]
                        t_run += 1
                        a_run += (dm > 0 and dt > 0) or (dm < 0 and dt < 0)
                row = next(x for x in res.thresholds if x.get("run") == str(d) and x["metric"] == m and x["target"] == t)
                assert row["n_pairs"] == t_run and row["accuracy"] == pytest.approx(a_run / t_run, abs=1e-15)
                agree += a_run
                total += t_run
            pooled = next(x for x in res.thresholds if "run" not in x and x["metric"] == m and x["target"] == t)
            assert pooled["n_pairs"] == total and pooled["accuracy"] == pytest.approx(agree / total, abs=1e-15)


def test_metric_ties_disagree_and_target_ties_are_left_out():
    from clir_eval.pooling.thresholds import accuracy, pair_deltas

    x = np.array([1.0, 1.0, 2.0, 3.0])
    y = np.array([0.1, 0.2, 0.2, 0.1])
    i, j, dx, dy = pair_deltas(x, y)
    # pairs: (0,1) metric tie, target up: disagreement; (1,2) target tie: out; (0,3) target tie: out
    assert list(zip(i, j)) == [(0, 1), (0, 2), (1, 3), (2, 3)]
    assert accuracy(dx, dy) == pytest.approx(1 / 4)  # only (0,2) agrees


def test_logistic_fit_equals_scipy():
    import scipy.optimize

    from clir_eval.pooling.thresholds import delta_at, fit_beta, oriented

    rng = np.random.default_rng(5)
    dx = rng.normal(size=300) * 3
    dy = np.where(rng.random(300) < 1 / (1 + np.exp(-0.8 * dx)), 1.0, -1.0)
    x, y = oriented(dx, dy)
    w = rng.integers(0, 3, size=(4, len(x))).astype(float)

    def nll(b, ww):
        z = b * x
        return float(np.sum(ww * (np.logaddexp(0, -z) * y + np.logaddexp(0, z) * (1 - y))))

    ref = scipy.optimize.minimize_scalar(lambda b: nll(b, np.ones_like(x)), bounds=(-20, 20), method="bounded",
                                         options={"xatol": 1e-12}).x
    assert fit_beta(x, y)[0] == pytest.approx(ref, rel=1e-6)
    for row, b in zip(w, fit_beta(x, y, w)):
        rb = scipy.optimize.minimize_scalar(lambda v: nll(v, row), bounds=(-20, 20), method="bounded",
                                            options={"xatol": 1e-12}).x
        assert b == pytest.approx(rb, rel=1e-6)
    assert delta_at(ref, 0.9) == pytest.approx(math.log(9) / ref)
    assert delta_at(-0.1, 0.9) is None
    # separated: every pair with a positive delta agrees -> no finite slope
    assert fit_beta(np.array([1.0, 2.0]), np.array([1.0, 1.0]))[0] == math.inf


# ---------------------------------------------------------------------------- calibration
def test_pooled_test_and_ci_hold_their_level_under_exchangeable_metrics():
    """Null simulation keeping the structure (the same systems judged by both metrics, per run):
    metrics a and b are exchangeable noisy copies of the target. The pooled two-sided test rejects at
    most about α; the pooled Δτ CI covers the true Δτ = 0."""
    from clir_eval.pooling.core import POOLED_KIND, _pooled_block, pooled_interval, swap_scale, tau_parts

    rng = np.random.default_rng(3)
    reps, k, R, n = 80, 400, 3, 9
    rej = cover = 0
    for rep in range(reps):
        parts, obs, ci_parts = [], 0.0, []
        for r in range(R):
            y = rng.normal(size=n)
            a, b = y + rng.normal(size=n), y + rng.normal(size=n)
            s = perm_both_setup(a, b, y, "kendall", "b")
            parts.append((s[:3], "kendall", "b", 100 * rep + r, swap_scale(n) / R))  # as the pool scales them
            obs += s[3] / R
            ci_parts.append((1 / R, tau_parts(a, y, None, "kendall", "b", k, rep), tau_parts(b, y, None, "kendall", "b", k, rep)))
        null = _pooled_block(ResampleBlock(POOLED_KIND, (tuple(parts), obs), "kendall", "b", 0, 0, k))
        rej += ((np.abs(null) >= abs(obs) - 1e-12).sum() + 1) / (k + 1) < 0.05
        lo, hi = pooled_interval(obs, ci_parts, 0.95)
        cover += lo <= 0 <= hi
    assert rej / reps <= 0.05 + 2 * math.sqrt(0.05 * 0.95 / reps)
    assert cover / reps >= 0.95 - 2 * math.sqrt(0.05 * 0.95 / reps)


def test_pooled_delta_interval_covers_95_percent_of_fresh_pooled_studies():
    """Coverage (scripts/sim_pool_coverage.py has more settings): pooled studies of three runs of 10 systems from
    a known model (target = quality + noise; metric a closer to the quality than b, so Δτ ≈ +0.2). Estimand: the
    pooled Δτ's expectation over fresh studies (new systems in every run), from 20,000 of them. Over 2000 studies
    (Monte Carlo se 0.005) the 95% interval must cover 93-97% (measured: 95.6%) and the 90% one (the equivalence
    test's) 87-95% (91.5%). The percentile interval used before covered about 98% here."""
    from clir_eval.correlation.items import coef_rows
    from clir_eval.pooling.core import pooled_interval, tau_parts

    rng = np.random.default_rng(2028)
    n, R, sa, sb = 10, 3, 0.4, 1.2

    def run(count):
        mu = rng.normal(size=(count, n))
        return mu + sa * rng.normal(size=(count, n)), mu + sb * rng.normal(size=(count, n)), mu + 0.7 * rng.normal(size=(count, n))

    a, b, y = run(20000)
    truth = float(np.mean(coef_rows(a, y, "kendall", "b") - coef_rows(b, y, "kendall", "b")))
    studies = 2000
    a, b, y = run(studies * R)
    d = coef_rows(a, y, "kendall", "b") - coef_rows(b, y, "kendall", "b")
    hit95 = hit90 = 0
    for s in range(studies):
        rows = range(s * R, (s + 1) * R)
        parts = [(1 / R, tau_parts(a[i], y[i], None, "kendall", "b", 0, 0), tau_parts(b[i], y[i], None, "kendall", "b", 0, 0))
                 for i in rows]
        est = float(np.mean(d[list(rows)]))
        lo, hi = pooled_interval(est, parts, 0.95)
        hit95 += lo <= truth <= hi
        lo, hi = pooled_interval(est, parts, 0.90)
        hit90 += lo <= truth <= hi
    assert 0.93 <= hit95 / studies <= 0.97, hit95 / studies
    assert 0.87 <= hit90 / studies <= 0.95, hit90 / studies


# ---------------------------------------------------------------------------- CLI
def test_cli_json_contract_and_reports(runs, tmp_path, cli):
    out = tmp_path / "pooled"
    code, stdout, err = cli("pool", *runs, "--out", out, "--format", "json", "--bootstrap", "200")
    assert code == 0, err
    d = json.loads(stdout)
    assert set(d) >= {"leaderboard", "pairs", "thresholds", "tasks"}
    assert set(d["leaderboard"][0]) >= {"target", "metric", "mean_tau", "cluster", "n_tasks", "taus"}
    assert set(d["pairs"][0]) >= {"target", "a", "b", "delta", "ci", "p_adjusted", "significant", "equivalent"}
    assert len(d["pairs"][0]["ci"]) == 2
    th = d["thresholds"]
    assert set(th[0]) >= {"metric", "target", "n_pairs", "accuracy", "delta_at"}
    assert set(th[0]["delta_at"]) == {"0.8", "0.9", "0.95"}
    assert any("run" not in r for r in th) and any("run" in r for r in th)
    assert [t["run"] for t in d["tasks"]] == [str(r) for r in runs]
    for p in d["pairs"]:
        assert p["delta"] == pytest.approx(
            next(r["mean_tau"] for r in d["leaderboard"] if r["target"] == p["target"] and r["metric"] == p["a"])
            - next(r["mean_tau"] for r in d["leaderboard"] if r["target"] == p["target"] and r["metric"] == p["b"]))
    assert json.loads((out / "report.json").read_text())["leaderboard"] == d["leaderboard"]
    md = (out / "report.md").read_text()
    assert md.index("## Answer") < md.index("## map") and "thresholds_bleu.png" in md
    assert (out / "thresholds_bleu.png").read_bytes()[:4] == b"\x89PNG"
    assert "<table>" in (out / "report.html").read_text()


def test_cli_errors_are_one_line(runs, tmp_path, cli):
    code, _, err = cli("pool", runs[0], tmp_path)
    assert_one_line_error(code, err, r"results\.json: not found")
    bad = tmp_path / "half"
    bad.mkdir()
    res = _results(runs[0])
    del res["verdicts"]
    (bad / "results.json").write_text(json.dumps(res))
    code, _, err = cli("pool", runs[0], bad)
    assert_one_line_error(code, err, r"verdicts are missing")
    code, _, err = cli("pool", runs[0], runs[0])
    assert_one_line_error(code, err, "given twice")
    code, _, err = cli("pool", *runs, "--weights", "nope")
    assert_one_line_error(code, err, "--weights nope")
    code, _, err = cli("pool", *runs, "--correction", "sidak")
    assert_one_line_error(code, err, "--correction")
    (tmp_path / "afile").write_text("x")
    code, _, err = cli("pool", *runs, "--out", tmp_path / "afile")
    assert_one_line_error(code, err, "afile")


def test_fast_perm_both_block_is_the_run_engines_block():
    """The pooled test's Kendall τ-b block gives the run engine's floats bit for bit (ties included)."""
    from clir_eval.pooling.core import run_block

    rng = np.random.default_rng(11)
    for t in range(120):
        n = int(rng.integers(3, 45))
        a, b, g = rng.normal(size=n), rng.normal(size=n), rng.normal(size=n)
        if t % 3 == 0:
            a, b, g = np.round(a), np.round(b * 2) / 2, np.round(g)
        s = perm_both_setup(a, b, g, "kendall", "b")
        if s is None:
            continue
        ref = resample_block(ResampleBlock("permutation", s[:3], "kendall", "b", 5 + t, t % 4, 700))
        assert np.array_equal(run_block(s[:3], "kendall", "b", 5 + t, t % 4, 700), ref)


def test_fast_bootstrap_draws_are_the_run_engines():
    from clir_eval.correlation.statistics import resample_draws
    from clir_eval.pooling.core import systems_tau_b_draws

    rng = np.random.default_rng(12)
    for t in range(40):
        n = int(rng.integers(3, 35))
        x, y = rng.normal(size=n), rng.normal(size=n)
        if t % 3 == 0:
            x, y = np.round(x), np.round(y)
        ref = resample_draws("systems", (x, y), "kendall", "b", 1500, 3 + t, None)
        assert np.array_equal(systems_tau_b_draws(x, y, 1500, 3 + t), ref, equal_nan=True)


def test_python_api_name(runs):
    import clir_eval
    from clir_eval.pooling import pool

    assert clir_eval.pool is pool and "pool" in clir_eval.__all__
    res = clir_eval.pool(runs[:2], bootstrap=200, thresholds=False)
    assert isinstance(res, clir_eval.PoolResult) and res.to_dict()["tasks"][0]["run"] == str(runs[0])
