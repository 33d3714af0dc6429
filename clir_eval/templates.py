"""Name templates (``systems.name: "{lang}-{size}"``, file patterns): ``{attr}`` is replaced by
the attribute's value and ``{{`` / ``}}`` by a brace. Nothing else is interpreted: no format
specs (``{x:>99}``), attribute or index access (``{x.__class__}``, ``{x[0]}``), conversions."""

from __future__ import annotations

import re
from typing import Mapping

from .errors import UserError

_TOKEN = re.compile(r"\{\{|\}\}|\{([^{}]*)\}|[{}]")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def substitute(template: str, attrs: Mapping[str, str], where: str) -> str:
    """``template`` with each ``{name}`` replaced by ``attrs[name]``: a KeyError (as
    ``str.format`` gives) for a name not in ``attrs``, a UserError naming ``where`` for anything
    but a plain name between braces."""

    def repl(m: re.Match) -> str:
        tok = m.group(0)
        if tok in ("{{", "}}"):
            return tok[0]
        name = m.group(1)
        if name is None or not _NAME.fullmatch(name):
            shown = tok if name is None else "{" + name[:40] + ("..." if len(name) > 40 else "") + "}"
            raise UserError(
                f"{where}: template {template[:80]!r} has {shown!r}; a template takes attribute names only, "
                "e.g. '{lang}-{size}' (write '{{' or '}}' for a literal brace)"
            )
        return str(attrs[name])

    return _TOKEN.sub(repl, template)
