"""One entry point for private solves: ``problem.solve_private`` / ``cvxdp.solve_private``.

Dispatch: a :class:`cvxdp.structured.StructuredProblem` (ellipsoid, ball, least squares, covering,
...) runs its own algorithm; any other CVXPY problem goes down the cone-program path
(``cvxdp.transform`` then ``cvxdp.solvers``).
"""

from __future__ import annotations

from typing import Any

import cvxpy as cp

from cvxdp.structured import StructuredProblem

__all__ = ["solve_private", "install"]


def solve_private(problem: cp.Problem, **kwargs: Any) -> Any:
    """Solve ``problem`` privately; see the docs of the path taken for the arguments."""
    if isinstance(problem, StructuredProblem):
        return problem.solve_private(**kwargs)
    from cvxdp.solvers.general import solve_general  # the cone-program path

    return solve_general(problem, **kwargs)


def _solve_private_method(self: cp.Problem, **kwargs: Any) -> Any:
    return solve_private(self, **kwargs)


def _solve_method(self: cp.Problem, *args: Any, **kwargs: Any) -> Any:
    if args:
        raise TypeError("solve(method='private') takes keyword arguments only.")
    return solve_private(self, **kwargs).value


def install() -> None:
    """Attach ``solve_private`` to :class:`cvxpy.Problem` and register ``method="private"``."""
    if not hasattr(cp.Problem, "solve_private") or not getattr(
        cp.Problem.solve_private, "_cvxdp", False
    ):
        _solve_private_method._cvxdp = True  # type: ignore[attr-defined]
        cp.Problem.solve_private = _solve_private_method  # type: ignore[attr-defined]
    cp.Problem.register_solve("private", _solve_method)
