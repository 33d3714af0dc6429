"""The verdict sections of the reports: per target, the metrics ranked into significance clusters, the
pairwise tests behind them, the Δτ table, the possible confounds, and the words that name the tests."""

from __future__ import annotations

import re
from typing import Any, Mapping, Sequence

from ..correlation.settings import (  # not the driver: reports import no numpy
    CI_LEVEL,
    MIN_SEPARATED_SHARE,
    CorrelationSettings,
)
from ..settings import default
from .blocks import Block, Bullets, Heading, Para, Table, fmt_p, fmt_tau, table_block

ALPHA = default(CorrelationSettings, "alpha")  # the level of results that do not record one


def _names(ms: Sequence[str]) -> str:
    return ", ".join(ms)


COEF = {"kendall": "τ", "pearson": "r", "spearman": "ρ"}


def correction_phrase(correction: str) -> str:
    """"Holm-adjusted", "Benjamini-Hochberg-adjusted" or "unadjusted"."""
    return {"holm": "Holm-adjusted", "bh": "Benjamini-Hochberg-adjusted", "none": "unadjusted"}.get(
        correction, f"{correction}-adjusted")


def family_phrase(vds: Sequence[Mapping[str, Any]]) -> str:
    """The family the verdicts' correction adjusts over, said once."""
    fams = list(dict.fromkeys(v["family"] for v in vds))
    if len(fams) == 1:
        return fams[0]
    sizes = sorted({v["family_size"] for v in vds if v.get("family_size") is not None})
    n = f" ({sizes[0]}{'–' + str(sizes[-1]) if len(sizes) > 1 else ''} tests each)" if sizes else ""
    return f"each target's own metric pairs{n}"


def uninformative_targets(results: Mapping[str, Any]) -> list[str]:
    """The targets a run's verdicts flag UNINFORMATIVE (``informative: false`` on the verdict or on its
    correlation rows), in the verdicts' order: every report and the console mark them the same way."""
    flagged = [v["target"] for v in results.get("verdicts") or [] if v.get("informative") is False]
    flagged += [c["y"] for c in results.get("correlations") or [] if c.get("informative") is False]
    return list(dict.fromkeys(flagged))


UNINFORMATIVE_MARK = " — UNINFORMATIVE"


def _vname(v: Mapping[str, Any], lab) -> str:
    return (f"{lab(v['group'])} / " if v.get("group") is not None else "") + lab(v["target"])


def fmt_ci(ci: Sequence[float | None] | None) -> str:
    if not ci or ci[0] is None:
        return "n/a"
    return f"[{fmt_tau(ci[0])}, {fmt_tau(ci[1])}]"


def verdict_blocks(vds: Sequence[Mapping[str, Any]], labels: Mapping[str, str] | None = None,
                   warnings: bool = True) -> list[Block]:
    """A paragraph and bullets (Markdown-inline) stating each ranking with its clusters, what is
    significant after adjustment, the power and the discriminability; loud notes first; then the
    table of every pairwise difference with its CI and p."""
    if not vds:
        return []
    lab = (lambda v: (labels or {}).get(v, v))  # noqa: E731
    first = vds[0]
    alpha = first.get("alpha", ALPHA)
    coef = COEF.get(first.get("method", "kendall"), "τ")
    blocks: list[Block] = [Para(
        f"Ranking per target by oriented {coef}; clusters as mt-metrics-eval's AssignRanks: a metric opens a new "
        f"cluster when a metric of the current cluster beats it in PERM-BOTH at "
        f"{correction_phrase(first['correction'])} p < {alpha:g} (family: {family_phrase(vds)}). A winner is "
        "named only when the first cluster has one member.")]
    loud = [f"**{_vname(v, lab)}**: {n}" for v in vds for n in v.get("warnings", [])] if warnings else []  # else on the first screen
    if loud:
        blocks.append(Bullets(tuple(loud)))
    items = []
    for v in vds:
        cl = " > ".join("{" + _names([lab(m) for m in c]) + "}" for c in v["clusters"]) or "none (no MT metric has a defined τ with this target)"
        if v.get("winner"):
            head = f"winner **{lab(v['winner'])}** (alone in the first cluster)"
        elif v["clusters"] and len(v["clusters"][0]) > 1:
            head = f"no single winner: {_names([lab(m) for m in v['clusters'][0]])} are not separable"
        else:
            head = "no ranking"
        sig = [f"{lab(p['a'])} > {lab(p['b'])} (Δ{coef} {p['delta']:+.3f} {fmt_ci(p.get('delta_ci'))}, "
               f"p_adj {p['p_adjusted']:.3g})" for p in v["pairwise"] if p.get("significant")]
        mst = v.get("min_significant_tau")
        nr = v.get("n_systems_range") or [v["n_systems"], v["n_systems"]]
        n_text = f"{nr[0]}–{nr[1]}" if nr[0] != nr[1] else f"{v['n_systems']}"
        if v.get("power_computed") is False:
            power = f"n = {n_text} systems; power not computed"
        elif mst is not None:
            power = f"n = {n_text} systems, min significant |{coef}| at n = {v['n_systems']}: {fmt_tau(mst)}"
        else:
            power = f"n = {n_text} systems: no |{coef}| can be significant"
        d = v.get("discriminability")
        disc = (f"; separates {d['pairs_separated']} of {d['pairs']} system pairs over {d['queries']} queries"
                if d else "")
        flag = "" if v.get("informative", True) else UNINFORMATIVE_MARK
        items.append(f"**{_vname(v, lab)}**{flag}: {head}; clusters {cl}; significant differences: "
                     f"{'; '.join(sig) if sig else 'none'}; {power}{disc}.")
    tests = verdict_tests(vds)
    blocks += [Bullets(tuple(items))] + ([Para(tests)] if tests else [])
    table = delta_table(vds, labels)
    return blocks + ([table] if table is not None else [])


