"""Finished runs read back for pooling: each run's score table as its correlations saw it, its
correlation rows, and the seeds its verdicts drew each metric pair's PERM-BOTH test with."""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Collection, Mapping, Sequence

import numpy as np

from ..correlation.driver import ScoreTable, run_table
from ..correlation.settings import CorrelationInputs, CorrelationSettings, StatsSettings, VerdictSettings
from ..correlation.verdict import ranking
from ..errors import UserError
from ..io.results import read_results
from ..sources.settings import ARCHITECTURE_NAMES

_FIX = "give the output directory of a finished 'clir-eval run'"


@dataclass
class Run:
    """One finished run: ``taus[target][metric]`` (None: undefined there), ``seeds[(target, a, b)]``
    the seed of the run's own PERM-BOTH test of a above b, ``informative[target]`` the run's flag."""

    path: str
    name: str
    results: Mapping[str, Any]
    table: ScoreTable
    raw: ScoreTable
    kinds: Mapping[str, list[str]]
    lower: tuple[str, ...]
    stats: StatsSettings
    verdict: VerdictSettings
    targets: list[str]
    target_kind: dict[str, str]
    taus: dict[str, dict[str, float | None]]
    seeds: dict[tuple[str, str, str], int]
    informative: dict[str, bool] = field(default_factory=dict)
    identity: str = ""

    @property
    def systems(self) -> tuple[str, ...]:
        return self.table.systems

    def column(self, name: str, raw: bool = False) -> np.ndarray:
        return np.asarray((self.raw if raw else self.table).columns[name], float)


def _settings(results: Mapping[str, Any], path: Path) -> CorrelationSettings:
    sec = (results.get("config") or {}).get("correlation")
    if not isinstance(sec, dict):
        raise UserError(f"{path}: config.correlation is missing; {_FIX} (written by this version)")
    known = {f for f in CorrelationSettings.__dataclass_fields__}
    try:
        return CorrelationSettings(**{k: v for k, v in sec.items() if k in known})
    except (TypeError, ValueError, UserError) as e:
        raise UserError(f"{path}: config.correlation is not valid ({e}); {_FIX}") from None


def load_run(out_dir: str | Path) -> Run:
    """A finished run's output directory read back (a :class:`UserError` naming the file and the
    fix when it is not one)."""
    out = Path(out_dir)
    results = read_results(out)
    path = out / "results.json"
    kinds = results["score_kinds"]
    for key in ("mt", "ir"):
        if not isinstance(kinds.get(key, []), list):
            raise UserError(f"{path}: score_kinds.{key} must be a list; {_FIX}")
    if not kinds.get("mt"):
        raise UserError(f"{path}: the run has no MT metrics (score_kinds.mt is empty), so it ranks none; {_FIX} "
                        "with mt: metrics or an external kind: mt table")
    if not isinstance(results.get("verdicts"), list):
        raise UserError(f"{path}: verdicts are missing (the run did not finish); {_FIX}")
    cc = _settings(results, path)
    try:
        table = run_table(CorrelationInputs(cc), results["systems"], kinds)
        raw = run_table(CorrelationInputs(CorrelationSettings()), results["systems"], kinds)  # unrounded
    except UserError as e:
        raise UserError(f"{path}: {e}") from None
    lower = tuple(kinds.get("lower_is_better", []) or [])
    taus: dict[str, dict[str, float | None]] = {}
    target_kind: dict[str, str] = {}
    for c in results["correlations"]:
        kind = c.get("kind", "mt-ir")
        if kind not in ("mt-ir", "mt-human"):
            continue
        t = c["tau"]
        taus.setdefault(c["y"], {})[c["x"]] = None if t is None or (isinstance(t, float) and math.isnan(t)) else float(t)
        target_kind[c["y"]] = kind[3:]
    # the run's verdict tests, in its order: IR measures then human targets, each target's ranked
    # metric pairs best first; test i drew with seed + i (correlation/driver.py verdicts)
    targets = [y for k in ("ir", "human") for y in kinds.get(k, []) if y in taus]
    seeds: dict[tuple[str, str, str], int] = {}
    i = 0
    for y in targets:
        order = ranking(taus[y], lower)
        for j, a in enumerate(order):
            for b in order[j + 1:]:
                seeds[(y, a, b)] = cc.seed + i
                i += 1
    informative = {v.get("target"): bool(v.get("informative", True)) for v in results["verdicts"] if isinstance(v, dict)}
    # a run without verdicts (permutation: 0) is re-drawn with the default number of draws
    vs = cc.verdicts() if cc.permutation > 0 else VerdictSettings(correction=cc.correction, resolution=cc.resolution)
    return Run(str(out), str(results["name"]), results, table, raw, kinds, lower, cc.stats(), vs, targets,
               target_kind, taus, seeds, informative, content_id(results))


