"""Verdicts whose answer the data decides, not the number of draws: sequential Monte Carlo tests
against exact enumeration, the must-hold case (a metric equal to the target beats pure noise at
default settings), the resolution floor stated when a fixed count forbids significance, one test
for comparisons and verdicts, Δτ CIs, power for Pearson, constant targets, Williams' test."""

from __future__ import annotations

import itertools
import json
import re

import numpy as np
import pytest
import scipy.stats

from clir_eval.correlation.driver import ScoreTable, Target, correlate_pairs, min_significant, verdicts, williams_p
from clir_eval.correlation.settings import StatsSettings, VerdictSettings
from clir_eval.correlation.significance import adjust, clopper_pearson, max_draws, p_floor
from clir_eval.report.blocks import blocks_markdown
from clir_eval.report.verdicts import verdict_blocks


def _target(cols, y="y", per_query=None, s=StatsSettings(), name=None):
    systems = tuple(f"s{i}" for i in range(len(cols[y])))
    table = ScoreTable(systems, {k: np.asarray(v, float) for k, v in cols.items()}, per_query)
    res = correlate_pairs(table, [(x, y) for x in cols if x != y], s)
    return Target(y, "ir" if per_query else "table", name, table, tuple(res))


# --------------------------------------------------------------------------- the must-hold case
def _signal_table(path, seed=2024, groups=20, n=15):
    rng = np.random.default_rng(seed)
    rows = ["g\tsys\tA\tB\tC\tD\ty"]
    for g in range(groups):
        y = rng.normal(size=n)
        for i in range(n):
            b, c, d = rng.normal(size=3)
            rows.append(f"g{g}\ts{i}\t{y[i]:.6f}\t{b:.6f}\t{c:.6f}\t{d:.6f}\t{y[i]:.6f}")
    path.write_text("\n".join(rows) + "\n")


def test_a_metric_equal_to_the_target_beats_noise_at_default_settings(cli, tmp_path):
    """20 groups x 15 systems; A = the target, B, C, D pure noise: A alone in the first cluster in
    at least 18 of 20 groups with `correlate --verdicts` at its defaults."""
    _signal_table(tmp_path / "t.tsv")
    code, out, err = cli("correlate", "--table", tmp_path / "t.tsv", "--x", "A,B,C,D", "--y", "y", "--group-by", "g",
                         "--verdicts", "--format", "json")
    assert code == 0, err
    vds = json.loads(out)["verdicts"]
    rows = json.loads(out)["correlations"]
    assert all(len(r["systems"]) == r["n"] == 15 for r in rows)  # every τ states the systems it used
    assert len(vds) == 20
    wins = sum(v["clusters"][0] == ["A"] for v in vds)
    assert wins >= 18, [v["clusters"] for v in vds]
    assert all(v["resolution"]["floor"] <= 0.05 * 0.05 + 1e-12 for v in vds)  # far below alpha
    assert not any(w for v in vds for w in v["warnings"])
    # noise vs noise: Holm keeps each group's family-wise error <= alpha, so few of the 20 groups
    # separate two noise metrics (P(>= 5 of 20) < .003 at alpha = .05)
    noise = {v["group"] for v in vds for p in v["pairwise"] if "A" not in (p["a"], p["b"]) and p["significant"]}
    assert len(noise) <= 4


def test_a_fixed_count_that_forbids_significance_says_so_everywhere(cli, tmp_path):
    """--resolution fixed with 1000 draws over one family of 120 tests: the smallest Holm-adjusted p is
    120/1001 > alpha; every format says so (JSON warning, Markdown, LaTeX)."""
    _signal_table(tmp_path / "t.tsv")
    args = ["correlate", "--table", tmp_path / "t.tsv", "--x", "A,B,C,D", "--y", "y", "--group-by", "g",
            "--verdicts", "--family", "all", "--resolution", "fixed"]
    code, out, err = cli(*args, "--format", "json")
    assert code == 0, err
    vds = json.loads(out)["verdicts"]
    assert vds[0]["resolution"]["floor"] == pytest.approx(120 / 1001)
    assert not any(p["significant"] for v in vds for p in v["pairwise"])
    assert all(any("NO PERM-BOTH RESULT CAN BE SIGNIFICANT AT THIS RESOLUTION" in w and "0.12" in w
                   for w in v["warnings"]) for v in vds)
    for fmt in ("md", "latex"):
        code, text, err = cli(*args, "--format", fmt)
        assert code == 0 and "NO PERM-BOTH RESULT CAN BE SIGNIFICANT AT THIS RESOLUTION" in text, err


