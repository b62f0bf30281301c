"""Base class for problems that carry their own structure (ellipsoid, ball, least squares, ...).

A builder such as :func:`cvxdp.min_enclosing_ball` returns a :class:`StructuredProblem`: an
ordinary :class:`cvxpy.Problem` (so ``.solve()`` is the exact reference with any CVXPY solver) that
also knows its specialised private algorithm (``.solve_private(...)``) and, optionally, fast
non-private methods (``.solve(method="fptas")``).

After a private solve the problem holds the private answer only: every
subclass's ``solve_private`` is wrapped (:meth:`StructuredProblem.__init_subclass__`) so that

* before it runs, the previous solution is forgotten: every variable value, dual value,
  ``status``, ``value`` and the attributes named in ``_answer_attributes`` (e.g. ``ball``);
* after it returns, ``status`` and ``value`` are the solution's, every variable named in
  ``solution.primal`` holds the released value, every field a solution subclass adds (``ball``,
  ``ellipsoid``, ``mean``, ...) whose name is an attribute of the problem replaces it (a
  :class:`cvxpy.Variable` attribute gets the released value), and the dual values are cleared
  again (a reference solve of the problem itself would have left exact ones).

The exact answer of ``reference=True`` lives in ``solution.validation`` only.
"""

from __future__ import annotations

import functools
from typing import Any

import cvxpy as cp

from cvxdp.progress import budget_text, problem_size, verbose_run
from cvxdp.writeback import forget_solution, write_back

__all__ = ["StructuredProblem", "forget_solution", "hold_private"]


class StructuredProblem(cp.Problem):
    """A CVXPY problem with a specialised private solver.

    Subclasses implement :meth:`solve_private` and may list extra non-private methods in
    ``_methods`` (a mapping from name to an unbound method taking ``(self, **kwargs)``) and the
    instance attributes that hold an answer in ``_answer_attributes`` (forgotten before a private
    solve, so that a failed one leaves no exact answer behind).
    """

    #: name -> function(self, **kwargs) returning the optimal value
    _methods: dict[str, Any] = {}
    #: instance attributes holding an answer (set to None before a private solve)
    _answer_attributes: tuple[str, ...] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Wrap the subclass's own ``solve_private`` so the problem holds its answer only."""
        super().__init_subclass__(**kwargs)
        own = cls.__dict__.get("solve_private")
        if own is not None and not getattr(own, "_holds_private", False):
            cls.solve_private = _holding_private(own)

    def solve(self, *args: Any, method: str | None = None, **kwargs: Any) -> Any:
        """Exact solve through CVXPY, or one of the problem's own methods by ``method=``."""
        if method is not None and method in self._methods:
            return self._methods[method](self, *args, **kwargs)
        if method is not None:
            return super().solve(*args, method=method, **kwargs)
        return super().solve(*args, **kwargs)

    def solve_private(self, **kwargs: Any) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError(f"{type(self).__name__} must implement solve_private")

    def _forget_solution(self) -> None:
        forget_solution(self, self._answer_attributes)

    def _hold_private(self, sol: Any) -> None:
        hold_private(self, sol)


def hold_private(problem: cp.Problem, sol: Any) -> None:
    """Old name of :func:`cvxdp.writeback.write_back` (the one write of a private result)."""
    write_back(problem, sol)


def _holding_private(fn: Any) -> Any:
    @functools.wraps(fn)
    def solve_private(self: StructuredProblem, *args: Any, **kwargs: Any) -> Any:
        self._forget_solution()
        # verbose=True: header and summary; sizes are the problem's public
        # shape, the budget the one asked for. ``verbose`` is passed on to the solver too.
        # only when asked: reading ``constraints`` builds a lazy model (MEB's SOCP constraint,
        # a CVXPY copy of the points: the memory limit)
        verbose = bool(kwargs.get("verbose"))
        size = problem_size(self) if verbose else ""
        run = verbose_run(verbose, type(self).__name__, size=size,
                          budget=budget_text(kwargs.get("epsilon"), kwargs.get("delta"),
                                             kwargs.get("rho"), kwargs.get("budget")))
        try:
            sol = fn(self, *args, **kwargs)
        except BaseException:
            self._forget_solution()  # a raised solve leaves nothing a solver wrote on the way
            raise
        self._hold_private(sol)
        return run.finish(sol)

    solve_private._holds_private = True  # type: ignore[attr-defined]
    return solve_private
