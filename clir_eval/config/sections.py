"""Reading a YAML config: a mapping with its YAML path (:class:`Section`, which pops known keys, checks
types and bounds and rejects unknown keys) and the file's context (:class:`Loader`: the config's path and
directory, ``${VAR}``/``${DATA_ROOT}`` expansion, paths relative to the config file)."""

from __future__ import annotations

import math
import os
import re
from dataclasses import MISSING, fields
from pathlib import Path
from typing import Any

from ..errors import UserError
from ..params import split_list
from ..settings import SettingError, Settings, check_value, default, element_type, field_type, rules

_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


# --------------------------------------------------------------------------- validation helpers
class Section:
    """A YAML mapping with its path; pops known keys and rejects the rest."""

    def __init__(self, data: Any, where: str, cfg: "Loader"):
        if data is None:
            data = {}
        if not isinstance(data, dict):
            raise UserError(f"{cfg.path}: {where or 'top level'}: expected a mapping, got {type(data).__name__}")
        self.data = dict(data)
        self.where = where
        self.cfg = cfg

    def _p(self, key: str) -> str:
        """The YAML path of ``key`` (empty: of the section itself)."""
        return f"{self.where}.{key}" if self.where and key else (key or self.where or "top level")

    def err(self, key: str, msg: str) -> UserError:
        return UserError(f"{self.cfg.path}: {self._p(key)}: {msg}")

    def has(self, key: str) -> bool:
        return key in self.data

    def raw(self, key: str, default: Any = None) -> Any:
        return self.data.pop(key, default)

    # Type readers only: what a value may be (bounds, choices) is declared once, on the settings
    # record's field (clir_eval.settings.setting), and checked when the record is made.
    def str(self, key: str, default: Any = None, *, required: bool = False):
        if key not in self.data:
            if required:
                raise self.err(key, "missing; this field is required")
            return default
        v = self.data.pop(key)
        if v is None:
            return default
        if isinstance(v, bool) or not isinstance(v, (str, int, float)):
            raise self.err(key, f"expected a string, got {type(v).__name__}")
        return str(v)

    def int(self, key: str, default: Any = None):
        v = self.data.pop(key, None)
        if v is None:
            return default
        if isinstance(v, bool) or not isinstance(v, int):
            raise self.err(key, f"expected an integer, got {v!r}")
        return v

    def float(self, key: str, default: Any = None):
        v = self.data.pop(key, None)
        if v is None:
            return default
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise self.err(key, f"expected a number, got {v!r}")
        if not math.isfinite(v):
            raise self.err(key, f"expected a finite number, got {v!r}")
        return float(v)

    def bool(self, key: str, default: bool = False) -> bool:
        if key not in self.data:
            return default
        v = self.data.pop(key)
        if not isinstance(v, bool):
            raise self.err(key, f"expected true or false, got {v!r}")
        return v

    def str_list(self, key: str, default: tuple[str, ...] = (), *, nonempty: str | None = None) -> tuple[str, ...]:
        """A list of strings (or one comma-separated string); ``nonempty`` names what the list
        holds when an empty list is an error (e.g. "metric")."""
        v = self.data.pop(key, None)
        if v is None:
            return default
        if isinstance(v, str):
            out = tuple(split_list(v))
        elif not isinstance(v, list) or not all(isinstance(x, (str, int, float)) and not isinstance(x, bool) for x in v):
            raise self.err(key, "expected a list of strings")
        else:
            out = tuple(str(x) for x in v)
        if nonempty and not out:
            raise self.err(key, f"an empty list; name at least one {nonempty} (or leave the key out for the defaults)")
        return out

    def section(self, key: str) -> "Section | None":
        v = self.data.pop(key, None)
        return None if v is None else Section(v, self._p(key), self.cfg)

    def settings(self, cls: type, *, rest: bool = False, **given: Any) -> Any:
        """The whole section as the settings record ``cls``: each declared field read with its type (absent
        or null: the record's default; a field holding a record: the sub-section read the same way), the
        ``given`` values (already read, e.g. resolved paths) as they are; an unknown key (unless ``rest``:
        keys the caller reads itself), or a value the record refuses, is an error naming the field as the
        YAML spells it (its ``yaml`` metadata, else its name)."""
        values = {k: v for k, v in given.items() if v is not None}
        for f in fields(cls):
            name = f.name
            if name in rules(cls) and name not in given:
                v = self._typed(cls, name) if self.has(name) else None
                if v is not None:
                    values[name] = v
                elif f.default is MISSING and f.default_factory is MISSING:
                    help_text = rules(cls)[name].help.rstrip(".")
                    raise self.err(name, "missing; this field is required" + (f" ({help_text})" if help_text else ""))
        if not rest:
            self.done()
        try:
            return cls(**values)
        except SettingError as e:
            yaml_names = {f.name: f.metadata["yaml"] for f in fields(cls) if "yaml" in f.metadata}
            raise self.err(yaml_names.get(e.name, e.name), e.detail()) from None

    def setting(self, cls: type, name: str) -> Any:
        """One field of the settings record ``cls``, read with its type and checked against its declaration
        (absent or null: its default), for a value the loader needs before the record can be made (e.g. a
        format that decides how a path is resolved)."""
        v = self._typed(cls, name) if self.has(name) else None
        if v is None:
            return default(cls, name)
        try:
            return check_value(cls, name, v)
        except SettingError as e:
            raise self.err(name, e.detail()) from None

    def _typed(self, cls: type, name: str) -> Any:
        kind = field_type(cls, name)[0]
        if isinstance(kind, type) and issubclass(kind, Settings):
            sub = self.section(name)
            return None if sub is None else sub.settings(kind)
        if kind is tuple and element_type(cls, name) is not str:
            return self.raw(name)  # a list of numbers: the record checks it
        if kind is tuple:
            nonempty = next(f for f in fields(cls) if f.name == name).metadata.get("nonempty")
            return self.str_list(name, nonempty=nonempty)
        return {float: self.float, int: self.int, str: self.str, bool: self.bool}[kind](name)

    def done(self) -> None:
        if self.data:
            key = sorted(self.data)[0]
            raise self.err(key, "unknown key; check the spelling (see docs/reference/config.md or configs/demo.yaml)")


