#!/usr/bin/env python
"""Segments per second of the neural metrics on CPU, beside each library's own API in the same run.

Needs the [neural] extra. Nothing is downloaded, so the real checkpoints are not used: the script
builds, in a temp dir, random-weight checkpoints of the published architectures (speed depends on
the architecture and the token counts, not on the weight values):

* COMET: wmt22-comet-da's (XLM-R large encoder: 24 layers, hidden 1024, 16 heads, FF 4096,
  vocabulary 250,002; estimator 3072-1024; layer mix, avg pooling), scored by ``comet:model=DIR``
  and by comet's ``model.predict(samples, gpus=0)``;
* BLEURT: a 12-layer, hidden-768 BLEURT (BERT-base sized), scored by ``bleurt:model=DIR`` and by
  bleurt-pytorch's README usage.

The tokenizers are trained here on the benchmark's own text (Unigram / WordPiece, 32k pieces), so
token counts are of the same order as, but not equal to, the real models' tokenizers'. Input: the
first N segments of WMT21 de-en (source, Facebook-AI output, reference A) from ../shared/data.

    python scripts/bench_neural.py [--n 64] [--batch 16] [--data ../shared/data]
"""

from __future__ import annotations

import argparse
import gzip
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


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


def build_bleurt(root: Path, text: list[str]) -> Path:
    import torch
    from bleurt_pytorch import BleurtConfig, BleurtForSequenceClassification
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, trainers

    root.mkdir(parents=True)
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=False)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.train_from_iterator(text, trainers.WordPieceTrainer(
        vocab_size=32000, special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]))
    vocab = [t for t, _ in sorted(tok.get_vocab().items(), key=lambda kv: kv[1])]
    (root / "vocab.txt").write_text("".join(t + "\n" for t in vocab), encoding="utf-8")
    (root / "tokenizer_config.json").write_text('{"do_lower_case": false, "model_max_length": 512}')
    torch.manual_seed(0)
    cfg = BleurtConfig(vocab_size=len(vocab), hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
                       intermediate_size=3072, max_position_embeddings=512)
    BleurtForSequenceClassification(cfg).save_pretrained(root)
    return root


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=64)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--data", type=Path, default=Path(__file__).resolve().parent.parent.parent / "shared" / "data")
    args = ap.parse_args()
    os.environ["HF_HUB_OFFLINE"] = "1"
    d = args.data / "wmt21" / "de-en"
    src_all = _lines(d / "newstest2021.de-en.src.de.gz")
    ref_all = _lines(d / "newstest2021.de-en.ref.A.en.gz")
    src, ref = src_all[:args.n], ref_all[:args.n]
    hyp = _lines(d / "newstest2021.de-en.hyp.Facebook-AI.en.gz", args.n)
    import numpy as np
    import torch

    from clir_eval.mt import neural
    from clir_eval.mt.base import load_metric

    print(f"load average {os.getloadavg()[0]:.1f}; {args.n} WMT21 de-en segments (mean {np.mean([len(h.split()) for h in hyp]):.1f} hypothesis words), "
          f"batch {args.batch}, torch {torch.__version__} on {torch.get_num_threads()} CPU threads")
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        cdir = build_comet(Path(tmp) / "comet", src_all + ref_all)
        bdir = build_bleurt(Path(tmp) / "bleurt", ref_all)
        print(f"built checkpoints in {time.perf_counter() - t:.0f} s "
              f"(model.ckpt {(cdir / 'checkpoints' / 'model.ckpt').stat().st_size / 2**30:.2f} GiB)")
        for spec in (f"comet:model={cdir}", f"bleurt:model={bdir}"):
            m = load_metric(spec)
            neural.set_runtime([m], batch_size=args.batch, progress=False)
            t = time.perf_counter()
            m.model()
            load = time.perf_counter() - t
            t, c = time.perf_counter(), time.process_time()
            ours = m.segment_stats(hyp, [ref], sources=src)[:, 0] if m.uses_source else m.segment_stats(hyp, [ref])[:, 0]
            ours_s, ours_c = time.perf_counter() - t, time.process_time() - c
            t, c = time.perf_counter(), time.process_time()
            lib = library_scores(m, hyp, ref, src, args.batch)
            lib_s, lib_c = time.perf_counter() - t, time.process_time() - c
            t, c = time.perf_counter(), time.process_time()  # ours again, after the library's (warm-up effects)
            m.segment_stats(hyp, [ref], sources=src) if m.uses_source else m.segment_stats(hyp, [ref])
            ours_s, ours_c = min(ours_s, time.perf_counter() - t), min(ours_c, time.process_time() - c)
            print(f"{m.base}: load {load:.1f} s; clir-eval (best of 2) {args.n / ours_s:.2f} segments/s wall, "
                  f"{ours_c / args.n:.2f} CPU-s per segment; library API {args.n / lib_s:.2f} segments/s wall, "
                  f"{lib_c / args.n:.2f} CPU-s per segment (CPU ratio library/clir-eval {lib_c / ours_c:.2f}); "
                  f"max |difference| {np.abs(ours - np.asarray(lib)).max():.2e}")
        neural._HASHES.clear()
        t = time.perf_counter()
        neural.checkpoint_hash(cdir)
        print(f"checkpoint hash of the COMET directory (first time in a process): {time.perf_counter() - t:.1f} s")


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
