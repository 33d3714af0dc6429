"""``clir-eval correlate``: correlate columns of any score table (e.g. MT metrics vs IR
measures per system), per group, as JSON, TSV or a Markdown τ table like Table 4 of
Gowda et al. 2021 plus a per-metric summary like their Table 3."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Mapping, Optional

import typer

from ..correlation.driver import correlate_groups
from ..correlation.items import ItemSettings, correlate_item_table, item_table_groups
from ..correlation.settings import DELTA_CI_RESAMPLES, CorrelationSettings, StatsSettings, VerdictSettings
from ..correlation.tables import check_table_memory, groups
from ..errors import UserError
from ..io.files import atomic_write, check_output_file
from ..io.tables import apply_filters, parse_filters, parse_labels, parse_rounding, read_table
from ..limits import check_seed, memory_bytes
from ..params import split_list
from ..report.latex import latex_fragment
from ..report.tables import correlate_blocks, correlate_markdown
from ..report.tsv import CORRELATE_TSV, tsv_records
from .app import app
from .options import build, setting_option

if TYPE_CHECKING:
    from ..correlation.items import ItemSettings
    from ..io.tables import Table


@app.command("correlate")
def correlate_cmd(
    table: str = typer.Option(..., "--table", help="Score table: TSV or CSV (plain or .gz) with a header row."),
    x: str = typer.Option(..., "--x", help="Comma list of x columns (e.g. MT metrics)."),
    y: str = typer.Option(..., "--y", help="Comma list of y columns (e.g. IR measures)."),
    group_by: Optional[str] = typer.Option(None, "--group-by", help="Correlate separately per value of this column, or per combination of several: COL,COL (group = values joined by /)."),
    round_: list[str] = typer.Option([], "--round", help="Round cells half-up before correlating: N (all used "
                                     "columns) or COL=N,... (published tables were rounded; ties change τ-b)."),
    method: str = setting_option(CorrelationSettings, "method"),
    variant: str = setting_option(CorrelationSettings, "variant"),
    alpha: float = setting_option(StatsSettings, "alpha"),
    filter_: list[str] = typer.Option([], "--filter", help="Keep rows: COL=VALUE (exact) or COL~REGEX (search), "
                                      "comma list or repeated; same column OR-ed, different columns AND-ed."),
    label: list[str] = typer.Option([], "--label", help="Display names for md output: VALUE=LABEL,... for group "
                                    "values and column names."),
    ci: int = setting_option(StatsSettings, "resamples", "--ci"),
    ci_level: float = setting_option(StatsSettings, "level", "--ci-level"),
    seed: int = setting_option(StatsSettings, "seed"),
    verdicts: bool = typer.Option(False, "--verdicts", help="Rank the x columns per group x y with significance "
                                  "clusters (PERM-BOTH on every pair, p adjusted per --family, AssignRanks) and a CI of every Δτ."),
    permutation: int = setting_option(VerdictSettings, "resamples", "--permutation"),
    correction: str = setting_option(CorrelationSettings, "correction"),
    family: str = setting_option(CorrelationSettings, "family"),
    resolution: str = setting_option(CorrelationSettings, "resolution"),
    lower_is_better: str = typer.Option("", "--lower-is-better", help="Comma list of x columns where lower is "
                                        "better (e.g. TER): ranked by -tau."),
    item_col: Optional[str] = typer.Option(None, "--item-col", help="Item-level table: one row per system and "
                                           "item (document, query, segment) named by this column; reports the "
                                           "groupings none, item, system, within (docs/item-level.md)."),
    system_col: str = typer.Option("system", "--system-col", help="With --item-col: the column naming the system."),
    fmt: str = typer.Option("json", "--format", help="json | tsv | md | latex (booktabs tables, the md content)."),
    out: Optional[str] = typer.Option(None, "--out", help="Write here (atomically) instead of stdout."),
) -> None:
    """Correlate the columns of a score table.

    Every --x column with every --y column, per --group-by value.

    Rows with a missing value (empty, NA, NaN, -) in a used column are dropped per pair and n is reported; fewer than 3 rows or a constant column gives tau = null with a reason.

    \b
    Examples (after 'clir-eval demo --out demo-out'):
      clir-eval correlate --table demo-out/scores.tsv --x bleu,chrf1,macrof1 --y map,rbo --verdicts --format md
      clir-eval correlate --table demo-out/scores.tsv --x bleu,chrf1 --y map --format latex --out demo-out/tau.tex
    """
    if fmt not in ("json", "tsv", "md", "latex"):
        raise UserError(f"unknown --format {fmt!r}; use json, tsv, md or latex")
    check_seed(seed)  # "not a valid seed" (the record's bounds are the same)
    settings = build(StatsSettings, {"resamples": "--ci", "level": "--ci-level"}, method=method, variant=variant,
                     alpha=alpha, resamples=ci, seed=seed, level=ci_level, seed_per_pair=False)
    v = build(VerdictSettings, {"resamples": "--permutation"}, resamples=permutation, correction=correction,
              discriminability=False, family=family, resolution=resolution, ci_resamples=ci or DELTA_CI_RESAMPLES)
    if out:
        check_output_file(out)
    xs, ys = split_list(x), split_list(y)
    if not xs or not ys:
        raise UserError("--x and --y need at least one column name each")
    t = read_table(table)
    if not t.rows:
        raise UserError(f"{table}: the table has a header but no rows; add one row per system")
    if filter_:
        t = apply_filters(t, parse_filters(filter_))
    if not t.rows:
        raise UserError(f"{table}: no rows left after --filter; check the filter values")
    lower = split_list(lower_is_better)
    unknown = [c for c in lower if c not in xs]
    if unknown:
        raise UserError(f"--lower-is-better {', '.join(unknown)}: not among the --x columns ({', '.join(xs)})")
    rounding = parse_rounding(round_, list(dict.fromkeys(xs + ys)))
    if item_col is not None:
        request = ItemTable(t, tuple(xs), tuple(ys), item_col, system_col, group_by, rounding, tuple(lower))
        _check_item_columns(request)
        s = item_settings(settings, v)
        _check_item_memory(request, s)
        text = _item_level(request, s, verdicts, fmt)
        if out:
            with atomic_write(out, parents=False) as fh:
                fh.write(text)
        else:
            sys.stdout.write(text)
        return
    grouped = groups(t, xs, ys, group_by, rounding)
    check_table_memory(grouped, settings, verdicts)
    results, vds = correlate_groups(grouped, xs, ys, settings, rounding, v if verdicts else None, lower)
    if fmt == "json":
        text = json.dumps({"correlations": results, "verdicts": vds} if verdicts else results,
                          indent=1, ensure_ascii=False) + "\n"
    elif fmt == "tsv":
        text = tsv_records(results, CORRELATE_TSV)
    elif fmt == "md":
        text = correlate_markdown(results, xs, ys, parse_labels(label), alpha, lower, vds)
    else:
        text = latex_fragment(correlate_blocks(results, xs, ys, parse_labels(label), alpha, lower, vds))
    if out:
        with atomic_write(out, parents=False) as fh:
            fh.write(text)
    else:
        sys.stdout.write(text)


@dataclass(frozen=True)
class ItemTable:
    """What ``correlate --item-col`` analyses: a long score table (one row per system and item), its x and y
    columns, the columns naming each row's item and system, the --group-by column(s), the --round
    decimals per column and the x columns where lower is better."""

    table: Table
    xs: tuple[str, ...]
    ys: tuple[str, ...]
    item_col: str
    system_col: str = "system"
    group_by: Optional[str] = None
    rounding: Mapping[str, int] = field(default_factory=dict)
    lower: tuple[str, ...] = ()


def item_settings(stats: StatsSettings, v: VerdictSettings) -> ItemSettings:
    """The item-level statistics of ``correlate --item-col`` from the command's two records (the variant
    applies to Kendall's τ only)."""
    return ItemSettings(method=stats.method, variant=stats.variant if stats.method == "kendall" else None,
                        alpha=stats.alpha, bootstrap=stats.resamples, permutation=v.resamples, seed=stats.seed,
                        level=stats.level, correction=v.correction, family=v.family, resolution=v.resolution)


