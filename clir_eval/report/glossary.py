"""Plain-words explanations of the report's column names (MT metrics, IR measures, human scores)."""

from __future__ import annotations

import re
from typing import Iterable

MT_WORDS = {
    "bleu": "BLEU: how many of the reference's word sequences (1 to 4 words) the translation contains, with a "
            "penalty for being too short; 0-100, higher is better.",
    "bleu-sbp": "BLEU with a stricter penalty for short sentences; higher is better.",
    "chrf": "chrF: overlap of character sequences with the reference, recall weighted twice as much as "
            "precision; 0-100, higher is better.",
    "chrf1": "chrF with precision and recall weighted equally; 0-100, higher is better.",
    "chrf++": "chrF plus word pairs; higher is better.",
    "ter": "TER: how many word edits turn the translation into the reference, per reference word; lower is better.",
    "macrof": "MacroF: per word type of the reference, how well the translation gets it, averaged over types so "
              "rare words count as much as common ones; higher is better.",
    "macrof1": "MacroF1: per word type of the reference, how well the translation gets it, averaged over types so "
               "rare words count as much as common ones; higher is better.",
    "microf": "MicroF: like MacroF but frequent words weigh more; higher is better.",
    "microf1": "MicroF1: like MacroF1 but frequent words weigh more; higher is better.",
    "lmppl": "Perplexity of the translation under a language model (fluency only, no reference); lower is better.",
    "hfppl": "Perplexity of the translation under a language model (fluency only, no reference); lower is better.",
    "4grr": "Share of the reference's 4-word sequences found in the translation; higher is better.",
    "wrr": "Word recognition rate, 1 minus word error rate; higher is better.",
    "comet": "COMET: a neural model's judgement of translation quality; higher is better.",
    "bleurt": "BLEURT: a neural model's judgement of translation quality; higher is better.",
}

IR_WORDS = {
    "map": "MAP: average precision over the relevant documents of a query, averaged over queries; rewards ranking "
           "every relevant document high. 0-1, higher is better.",
    "ap": "AP (MAP): average precision over the relevant documents of a query, averaged over queries. 0-1.",
    "ndcg": "nDCG: ranking quality with gains discounted by rank, 1 = ideal order. 0-1, higher is better.",
    "p": "P@k: share of the top k results that are relevant. 0-1.",
    "r": "R@k: share of a query's relevant documents found in the top k. 0-1.",
    "recall": "Recall@k: share of a query's relevant documents found in the top k. 0-1.",
    "recip_rank": "Reciprocal rank: 1 / rank of the first relevant result, averaged over queries. 0-1.",
    "rr": "Reciprocal rank: 1 / rank of the first relevant result, averaged over queries. 0-1.",
    "rbo": "RBO: how similar the system's ranking is to the ranking on the human English documents "
           "(rank-biased overlap; 1 = identical). 0-1.",
    "aqwv": "AQWV: 1 - miss rate - β × false-alarm rate at a fixed cut-off (the MATERIAL programme's measure); "
            "1 is perfect, can be negative.",
    "mqwv": "MQWV: AQWV at the best cut-off chosen with hindsight; an upper bound of AQWV.",
}

HUMAN_WORDS = "Human judgement of the systems (e.g. WMT direct assessment); higher is better."


def _base(name: str) -> str:
    return re.split(r"[:@]", name.strip(), maxsplit=1)[0].lower()


def explain(name: str, kind: str) -> str:
    """A plain sentence for a column name; ``kind`` is ``mt``, ``ir`` or ``human``."""
    base = _base(name)
    if kind == "mt":
        return MT_WORDS.get(base, "An MT metric (see its signature below).")
    if kind == "human":
        return HUMAN_WORDS
    at = re.search(r"@(\d+)", name)
    if base in IR_WORDS:
        text = IR_WORDS[base]
        return text.replace("@k", f"@{at.group(1)}").replace("top k", f"top {at.group(1)}") if at else text
    m = re.fullmatch(r"(p|r|recall|ndcg_cut|recip_rank)_(\d+)", name.lower())
    if m:
        fam, k = m.groups()
        fam = {"ndcg_cut": "ndcg"}.get(fam, fam)
        return IR_WORDS[fam].replace("@k", f"@{k}").replace("top k", f"top {k}") + f" (cut-off {k})"
    return "An IR measure (see its signature below)."


def glossary(names: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """(name, explanation) for each (kind, name), first occurrence kept."""
    seen, out = set(), []
    for kind, name in names:
        if name not in seen:
            seen.add(name)
            out.append((name, explain(name, kind)))
    return out
