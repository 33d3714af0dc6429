"""The item-level section of the reports (results.json ``item_level``), after the system-level verdicts."""

from __future__ import annotations

from typing import Any, Mapping

from .blocks import Block, Bullets, Heading, Para, table_block


def _t(v: Any) -> str:
    return "–" if v is None else f"{v:+.3f}"


def _ci(c: Any) -> str:
    return "" if not c else f" [{c[0]:+.2f}, {c[1]:+.2f}]"


# measured by scripts/sim_item_ci.py (docs/statistics.md, "Item level", coverage table)
CROSSED_CAPTION = ("CIs in brackets: {level:.0%} interval for systems and items both random (crossed: jackknife over "
                   "the systems and over the items, their interaction counted once; at 95% it covered 92–98.5% of "
                   "simulated studies, mean 95.7%, docs/statistics.md).")
DESCRIPTIVE_COVERAGE = "at 95% they covered as little as 13% (items only) and 87% (systems only) in the same simulation"
NO_BOOTSTRAP = ("The descriptive percentile bootstraps over only the items or only the systems (results.json ci_items, "
                "ci_systems) are not computed (item_level.bootstrap: 0, the default; set it, e.g. 1000, to add them).")


def item_level_blocks(results: Mapping[str, Any]) -> list[Block]:
    """Heading, what was measured, one answer per target, a table per item kind, notes."""
    b = results.get("item_level")
    if not b:
        return []
    if "skipped" in b:
        return [Heading("Item level: documents and queries"), Para(f"Not computed: {b['skipped']}.")]
    st = b["settings"]
    items = b["items"]
    blocks: list[Block] = [Heading("Item level: documents and queries"), Para(
        f"Each judged relevant document ({items['documents']['n']}) and each query with a relevant document "
        f"({items['queries']['n']}), over {len(b['systems'])} systems. Document: its MT score against the same "
        "English-side document vs its retrievability (mean reciprocal rank over the queries that judge it "
        "relevant). Query: the mean MT score of its relevant documents vs the query's IR measures. "
        "An item-level τ mixes two things: (a) whether the systems' overall quality by the metric agrees with "
        "their overall quality by the target (as many independent units as systems), and (b) whether a system "
        "scores lower on the items where it retrieves worse than its own average (the part item level adds). "
        "`within` = (b): correlation across systems within each item of each system's normal-scored values minus "
        "its own mean, "
        "averaged over items (the answers and verdicts use it); `item` = (a) and (b) together, as in mt-metrics-eval; "
        "`none` (all (system, item) pairs flattened; mixes item difficulty with translation quality) and `system` "
        "(across items within each system) are descriptive, without a p-value. Every test treats the systems and the "
        "items both as random (the same systems judge every item): the coefficient over its standard error for "
        "systems and items both random, the statistic of the interval in brackets.")]
    vds = b.get("verdicts") or []
    if vds:
        blocks.append(Bullets(tuple(v["answer"] for v in vds), lead="**Answers (grouping `within`: on which items a system does worse than its own average):**"))
        blocks.append(Para(_resolution(vds, st)))
    for kind in ("documents", "queries"):
        rows = [r for r in b["correlations"] if r["items"] == kind]
        if not rows:
            continue
        by = {}
        for r in rows:
            by.setdefault((r["target"], r["mt_metric"]), {})[r["grouping"]] = r
        table = []
        k = st.get("permutation") or 0
        boot = any(r.get("ci_items") or r.get("ci_systems") for r in rows)  # descriptive bootstraps computed
        for (target, metric), g in by.items():
            it, wi = g.get("item", {}), g.get("within", {})
            one_factor = [(" / ".join(c for c in (_ci(it.get(key)).strip() for key in ("ci_items", "ci_systems")) if c), "")]
            table.append(((target, ""), (metric, ""),
                          (_t(wi.get("tau")) + _mark(wi, k) + _ci(wi.get("ci_crossed")), ""),
                          (_t(it.get("tau")) + _mark(it, k) + _ci(it.get("ci_crossed")), ""),
                          *(one_factor if boot else []),
                          (_t(g.get("none", {}).get("tau")), ""), (_t(g.get("system", {}).get("tau")), "")))
        tested = (f"× = not significant at {st['alpha']:g} (crossed test: systems and items both random)" if k else
                  "not tested (item_level.permutation: 0)")
        why = next((g["within"]["untested_reason"] for g in by.values() if g.get("within", {}).get("untested_reason")),
                   None)
        if why:
            tested += f"; {UNTESTED_MARK.strip()} = {why}"
        blocks.append(Heading(f"Item level over {kind}", 3))
        blocks.append(table_block(["target", "MT metric", "τ within [CI]", "τ item [CI]",
                                   *(["τ item: CI items only / systems only (descriptive)"] if boot else []),
                                   "τ none (descriptive)", "τ system (descriptive)"],
                                  table, "llrrrrr" if boot else "llrrrr", caption=(
            f"{st['method']} {st.get('variant') or ''} ({st['ties']}); {tested}. {CROSSED_CAPTION.format(level=st['level'])} "
            + (f"Descriptive: {st['level']:.0%} percentile bootstrap resampling only the items, and only the systems "
               f"({st['bootstrap']} draws, seed {st['seed']}); each ignores the other factor ({DESCRIPTIVE_COVERAGE})."
               if boot else NO_BOOTSTRAP))))
    notes = b.get("notes") or []
    if notes:
        blocks.append(Bullets(tuple(notes), lead="Item-level notes:"))
    return blocks


UNTESTED_MARK = " ‡"


