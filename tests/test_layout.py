"""Layout of the package, its tests and its map.

* ``cvxdp.solvers``: two families in two subpackages, no import circle (the import graph of
  ``tests/import_graph.py``: lazy imports count, the circles this layout removes were lazy ones).
  Every module of ``cvxdp`` must also import.
* The tests mirror the package: every subpackage ``cvxdp/X`` has its folder ``tests/X``, every
  test folder is a subpackage's (or holds shared helpers and no tests), and a test named after a
  subpackage (``test_<sub>_*.py``) lives in that subpackage's folder.
* ``docs/layout.md`` (the code map) names every module of ``cvxdp`` and only modules that exist.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from pathlib import Path

import pytest

import cvxdp
from tests.import_graph import find_cycle, import_graph, package_graph

ROOT = Path(cvxdp.__file__).parent
SOLVERS = ROOT / "solvers"
TESTS = Path(__file__).parent
CODE_MAP = ROOT.parent / "docs" / "layout.md"

#: Test folders that mirror no subpackage: shared helpers (CVXPY model builders), no tests.
HELPER_FOLDERS = {"models"}
#: Subpackages whose tests still sit in the parent's folder under a ``test_<sub>_`` prefix.  An
#: entry is removed when its folder is made (the check below fails while both exist).
NOT_YET_MIRRORED: set[str] = set()

MWU = {"mwu", "mwu_form", "private_scp", "oracles", "solve", "loop", "loop_exp", "loop_numba",
       "schedule", "objective_release", "objective_search", "loop_adaptive", "dual_bound"}
COVERING = {"dense_mwu", "bingham", "covering", "covering_domain", "covering_model",
            "covering_private", "covering_instances", "covering_schedule",
            "covering_certificate"}
OLD = ["general", "mwu_form", "private_scp", "oracles", "dense_mwu", "bingham",
       "covering_model", "covering_private", "covering_instances"]


def solver_import_graph() -> dict[str, set[str]]:
    """``module -> cvxdp.solvers modules it imports`` over every module of cvxdp.solvers."""
    graph = package_graph()
    return {name: {d for d in deps if d.startswith("cvxdp.solvers")}
            for name, deps in graph.items() if name.startswith("cvxdp.solvers")}


def test_the_cycle_finder_finds_a_lazy_circle():
    src = "def f():\n    from cvxdp.solvers.b import g\n"
    sources = {"cvxdp.solvers.a": src, "cvxdp.solvers.b": ""}
    assert import_graph(sources)["cvxdp.solvers.a"] == {"cvxdp.solvers.b"}
    tc = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from cvxdp.solvers.b import g\n"
    sources["cvxdp.solvers.a"] = tc
    assert import_graph(sources)["cvxdp.solvers.a"] == set()
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
    # the svec index, and bound propagation (a leaf: numpy and scipy only)
    assert deps <= {"cvxdp.solvers.mwu.mwu", "cvxdp.solvers.bound_propagation"}
    assert not {d for d in graph["cvxdp.solvers.bound_propagation"] if d.startswith("cvxdp")}
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


def _subpackages(root: Path) -> set[str]:
    """``a/b`` of every package under ``root`` (a folder with an ``__init__.py``)."""
    return {p.parent.relative_to(root).as_posix() for p in root.rglob("__init__.py")
            if p.parent != root and "__pycache__" not in p.parts}


def _test_folders(tests: Path) -> set[str]:
    """``a/b`` of every folder under ``tests`` that holds a Python file."""
    return {p.parent.relative_to(tests).as_posix() for p in tests.rglob("*.py")
            if p.parent != tests and "__pycache__" not in p.parts}


def mirror_problems(root: Path, tests: Path, helpers: set[str] = frozenset(),
                    pending: set[str] = frozenset()) -> list[str]:
    """What breaks the rule "tests mirror the package" (empty when it holds)."""
    packages, folders = _subpackages(root), _test_folders(tests)
    out = []
    for folder in sorted(folders - packages):
        top = folder.split("/")[0]
        if top not in helpers:
            out.append(f"tests/{folder}/ mirrors no subpackage of {root.name}/")
        elif any(tests.joinpath(folder).glob("test_*.py")):
            out.append(f"tests/{folder}/ holds shared helpers only, but has test modules")
    for package in sorted(packages - folders - set(pending)):
        out.append(f"{root.name}/{package}/ has no test folder tests/{package}/")
    for package in sorted(set(pending) & folders):
        out.append(f"tests/{package}/ exists: drop {package!r} from the pending list")
    for package in sorted(packages):
        parent, _, sub = package.rpartition("/")
        if package in pending:
            continue
        where = tests / parent if parent else tests
        for stray in sorted(where.glob(f"test_{sub}_*.py")) + sorted(where.glob(f"test_{sub}.py")):
            out.append(f"{stray.relative_to(tests.parent).as_posix()} belongs in tests/{package}/")
    return out


def test_the_mirror_check_finds_a_misplaced_layout(tmp_path):
    pkg, tests = tmp_path / "pkg", tmp_path / "tests"
    for folder in ("", "a", "a/b", "c"):
        (pkg / folder).mkdir(parents=True, exist_ok=True)
        (pkg / folder / "__init__.py").write_text("")
    for path in ("a/test_x.py", "a/test_b_y.py", "zzz/test_z.py", "helpers/test_h.py"):
        (tests / path).parent.mkdir(parents=True, exist_ok=True)
        (tests / path).write_text("")
    problems = mirror_problems(pkg, tests, helpers={"helpers"})
    assert problems == [
        "tests/helpers/ holds shared helpers only, but has test modules",
        "tests/zzz/ mirrors no subpackage of pkg/",
        "pkg/a/b/ has no test folder tests/a/b/",
        "pkg/c/ has no test folder tests/c/",
        "tests/a/test_b_y.py belongs in tests/a/b/",
    ]
    # pending: the subpackage's tests still use the prefix in the parent's folder
    assert "tests/a/test_b_y.py belongs in tests/a/b/" not in mirror_problems(
        pkg, tests, helpers={"helpers"}, pending={"a/b"})
    (tests / "a" / "b").mkdir()
    (tests / "a" / "b" / "test_y.py").write_text("")
    assert "tests/a/b/ exists: drop 'a/b' from the pending list" in mirror_problems(
        pkg, tests, helpers={"helpers"}, pending={"a/b"})


def test_tests_mirror_the_package():
    assert {"geometry/meb", "solvers/covering", "estimation"} <= _test_folders(TESTS)
    assert mirror_problems(ROOT, TESTS, HELPER_FOLDERS, NOT_YET_MIRRORED) == []


def _modules_in_map() -> set[str]:
    return set(re.findall(r"`(cvxdp/[A-Za-z0-9_/]+\.py)`", CODE_MAP.read_text()))


def test_the_code_map_names_every_module():
    named = _modules_in_map()
    modules = {p.relative_to(ROOT.parent).as_posix() for p in ROOT.rglob("*.py")
               if p.name != "__init__.py" and "__pycache__" not in p.parts}
    assert "cvxdp/geometry/meb/meb_levels.py" in modules
    assert sorted(modules - named) == [], "add these modules to docs/layout.md"
    assert sorted(named - modules) == [], "docs/layout.md names modules that do not exist"


def test_the_code_map_has_a_section_per_subpackage():
    text = CODE_MAP.read_text()
    sections = set(re.findall(r"^## `cvxdp/([A-Za-z0-9_/]*)`", text, flags=re.M))
    assert sections == {f"{p}/" for p in _subpackages(ROOT)} | {""}
