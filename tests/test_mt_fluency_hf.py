"""LM fluency with a Hugging Face causal LM (hfppl): a tiny randomly initialised GPT-2 and a word-level
tokenizer saved to a temp dir, checked against a direct computation with torch and against
transformers' own language-modelling loss."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from clir_eval.errors import UserError
from clir_eval.mt.base import load_metric

torch = pytest.importorskip("torch", reason="torch not installed (optional extra: pip install 'clir-eval[hf]')")
transformers = pytest.importorskip("transformers",
                                   reason="transformers not installed (optional extra: pip install 'clir-eval[hf]')")

VOCAB = ["<unk>", "<s>", "</s>", "the", "cat", "sat", "on", "mat", "a", "dog", "ran"]
IDS = {w: i for i, w in enumerate(VOCAB)}


@pytest.fixture(scope="module")
def lm_dir(tmp_path_factory):
    from tokenizers import Tokenizer, models, pre_tokenizers

    tk = Tokenizer(models.WordLevel(IDS, unk_token="<unk>"))
    tk.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    fast = transformers.PreTrainedTokenizerFast(tokenizer_object=tk, bos_token="<s>", eos_token="</s>",
                                                unk_token="<unk>")
    torch.manual_seed(0)
    cfg = transformers.GPT2Config(vocab_size=len(VOCAB), n_positions=16, n_embd=16, n_layer=2, n_head=2,
                                  bos_token_id=1, eos_token_id=2)
    model = transformers.GPT2LMHeadModel(cfg)
    d = tmp_path_factory.mktemp("lm") / "tiny-gpt2"
    model.save_pretrained(d)
    fast.save_pretrained(d)
    model.eval()
    return str(d), model


def direct_log10(model, words: list[str], bos: bool = True, eos: bool = True) -> tuple[float, int]:
    """Σ log10 P(token | tokens before) with ids from the vocabulary above, the softmax taken by hand."""
    ids = ([1] if bos else []) + [IDS.get(w, 0) for w in words] + ([2] if eos else [])
    if len(ids) < 2:
        return 0.0, 0
    with torch.no_grad():
        logits = model(torch.tensor([ids])).logits[0].double().numpy()
    total = 0.0
    for t in range(1, len(ids)):
        row = logits[t - 1]
        total += row[ids[t]] - (row.max() + math.log(np.exp(row - row.max()).sum()))
    return total / math.log(10), len(ids) - 1


def test_per_token_log_probabilities_equal_a_direct_computation(lm_dir):
    path, model = lm_dir
    rng = random.Random(0)
    words = VOCAB[3:] + ["zebra"]  # zebra is <unk>
    hyps = [" ".join(rng.choice(words) for _ in range(rng.randint(0, 9))) for _ in range(40)] + ["The cat"]
    m = load_metric(f"hfppl:model={path}")
    st = m.segment_stats(hyps, [hyps])
    for h, row in zip(hyps, st):
        want, n = direct_log10(model, h.split())
        assert row[0] == pytest.approx(want, abs=1e-6) and row[1] == n  # float32 forward, other threads
    total = sum(direct_log10(model, h.split())[0] for h in hyps)
    n = sum(direct_log10(model, h.split())[1] for h in hyps)
    r = m.corpus_score(hyps, [hyps])
    assert r.score == pytest.approx(10 ** (-total / n), rel=1e-6) and not m.higher_is_better
    assert "lm:tiny-gpt2|lmsha1:" in r.signature and "arch:GPT2LMHeadModel" in r.signature


def test_one_sentence_perplexity_is_exp_of_transformers_lm_loss(lm_dir):
    path, model = lm_dir
    ids = [1, IDS["the"], IDS["dog"], IDS["ran"], 2]
    with torch.no_grad():
        loss = model(torch.tensor([ids]), labels=torch.tensor([ids])).loss.item()  # mean NLL of ids[1:]
    ppl = load_metric(f"hfppl:model={path}").corpus_score(["the dog ran"], [["x"]]).score
    assert ppl == pytest.approx(math.exp(loss), rel=1e-5)  # transformers' loss is float32


def test_bos_eos_and_lowercase(lm_dir):
    path, model = lm_dir
    st = load_metric(f"hfppl:model={path},bos=false,eos=false").segment_stats(["the cat sat", "dog", ""], [["x"] * 3])
    assert st[0, 0] == pytest.approx(direct_log10(model, ["the", "cat", "sat"], False, False)[0], abs=1e-6)
    assert list(st[:, 1]) == [2, 0, 0]  # without BOS the first token is context only
    lc = load_metric(f"hfppl:model={path}", lowercase=True).segment_stats(["THE CAT"], [["x"]])
    assert lc[0, 0] == pytest.approx(direct_log10(model, ["the", "cat"])[0], abs=1e-6)
    mixed = load_metric(f"hfppl:model={path}").segment_stats(["THE CAT"], [["x"]])
    assert mixed[0, 0] == pytest.approx(direct_log10(model, ["<unk>", "<unk>"])[0], abs=1e-6)


def test_bad_models_are_user_errors(lm_dir, tmp_path):
    path, _ = lm_dir
    with pytest.raises(UserError, match="model directory not found.*nothing is downloaded"):
        load_metric("hfppl:model=gpt2").segment_stats(["a"], [["a"]])  # a hub id, not a directory
    (tmp_path / "empty").mkdir()
    with pytest.raises(UserError, match="cannot load a causal LM"):
        load_metric(f"hfppl:model={tmp_path / 'empty'}").segment_stats(["a"], [["a"]])
    with pytest.raises(UserError, match="more than the model's context of 16"):
        load_metric(f"hfppl:model={path}").segment_stats([" ".join(["the"] * 20)], [["x"]])


def test_favoritism_and_cli_use_it(lm_dir, cli, tmp_path):
    path, _ = lm_dir
    (tmp_path / "a.txt").write_text("the cat sat\nthe dog ran\na mat\n")
    (tmp_path / "r.txt").write_text("the cat sat\nthe dog ran\na cat\n")
    code, out, err = cli("mt-score", "--hyp", tmp_path / "a.txt", "--ref", tmp_path / "r.txt",
                         "--metrics", f"hfppl:model={path}", "--format", "json")
    assert code == 0, err
    import json

    res = json.loads(out)
    (val,) = res.values()
    hyps = (tmp_path / "a.txt").read_text().splitlines()
    m = load_metric(f"hfppl:model={path}")
    assert val["score"] == pytest.approx(m.corpus_score(hyps, [hyps]).score, rel=1e-12)
