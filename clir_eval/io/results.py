"""results.json read back for ``clir-eval report``: parsed and its shape checked before
any report is rendered, so a bad file never overwrites good reports."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from ..errors import UserError

_FIX = "re-run the experiment ('clir-eval run CONFIG --out DIR') to write a complete one"


def _kind(v: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", type(None): "null"}.get(type(v), type(v).__name__)


def _number_map(where: str, v: Any, path: Path) -> None:
    if not isinstance(v, dict):
        raise UserError(f"{path}: {where} must be an object of score: number, found {_kind(v)}; {_FIX}")
    for k, x in v.items():
        if x is not None and (isinstance(x, bool) or not isinstance(x, (int, float))):
            raise UserError(f"{path}: {where}.{k} must be a number or null, found {_kind(x)}; {_FIX}")


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
        for part in ("mt", "ir"):
            _number_map(f"systems.{name}.{part}", entry.get(part, {}), path)
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
    from .files import read_text

    try:
        results = json.loads(read_text(path))
    except json.JSONDecodeError as e:
        raise UserError(f"{path}:{e.lineno}: not valid JSON ({e.msg}; truncated?); {_FIX}") from None
    return check_results(results, path)