def test_floor_and_cap():
    assert p_floor(75, 1000, "holm") == pytest.approx(75 / 1001)
    assert p_floor(75, 1000, "none") == pytest.approx(1 / 1001)
    for m in (1, 6, 75, 171):
        k = max_draws(m, 0.05, "holm", 1000)
        assert p_floor(m, k, "holm") <= 0.05 * 0.05 and (k - 1000) % 1000 == 0
    assert max_draws(6, 0.05, "holm", 50_000) == 50_000  # never fewer than asked for


# --------------------------------------------------------------------------- sequential vs exact
def _perm_both_exact(a, b, g):
    a, b = scipy.stats.zscore(a), scipy.stats.zscore(b)
    tau = lambda x: scipy.stats.kendalltau(x, g).statistic  # noqa: E731
    delta = tau(a) - tau(b)  # two-sided, as the verdicts: |Δ| reaches the observed |Δ|
    hits = sum(abs(tau(np.where(s, b, a)) - tau(np.where(s, a, b))) >= abs(delta) - 1e-12
               for s in map(np.array, itertools.product([False, True], repeat=len(a))))
    return hits / 2 ** len(a)


@pytest.mark.parametrize("case", range(4))
def test_sequential_decisions_equal_the_exact_decisions(case):
    """8 systems (256 swap patterns: exact PERM-BOTH p by enumeration), 4 metrics of varying quality:
    the Holm decisions of the sequential test equal Holm on the exact p-values."""
    rng = np.random.default_rng(300 + case)
    n = 8
    y = rng.normal(size=n)
    cols = {"y": y, "a": y + rng.normal(scale=0.05, size=n), "b": y + rng.normal(scale=0.6, size=n),
            "c": rng.normal(size=n), "d": rng.normal(size=n)}
    (v,) = verdicts([_target(cols)], [], StatsSettings(seed=case), VerdictSettings(1000, "holm", ci_resamples=0))
    tested = [p for p in v["pairwise"] if p["p_value"] is not None]
    exact = [_perm_both_exact(np.asarray(cols[p["a"]]), np.asarray(cols[p["b"]]), y) for p in tested]
    want = [q < 0.05 for q in adjust(exact, "holm")]
    got = [p["significant"] for p in tested]
    assert got == want, (exact, [p["p_value"] for p in tested])
    for p, e, q in zip(tested, exact, adjust(exact, "holm")):
        assert abs(p["p_value"] - e) <= 5 * p["p_se"] + 2 / p["resamples"]
        # only a decision whose exact adjusted p is within Monte Carlo error of alpha (Holm multiplies
        # p by at most 6 here) may stay open at the maximum draws
        assert p["settled"] or (abs(q - 0.05) < 4 * 6 * p["p_se"] and p["resamples"] == max_draws(6, 0.05, "holm", 1000))


def test_clopper_pearson_matches_scipy():
    for c, n in ((0, 1000), (3, 1000), (500, 1000), (1000, 1000), (17, 4000)):
        lo, hi = clopper_pearson(np.array([c]), np.array([n]), 1e-3)
        ref = scipy.stats.binomtest(c, n).proportion_ci(confidence_level=1 - 1e-3, method="exact")
        assert lo[0] == pytest.approx(ref.low, abs=1e-9) and hi[0] == pytest.approx(ref.high, abs=1e-9)


def test_sequential_results_are_identical_serial_and_on_a_pool():
    from clir_eval.correlation.statistics import batched
    from clir_eval.pipeline.executor import LocalExecutor

    rng = np.random.default_rng(7)
    y = rng.normal(size=12)
    pq = rng.uniform(0, 1, (12, 20)) + y[:, None] * 0.1
    cols = {"y": pq.mean(axis=1), "a": pq.mean(axis=1) + rng.normal(scale=0.01, size=12),
            "b": rng.normal(size=12), "c": pq.mean(axis=1) + rng.normal(scale=0.05, size=12),
            "d": rng.normal(size=12), "e": pq.mean(axis=1) + rng.normal(scale=0.03, size=12)}
    t = _target(cols, per_query=lambda name, systems: pq[[int(s[1:]) for s in systems]])
    v = VerdictSettings(1000, "holm")
    serial = json.dumps(verdicts([t], [], StatsSettings(resamples=300), v))
    (w,) = json.loads(serial)
    assert max(w["discriminability"]["resolution"]["draws"]) > 1000  # more than one round
    with LocalExecutor(2) as ex:
        pooled = batched(lambda m: verdicts([t], [], StatsSettings(resamples=300), v, m), ex.map, chunks=4, min_cost=0)
    assert json.dumps(pooled) == serial


