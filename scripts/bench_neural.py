#!/usr/bin/env python
"""Segments per second of the neural metrics on CPU, beside each library's own API in the same run.

Needs the [neural] extra. Nothing is downloaded, so the real checkpoints are not used: the script
builds, in a temp dir, random-weight checkpoints of the published architectures (speed depends on
the architecture and the token counts, not on the weight values):

* COMET: wmt22-comet-da's (XLM-R large encoder: 24 layers, hidden 1024, 16 heads, FF 4096,
  vocabulary 250,002; estimator 3072-1024; layer mix, avg pooling), scored by ``comet:model=DIR``
  and by comet's ``model.predict(samples, gpus=0)``;
* BLEURT: BLEURT-20-D12's layout and size (SentencePiece ``spm.model``, 12 layers; hidden 1024,
  16 heads, FF 4096, inferred from the published 167M parameters, since the BLEURT checkpoints page
  does not give the widths), scored by ``bleurt:model=DIR`` and by bleurt-pytorch's README usage
  (in input order, batch by batch).

The tokenizers are trained here on WMT21 de-en text (Unigram 32k pieces for COMET, SentencePiece
8k for BLEURT), so token counts are of the same order as, but not equal to, the real tokenizers';
the script prints them. Input: N segments evenly spaced over WMT21 de-en (source, Facebook-AI
output, reference A) from ../shared/data. It prints wall time and the process's CPU time (on a
shared machine other users' load slows wall time; CPU-seconds per segment move less) and the load
average before and after each step.

    python scripts/bench_neural.py [--n 64] [--batch 16] [--data ../shared/data]
"""

from __future__ import annotations

import gzip
import os
import tempfile
import time
from pathlib import Path

import benchlib


def _lines(path: Path, n: int | None = None) -> list[str]:
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        out = [ln.rstrip("\n") for ln in fh]
    return out[:n] if n else out