class Loader:
    def __init__(self, path: Path, data_root: str | None):
        self.path = path
        self.base = path.parent.resolve()
        self.data_root_override = data_root
        self.data_root: str | None = None
        self.notes: list[str] = []

    def expand(self, value: str, where: str) -> str:
        def sub(m: re.Match) -> str:
            var = m.group(1)
            if var == "DATA_ROOT":
                if self.data_root is None:
                    raise UserError(
                        f"{self.path}: {where}: uses ${{DATA_ROOT}} but no data root is set; "
                        "pass --data-root DIR, set CLIR_EVAL_DATA, or add data_root: to the config"
                    )
                return self.data_root
            if var not in os.environ:
                raise UserError(f"{self.path}: {where}: environment variable {var} is not set; export it or edit the path")
            return os.environ[var]

        return _VAR.sub(sub, value)

    def path_of(self, value: str, where: str, *, must_exist: bool = True, kind: str = "file") -> str:
        p = Path(self.expand(value, where)).expanduser()
        if not p.is_absolute():
            p = self.base / p
        p = Path(os.path.normpath(p))
        if must_exist:
            if not p.exists():
                raise UserError(f"{self.path}: {where}: {kind} not found: {p}")
            if kind == "file" and p.is_dir():
                raise UserError(f"{self.path}: {where}: {p} is a directory, expected a file")
            if kind == "file" and not p.is_file():
                raise UserError(f"{self.path}: {where}: {p} is not a regular file (a FIFO or device); "
                                "save the data to a file and give its path")
        return str(p)