def _mark(row: Mapping[str, Any], k: int) -> str:
    """× where the row's test did not reject; nothing where it was not tested (permutation 0) or rejected;
    :data:`UNTESTED_MARK` where the row is untested (both scales step-valued)."""
    if row.get("untested_reason"):
        return UNTESTED_MARK
    return " ×" if k and row.get("p_value") is not None and not row.get("significant") else ""


def level_summary_lines(results: Mapping[str, Any]) -> list[str]:
    """The first screen's answer, one short line each: which level (systems, items) answered, with what power,
    and each target where the levels disagree."""
    vds = results.get("verdicts") or []
    b = results.get("item_level") or {}
    if not vds and not b.get("verdicts"):
        return []
    parts = []
    if vds:
        won = [f"{v['target']} → {v['winner']}" for v in vds if v.get("winner")]
        n_sys = max((v.get("n_systems") or 0 for v in vds), default=0)
        mst = next((v.get("min_significant_tau") for v in vds if v.get("min_significant_tau") is not None), None)
        power = f"; with {n_sys} systems only |τ| ≥ {mst:.2f} can be significant" if mst is not None else ""
        parts.append(f"**System level** ({n_sys} systems): {len(won)} of {len(vds)} target(s) name a single best "
                     f"metric{': ' + ', '.join(won) if won else ''}{power}.")
    if b.get("verdicts"):
        iv = b["verdicts"]
        won = [f"{v['target']} ({v['items']}) → {v['winner']}" for v in iv if v.get("winner")]
        bounded = [v for v in iv if "beyond ±" in v.get("answer", "")]
        parts.append(f"**Item level** ({b['items']['documents']['n']} documents, {b['items']['queries']['n']} queries, "
                     f"which items a system does worse on than its own average): {len(won)} of {len(iv)} target(s) name a single best metric"
                     f"{': ' + ', '.join(won) if won else ''}"
                     + (f"; for {len(bounded)} the intervals bound every metric near 0" if bounded else "") + ".")
    clash = level_disagreements(results)
    parts += [f"**The levels disagree**: {c}." for c in clash]
    if clash:
        parts.append("Both levels can hold: the item level's verdicts rank the metrics on which items a system does "
                     "worse than its own average, a different question from the systems' overall ranking.")
    return parts


def level_summary(results: Mapping[str, Any]) -> str | None:
    """:func:`level_summary_lines` as one paragraph (None when the run has no verdicts at either level)."""
    return " ".join(level_summary_lines(results)) or None


def level_disagreements(results: Mapping[str, Any]) -> list[str]:
    """Per target, where the item level contradicts the system level, from the significant item-level pairs
    alone (p_adjusted < α): a metric ranked significantly above the system level's winner, or significantly
    above a metric the system level ranks significantly above it."""
    return [f"on {target} " + "; ".join(said) for target, said in _disagreements(results)]


def disagreeing_targets(results: Mapping[str, Any]) -> list[str]:
    """The targets of :func:`level_disagreements`, in its order."""
    return [target for target, _ in _disagreements(results)]


def _disagreements(results: Mapping[str, Any]) -> list[tuple[str, list[str]]]:
    """(target, what the levels say against each other) for each target where they disagree."""
    out = []
    for v in results.get("verdicts") or []:
        above = {(p["a"], p["b"]) for p in v.get("pairwise", []) if p.get("significant")}
        said = []
        for w in (results.get("item_level") or {}).get("verdicts") or []:
            if w["target"] != v["target"]:
                continue
            for p in w.get("pairwise", []):
                if not p.get("significant"):  # p_adjusted < the verdict's α, set where the pairs were tested
                    continue
                within = f"within {w['items']}, p_adj {p['p_adjusted']:.2g}"
                if p["b"] == v.get("winner"):
                    said.append(f"the system level names {p['b']} best, the item level ranks {p['a']} significantly "
                                f"above it ({within})")
                elif (p["b"], p["a"]) in above:
                    said.append(f"the system level ranks {p['b']} significantly above {p['a']}, the item level "
                                f"{p['a']} significantly above {p['b']} ({within})")
        if said:
            out.append((v["target"], said))
    return out


def _resolution(vds, st) -> str:
    """The test behind the answers, its family and what bounds it: the smallest p it can reach, and how many
    decisions the draws left unsettled."""
    pairs = [p for v in vds for p in v.get("pairwise", [])]
    fam = vds[0].get("family", "target")
    text = (f"Test: {vds[0].get('test', 'whole-system swaps')}; {st.get('correction', 'holm')}-adjusted "
            + ("over each target's metric pairs" if fam == "target" else f"over all {len(pairs)} metric pairs")
            + f", α = {st['alpha']:g}.")
    floor = vds[0].get("p_floor")
    if vds[0].get("p_method") == "crossed":
        return text + " No random draws: every decision is settled."
    if floor is not None:
        text += f" No p can be below {floor:.2g} ({'with every swap pattern of the ' + str(vds[0].get('n_systems')) + ' systems' if vds[0].get('exact') else 'at the cap of draws'})."
    unsettled = sum(v.get("unsettled") or 0 for v in vds)
    if unsettled:
        text += (f" {unsettled} decision(s) stayed unsettled at the cap of draws (their p is within its Monte Carlo "
                 "error of α): more draws (item_level.permutation) would settle them.")
        for note in dict.fromkeys(v["unsettled_note"] for v in vds if v.get("unsettled_note")):
            text += f" {v_target(vds, note)}{note}"
    elif pairs:
        text += " Every decision is settled (exact, or its Monte Carlo interval lies on one side of α)."
    return text


def v_target(vds, note: str) -> str:
    """"target over items: " before an unsettled note (the verdict it belongs to)."""
    v = next(v for v in vds if v.get("unsettled_note") == note)
    return f"{v['target']} over {v['items']}: "