def delta_table(vds: Sequence[Mapping[str, Any]], labels: Mapping[str, str] | None = None) -> Table | None:
    """Every pairwise difference of the verdicts: Δ, its CI, the PERM-BOTH p with its Monte Carlo
    standard error, the adjusted p, the draws and the systems used."""
    lab = (lambda v: (labels or {}).get(v, v))  # noqa: E731
    rows = []
    williams = any("williams_p" in p for v in vds for p in v["pairwise"])
    for v in vds:
        for p in v["pairwise"]:
            if p.get("p_value") is None:
                continue
            mark = "" if p.get("settled", True) else " †"
            se = f" ± {p['p_se']:.1g}" if p.get("p_se") is not None and not p.get("exact") else ""
            rows.append([(_vname(v, lab), ""), (lab(p["a"]), ""), (lab(p["b"]), ""), (str(p.get("n", "")), ""),
                         (f"{p['delta']:+.3f}", ""), (fmt_ci(p.get("delta_ci")), ""), (f"{p['p_value']:.3g}{se}", ""),
                         (f"{p['p_adjusted']:.3g}{mark}", "best" if p.get("significant") else ""),
                         ("exact" if p.get("exact") else str(p.get("resamples", "")), "")]
                        + ([(fmt_p(p.get("williams_p")), "")] if williams else []))
    if not rows:
        return None
    first = vds[0]
    coef = COEF.get(first.get("method", "kendall"), "τ")
    methods = sorted({p.get("delta_ci_method") for v in vds for p in v["pairwise"] if p.get("delta_ci_method")})
    level = next((p.get("delta_ci_level") for v in vds for p in v["pairwise"] if p.get("delta_ci_level")), CI_LEVEL)
    cap = (f"Every pairwise difference: Δ{coef} = oriented {coef}(a) − {coef}(b) on the n systems both metrics and "
           f"the target share; CI: {level:.0%} percentile, {' or '.join(methods) or 'not computed'}; p: PERM-BOTH, "
           f"two-sided (|Δ| reaches the observed), (c+1)/(k+1) ± its Monte Carlo standard error over the draws "
           f"shown (exact: the share of all 2^n swap patterns); p_adj: "
           f"{correction_phrase(first['correction'])} within the family; **bold** = p_adj < {first.get('alpha', ALPHA):g}"
           + ("; † = decision not settled at the maximum draws" if any(
               p.get("settled") is False for v in vds for p in v["pairwise"]) else "")
           + ("; where a significant difference has a CI that includes 0 (or the reverse), the bootstrap CI and "
              "the permutation test disagree near the threshold: the clusters follow p_adj"
              if any(_ci_disagrees(p) for v in vds for p in v["pairwise"]) else "")
           + ("; Williams p: Williams' test for dependent correlations (two-sided, assumes normal scores; shown "
              "beside PERM-BOTH, which decides the clusters)" if williams else "") + ".")
    return table_block(["target", "a", "b", "n", f"Δ{coef}", "CI", "p ± MC se", "p_adj", "draws"]
                       + (["Williams p"] if williams else []), rows, "lllrrrrrr" + ("r" if williams else ""), cap)


def _ci_disagrees(p: Mapping[str, Any]) -> bool:
    """A pairwise test whose significance and Δ CI tell different stories (CI across 0 when significant,
    or clear of 0 when not)."""
    ci = p.get("delta_ci")
    if not ci or ci[0] is None or ci[1] is None or p.get("significant") is None:
        return False
    return bool(p["significant"]) == (ci[0] <= 0 <= ci[1])


