"""Layout of ``cvxdp.geometry``: two subpackages, and imports among its modules run one way.

The graph is ``tests/import_graph.py``'s: every ``import`` / ``from ... import`` of a
``cvxdp.geometry`` module, read with ``ast`` at module level and inside functions and methods (a
deferred import is still a dependency, the usual way to hide a circle), except those under
``if TYPE_CHECKING:`` (never executed; annotations only).  It must have no cycle.
"""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

import cvxdp.dask_backend
import cvxdp.geometry
from tests.import_graph import find_cycle, import_graph, module_sources

ROOT = Path(cvxdp.geometry.__file__).parent
PACKAGE = "cvxdp.geometry"

MEB = ["ball", "box", "exact", "goodcenter", "meb", "meb_index", "meb_inputs", "meb_kernels",
       "meb_levels", "meb_private", "meb_rows", "meb_solve"]
JOHN = ["core", "ellipsoid", "exact", "john", "john_args", "john_iter", "john_paper",
        "john_private", "john_select", "john_sensitivity", "private_iterate", "release",
        "uniform_release"]


@pytest.mark.parametrize("family, modules", [("meb", MEB), ("john", JOHN)])
def test_geometry_has_the_two_subpackages(family, modules):
    package = importlib.import_module(f"{PACKAGE}.{family}")
    assert hasattr(package, "__path__"), f"{PACKAGE}.{family} is not a package"
    found = sorted(p.stem for p in (ROOT / family).glob("*.py") if p.stem != "__init__")
    assert found == sorted(modules)
    for module in modules:
        importlib.import_module(f"{PACKAGE}.{family}.{module}")


def test_no_module_is_left_at_the_old_flat_paths():
    flat = sorted(p.name for p in ROOT.glob("*.py") if p.name != "__init__.py")
    assert flat == []


def test_no_import_cycle_among_geometry_modules():
    sources = module_sources(ROOT, PACKAGE)
    packages = frozenset(n for n in sources if (ROOT / Path(*n.split(".")[2:]) / "__init__.py")
                         .exists())
    assert packages == {PACKAGE, f"{PACKAGE}.meb", f"{PACKAGE}.john"}
    graph = import_graph(sources, packages)
    # the graph is read: the problem classes import their private pipelines (deferred)
    assert f"{PACKAGE}.meb.meb_solve" in graph[f"{PACKAGE}.meb.meb"]
    assert f"{PACKAGE}.john.john_private" in graph[f"{PACKAGE}.john.john"]
    assert find_cycle(graph) is None, " -> ".join(find_cycle(graph))


def test_no_import_cycle_between_geometry_and_its_dask_path():
    """Issue 24 item 5: the geometry solvers call their Dask implementations
    (``cvxdp.dask_backend.meb``, ``cvxdp.dask_backend.john``), which build on the numpy core
    (``meb.box``, ``meb.goodcenter``, ``meb.meb_kernels``, ``john.core``) and never on a module
    that calls back into ``cvxdp.dask_backend``: the joint graph has no cycle."""
    sources = module_sources(ROOT, PACKAGE)
    sources.update(module_sources(Path(cvxdp.dask_backend.__file__).parent, "cvxdp.dask_backend"))
    packages = frozenset({PACKAGE, f"{PACKAGE}.meb", f"{PACKAGE}.john", "cvxdp.dask_backend"})
    graph = import_graph(sources, packages)
    # the graph is read: both directions are there
    assert "cvxdp.dask_backend.meb" in graph[f"{PACKAGE}.meb.meb_solve"]
    assert f"{PACKAGE}.john.core" in graph["cvxdp.dask_backend.john"]
    assert f"{PACKAGE}.meb.box" in graph["cvxdp.dask_backend.meb"]
    assert find_cycle(graph) is None, " -> ".join(find_cycle(graph))


def test_the_check_finds_a_circle_hidden_in_a_function():
    """Positive control: the layout before this change (``meb`` imports ``meb_solve`` inside a
    method, ``meb_solve`` imports ``meb`` at module level) is reported as a cycle; a
    ``TYPE_CHECKING`` import is not."""
    sources = {
        f"{PACKAGE}.meb": "def solve_private(self):\n"
                          f"    from {PACKAGE}.meb_solve import solve_private_meb\n",
        f"{PACKAGE}.meb_solve": f"from {PACKAGE}.meb import Ball, reference_ball\n",
    }
    assert find_cycle(import_graph(sources)) == [f"{PACKAGE}.meb", f"{PACKAGE}.meb_solve",
                                                 f"{PACKAGE}.meb"]
    sources[f"{PACKAGE}.meb_solve"] = ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                                       f"    from {PACKAGE}.meb import MinEnclosingBall\n")
    assert find_cycle(import_graph(sources)) is None