# --------------------------------------------------------------------------- one test, honest n, power
def test_comparisons_are_the_verdicts_tests():

    from clir_eval.correlation import driver
    from clir_eval.correlation.settings import CorrelationInputs, CorrelationSettings

    rng = np.random.default_rng(21)
    sys_results = {}
    for s in range(7):
        pq = {f"q{i}": {"map": float(np.clip(s / 10 + rng.normal(0, .2), 0, 1))} for i in range(20)}
        sys_results[f"sys{s}"] = {"mt": {"bleu": 20 + 3 * s + float(rng.normal(0, 2)), "chrf": float(rng.normal()),
                                         "ter": 60 - 2 * s + float(rng.normal(0, 3))},
                                  "ir": {"map": float(np.mean([v["map"] for v in pq.values()]))},
                                  "ir_per_query": pq, "human": {}}
    kinds = {"mt": ["bleu", "chrf", "ter"], "ir": ["map"], "human": [], "lower_is_better": ["ter"]}
    cfg = CorrelationInputs(CorrelationSettings(bootstrap=200, permutation=1000))
    res = driver.correlate_run(cfg, sys_results, kinds)
    (v,) = res["verdicts"]
    pw = {(p["a"], p["b"]): p for p in v["pairwise"]}
    assert len(res["comparisons"]) == 2
    for c in res["comparisons"]:
        p = pw[(c["metric_a"], c["metric_b"])]
        assert c["metric_a"] == v["ranking"][0]
        assert (c["delta"], c["p_value"], c["p_adjusted"], c["significant"]) == (
            p["delta"], p["p_value"], p["p_adjusted"], p["significant"])
        assert c["systems"] == p["systems"] and c["family"] == v["family"]
    for p in v["pairwise"]:
        assert p["delta_ci"][0] <= p["delta"] <= p["delta_ci"][1] or p["delta_ci"][0] > p["delta"] - 1
        assert p["delta_ci_method"].startswith("crossed (systems and queries random)") and len(p["systems"]) == p["n"] == 7


def test_delta_ci_over_systems_equals_a_plain_paired_loop():
    rng = np.random.default_rng(11)
    n, k = 9, 300
    y = rng.normal(size=n)
    cols = {"y": y, "a": y + rng.normal(scale=0.3, size=n), "b": y + rng.normal(scale=1.0, size=n)}
    (v,) = verdicts([_target(cols)], [], StatsSettings(resamples=k, seed=5), VerdictSettings(200, ci_resamples=k))
    (p,) = v["pairwise"]
    a, b = (cols[p["a"]], cols[p["b"]])
    idx = np.random.default_rng(5).integers(0, n, (k, n))
    diffs = []
    for i in idx:
        ta, tb = scipy.stats.kendalltau(a[i], y[i]).statistic, scipy.stats.kendalltau(b[i], y[i]).statistic
        if not (np.isnan(ta) or np.isnan(tb)):
            diffs.append(ta - tb)
    assert p["delta_ci"] == pytest.approx(list(np.percentile(diffs, [2.5, 97.5])), abs=1e-9)
    assert p["delta_ci_method"] == "bootstrap over systems"


def test_missing_cells_state_the_systems_each_test_used():
    rng = np.random.default_rng(3)
    y = np.arange(10.0)
    a = y + rng.normal(scale=0.2, size=10)
    b = rng.normal(size=10)
    b[[1, 4]] = np.nan
    (v,) = verdicts([_target({"y": y, "a": a, "b": b})], [], StatsSettings(), VerdictSettings(500, ci_resamples=0))
    (p,) = v["pairwise"]
    assert p["n"] == 8 and p["systems"] == [f"s{i}" for i in range(10) if i not in (1, 4)]
    assert v["n_systems_range"] == [8, 10]
    assert any("missing scores" in n and "b n = 8" in n for n in v["notes"])


def test_constant_target_is_uninformative_with_its_reason():
    (v,) = verdicts([_target({"y": [2.0] * 6, "a": [1, 2, 3, 4, 5, 6.0], "b": [6, 5, 4, 3, 2, 1.0]})], [],
                    StatsSettings(), VerdictSettings(200))
    assert v["informative"] is False and v["ranking"] == []
    assert any("all tied" in w for w in v["warnings"])


