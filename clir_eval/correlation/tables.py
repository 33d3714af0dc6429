"""Correlations of the columns of a score table (``correlate``): rows grouped by column values, each group
correlated by the one driver (:mod:`.driver`)."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..errors import UserError
from ..io.tables import Table
from ..limits import memory_bytes
from .driver import ScoreTable, correlate_groups
from .settings import StatsSettings


def correlate_table(table: Table, xs: Sequence[str], ys: Sequence[str], *, group_by: str | None = None,
                    rounding: dict[str, int] | None = None, **stats: Any) -> list[dict]:
    """Correlate every x column with every y column, per group (first-appearance order), with the
    one driver (:func:`clir_eval.correlation.driver.correlate_pairs`).

    ``group_by`` is a column or a comma list of columns (e.g. ``lang,domain``; the group is
    their values joined by ``/``). Rows with a missing value in x or y are dropped for that
    pair only; ``n`` is the number of rows used. Rounding (half-up, per column) is applied to
    the cells before correlating. ``stats`` are fields of :class:`.settings.StatsSettings` (method,
    variant, alpha, resamples, seed, level; its defaults otherwise, as ``correlate``'s).
    With ``resamples > 0`` each row also gets a bootstrap CI over rows (systems).
    Returns dicts ``{"group", "x", "y", "tau", "p_value", "n", "significant", ...}``.
    """
    settings = StatsSettings(**stats, seed_per_pair=False)
    rounding = rounding or {}
    grouped = groups(table, xs, ys, group_by, rounding)
    check_table_memory(grouped, settings, False)
    return correlate_groups(grouped, xs, ys, settings, rounding)[0]


def table_memory(rows: int, stats: StatsSettings, verdicts: bool) -> int:
    """Estimated peak bytes of correlating one group of ``rows`` rows: Kendall's τ of resampled draws
    (--ci, the verdicts' permutations and Δτ CIs) compares every pair of rows at once (pair indices,
    signs and products, about 72 bytes a pair; 6,000 rows measured 1.25 GB); the coefficient alone and
    Pearson/Spearman draws grow with the rows only. Measured by scripts/bench_memory_bounds.py."""
    resampled = stats.resamples > 0 or verdicts
    pairs = rows * (rows - 1) // 2 if stats.method == "kendall" and resampled else 0
    return 300 * 2**20 + 72 * pairs


def check_table_memory(grouped: Sequence[tuple[str | None, ScoreTable]], stats: StatsSettings, verdicts: bool) -> None:
    """Refuse up front, naming the bound, a correlation estimated (:func:`table_memory`) to need more memory
    than :func:`clir_eval.limits.memory_bytes` (4 GiB unless raised)."""
    bound = memory_bytes()
    for g, sub in grouped:
        need = table_memory(len(sub.systems), stats, verdicts)
        if need > bound:
            where = f" in group {g!r}" if g is not None else ""
            raise UserError(
                f"Kendall's τ of resampled draws (--ci or resamples, --verdicts) over {len(sub.systems)} rows{where} "
                f"compares every pair of rows at once and would need about {need / 2**30:.2f} GiB, over the bound "
                f"of {bound / 2**30:.2f} GiB; drop the resampling, use the method pearson or spearman, fewer rows "
                "(--filter, --group-by), or raise the bound with CLIR_EVAL_MAX_MEMORY_BYTES"
            )


def groups(table: Table, xs: Sequence[str], ys: Sequence[str], group_by: str | None,
           rounding: dict[str, int]) -> list[tuple[str | None, ScoreTable]]:
    """(group value, score table of its rows) per ``group_by`` value in first-appearance order;
    ``group_by`` may name several columns (``lang,domain``: the group is their values joined by ``/``)."""
    group_cols = [c.strip() for c in group_by.split(",") if c.strip()] if group_by else []
    for col in list(xs) + list(ys) + group_cols + list(rounding):
        table.index(col)
    table.check_no_repeats(group_cols, [*xs, *ys])  # a system listed twice in a group would be counted twice
    values = {c: table.numbers(c, rounding.get(c)) for c in dict.fromkeys(list(xs) + list(ys))}
    rows = tuple(str(i) for i in range(len(table.rows)))
    if not group_cols:
        return [(None, ScoreTable(rows, values))]
    keys = np.array(["/".join(v) for v in zip(*(table.strings(c) for c in group_cols))], dtype=object)
    out = []
    for g in dict.fromkeys(keys):
        sel = keys == g
        out.append((g, ScoreTable(tuple(r for r, k in zip(rows, sel) if k), {c: v[sel] for c, v in values.items()})))
    return out
