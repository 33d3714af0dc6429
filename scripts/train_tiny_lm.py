#!/usr/bin/env python
"""Train a tiny word-level causal LM (GPT-2 architecture) on local English text, for the
``hfppl:model=DIR`` fluency metric's real-data example. Needs ``[hf]``
(torch, transformers). Nothing is downloaded: the tokenizer and model are built here.

    python scripts/train_tiny_lm.py OUT_DIR TEXT [TEXT ...] [--epochs 4] [--seed 13]

TEXT: plain or .gz files, one sentence per line. Words (``\\w+`` or a run of punctuation) seen
at least ``--min-count`` times form the vocabulary; the rest are ``<unk>``. Deterministic for a
seed on one thread. This is a small model on little text: its perplexities rank fluency
crudely and are not comparable with any published LM's.
"""

from __future__ import annotations

import argparse
import gzip
import re
from collections import Counter
from pathlib import Path

WORD = re.compile(r"\w+|[^\w\s]+")


def _lines(path: str) -> list[str]:
    op = gzip.open if path.endswith(".gz") else open
    with op(path, "rt", encoding="utf-8") as fh:
        return [ln.strip() for ln in fh if ln.strip()]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("texts", nargs="+")
    ap.add_argument("--epochs", type=int, default=4)
    ap.add_argument("--min-count", type=int, default=2)
    ap.add_argument("--dim", type=int, default=64)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--context", type=int, default=128)
    ap.add_argument("--seed", type=int, default=13)
    a = ap.parse_args()

    import torch
    import transformers
    from tokenizers import Tokenizer, models, pre_tokenizers

    torch.manual_seed(a.seed)
    torch.set_num_threads(1)
    sents = [s for p in a.texts for s in _lines(p)]
    counts = Counter(w for s in sents for w in WORD.findall(s))
    vocab = ["<unk>", "<s>", "</s>", "<pad>"] + sorted(w for w, c in counts.items() if c >= a.min_count)
    ids = {w: i for i, w in enumerate(vocab)}
    tk = Tokenizer(models.WordLevel(ids, unk_token="<unk>"))
    tk.pre_tokenizer = pre_tokenizers.Whitespace()
    fast = transformers.PreTrainedTokenizerFast(tokenizer_object=tk, bos_token="<s>", eos_token="</s>",
                                                unk_token="<unk>", pad_token="<pad>")
    cfg = transformers.GPT2Config(vocab_size=len(vocab), n_positions=a.context, n_embd=a.dim, n_layer=a.layers,
                                  n_head=2, bos_token_id=1, eos_token_id=2)
    model = transformers.GPT2LMHeadModel(cfg)
    seqs = [[1] + fast(s, add_special_tokens=False)["input_ids"][: a.context - 2] + [2] for s in sents]
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    g = torch.Generator().manual_seed(a.seed)
    model.train()
    for epoch in range(a.epochs):
        order = torch.randperm(len(seqs), generator=g).tolist()
        total = 0.0
        for i in range(0, len(order), 32):
            batch = [seqs[j] for j in order[i:i + 32]]
            n = max(map(len, batch))
            x = torch.full((len(batch), n), 3)
            mask = torch.zeros((len(batch), n), dtype=torch.long)
            for r, s in enumerate(batch):
                x[r, :len(s)] = torch.tensor(s)
                mask[r, :len(s)] = 1
            labels = x.masked_fill(mask == 0, -100)
            loss = model(input_ids=x, attention_mask=mask, labels=labels).loss
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item() * len(batch)
        print(f"epoch {epoch + 1}: mean training loss {total / len(seqs):.3f} (ppl {torch.tensor(total / len(seqs)).exp():.1f})")
    model.eval()
    a.out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(a.out)
    fast.save_pretrained(a.out)
    unk = sum(c for w, c in counts.items() if w not in ids) / max(1, sum(counts.values()))
    print(f"{a.out}: {len(sents)} sentences, vocabulary {len(vocab)} (min count {a.min_count}; "
          f"{unk:.1%} of training tokens are <unk>), {sum(p.numel() for p in model.parameters())} parameters")


if __name__ == "__main__":
    main()
