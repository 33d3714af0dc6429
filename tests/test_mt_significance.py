"""Paired approximate randomization (= sacrebleu --paired-ar draws and p), sign test (Chiang et al. 2008's
BLEU vs BLEU-SBP case), Holm/BH adjustment, the bias-corrected bootstrap interval, and mt-compare."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
import sacrebleu
from scipy import stats

from clir_eval.mt.base import load_metric
from clir_eval.mt.favoritism import leave_one_out
from clir_eval.mt.resampling import bootstrap_ci
from clir_eval.mt.significance import paired_ar, sentence_scores, sign_test
from clir_eval.stats import adjust_p, bias_corrected_interval

WORDS = "the a of cat dog sat on mat blue red house runs fast slow big".split()


def _systems(seed: int, n: int = 40):
    rng = random.Random(seed)
    ref = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 14))) for _ in range(n)]

    def noisy(p):
        return [" ".join(w if rng.random() > p else rng.choice(WORDS) for w in r.split()) for r in ref]

    return ref, noisy(0.25), noisy(0.35)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_paired_ar_reproduces_sacrebleu_paired_ar(seed, monkeypatch):
    """Same swap draws as sacrebleu for the same seed: with sacrebleu's strict count the p-value is
    identical to sacrebleu.significance.PairedTest(test_type='ar')."""
    from sacrebleu.significance import PairedTest

    ref, a, b = _systems(seed)
    monkeypatch.setenv("SACREBLEU_SEED", "12345")
    pt = PairedTest([("baseline", a), ("sys", b)], {"BLEU": sacrebleu.BLEU()}, references=[ref],
                    test_type="ar", n_samples=2000)
    _, res = pt()
    sacre_p = res["BLEU"][1].p_value
    m = load_metric("bleu")
    ours = paired_ar(m, m.segment_stats(a, [ref]), m.segment_stats(b, [ref]), n_samples=2000, seed=12345, strict=True)
    assert ours.p_value == pytest.approx(sacre_p, abs=1e-12)
    assert ours.score_b == pytest.approx(res["BLEU"][1].score)


def test_paired_ar_p_is_never_zero_and_identical_systems_are_not_significant():
    ref, a, _ = _systems(4)
    m = load_metric("macrof1")
    sa, sb = m.paired_stats(a, ref, [ref])
    r = paired_ar(m, sa, sb, n_samples=500, seed=3)
    assert r.p_value == pytest.approx(1 / 501) and r.count == 0  # the reference beats noise every trial
    same = paired_ar(m, *m.paired_stats(a, a, [ref]), n_samples=200, seed=3)
    assert same.p_value == 1.0  # |Δ| = 0 and every trial ties it: at least as extreme


def test_paired_ar_vectorised_macrof_equals_score_by_score():
    ref, a, b = _systems(5, n=15)
    m = load_metric("macrof1")
    sa, sb = m.paired_stats(a, b, [ref])
    r = paired_ar(m, sa, sb, n_samples=300, seed=9)
    rng = np.random.default_rng(9)
    sel = rng.integers(2, size=(300, sa.shape[0]), dtype=bool)
    da, db = sa.toarray(), sb.toarray()
    obs = abs(m.score_from_stats(da) - m.score_from_stats(db))
    c = 0
    for s in sel:
        x = np.where(s[:, None], da, db).sum(0)
        y = np.where(s[:, None], db, da).sum(0)
        c += abs(m.score_totals(x)[0] - m.score_totals(y)[0]) >= obs - 1e-9
    assert r.count == c


def test_sign_test_counts_and_exact_binomial_p():
    ref = ["a b c d", "e f g h", "i j k l", "m n o p", "q r s t", "u v w x"]
    a = ["a b c d", "e f g h", "i j k l", "m n o p", "q r s t", "u v w x"]
    b = ["a b c z", "e f z h", "i j k l", "z n o p", "q z s t", "u v z x"]
    m = load_metric("wrr")
    st = sign_test(m, m.segment_stats(a, [ref]), m.segment_stats(b, [ref]))
    assert (st.wins, st.losses, st.ties) == (5, 0, 1)
    assert st.p_value == pytest.approx(2 / 2**5)  # two-sided: both all-win tails of Binomial(5, 1/2)
    ter = load_metric("ter")  # lower is better: A (perfect) still wins
    st = sign_test(ter, ter.segment_stats(a, [ref]), ter.segment_stats(b, [ref]))
    assert (st.wins, st.losses) == (5, 0)


def test_sentence_scores_are_each_segment_scored_alone():
    ref, a, _ = _systems(6, n=8)
    for spec in ("bleu", "macrof1", "microf1", "4grr", "chrf1"):
        m = load_metric(spec)
        got = sentence_scores(m, m.segment_stats(a, [ref]))
        for i in (0, 3, 7):
            assert got[i] == pytest.approx(m.corpus_score([a[i]], [[ref[i]]]).score, abs=1e-9), (spec, i)


def _chiang_case(n: int = 60):
    """System A truncates two sentences in three to 6 of 12 words and pads the third with 12 junk words
    (total length = reference length, so corpus BLEU's brevity penalty is 1); B substitutes 2 words."""
    ref, a, b = [], [], []
    for i in range(n):
        r = [f"s{i}w{k}" for k in range(12)]
        ref.append(" ".join(r))
        a.append(" ".join(r[:6]) if i % 3 != 2 else " ".join(r + [f"junk{k}" for k in range(12)]))
        r2 = list(r)
        r2[3] = r2[8] = "zz"
        b.append(" ".join(r2))
    return ref, a, b


def test_corpus_bleu_and_sign_test_disagree_and_bleu_sbp_agrees_with_the_sign_test():
    """Chiang et al. 2008 §3: corpus BLEU lets A's over-long sentences pay for its short ones."""
    ref, a, b = _chiang_case()
    assert sacrebleu.corpus_bleu(a, [ref]).score > sacrebleu.corpus_bleu(b, [ref]).score  # BLEU: A
    bleu, sbp = load_metric("bleu"), load_metric("bleu-sbp")
    st = sign_test(bleu, bleu.segment_stats(a, [ref]), bleu.segment_stats(b, [ref]))
    assert st.losses == 40 and st.wins == 20 and st.p_value < 0.05  # sentence by sentence: B, significantly
    sa, sb = sbp.segment_stats(a, [ref]), sbp.segment_stats(b, [ref])
    assert sbp.score_from_stats(sa) < sbp.score_from_stats(sb)  # BLEU-SBP: B, as the sign test
    st_sbp = sign_test(sbp, sa, sb)
    assert st_sbp.losses > st_sbp.wins


def test_holm_and_bh_hand_computed():
    p = [0.01, 0.04, 0.03]
    assert adjust_p(p, "holm") == pytest.approx([0.03, 0.06, 0.06])
    assert adjust_p(p, "bh") == pytest.approx([0.03, 0.04, 0.04])
    assert adjust_p([0.5, 0.9], "holm") == pytest.approx([1.0, 1.0])
    assert adjust_p(p, "none") == pytest.approx(p)


def test_bca_matches_scipy_bca_for_the_mean():
    rng = np.random.default_rng(0)
    x = rng.exponential(size=150)
    idx = rng.integers(0, len(x), size=(20000, len(x)))
    boot = x[idx].mean(axis=1)
    jack = (x.sum() - x) / (len(x) - 1)
    lo, hi, method = bias_corrected_interval(x.mean(), boot, jack, 0.95)
    ref = stats.bootstrap((x,), np.mean, method="BCa", n_resamples=20000, random_state=1).confidence_interval
    assert method == "bca"
    width = ref.high - ref.low
    assert abs(lo - ref.low) < 0.05 * width and abs(hi - ref.high) < 0.05 * width


def test_bias_corrected_interval_when_every_resample_is_above():
    lo, hi, method = bias_corrected_interval(10.0, np.array([11.0, 12.0, 13.0]), np.array([9.0, 10.0, 11.0]), 0.95)
    assert method == "percentile-shifted" and lo < 10.0 < hi


def _rare_type_corpus():
    """Rare types (each in one segment) are lost by resampling, which moves MacroF1."""
    rng = random.Random(2)
    ref, hyp = [], []
    for i in range(80):
        common = [rng.choice(WORDS) for _ in range(6)]
        rare = [f"rare{i}x{k}" for k in range(3)]
        ref.append(" ".join(common + rare))
        hyp.append(" ".join(common + [rare[0], f"oops{i}"]))
    return hyp, ref


def test_macrof1_bootstrap_shows_its_bias_and_a_corrected_interval():
    """The percentile CI can exclude the score; the bias-corrected interval contains it and the
    note says why."""
    hyp, ref = _rare_type_corpus()
    m = load_metric("macrof1")
    st = m.segment_stats(hyp, [ref])
    ci = bootstrap_ci(m, st, n_samples=300, seed=1)
    d = ci.to_dict()
    assert d["bs_bias"] == pytest.approx(ci.mean - ci.score)
    assert not ci.low <= ci.score <= ci.high, "fixture no longer shows the resampling bias"
    assert d["bc_low"] <= ci.score <= d["bc_high"] and "excludes the score" in d["ci_note"]
    assert len(leave_one_out(m, st)) == 80


def test_mt_score_text_shows_the_corrected_interval(cli, tmp_path):
    hyp, ref = _rare_type_corpus()
    (tmp_path / "h.txt").write_text("\n".join(hyp) + "\n")
    (tmp_path / "r.txt").write_text("\n".join(ref) + "\n")
    code, out, err = cli("mt-score", "--hyp", tmp_path / "h.txt", "--ref", tmp_path / "r.txt", "--metrics", "macrof1",
                         "--bootstrap", "300", "--seed", "1", "--format", "text")
    assert code == 0, err
    assert "excludes the score; bias +" in out


def test_mt_compare_many_systems_adjusted(cli, tmp_path):
    ref, a, b = _systems(8)
    _, c, _ = _systems(9)
    paths = {}
    for name, lines in (("ref", ref), ("base", a), ("s1", b), ("s2", c)):
        paths[name] = tmp_path / f"{name}.txt"
        paths[name].write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, out, err = cli("mt-compare", "--hyp", paths["base"], "--hyp", paths["s1"], "--hyp", paths["s2"],
                         "--ref", paths["ref"], "--metrics", "bleu,macrof1,4grr", "--bootstrap", "50",
                         "--ar-trials", "99", "--seed", "4")
    assert code == 0, err
    res = json.loads(out)
    assert res["baseline"] == str(paths["base"]) and res["family_size"] == 6 and res["correction"] == "holm"
    assert [(r["system"], r["metric"]) for r in res["comparisons"]] == [
        (str(paths[s]), m) for s in ("s1", "s2") for m in ("bleu", "macrof1", "4grr")]
    for r in res["comparisons"]:
        for test in ("bootstrap", "ar", "sign"):
            assert 0 < r[test]["p_value"] <= r[test]["p_adjusted"] <= 1
        assert r["ar"]["p_value"] >= 1 / 100 and r["bootstrap"]["p_value"] >= 1 / 51
        assert r["delta"] == pytest.approx(r["score_system"] - r["score_baseline"])
        assert "|ar:99|seed:4|" in r["signature"]
    code, out, _ = cli("mt-compare", "--hyp", paths["base"], "--hyp", paths["s1"], "--ref", paths["ref"],
                       "--metrics", "bleu", "--bootstrap", "20", "--ar-trials", "20", "--format", "text")
    assert code == 0 and "p_ar_adj" in out
    code, _, err = cli("mt-compare", "--hyp", paths["base"], "--hyp", paths["s1"], "--ref", paths["ref"],
                       "--correction", "bonferroni")
    assert code == 2 and err.startswith("error:") and "holm" in err


@pytest.mark.shared_data
def test_paired_ar_equals_sacrebleu_on_real_wmt21_systems(shared_data, monkeypatch):
    """WMT21 de-en, baseline Online-B against HuaweiTSC and UEdin (one significant, one not at .05 in
    the 10000-trial run of docs/tools.md; 500 trials here): BLEU and chrF scores and AR p-values equal sacrebleu's PairedTest."""
    from sacrebleu.significance import PairedTest

    from clir_eval.io.files import read_lines

    d = shared_data / "wmt21" / "de-en"
    ref = read_lines(d / "newstest2021.de-en.ref.A.en.gz")
    sys_ = {s: read_lines(d / f"newstest2021.de-en.hyp.{s}.en.gz") for s in ("Online-B", "HuaweiTSC", "UEdin")}
    monkeypatch.setenv("SACREBLEU_SEED", "12345")
    pt = PairedTest(list(sys_.items()), {"BLEU": sacrebleu.BLEU(), "chrF2": sacrebleu.CHRF()}, references=[ref],
                    test_type="ar", n_samples=500)
    _, res = pt()
    for name, spec in (("BLEU", "bleu"), ("chrF2", "chrf")):
        m = load_metric(spec)
        base = m.segment_stats(sys_["Online-B"], [ref])
        for k, s in enumerate(("HuaweiTSC", "UEdin"), 1):
            ours = paired_ar(m, base, m.segment_stats(sys_[s], [ref]), n_samples=500, seed=12345, strict=True)
            assert ours.score_b == pytest.approx(res[name][k].score, abs=1e-9)
            assert ours.p_value == pytest.approx(res[name][k].p_value, abs=1e-12), (name, s)


def test_compare_to_baseline_scores_the_baseline_once_per_metric(monkeypatch):
    """The baseline's TER/BLEU statistics are computed once, not once per system; the rows are
    those of scoring every pair from scratch."""
    from clir_eval.mt.base import load_metrics
    from clir_eval.mt.significance import compare_to_baseline

    refs = [["the cat sat on the mat", "a dog barked twice", "rain fell all day"]]
    base = ("base", ["the cat sat on a mat", "a dog barked", "rain fell all day long"])
    systems = [("s1", ["a cat sat on the mat", "the dog barked twice", "rain all day"]),
               ("s2", ["the cat on the mat", "a dog barked twice", "it rained all day"]),
               ("s3", ["cat sat mat", "dog barked", "rain fell"])]
    metrics = load_metrics(["ter", "bleu", "macrof1"])
    calls = []
    for m in metrics:
        orig = m.segment_stats
        monkeypatch.setattr(m, "segment_stats", lambda h, r, _o=orig, _n=m.name: calls.append((_n, tuple(h))) or _o(h, r))
    got = compare_to_baseline(metrics, base, systems, refs, n_bootstrap=50, n_ar=50, seed=3)
    for name in ("ter", "bleu"):
        assert sum(1 for n, h in calls if n == name and h == tuple(base[1])) == 1
        assert sum(1 for n, _ in calls if n == name) == 1 + len(systems)
    fresh = [compare_to_baseline(load_metrics(["ter", "bleu", "macrof1"]), base, [s], refs, n_bootstrap=50, n_ar=50, seed=3)
             for s in systems]
    def strip(r):  # p-values are adjusted over each call's family; everything else must be equal
        return {k: ({t: x for t, x in v.items() if t != "p_adjusted"} if isinstance(v, dict) else v) for k, v in r.items()}

    assert [strip(r) for r in got["comparisons"]] == [strip(r) for f in fresh for r in f["comparisons"]]