ITEM_TSV = ("group", "x", "y", "grouping", "tau", "p_value", "significant", "n", "n_items", "n_systems", "n_groups",
            "ci_crossed", "ci_items", "ci_systems", "p_test")


def _check_item_columns(r: ItemTable) -> None:
    """--item-col and --system-col name two different id columns, neither a score nor a group
    column, and every row names its system and its item (an empty id is no item)."""
    t, item_col, system_col, xs, ys, group_by = r.table, r.item_col, r.system_col, r.xs, r.ys, r.group_by
    if item_col == system_col:
        raise UserError(f"--item-col {item_col!r} is also the --system-col; name the column of the items (documents, "
                        "queries, segments) and the column of the systems separately")
    groups_ = [c.strip() for c in group_by.split(",")] if group_by else []
    for opt, col in (("--item-col", item_col), ("--system-col", system_col)):
        if col in xs or col in ys:
            raise UserError(f"{opt} {col!r} is also among the --x/--y score columns; give the id column")
        if col in groups_:
            raise UserError(f"{opt} {col!r} is also a --group-by column; give the id column")
        i = t.index(col)
        for row, lineno in zip(t.rows, t.linenos):
            if not row[i].strip():
                raise UserError(f"{t.path}:{lineno}: empty {col!r} ({opt}); every row needs the id of its "
                                f"{'item' if opt == '--item-col' else 'system'}")


