"""Settings records: frozen dataclasses whose fields declare their default, help text and bounds once.

A stage package declares its settings as one record (``retrieval.settings.RetrievalSettings``, ...)::

    @dataclass(frozen=True)
    class IndexSettings(Settings):
        k1: float = setting(1.5, "BM25 term saturation", gt=0, le=100)

Creating a record validates every field (type, bounds, choices) and then its cross-field rules
(:meth:`Settings.check`), raising :class:`SettingError`, which names the field. The YAML loader
(:mod:`clir_eval.config.sections`) and the CLI read the same declarations: the loader reports an error
as ``FILE: section.field: ...``, a command as ``--flag VALUE ...``; tasks embed the records, so the
cache key covers every field.
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Sequence

from .errors import UserError

_MISSING = dataclasses.MISSING


@dataclass(frozen=True)
class Rule:
    """What a field accepts (kept in the field's metadata under ``"setting"``)."""

    help: str
    ge: float | None = None
    gt: float | None = None
    le: float | None = None
    choices: tuple[str, ...] = ()
    label: str = ""  # what a value is, for "unknown LABEL 'x'" (choices only)
    finite: bool = True
    lt: float | None = None

    def text(self, kind: type) -> str:
        """The accepted values in words (``> 0 and <= 100``, ``in [0, 1]``, ``a positive integer <= 1000``)."""
        if self.choices:
            return "one of " + ", ".join(self.choices)
        if kind is int and self.ge == 1 and self.gt is None:
            return "a positive integer" + (f" <= {_num(self.le)}" if self.le is not None else "")
        if kind is float and self.ge is not None and self.le is not None and self.gt is None:
            return f"in [{_num(self.ge)}, {_num(self.le)}]"
        if kind is float and self.gt is not None and self.lt is not None and self.ge is None and self.le is None:
            return f"strictly between {_num(self.gt)} and {_num(self.lt)}"
        parts = [f"> {_num(self.gt)}" if self.gt is not None else "", f">= {_num(self.ge)}" if self.ge is not None else "",
                 f"< {_num(self.lt)}" if self.lt is not None else "", f"<= {_num(self.le)}" if self.le is not None else ""]
        return " and ".join(p for p in parts if p) or ("a finite number" if kind is float else "valid")


def _num(v: float | None) -> str:
    return str(int(v)) if v is not None and float(v).is_integer() else str(v)


def setting(default: Any = _MISSING, help: str = "", *, ge: float | None = None, gt: float | None = None,
            le: float | None = None, lt: float | None = None, choices: Sequence[str] = (), label: str = "",
            finite: bool = True, default_factory: Callable[[], Any] | None = None, **metadata: Any) -> Any:
    """A settings field: its default, its help text and what it accepts."""
    meta = {"setting": Rule(help, ge, gt, le, tuple(choices), label, finite, lt), **metadata}
    if default_factory is not None:
        return dataclasses.field(default_factory=default_factory, metadata=meta)
    return dataclasses.field(default=default, metadata=meta)


class SettingError(UserError):
    """A settings field with a value it does not accept (``name`` empty: the record as a whole). ``str()`` is ``message``, else ``name=value must be ...``
    (or the reason alone when it names the value: ``shows_value``); :meth:`detail` is the text after a field's name."""

    def __init__(self, name: str, value: Any, reason: str, *, shows_value: bool = False, message: str = ""):
        self.name, self.value, self.reason, self.shows_value = name, value, reason, shows_value
        super().__init__(message or (reason if shows_value else f"{name}={value!r} {reason}"))

    def detail(self) -> str:
        """``must be > 0, got 0.0`` (what follows ``FILE: section.name:`` or ``--flag``)."""
        return self.reason if self.shows_value else f"{self.reason}, got {self.value!r}"


def field_type(cls: type, name: str) -> tuple[type, bool]:
    """(the field's base type, whether it may be None); tuples give ``tuple``."""
    tp = typing.get_type_hints(cls)[name]
    optional = False
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        optional = len(args) < len(typing.get_args(tp))
        tp = args[0]
    return (typing.get_origin(tp) or tp), optional


def element_type(cls: type, name: str) -> Any:
    """The type of the items of a tuple field (``tuple[int, ...]`` gives ``int``)."""
    tp = typing.get_type_hints(cls)[name]
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        tp = next(a for a in typing.get_args(tp) if a is not type(None))
    args = typing.get_args(tp)
    return args[0] if args else Any


def rules(cls: type) -> dict[str, Rule]:
    """The declared fields of a settings record, in order."""
    return {f.name: f.metadata["setting"] for f in dataclasses.fields(cls) if "setting" in f.metadata}


def rule_text(cls: type, name: str) -> str:
    return rules(cls)[name].text(field_type(cls, name)[0])


def same_as(cls: type, name: str) -> Any:
    """A dataclass field declared as field ``name`` of the settings record ``cls`` (the same default, help and
    bounds), for a record that holds the value flat (the config's top-level keys)."""
    f = next(f for f in dataclasses.fields(cls) if f.name == name)
    if f.default_factory is not _MISSING:
        return dataclasses.field(default_factory=f.default_factory, metadata=f.metadata)
    return dataclasses.field(default=f.default, metadata=f.metadata)


def like(cls: type, name: str, default: Any, help: str, **changes: Any) -> Any:
    """A field accepting what field ``name`` of ``cls`` accepts (its bounds and choices, unless ``changes``
    replaces some), with another default and help: a command's own default for a setting, declared beside it."""
    f = next(f for f in dataclasses.fields(cls) if f.name == name)
    rule = dataclasses.replace(f.metadata["setting"], help=help, **changes)
    return dataclasses.field(default=default, metadata={**f.metadata, "setting": rule})


def default(cls: type, name: str) -> Any:
    f = next(f for f in dataclasses.fields(cls) if f.name == name)
    return f.default_factory() if f.default_factory is not _MISSING else f.default


class Settings:
    """Base of the settings records: validation on creation (types, bounds, choices, then :meth:`check`)."""

    def __post_init__(self) -> None:
        for name, rule in rules(type(self)).items():
            object.__setattr__(self, name, _valid(type(self), name, rule, getattr(self, name)))
        self.check()

    def check(self) -> None:
        """Cross-field rules and derived defaults (raise :class:`SettingError`)."""

    def set(self, name: str, value: Any) -> None:
        """Fill a derived default while checking (records are frozen once created)."""
        object.__setattr__(self, name, value)


def check_value(cls: type, name: str, value: Any) -> Any:
    """``value`` checked against the declaration of field ``name`` of ``cls`` (type, bounds, choices), as
    creating the record would check it (its cross-field rules aside); raises :class:`SettingError`."""
    return _valid(cls, name, rules(cls)[name], value)


def _valid(cls: type, name: str, rule: Rule, value: Any) -> Any:
    kind, optional = field_type(cls, name)
    if value is None:
        if optional:
            return None
        raise SettingError(name, value, "must be set")
    if kind is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or (rule.finite and not math.isfinite(value)):
            raise SettingError(name, value, "must be a finite number")
        value = float(value)
    elif kind is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise SettingError(name, value, "must be an integer")
    elif kind is bool:
        if not isinstance(value, bool):
            raise SettingError(name, value, "must be true or false")
    elif kind is str:
        if not isinstance(value, str):
            raise SettingError(name, value, "must be a string")
        if rule.choices and value not in rule.choices:
            what = f"unknown {rule.label} {value!r}; choose" if rule.label else f"{value!r} is not valid; choose"
            raise SettingError(name, value, f"{what} one of {', '.join(rule.choices)}", shows_value=True)
    elif kind is tuple:
        if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Iterable):
            raise SettingError(name, value, "must be a list")
        value = tuple(value)
    if kind in (int, float) and not in_bounds(value, rule):
        if kind is int and rule.le is not None and value > rule.le and in_bounds(value, dataclasses.replace(rule, le=None)):
            raise SettingError(name, value, f"{value} is too large; the maximum is {_num(rule.le)}", shows_value=True)
        raise SettingError(name, value, "must be " + rule.text(kind))
    return value


def in_bounds(v: float, r: Rule) -> bool:
    """Whether ``v`` is within the rule's bounds (its choices aside)."""
    return ((r.ge is None or v >= r.ge) and (r.gt is None or v > r.gt) and (r.le is None or v <= r.le)
            and (r.lt is None or v < r.lt))
