"""LM fluency of MT output (Edunov et al. 2020): per-token perplexity under a target-language LM (KenLM or a local Hugging Face causal LM).

``lmppl:model=PATH`` reads an ARPA or KenLM binary model with the ``kenlm`` Python module (optional
extra ``pip install 'clir-eval[lm]'``); nothing is downloaded. Each hypothesis is tokenised with the
BLEU tokenizer (``--tokenize``, and ``--lowercase``), which must match how the LM was trained, and
scored with sentence boundaries (``bos``/``eos``). Statistics per segment: [Σ log10 P(token), tokens
(+1 for ``</s>``)]; corpus perplexity = 10^(−Σ log10 P / Σ tokens), lower is better. References are
not used (the score is reference-free); the signature names the model by file name and checksum.

``hfppl:model=DIR`` does the same with a Hugging Face causal LM saved in a local directory
(``save_pretrained``; optional extra ``pip install 'clir-eval[hf]'``: torch + transformers), loaded
with ``local_files_only=True``: nothing is downloaded, a hub id is an error. The hypothesis (only
``--lowercase`` applies) is tokenised by the model's own tokenizer; every token is scored given the
ones before it, the first one given the tokenizer's BOS token (``bos``; without it the first token
is context only), and the EOS token is scored after the last (``eos``). One segment at a time on one
CPU thread, so the statistics do not depend on batching or the machine's thread count.
"""

from __future__ import annotations

import hashlib
import math
from importlib.metadata import version
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from .. import lazylibs
from ..errors import UserError
from ..io.files import file_checksum
from .base import MTMetric, Param, check_streams, register, resampling_fields, tokenizer

__all__ = ["LMPerplexityMetric", "HFPerplexityMetric"]

_MODELS: dict[str, Any] = {}


def _load(path: str):
    """The kenlm.Model for ``path``, loaded once per process."""
    if path not in _MODELS:
        try:
            kenlm = lazylibs.kenlm()
        except ImportError:
            raise UserError("metric lmppl needs the kenlm Python module; install it with pip install 'clir-eval[lm]'") from None
        p = Path(path)
        if not p.is_file():
            raise UserError(f"lmppl: language model not found: {path}; give model=PATH to an ARPA or KenLM binary file")
        try:
            _MODELS[path] = kenlm.Model(str(p))
        except (OSError, RuntimeError, ValueError) as e:
            raise UserError(f"lmppl: cannot read language model {path} ({' '.join(str(e).split())[:200]}); "
                            "it must be an ARPA or KenLM binary file") from None
    return _MODELS[path]


@register("lmppl", (
    Param("model", str, "", "path to an ARPA or KenLM binary n-gram model", bool, "a file path"),
    Param("bos", bool, True, "score the first token after <s>"),
    Param("eos", bool, True, "score </s> after the last token"),
), "per-token perplexity of the output under a KenLM n-gram model (lower is better; lmppl:model=PATH)")
class LMPerplexityMetric(MTMetric):
    """Per-token perplexity under a user-supplied n-gram LM (reference-free fluency)."""

    higher_is_better = False

    def segment_stats(self, hyps: Sequence[str], refs) -> np.ndarray:
        check_streams(hyps, refs)
        if not self.params["model"]:
            raise UserError("metric lmppl needs a model: lmppl:model=PATH (ARPA or KenLM binary)")
        model = _load(self.params["model"])
        tok = tokenizer(self.tokenize)
        bos, eos = self.params["bos"], self.params["eos"]
        out = np.zeros((len(hyps), 2), dtype=np.float64)
        for i, line in enumerate(hyps):
            if self.lowercase:
                line = line.lower()
            tokens = tok(line.rstrip()).split()
            out[i, 0] = model.score(" ".join(tokens), bos=bos, eos=eos)
            out[i, 1] = len(tokens) + (1 if eos else 0)
        return out

    def score_totals(self, totals):
        logp, n = float(totals[0]), float(totals[1])
        ppl = 10.0 ** (-logp / n) if n > 0 else 0.0
        return ppl, {"log10_prob": logp, "tokens": int(n)}

    def signature(self, nrefs: int, **extra) -> str:
        path = self.params["model"]
        model = _load(path)
        return "|".join([
            *resampling_fields(extra), f"lm:{Path(path).name}", f"lmsha1:{file_checksum(path)[:12]}", f"order:{model.order}",
            f"case:{'lc' if self.lowercase else 'mixed'}", f"tok:{tokenizer(self.tokenize).signature()}",
            f"bos:{'yes' if self.params['bos'] else 'no'}", f"eos:{'yes' if self.params['eos'] else 'no'}",
            f"kenlm:{_version('kenlm')}",
        ])


_HF: dict[str, Any] = {}