def confound_blocks(results: Mapping[str, Any]) -> list[Block]:
    """Caveats (circularity, nested designs, metrics that correlate with nothing), τ between the MT
    metrics, and Kendall's partial τ given each numeric system attribute."""
    c = results.get("confounds")
    if not c:
        return []
    blocks: list[Block] = [Heading("Confounds and caveats")]
    if c.get("notes"):
        blocks.append(Bullets(tuple(c["notes"])))
    agr = [a for a in c.get("metric_agreement", []) if a.get("tau") is not None]
    if agr:
        rows = [[(a["a"], ""), (a["b"], ""), (fmt_tau(a["tau"]), ""), (str(a["n"]), "")] for a in agr]
        blocks.append(table_block(["MT metric", "MT metric", "τ-b", "n"], rows, "llrr",
                                  "Agreement between the MT metrics (Kendall τ-b over the systems): metrics that rank the "
                                  "systems almost alike cannot be told apart by any target."))
    part = [p for p in c.get("partial", []) if p.get("partial_tau") is not None]
    if part:
        rows = [[(p["x"], ""), (p["y"], ""), (p["covariate"], ""), (fmt_tau(p["tau"]), ""),
                 (fmt_tau(p["partial_tau"]), ""), (str(p["n"]), "")] for p in part]
        blocks.append(table_block(["MT metric", "target", "given", "τ", "partial τ", "n"], rows, "lllrrr",
                                  "Kendall's partial τ of MT metric and target given a system attribute (Kendall 1942; no "
                                  "p-value): a partial τ much closer to 0 than τ means the attribute explains much of "
                                  "the correlation."))
    return blocks if len(blocks) > 1 else []


def verdict_tests(vds: Sequence[Mapping[str, Any]]) -> str:
    """The tests behind the verdicts' power, draws and discriminability figures (a caption)."""
    alpha = vds[0].get("alpha", ALPHA) if vds else ALPHA
    method = vds[0].get("method", "kendall") if vds else "kendall"
    parts = []
    if any(v.get("min_significant_tau") is not None for v in vds):
        if method == "kendall":
            parts.append(f"Min significant |τ|: the smallest |τ| with p < {alpha:g} for n untied systems, from the "
                         "exact null distribution of Kendall's τ (scipy's exact test; asymptotic above 33 systems).")
        else:
            c = COEF.get(method, "r")
            parts.append(f"Min significant |{c}|: the smallest |{c}| with p < {alpha:g} at n systems, from the t "
                         f"distribution the p-values use ({c} = t/√(n−2+t²)).")
    res = [v["resolution"] for v in vds if v.get("resolution")]
    if res:
        mode = res[0]["mode"]
        hi = max(r["max"] for r in res)
        used = [r["draws"] for r in res if r.get("draws")]
        lo_, hi_ = (min(u[0] for u in used), max(u[1] for u in used)) if used else (0, 0)
        n_exact = sum(r.get("exact") or 0 for r in res)
        n_tests = sum(1 for v in vds for p in v.get("pairwise", []) if p.get("p_value") is not None)
        said = []
        if n_exact:
            said.append(f"{'every test' if n_exact == n_tests else f'{n_exact} of {n_tests} tests'} exact "
                        "(p over all 2^n swap patterns)")
        if used and mode == "sequential":
            said.append(f"{'the others' if n_exact else 'every test'} {res[0]['first']} draws, then more (doubling, up "
                        f"to {hi}) only where the decision could still change (99.9% Clopper-Pearson interval of p on "
                        "both sides of its threshold); "
                        + (f"each used {lo_}" if lo_ == hi_ else f"draws used {lo_}–{hi_}"))
        elif used:
            said.append(f"{res[0]['first']} draws per test (fixed)")
        floor = max(r["floor"] for r in res)
        open_ = sum(r.get("unsettled") or 0 for r in res)
        if open_:
            need = max((r.get("settle_draws") or 0 for r in res), default=0)
            said.append(f"{open_} decision{'' if open_ == 1 else 's'} not settled at the maximum (marked †, decided by "
                        "the estimate; " + (f"about {need} draws per test would settle "
                                            f"{'it' if open_ == 1 else 'them'}: --permutation {need}" if need else
                                            "a p on its threshold: no number of draws settles it") + ")")
        parts.append(f"PERM-BOTH: {'; '.join(said) or 'no test'}; smallest attainable adjusted p {floor:.2g}.")
    d = next((v["discriminability"] for v in vds if (v.get("discriminability") or {}).get("test")), None)
    if d:
        test = re.sub(r"over the \d+ system pairs", "over each measure's system pairs", re.sub(r", seed \d+", "", d["test"]))
        parts.append(f"System pairs a measure separates: {test} (seeds per target in results.json); a measure "
                     f"separating fewer than {MIN_SEPARATED_SHARE:.0%} of the pairs is flagged UNINFORMATIVE.")
    return " ".join(parts)
