"""The "Study design" section of a run's reports, present once ``clir-eval design`` has run on
the run's output directory (it adds a ``design`` block to results.json: the observed size, the
method, the power of every question at the observed size and the one-line answers)."""

from __future__ import annotations

from typing import Any, Mapping

from .blocks import Block, Bullets, Heading, Para, table_block
from .verdicts import UNINFORMATIVE_MARK, uninformative_targets


def design_summary(results: Mapping[str, Any]) -> str | None:
    """One first-screen sentence: with what power this run's questions could be answered."""
    d = results.get("design")
    if not d:
        return None
    goal = d["settings"]["power"]
    rows = d["observed_rows"]
    if not rows:  # the sizes simulated did not include the observed one
        return None
    uninf = set(uninformative_targets(results))
    docs = [r for r in rows if "n_documents" in r and not r.get("b")]
    doc_pairs = [r for r in rows if "n_documents" in r and r.get("b")]
    system = [r for r in rows if "n_documents" not in r]
    left_out = list(dict.fromkeys(r["target"] for r in system if r["target"] in uninf))
    taus = [r for r in system if not r.get("b") and r["target"] not in uninf]
    pairs = [r for r in system if r.get("b") and r["target"] not in uninf]
    n_t = sum(r["power"] >= goal for r in taus)
    n_p = sum(r["power"] >= goal for r in pairs)
    n_d = sum(r["power"] >= goal for r in docs)
    n_dp = sum(r["power"] >= goal for r in doc_pairs)
    counts = []
    if taus or pairs:
        counts.append(f"{n_t} of {len(taus)} τ(metric, measure) reach {goal:.0%} power to be significant, {n_p} of "
                      f"{len(pairs)} metric pairs to be separated")
    if docs:
        counts.append(f"{n_d} of {len(docs)} item-level τ over the {d['observed']['n_documents']} documents "
                      + (f"reach {goal:.0%} power " if not counts else "") + "to be significant")
    if doc_pairs:
        counts.append(f"{n_dp} of {len(doc_pairs)} metric pairs " + (f"reach {goal:.0%} power " if not counts else "")
                      + "to be separated within documents")
    skipped = (f"{'; not counted' if counts else 'Not counted'}: {', '.join(left_out)} (flagged UNINFORMATIVE: "
               "power for a target that barely separates the systems says little)") if left_out else ""
    return (f"**Power at this size** ({d['observed']['n_systems']} systems × {d['observed']['n_queries']} queries, "
            f"study design by simulation): {', '.join(counts)}{skipped}; the Study design section says how large a "
            "study would answer the rest.")


def design_blocks(results: Mapping[str, Any]) -> list[Block]:
    d = results.get("design")
    if not d:
        return []
    s = d["settings"]
    uninf = set(uninformative_targets(results))
    rows = [[(r["target"] + (" (documents, item τ)" if "n_documents" in r else "")
              + (UNINFORMATIVE_MARK if r["target"] in uninf and "n_documents" not in r else ""), ""), (r["a"], ""),
             (r.get("b") or "–", ""),
             (f"{r['power']:.2f}" + (f" (reps {r['reps']}, k {r['permutations']})" if "reps" in r else ""), "")]
            for r in d["observed_rows"]]
    n_docs = d["observed"].get("n_documents")
    docs = ([Para(f"Item-level τ over the run's {n_docs} judged-relevant documents: {s['documents_method']}. "
                  "Documents are assumed exchangeable draws from the documents a real study would judge; documents "
                  "that share a query are not independent, so this power is optimistic where queries judge many "
                  "documents each.")] if n_docs and s.get("documents_method") else [])
    if n_docs and s.get("doc_pairs_method"):
        docs.append(Para(f"Metric pairs within the documents: {s['doc_pairs_method']}; {s['doc_pair_reps']} studies "
                         f"per size, k = {s['doc_pair_permutations']}."))
    flagged = [t for t in dict.fromkeys(r["target"] for r in d["observed_rows"] if "n_documents" not in r) if t in uninf]
    notes = ([f"{', '.join(flagged)}: flagged UNINFORMATIVE by the run's verdicts (too few system pairs separated); "
              "power to correlate with a target that barely tells the systems apart says little, and the first-screen "
              "power counts leave it out"] if flagged else []) + list(d.get("notes") or [])
    notes = [Bullets(tuple(notes), lead="Notes:")] if notes else []
    table = [table_block(["target", "metric", "vs", "power here"], rows, "lllr",
                         caption="Power at the observed size (single τ: significant; pair: separated, one planned "
                                 "comparison without family correction).")] if rows else []
    return [
        Heading("Study design: how large a study would answer"),
        Para(f"Simulated studies drawn from this run ({d['observed']['n_systems']} systems × "
             f"{d['observed']['n_queries']} queries): {s['method']}; {s['reps']} studies per size, seed {s['seed']}, "
             f"α = {s['alpha']:g}. Systems and queries are assumed exchangeable draws from the populations a real "
             "study would draw from; power far above the observed size repeats the observed systems."),
        *docs,
        *table,
        Bullets(tuple(d["answers"]), lead=f"Study sizes for {s['power']:.0%} power:"),
        *notes,
    ]
