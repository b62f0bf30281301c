"""The public side of a row-level model: the parameter domain, exact projections, exact solves.

Everything here reads only the model's structure and public data, except
:func:`solve_on_rows`, which solves the model (plus public/noise terms) on the clipped rows
inside a mechanism.  Every solve is an ordinary CVXPY solve of the user's public constraints
(any cone, the exponential cone included).
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import cvxpy as cp
import numpy as np
from cvxpy.atoms.affine.sum import Sum
from cvxpy.atoms.elementwise.power import Power
from cvxpy.atoms.norm1 import norm1
from cvxpy.atoms.norm_inf import norm_inf
from cvxpy.atoms.pnorm import Pnorm
from cvxpy.atoms.quad_over_lin import quad_over_lin
from cvxpy.constraints import Inequality

from cvxdp.errors import InfeasibleProblemError
from cvxdp.learning.detect import RowModel

__all__ = ["theta", "theta_bound", "variable_bound", "regulariser_lipschitz", "Projector",
           "solve_on_rows", "public_completion", "public_point"]

_OK = (cp.OPTIMAL, cp.OPTIMAL_INACCURATE)


def theta(model: RowModel) -> list[cp.Variable]:
    """The model's parameter ``theta = (w, v)`` as a list of Variables."""
    return [model.w] if model.v is None else [model.w, model.v]


def _ball_radius(con: Any, var: cp.Variable) -> float:
    """r if ``con`` is ``norm(var, p) <= r`` (p in 1, 2, inf) / ``sum_squares(var) <= r``,
    as a bound on ``||var||_2``; inf otherwise."""
    if not isinstance(con, Inequality):
        return math.inf
    lhs, rhs = con.args
    if not rhs.is_constant() or rhs.size != 1 or not lhs.args or lhs.args[0] is not var:
        return math.inf
    r = float(np.asarray(rhs.value).ravel()[0])
    if isinstance(lhs, Pnorm) and _power(lhs) == 2:
        return r
    if isinstance(lhs, norm1):
        return r
    if isinstance(lhs, norm_inf):
        return r * math.sqrt(var.size)
    if isinstance(lhs, quad_over_lin) and lhs.args[1].is_constant() and np.allclose(
            lhs.args[1].value, 1.0):
        return math.sqrt(max(r, 0.0))
    return math.inf


def _coordinate_bound(model: RowModel, var: cp.Variable) -> float:
    """``||var||_2 <= sqrt(sum_j max |var_j|^2)`` over the public constraint set: 2 size
    exact solves (one compiled problem, a Parameter direction); inf if unbounded."""
    c = cp.Parameter(var.size)
    prob = cp.Problem(cp.Maximize(c @ cp.vec(var, order="F")), model.constraints)
    top = np.zeros(var.size)
    for j in range(var.size):
        for sgn in (1.0, -1.0):
            e = np.zeros(var.size)
            e[j] = sgn
            c.value = e
            try:
                prob.solve()
            except cp.SolverError:
                return math.inf
            if prob.status in (cp.UNBOUNDED, cp.UNBOUNDED_INACCURATE):
                return math.inf
            if prob.status in (cp.INFEASIBLE, cp.INFEASIBLE_INACCURATE):
                raise InfeasibleProblemError(
                    "the public constraints of the model are infeasible (decided by an exact "
                    "solve of public data; no budget was spent).")
            if prob.status not in _OK:
                return math.inf
            top[j] = max(top[j], abs(float(prob.value)))
    return float(np.linalg.norm(top))


def theta_bound(model: RowModel) -> float:
    """Public bound W on ``||theta||_2`` over the constraint set (inf when unbounded).

    A norm-ball constraint on a variable gives its radius; otherwise each coordinate's range
    is found by exact solves of the public constraints (Maximize / Minimize ``theta_j``).
    """
    total = 0.0
    for var in theta(model):
        r = variable_bound(model, var)
        if not math.isfinite(r):
            return math.inf
        total += r * r
    return math.sqrt(total)


def variable_bound(model: RowModel, var: cp.Variable) -> float:
    """Public bound on ``||var||_2`` over the constraint set (:func:`theta_bound`'s, for one
    variable; inf when unbounded)."""
    r = min((_ball_radius(con, var) for con in model.constraints), default=math.inf)
    if not math.isfinite(r):
        r = _coordinate_bound(model, var) if model.constraints else math.inf
    return r


def regulariser_lipschitz(model: RowModel, W: float) -> float:
    """A Lipschitz constant of the public regulariser on ``||theta|| <= W`` read from its
    terms (``c sum_squares``: 2 c W, ``c norm1``: c sqrt(d), ``c norm2``: c, ``c sum``:
    c sqrt(d), constants: 0); inf when a term is of another kind (e.g. ``w @ a``, whose
    constant ``||a||`` is not read)."""
    total = 0.0
    for c, e in model.public_terms:
        if e.is_constant():
            continue
        var = e.args[0] if e.args else None
        if isinstance(e, Power) and isinstance(var, Pnorm) and _power(var) == 2:
            var = var.args[0]
        if not isinstance(var, cp.Variable) or var.id not in {v.id for v in theta(model)}:
            return math.inf   # a term in an auxiliary Variable: no Lipschitz constant read
        if isinstance(e, quad_over_lin):
            total += abs(c) * 2 * W
        elif isinstance(e, norm1):
            total += abs(c) * math.sqrt(var.size)
        elif isinstance(e, Pnorm) and _power(e) == 2:
            total += abs(c)
        elif isinstance(e, Sum) and e.axis is None and e.args[0] is var:
            total += abs(c) * math.sqrt(var.size)   # |sum(x)| <= sqrt(d) ||x||
        elif isinstance(e, Power) and _power(e) == 2:
            total += abs(c) * 2 * W   # norm2(w)**2 or square(v)
        else:
            return math.inf
    return total


