"""The public Python API (``clir_eval.run``, ``clir_eval.load``, ``clir_eval.correlate``,
``clir_eval.score_mt``, ``clir_eval.score_ir``): what the commands do, as functions.

``import clir_eval`` stays cheap: the package loads this module on the first use of one of its
names, and each function imports the stage it runs. User errors raise
:class:`clir_eval.errors.UserError` with the message the command would print. Documented on
docs/python-api.md, whose examples run in tests/test_python_api.py.
"""

from __future__ import annotations

import dataclasses
import os
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

from .config.load import config_from_dict, load_config
from .config.schema import Config
from .correlation.settings import StatsSettings
from .correlation.tables import correlate_table
from .errors import UserError
from .io.files import read_lines
from .io.results import RunResults
from .io.tables import Table, read_table, rounding_from_mapping
from .io.trec import Qrels, Run, qrels_from_mapping, read_qrels, read_run, run_from_mapping
from .ir.evaluate import as_given, check_scoreable, evaluate
from .mt.base import check_streams, score_metrics
from .params import split_list
from .pipeline.run import run_experiment

if TYPE_CHECKING:
    from .mt.base import MetricScore
from .io.results import load_results

PathLike = str | os.PathLike
# correlate's **stats: the fields of StatsSettings a user sets (seed_per_pair is the driver's)
STATS_OPTIONS = tuple(f.name for f in dataclasses.fields(StatsSettings) if f.name != "seed_per_pair")


Results = RunResults  # a finished run: results.json as a record (clir_eval.io.results), read-only mapping of its blocks


def _config(config: Config | Mapping[str, Any] | PathLike, data_root: str | None) -> Config:
    if isinstance(config, Config):
        return config
    if isinstance(config, Mapping):
        return config_from_dict(config, data_root=data_root)
    if not isinstance(config, (str, os.PathLike)):
        raise UserError(f"config: give a YAML path, the YAML's content as a dict or a Config, not {type(config).__name__}")
    return load_config(config, data_root=data_root)


def run(config: Config | Mapping[str, Any] | PathLike, out: PathLike, *, jobs: int | None = None,
        data_root: str | None = None, executor: str | None = None, cache: PathLike | None = None,
        quiet: bool = True) -> Results:
    """Run an experiment as ``clir-eval run CONFIG --out OUT`` does (the same files in ``out``) and
    return its results. ``config``: a YAML path, the YAML's content as a dict (relative paths from
    the working directory) or a :class:`~clir_eval.config.schema.Config`; ``jobs``: worker
    processes (default: the config's, else one per core when the run's work pays for them, as ``run``); ``cache``: a cache directory shared
    with other runs (default: ``out/cache``)."""
    _path(out, "out")
    if cache is not None:
        _path(cache, "cache")
    run_experiment(_config(config, data_root), out, jobs=jobs, quiet=quiet, executor=executor, cache_dir=cache)
    return load(out)


def load(out: PathLike) -> Results:
    """The results of a finished run (its ``out/results.json``, checked as ``clir-eval report`` checks it), as
    the :class:`~clir_eval.io.results.RunResults` record results.json was written from."""
    return load_results(_path(out, "load"))


def _path(value: Any, what: str) -> PathLike:
    """``value`` when it is a path (str or os.PathLike); else a UserError naming ``what``."""
    if not isinstance(value, (str, os.PathLike)):
        raise UserError(f"{what}: give a directory path (str or pathlib.Path), not {type(value).__name__}")
    return value


def _columns(value: str | Sequence[str], what: str) -> list[str]:
    if not isinstance(value, (str, Iterable)):
        raise UserError(f"{what}: give a comma list or a list of names, not {type(value).__name__}")
    cols = [c.strip() for c in value.split(",")] if isinstance(value, str) else [str(c) for c in value]
    cols = [c for c in cols if c]
    if not cols:
        raise UserError(f"{what}: give at least one column name")
    return cols


def _cell(v: Any) -> str:
    if v is None or (isinstance(v, float) and v != v):
        return ""
    return repr(float(v)) if isinstance(v, float) else str(v)


