"""BLEU segment statistics counted with numpy (clir_eval.mt.bleu_counts) equal sacrebleu's own,
integer for integer, and so do the corpus scores built from them."""

from __future__ import annotations

import logging
import random

import numpy as np
import pytest
import sacrebleu

from clir_eval.mt.base import load_metric


def _sacrebleu_stats(hyps, refs, **kw):
    return np.asarray(sacrebleu.BLEU(references=refs, **kw)._extract_corpus_statistics(hyps, None), dtype=np.int64)


def _corpus(seed, n=300):
    r = random.Random(seed)
    words = ["the", "The", "cat", "sat", "on", "mat", ".", ",", "\u00e9t\u00e9", "dog", "a", "(x)", "don't", "1.5"]
    line = lambda: " ".join(r.choice(words) for _ in range(r.choice([0, 1, 2, 3, r.randint(4, 30)])))
    return [line() for _ in range(n)], [[line() for _ in range(n)] for _ in range(2)]


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("spec,kw", [("bleu", {}), ("bleu:order=2", {"max_ngram_order": 2}),
                                     ("bleu:order=6", {"max_ngram_order": 6})])
@pytest.mark.parametrize("lowercase,tokenize", [(False, "13a"), (True, "13a"), (False, "char"), (False, "none")])
def test_counts_equal_sacrebleu(seed, spec, kw, lowercase, tokenize):
    hyps, refs = _corpus(seed)
    hyps[0], refs[0][1] = "", ""  # an empty hypothesis, an empty reference
    m = load_metric(spec, tokenize=tokenize, lowercase=lowercase)
    for rs in (refs[:1], refs):  # one reference: numpy counting; two: sacrebleu's own
        got = m.segment_stats(hyps, rs)
        want = _sacrebleu_stats(hyps, rs, lowercase=lowercase, tokenize=tokenize, **kw)
        assert np.array_equal(got, want)
        assert m.score_stats(got, len(rs)).score == sacrebleu.BLEU(
            lowercase=lowercase, tokenize=tokenize, **kw).corpus_score(hyps, rs).score


def test_item_bleu_equals_sentence_bleu():
    hyps, refs = _corpus(9, 50)
    m = load_metric("bleu")
    got = m.item_scores(m.segment_stats(hyps, refs[:1]))
    want = [sacrebleu.sentence_bleu(h, [r]).score for h, r in zip(hyps, refs[0])]
    assert np.allclose(got, want, rtol=0, atol=1e-9)