def _power(e: Any) -> float:
    return float(e.p.value if hasattr(e.p, "value") else e.p)


class Projector:
    """Exact prox / projection onto the public constraint set, compiled once.

    ``step(center, eta)`` returns ``argmin_{theta in F} R(theta) + ||theta - center||^2/(2 eta)``
    (``with_regulariser=True``) or the Euclidean projection of ``center`` (``False``).
    """

    def __init__(self, model: RowModel, *, with_regulariser: bool, solver: str | None = None
                 ) -> None:
        self.vars = theta(model)
        self.size = sum(v.size for v in self.vars)
        self.center = cp.Parameter(self.size)
        self.eta = cp.Parameter(nonneg=True, value=1.0)
        th = cp.hstack([cp.vec(v, order="F") for v in self.vars])
        obj = 0.5 * cp.sum_squares(th - self.center)   # times 1/eta: the same argmin (DPP)
        if with_regulariser:
            obj = obj + self.eta * model.regulariser
        self.problem = cp.Problem(cp.Minimize(obj), model.constraints)
        self.solver = solver

    def step(self, center: np.ndarray, eta: float = 1.0) -> np.ndarray:
        self.center.value = np.asarray(center, dtype=float)
        self.eta.value = eta
        with warnings.catch_warnings():   # the center derives from private data: no warning
            warnings.simplefilter("ignore")
            self.problem.solve(solver=self.solver)
        if self.problem.status not in _OK:
            raise InfeasibleProblemError(
                f"the projection onto the public constraints ended {self.problem.status!r}; "
                "check that the constraints are feasible (public data only).")
        return np.concatenate([np.ravel(v.value, order="F") for v in self.vars])


def solve_on_rows(model: RowModel, loss: Any, X: np.ndarray, y: np.ndarray | None, *,
                  quadratic: float = 0.0, linear: np.ndarray | None = None,
                  solver: str | None = None) -> tuple[np.ndarray, str]:
    """``argmin_{theta in F} sum_i loss(p_i, y_i) + R(theta) + quadratic/2 ||theta||^2 +
    linear' theta`` on the (clipped) rows: one CVXPY solve.  Returns (theta, status)."""
    th = cp.hstack([cp.vec(v, order="F") for v in theta(model)])
    Xt = X if model.v is None else np.column_stack([X, np.full(X.shape[0], model.sign_v)])
    fast = loss.gram_expression(Xt, y, th)
    obj = (fast if fast is not None else loss.expression(model.predictor(X), y)) \
        + model.regulariser
    if quadratic:
        obj = obj + (quadratic / 2) * cp.sum_squares(th)
    if linear is not None:
        obj = obj + linear @ th
    prob = cp.Problem(cp.Minimize(obj), model.constraints)
    with warnings.catch_warnings():   # a solver warning here would depend on the private rows
        warnings.simplefilter("ignore")
        try:
            prob.solve(solver=solver)
        except cp.SolverError:
            # whether the solver fails depends on the private rows: nothing is raised and the
            # public fallback point is returned (the mechanisms do not report the status)
            return public_point(model, solver), cp.SOLVER_ERROR
    if prob.status not in _OK:
        return public_point(model, solver), prob.status
    return np.concatenate([np.ravel(v.value, order="F") for v in theta(model)]), prob.status


def public_point(model: RowModel, solver: str | None = None) -> np.ndarray:
    """A point of the public constraint set from public data only: the projection of 0 (0
    when there are no constraints).  Released in place of a solve on the private rows that
    failed (a function of public data, so it reveals nothing)."""
    if not model.constraints:
        return np.zeros(model.dim)
    return Projector(model, with_regulariser=False, solver=solver).step(np.zeros(model.dim))


def set_theta(model: RowModel, value: np.ndarray) -> None:
    """Write ``theta`` into the model's Variables (w, then v)."""
    k = 0
    for v in theta(model):
        v.value = np.reshape(value[k:k + v.size], v.shape, order="F") if v.shape else float(
            value[k])
        k += v.size


def public_completion(model: RowModel, problem: cp.Problem, value: np.ndarray,
                      solver: str | None = None) -> dict[str, Any]:
    """Values of every Variable for the released ``theta``: theta itself, and any auxiliary
    Variable of the public part by an exact public solve with theta fixed (post-processing:
    a function of the release and public data only)."""
    set_theta(model, value)
    ids = {v.id for v in theta(model)}
    aux = [v for v in problem.variables() if v.id not in ids]
    if aux:
        fixed = [v == v.value for v in theta(model)]
        sub = cp.Problem(cp.Minimize(model.regulariser), [*model.constraints, *fixed])
        sub.solve(solver=solver)
        set_theta(model, value)
    return {v.name(): v.value for v in problem.variables()}
