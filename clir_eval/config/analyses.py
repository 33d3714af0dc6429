"""The ``analyses:`` section of a ``run`` config (favoritism, frequency buckets) validated into records."""

from __future__ import annotations

from ..errors import UserError
from ..limits import MAX_DEPTH
from .schema import AnalysesConfig, BucketsAnalysis, FavoritismAnalysis
from .sections import _Loader, _Section


def load_analyses(s: "_Loader", sec: "_Section | None", *, has_mt: bool,
                  systems: list[str] | None) -> AnalysesConfig | None:
    """``analyses: {favoritism: {systems: [S, U], metrics: [...], top: 10},
    frequency_buckets: {buckets: [10, 100, 1000], systems: all, beta: 1}}``; ``systems``: the
    names with MT output when known before the sources are read (else checked at run time)."""
    if sec is None:
        return None
    fav = _favoritism(s, sec.section("favoritism"))
    buckets = _buckets(sec.section("frequency_buckets"))
    sec.done()
    if (fav or buckets) and not has_mt:
        raise UserError(f"{s.path}: analyses: needs the mt section (system hypotheses and references); "
                        "add mt: {refs: [...]} or remove analyses")
    if not (fav or buckets):
        raise UserError(f"{s.path}: analyses: empty; give favoritism: and/or frequency_buckets: (see docs/configs.md "
                        "'Analyses on the MT test set') or remove the section")
    out = AnalysesConfig(favoritism=fav, frequency_buckets=buckets)
    if systems is not None:
        check_analysis_systems(str(s.path), out, systems)
    return out


def _favoritism(s: "_Loader", sec: "_Section | None") -> FavoritismAnalysis | None:
    if sec is None:
        return None
    from ..mt.base import load_metric  # sacrebleu (the mt package registers its metrics on import)

    systems = sec.str_list("systems")
    if len(systems) != 2 or systems[0] == systems[1]:
        raise sec.err("systems", f"give two different system names [S, U] (favoritism towards S over U), "
                                 f"got {list(systems)}")
    metrics = sec.str_list("metrics", FavoritismAnalysis.metrics)
    if not metrics:
        raise sec.err("metrics", "give at least one MT metric, e.g. [bleu, macrof1]")
    for i, spec in enumerate(metrics):
        try:
            load_metric(spec)
        except UserError as e:
            raise UserError(f"{s.path}: {sec.where}.metrics[{i}]: {e}") from None
    top = sec.int("top", FavoritismAnalysis.top, minimum=1, maximum=MAX_DEPTH)
    sec.done()
    return FavoritismAnalysis(systems=(systems[0], systems[1]), metrics=metrics, top=top)


def _buckets(sec: "_Section | None") -> BucketsAnalysis | None:
    if sec is None:
        return None
    raw = sec.raw("buckets", list(BucketsAnalysis.buckets))
    if isinstance(raw, str):
        raw = [x.strip() for x in raw.split(",") if x.strip()]
        raw = [int(x) if x.isdigit() else x for x in raw]
    if (not isinstance(raw, list) or not raw or any(isinstance(b, bool) or not isinstance(b, int) or b < 1 for b in raw)
            or any(b >= c for b, c in zip(raw, raw[1:]))):
        raise sec.err("buckets", f"give increasing positive rank boundaries such as [10, 100, 1000] (ranks 1-10, "
                                 f"11-100, 101-1000, 1001+), got {raw!r}")
    systems_raw = sec.data.get("systems")
    systems: tuple[str, ...] = ()
    if systems_raw == "all":
        sec.raw("systems")
    else:
        systems = sec.str_list("systems")
        if len(set(systems)) != len(systems):
            raise sec.err("systems", f"a system is listed twice: {list(systems)}")
    beta = sec.float("beta", 1.0, lo=0.0, hi=100.0)
    if beta <= 0:
        raise sec.err("beta", f"must be > 0, got {beta}")
    sec.done()
    return BucketsAnalysis(buckets=tuple(raw), systems=systems, beta=beta)


def check_analysis_systems(where: str, analyses: AnalysesConfig | None, names: list[str]) -> None:
    """Every system an analysis names is a system of the experiment with a hypothesis file."""
    if analyses is None:
        return
    wanted = [("favoritism", n) for n in (analyses.favoritism.systems if analyses.favoritism else ())]
    wanted += [("frequency_buckets", n) for n in (analyses.frequency_buckets.systems if analyses.frequency_buckets else ())]
    for part, n in wanted:
        if n not in names:
            shown = ", ".join(names[:20]) + (f", ... ({len(names) - 20} more)" if len(names) > 20 else "")
            raise UserError(f"{where}: analyses.{part}.systems: {n!r} is not a system with MT output in this "
                            f"experiment; use one of: {shown}")
