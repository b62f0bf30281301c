"""Layout of ``cvxdp.solvers`` (issue 22 item 8): two families in two subpackages, no import circle.

The import graph is read from the source with ``ast``: every ``import`` / ``from ... import`` of a
``cvxdp.solvers`` module counts, at module level or inside a function (a lazy import is still a
dependency, and the circles this layout removes were lazy ones), except under
``if TYPE_CHECKING:`` (never executed).  Every module of ``cvxdp`` must also import.
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
from pathlib import Path

import pytest

import cvxdp

ROOT = Path(cvxdp.__file__).parent
SOLVERS = ROOT / "solvers"

MWU = {"mwu", "mwu_form", "private_scp", "oracles", "solve", "loop", "loop_exp", "loop_numba",
       "schedule", "objective_release", "objective_search", "loop_adaptive"}
COVERING = {"dense_mwu", "bingham", "covering", "covering_domain", "covering_model",
            "covering_private", "covering_instances", "covering_schedule"}
OLD = ["general", "mwu_form", "private_scp", "oracles", "dense_mwu", "bingham",
       "covering_model", "covering_private", "covering_instances"]


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST, package: str) -> set[str]:
    """Dotted names of the modules (or module attributes) imported anywhere in ``tree``."""
    out: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            out.add(mod)
            out.update(f"{mod}.{a.name}" for a in node.names)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return out


def solver_import_graph() -> dict[str, set[str]]:
    """``module -> cvxdp.solvers modules it imports`` over every module of cvxdp.solvers."""
    files = {_module_name(p): p for p in SOLVERS.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        deps = {d for d in _imports(ast.parse(path.read_text()), package) if d in files}
        graph[name] = deps - {name}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle of ``graph`` (as a list of modules), or None."""
    colour: dict[str, int] = {}
    stack: list[str] = []

    def dfs(u: str) -> list[str] | None:
        colour[u] = 1
        stack.append(u)
        for v in sorted(graph.get(u, ())):
            if colour.get(v) == 1:
                return stack[stack.index(v):] + [v]
            if colour.get(v) is None:
                found = dfs(v)
                if found:
                    return found
        stack.pop()
        colour[u] = 2
        return None

    for u in sorted(graph):
        if colour.get(u) is None:
            found = dfs(u)
            if found:
                return found
    return None


def test_the_cycle_finder_finds_a_lazy_circle():
    src = "def f():\n    from cvxdp.solvers.b import g\n"
    deps = _imports(ast.parse(src), "cvxdp.solvers")
    assert "cvxdp.solvers.b" in deps
    tc = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from cvxdp.solvers.b import g\n"
    assert "cvxdp.solvers.b" not in _imports(ast.parse(tc), "cvxdp.solvers")
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert find_cycle(graph) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_no_import_circle_among_solver_modules():
    graph = solver_import_graph()
    # the graph sees the modules that used to import each other
    assert "cvxdp.solvers.public_part" in graph["cvxdp.solvers.mwu.mwu_form"]
    assert "cvxdp.solvers.covering.covering" in graph["cvxdp.solvers.covering.covering_model"]
    assert find_cycle(graph) is None, find_cycle(graph)


def test_public_part_imports_neither_family_back():
    graph = solver_import_graph()
    deps = graph["cvxdp.solvers.public_part"]
    assert not {d for d in deps if d.startswith("cvxdp.solvers.covering")}
    assert deps <= {"cvxdp.solvers.mwu.mwu"}  # the svec index only
    assert "cvxdp.solvers.mwu.solve" not in graph["cvxdp.solvers.covering.covering_model"]


def test_two_subpackages_hold_the_two_families():
    for sub, members in (("mwu", MWU), ("covering", COVERING)):
        assert (SOLVERS / sub / "__init__.py").is_file()
        assert {p.stem for p in (SOLVERS / sub).glob("*.py")} - {"__init__"} == members
    for old in OLD:  # no module (or shim) left at the old flat path
        assert not (SOLVERS / f"{old}.py").exists(), old


@pytest.mark.parametrize("name", sorted(
    m.name for m in pkgutil.walk_packages(cvxdp.__path__, "cvxdp.")))
def test_every_module_imports(name):
    try:
        importlib.import_module(name)
    except ImportError as err:  # an optional extra (dask, matplotlib, ...) is not a layout error
        if err.name is None or err.name.startswith("cvxdp"):
            raise
        pytest.skip(f"optional dependency missing: {err.name}")