def test_pearson_power_and_the_markdown_say_the_truth():
    """min significant |r| from the t distribution: r just above it has p < alpha, just below p >= alpha;
    acc23 says 'power not computed' (not 'no |τ| can be significant')."""
    for n in (5, 12, 30):
        r_crit, why = min_significant(n, StatsSettings("pearson", None))
        assert why is None
        rng = np.random.default_rng(n)
        x = scipy.stats.zscore(rng.normal(size=n))
        z = rng.normal(size=n)
        z = scipy.stats.zscore(z - (z @ x) / (x @ x) * x)  # orthogonal to x

        def p_at(r):
            return scipy.stats.pearsonr(x, r * x + np.sqrt(1 - r * r) * z).pvalue

        assert p_at(r_crit + 1e-6) < 0.05 <= p_at(r_crit - 1e-6)
    rng = np.random.default_rng(0)
    y = np.arange(12.0)
    cols = {"y": y, "a": y + rng.normal(size=12), "b": rng.normal(size=12)}
    for s, want in ((StatsSettings("pearson", None), "min significant |r| at n = 12"),
                    (StatsSettings("kendall", "acc23"), "power not computed")):
        (v,) = verdicts([_target(cols, s=s)], [], s, VerdictSettings(200, ci_resamples=0))
        md = blocks_markdown(verdict_blocks([v]))
        assert want in md and "can be significant" not in md
        assert ("| Williams p |" in md) == (s.method == "pearson")
        assert all(("williams_p" in p) == (s.method == "pearson") for p in v["pairwise"])
    assert min_significant(12, StatsSettings("kendall", "acc23"))[0] is None


def test_williams_test_is_calibrated_and_has_power():
    """Under H0 (both metrics equally correlated with g) about alpha of one-sided p-values fall below
    alpha; with a much better metric nearly all do."""
    rng = np.random.default_rng(1)
    n, reps = 25, 1500

    def pvals(ra, rb):
        out = []
        for _ in range(reps):
            g = rng.normal(size=n)
            a = ra * g + np.sqrt(1 - ra * ra) * rng.normal(size=n)
            b = rb * g + np.sqrt(1 - rb * rb) * rng.normal(size=n)
            r = np.corrcoef(np.vstack([a, b, g]))
            out.append(williams_p(r[0, 2], r[1, 2], r[0, 1], n))
        return np.asarray(out)

    null = pvals(0.6, 0.6)
    assert 0.03 < (null < 0.05).mean() < 0.07
    assert (pvals(0.95, 0.3) < 0.05).mean() > 0.95


# --------------------------------------------------------------------------- confounds and marks
def test_partial_kendall_hand_value():
    from clir_eval.correlation.driver import partial_kendall

    # (.6 - .5 * .4) / sqrt((1 - .25)(1 - .16)) = .4 / .793725 = .503953
    assert partial_kendall(0.6, 0.5, 0.4) == pytest.approx(0.503953, abs=1e-6)
    assert partial_kendall(0.6, 1.0, 0.4) is None


def test_confounds_partial_tau_notes_and_agreement():

    from clir_eval.correlation import driver
    from clir_eval.correlation.settings import CorrelationInputs, CorrelationSettings

    rng = np.random.default_rng(8)
    sys_results = {}
    for i, (size, bpe) in enumerate(itertools.product([1, 2, 4, 8], [8, 16, 32, 64])):
        z = np.log(size) + rng.normal(scale=0.05)  # training size drives both scores
        sys_results[f"s{i}"] = {"attrs": {"size": size, "bpe": bpe, "lang": "cs"},
                                "mt": {"bleu": z + rng.normal(scale=0.3), "noise": float(rng.normal())},
                                "ir": {"map": z + rng.normal(scale=0.3)}, "human": {}}
    kinds = {"mt": ["bleu", "noise"], "ir": ["map"], "human": [], "lower_is_better": []}
    cfg = CorrelationInputs(CorrelationSettings(bootstrap=0, permutation=200), wmt=True)
    res = driver.correlate_run(cfg, sys_results, kinds)
    c = res["confounds"]
    (bm,) = [p for p in c["partial"] if (p["x"], p["y"], p["covariate"]) == ("bleu", "map", "size")]
    assert bm["tau"] > 0.3 and abs(bm["partial_tau"]) < bm["tau"] / 2  # size explains most of it
    assert {a["a"] + "-" + a["b"] for a in c["metric_agreement"]} == {"bleu-noise"}
    notes = " ".join(c["notes"])
    assert "circularity" in notes and "nested design" in notes and "size (4 values), bpe (4 values)" in notes
    assert "lang" not in notes  # one value for all systems: not a shared-attribute design
    assert "noise correlates significantly with no target" in notes and "bleu correlates" not in notes
    from clir_eval.report.tables import markdown

    md = markdown({**res, "name": "x", "systems": sys_results, "score_kinds": kinds, "signature": {}})
    assert "## Confounds and caveats" in md and "partial τ" in md


