"""The sacrebleu behaviour clir_eval.mt.sacrebleu_metrics relies on (see its docstring), exercised
directly on sacrebleu so that an upgrade which changes any of it fails here first."""

from __future__ import annotations

import numpy as np
import pytest
import sacrebleu

HYPS = ["The cat sat on the mat .", "A dog barked loudly", "", "It's 5 o'clock, isn't it?"]
REFS = [["The cat is on the mat.", "A dog was barking loudly", "nothing", "It is five o'clock, right?"],
        ["A cat sat on a mat.", "The dog barked", "", "Five o'clock already?"]]


def test_tokenizer_names_and_instances_are_public():
    for name in ("13a", "intl", "zh", "char", "none"):
        assert name in sacrebleu.BLEU.TOKENIZERS
        tok = sacrebleu.BLEU(tokenize=name).tokenizer
        assert isinstance(tok("a b."), str) and isinstance(tok.signature(), str)
    assert sacrebleu.BLEU(tokenize="13a").tokenizer("a b.") == "a b ."
    assert set(sacrebleu.BLEU.SMOOTH_DEFAULTS) == {"floor", "add-k", "exp", "none"}


def test_bleu_smoothing_choices_are_sacrebleus():
    """clir_eval writes the choices out (naming a metric does not import sacrebleu): in sacrebleu's order."""
    from clir_eval.mt.sacrebleu_metrics import BLEU_SMOOTH_METHODS

    assert BLEU_SMOOTH_METHODS == tuple(sacrebleu.BLEU.SMOOTH_DEFAULTS)


@pytest.mark.parametrize("make, width", [
    (lambda refs=None: sacrebleu.BLEU(references=refs), 10),
    (lambda refs=None: sacrebleu.BLEU(max_ngram_order=2, smooth_method="floor", references=refs), 6),
    (lambda refs=None: sacrebleu.CHRF(references=refs), 18),
    (lambda refs=None: sacrebleu.CHRF(word_order=2, beta=1, references=refs), 24),
    (lambda refs=None: sacrebleu.TER(references=refs), 2),
])
@pytest.mark.parametrize("nrefs", [1, 2])
def test_statistics_of_bound_references_sum_to_the_corpus_score(make, width, nrefs):
    refs = REFS[:nrefs]
    rows = make(refs)._extract_corpus_statistics(HYPS, None)
    assert len(rows) == len(HYPS) and all(len(r) == width for r in rows)
    totals = np.asarray(rows, dtype=np.float64).sum(axis=0).tolist()
    fresh = make()
    assert fresh._compute_score_from_stats(totals).score == pytest.approx(make().corpus_score(HYPS, refs).score, abs=1e-12)


def test_bleu_statistics_layout_is_sys_len_ref_len_correct_total():
    bleu = sacrebleu.BLEU(references=REFS, effective_order=False)
    rows = bleu._extract_corpus_statistics(HYPS, None)
    for hyp, row, *r in zip(HYPS, rows, *REFS):
        s = sacrebleu.BLEU().sentence_score(hyp, list(r))
        assert list(row) == [s.sys_len, s.ref_len, *s.counts, *s.totals]
    s = sacrebleu.BLEU()._compute_score_from_stats(np.asarray(rows).sum(axis=0).tolist())
    assert {"bp", "sys_len", "ref_len", "precisions"} <= set(vars(s))


def test_ter_score_fields():
    s = sacrebleu.TER().corpus_score(HYPS, REFS)
    assert s.num_edits >= 0 and s.ref_length > 0


def test_signature_reads_num_refs_and_update_goes_before_version():
    m = sacrebleu.CHRF()
    m.num_refs = 3
    sig = m.get_signature()
    sig.update("beta", 1)
    text = sig.format()
    assert text.startswith("nrefs:3|") and text.endswith(f"|beta:1|version:{sacrebleu.__version__}")
    bound = sacrebleu.BLEU(references=REFS)
    assert bound.get_signature().format().startswith("nrefs:2|case:mixed|eff:no|tok:13a|smooth:exp|")


def test_bootstrap_signature_fields_are_sacrebleus():
    """mt-score --bootstrap names its fields as sacrebleu's own bootstrap does (bs, seed, placed
    after nrefs), so the two signatures of the same setting are the same string."""
    from clir_eval.mt.base import load_metric

    m = sacrebleu.BLEU()
    m.corpus_score(HYPS, REFS, n_bootstrap=20)
    assert m.get_signature().format() == load_metric("bleu").signature(2, bs=20, seed=m.seed)
