"""The package's modules import each other without cycles: every import counts (module level, inside
functions, under ``TYPE_CHECKING``), so a function-level import cannot hide a cycle."""

from __future__ import annotations

import ast
from pathlib import Path

import clir_eval

ROOT = Path(clir_eval.__file__).parent


def module_files(root: Path, package: str) -> dict[str, Path]:
    """Dotted module name -> file, for every .py file under ``root`` (packages named by their __init__)."""
    out = {}
    for p in sorted(root.rglob("*.py")):
        parts = [package, *p.relative_to(root).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = p
    return out


def _targets(module: str, is_package: bool, node: ast.Import | ast.ImportFrom, modules: dict[str, Path]) -> list[str]:
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    else:
        here = module.split(".") if is_package else module.split(".")[:-1]
        base = here[:len(here) - node.level + 1] if node.level else []
        start = ".".join(base + ([node.module] if node.module else []))
        names = [f"{start}.{a.name}" if f"{start}.{a.name}" in modules else start for a in node.names]
    out = []
    for name in names:
        while name not in modules and "." in name:  # `import pkg.mod.attr` -> the module that holds it
            name = name.rsplit(".", 1)[0]
        if name in modules and name != module:
            out.append(name)
    return out


def import_graph(root: Path, package: str) -> dict[str, dict[str, int]]:
    """module -> {imported module: line of the first import}, every import statement of the file."""
    modules = module_files(root, package)
    graph: dict[str, dict[str, int]] = {}
    for name, path in modules.items():
        edges = graph.setdefault(name, {})
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for t in _targets(name, path.name == "__init__.py", node, modules):
                    edges.setdefault(t, node.lineno)
    return graph


def cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """One cycle (a path returning to its start) per strongly connected component with more than one module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, {})):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(_path(graph, set(comp), min(comp)))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def _path(graph: dict[str, dict[str, int]], comp: set[str], start: str) -> list[str]:
    """A shortest cycle through ``start`` inside one component (breadth-first)."""
    prev = {start: ""}
    todo = [start]
    while todo:
        v = todo.pop(0)
        for w in sorted(graph[v]):
            if w == start:
                path = [v]
                while prev[path[-1]]:
                    path.append(prev[path[-1]])
                return [start, *reversed(path[:-1]), start] if len(path) > 1 else [start, v, start]
            if w in comp and w not in prev:
                prev[w] = v
                todo.append(w)
    raise AssertionError(f"no cycle through {start}")


def _describe(graph: dict[str, dict[str, int]], cycle: list[str]) -> str:
    return " -> ".join(f"{a} (line {graph[a][b]})" for a, b in zip(cycle, cycle[1:])) + f" -> {cycle[-1]}"


def test_no_import_cycle_between_modules():
    graph = import_graph(ROOT, "clir_eval")
    assert len(graph) > 50  # the walk found the package
    found = cycles(graph)
    assert not found, "import cycles (move the shared piece into a lower module):\n" + "\n".join(
        _describe(graph, c) for c in found)


def test_a_function_level_import_closing_a_cycle_is_found(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from .sub import b\n")
    (pkg / "sub" / "b.py").write_text("import pkg.c\n")
    (pkg / "c.py").write_text("def f():\n    from . import a\n    return a\n")
    (pkg / "d.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .a import x\n")
    graph = import_graph(pkg, "pkg")
    assert graph["pkg.d"] == {"pkg.a": 3}
    assert cycles(graph) == [["pkg.a", "pkg.sub.b", "pkg.c", "pkg.a"]]
    (pkg / "c.py").write_text("def f():\n    return 1\n")
    assert cycles(import_graph(pkg, "pkg")) == []
