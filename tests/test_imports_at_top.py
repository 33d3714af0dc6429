"""Dependencies are visible where a module starts: every import is at the top of its module, except
the slow or optional third-party libraries, which are imported inside the functions of
``clir_eval/lazylibs.py`` only; no module imports another module's ``_private`` name; no function
is longer than 100 lines."""

from __future__ import annotations

import ast

from test_import_cycles import ROOT, module_files

LAZY = "clir_eval.lazylibs"  # the one module whose functions import (the slow libraries, on first use)

# Modules whose function-level imports are not checked yet, each with the change that moves them. Never add a
# module to make a new import pass.
PENDING: dict[str, str] = {}

# Private names still imported by another module, each with the change that makes it public. Never add one.
PRIVATE_ALLOWED: dict[tuple[str, str], str] = {}

# Function-level imports that stay, each with the reason: (module, imported module) -> why.
ALLOWED: dict[tuple[str, str], str] = {
    # the report package's facade stays light: re-rendering one section (report.verdicts, report.blocks)
    # must not load the HTML page's plots and statistics
    ("clir_eval.report", ".html"): "package facade: loads the renderers on use",
    ("clir_eval.report", ".tables"): "package facade: loads the renderers on use",
    ("clir_eval.report", ".tsv"): "package facade: loads the renderers on use",
    # a command's --help loads its module: these commands' modules load their stage (numpy and most of the
    # package, ~0.5 CPU-s) when the command runs, so that `run --help`, `validate --help`, `demo --help`,
    # `pool --help` and `retrieve --help` stay as fast as `clir-eval --help` (docs/performance.md)
    ("clir_eval.cli.run", "..config.load"): "run/validate --help stays light",
    ("clir_eval.cli.run", "..pipeline.run"): "run --help stays light",
    ("clir_eval.cli.options", "..report.tables"): "print_summary (run, demo): their --help stays light",
    ("clir_eval.cli.run", "..sources.validate"): "validate --help stays light",
    ("clir_eval.cli.demo", "..config.load"): "demo --help stays light",
    ("clir_eval.cli.demo", "..pipeline.run"): "demo --help stays light",
    ("clir_eval.cli.pool", "..pooling"): "pool --help stays light",
    ("clir_eval.cli.pool", "..pooling.report"): "pool --help stays light",
    ("clir_eval.cli.retrieve", "..retrieval.analysis"): "retrieve --help stays light",
    ("clir_eval.cli.retrieve", "..retrieval.bm25"): "retrieve --help stays light",
}

# Functions over the limit, each with the change that splits it. Never add a function to make it pass.
LONG_ALLOWED: dict[tuple[str, str], str] = {}
MAX_FUNCTION_LINES = 100


def _imported(node: ast.Import | ast.ImportFrom) -> str:
    if isinstance(node, ast.ImportFrom):
        return "." * node.level + (node.module or "")
    return ", ".join(a.name for a in node.names)


def function_imports(source: str) -> list[tuple[int, str]]:
    """(line, imported module) of every import statement inside a function (at any depth) of ``source``."""
    found = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if in_function and isinstance(child, (ast.Import, ast.ImportFrom)):
                found.append((child.lineno, _imported(child)))
            visit(child, in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))

    visit(ast.parse(source), False)
    return found


def private_imports(source: str) -> list[tuple[int, str]]:
    """(line, "module.name") of every ``from module import _name`` (a private name of another module;
    dunder names such as ``__version__`` are public)."""
    return [(n.lineno, f"{_imported(n)}.{a.name}") for n in ast.walk(ast.parse(source))
            if isinstance(n, ast.ImportFrom) for a in n.names
            if a.name.startswith("_") and not a.name.startswith("__")]


def long_functions(source: str, limit: int = MAX_FUNCTION_LINES) -> list[tuple[str, int]]:
    """(name, lines) of every function or method whose definition spans more than ``limit`` lines
    (from its ``def`` line to its last line, docstring included)."""
    return [(n.name, n.end_lineno - n.lineno + 1) for n in ast.walk(ast.parse(source))
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.end_lineno - n.lineno + 1 > limit]


def _pending(module: str) -> bool:
    return any(module == p or module.startswith(p + ".") for p in PENDING)


def _sources() -> dict[str, str]:
    files = module_files(ROOT, "clir_eval")
    assert len(files) > 50 and LAZY in files
    return {m: p.read_text(encoding="utf-8") for m, p in files.items()}


def test_imports_are_at_the_top_of_their_module():
    found = [f"{m}:{line} imports {what} inside a function" for m, src in _sources().items()
             if m != LAZY and not _pending(m) for line, what in function_imports(src) if (m, what) not in ALLOWED]
    assert not found, ("import at the top of the module; a slow or optional library through clir_eval.lazylibs "
                       "(add a function there):\n" + "\n".join(found))


def test_no_module_imports_a_private_name():
    found = [f"{m}:{line} imports {what}" for m, src in _sources().items() if not _pending(m)
             for line, what in private_imports(src) if (m, what) not in PRIVATE_ALLOWED]
    assert not found, "make the name public (rename it at every call site) or move the code:\n" + "\n".join(found)


def test_no_function_is_longer_than_the_limit():
    found = [f"{m}.{name}: {n} lines" for m, src in _sources().items() for name, n in long_functions(src)
             if (m, name) not in LONG_ALLOWED]
    assert not found, f"functions over {MAX_FUNCTION_LINES} lines (split them):\n" + "\n".join(found)


def test_every_exception_is_still_needed():
    sources = _sources()
    stale = [k for k in ALLOWED if k[1] not in {w for _, w in function_imports(sources[k[0]])}]
    stale += [k for k in PRIVATE_ALLOWED if k[1] not in {w for _, w in private_imports(sources[k[0]])}]
    stale += [k for k in LONG_ALLOWED if k[1] not in {name for name, _ in long_functions(sources[k[0]])}]
    assert not stale, f"no longer needed; remove from the lists: {stale}"


def test_the_lazy_module_only_imports_inside_its_functions():
    """lazylibs itself imports nothing slow at its top: its own top-level imports are the standard library's."""
    tree = ast.parse((ROOT / "lazylibs.py").read_text(encoding="utf-8"))
    top = [_imported(n) for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
    assert top and all(t.split(".")[0] in ("__future__", "types") for t in top), top
    assert len(function_imports((ROOT / "lazylibs.py").read_text(encoding="utf-8"))) >= 10


def test_the_checks_find_what_they_look_for():
    src = ("import os\nfrom .a import b\n\n\ndef f():\n    from .x import _y, z\n    import numpy as np\n"
           "    def g():\n        import json\n    return lambda: 1\n\n\nclass C:\n    def m(self):\n"
           "        from ..io import files\n" + "".join(f"        x{i} = {i}\n" for i in range(100)))
    assert function_imports(src) == [(6, ".x"), (7, "numpy"), (9, "json"), (15, "..io")]
    assert private_imports(src) == [(6, ".x._y")]
    assert private_imports("from .version import __version__\n") == []
    assert long_functions(src) == [("m", 102)]
    assert long_functions(src, limit=102) == []