_TABLE_FORMS = "a TSV/CSV path, {column: [values]}, a list of row dicts or a DataFrame"


def _column_values(name: str, values: Any) -> Sequence[Any]:
    """One column of a ``{column: values}`` table: a sequence of cells (text is no sequence of cells)."""
    if isinstance(values, (str, bytes, Mapping)) or not hasattr(values, "__len__") or not hasattr(values, "__getitem__"):
        raise UserError(f"table: column {name!r} is {type(values).__name__}, not a list of values; give {_TABLE_FORMS}")
    return values


def _table(table: Table | PathLike | Mapping[str, Sequence[Any]] | Sequence[Mapping[str, Any]] | Any) -> Table:
    """A score table from a path (TSV/CSV), a Table, ``{column: values}``, a list of row dicts, or a
    DataFrame-like object (``to_dict("list")``); a missing value (None, NaN) is an empty cell."""
    if isinstance(table, Table):
        return table
    if isinstance(table, (str, os.PathLike)):
        return read_table(table)
    if hasattr(table, "to_dict") and not isinstance(table, Mapping):
        table = table.to_dict("list")
    if isinstance(table, Mapping):
        cols = [str(c) for c in table]
        values = [_column_values(str(c), v) for c, v in table.items()]
        lengths = {len(v) for v in values}
        if len(lengths) > 1:
            raise UserError(f"table columns differ in length ({sorted(lengths)}); give one value per row in each")
        n = lengths.pop() if lengths else 0
        rows = tuple(tuple(_cell(v[i]) for v in values) for i in range(n))
    elif isinstance(table, (bytes, bytearray)) or not isinstance(table, Iterable):
        raise UserError(f"table: give {_TABLE_FORMS}, not {type(table).__name__}")
    else:
        records = list(table)
        bad = next((i for i, r in enumerate(records) if not isinstance(r, Mapping)), None)
        if bad is not None:
            raise UserError(f"table: row {bad} is {type(records[bad]).__name__}, not a mapping of column: value; "
                            f"give {_TABLE_FORMS}")
        cols = list(dict.fromkeys(str(k) for r in records for k in r))
        rows = tuple(tuple(_cell(d.get(c)) for c in cols) for d in ({str(k): v for k, v in r.items()} for r in records))
    return Table("<table>", tuple(cols), rows, tuple(range(2, len(rows) + 2)))


def correlate(table: Any, x: str | Sequence[str], y: str | Sequence[str], *, group_by: str | None = None,
              round: Mapping[str, int] | None = None, **stats: Any) -> list[dict[str, Any]]:
    """Correlate every ``x`` column with every ``y`` column of a score table (one row per system), as
    ``clir-eval correlate --format json`` does: a list of ``{"group", "x", "y", "tau", "p_value", "n",
    "significant", ...}``. ``table``: a TSV/CSV path, ``{column: values}``, a list of row dicts or a
    pandas DataFrame; ``group_by``: a column (or comma list) to correlate within; ``round``:
    decimals per column, rounded half-up first; ``stats``: ``method`` (kendall, pearson, spearman),
    ``variant`` (b, c, acc23), ``alpha``, ``resamples`` (bootstrap CI), ``level``, ``seed``."""
    t = _table(table)
    xs, ys = _columns(x, "x"), _columns(y, "y")
    if group_by is not None and not isinstance(group_by, str):
        raise UserError(f"group_by: give a column name or a comma list of them, not {type(group_by).__name__}")
    unknown = sorted(set(stats) - set(STATS_OPTIONS))
    if unknown:
        raise UserError(f"correlate: unknown option {unknown[0]!r}; the options are round, group_by, "
                        f"{', '.join(STATS_OPTIONS)}")
    missing = [c for c in dict.fromkeys(xs + ys + ([group_by] if group_by else [])) if c not in t.columns]
    if missing and not (group_by and "," in group_by):
        raise UserError(f"column {missing[0]!r} is not in the table (columns: {', '.join(t.columns)})")
    return correlate_table(t, xs, ys, group_by=group_by, rounding=rounding_from_mapping(round), **stats)


