"""``clir-eval design``: the power of a run's questions at other study sizes, for assumed effects (simulation)."""

from __future__ import annotations

import base64
import html
import json
import os
import sys
from pathlib import Path
from typing import Any, Optional

import numpy as np
import typer

from ..correlation import design as dz
from ..correlation import design_items as di
from ..correlation.design import DEFAULT_EFFECTS, MAX_WORKERS, kendall_rows, size_text
from ..correlation.settings import CorrelationSettings, DesignSettings
from ..correlation.significance import joint_draws
from ..correlation.statistics import percentile_ci
from ..errors import UserError
from ..io.figures import pyplot, save
from ..io.files import write_set
from ..io.results import read_results
from ..io.tables import read_table
from ..limits import MAX_JOBS, check_max, memory_bytes
from ..params import split_list
from ..pipeline.executor import get_executor
from ..pipeline.output import locked
from ..pipeline.progress import Progress
from ..report import render_reports
from ..report.design import design_counts
from ..report.verdicts import uninformative_targets
from ..settings import default
from .app import app
from .options import build, setting_option

FILES = ("design.json", "design.html", "design.png")


@app.command("design")
def design_cmd(
    out: Optional[Path] = typer.Argument(None, help="A finished run's output directory (holding results.json); "
                                         "or give --table instead."),
    table: Optional[Path] = typer.Option(None, "--table", help="A per-query score table (TSV/CSV, one row per system "
                                         "and query; MT metric columns repeat the system's score) instead of a run."),
    system_col: str = typer.Option("system", "--system-col", help="--table: the system column."),
    query_col: str = typer.Option("query", "--query-col", help="--table: the query column."),
    x: str = typer.Option("", "--x", help="--table: comma list of MT metric columns (at least one)."),
    y: str = typer.Option("", "--y", help="--table: the per-query target column (e.g. an IR measure)."),
    systems: str = typer.Option("", "--systems", help="Comma list of study sizes in systems (default: 6 sizes, "
                                "0.5x to 3x the observed)."),
    queries: str = typer.Option("", "--queries", help="Comma list of study sizes in queries (default: 6 sizes, "
                                "0.5x to 3x the observed)."),
    effect: str = typer.Option("", "--effect", help="Comma list of assumed effects, each in [0, 1): the population τ "
                               "of a single correlation and the Δτ of a pair, at the pilot's number of queries "
                               "(default: 0.1,0.2,0.3; 0 gives the false-positive rate)."),
    targets: str = typer.Option("", "--targets", help="Comma list of the run's targets (default: all)."),
    level: str = typer.Option("", "--level", help="system, item or both (default: both where the run keeps an "
                              "item-level documents matrix, else system). Item level: the run's within-document "
                              "questions; with --table, --level item reads each item's MT score from the MT columns "
                              "(see Study design in the item-level page of the docs)."),
    items: str = typer.Option("", "--items", help="Item level: comma list of study sizes in items (default: 6 sizes, "
                              "0.5x to 3x the pilot's)."),
    pairs: str = typer.Option("adjacent", "--pairs", help="Metric pairs simulated: adjacent (each metric against the "
                              "next in the pilot's ranking: the pairs that decide its clusters; item level: the "
                              "leading pair) or all."),
    reps: int = setting_option(DesignSettings, "reps"),
    power: float = setting_option(DesignSettings, "power"),
    seed: int = setting_option(DesignSettings, "seed"),
    jobs: Optional[int] = typer.Option(None, "--jobs", "-j", min=1, help="Worker processes (default: one per CPU "
                                       "core, as run; at most 8, which bounds memory)."),
    details: bool = typer.Option(False, "--details", help="Also print the grid (every size, effect and question, "
                                 "power ± Monte Carlo se)."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar."),
    fmt: str = typer.Option("text", "--format", help="text | json (the rows)."),
) -> None:
    """Power of a run's questions at other study sizes.

    Fits the run (or --table) as a pilot — the spread of systems and queries, each metric's loading and the
    metrics' correlations — then simulates new studies of each size for each assumed effect and applies the
    run's tests (exact Kendall critical values; PERM-BOTH with the run's family correction). Prints one line
    per question first. With a run: writes OUT/design.json, design.html, design.png and a Study design section
    in OUT's reports, as one set, holding OUT's lock (see "Study design" in the item-level page of the docs).

    A per-query score table instead of a run: --table FILE --x A,B --y Y (--system-col, --query-col).

    \b
    Examples (after 'clir-eval demo --out demo-out'):
      clir-eval design demo-out --targets map
      clir-eval design demo-out --targets map --effect 0.2,0.4 --systems 6,12,24 --reps 100 --format json
    """
    if fmt not in ("text", "json"):
        raise UserError(f"unknown --format {fmt!r}; use text or json")
    if pairs not in ("adjacent", "all"):
        raise UserError(f"--pairs {pairs!r}: use adjacent or all")
    if level not in ("", "system", "item", "both"):
        raise UserError(f"--level {level!r}: use system, item or both")
    build(DesignSettings, reps=reps, power=power, seed=seed)
    jobs = check_max(jobs or os.cpu_count() or 1, MAX_JOBS, "--jobs")
    effects = _effects(effect)
    n_sys = _sizes(systems, "--systems", 3, dz.MAX_SYSTEMS)
    n_q = _sizes(queries, "--queries", 1, 100_000)
    n_items = _sizes(items, "--items", 3, 100_000)
    if (out is None) == (table is None):
        raise UserError("give a run's output directory (clir-eval design OUT) or --table FILE, not both"
                        if out is not None else "give a run's output directory (clir-eval design OUT) or --table FILE")
    if table is not None:
        if level == "both":
            raise UserError("--level both: with --table give --level system (MT columns repeat the system's score) or "
                            "--level item (MT columns hold each item's score)")
        if level == "item":
            _table_item_mode(table, system_col, query_col, x, y, n_sys, n_items, effects, pairs, reps, power, seed,
                             jobs, details, fmt, quiet)
            return
        _table_mode(table, system_col, query_col, x, y, n_sys, n_q, effects, reps, power, seed, jobs, details, fmt,
                    quiet)
        return
    _run_mode(out, targets, n_sys, n_q, effects, pairs, reps, power, seed, jobs, details, fmt, quiet, level, n_items)


def _run_mode(out, targets, n_sys, n_q, effects, pairs, reps, power, seed, jobs, details, fmt, quiet, level="",
              n_items=()) -> None:  # fmt: skip
    """``clir-eval design OUT``: the run in OUT as the pilot, its own tests and family; writes the design set under
    OUT's lock and prints."""
    read_results(out)  # a clear error before taking the lock when OUT is not a finished run
    with locked(out):  # as run: a second command on OUT is refused naming the holder, and no run replaces it now
        results = read_results(out)
        corr = results.get("correlations") or [{}]
        vd = results.get("verdicts") or [{}]
        alpha = float(corr[0].get("alpha", default(CorrelationSettings, "alpha")))
        method, variant = corr[0].get("method", "kendall"), corr[0].get("variant", "b")
        if method != "kendall":
            raise UserError(f"{out / 'results.json'}: the run correlates with {method}; design simulates Kendall's τ "
                            "tests (correlation.method: kendall)")
        correction = vd[0].get("correction", "holm")
        test = str(vd[0].get("test", ""))
        sides = (2 if "two-sided" in test else 1) if test.startswith("PERM-BOTH") else dz.run_sides()
        family = "all" if str(vd[0].get("family", "")).startswith("all ") else "target"
        data = dz.design_data(results)

        item_names = di.item_targets(results) if (level or di.default_level(results)) != "system" else []
        level = level or di.default_level(results)
        want = None
        if targets:
            want = split_list(targets)
            unknown = [t for t in want if t not in data.targets and t not in item_names]
            if unknown:
                raise UserError(f"--targets {unknown[0]}: not a target design can simulate in {out / 'results.json'}"
                                f" (these are: {', '.join([*data.targets, *item_names])})")
            data = type(data)(data.systems, data.metrics, {t: data.targets[t] for t in want if t in data.targets},
                              data.dropped, data.notes)
        doc = _analyse(data, n_sys, n_q, [] if level == "item" else effects, pairs, reps, power, seed, jobs, alpha,
                       correction, family, variant, _observed_from_run(results), quiet, None, sides)
        if level != "system" and (want is None or level == "item" or set(want) & set(item_names)):
            _add_item_level(doc, di.run_pilot(out, results, want), level, n_sys, n_items, effects, pairs, reps, seed,
                            power, jobs, quiet)

        flagged = [t for t in uninformative_targets(results) if t in data.targets]
        if flagged:
            doc["notes"].append(f"{', '.join(flagged)}: flagged UNINFORMATIVE by the run (report.md); power for a "
                                "target that barely separates the systems says little")
        _write(out, results, doc)
    _print(doc, details, fmt, out)


def _add_item_level(doc, pilot, level, n_sys, n_items, effects, pairs, reps, seed, power, jobs, quiet
                    ) -> None:  # fmt: skip
    """The item level's questions (correlation/design_items.py) added to ``doc``: rows ("level": "item"), answer
    lines after the system level's, notes, the fitted models (``item_fits``)."""
    _check_item_memory(pilot, n_sys, n_items, pairs, reps, jobs)
    item = di.analyse(pilot, n_sys, n_items, effects, pairs=pairs, reps=reps, seed=seed, goal=power,
                      map=_mapper(jobs, quiet, "design: simulating the item level"))
    doc["settings"].update(effects=list(effects), level=level, item_level=item["settings"])
    doc["rows"] += item["rows"]
    doc["query_answers"] += item["answers"]
    doc["notes"] += item["notes"]
    doc["item_fits"] = item["fits"]


def item_memory(systems: int, items: int, metrics: int, permutation: int, reps: int, pair: bool) -> int:
    """Estimated peak bytes of one worker simulating item-level studies of ``systems`` x ``items``
    (correlation/design_items.py). The within τ's joint test (``pair`` False) holds a study's pair signs (float32,
    P = S(S-1)/2 pairs x items, X and Y), its P x P concordance matrix (twice while stacked) and the permutations
    as a sparse selection (permutation x P); a pair's swap test holds a chunk of c studies (c x S x I x (M+1)
    cells within the simulation block) and their pair signs. Measured (scripts/bench_memory_bounds.py) below."""
    S, I, M = systems, items, metrics
    P = S * (S - 1) // 2
    if not pair:
        return 150 * 2**20 + 8 * P * I + 12 * P * P + 24 * permutation * P + 48 * S * I
    c = min(max(1, di.BLOCK // max(1, S * I * (M + 1))), reps)
    return 150 * 2**20 + 8 * c * P * I + 24 * (M + 1) * c * S * I


def _check_item_memory(pilot: di.ItemPilot, n_sys: list[int], n_items: list[int], pairs: str, reps: int,
                       jobs: int) -> None:
    """Refuse up front, naming the bound, an item-level design whose tasks (:func:`.design_items.plan`: each
    simulates its sizes one after another) are estimated (:func:`item_memory`) to pass
    :func:`clir_eval.limits.memory_bytes` with as many running at once as there are workers."""
    if not pilot.fits:
        return
    some = next(iter(pilot.fits.values()))
    sizes_s, sizes_i = n_sys or dz.default_sizes(some.n_systems, 3), n_items or dz.default_sizes(some.n_items, 3)
    tasks = di.plan(pilot.fits, sizes_s, sizes_i, [0.0], pairs=pairs, reps=reps, permutation=pilot.permutation)
    peaks = sorted(((max(item_memory(S, I, len(pilot.fits[q.target].metrics), q.permutation, reps, q.b is not None)
                         for S, I in q.sizes), max(q.sizes, key=lambda x: x[0] * x[0] * x[1])) for q in tasks),
                   reverse=True)
    workers = min(jobs, MAX_WORKERS, len(peaks))
    need, bound = 100 * 2**20 + sum(p for p, _ in peaks[:workers]), memory_bytes()
    if need > bound:
        per, (S, I) = peaks[0]
        raise UserError(
            f"design --level item: the largest study simulated, {S} systems x {I} items ({S * (S - 1) // 2} system "
            f"pairs per item), would need about {per / 2**30:.2f} GiB, {need / 2**30:.2f} GiB with {workers} "
            f"worker(s) at once, over the bound of {bound / 2**30:.2f} GiB; give smaller --systems or --items, fewer "
            "--jobs, or raise the bound with CLIR_EVAL_MAX_MEMORY_BYTES"
        )


def _analyse(data, n_sys, n_q, effects, pairs, reps, power, seed, jobs, alpha, correction, family, variant,
             observed, quiet, metrics, sides) -> dict[str, Any]:  # fmt: skip

    fits = {name: dz.fit_target(data, name) for name in data.targets}
    S = len(data.systems)
    some_q = next((f.n_queries for f in fits.values() if f.n_queries), None)
    n_sys = n_sys or dz.default_sizes(S, 3)
    n_q = n_q or (dz.default_sizes(some_q, 1) if some_q else [])
    questions = dz.plan(fits, n_sys, n_q, effects, effects, pairs=pairs, reps=reps, alpha=alpha, correction=correction,
                        family=family, seed=seed, variant=variant, metrics=metrics, sides=sides)
    workers = min(jobs, dz.MAX_WORKERS, max(1, len(questions)))  # memory: at most MAX_WORKERS (design.py)
    with Progress(quiet) as progress, get_executor("local", workers) as ex:
        stage = progress.stage("design: simulating", len(questions))
        raw = [row for rows in ex.map(dz._Runner(fits), questions, stage) for row in rows]
    rows = dz.expand_taus(raw, fits)
    lead = {n: tuple(f.metrics[:2]) for n, f in fits.items() if len(f.metrics) > 1}
    lines = dz.answers(raw, fits, power, observed, lead)
    q_lines = _query_lines(raw, fits, power, lead)
    notes = [f"{n}: {r}" for n, r in data.dropped]
    notes += list(data.notes) + [n for f in fits.values() for n in f.notes]
    if any(r.get("note") == "capped" for r in raw):
        notes.append("some assumed τ are above what a target's reliability allows at fewer queries; capped there")
    changed = [r for r in raw if r.get("corr_change")]
    if changed:
        w = max(changed, key=lambda r: r["corr_change"]["max_change"])
        notes.append(f"{len(changed)} pair question(s): the assumed Δτ's loadings do not fit the pilot's correlations "
                     "between the metrics (not a valid correlation matrix); the nearest valid one is simulated (each "
                     "row's corr_change): " + dz.change_text(w["corr_change"]) + f", at {w['target']}: {w['a']} above "
                     f"{w['b']}, Δτ {w['effect']:g}; the target's τ stay as assumed")
    if any(r.get("note") == "shifted" for r in raw):
        notes.append("some pairs' assumed Δτ do not fit around the pair's pilot τ (the upper τ would exceed what the "
                     "target allows); both τ shifted down by the excess")
    if any("> " in line for line in lines + q_lines):
        notes.append(f"'> N': not reached within the sizes tried ({min(n_sys)}-{max(n_sys)} systems"
                     + (f", {min(n_q)}-{max(n_q)} queries" if n_q else "") + "); --systems and --queries try others")
    if family == "all":
        notes.append("family: all: the other targets' pairs are counted in the correction but as not rejected "
                     "(a lower bound on the power)")
    return {
        "observed": {"n_systems": S, **({"n_queries": some_q} if some_q else {})},
        "settings": {"reps": reps, "alpha": alpha, "seed": seed, "power": power, "effects": list(effects),
                     "systems": n_sys, "queries": n_q, "pairs": pairs, "correction": correction, "family": family,
                     "perm_both": "two-sided" if sides == 2 else "one-sided (the leader's tail)", "method": dz.METHOD},
        "fits": {n: {"n_systems": f.n_systems, "n_queries": f.n_queries, "var_system": f.var_system,
                     "var_noise": f.var_noise, "reliability": f.reliability(f.n_queries) if f.n_queries else None,
                     "ranking": list(f.metrics), "taus": dict(zip(f.metrics, f.taus)),
                     "loadings": dict(zip(f.metrics, [float(v) for v in f.loadings]))} for n, f in fits.items()},
        "observed_effects": [{"target": k[0], "a": k[1], **({"b": k[2]} if len(k) > 2 else {}), **v}
                             for k, v in observed.items()],
        "rows": rows, "answers": lines, "query_answers": q_lines, "notes": notes,
        "dropped": [{"name": n, "reason": r} for n, r in data.dropped],
    }


def _query_lines(rows, fits, goal, lead) -> list[str]:
    """Per target with queries: the queries needed at the pilot's systems, for the single τ and the leading pair."""
    out = []
    for name, f in fits.items():
        if not f.n_queries:
            continue
        questions = [((None, None), f"τ(metric, {name})")] + ([(lead[name], None)] if name in lead else [])
        for (a, b), what in questions:
            mine = [r for r in rows if r["target"] == name and r["a"] == a and r.get("b") == b
                    and r["n_systems"] == f.n_systems]
            if not mine:
                continue
            label = what or f"{a} above {b}"
            sym = "τ" if b is None else "Δτ"
            parts = [f"{sym}={e:g}: " + size_text([(r["n_queries"], r["power"]) for r in mine if r["effect"] == e],
                                                    goal, "queries") for e in dict.fromkeys(r["effect"] for r in mine)]
            out.append(f"{name}: {label} at {f.n_systems} systems: " + "; ".join(parts))
    return out


def _observed_from_run(results: dict) -> dict[tuple, dict[str, Any]]:
    """The run's observed effects with their intervals: each τ (BOOT-BOTH CI where the run has one) and each
    verdict pair's Δτ with its CI."""
    out: dict[tuple, dict[str, Any]] = {}
    for c in results.get("correlations") or []:
        if c.get("tau") is not None and c.get("kind", "mt-ir") in ("mt-ir", "mt-human"):
            ci = c.get("ci_both") or c.get("ci") or c.get("ci_systems")
            out[(c["y"], c["x"])] = {"tau": c["tau"], "ci": ci}
    for v in results.get("verdicts") or []:
        for p in v.get("pairwise") or []:
            if p.get("delta") is not None:
                out[(v["target"], p["a"], p["b"])] = {"delta": p["delta"], "ci": p.get("delta_ci"),
                                                      "p_adjusted": p.get("p_adjusted")}
    return out


def _observed_from_table(data, seed: int) -> dict[tuple, dict[str, Any]]:
    """Observed τ and Δτ of a score table with BOOT-BOTH 95% intervals (systems and queries resampled together,
    1000 draws, the same draws for every metric)."""
    out: dict[tuple, dict[str, Any]] = {}
    for name, t in data.targets.items():
        idx, means = joint_draws(t.per_query, 1000, seed)
        ok = ~np.isnan(means).any(axis=1)
        draws, taus = {}, {}
        for m, xv in data.metrics.items():
            taus[m] = float(kendall_rows(xv[None], t.values[None])[0])
            draws[m] = kendall_rows(xv[idx[ok]], means[ok])
            out[(name, m)] = {"tau": taus[m], "ci": list(percentile_ci(list(draws[m]), 0.95))}
        names = sorted(taus, key=lambda m: (taus[m], m), reverse=True)
        for i, a in enumerate(names):
            for b in names[i + 1:]:
                out[(name, a, b)] = {"delta": taus[a] - taus[b],
                                     "ci": list(percentile_ci(list(draws[a] - draws[b]), 0.95))}
    return out


def _table_item_mode(table, system_col, query_col, x, y, n_sys, n_items, effects, pairs, reps, power, seed, jobs,
                     details, fmt, quiet) -> None:  # fmt: skip
    """``design --table T --level item``: one row per system and item, the MT columns holding each item's score;
    the item-level (within) questions only (correlation/design_items.py)."""
    xs = split_list(x)
    if not xs or not y:
        raise UserError("--table needs --x (one or more MT metric columns) and --y (the per-item target column)")
    if y in xs or system_col == query_col or {system_col, query_col} & set(xs + [y]):
        raise UserError("--system-col, --query-col, --x and --y must name different columns")
    t = read_table(table)
    if not t.rows:
        raise UserError(f"{table}: the table has a header but no rows; add one row per system and item")
    t.check_unique([system_col, query_col], "system and item")
    sys_ids, item_ids = [v.strip() for v in t.strings(system_col)], [v.strip() for v in t.strings(query_col)]
    if any(not v for v in sys_ids + item_ids):
        raise UserError(f"{table}: an empty {system_col} or {query_col} cell; every row names its system and item")
    systems, items = list(dict.fromkeys(sys_ids)), list(dict.fromkeys(item_ids))
    if len(systems) < 3:
        raise UserError(f"{table}: {len(systems)} systems; design needs at least 3")
    spos, ipos = {s: i for i, s in enumerate(systems)}, {q: i for i, q in enumerate(items)}
    si, ii = np.array([spos[s] for s in sys_ids]), np.array([ipos[q] for q in item_ids])
    pilot = di.table_pilot(systems, items, si, ii, {m: t.numbers(m) for m in xs}, y, t.numbers(y),
                           alpha=default(CorrelationSettings, "alpha"),
                           permutation=default(CorrelationSettings, "permutation"))
    if not pilot.fits:
        raise UserError(f"{table}: --level item: {_unfit_reason(t, xs, y, si, ii, len(systems), len(items))}")
    _check_item_memory(pilot, n_sys, n_items, pairs, reps, jobs)
    item = di.analyse(pilot, n_sys, n_items, effects, pairs=pairs, reps=reps, seed=seed, goal=power,
                      map=_mapper(jobs, quiet, "design: simulating the item level"))
    doc = {"observed": {"n_systems": len(systems)}, "rows": item["rows"], "answers": [],
           "query_answers": item["answers"], "notes": item["notes"],
           "settings": {"reps": reps, "alpha": pilot.alpha, "correction": pilot.correction}}
    _print(doc, details, fmt, None)


def _unfit_reason(t, xs: list[str], y: str, si: np.ndarray, ii: np.ndarray, n_sys: int, n_items: int) -> str:
    """Why a per-item table fits no item-level model (:func:`.design_items.fit_items` returned None), with the fix."""
    def matrix(col: str) -> np.ndarray:
        m = np.full((n_sys, n_items), np.nan)
        m[si, ii] = t.numbers(col)
        return m

    Y = matrix(y)
    missing = {m: float(np.isnan(matrix(m)).any(axis=0).mean()) for m in xs}
    usable = [m for m, share in missing.items() if share <= di.MAX_MISSING]
    if not usable:
        shown = ", ".join(f"{m} on {share:.0%}" for m, share in missing.items())
        return (f"every --x metric lacks a score (for some system) on more than {di.MAX_MISSING:.0%} of the items "
                f"({shown}); the item-level model needs each metric on nearly every item: fill the missing cells or "
                "drop the items without scores")
    with np.errstate(invalid="ignore"):
        keep = ~np.isnan(Y).any(axis=0) & (np.nanmax(Y, axis=0) > np.nanmin(Y, axis=0))
    for m in usable:
        keep &= ~np.isnan(matrix(m)).any(axis=0)
    if keep.sum() < 3:
        return (f"only {int(keep.sum())} item(s) have {y} varying across the systems with every system's {y} and "
                f"{', '.join(usable)} present; the item-level model needs at least 3: add items or fill their cells")
    return (f"no --x metric has a within-item τ with {y} (each is constant within every item); give each item's own "
            "MT scores")


def _table_mode(table, system_col, query_col, x, y, n_sys, n_q, effects, reps, power, seed, jobs, details, fmt,
                quiet) -> None:  # fmt: skip

    xs = split_list(x)
    if not xs or not y:
        raise UserError("--table needs --x (one or more MT metric columns) and --y (the per-query target column)")
    if y in xs or system_col == query_col or {system_col, query_col} & set(xs + [y]):
        raise UserError("--system-col, --query-col, --x and --y must name different columns")
    t = read_table(table)
    if not t.rows:
        raise UserError(f"{table}: the table has a header but no rows; add one row per system and query")
    t.check_unique([system_col, query_col], "system and query")
    sys_ids, q_ids = [s.strip() for s in t.strings(system_col)], [q.strip() for q in t.strings(query_col)]
    for col, ids in ((system_col, sys_ids), (query_col, q_ids)):
        if any(not v for v in ids):
            raise UserError(f"{table}: an empty {col} cell; every row names its system and query")
    systems = list(dict.fromkeys(sys_ids))
    queries = list(dict.fromkeys(q_ids))
    si = np.array([systems.index(s) for s in sys_ids]) if len(systems) < 2000 else None
    if si is None:
        pos = {s: i for i, s in enumerate(systems)}
        si = np.array([pos[s] for s in sys_ids])
    qpos = {q: i for i, q in enumerate(queries)}
    qi = np.array([qpos[q] for q in q_ids])
    metrics = {}
    for m in xs:
        v = t.numbers(m)
        per = np.full(len(systems), np.nan)
        for k in range(len(systems)):
            vals = v[si == k]
            if np.isnan(vals).any():
                raise UserError(f"{table}: column {m}: system {systems[k]!r} has a missing score; design needs every "
                                "MT metric for every system")
            if not np.all(vals == vals[0]):
                raise UserError(f"{table}: column {m}: system {systems[k]!r} has different scores on its rows; an MT "
                                "metric column repeats the system's score on each of its rows")
            per[k] = vals[0]
        metrics[m] = per
    pq = np.full((len(systems), len(queries)), np.nan)
    pq[si, qi] = t.numbers(y)
    if len(systems) < 3:
        raise UserError(f"{table}: {len(systems)} systems; design needs at least 3")
    if np.isnan(pq).all(axis=1).any():
        raise UserError(f"{table}: column {y}: a system without any value; every system needs per-query values")
    with np.errstate(all="ignore"):
        vals = np.nanmean(pq, axis=1)
    if np.all(vals == vals[0]):
        raise UserError(f"{table}: column {y}: every system has the same mean; no metric can be ranked by it")
    data = dz.DesignData(tuple(systems), metrics, {y: dz.Target(y, vals, pq)})
    doc = _analyse(data, n_sys, n_q, effects, "all", reps, power, seed, jobs,
                   default(CorrelationSettings, "alpha"), "holm", "target", "b", _observed_from_table(data, seed),
                   quiet, xs, dz.run_sides())
    _print(doc, details, fmt, None)


def observed_rows(doc: dict) -> list[dict]:
    """The system-level rows at the pilot's own size (results.json's ``design.observed_rows``)."""
    o = doc["observed"]
    return [r for r in doc["rows"] if r["n_systems"] == o["n_systems"] and r["n_queries"] in (o.get("n_queries"), None)
            and r.get("level") != "item"]


def answer_lines(doc: dict, size: str) -> list[str]:
    """The design's answer in a few short lines, the first starting with ``Answer``: per assumed effect, how many
    questions reach the power goal at the pilot's size; the lines after it say at what size the rest would."""
    counts = design_counts({"design": {"observed_rows": observed_rows(doc), "settings": doc["settings"]}})
    if counts is None:
        return [f"Answer: no system-level question simulated at the pilot's size ({size}); the lines below "
                "give the sizes"]
    goal, rows = counts
    lines = [f"Answer: at this size ({size}), questions reaching {goal:.0%} power, for assumed effects "
             "(not the observed ones):"]
    lines += [f"  effect {e:g}: {a} of {b} targets' τ, {c} of {d} metric pairs" for e, a, b, c, d in rows[:7]]
    lines.append("  the lines below: the number of systems (or queries) each question would need")
    return lines


def _print(doc: dict, details: bool, fmt: str, out: Path | None) -> None:
    if fmt == "json":
        sys.stdout.write(json.dumps(doc["rows"], indent=1, ensure_ascii=False) + "\n")
        return
    s, o = doc["settings"], doc["observed"]
    size = f"{o['n_systems']} systems" + (f" × {o['n_queries']} queries" if o.get("n_queries") else "")
    for line in answer_lines(doc, size):
        typer.echo(line)
    typer.echo(f"\nPower for assumed effects ({size} as the pilot; {s['reps']} simulated studies per point, α = "
               f"{s['alpha']:g}; pairs: {s['correction']} over each target's metric pairs):")
    for line in doc["answers"]:
        typer.echo("  " + line)
    for line in doc["query_answers"]:
        typer.echo("  " + line)
    typer.echo("Effects are assumed (--effect), not observed: the observed Δτ in brackets is an estimate with its "
               "interval, not the effect to plan for. Power ± Monte Carlo se for every size: "
               + ("below" if details else "--details, or design.json"))
    if details:
        typer.echo(f"{'target':<14} {'a':<10} {'b':<10} {'systems':>7} {'queries':>7} {'effect':>6} {'power':>6} "
                   f"{'± se':>6}")
        seen = set()
        for r in doc["rows"]:
            key = (r["target"], r.get("b"), r["n_systems"], r["n_queries"], r["effect"])
            if "b" not in r and key in seen:  # a single τ's power is every metric's: one line
                continue
            seen.add(key)
            a = r["a"] if "b" in r else "(any)"
            typer.echo(f"{_label(r):<14} {a:<10} {r.get('b') or '-':<10} {r['n_systems']:>7} "
                       f"{r['n_queries'] if r['n_queries'] is not None else '-':>7} {r['effect']:>6g} "
                       f"{r['power']:>6.2f} {r['mc_se']:>6.3f}")
    if out is not None:
        typer.echo(f"design: {out / 'design.html'} (also design.png, design.json; a Study design section in the "
                   "reports)")
    sys.stdout.flush()
    for n in doc["notes"]:
        typer.echo(f"note: {n}", err=True)


def _mapper(jobs: int, quiet: bool, label: str):
    """map(function, tasks) through a local executor of at most ``jobs`` workers (MAX_WORKERS), with a progress bar."""
    def run(fn, tasks: list) -> list:
        with Progress(quiet) as progress, get_executor("local", min(jobs, MAX_WORKERS, max(1, len(tasks)))) as ex:
            return ex.map(fn, tasks, progress.stage(label, len(tasks)))
    return run


def _label(r: dict) -> str:
    """A row's target as shown in the grid: item-level rows name their items (their "queries" are items)."""
    return f"{r['target']} (within {r['items']})" if r.get("level") == "item" else r["target"]


def _write(out: Path, results: dict, doc: dict) -> None:
    """design.json, design.png, design.html, the reports with their Study design section and results.json with
    its ``design`` block, replaced as one set (an interrupted design leaves the previous set); called holding OUT's
    lock, on the results.json read under it."""
    o = doc["observed"]
    results = dict(results)
    results["design"] = {
        "observed": o,
        "settings": {k: doc["settings"][k] for k in ("reps", "alpha", "seed", "power", "effects", "correction",
                                                      "family", "method")},
        "observed_rows": observed_rows(doc),
        "answers": doc["answers"] + doc["query_answers"],
        **({"notes": doc["notes"]} if doc["notes"] else {}),
    }
    png = _png(doc)
    files: dict[str, str | bytes] = dict(render_reports(results))
    files["design.json"] = json.dumps(doc, indent=1, ensure_ascii=False) + "\n"
    files["design.png"] = png
    files["design.html"] = _html(doc, png)
    files["results.json"] = json.dumps(results, indent=1, ensure_ascii=False) + "\n"
    write_set(out, files, last="results.json")


def _effects(text: str) -> list[float]:
    if not text.strip():
        return list(DEFAULT_EFFECTS)
    out = []
    for v in split_list(text):
        try:
            e = float(v)
        except ValueError:
            raise UserError(f"--effect: {v!r} is not a number; give τ or Δτ values in [0, 1), e.g. 0.1,0.2,0.3") from None
        if not (0 <= e < 1):
            raise UserError(f"--effect: {v} is out of range; use values in [0, 1)")
        out.append(e)
    if len(out) > 20:
        raise UserError(f"--effect: {len(out)} values; the maximum is 20")
    return sorted(set(out))


def _sizes(text: str, name: str, minimum: int, maximum: int) -> list[int]:
    out = []
    for v in split_list(text):
        try:
            n = int(v)
        except ValueError:
            raise UserError(f"{name}: {v!r} is not a whole number") from None
        if not minimum <= n <= maximum:
            raise UserError(f"{name}: {n} is out of range; use {minimum} to {maximum}")
        out.append(n)
    if len(set(out)) > 30:
        raise UserError(f"{name}: {len(set(out))} sizes; the maximum is 30")
    return sorted(set(out))


def _png(doc: dict) -> bytes:
    """Per target, power against systems at the pilot's queries: a line per assumed effect for the single τ
    (dashed) and the leading pair (solid)."""
    plt = pyplot()
    Q = doc["observed"].get("n_queries")
    # panels: each system-level target, then each item-level one (its rows have "level": "item")
    panels = [(t, None) for t in dict.fromkeys(r["target"] for r in doc["rows"] if r.get("level") != "item")]
    panels += [(t, "item") for t in dict.fromkeys(r["target"] for r in doc["rows"] if r.get("level") == "item")]
    fig, axes = plt.subplots(len(panels), 1, figsize=(7, 2.4 * len(panels)), squeeze=False)
    for ax, (name, level) in zip(axes[:, 0], panels):
        fit = doc["fits"][name] if level is None else doc["item_fits"][name]
        n_q = fit["n_queries"] if level is None else fit["n_items"]
        rank = fit["ranking"]
        lead = tuple(rank[:2]) if len(rank) > 1 else None
        for ci, e in enumerate(doc["settings"]["effects"]):
            for kind in ("tau", "pair"):
                mine = [r for r in doc["rows"] if r["target"] == name and r.get("level") == level and r["effect"] == e
                        and r["n_queries"] in (n_q, None)
                        and ((kind == "tau" and "b" not in r and r["a"] in (rank[0], None))
                             or (kind == "pair" and lead and (r["a"], r.get("b")) == lead))]
                pts = sorted((r["n_systems"], r["power"]) for r in mine)
                if pts:
                    ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", markersize=3, color=f"C{ci % 10}",
                            linestyle="--" if kind == "tau" else "-",
                            label=(f"τ = {e:g}" if kind == "tau" else f"{lead[0]} > {lead[1]}, Δτ = {e:g}"))
        if level == "item":
            one = {"documents": "document", "queries": "query"}.get(fit["items"], "item")
            ax.set_title(f"{name}: within-{one} τ (at {n_q} {fit['items']})", fontsize=9)
        else:
            ax.set_title(f"{name} (at {Q} queries)" if Q and fit["n_queries"] else name, fontsize=9)
        ax.axhline(doc["settings"]["power"], color="grey", linewidth=0.8)
        ax.set_xlabel("systems", fontsize=8)
        ax.set_ylabel("power", fontsize=8)
        ax.set_ylim(-0.02, 1.02)
        ax.tick_params(labelsize=7)
        ax.legend(fontsize=6, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0)
    fig.tight_layout()
    return save(fig, dpi=100, bbox_inches="tight")


def _html(doc: dict, png: bytes) -> str:
    s, o = doc["settings"], doc["observed"]
    seen: set = set()
    shown = []
    for r in doc["rows"]:  # a single τ's power is every metric's: one row
        key = (r["target"], r.get("b") is None and "τ" or (r["a"], r["b"]), r["n_systems"], r["n_queries"], r["effect"])
        if key not in seen:
            seen.add(key)
            shown.append(r)
    rows = "".join(
        f"<tr><td>{html.escape(_label(r))}</td><td>{html.escape(r['a'] if r.get('b') else '(any metric)')}</td>"
        f"<td>{html.escape(r.get('b') or '–')}</td><td>{r['n_systems']}</td>"
        f"<td>{r['n_queries'] if r['n_queries'] is not None else '–'}</td>"
        f"<td>{r['effect']:g}</td><td>{r['power']:.3f}</td><td>{r['mc_se']:.3f}</td></tr>" for r in shown)
    return ("<!doctype html><html lang='en'><head><meta charset='utf-8'><title>study design</title>"
            "<style>body{font-family:sans-serif;max-width:60em;margin:1em auto}td,th{padding:0 .5em;text-align:right}"
            "td:nth-child(-n+3){text-align:left}</style></head><body>"
            f"<h1>Study design</h1><p>Pilot: {o['n_systems']} systems"
            + (f" × {o['n_queries']} queries" if o.get("n_queries") else "") + ". "
            f"{html.escape(s['method'])}; {s['reps']} simulated studies per point, seed {s['seed']}, α = {s['alpha']:g}, "
            f"{html.escape(s['correction'])} over each target's metric pairs.</p><ul>"
            + "".join(f"<li>{html.escape(a)}</li>" for a in doc["answers"] + doc["query_answers"]) + "</ul>"
            + ("<p>Notes:</p><ul>" + "".join(f"<li>{html.escape(n)}</li>" for n in doc["notes"]) + "</ul>"
               if doc["notes"] else "")
            + f"<img alt='power against systems' src='data:image/png;base64,{base64.b64encode(png).decode()}'>"
            "<table><tr><th>target</th><th>a</th><th>b</th><th>systems</th><th>queries</th><th>effect</th>"
            f"<th>power</th><th>± se</th></tr>{rows}</table></body></html>")