def item_memory(systems: int, items: int, ci: int, permutation: int, variant: str | None) -> int:
    """Estimated peak bytes of the item-level analysis of one group (``systems`` x ``items`` cells):
    the CI draws over items build items x items pair matrices (float64; a few at a time) and
    ci x items multiplicities, the permutation test permutation x systems x items indices, and
    acc23 all pairs of the flattened cells; measured by scripts/bench_memory_bounds.py."""
    S, I = max(systems, 1), max(items, 1)
    need = 18 * permutation * S * I  # int64 indices and their permuted copy
    if ci > 0:  # pair matrices, and a dozen draws x items arrays of float64 (items' τ per draw, ...)
        need = max(need, 8 * (4 * I * I + 12 * ci * max(S, I)))
    if variant == "acc23":  # all pairs of the flattened cells: indices, signs, products
        cells = S * I
        need = max(need, 64 * (cells * (cells - 1) // 2))
    return 300 * 2**20 + need


def _check_item_memory(r: ItemTable, s: ItemSettings) -> None:
    """Refuse up front, naming the bound, an item-level analysis estimated to need more memory than
    :func:`clir_eval.limits.memory_bytes` (4 GiB unless raised)."""
    t, item_col, system_col, group_by = r.table, r.item_col, r.system_col, r.group_by
    ci, permutation, variant = s.bootstrap, s.permutation, s.variant if s.method == "kendall" else None
    cols = [c.strip() for c in group_by.split(",") if c.strip()] if group_by else []
    gi, si, ii = [t.index(c) for c in cols], t.index(system_col), t.index(item_col)
    per: dict[tuple, tuple[set, set]] = {}
    for row in t.rows:
        sys_, items = per.setdefault(tuple(row[i] for i in gi), (set(), set()))
        sys_.add(row[si].strip())
        items.add(row[ii].strip())
    bound = memory_bytes()
    for key, (sys_, items) in per.items():
        need = item_memory(len(sys_), len(items), ci, permutation, variant)
        if need > bound:
            where = f" in group {'/'.join(key)!r}" if key else ""
            raise UserError(
                f"--item-col: {len(sys_)} systems x {len(items)} items{where} with --ci {ci}, --permutation "
                f"{permutation}{', acc23' if variant == 'acc23' else ''} would need about {need / 2**30:.1f} GiB, over "
                f"the bound of {bound / 2**30:.1f} GiB; lower --ci / --permutation, split the items with --group-by, "
                "or raise the bound with CLIR_EVAL_MAX_MEMORY_BYTES"
            )


def _item_level(r: ItemTable, s: ItemSettings, verdicts: bool, fmt: str) -> str:
    """The --item-col output: JSON rows (and, with ``verdicts``, the verdicts) with "grouping", or TSV."""
    if fmt not in ("json", "tsv"):
        raise UserError(f"--item-col prints --format json or tsv, not {fmt!r}")
    groups_ = item_table_groups(r.table, r.xs, r.ys, r.item_col, r.system_col, r.group_by, r.rounding)
    rows, vds = correlate_item_table(groups_, s, r.lower, verdicts)
    if fmt == "tsv":
        return tsv_records(rows, ITEM_TSV)
    return json.dumps({"correlations": rows, "verdicts": vds} if verdicts else rows, indent=1, ensure_ascii=False) + "\n"
