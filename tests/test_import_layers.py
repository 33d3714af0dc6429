"""The package's layers, highest first: a module imports only modules of its own layer or of lower
ones (every import counts, as in test_import_cycles.py: module level, inside functions, under
``TYPE_CHECKING``).

    api, cli            the Python API and the commands: parse, call, print
    pipeline            wiring: stages in order, tasks, cache, executors; validate (a dry run)
    sources             a config's inputs materialized (WMT, Europarl, demo, external tables)
    config              the YAML loader and the Config record
    report              results.json -> TSV, Markdown, HTML, LaTeX; pooling finished runs' results
    stages              mt, retrieval, ir, correlation: the field's computations; every package's
                        settings records (checked against the stages' registries)
    io                  file formats, atomic writes, checksums
    records             how a bounded setting or parameter is declared
    base                errors, limits, version, small pure helpers, lazylibs (slow libraries loaded on use)
"""

from __future__ import annotations

import pytest
from test_import_cycles import ROOT, import_graph

LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("api", ("clir_eval", "clir_eval.api", "clir_eval.__main__", "clir_eval.cli")),
    ("pipeline", ("clir_eval.pipeline", "clir_eval.sources.validate")),
    ("sources", ("clir_eval.sources",)),
    ("config", ("clir_eval.config",)),
    ("report", ("clir_eval.report", "clir_eval.pooling")),
    ("stages", ("clir_eval.mt", "clir_eval.retrieval", "clir_eval.ir", "clir_eval.correlation",
                "clir_eval.sources.irds", "*.settings")),
    ("io", ("clir_eval.io",)),
    ("records", ("clir_eval.settings", "clir_eval.params")),
    ("base", ("clir_eval.errors", "clir_eval.limits", "clir_eval.version", "clir_eval.stats", "clir_eval.templates",
              "clir_eval.lazylibs")),
]

# Known upward imports, each with the change that removes it. Keep this list short; never add to it
# to make a new import pass.
ALLOWED: dict[tuple[str, str], str] = {}


def layer_of(module: str) -> int:
    """The index of ``module``'s layer: the longest matching prefix wins; ``*.settings`` (any
    package's settings module) wins over its package's prefix, not over the module's own name."""
    best, rank = -1, None
    for i, (_, prefixes) in enumerate(LAYERS):
        for p in prefixes:
            if p.startswith("*"):
                hit = module.endswith(p[1:])
                size = len(module) - 0.5 if hit else -1
            else:  # the package itself (its facade) is named exactly; others hold their submodules
                hit = module == p or (p != "clir_eval" and module.startswith(p + "."))
                size = len(p) if hit else -1
            if hit and size > best:
                best, rank = size, i
    assert rank is not None, f"{module}: in no layer; add it to LAYERS"
    return rank


def upward_imports(graph: dict[str, dict[str, int]]) -> list[str]:
    out = []
    for a, edges in sorted(graph.items()):
        for b, line in sorted(edges.items()):
            if layer_of(b) < layer_of(a) and (a, b) not in ALLOWED:
                out.append(f"{a} (line {line}, layer {LAYERS[layer_of(a)][0]}) imports {b} "
                           f"(layer {LAYERS[layer_of(b)][0]})")
    return out


def test_no_module_imports_a_higher_layer():
    graph = import_graph(ROOT, "clir_eval")
    assert len(graph) > 50
    found = upward_imports(graph)
    assert not found, "imports from a lower layer to a higher one (move the shared piece down):\n" + "\n".join(found)


def test_every_allowed_exception_still_exists():
    graph = import_graph(ROOT, "clir_eval")
    stale = [f"{a} -> {b}" for a, b in ALLOWED if b not in graph.get(a, {})]
    assert not stale, f"no longer imported; remove from ALLOWED: {stale}"


def test_an_upward_import_is_found():
    graph = {"clir_eval.io.files": {"clir_eval.pipeline.run": 7}, "clir_eval.cli.run": {"clir_eval.io.files": 3},
             "clir_eval.mt.settings": {"clir_eval.correlation.settings": 10}}
    assert upward_imports(graph) == ["clir_eval.io.files (line 7, layer io) imports clir_eval.pipeline.run "
                                     "(layer pipeline)"]
    assert layer_of("clir_eval.sources.irds") == layer_of("clir_eval.mt.base")
    with pytest.raises(AssertionError, match="in no layer"):
        layer_of("clir_eval.newpackage.mod")
    assert layer_of("clir_eval.pipeline.settings") == layer_of("clir_eval.mt.base") < layer_of("clir_eval.settings")
