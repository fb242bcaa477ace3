"""The import graph of a package, read from its source (nothing is imported), for the
architecture tests: which modules each module imports, and the circles among them.

Two kinds of edge, kept apart:

* *module-level* imports, run when the module is loaded — those at the top of the file and
  those under ``if TYPE_CHECKING:``. A type-only import is still a dependency: the module
  cannot be read, checked or moved without the other one, and a circle of them is the
  circle the issue names (``server.app`` <-> ``server.local``). They make the cycle check.
* *every* import, function bodies included: a deferred import (``from x import y`` inside a
  function, to keep start-up fast) still depends on its module. They make the layer check,
  so a deferred import can never run back up a layer.

``from pkg import name`` names the module ``pkg.name`` when there is one, else ``pkg``.
``from cairn import __version__`` is the version constant, not the public API the package
root re-exports, and is not an edge.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from pathlib import Path

Graph = dict[str, set[str]]


def module_name(path: Path, root: Path) -> str:
    """``root`` is the folder holding the top package (``src``)."""
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(p for p in parts if p != "__init__")


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _targets(node: ast.Import | ast.ImportFrom, here: str, known: set[str]) -> set[str]:
    if isinstance(node, ast.Import):
        return {alias.name for alias in node.names}
    if node.level:  # relative (cairn has none; read as from a module, not a package)
        base = here.split(".")[: -node.level]
        module = ".".join([*base, *([node.module] if node.module else [])])
    else:
        module = node.module or ""
    if module == "cairn" and all(a.name == "__version__" for a in node.names):
        return set()
    return {f"{module}.{a.name}" if f"{module}.{a.name}" in known else module for a in node.names}


def module_level_imports(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    """Imports run when the module loads, and those under ``if TYPE_CHECKING:``."""
    found: list[ast.Import | ast.ImportFrom] = []

    def visit(body: Iterable[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.Import | ast.ImportFrom):
                found.append(node)
            elif isinstance(node, ast.If):
                visit(node.body)
                visit(node.orelse)
            elif isinstance(node, ast.Try):
                visit(node.body)
                for handler in node.handlers:
                    visit(handler.body)
                visit(node.orelse)
                visit(node.finalbody)

    visit(tree.body)
    return found


def every_import(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.Import | ast.ImportFrom)]


def graphs(sources: Mapping[str, str], prefix: str) -> tuple[Graph, Graph]:
    """(module-level graph, every-import graph) of modules by name -> source text; only
    edges to modules whose name starts with ``prefix`` (and that exist) are kept."""
    known = set(sources)
    top: Graph = {}
    every: Graph = {}
    for name, text in sources.items():
        tree = ast.parse(text)
        for graph, nodes in ((top, module_level_imports(tree)), (every, every_import(tree))):
            edges = graph.setdefault(name, set())
            for node in nodes:
                for target in _targets(node, name, known):
                    if target.startswith(prefix) and target in known and target != name:
                        edges.add(target)
    return top, every


def package_sources(package: Path) -> dict[str, str]:
    return {
        module_name(path, package.parent): path.read_text(encoding="utf-8")
        for path in sorted(package.rglob("*.py"))
    }


def cycles(graph: Graph) -> list[list[str]]:
    """Every circle, as the sorted modules of each strongly connected component of more
    than one module (Tarjan's algorithm, iterative: the graph may be deep)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found)
