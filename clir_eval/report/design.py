"""The "Study design" section of a run's reports, present once ``clir-eval design`` has run on the run's output
directory (it adds a ``design`` block to results.json: the pilot's size, the settings and assumed effects, the
power of every question at the pilot's size for each assumed effect, the one-line answers and the notes)."""

from __future__ import annotations

from typing import Any, Mapping

from .blocks import Block, Bullets, Heading, Para, table_block
from .verdicts import UNINFORMATIVE_MARK, uninformative_targets


def _questions(rows: list[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The rows with a single τ shown once per target (its power is every metric's)."""
    seen, out = set(), []
    for r in rows:
        key = (r["target"], r.get("b") is None and "τ" or (r["a"], r["b"]), r.get("effect"))
        if key in seen:
            continue
        seen.add(key)
        out.append(r)
    return out


def design_counts(results: Mapping[str, Any]) -> tuple[float, list[tuple[float, int, int, int, int]]] | None:
    """The power goal and, per assumed effect, (effect, targets' τ reaching it, targets' τ, metric pairs
    reaching it, metric pairs) at the run's own size (targets flagged UNINFORMATIVE left out); None before
    ``clir-eval design`` has run."""
    d = results.get("design")
    if not d or not d.get("observed_rows"):
        return None
    goal = d["settings"]["power"]
    uninf = set(uninformative_targets(results))
    rows = [r for r in _questions(d["observed_rows"]) if r["target"] not in uninf]
    out = []
    for e in d["settings"].get("effects", []):
        taus = [r for r in rows if r.get("b") is None and r.get("effect") == e]
        pairs = [r for r in rows if r.get("b") is not None and r.get("effect") == e]
        out.append((e, sum(r["power"] >= goal for r in taus), len(taus), sum(r["power"] >= goal for r in pairs),
                    len(pairs)))
    return goal, out


def design_summary(results: Mapping[str, Any]) -> str | None:
    """One first-screen sentence: at this size, how many questions reach the power goal for each assumed effect."""
    counts = design_counts(results)
    if counts is None:
        return None
    d = results["design"]
    goal, rows = counts
    uninf = set(uninformative_targets(results))
    left_out = list(dict.fromkeys(r["target"] for r in d["observed_rows"] if r["target"] in uninf))
    parts = [f"at {e:g}, {t_ok} of {t_n} targets' τ and {p_ok} of {p_n} metric pairs" for e, t_ok, t_n, p_ok, p_n in rows]
    o = d["observed"]
    size = f"{o['n_systems']} systems" + (f" × {o['n_queries']} queries" if o.get("n_queries") else "")
    skipped = (f"; not counted: {', '.join(left_out)} (flagged UNINFORMATIVE: power for a target that barely "
               "separates the systems says little)") if left_out else ""
    return (f"**Power at this size** ({size}; for assumed effects, not the observed ones; study design by "
            f"simulation): questions reaching {goal:.0%} power — {'; '.join(parts)}{skipped}; the Study design "
            "section says how large a study would answer the rest.")


def design_blocks(results: Mapping[str, Any]) -> list[Block]:
    d = results.get("design")
    if not d:
        return []
    s, o = d["settings"], d["observed"]
    uninf = set(uninformative_targets(results))
    rows = [[(r["target"] + (UNINFORMATIVE_MARK if r["target"] in uninf else ""), ""),
             ("τ(metric, target) significant" if r.get("b") is None else f"{r['a']} significantly above {r['b']}", ""),
             (f"{r['effect']:g}" if r.get("effect") is not None else "–", ""),
             (f"{r['power']:.2f} ± {r['mc_se']:.2f}" if r.get("mc_se") is not None else f"{r['power']:.2f}", "")]
            for r in _questions(d["observed_rows"])]
    size = f"{o['n_systems']} systems" + (f" × {o['n_queries']} queries" if o.get("n_queries") else "")
    flagged = [t for t in dict.fromkeys(r["target"] for r in d["observed_rows"]) if t in uninf]
    notes = ([f"{', '.join(flagged)}: flagged UNINFORMATIVE by the run's verdicts (too few system pairs separated); "
              "power to correlate with a target that barely tells the systems apart says little, and the first-screen "
              "power counts leave it out"] if flagged else []) + list(d.get("notes") or [])
    table = [table_block(["target", "question", "assumed effect", "power here ± MC se"], rows, "lllr",
                         caption="Power at this run's size for each assumed effect (a single τ: the run's two-sided "
                                 "Kendall test, uncorrected; a pair: the run's verdict, PERM-BOTH after its "
                                 "correction).")] if rows else []
    return [
        Heading("Study design: how large a study would answer"),
        Para(f"This run as the pilot ({size}): {s['method']}; {s['reps']} simulated studies per question, size and "
             f"effect, seed {s['seed']}, α = {s['alpha']:g}. The effects are assumptions (the design "
             "command's --effect), not the observed ones; the grid of sizes is in design.json and design.html."),
        Bullets(tuple(d["answers"]), lead=f"Study sizes for {s['power']:.0%} power:"),
        *table,
        *([Bullets(tuple(notes), lead="Notes:")] if notes else []),
    ]
