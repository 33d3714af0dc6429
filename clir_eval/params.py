"""Parsing of parameterised names used by the registries: ``name:key=value,key=value``.

``chrf:beta=1`` -> ("chrf", {"beta": "1"}). Values stay strings; each registry entry (MT metrics in
:mod:`clir_eval.mt.base`, IR measures in :mod:`clir_eval.ir.measures`) declares its parameters as
:class:`Param` records and :func:`parse_params` converts and validates them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from .errors import UserError
from .limits import MAX_PARAM_FLOAT, MAX_PARAM_INT
from .settings import Rule, in_bounds


def parse_spec(spec: str, *, what: str = "name") -> tuple[str, dict[str, str]]:
    """Split ``name:k=v,k=v`` into the name and a dict of raw parameter strings."""
    spec = spec.strip()
    if not spec:
        raise UserError(f"empty {what}; give e.g. 'bleu' or 'chrf:beta=1'")
    name, _, rest = spec.partition(":")
    name = name.strip()
    params: dict[str, str] = {}
    if rest.strip():
        for item in rest.split(","):
            key, eq, value = item.partition("=")
            key, value = key.strip(), value.strip()
            if not eq or not key or not value:
                raise UserError(
                    f"bad parameter {item!r} in {what} {spec!r}; write parameters as key=value, e.g. 'chrf:beta=1'"
                )
            if key in params:
                raise UserError(f"parameter {key!r} given twice in {what} {spec!r}")
            params[key] = value
    return name, params


def split_list(text: str) -> list[str]:
    """Split a comma list of specs where parameters may themselves contain commas.

    ``"bleu,chrf:beta=1,order=6,map"`` -> ["bleu", "chrf:beta=1,order=6", "map"]: an item
    that looks like ``key=value`` (no colon) continues the previous spec, and commas inside
    parentheses do not split (``"AQWV(beta=40,cutoff=10),AP"``).
    """
    out: list[str] = []
    depth = 0  # inside parentheses (``AQWV(beta=40,cutoff=10)``) a comma does not split
    for raw in text.split(","):
        item = raw.strip()
        if depth > 0 and out:
            out[-1] = f"{out[-1]},{item}"
        elif not item:
            continue
        elif out and "=" in item and ":" not in item and "(" not in item and ":" in out[-1]:
            out[-1] = f"{out[-1]},{item}"
        else:
            out.append(item)
        depth += raw.count("(") - raw.count(")")
    return out


_BOOL = {"1": True, "true": True, "yes": True, "0": False, "false": False, "no": False}


def coerce(value: str, typ: Callable[[str], Any], *, key: str, spec: str) -> Any:
    """Convert one raw parameter string, raising a UserError that names it."""
    try:
        if typ is bool:
            return _BOOL[value.lower()]
        return typ(value)
    except (KeyError, ValueError):
        tname = {"int": "an integer", "float": "a number", "bool": "true or false", "str": "a string"}.get(
            getattr(typ, "__name__", ""), getattr(typ, "__name__", str(typ)))
        raise UserError(f"parameter {key}={value!r} in {spec!r} must be {tname}") from None


def format_spec(name: str, params: dict[str, Any]) -> str:
    """Canonical string: ``name`` or ``name:k=v,...`` (parameters in the given order)."""
    if not params:
        return name
    return name + ":" + ",".join(f"{k}={_fmt(v)}" for k, v in params.items())


def _fmt(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float) and v.is_integer():
        return str(int(v)) if abs(v) < 1e15 else repr(v)
    return str(v)


@dataclass(frozen=True)
class Param:
    """A declared registry parameter: type, default and description, and what it accepts, declared
    with the words of a settings field (``ge``, ``gt``, ``le``, ``lt``, ``choices``: one
    :class:`clir_eval.settings.Rule` checks both and words the error); ``check``/``must`` only for a
    condition that is no bound (a non-empty path). An integer parameter without ``le`` is bounded by
    :data:`clir_eval.limits.MAX_PARAM_INT`, a float one by :data:`~clir_eval.limits.MAX_PARAM_FLOAT`, and
    a number must be finite, so no parameter can ask for unbounded time or memory."""

    name: str
    type: Callable[[str], Any]
    default: Any
    help: str = ""
    check: Callable[[Any], bool] | None = None
    must: str = ""
    ge: float | None = None
    gt: float | None = None
    le: float | None = None
    lt: float | None = None
    choices: tuple[str, ...] = ()

    @property
    def rule(self) -> Rule:
        """The parameter's bounds and choices as a settings field's rule."""
        return Rule(self.help, ge=self.ge, gt=self.gt, le=None, lt=self.lt, choices=tuple(self.choices))

    @property
    def bound(self) -> float | None:
        """The largest accepted value of a numeric parameter (None for other types)."""
        if self.type is int:
            return self.le if self.le is not None else MAX_PARAM_INT
        if self.type is float:
            return self.le if self.le is not None else MAX_PARAM_FLOAT
        return None


def parse_params(raw: Mapping[str, str], decl: Sequence[Param], *, spec: str, what: str,
                 owner: str) -> dict[str, Any]:
    """The given raw parameters converted and checked against ``decl`` (``what`` ``owner``: e.g.
    metric 'chrf', named in the errors); a key not declared is a UserError listing the declared ones.
    Only the given keys are returned, in the order given."""
    declared = {p.name: p for p in decl}
    out: dict[str, Any] = {}
    for key, value in raw.items():
        if key not in declared:
            known = ", ".join(declared) or "none"
            raise UserError(f"unknown parameter {key!r} for {what} {owner!r} in {spec!r}; its parameters: {known}")
        p = declared[key]
        v = coerce(value, p.type, key=key, spec=spec)
        if p.type is float and not math.isfinite(v):
            raise UserError(f"parameter {key}={value!r} in {what} {spec!r} must be a finite number")
        if p.bound is not None and v > p.bound:
            raise UserError(f"parameter {key}={value!r} in {what} {spec!r} is too large; the maximum is {_fmt(p.bound)}")
        if p.choices and v not in p.choices:
            raise UserError(f"parameter {key}={value!r} in {what} {spec!r} must be one of {', '.join(p.choices)}")
        if p.type in (int, float) and not in_bounds(v, p.rule):
            raise UserError(f"parameter {key}={value!r} in {what} {spec!r} must be {p.rule.text(p.type)}")
        if p.check is not None and not p.check(v):
            raise UserError(f"parameter {key}={value!r} in {what} {spec!r} must be {p.must}")
        out[key] = v
    return out
