"""The pooled answer in short, per target: which metric pairs differ, which are equivalent, and the bound
every pooled Δτ's interval lies within (``summary`` of ``clir-eval pool --format json`` and of
:meth:`PoolResult.to_dict`; the first lines of the text output and of the reports)."""

from __future__ import annotations

from typing import Any


def is_system(r: dict[str, Any]) -> bool:
    """Whether a leaderboard or pair row is a system-level one (rows without "level" are)."""
    return r.get("level", "system") == "system"


def item_keys(res: Any) -> list[tuple[str, str]]:
    """The item-level (items, target) analyses pooled, in order."""
    return list(dict.fromkeys((r["items"], r["target"]) for r in res.leaderboard if r.get("level") == "item"))


def summaries(res: Any) -> list[dict[str, Any]]:
    """Per pooled target: significant pairs, equivalent pairs, and the bound every pooled Δτ's 95% CI
    lies within (the sentence a null result should be read as); then the same per item-level analysis
    (``"level": "item"``)."""
    out = []
    margin = res.settings["margin"]
    groups: list[tuple[Any, str, list, list]] = [
        (None, t, [p for p in res.pairs if p["target"] == t and is_system(p)],
         [r for r in res.leaderboard if r["target"] == t and is_system(r)])
        for t in dict.fromkeys(r["target"] for r in res.leaderboard if r.get("cluster") and is_system(r))]
    groups += [((kind, t), f"item level, {t} over {kind}",
                [p for p in res.pairs if p.get("level") == "item" and (p["items"], p["target"]) == (kind, t)],
                [r for r in res.leaderboard if r.get("level") == "item" and (r["items"], r["target"]) == (kind, t)])
               for kind, t in item_keys(res)]
    for key, t, pairs, lrows in groups:
        tested = [p for p in pairs if p["p_adjusted"] is not None]
        sig = [p for p in tested if p["significant"]]
        eq = [p for p in tested if p["equivalent"]]
        ends = [abs(v) for p in tested for v in p["ci"] if v is not None]
        bound = max(ends) if ends else None
        n_tasks = max((r["n_tasks"] for r in lrows), default=0)
        if key is not None and not tested:
            best = [r for r in lrows if not r.get("apart")]
            text = (f"{t}: not tested (the runs do not keep these item matrices); highest mean within-item τ "
                    f"{best[0]['metric']} {best[0]['mean_tau']:+.3f} over {n_tasks} runs" if best else
                    f"{t}: no metric in every run")
        elif not tested:
            text = f"{t}: no metric pair could be tested"
        elif sig:
            text = (f"{t}: {len(sig)} of {len(tested)} metric pairs differ ({res.settings['correction']}-adjusted "
                    f"p < {res.settings['alpha']:g}): " + "; ".join(f"{p['a']} > {p['b']} (Δτ {p['delta']:+.3f})" for p in sig))
        else:
            text = (f"{t}: no metric pair differs ({len(tested)} pairs, {res.settings['correction']}-adjusted "
                    f"p ≥ {res.settings['alpha']:g}) over {n_tasks} runs")
        if tested:
            text += (f"; {len(eq)} of {len(tested)} pairs equivalent within ±{margin:g} (90% CI inside); every pooled "
                     f"Δτ's 95% CI lies within ±{bound:.3f}")
        row = {"target": t, "n_pairs": len(tested), "significant": len(sig), "equivalent": len(eq),
               "bound": bound, "text": text}
        if key is not None:
            row.update(target=key[1], items=key[0], level="item")
        out.append(row)
    return out
