"""The one place a private result is written into the user's :class:`cvxpy.Problem`.

CVXPY's own shape: a solver returns plain values, and ``Problem.unpack`` is the only write
(``cvxpy/problems/problem.py``).  Here every private path -- the general cone-program path,
the ``quad_form`` path, least squares and every structured problem -- returns a
:class:`~cvxdp.solution.PrivateSolution`, and the entry point calls :func:`write_back` once:

* ``problem.status`` and ``problem.value`` are the solution's (computed from released
  quantities only);
* every variable of the problem holds the released value of ``solution.primal`` (by name), or
  None when the solution has none for it;
* every dual value is cleared (no private path releases duals);
* ``problem.solver_stats`` says ``CVXDP (private)`` with the private path's wall time and
  iteration count;
* answer attributes a structured problem names (``ball``, ``ellipsoid``, ...) take the
  solution's field of the same name.

Whatever a solver left on the problem on its way (CVXPY's ``unpack`` sets ``problem.value`` to
the objective evaluated with the parameters' current values, which are the TRUE private data)
is overwritten, so no path can leave a number computed from private data behind.
:func:`forget_solution` runs before a private solve and when it raises.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import cvxpy as cp
import numpy as np
from cvxpy.problems.problem import SolverStats

from cvxdp.solution import PrivateSolution

__all__ = ["write_back", "forget_solution", "SOLVER_NAME"]

#: ``problem.solver_stats.solver_name`` after a private solve
SOLVER_NAME = "CVXDP (private)"

_BASE_FIELDS = frozenset(f.name for f in dataclasses.fields(PrivateSolution))


def forget_solution(problem: cp.Problem, answer_attributes: tuple[str, ...] = ()) -> None:
    """Drop every value a previous (exact or private) solve left on ``problem``.

    Variable and dual values, ``status``, ``value``, ``solution``, ``solver_stats`` and the
    instance attributes named in ``answer_attributes``.
    """
    for var in problem.variables():
        var.save_value(None)
    _clear_duals(problem)
    problem._status, problem._value, problem._solution = None, None, None
    problem._solver_stats = None
    for name in answer_attributes:
        if name in problem.__dict__:
            setattr(problem, name, None)


def write_back(problem: cp.Problem, sol: Any) -> None:
    """Make ``problem`` hold the private solution ``sol`` and nothing else (module doc).

    Parameters
    ----------
    problem : cvxpy.Problem
        The user's problem.
    sol : PrivateSolution
        The released answer.  Anything else (a structured path that returns a plain tuple)
        leaves the problem as :func:`forget_solution` left it.
    """
    if not isinstance(sol, PrivateSolution):
        forget_solution(problem)
        return
    problem._status = sol.status
    problem._value = _value_of(problem, sol)
    for var in problem.variables():
        _save(var, sol.primal.get(var.name()))
    for f in dataclasses.fields(sol):
        if f.name in _BASE_FIELDS or f.name not in problem.__dict__:
            continue
        current, released = problem.__dict__[f.name], getattr(sol, f.name)
        if isinstance(current, cp.Variable):
            _save(current, released)
        elif not isinstance(current, cp.Expression):
            setattr(problem, f.name, released)
    _clear_duals(problem)
    problem._solution = None
    problem._solver_stats = SolverStats(
        SOLVER_NAME, solve_time=float(sol.solve_time),
        num_iters=None if sol.iterations is None else int(sol.iterations),
        extra_stats={"mechanism": sol.info.get("mechanism", sol.info.get("method"))})


def _value_of(problem: cp.Problem, sol: PrivateSolution) -> float | None:
    """``sol.value`` as CVXPY stores it; no point: CVXPY's convention for the status."""
    if sol.value is not None:
        return float(sol.value)
    maximise = isinstance(problem.objective, cp.Maximize)
    if sol.status in (cp.INFEASIBLE, cp.INFEASIBLE_INACCURATE):
        return -np.inf if maximise else np.inf
    if sol.status in (cp.UNBOUNDED, cp.UNBOUNDED_INACCURATE):
        return np.inf if maximise else -np.inf
    return None


def _clear_duals(problem: cp.Problem) -> None:
    for con in problem.constraints:
        for dual in con.dual_variables:
            dual.save_value(None)


def _save(var: cp.Variable, value: Any) -> None:
    """Store a released value on ``var`` (None clears it; a value of another shape is not
    stored).  ``save_value`` does not run CVXPY's attribute checks, which a released point
    (e.g. a slightly indefinite PSD estimate) may fail by rounding."""
    if value is None:
        var.save_value(None)
        return
    arr = np.asarray(value, dtype=float)
    if arr.size == int(np.prod(var.shape)):
        var.save_value(arr.reshape(var.shape))
    else:
        var.save_value(None)
