"""Name templates (``systems.name: "{lang}-{size}"``, file patterns): ``{attr}`` is replaced by
the attribute's value, ``{attr:SPEC}`` by the value formatted with a string format spec of at
most :data:`MAX_WIDTH` characters' width (``{size:0>6}`` pads to 6), and ``{{`` / ``}}`` by a
brace. Nothing else is interpreted: no attribute or index access (``{x.__class__}``,
``{x[0]}``), conversions (``{x!r}``) or nested fields."""

from __future__ import annotations

import re
from typing import Mapping

from .errors import UserError

_TOKEN = re.compile(r"\{\{|\}\}|\{([^{}]*)\}|[{}]")
_FIELD = re.compile(r"(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?::(?P<spec>(?:.?[<>=^])?[-+ ]?#?0?(?P<width>[0-9]*)"
                    r"[,_]?(?:\.(?P<prec>[0-9]+))?[s]?))?")
MAX_WIDTH = 256  # a padded field may be this wide at most


def substitute(template: str, attrs: Mapping[str, str], where: str) -> str:
    """``template`` with each ``{name}`` replaced by ``attrs[name]``: a KeyError (as
    ``str.format`` gives) for a name not in ``attrs``, a UserError naming ``where`` for anything
    but a plain name between braces."""

    def repl(m: re.Match) -> str:
        tok = m.group(0)
        if tok in ("{{", "}}"):
            return tok[0]
        field = m.group(1)
        f = _FIELD.fullmatch(field) if field is not None else None
        too_wide = f is not None and any(len(g or "") > 3 or int(g or 0) > MAX_WIDTH for g in (f["width"], f["prec"]))
        if f is None or too_wide:
            shown = tok if field is None else "{" + field[:40] + ("..." if len(field) > 40 else "") + "}"
            rule = (f"a width of at most {MAX_WIDTH}" if too_wide else
                    "attribute names only, optionally with a padding spec")
            raise UserError(
                f"{where}: template {template[:80]!r} has {shown!r}; a template takes {rule}, "
                "e.g. '{lang}-{size:0>6}' (write '{{' or '}}' for a literal brace)"
            )
        value = str(attrs[f["name"]])
        try:
            return format(value, f["spec"]) if f["spec"] else value
        except ValueError as e:
            raise UserError(f"{where}: template {template[:80]!r}: bad format spec in {tok!r} ({e})") from None

    return _TOKEN.sub(repl, template)
