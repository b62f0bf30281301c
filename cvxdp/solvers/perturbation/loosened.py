"""The loosened counterpart of a perturbation release, solved, and its own box.

The loosened counterpart (:func:`cvxdp.solvers.certificate.loosened_program`) contains the TRUE
feasible set on the noise event; its optimum bounds the true optimum from below, and its point
is released when the tightened counterpart is empty.  A unit whose noise map reaches a variable
that no public row bounds is dropped from it (still a superset).  :func:`solve_loosened` then
takes a second pass: the first loosened counterpart's own box bounds those variables at every
true-feasible point (it contains them all), so the counterpart rebuilt on that box keeps the
units, on the same event (docs/certificates.md, "Lower bound on the optimum").  Post-processing
of the release and public data only.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import cvxpy as cp
import numpy as np

from cvxdp.solvers.certificate import loosened_program, reached_coordinates, unit_reach
from cvxdp.solvers.public_part import public_bounds

__all__ = ["LOOSENED_BOX_MAX", "loosened_box", "solve_loosened"]

#: most variables the loosened counterpart's box is solved for (two exact solves each)
LOOSENED_BOX_MAX = 100


def solve_loosened(released: Any, A_t: Any, b_t: np.ndarray, plan: Any, scale: np.ndarray,
                   lo: np.ndarray, hi: np.ndarray, solve: Callable[[Any], Any]
                   ) -> tuple[Any, Any]:
    """``(program, solution)`` of the loosened counterpart on the public box ``[lo, hi]``,
    with the second pass of the module doc when the first dropped a unit and solved."""
    n = lo.size
    reach = unit_reach(plan, lo, hi)
    prog = loosened_program(released, A_t, b_t, plan, scale, reach)
    sol = solve(prog)
    if reach.bounded.all() or sol.status != cp.OPTIMAL:
        return prog, sol
    l_lo, l_hi = loosened_box(prog, reached_coordinates([plan.E_all], n), n,
                              only=~(np.isfinite(lo) & np.isfinite(hi)))
    reach2 = unit_reach(plan, np.maximum(lo, l_lo), np.minimum(hi, l_hi))
    if reach2.bounded.sum() <= reach.bounded.sum():
        return prog, sol
    prog2 = loosened_program(released, A_t, b_t, plan, scale, reach2)
    sol2 = solve(prog2)
    return (prog2, sol2) if sol2.status == cp.OPTIMAL else (prog, sol)


def loosened_box(loose_prog: Any, hit: np.ndarray, n: int, only: np.ndarray | None = None
                 ) -> tuple[np.ndarray, np.ndarray]:
    """``(lo, hi)`` over the loosened counterpart for the variables ``hit`` (those of them
    with ``only`` True, when given): two exact solves each; ``-inf`` / ``inf`` when unbounded,
    or for all of them past :data:`LOOSENED_BOX_MAX` variables, an engineering limit on the
    solves."""
    lo, hi = np.full(n, -np.inf), np.full(n, np.inf)
    if only is not None:
        hit = hit[only[hit]]
    if hit.size == 0 or hit.size > LOOSENED_BOX_MAX:
        return lo, hi
    eye = np.zeros((hit.size, loose_prog.n))
    eye[np.arange(hit.size), hit] = 1.0
    lo[hit], hi[hit] = public_bounds(loose_prog.A, loose_prog.b, loose_prog.dims,
                                     np.zeros(loose_prog.m, dtype=bool), list(eye),
                                     allow_unbounded=True)
    return lo, hi
