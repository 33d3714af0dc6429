"""YAML read safely: the safe loader (no code), a size bound on the text and on the node
count after alias expansion (so an alias bomb fails in milliseconds), no recursive aliases,
no key given twice in one mapping."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from ..errors import UserError
from ..limits import MAX_CONFIG_BYTES, MAX_YAML_NODES


def _expanded_size(root: yaml.Node, path: Path) -> int:
    """Nodes the document has once every alias is expanded (memoised, iterative)."""
    size: dict[int, int] = {}
    on_stack: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        if done:
            on_stack.discard(key)
            total = 1 + sum(size[id(c)] for c in _children(node))
            if total > MAX_YAML_NODES:
                line = node.start_mark.line + 1 if node.start_mark else 0
                raise UserError(
                    f"{path}:{line}: the YAML expands to more than {MAX_YAML_NODES} values (aliases * and anchors &); "
                    "write the values out or use fewer aliases"
                )
            size[key] = total
            continue
        if key in size:
            continue
        if key in on_stack:
            line = node.start_mark.line + 1 if node.start_mark else 0
            raise UserError(f"{path}:{line}: a YAML alias refers to its own anchor (recursive); remove the cycle")
        on_stack.add(key)
        if isinstance(node, yaml.MappingNode):
            _check_unique_keys(node, path)
        stack.append((node, True))
        for c in _children(node):
            if id(c) not in size:
                if id(c) in on_stack:
                    line = c.start_mark.line + 1 if c.start_mark else 0
                    raise UserError(f"{path}:{line}: a YAML alias refers to its own anchor (recursive); remove the cycle")
                stack.append((c, False))
    return size[id(root)]


def _check_unique_keys(node: yaml.MappingNode, path: Path) -> None:
    """A key given twice in one mapping is an error (YAML loaders silently keep the last)."""
    first: dict[tuple[str, str], int] = {}
    for k, _ in node.value:
        if not isinstance(k, yaml.ScalarNode) or k.tag == "tag:yaml.org,2002:merge":
            continue
        ident = (k.tag, k.value)
        line = k.start_mark.line + 1 if k.start_mark else 0
        if ident in first:
            raise UserError(f"{path}:{line}: the key {k.value!r} is given twice in one mapping (first on line "
                            f"{first[ident]}); keep one")
        first[ident] = line


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    return []


def load_yaml(text: str, path: str | Path) -> Any:
    """Parse one YAML document with the safe loader, within the size bounds."""
    path = Path(path)
    if len(text) > MAX_CONFIG_BYTES:
        raise UserError(f"{path}: {len(text)} characters is too large for a config; the maximum is {MAX_CONFIG_BYTES}")
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _expanded_size(node, path)
        return loader.construct_document(node)
    except RecursionError:
        raise UserError(f"{path}: the YAML is nested too deeply; flatten it") from None
    finally:
        loader.dispose()