def test_tokenized_hypotheses_get_sacrebleus_warning(caplog):
    hyps = ["a tokenized line ."] * 120
    with caplog.at_level(logging.WARNING, logger="sacrebleu"):
        load_metric("bleu").segment_stats(hyps, [hyps])
    assert any("tokenized period" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize("hyps,ref", [(["a"], [""]), ([""], [""]), (["a b"], ["a"]), (["x", ""], ["", "x y z w v"])])
def test_fewer_tokens_than_the_order(hyps, ref):
    m = load_metric("bleu")
    assert np.array_equal(m.segment_stats(hyps, [ref]), _sacrebleu_stats(hyps, [ref]))


@pytest.mark.parametrize("lowercase", [False, True])
def test_shared_encoding_numbers_tokens_as_one_vocabulary_does(lowercase):
    """encode() (kept per reference, renumbered per hypothesis set) gives token_ids' numbers of
    the hypotheses and then each reference with one vocabulary, for several systems on one
    reference (the reference's own numbering reused) and for two references."""
    from clir_eval.mt.base import encode, token_ids, tokenizer

    tok = tokenizer("13a")
    _, refs = _corpus(5, 80)
    for seed in (6, 7, 8):
        hyps, _ = _corpus(seed, 80)
        for rs in (refs[:1], refs):
            vocab: dict[str, int] = {}
            want = [token_ids(hyps, tok, lowercase, vocab)] + [token_ids(r, tok, lowercase, vocab) for r in rs]
            (h_ids, h_lens), ref_enc, types = encode(hyps, rs, tok, lowercase)
            assert types == list(vocab)
            for (a, b), (c, d) in zip(want, [(h_ids, h_lens), *ref_enc]):
                assert np.array_equal(a, c) and np.array_equal(b, d)
            assert not h_ids.flags.writeable and not ref_enc[0][0].flags.writeable


def test_macrof_microf_bleu_of_several_systems_on_one_reference_equal_fresh_scores():
    """The shared encoding changes no score: each system's BLEU, MacroF1 and MicroF1 statistics
    equal those of a fresh process state (caches emptied) and sacrebleu's BLEU."""
    from clir_eval.mt import base
    from clir_eval.mt.base import collect_stats, load_metrics

    metrics = load_metrics(["bleu", "macrof1", "microf1"])
    _, refs = _corpus(11, 60)
    got = {}
    for seed in (12, 13):
        hyps, _ = _corpus(seed, 60)
        got[seed] = collect_stats(metrics, hyps, refs[:1])
    for seed in (12, 13):
        base._ENCODED.clear()
        base._REF_SIDE.clear()
        hyps, _ = _corpus(seed, 60)
        fresh = collect_stats(metrics, hyps, refs[:1])
        assert np.array_equal(got[seed]["bleu"], _sacrebleu_stats(hyps, refs[:1]))
        assert np.array_equal(got[seed]["bleu"], fresh["bleu"])
        assert (got[seed]["macrof1"] != fresh["macrof1"]).nnz == 0


def _random_rows(rng, n, width_orders, order_kind):
    """Statistics rows with many zeros and small counts (short items, empty sides)."""
    if order_kind == "bleu":
        N = width_orders
        lens = rng.integers(0, 6, (n, 2)) * (1 + 15 * (rng.random((n, 1)) < 0.5))  # short and long items
        total = np.maximum(lens[:, :1] - np.arange(N)[None], 0)
        total[rng.random((n, N)) < 0.1] = 0
        correct = np.minimum(total, rng.integers(0, 60, (n, N)))
        correct[rng.random(n) < 0.2] = 0
        return np.column_stack([lens, correct, total]).astype(np.int64)
    cols = []
    for _ in range(width_orders):
        hyp, ref = rng.integers(0, 30, n), rng.integers(0, 30, n)
        hyp[rng.random(n) < 0.15] = 0
        ref[rng.random(n) < 0.15] = 0
        cols += [hyp, ref, np.minimum(np.minimum(hyp, ref), rng.integers(0, 30, n))]
    return np.column_stack(cols).astype(np.int64)


@pytest.mark.parametrize("smooth,value,order", [("exp", None, 4), ("floor", None, 4), ("floor", 0.3, 3),
                                                ("add-k", None, 4), ("add-k", 2.0, 2), ("none", None, 4),
                                                ("exp", None, 1)])
def test_item_bleu_rows_equal_sacrebleus_compute_bleu_float_for_float(smooth, value, order):
    """All rows at once (bleu_rows) = sacrebleu's own compute_bleu row by row, ==, on edge-heavy rows."""
    from clir_eval.mt.sacrebleu_metrics import bleu_rows

    rng = np.random.default_rng(order)
    stats = _random_rows(rng, 4000, order, "bleu")
    m = sacrebleu.BLEU(smooth_method=smooth, smooth_value=value, max_ngram_order=order, effective_order=True)
    want = [m._compute_score_from_stats(list(map(int, r))).score for r in stats]
    assert np.array_equal(bleu_rows(stats, order, smooth, value, True), want)
    m.effective_order = False
    want = [m._compute_score_from_stats(list(map(int, r))).score for r in stats]
    assert np.array_equal(bleu_rows(stats, order, smooth, value, False), want)


@pytest.mark.parametrize("spec", ["chrf", "chrf1", "chrf++", "chrf:eps_smoothing=true", "chrf:char_order=2,beta=3"])
def test_item_chrf_rows_equal_sacrebleus_f_score_float_for_float(spec):
    m = load_metric(spec)
    sb = m._m
    stats = _random_rows(np.random.default_rng(len(spec)), 4000, sb.order, "chrf")
    want = [sb._compute_score_from_stats(list(map(int, r))).score for r in stats]
    assert np.array_equal(m.item_scores(stats), want)
