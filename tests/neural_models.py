"""Tiny COMET and BLEURT checkpoints for the tests, built in a temp dir in each library's published
layout: random weights, tokenizers trained (or, for WordPiece, built) here from a few sentences
(nothing downloaded)."""

from __future__ import annotations

from pathlib import Path

TEXT = ["the cat sat on the mat", "a dog barks at the moon", "die Katze sitzt auf der Matte",
        "ein Hund bellt den Mond an", "machine translation for cross language retrieval",
        "the committee adopted the report", "der Ausschuss nahm den Bericht an", "naïve café über straße"] * 4


def comet_checkpoint(root: Path, encoder_name: str = "tiny-xlmr", encoder_path: str | None = None) -> Path:
    """``root/hparams.yaml``, ``root/checkpoints/model.ckpt`` (a COMET regression metric, as the
    published models are) and the encoder's tokenizer and config in ``root/<encoder_name>/``;
    the checkpoint names the encoder ``encoder_path`` (default: ``encoder_name``, a bare name as
    ``xlm-roberta-large`` is in the published models)."""
    import pytorch_lightning as pl
    import torch
    import yaml
    from comet.models import RegressionMetric
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers
    from transformers import XLMRobertaConfig, XLMRobertaModel, XLMRobertaTokenizerFast

    enc = root / encoder_name
    tok = Tokenizer(models.Unigram())
    tok.normalizer = normalizers.NFKC()
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    tok.decoder = decoders.Metaspace()
    tok.train_from_iterator(TEXT, trainers.UnigramTrainer(
        vocab_size=150, special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"], unk_token="<unk>"))
    tok.post_processor = processors.TemplateProcessing(  # XLM-R's: <s> A </s> </s> B </s>
        single="<s> $A </s>", pair="<s> $A </s> </s> $B </s>", special_tokens=[("<s>", 0), ("</s>", 2)])
    fast = XLMRobertaTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>", sep_token="</s>",
                                   cls_token="<s>", unk_token="<unk>", pad_token="<pad>", mask_token="<mask>")
    fast.save_pretrained(enc)
    torch.manual_seed(0)
    cfg = XLMRobertaConfig(vocab_size=len(fast), hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                           intermediate_size=32, max_position_embeddings=40, pad_token_id=1, bos_token_id=0,
                           eos_token_id=2, initializer_range=0.3)
    XLMRobertaModel(cfg, add_pooling_layer=False).save_pretrained(enc)
    model = RegressionMetric(encoder_model="XLM-RoBERTa", pretrained_model=str(enc), hidden_sizes=[8],
                             layer="mix", pool="avg", load_pretrained_weights=True, local_files_only=True)
    with torch.no_grad():  # the estimator's random init gives nearly constant scores: spread them
        for p in model.estimator.parameters():
            p.mul_(4.0)
    hp = {**dict(model.hparams), "pretrained_model": encoder_path or encoder_name,
          "class_identifier": "regression_metric", "load_pretrained_weights": True, "local_files_only": False}
    (root / "checkpoints").mkdir(parents=True, exist_ok=True)
    torch.save({"state_dict": model.state_dict(), "hyper_parameters": hp, "pytorch-lightning_version": pl.__version__},
               root / "checkpoints" / "model.ckpt")
    (root / "hparams.yaml").write_text(yaml.safe_dump(hp), encoding="utf-8")
    return root


def bleurt_checkpoint(root: Path, tokenizer: str = "wordpiece") -> Path:
    """A bleurt-pytorch directory: ``config.json``, ``model.safetensors`` and ``vocab.txt``
    (WordPiece, as BLEURT-base/large) or ``spm.model`` (SentencePiece, as BLEURT-20)."""
    import torch
    from bleurt_pytorch import BleurtConfig, BleurtForSequenceClassification

    root.mkdir(parents=True, exist_ok=True)
    if tokenizer == "wordpiece":
        from tokenizers import normalizers, pre_tokenizers

        # the vocabulary is built, not trained (the WordPiece trainer orders tied pieces differently
        # from run to run): every character, as a word start and as a continuation, and every word
        norm, pre = normalizers.BertNormalizer(lowercase=True), pre_tokenizers.BertPreTokenizer()
        words = {w for t in TEXT for w, _ in pre.pre_tokenize_str(norm.normalize_str(t))}
        chars = sorted({c for w in words for c in w})
        vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *chars, *(f"##{c}" for c in chars),
                 *sorted(words - set(chars))]
        (root / "vocab.txt").write_text("".join(t + "\n" for t in vocab), encoding="utf-8")
        n_vocab = len(vocab)
    else:
        import sentencepiece as spm

        train = root / "train.txt"
        train.write_text("\n".join(TEXT), encoding="utf-8")
        spm.SentencePieceTrainer.train(
            input=str(train), model_prefix=str(root / "spm"), vocab_size=60, pad_id=0, unk_id=1, bos_id=-1,
            eos_id=-1, user_defined_symbols=["[CLS]", "[SEP]", "[MASK]"], pad_piece="[PAD]", unk_piece="[UNK]",
            minloglevel=2, hard_vocab_limit=False)
        train.unlink()
        (root / "spm.vocab").unlink()
        n_vocab = spm.SentencePieceProcessor(model_file=str(root / "spm.model")).get_piece_size()
    torch.manual_seed(1)
    cfg = BleurtConfig(vocab_size=n_vocab, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                       intermediate_size=32, max_position_embeddings=64, initializer_range=0.5)
    BleurtForSequenceClassification(cfg).save_pretrained(root)
    return root
