"""Report sections of the ``run`` analyses (favoritism, MacroF per frequency bucket) as blocks of :mod:`.blocks`."""

from __future__ import annotations

from itertools import combinations
from typing import Any, Mapping

from .blocks import Block, Heading, Para, fmt_num, natural_key, table_block

TEXT_CHARS = 60


def short(text: str, n: int = TEXT_CHARS) -> str:
    """One line of at most ``n`` characters (whitespace collapsed, "…" when cut; "(empty)" for none)."""
    text = " ".join(str(text).split())
    return "(empty)" if not text else text if len(text) <= n else text[:n - 1] + "…"


def analyses_blocks(results: Mapping[str, Any]) -> list[Block]:
    a = results.get("analyses") or {}
    return favoritism_blocks(a.get("favoritism")) + buckets_blocks(a.get("frequency_buckets"))


def favoritism_blocks(f: Mapping[str, Any] | None) -> list[Block]:
    if not f:
        return []
    sa, sb, metrics = f["system_a"], f["system_b"], f["metrics"]
    scores = "; ".join(f"{m} {sa} {v['score_a']:.2f}, {sb} {v['score_b']:.2f}" for m, v in metrics.items())
    blocks: list[Block] = [Heading(f"Favoritism: segments each metric credits to {sa} over {sb}"), Para(
        f"Gowda et al. 2021 §4.1: δ_M(i; h) = M(h) − M(h without segment i); favoritism = δ_M(i; {sa}) − "
        f"δ_M(i; {sb}) on the metric's own 0-100 scale (positive: segment i adds more to {sa}'s corpus score than "
        f"to {sb}'s). The top {f['top']} of {f['n_segments']} segments by |favoritism| per metric; segment = "
        f"0-based line of the MT test set. Corpus scores: {scores}. These are descriptive: no test is run on them.")]
    tops = {m: {r["segment"] for r in v["segments"]} for m, v in metrics.items()}
    if len(tops) > 1:
        blocks.append(Para("Segments shared by two metrics' top lists: " + "; ".join(
            f"{x} and {y}: {len(tops[x] & tops[y])} of {f['top']}" for x, y in combinations(tops, 2)) + "."))
    for m, v in metrics.items():
        rows = [[(str(r["rank"]), ""), (str(r["segment"]), ""), (f"{r['favoritism']:+.3f}", ""),
                 (f"{r['delta_a']:+.3f}", ""), (f"{r['delta_b']:+.3f}", ""),
                 (", ".join(r["also_top_in"]) or ("only here" if len(metrics) > 1 else ""), ""),
                 (short(r["reference"]), ""), (short(r["hyp_a"]), ""), (short(r["hyp_b"]), "")]
                for r in v["segments"]]
        blocks += [Heading(m, 3), table_block(
            ["rank", "segment", "favoritism", f"δ {sa}", f"δ {sb}", "also in top of", "reference", sa, sb], rows,
            "rrrrrlwww", f"{m}: texts cut at {TEXT_CHARS} characters (full text in results.json). "
                         f"Signature: `{v['signature']}`.")]
    return blocks


def buckets_blocks(b: Mapping[str, Any] | None) -> list[Block]:
    if not b:
        return []
    labels = [x["label"] for x in b["buckets"]]
    systems = sorted(b["systems"], key=natural_key)
    first = b["systems"][systems[0]] if systems else []
    rows = [[("types", "em")] + [(str(r["n_types"]), "") for r in first[:len(labels)]] + [("", "")]]
    for s in systems:
        per = b["systems"][s]
        rows.append([(s, "")] + [(fmt_num(r["macro_f"], 2), "") for r in per[:len(labels)]]
                    + [(str(per[len(labels)]["n_types"]), "")])
    return [Heading("MacroF by reference-frequency bucket"), Para(
        f"Gowda et al. 2021, Figure 1: MacroF (β = {b['beta']:g}; mean per-type F × 100) of each system over the "
        "reference types ranked by their reference count (ties by the type string) and cut into rank buckets; the "
        "last column counts the types a system produces that no reference has (F = 0 for each). The type-weighted "
        "mean of the buckets is the system's MacroF. Descriptive: no test is run on differences between systems."),
        table_block(["system", *(f"ranks {x}" for x in labels), "types not in reference"], rows,
                    "l" + "n" * (len(labels) + 1), f"Signature: `{b['signature']}`.")]