def _lines(value: PathLike | Sequence[str], what: str) -> list[str]:
    if isinstance(value, (str, os.PathLike)):
        return list(read_lines(value))
    if not isinstance(value, Iterable):
        raise UserError(f"{what}: give a file path or a list of strings (one segment each), not {type(value).__name__}")
    lines = list(value)
    if not all(isinstance(v, str) for v in lines):
        raise UserError(f"{what}: give a file path or a list of strings (one segment each)")
    return lines


def score_mt(hyps: PathLike | Sequence[str], refs: PathLike | Sequence[PathLike | Sequence[str]],
             metrics: str | Sequence[str] = ("bleu", "chrf1", "macrof1", "microf1"),
             **options: Any) -> dict[str, MetricScore]:
    """Corpus scores of one system, as ``clir-eval mt-score``: ``{name: MetricScore}`` (``.score``,
    ``.signature``, ``.to_dict()``). ``hyps``: a file or a list of segments; ``refs``: one reference
    file, or a list of references, each a file or a list of segments (as sacrebleu's ``[refs]``);
    ``metrics``: registry specs such as ``bleu``, ``chrf:beta=2``, ``macrof1``; ``options``:
    ``tokenize``, ``lowercase``."""
    h = _lines(hyps, "hyps")
    if not isinstance(refs, (str, os.PathLike, Iterable)):
        raise UserError(f"refs: give a reference file or a list of references, not {type(refs).__name__}")
    streams = [refs] if isinstance(refs, (str, os.PathLike)) else list(refs)
    if streams and all(isinstance(r, str) for r in streams) and not isinstance(refs, (str, os.PathLike)):
        if not all(os.path.exists(r) for r in streams):
            raise UserError("refs: a list of strings is read as reference files; give one reference's segments as "
                            "[segments] (a list of lists)")
    r = [_lines(s, f"refs[{i}]") for i, s in enumerate(streams)]
    if not r:
        raise UserError("refs: give at least one reference")
    check_streams(h, r)
    return score_metrics(_columns(metrics, "metrics"), h, r, **options)


def _run(run: Run | PathLike | Mapping[str, Mapping[str, float]], what: str = "run") -> Run:
    if isinstance(run, Run):
        return run
    if isinstance(run, (str, os.PathLike)):
        return read_run(run)
    return run_from_mapping(run, what)


def _qrels(qrels: Qrels | PathLike | Mapping[str, Mapping[str, int]]) -> Qrels:
    if isinstance(qrels, Qrels):
        return qrels
    if isinstance(qrels, (str, os.PathLike)):
        return read_qrels(qrels)
    return qrels_from_mapping(qrels)


def score_ir(qrels: Any, run: Any, measures: str | Sequence[str] = ("map", "ndcg", "P_10"), *,
             reference_run: Any = None, collection_size: int | None = None) -> dict[str, Any]:
    """IR measures of one run, as ``clir-eval ir-score --format json``: ``{"aggregate": {measure:
    value}, "per_query": {qid: {measure: value}}, ...}``. ``qrels`` and ``run``: TREC files or dicts
    (``{qid: {docid: relevance}}``, ``{qid: {docid: score}}``, ranked as trec_eval ranks them);
    ``measures``: trec_eval or ir_measures names (``map``, ``P_10``, ``nDCG@10``) and the harness's
    own (``rbo:p=0.98`` with ``reference_run``, ``aqwv:beta=40,cutoff=10``); the keys are the names as
    given (the canonical name starts each signature)."""
    specs = split_list(measures) if isinstance(measures, str) else _columns(measures, "measures")  # 'RBO(p=.9,...)'
    if not specs:
        raise UserError("measures: give at least one measure name")
    ref = _run(reference_run, "reference_run") if reference_run is not None else None
    system, judged = _run(run), _qrels(qrels)
    check_scoreable(system, judged, "run", "qrels")
    return as_given(evaluate(system, judged, specs, reference_run=ref, collection_size=collection_size), specs)