def test_uninformative_targets_are_marked_in_every_view():
    from clir_eval.report.html import heatmap_figure
    from clir_eval.report.tables import kind_table

    row = {"kind": "mt-ir", "x": "bleu", "y": "map", "tau": 0.8, "p_value": 0.01, "significant": True,
           "informative": False, "n": 6}
    res = {"correlations": [row, {**row, "y": "ndcg", "informative": True}], "score_kinds": {}}
    header, rows = kind_table(res, "mt-ir")
    assert rows[0][0][0] == "map (UNINFORMATIVE)" and rows[0][1][1] == "ns"
    assert rows[1][0][0] == "ndcg" and rows[1][1][1] == "best"
    svg = heatmap_figure(res)
    assert "map (UNINFORMATIVE)" in svg
    cells = re.findall(r'<g id="[^"]*cell-\d+-\d+"([^>]*)>\s*<title>(\w+) [^<]*</title>', svg)
    faded = [(t, 'opacity="0.4"' in attrs) for attrs, t in cells]
    assert faded == [("map", True), ("ndcg", False)]  # faded like the greyed table row


def test_length_ratio_is_a_covariate(tmp_path):

    from clir_eval.correlation import driver
    from clir_eval.correlation.settings import CorrelationInputs, CorrelationSettings
    from clir_eval.pipeline.run import _length_ratio

    (tmp_path / "ref.txt").write_text("a b c d\ne f\n")
    (tmp_path / "hyp.txt").write_text("a b\ne f g\n")
    assert _length_ratio(str(tmp_path / "hyp.txt"), (str(tmp_path / "ref.txt"),), {}) == pytest.approx(5 / 6)
    assert _length_ratio(None, (str(tmp_path / "ref.txt"),), {}) is None
    rng = np.random.default_rng(2)
    sys_results = {}
    for i in range(10):
        ratio = 0.8 + 0.04 * i
        sys_results[f"s{i}"] = {"attrs": {}, "length_ratio": ratio, "mt": {"bleu": ratio + rng.normal(scale=0.06)},
                                "ir": {"map": ratio + rng.normal(scale=0.06)}, "human": {}}
    cfg = CorrelationInputs(CorrelationSettings(bootstrap=0, permutation=100))
    kinds = {"mt": ["bleu"], "ir": ["map"], "human": [], "lower_is_better": []}
    (p,) = driver.correlate_run(cfg, sys_results, kinds)["confounds"]["partial"]
    assert p["covariate"] == "length_ratio" and p["tau"] > 0.5 and abs(p["partial_tau"]) < p["tau"] / 2


def test_pairwise_caption_explains_a_ci_that_disagrees_with_the_test():
    """A significant Δτ whose bootstrap CI includes 0 (or the reverse) gets one sentence saying which decides."""
    from clir_eval.report.verdicts import delta_table

    pair = {"a": "x", "b": "y", "delta": 0.19, "p_value": 0.006, "p_adjusted": 0.038, "n": 19, "significant": True,
            "p_se": 0.001, "resamples": 3000, "settled": True, "delta_ci": [-0.15, 0.42], "delta_ci_level": 0.95,
            "delta_ci_method": "bootstrap over systems"}
    v = {"target": "map", "kind": "mt-ir", "method": "kendall", "correction": "holm", "alpha": 0.05, "pairwise": [pair]}
    phrase = "the bootstrap CI and the permutation test disagree near the threshold: the clusters follow p_adj"
    assert phrase in delta_table([v]).caption
    agree = [{**v, "pairwise": [{**pair, "delta_ci": [0.02, 0.42]}]}, {**v, "pairwise": [{**pair, "significant": False,
                                                                                        "delta_ci": [0.0, 0.4]}]}]
    assert all(phrase not in delta_table([a]).caption for a in agree)
    assert phrase in delta_table([{**v, "pairwise": [{**pair, "significant": False, "delta_ci": [0.05, 0.4]}]}]).caption
