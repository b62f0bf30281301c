"""Base class for problems that carry their own structure (ellipsoid, ball, least squares, ...).

A builder such as :func:`cvxdp.min_enclosing_ball` returns a :class:`StructuredProblem`: an
ordinary :class:`cvxpy.Problem` (so ``.solve()`` is the exact reference with any CVXPY solver) that
also knows its specialised private algorithm (``.solve_private(...)``) and, optionally, fast
non-private methods (``.solve(method="fptas")``).
"""

from __future__ import annotations

from typing import Any

import cvxpy as cp

__all__ = ["StructuredProblem"]


class StructuredProblem(cp.Problem):
    """A CVXPY problem with a specialised private solver.

    Subclasses implement :meth:`solve_private` and may list extra non-private methods in
    ``_methods`` (a mapping from name to an unbound method taking ``(self, **kwargs)``).
    """

    #: name -> function(self, **kwargs) returning the optimal value
    _methods: dict[str, Any] = {}

    def solve(self, *args: Any, method: str | None = None, **kwargs: Any) -> Any:
        """Exact solve through CVXPY, or one of the problem's own methods by ``method=``."""
        if method is not None and method in self._methods:
            return self._methods[method](self, *args, **kwargs)
        if method is not None:
            return super().solve(*args, method=method, **kwargs)
        return super().solve(*args, **kwargs)

    def solve_private(self, **kwargs: Any) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError(f"{type(self).__name__} must implement solve_private")