def build_comet(root: Path, text: list[str]) -> Path:
    import pytorch_lightning as pl
    import torch
    import yaml
    from comet.models import RegressionMetric
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers
    from transformers import XLMRobertaConfig, XLMRobertaModel, XLMRobertaTokenizerFast

    enc = root / "xlm-roberta-large"
    tok = Tokenizer(models.Unigram())
    tok.normalizer = normalizers.NFKC()
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    tok.decoder = decoders.Metaspace()
    tok.train_from_iterator(text, trainers.UnigramTrainer(
        vocab_size=32000, special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"], unk_token="<unk>"))
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>", pair="<s> $A </s> </s> $B </s>", special_tokens=[("<s>", 0), ("</s>", 2)])
    XLMRobertaTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>", sep_token="</s>", cls_token="<s>",
                            unk_token="<unk>", pad_token="<pad>", mask_token="<mask>").save_pretrained(enc)
    cfg = XLMRobertaConfig(vocab_size=250002, hidden_size=1024, num_hidden_layers=24, num_attention_heads=16,
                           intermediate_size=4096, max_position_embeddings=514, pad_token_id=1, bos_token_id=0,
                           eos_token_id=2)
    torch.manual_seed(0)
    XLMRobertaModel(cfg, add_pooling_layer=False).save_pretrained(enc)  # config.json + random weights
    model = RegressionMetric(encoder_model="XLM-RoBERTa", pretrained_model=str(enc), hidden_sizes=[3072, 1024],
                             layer="mix", pool="avg", load_pretrained_weights=True, local_files_only=True)
    (enc / "model.safetensors").unlink()  # the checkpoint holds every weight; the encoder dir keeps config + tokenizer
    hp = {**dict(model.hparams), "pretrained_model": "xlm-roberta-large", "class_identifier": "regression_metric"}
    (root / "checkpoints").mkdir(parents=True)
    torch.save({"state_dict": model.state_dict(), "hyper_parameters": hp, "pytorch-lightning_version": pl.__version__},
               root / "checkpoints" / "model.ckpt")
    (root / "hparams.yaml").write_text(yaml.safe_dump(hp), encoding="utf-8")
    return root


def build_bleurt(root: Path, text: list[str], vocab: int) -> Path:
    """BLEURT-20-D12's layout and size: ``config.json`` (model_type bleurt), weights and a
    SentencePiece ``spm.model``. Published are 12 layers and 167M parameters, not the widths: hidden
    1024 (16 heads, FF 4096) is inferred from them (12 such layers are 151M; the distilled models'
    counts and CPU runtimes on the BLEURT checkpoints page fit it, 768 does not)."""
    import sentencepiece as spm
    import torch
    from bleurt_pytorch import BleurtConfig, BleurtForSequenceClassification

    root.mkdir(parents=True)
    train = root.parent / "spm-train.txt"
    train.write_text("\n".join(text), encoding="utf-8")
    spm.SentencePieceTrainer.train(
        input=str(train), model_prefix=str(root / "spm"), vocab_size=vocab, pad_id=0, unk_id=1, bos_id=-1, eos_id=-1,
        user_defined_symbols=["[CLS]", "[SEP]", "[MASK]"], pad_piece="[PAD]", unk_piece="[UNK]", minloglevel=2,
        hard_vocab_limit=False)
    (root / "spm.vocab").unlink()
    n = spm.SentencePieceProcessor(model_file=str(root / "spm.model")).get_piece_size()
    torch.manual_seed(0)
    cfg = BleurtConfig(vocab_size=n, embedding_size=128, hidden_size=1024, num_hidden_layers=12, num_attention_heads=16,
                       intermediate_size=4096, max_position_embeddings=512)
    BleurtForSequenceClassification(cfg).save_pretrained(root)
    return root


def arguments():
    ap = benchlib.parser(__doc__, data=True)
    ap.add_argument("--n", type=int, default=64, help="segments, evenly spaced over the test set")
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--metrics", default="comet,bleurt")
    return ap


def main() -> None:
    args = arguments().parse_args()
    os.environ["HF_HUB_OFFLINE"] = "1"
    d = benchlib.need(args.data / "wmt21" / "de-en", "WMT21 de-en")
    src_all = _lines(d / "newstest2021.de-en.src.de.gz")
    ref_all = _lines(d / "newstest2021.de-en.ref.A.en.gz")
    hyp_all = _lines(d / "newstest2021.de-en.hyp.Facebook-AI.en.gz")
    pick = [round(i * (len(ref_all) - 1) / max(args.n - 1, 1)) for i in range(args.n)]
    src, ref, hyp = ([x[i] for i in pick] for x in (src_all, ref_all, hyp_all))
    import numpy as np
    import torch

    from clir_eval.mt import neural
    from clir_eval.mt.base import load_metric

    print(f"{args.n} WMT21 de-en segments, evenly spaced over {len(ref_all)} (words per segment: source "
          f"{np.mean([len(x.split()) for x in src]):.1f}, hypothesis {np.mean([len(x.split()) for x in hyp]):.1f}, "
          f"reference {np.mean([len(x.split()) for x in ref]):.1f}); batch {args.batch}; torch {torch.__version__} "
          f"on {torch.get_num_threads()} threads, {os.cpu_count()} CPUs; load average {_load()}")
    with tempfile.TemporaryDirectory() as tmp:
        specs = []
        t = time.perf_counter()
        if "comet" in args.metrics:
            cdir = build_comet(Path(tmp) / "wmt22-comet-da", src_all + ref_all)
            specs.append(f"comet:model={cdir}")
        if "bleurt" in args.metrics:
            specs.append(f"bleurt:model={build_bleurt(Path(tmp) / 'BLEURT-20-D12', ref_all + hyp_all, 8000)}")
        print(f"built the checkpoints in {time.perf_counter() - t:.0f} s")
        for spec in specs:
            m = load_metric(spec)
            neural.set_runtime([m], batch_size=args.batch, progress=False)
            t = time.perf_counter()
            m.model()
            load = time.perf_counter() - t
            print(f"{m.base}: {_tokens(m, hyp, ref, src)}; load {load:.1f} s; load average {_load()}")
            runs = []
            for who in ("clir-eval", "library API", "clir-eval"):  # ours before and after the library's (warm-up)
                t, c = time.perf_counter(), time.process_time()
                got = (library_scores(m, hyp, ref, src, args.batch) if who == "library API" else
                       m.segment_stats(hyp, [ref], sources=src if m.uses_source else None)[:, 0])
                wall, cpu = time.perf_counter() - t, time.process_time() - c
                runs.append((who, wall, cpu, np.asarray(got, dtype=np.float64)))
                print(f"  {who}: {args.n / wall:.2f} segments/s wall, {cpu / args.n:.2f} CPU-s per segment "
                      f"({cpu / wall:.1f} CPUs busy); load average {_load()}")
            print(f"  max |clir-eval - library API| {np.abs(runs[0][3] - runs[1][3]).max():.2e}")
        if "comet" in args.metrics:
            neural._HASHES.clear()
            t = time.perf_counter()
            neural.checkpoint_hash(cdir)
            print(f"checkpoint hash of the COMET directory (first time in a process): {time.perf_counter() - t:.1f} s")


def _load() -> str:
    return benchlib.load()


def _tokens(m, hyp, ref, src) -> str:
    """Mean input length in the model's own tokens (what the speed depends on)."""
    from clir_eval.mt import neural

    if m.base == "comet":
        model = neural._MODELS[next(k for k in neural._MODELS if k[0] == "CometMetric")]
        tok = model.encoder.tokenizer
        n = [len(tok(x)["input_ids"]) for x in src + hyp + ref]
        k = len(hyp)
        return (f"tokens per segment: source {sum(n[:k]) / k:.1f}, hypothesis {sum(n[k:2 * k]) / k:.1f}, "
                f"reference {sum(n[2 * k:]) / k:.1f} (encoded one by one)")
    tok = neural._MODELS[next(k for k in neural._MODELS if k[0] == "BleurtMetric")][0]
    n = [len(tok(r, h)["input_ids"]) for r, h in zip(ref, hyp)]
    return f"tokens per (reference, hypothesis) pair: {sum(n) / len(n):.1f}"


def library_scores(m, hyp, ref, src, batch):
    import torch

    from clir_eval.mt import neural

    if m.base == "comet":
        model = neural._MODELS[next(k for k in neural._MODELS if k[0] == "CometMetric")]
        samples = [{"src": s, "mt": h, "ref": r} for s, h, r in zip(src, hyp, ref)]
        return model.predict(samples, batch_size=batch, gpus=0, progress_bar=False).scores
    tok, net, _ = neural._MODELS[next(k for k in neural._MODELS if k[0] == "BleurtMetric")]
    out = []
    with torch.no_grad():
        for i in range(0, len(hyp), batch):
            inputs = tok(ref[i:i + batch], hyp[i:i + batch], padding="longest", return_tensors="pt")
            out.extend(net(**inputs).logits.flatten().tolist())
    return out


if __name__ == "__main__":
    main()
