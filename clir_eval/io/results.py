"""results.json: the records it is written from (:class:`RunResults`, :class:`SystemResult`) and read
back into; read back for ``clir-eval report`` it is parsed and its shape checked before any report is
rendered, so a bad file never overwrites good reports."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Iterator, Mapping

from .. import lazylibs
from ..errors import UserError
from .files import read_text

_FIX = "re-run the experiment ('clir-eval run CONFIG --out DIR') to write a complete one"


def _kind(v: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", type(None): "null"}.get(type(v), type(v).__name__)


def finite_number(x: Any) -> bool:
    """``x`` is a JSON number (int or float, not a bool) that is finite as a float (not NaN, ±Infinity, or an
    integer too large for a float)."""
    if type(x) is float:
        return math.isfinite(x)
    return type(x) is int and abs(x) <= 2**1023


def _number_map(where: str, v: Any, path: Path) -> None:
    if not isinstance(v, dict):
        raise UserError(f"{path}: {where} must be an object of score: number, found {_kind(v)}; {_FIX}")
    for k, x in v.items():
        if x is not None and (isinstance(x, bool) or not isinstance(x, (int, float))):
            raise UserError(f"{path}: {where}.{k} must be a number or null, found {_kind(x)}; {_FIX}")
        if x is not None and not finite_number(x):
            raise UserError(f"{path}: {where}.{k} is {str(x)[:30]} (not a finite number); a score must be finite or "
                            f"null; {_FIX}")


def check_results(results: Any, path: Path) -> dict:
    """The parsed results.json if it has the shape the reports need, else a UserError."""
    if not isinstance(results, dict):
        raise UserError(f"{path}: expected a JSON object, found {_kind(results)}; {_FIX}")
    for key, typ in (("name", str), ("systems", dict), ("correlations", list), ("score_kinds", dict),
                     ("signature", dict)):
        if key not in results:
            raise UserError(f"{path}: the key {key!r} is missing; {_FIX}")
        if not isinstance(results[key], typ):
            raise UserError(f"{path}: {key} must be {_kind(typ())}, found {_kind(results[key])}; {_FIX}")
    if not results["systems"]:
        raise UserError(f"{path}: systems is empty; {_FIX}")
    for name, entry in results["systems"].items():
        if not isinstance(entry, dict):
            raise UserError(f"{path}: systems.{name} must be an object, found {_kind(entry)}; {_FIX}")
        for part in ("mt", "ir", "human"):
            _number_map(f"systems.{name}.{part}", entry.get(part, {}), path)
        pq = entry.get("ir_per_query")
        if pq is not None:
            if not isinstance(pq, dict):
                raise UserError(f"{path}: systems.{name}.ir_per_query must be an object, found {_kind(pq)}; {_FIX}")
            for q, scores in pq.items():
                _number_map(f"systems.{name}.ir_per_query.{q}", scores, path)
    for i, c in enumerate(results["correlations"]):
        if not isinstance(c, dict) or not isinstance(c.get("x"), str) or not isinstance(c.get("y"), str):
            raise UserError(f"{path}: correlations[{i}] must be an object with x and y names; {_FIX}")
        tau = c.get("tau")
        if tau is not None and (isinstance(tau, bool) or not isinstance(tau, (int, float)) or not math.isfinite(tau)):
            raise UserError(f"{path}: correlations[{i}].tau must be a number or null; {_FIX}")
    for key, typ in (("comparisons", list), ("notes", list), ("english", dict)):
        if results.get(key) is not None and not isinstance(results[key], typ):
            raise UserError(f"{path}: {key} must be {_kind(typ())} or null, found {_kind(results[key])}; {_FIX}")
    return results


def read_results(out_dir: str | Path) -> dict:
    """``out_dir/results.json``, parsed and checked."""
    path = Path(out_dir) / "results.json"
    if not Path(out_dir).is_dir():
        raise UserError(f"{out_dir}: not a directory; give the output directory of 'clir-eval run'")
    if not path.exists() and not path.is_symlink():
        raise UserError(f"{path}: not found; run 'clir-eval run CONFIG --out {out_dir}' first")

    try:
        results = json.loads(read_text(path))
    except json.JSONDecodeError as e:
        raise UserError(f"{path}:{e.lineno}: not valid JSON ({e.msg}; truncated?); {_FIX}") from None
    return check_results(results, path)


# --------------------------------------------------------------------------- the records
# results.json is written from these records (:meth:`RunResults.to_json`) and read back into them
# (:func:`load_results`). Their fields are results.json's keys, in the file's order; a field whose value
# is None is a key the file does not carry (``ALWAYS`` keys are written even when null). Keys a record does
# not know (e.g. the ``design`` block ``clir-eval design`` adds) are kept in ``extra``, in the file's order,
# after the known ones, so a pipeline-written results.json read and written again is byte-identical.


class _Record(Mapping[str, Any]):
    """A read-only mapping view of a record's results.json form (``rec["name"]``, ``dict(rec)``), equal
    to the dict it was read from."""

    __slots__ = ()
    ALWAYS: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f in fields(self):  # type: ignore[arg-type]
            if f.name in ("extra", "out"):
                continue
            v = getattr(self, f.name)
            if v is not None or f.name in self.ALWAYS:
                out[f.name] = _plain(v)
        out.update(self.extra)  # type: ignore[attr-defined]
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], **kw: Any):
        names = {f.name for f in fields(cls)} - {"extra", "out"}  # type: ignore[arg-type]
        known = {k: v for k, v in data.items() if k in names}
        return cls(**known, extra={k: v for k, v in data.items() if k not in names}, **kw)

    def __getitem__(self, key: str) -> Any:
        return self.to_dict()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.to_dict())

    def __len__(self) -> int:
        return len(self.to_dict())

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Mapping):
            return NotImplemented
        return self.to_dict() == dict(other.items())

    __hash__ = None  # type: ignore[assignment]


def _plain(v: Any) -> Any:
    """A value in its results.json form (records inside it as dicts)."""
    if isinstance(v, _Record):
        return v.to_dict()
    if isinstance(v, dict) and any(isinstance(x, _Record) for x in v.values()):
        return {k: _plain(x) for k, x in v.items()}
    return v


@dataclass(frozen=True, eq=False)
class SystemResult(_Record):
    """One system's entry of results.json's ``systems``: its MT scores (``mt``), IR scores (``ir``, and per
    query in ``ir_per_query``), the external and human scores joined to it, its query accounting
    (``queries``: evaluated, total, skipped) and collection size."""

    attrs: dict[str, Any] = field(default_factory=dict)
    mt: dict[str, float | None] = field(default_factory=dict)
    ir: dict[str, float | None] = field(default_factory=dict)
    external: dict[str, str] = field(default_factory=dict)
    human: dict[str, float | None] = field(default_factory=dict)
    length_ratio: float | None = None
    ir_per_query: dict[str, dict[str, float]] | None = None
    queries: dict[str, Any] | None = None
    collection: dict[str, int] | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    ALWAYS = ("attrs", "mt", "ir", "external", "human")


@dataclass(frozen=True, eq=False)
class RunResults(_Record):
    """A run's results.json as a record. ``systems`` holds :class:`SystemResult` records; the other blocks
    are results.json's own (lists and dicts as written), so ``.verdicts``, ``.correlations`` and
    ``.item_level`` equal the file's blocks. ``out`` is the directory it was read from (not written)."""

    name: str
    systems: dict[str, SystemResult]
    correlations: list[dict[str, Any]] = field(default_factory=list)
    comparisons: list[dict[str, Any]] = field(default_factory=list)
    verdicts: list[dict[str, Any]] = field(default_factory=list)
    confounds: list[dict[str, Any]] | None = None
    english: dict[str, Any] | None = None
    score_kinds: dict[str, list[str]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    signature: dict[str, Any] = field(default_factory=dict)
    config: dict[str, Any] = field(default_factory=dict)
    analyses: dict[str, Any] | None = None
    item_level: dict[str, Any] | None = None
    item_segments: dict[str, Any] | None = None
    timing: dict[str, float] = field(default_factory=dict)
    direction: dict[str, Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    out: Path | None = field(default=None, compare=False, repr=False)
    ALWAYS = ("name", "systems", "correlations", "comparisons", "verdicts", "english", "score_kinds", "notes",
              "signature", "config", "timing")

    def __post_init__(self) -> None:
        systems = self.systems
        if any(not isinstance(s, SystemResult) for s in systems.values()):
            object.__setattr__(self, "systems", {n: s if isinstance(s, SystemResult) else SystemResult.from_dict(s)
                                                 for n, s in systems.items()})

    def to_json(self) -> str:
        """results.json's text."""
        return json.dumps(self.to_dict(), indent=1, ensure_ascii=False) + "\n"

    def __repr__(self) -> str:
        return (f"Results({str(self.out)!r}: {len(self.systems)} systems, {len(self.correlations)} correlations, "
                f"{len(self.verdicts)} verdicts)")

    def to_pandas(self, block: str = "correlations"):
        """A pandas DataFrame of ``correlations``, ``verdicts`` (one row per pairwise test), ``systems``
        (one row per system, a column per score) or ``item_level`` (its correlation rows). pandas is
        not a dependency of clir_eval: install it to use this."""
        try:
            pd = lazylibs.pandas()
        except ImportError:
            raise ImportError("to_pandas() needs pandas, which clir_eval does not install: pip install pandas") from None
        if block == "correlations":
            return pd.DataFrame(self.correlations)
        if block == "verdicts":
            return pd.DataFrame([{"target": v["target"], **p} for v in self.verdicts for p in v.get("pairwise", [])])
        if block == "systems":
            return pd.DataFrame.from_dict({s: {**r.mt, **r.ir, **r.human} for s, r in self.systems.items()},
                                          orient="index")
        if block == "item_level":
            return pd.DataFrame((self.item_level or {}).get("correlations", []))
        raise ValueError(f"unknown block {block!r}; use correlations, verdicts, systems or item_level")


def load_results(out_dir: str | Path) -> RunResults:
    """``out_dir/results.json`` (checked as :func:`read_results` checks it) as a :class:`RunResults`."""
    return RunResults.from_dict(read_results(out_dir), out=Path(out_dir))