def _load_hf(path: str):
    """(tokenizer, model, context length) of the causal LM saved in directory ``path``, loaded once per process."""
    if path not in _HF:
        try:
            lazylibs.torch()
            transformers = lazylibs.transformers()
        except ImportError:
            raise UserError("metric hfppl needs torch and transformers; install them with "
                            "pip install 'clir-eval[hf]'") from None
        if not Path(path).is_dir():
            raise UserError(f"hfppl: model directory not found: {path}; give model=DIR, a local directory written "
                            "by save_pretrained (nothing is downloaded, hub ids are not accepted)")
        hf_logging = lazylibs.transformers_logging()
        hf_logging.disable_progress_bar()  # stderr carries only the harness's own lines
        hf_logging.set_verbosity_error()
        try:
            tok = transformers.AutoTokenizer.from_pretrained(path, local_files_only=True)
            model = transformers.AutoModelForCausalLM.from_pretrained(path, local_files_only=True)
        except (OSError, ValueError, KeyError) as e:
            raise UserError(f"hfppl: cannot load a causal LM from {path} ({' '.join(str(e).split())[:200]}); it must "
                            "hold a tokenizer and a causal LM saved with save_pretrained") from None
        model.eval()
        ctx = getattr(model.config, "max_position_embeddings", None) or getattr(model.config, "n_positions", None)
        _HF[path] = (tok, model, ctx)
    return _HF[path]


def hf_token_logprobs(tok, model, ids: Sequence[int]) -> np.ndarray:
    """Natural-log probability of ``ids[1:]``, each given the ids before it (one forward pass)."""
    torch = lazylibs.torch()
    if len(ids) < 2:
        return np.zeros(0)
    with torch.no_grad():
        logits = model(torch.tensor([list(ids)])).logits[0, :-1].double()
    logp = torch.log_softmax(logits, dim=-1)
    return logp.gather(1, torch.tensor(list(ids[1:])).unsqueeze(1)).squeeze(1).numpy()


@register("hfppl", (
    Param("model", str, "", "path to a local directory holding a Hugging Face causal LM and its tokenizer", bool,
          "a directory path"),
    Param("bos", bool, True, "score the first token given the tokenizer's BOS token"),
    Param("eos", bool, True, "score the tokenizer's EOS token after the last token"),
), "per-token perplexity of the output under a local Hugging Face causal LM (lower is better; hfppl:model=DIR)")
class HFPerplexityMetric(LMPerplexityMetric):
    """Per-token perplexity under a user-supplied causal LM directory (reference-free fluency)."""

    def segment_stats(self, hyps: Sequence[str], refs) -> np.ndarray:
        check_streams(hyps, refs)
        if not self.params["model"]:
            raise UserError("metric hfppl needs a model: hfppl:model=DIR (a local Hugging Face causal LM)")
        tok, model, ctx = _load_hf(self.params["model"])  # a UserError when torch/transformers are missing
        torch = lazylibs.torch()
        bos, eos = self._special(tok)
        out = np.zeros((len(hyps), 2), dtype=np.float64)
        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            for i, line in enumerate(hyps):
                text = line.rstrip("\n").lower() if self.lowercase else line.rstrip("\n")
                ids = bos + tok(text, add_special_tokens=False)["input_ids"] + eos
                if ctx and len(ids) > ctx:
                    raise UserError(f"hfppl: segment {i + 1} has {len(ids)} tokens, more than the model's context of "
                                    f"{ctx}; split long segments or use a model with a longer context")
                lp = hf_token_logprobs(tok, model, ids)
                out[i, 0] = float(lp.sum()) / math.log(10)
                out[i, 1] = len(lp)
        finally:
            torch.set_num_threads(threads)
        return out

    def _special(self, tok) -> tuple[list[int], list[int]]:
        def one(flag: str, token_id) -> list[int]:
            if not self.params[flag]:
                return []
            if token_id is None:
                raise UserError(f"hfppl: the tokenizer of {self.params['model']} has no {flag.upper()} token; "
                                f"use hfppl:model=DIR,{flag}=false")
            return [int(token_id)]

        return one("bos", tok.bos_token_id), one("eos", tok.eos_token_id)

    def signature(self, nrefs: int, **extra) -> str:
        path = self.params["model"]
        tok, model, _ = _load_hf(path)
        return "|".join([
            *resampling_fields(extra), f"lm:{Path(path).name}", f"lmsha1:{_dir_checksum(path)}",
            f"arch:{type(model).__name__}", f"tokenizer:{type(tok).__name__}", f"case:{'lc' if self.lowercase else 'mixed'}",
            f"bos:{'yes' if self.params['bos'] else 'no'}", f"eos:{'yes' if self.params['eos'] else 'no'}",
            f"torch:{_version('torch')}", f"transformers:{_version('transformers')}",
        ])


def _dir_checksum(path: str) -> str:
    """sha1 prefix over the names and checksums of the files in a model directory (top level)."""
    h = hashlib.sha1()
    for f in sorted(Path(path).iterdir()):
        if f.is_file():
            h.update(f"{f.name}:{file_checksum(str(f))}\n".encode())
    return h.hexdigest()[:12]


def _version(dist: str) -> str:
    try:
        return version(dist)
    except Exception:  # noqa: BLE001 - a build without metadata
        return "unknown"
