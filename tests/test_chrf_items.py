"""chrF item statistics counted with numpy (clir_eval.mt.chrf_items) equal sacrebleu's own
segment statistics, integer for integer."""

from __future__ import annotations

import random

import numpy as np
import pytest
import sacrebleu

from clir_eval.mt.base import load_metric
from clir_eval.mt.chrf_items import chrf_item_stats
from clir_eval.mt.items import item_scores


def _sacrebleu_stats(hyps, refs, lowercase, **kw):
    m = sacrebleu.CHRF(lowercase=lowercase, references=[refs], **kw)
    return np.asarray(m._extract_corpus_statistics(hyps, None), dtype=np.int64)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("spec,kw", [("chrf1", {"beta": 1}), ("chrf:char_order=3", {"char_order": 3})])
def test_counts_equal_sacrebleu(seed, spec, kw):
    r = random.Random(seed)
    alpha = "abcAB \u00e9\u00c9\u0416\u0436 \t\n\U0001F600xyz."  # letters the reference lacks, case, astral
    n = r.randint(1, 40)
    hyps = ["".join(r.choice(alpha) for _ in range(r.randint(0, 200))) for _ in range(n)]
    refs = ["".join(r.choice(alpha[:9] + "q .") for _ in range(r.randint(0, 200))) for _ in range(n)]
    hyps[0], refs[-1] = "", "a"  # an empty document, a reference shorter than every order but 1
    for lowercase in (False, True):
        got = chrf_item_stats(load_metric(spec, lowercase=lowercase), hyps, [refs])
        assert got is not None and np.array_equal(got, _sacrebleu_stats(hyps, refs, lowercase, **kw))


def test_item_scores_equal_sacrebleu_sentence_chrf_and_other_variants_fall_back():
    hyps = ["The cat sat on the mat .", "A dog", ""]
    refs = ["The cat is on the mat.", "The dog barks", "Nothing"]
    scores, _ = item_scores(["chrf1", "chrf++"], hyps, [refs])
    assert scores["chrf1"] == [sacrebleu.CHRF(beta=1).sentence_score(h, [r]).score for h, r in zip(hyps, refs)]
    assert scores["chrf++"] == pytest.approx([sacrebleu.CHRF(word_order=2).sentence_score(h, [r]).score
                                              for h, r in zip(hyps, refs)], abs=1e-12)
    assert chrf_item_stats(load_metric("chrf++"), hyps, [refs]) is None  # word n-grams: sacrebleu's own
    assert chrf_item_stats(load_metric("chrf"), hyps, [refs, refs]) is None  # several references


def test_counts_in_runs_of_documents_equal_counting_all_at_once(monkeypatch):
    import clir_eval.mt.chrf_items as ci

    r = random.Random(7)
    hyps = ["".join(r.choice("abc de") for _ in range(r.randint(0, 60))) for _ in range(30)]
    refs = ["".join(r.choice("abcd e") for _ in range(r.randint(0, 60))) for _ in range(30)]
    m = load_metric("chrf")
    whole = chrf_item_stats(m, hyps, [refs])
    monkeypatch.setattr(ci, "CHUNK_CHARS", 100)
    assert len(ci._chunks([len(h) + len(x) for h, x in zip(hyps, refs)])) > 5
    assert np.array_equal(chrf_item_stats(m, hyps, [refs]), whole)
    assert np.array_equal(whole, _sacrebleu_stats(hyps, refs, False))


@pytest.mark.parametrize("spec,kw", [("chrf", {}), ("chrf1", {"beta": 1}), ("chrf++", {"word_order": 2})])
def test_corpus_chrf_from_segment_statistics_equals_sacrebleu(spec, kw):
    """The metric's own segment statistics (numpy counting where it applies, sacrebleu's otherwise)
    give sacrebleu's corpus chrF, with one reference and with two."""
    r = random.Random(3)
    words = ["the", "cat", "Cat", "sat", "on", "mat", ".", "\u00e9t\u00e9", "dog", ",", "a"]
    hyps = [" ".join(r.choice(words) for _ in range(r.randint(0, 12))) for _ in range(300)]
    refs = [[" ".join(r.choice(words) for _ in range(r.randint(0, 12))) for _ in range(300)] for _ in range(2)]
    m = load_metric(spec)
    for rs in (refs[:1], refs):
        stats = m.segment_stats(hyps, rs)
        assert np.array_equal(stats, _sacrebleu_stats(hyps, rs[0], False, **kw) if len(rs) == 1 else
                              np.asarray(sacrebleu.CHRF(references=rs, **kw)._extract_corpus_statistics(hyps, None)))
        assert m.score_stats(stats, len(rs)).score == sacrebleu.CHRF(**kw).corpus_score(hyps, rs).score
