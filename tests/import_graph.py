"""The import graph of cvxdp, read from the source with ``ast``: the one walker every layout test
uses (``tests/test_layout.py``, ``tests/test_import_cycles.py``, ``tests/geometry/test_layout.py``,
``tests/privacy/test_privacy_layout.py``).

Every ``import`` / ``from ... import`` counts, at module level or inside a function or method (a
deferred import is still a dependency, the usual way to hide a circle), except under
``if TYPE_CHECKING:`` (never executed; annotations only).  Relative imports are resolved against
the importing module's package.  An imported name is an edge to the longest module of the graph
it names (``from cvxdp.privacy.budgets import ZCDP`` is an edge to ``cvxdp.privacy.budgets``;
``from cvxdp.solvers import mwu`` to ``cvxdp.solvers.mwu``; ``import cvxdp.a.b`` to ``cvxdp.a.b``).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import cvxdp

ROOT = Path(cvxdp.__file__).parent


def module_sources(root: Path = ROOT, package: str = "cvxdp") -> dict[str, str]:
    """``{dotted module name: source}`` of every module under ``root`` (a package's name is
    that of its ``__init__.py``)."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        parts = path.relative_to(root).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join((package, *parts))] = path.read_text()
    return out


def package_names(root: Path = ROOT, package: str = "cvxdp") -> frozenset[str]:
    """The dotted names under ``root`` that are packages (for relative imports)."""
    return frozenset(".".join((package, *p.parent.relative_to(root).parts))
                     for p in root.rglob("__init__.py") if "__pycache__" not in p.parts)


def _type_checking_only(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _import_nodes(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Import nodes anywhere in ``tree`` except under ``if TYPE_CHECKING:``."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and _type_checking_only(node):
            stack.extend(node.orelse)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        stack.extend(ast.iter_child_nodes(node))


def imports(source: str, name: str, is_package: bool = False) -> list[tuple[str, str | None]]:
    """What module ``name`` imports: ``(module, None)`` for ``import module`` and
    ``(module, attr)`` for ``from module import attr`` (relative modules resolved)."""
    out: list[tuple[str, str | None]] = []
    for node in _import_nodes(ast.parse(source)):
        if isinstance(node, ast.Import):
            out.extend((alias.name, None) for alias in node.names)
            continue
        base = node.module or ""
        if node.level:     # relative: against the importing module's package
            parts = name.split(".") + ([""] if is_package else [])
            base = ".".join([*parts[: -node.level], *([base] if base else [])])
        out.extend((base, alias.name) for alias in node.names)
    return out


def import_graph(sources: dict[str, str], packages: frozenset[str] = frozenset()
                 ) -> dict[str, set[str]]:
    """Edges ``module -> imported module`` among the modules of ``sources``: ``from a import b``
    is an edge to the module ``a.b`` when there is one, else to ``a``."""

    def resolve(dotted: str) -> str | None:
        while dotted and dotted not in sources:
            dotted = dotted.rpartition(".")[0]
        return dotted or None

    graph: dict[str, set[str]] = {name: set() for name in sources}
    for name, source in sources.items():
        for module, attr in imports(source, name, name in packages):
            full = f"{module}.{attr}" if attr is not None else module
            target = full if full in sources else resolve(module)
            if target is not None and target != name:
                graph[name].add(target)
    return graph


@cache
def package_graph() -> dict[str, frozenset[str]]:
    """The import graph of every module of cvxdp (read once per test session)."""
    graph = import_graph(module_sources(), package_names())
    return {name: frozenset(deps) for name, deps in graph.items()}


def find_cycle(graph: dict[str, set[str]] | dict[str, frozenset[str]]) -> list[str] | None:
    """One cycle of ``graph`` as a list of nodes (first == last), or None."""
    colour = dict.fromkeys(graph, 0)   # 0 new, 1 on the stack, 2 done
    path: list[str] = []

    def visit(u: str) -> list[str] | None:
        colour[u] = 1
        path.append(u)
        for v in sorted(graph[u]):
            if colour.get(v, 2) == 1:
                return path[path.index(v):] + [v]
            if colour.get(v) == 0 and (found := visit(v)):
                return found
        colour[u] = 2
        path.pop()
        return None

    for node in sorted(graph):
        if colour[node] == 0 and (found := visit(node)):
            return found
    return None
