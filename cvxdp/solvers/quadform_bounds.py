"""Bounds on the objective terms that hold a private ``quad_form`` matrix.

Shared by the model-level release (:mod:`cvxdp.solvers.quadform_perturbation`) and its
combination with the general path (:mod:`cvxdp.solvers.quadform_combined`): the terms
``c * quad_form(a(x), S)`` of the objective with a public ``c > 0`` (in the minimised sense),
and ``B >= max ||a(x)||^2`` over the public constraints.  On the release's event ``S~ - r I <=
S`` (Loewner), so ``OPT >= OPT_mid - sum_k c_k lambda_max(Pi(S~) - S~ + r I) B_k`` when no
matrix sits in a constraint (``OPT_mid`` the optimum with ``Pi(S~)``): structure and public
data only.
"""

from __future__ import annotations

import math
from typing import Any

import cvxpy as cp
import numpy as np
from cvxpy.atoms.quad_form import QuadForm

from cvxdp.solvers.perturbation.fit_detect import _peel, _terms

__all__ = ["expression_quad_terms", "quad_terms", "scaled_quadform", "square_bound"]


def quad_terms(problem: cp.Problem, quad: set[int], rest: set[int]
                ) -> list[tuple[float, Any, Any]] | None:
    """``[(c, a, S), ...]`` for the objective's terms that hold a private matrix, in the
    minimised sense, or None when one is not ``c * quad_form(a, S)`` with ``c > 0`` and no
    other private parameter (module doc, step 4)."""
    sign = -1.0 if isinstance(problem.objective, cp.Maximize) else 1.0
    return expression_quad_terms(problem.objective.expr, sign, quad, rest)


def expression_quad_terms(expr: Any, sign: float, quad: set[int], rest: set[int]
                          ) -> list[tuple[float, Any, Any]] | None:
    """``[(c, a, S), ...]`` for the terms of ``sign * expr`` (a sum) that hold a private matrix,
    or None when one is not ``c * quad_form(a, S)`` with ``c > 0`` and no other private
    parameter: the objective's (:func:`quad_terms`) or a constraint's ``lhs - rhs``."""
    out = []
    for term in _terms(expr):
        ids = {p.id for p in term.parameters()}
        if not ids & quad:
            continue
        if ids & rest:
            return None
        found = scaled_quadform(term)
        if found is None or not sign * found[0] > 0:
            return None
        out.append((sign * found[0], found[1].args[0], found[1].args[1]))
    return out


def scaled_quadform(term: Any) -> tuple[float, Any] | None:
    """``(c, q)`` with ``term = c * q``, ``q`` a ``quad_form`` atom and ``c`` a product of public
    scalars (negations, products and quotients peeled), else None."""
    peeled = _peel(term, signed=True)
    return peeled if peeled is not None and isinstance(peeled[1], QuadForm) else None


def square_bound(problem: cp.Problem, a: Any, private: set[int]) -> float:
    """``B >= max ||a(x)||^2`` over the constraints without private data.

    Each entry's range ``[l_j, h_j]`` by a linear program (one parametrised problem, solved
    ``2 size(a)`` times), then the smaller of the box bound ``sum_j max(l_j^2, h_j^2)`` and the
    secant bound ``max_x sum_j [(l_j + h_j) a_j(x) - l_j h_j]`` (one more linear program:
    ``(a_j - l_j)(a_j - h_j) <= 0`` on the range, so ``a_j^2`` lies below its chord; on the
    simplex ``sum(w) == 1, w >= 0`` that is 1 where the box gives ``n``).  inf when a range is
    unbounded or a solve fails; solver values are pushed the safe way."""
    public = [c for c in problem.constraints if not private & {p.id for p in c.parameters()}]
    flat = cp.vec(a, order="F")
    d = cp.Parameter(flat.size)
    prob = cp.Problem(cp.Maximize(d @ flat), public)
    lo, hi = np.zeros(flat.size), np.zeros(flat.size)

    def solve(direction: np.ndarray) -> float | None:
        d.value = direction
        try:
            prob.solve(solver=cp.CLARABEL)
        except cp.error.SolverError:
            return None
        if prob.status != cp.OPTIMAL:
            return None
        v = float(prob.value)
        return v + 1e-7 * abs(v) + 1e-9   # the maximum, pushed up by the solver's tolerance

    for i in range(flat.size):
        e = np.zeros(flat.size)
        e[i] = 1.0
        up, down = solve(e), solve(-e)
        if up is None or down is None:
            return math.inf
        lo[i], hi[i] = -down, up
    box = float(np.sum(np.maximum(lo * lo, hi * hi)))
    chord = solve(lo + hi)
    if chord is None:
        return box
    return min(box, chord - float(lo @ hi))