def content_id(results: Mapping[str, Any]) -> str:
    """A run's identity by its content, not its path: the sha256 of its ``systems`` block (every system's name,
    attributes and scores) as canonical JSON. A byte copy of a run, or a second run of the same systems with the
    same scores, has the same identity."""
    text = json.dumps(results["systems"], sort_keys=True, ensure_ascii=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def directions(runs: Sequence[Run], metrics: Sequence[str], lab: Mapping[str, str], where: str,
               notes: list[str]) -> tuple[list[str], set[str]]:  # fmt: skip
    """(the metrics lower-is-better in every run of ``runs`` that has them, the metrics whose direction differs
    between the runs). A metric of mixed direction is pooled with each run's τ oriented by that run's own
    direction (:func:`pooled_tau`), so larger is better; a note says so."""
    lower, mixed = [], set()
    for m in metrics:
        low = [r for r in runs if m in r.kinds.get("mt", []) and m in r.lower]
        high = [r for r in runs if m in r.kinds.get("mt", []) and m not in r.lower]
        if low and high:
            mixed.add(m)
            notes.append(f"{where}: {m} is lower-is-better in {', '.join(lab[r.path] for r in low)} and higher-is-"
                         f"better in {', '.join(lab[r.path] for r in high)}; each run's τ is oriented by its own "
                         f"direction (sign flipped where lower is better) before pooling, so {m}'s mean τ and Δτ are "
                         "oriented (larger is better)")
        elif low:
            lower.append(m)
    return sorted(lower), mixed


def pooled_tau(run: Run, tau: float | None, metric: str, mixed: Collection[str]) -> float | None:
    """The τ of ``metric`` in ``run`` as the pool averages it: oriented by the run's own direction where the
    metric's direction differs between the runs (``mixed``), else as the run reports it."""
    if tau is None or metric not in mixed:
        return tau
    return -tau if metric in run.lower else tau


def shared_attr(run: Run, attr: str) -> str:
    """A run's value of ``attr`` for :func:`clir_eval.pooling.assign_weights`: ``name`` is the run's
    name; any other is the attribute every system of the run shares (config ``attrs``)."""
    if attr == "name":
        return run.name
    vals = {str((s.get("attrs") or {}).get(attr)) for s in run.results["systems"].values()
            if attr in (s.get("attrs") or {})}
    n_with = sum(1 for s in run.results["systems"].values() if attr in (s.get("attrs") or {}))
    if len(vals) != 1 or n_with != len(run.results["systems"]):
        have = sorted({k for s in run.results["systems"].values() for k in (s.get("attrs") or {})})
        why = "its systems differ in it" if len(vals) > 1 else "not every system has it"
        raise UserError(f"--weights {attr}: run {run.path} has no single value of {attr!r} ({why}; its systems' "
                        f"attributes: {', '.join(have) or 'none'}); use --weights equal, name, or an attribute "
                        "every system of every run shares (systems.attrs in the config)")
    return vals.pop()


def architecture(run: Run) -> str:
    """The CLIR architecture a run measured (``translate``: documents or queries; runs written before the
    signature named it translated documents, the only architecture then)."""
    arch = (run.results.get("signature") or {}).get("architecture") or {}
    value = arch.get("translate", "documents") if isinstance(arch, dict) else "documents"
    if value not in ARCHITECTURE_NAMES:
        raise UserError(f"{run.path}/results.json: signature.architecture.translate is {value!r}, not documents or "
                        f"queries; {_FIX}")
    return value


def check_architectures(runs: list[Run], labels: Mapping[str, str], mix: bool, notes: list[str],
                        warnings: list[str]) -> None:
    """Runs that measured different CLIR architectures are pooled only when ``mix`` asks for it (then a warning
    says so and a note lists the runs of each architecture side by side); otherwise a :class:`UserError` names
    them. Runs of one architecture other than document translation get a note naming it."""
    by_arch: dict[str, list[str]] = {}
    for r in runs:
        by_arch.setdefault(architecture(r), []).append(labels[r.path])
    listed = "; ".join(f"{ARCHITECTURE_NAMES[a]}: {', '.join(names)}" for a, names in by_arch.items())
    if len(by_arch) > 1 and not mix:
        raise UserError(f"the runs measured different CLIR architectures ({listed}); a metric's τ under query "
                        "translation and under document translation answer different questions: pool each "
                        "architecture on its own (and compare the leaderboards side by side), or pass "
                        "--mix-architectures to pool them together")
    if len(by_arch) > 1:
        warnings.append(f"MIXED ARCHITECTURES (--mix-architectures): {listed}; the leaderboard averages over both "
                        "(each run's architecture: tasks[].architecture)")
    elif "documents" not in by_arch:
        notes.append(f"architecture: {listed}")


def run_identity(run: Run) -> str:
    """A run's identity by its content (sha256 hex of the canonical JSON of what its numbers are computed from:
    its name, its systems' scores and attributes, its score kinds and its correlation settings), not its path
    or timing: the same run read from two places, or re-run with the same inputs, has the same identity."""
    res = run.results
    content = {"name": res.get("name"), "systems": res.get("systems"), "score_kinds": res.get("score_kinds"),
               "correlation": (res.get("config") or {}).get("correlation")}
    text = json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=True, default=str)
    return hashlib.sha256(text.encode("ascii")).hexdigest()
