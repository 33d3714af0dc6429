"""Every default seed is one of the named seeds in clir_eval/limits.py (one name per meaning), never a
number written where a seed is declared: a function's ``seed=`` parameter, a record's ``seed`` field, a
command's ``--seed`` option."""

from __future__ import annotations

import ast

from test_import_cycles import ROOT, module_files
from test_imports_at_top import _pending as pending

from clir_eval import limits


def _literal(value: ast.expr | None) -> bool:
    """A number written as the default: ``13``, or a call given it positionally (``setting(13, ...)``)."""
    def number(e: ast.expr) -> bool:
        return isinstance(e, ast.Constant) and type(e.value) is int
    if value is None:
        return False
    return number(value) or (isinstance(value, ast.Call) and any(number(a) for a in value.args))


def literal_seeds(source: str) -> list[int]:
    """Lines where a seed's default is a written number."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            a = node.args
            pos = a.posonlyargs + a.args
            pairs = list(zip(pos[len(pos) - len(a.defaults):], a.defaults)) + list(zip(a.kwonlyargs, a.kw_defaults))
            found += [d.lineno for arg, d in pairs if "seed" in arg.arg.lower() and _literal(d)]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and "seed" in node.target.id.lower():
            found += [node.lineno] if _literal(node.value) else []
    return found


def test_default_seeds_are_named():
    files = module_files(ROOT, "clir_eval")
    found = [f"{p.relative_to(ROOT.parent)}:{line}" for m, p in files.items() if p.name != "limits.py"
             and not pending(m)  # modules other changes are editing now (tests/test_imports_at_top.py)
             for line in literal_seeds(p.read_text(encoding="utf-8"))]
    assert not found, "use a named seed of clir_eval/limits.py (RUN_SEED, TABLE_SEED, ...):\n" + "\n".join(found)


def test_the_check_finds_written_seeds():
    src = ("def f(x, seed=13, *, other_seed: int = 0, n=5): pass\n"
           "def g(seed: int = typer.Option(13, '--seed')): pass\n"
           "def h(seed=RUN_SEED, n=3): pass\n"
           "class R:\n    seed: int = setting(12345, 'help', ge=0)\n    n: int = 4\n"
           "    seed2: int = like(C, 'seed', TABLE_SEED, 'h')\n")
    assert literal_seeds(src) == [1, 1, 2, 5]


def test_the_named_seeds_keep_their_values():
    """Results are reproducible across versions: the defaults are the values every earlier result used."""
    assert (limits.RUN_SEED, limits.TABLE_SEED, limits.QUERY_SEED, limits.SACREBLEU_SEED) == (13, 0, 0, 12345)
