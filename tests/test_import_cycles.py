"""Imports among cvxdp's modules run one way.  The Dask implementations (``cvxdp.dask_backend``)
sit on one side of every import: the estimators call them for a Dask array, and they build on numpy
cores that never call back (issue 24: ``geometry/meb/box.py``, ``geometry/john/core.py``,
``estimation/rows.py``).

The graph is ``tests/import_graph.py``'s: every ``import`` of a ``cvxdp`` module, read with
``ast``, inside functions too (a deferred import is still a dependency, the usual way to hide a
circle), except under ``if TYPE_CHECKING:``.
"""

from __future__ import annotations

from tests.import_graph import import_graph, package_graph


def _cycles(graph) -> list[set[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[set[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = set()
                while True:
                    x = stack.pop()
                    on.discard(x)
                    comp.add(x)
                    if x == v:
                        break
                if len(comp) > 1:
                    out.append(comp)
    return out


def test_no_import_cycle_runs_through_the_dask_path():
    graph = package_graph()
    # the graph is read: the estimators reach their Dask implementations and back to the cores
    assert "cvxdp.dask_backend.gaussians" in graph["cvxdp.estimation.gaussian_learner"]
    assert "cvxdp.estimation.rows" in graph["cvxdp.dask_backend.gaussians"]
    assert "cvxdp.dask_backend.regression" in graph["cvxdp.estimation.random_projection"]
    assert "cvxdp.dask_backend.john" in graph["cvxdp.geometry.john.john_private"]
    through = [sorted(c) for c in _cycles(graph)
               if any(m.startswith("cvxdp.dask_backend") for m in c)]
    assert through == []


def test_no_import_cycle_anywhere_in_the_package():
    """The solvers read the option checks from ``cvxdp.arguments`` (not ``cvxdp.api``, which
    dispatches to them), and ``required_n(method="bounded")`` is answered in ``gaussians`` (the
    bounded estimator builds on ``gaussian_steps``, not back): no module imports itself
    through others."""
    assert [sorted(c) for c in _cycles(package_graph())] == []


def test_the_check_finds_a_deferred_circle():
    """Positive control: an import inside a function closes a cycle; one under
    ``TYPE_CHECKING`` does not."""
    sources = {
        "cvxdp.a": "import cvxdp.b\n",
        "cvxdp.b": "def f():\n    from cvxdp.a import g\n",
        "cvxdp.c": ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                    "    from cvxdp.a import g\nimport cvxdp.b\n"),
    }
    graph = import_graph(sources)
    assert graph == {"cvxdp.a": {"cvxdp.b"}, "cvxdp.b": {"cvxdp.a"}, "cvxdp.c": {"cvxdp.b"}}
    assert _cycles(graph) == [{"cvxdp.a", "cvxdp.b"}]
    assert _cycles({"a": {"b"}, "b": set()}) == []
