"""The perturbed smooth problem solved by a projected Newton method with a certified gap.

Objective perturbation releases the minimiser over ``F`` of

    phi(theta) = sum_i l_h(x~_i' theta, y_i) + 1/2 theta' diag(q) theta + Delta/2 ||theta||^2
                 + b' theta,

a smooth, ``m``-strongly convex function (``m = Delta + mu > 0``).  When the public part has a
simple shape -- every regulariser term ``c * sum_squares(var)`` (giving ``q``) or constant, and
``F`` a product of boxes (bounds on coordinates, ``abs(var) <= r``, ``norm_inf(var) <= r``,
``nonneg`` / ``nonpos`` attributes) or one Euclidean ball on one variable -- the minimiser is
found here without a conic solve over ``n`` rows: Newton steps ``theta^ = argmin_{theta in F}
g'(theta - theta_k) + 1/2 (theta - theta_k)' H (theta - theta_k)`` (a ``d``-dimensional
problem: exact for no constraint, by bounded-variable least squares for boxes, by a
one-multiplier search for a ball; solved for the step ``theta^ - theta_k`` itself, which
rounding would lose in ``theta^``), with an Armijo backtracking line search, and the
prox-gradient step where rounding leaves the Newton step no descent (proximal Newton, Lee, Sun
& Saunders 2014).  :func:`simple_structure` decides from the model's structure only
(public) whether this applies; otherwise the mechanism solves with CVXPY as before.

Certificate (checked on every iterate, in floating point): with ``L`` a bound on the Lipschitz
constant of ``grad phi`` (``L = beta n R~^2 + max(q) + Delta >= beta lambda_max(X~'X~) + max(q)
+ Delta``, ``beta`` the loss's public curvature bound, ``R~`` the row bound: public), ``t =
1/L``, ``theta+ = Pi_F(theta - t grad phi(theta))`` (exact projection) and ``G = (theta -
theta+)/t``, the prox-gradient inequality with strong convexity (Beck 2017, Thm 10.16 with
``m``) gives

    phi(theta+) - phi* <= ||G||^2 (1/m - t) / 2 <= ||G||^2 / (2 m),
    ||theta+ - theta~|| <= ||G|| / m      (theta~ the exact minimiser),

and ``theta+`` is returned once the gap is at most the public target.  No success within
:data:`MAX_ITER` steps returns None (the mechanism then solves with CVXPY; nothing is
reported).

References
----------
J. D. Lee, Y. Sun, M. A. Saunders, "Proximal Newton-type methods for minimizing composite
functions", SIAM J. Optim. 24 (2014).  A. Beck, "First-Order Methods in Optimization", SIAM
2017, Thm 10.16.  P. B. Stark, R. L. Parker, "Bounded-variable least-squares: an algorithm and
applications", Comput. Stat. 10 (1995) (the box subproblem, ``scipy.optimize.lsq_linear``).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import cvxpy as cp
import numpy as np
from cvxpy.atoms.elementwise.abs import abs as cp_abs
from cvxpy.atoms.elementwise.power import Power
from cvxpy.atoms.norm_inf import norm_inf
from cvxpy.atoms.pnorm import Pnorm
from cvxpy.atoms.quad_over_lin import quad_over_lin
from cvxpy.constraints import Inequality
from scipy import linalg, optimize

from cvxdp.learning.detect import RowModel
from cvxdp.learning.domain import theta
from cvxdp.learning.loss import RowLoss

__all__ = ["SimpleStructure", "simple_structure", "newton_solve", "MAX_ITER"]

#: Newton steps before giving up (quadratic convergence needs about 10 near the minimiser)
MAX_ITER = 100


@dataclass(frozen=True)
class SimpleStructure:
    """The public part in the shape the Newton method handles (public)."""

    q: np.ndarray            # regulariser = 1/2 theta' diag(q) theta + constant
    lo: np.ndarray           # box bounds (-inf / inf: free)
    hi: np.ndarray
    ball: tuple[np.ndarray, float] | None   # (coordinates, radius) of one l2 ball

    def project(self, th: np.ndarray) -> np.ndarray:
        """Exact Euclidean projection onto F (a product of boxes and one ball)."""
        out = np.clip(th, self.lo, self.hi)
        if self.ball is not None:
            idx, r = self.ball
            nrm = float(np.linalg.norm(out[idx]))
            if nrm > r:
                out[idx] *= r / nrm
        return out


def _var_slice(model: RowModel) -> dict[int, slice]:
    out, k = {}, 0
    for v in theta(model):
        out[v.id] = slice(k, k + v.size)
        k += v.size
    return out


def _quadratic_var(e: object) -> cp.Variable | None:
    """``var`` when ``e`` is ``sum_squares(var)`` / ``norm2(var)**2`` / ``square(scalar)``."""
    if isinstance(e, quad_over_lin) and isinstance(e.args[0], cp.Variable) \
            and e.args[1].is_constant() and np.allclose(e.args[1].value, 1.0):
        return e.args[0]
    if isinstance(e, Power) and float(e.p.value if hasattr(e.p, "value") else e.p) == 2:
        a = e.args[0]
        if isinstance(a, Pnorm) and a.p == 2 and isinstance(a.args[0], cp.Variable):
            return a.args[0]
        if isinstance(a, cp.Variable) and a.size == 1:
            return a
    return None


def _const(e: object, var: cp.Variable) -> np.ndarray | None:
    if not e.is_constant():
        return None
    val = np.asarray(e.value, dtype=float)
    try:
        return np.broadcast_to(val, var.shape).ravel(order="F").astype(float)
    except ValueError:
        return None


def simple_structure(model: RowModel) -> SimpleStructure | None:
    """The model's public part as a :class:`SimpleStructure`, or None when it has another
    shape (a non-quadratic regulariser term, an auxiliary variable, an equality, a ball and a
    box on one variable, two balls, ...).  Reads the model's structure and public constants
    only."""
    d = model.dim
    where = _var_slice(model)
    q = np.zeros(d)
    for c, e in model.public_terms:
        if e.is_constant():
            continue
        var = _quadratic_var(e)
        if var is None or var.id not in where or not c > 0:
            return None
        q[where[var.id]] += 2 * c
    lo, hi = np.full(d, -np.inf), np.full(d, np.inf)
    boxed, ball = np.zeros(d, bool), None
    for v in theta(model):
        attrs = {k for k, val in v.attributes.items() if val}
        if attrs - {"nonneg", "nonpos"}:
            return None
        sl = where[v.id]
        if "nonneg" in attrs:
            lo[sl], boxed[sl] = np.maximum(lo[sl], 0.0), True
        if "nonpos" in attrs:
            hi[sl], boxed[sl] = np.minimum(hi[sl], 0.0), True
    for con in model.constraints:
        if not isinstance(con, Inequality):
            return None
        lhs, rhs = con.args
        if isinstance(lhs, cp.Variable) and lhs.id in where:      # var <= c
            c = _const(rhs, lhs)
            if c is None:
                return None
            sl = where[lhs.id]
            hi[sl], boxed[sl] = np.minimum(hi[sl], c), True
            continue
        if isinstance(rhs, cp.Variable) and rhs.id in where:      # c <= var
            c = _const(lhs, rhs)
            if c is None:
                return None
            sl = where[rhs.id]
            lo[sl], boxed[sl] = np.maximum(lo[sl], c), True
            continue
        arg = lhs.args[0] if lhs.args else None
        if not (isinstance(arg, cp.Variable) and arg.id in where and rhs.is_constant()
                and rhs.size == 1):
            return None
        r = float(np.asarray(rhs.value).ravel()[0])
        sl = where[arg.id]
        if isinstance(lhs, (cp_abs, norm_inf)):                  # |var_j| <= r
            lo[sl], hi[sl], boxed[sl] = np.maximum(lo[sl], -r), np.minimum(hi[sl], r), True
        elif isinstance(lhs, Pnorm) and lhs.p == 2 or isinstance(lhs, quad_over_lin) and \
                lhs.args[1].is_constant() and np.allclose(lhs.args[1].value, 1.0):
            radius = r if isinstance(lhs, Pnorm) else math.sqrt(max(r, 0.0))
            if not radius > 0:      # a point or nothing: left to CVXPY
                return None
            idx = np.arange(d)[sl]
            if ball is not None and not np.array_equal(ball[0], idx):
                return None
            ball = (idx, min(radius, ball[1]) if ball is not None else radius)
        else:
            return None
    # equal bounds (a fixed coordinate) or crossed ones (infeasible) are left to CVXPY
    if np.any(lo >= hi) or (ball is not None and np.any(boxed[ball[0]])):
        return None
    return SimpleStructure(q, lo, hi, ball)


def _subproblem(S: SimpleStructure, H: np.ndarray, g: np.ndarray, th: np.ndarray
                ) -> np.ndarray:
    """The Newton step ``argmin_{th + step in F} g' step + 1/2 step' H step`` (H positive
    definite), in the step itself: near the minimiser the step is far smaller than ``th``, and
    forming ``th + step`` first would lose it to rounding."""
    free = S.ball is None and not (np.isfinite(S.lo).any() or np.isfinite(S.hi).any())
    if free:
        return -linalg.solve(H, g, assume_a="pos")
    if S.ball is None:      # boxes: 1/2 ||U step + U^-T g||^2, H = U'U
        U = linalg.cholesky(H)
        rhs = -linalg.solve_triangular(U, g, trans="T")
        res = optimize.lsq_linear(U, rhs, bounds=(S.lo - th, S.hi - th), method="bvls",
                                  tol=1e-14)
        return res.x
    idx, r = S.ball     # one ball, others free: step(nu) = -(H + nu D)^-1 (g + nu D th)
    Dg = np.zeros(len(g))
    Dg[idx] = 1.0

    def at(nu: float) -> np.ndarray:
        return -linalg.solve(H + nu * np.diag(Dg), g + nu * Dg * th, assume_a="pos")

    step = at(0.0)
    if np.linalg.norm(th[idx] + step[idx]) <= r:
        return step
    lo_nu, hi_nu = 0.0, max(1.0, float(np.max(np.abs(np.diag(H)))))
    while np.linalg.norm(th[idx] + at(hi_nu)[idx]) > r:   # decreases in nu
        hi_nu *= 4.0
    for _ in range(200):
        mid = 0.5 * (lo_nu + hi_nu)
        if mid in (lo_nu, hi_nu):
            break
        if np.linalg.norm(th[idx] + at(mid)[idx]) > r:
            lo_nu = mid
        else:
            hi_nu = mid
    return at(hi_nu)


def _newton(S: SimpleStructure, loss: RowLoss, Xt: np.ndarray, y: np.ndarray, *,
            feature_bound: float, label_bound: float, Delta: float, b: np.ndarray, m: float,
            target_gap: float) -> tuple[np.ndarray, float] | None:
    """:func:`newton_solve` without its guard."""
    diag = S.q + Delta
    # lambda_max(X~'X~) <= trace(X~'X~) = sum_i ||x~_i||^2 <= n R~^2 (rows clipped): public
    L = loss.smoothness(label_bound) * Xt.shape[0] * feature_bound**2 + float(np.max(diag))
    t = 1.0 / (L * (1.0 + 1e-12))

    def value_grad(th: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
        p = Xt @ th
        f = float(np.sum(loss.values(p, y))) + 0.5 * float(th @ (diag * th)) + float(b @ th)
        return f, Xt.T @ loss.derivative(p, y) + diag * th + b, p

    th = S.project(np.zeros(len(b)))
    f, g, p = value_grad(th)
    for _ in range(MAX_ITER):
        plus = S.project(th - t * g)
        G = (th - plus) / t
        gap = float(G @ G) / (2.0 * m)
        if gap <= target_gap:
            return plus, gap
        H = Xt.T @ (Xt * loss.curvature(p, y)[:, None]) + np.diag(diag)
        H = 0.5 * (H + H.T)
        step = _subproblem(S, H, g, th)
        slope = float(g @ step)
        # |slope| at rounding level: the local regime, the full step (the line search takes it)
        if not (slope < 0 or abs(slope) <= 1e-14 * max(1.0, abs(f))):
            # not a descent direction in floating point (an active constraint's normal part
            # outweighs the slope): the prox-gradient step, a descent step by the theory
            step = plus - th
            slope = float(g @ step)
        s = 1.0
        while True:
            cand = th + s * step
            fc, gc, pc = value_grad(cand)
            if fc <= f + 1e-4 * s * slope or s < 1e-12 or -slope <= 1e-14 * max(1.0, abs(f)):
                break
            s *= 0.5
        th, f, g, p = cand, fc, gc, pc
    return None


def newton_solve(S: SimpleStructure, loss: RowLoss, Xt: np.ndarray, y: np.ndarray, *,
                 feature_bound: float, label_bound: float, Delta: float, b: np.ndarray,
                 m: float, target_gap: float) -> tuple[np.ndarray, float] | None:
    """The minimiser of ``phi`` (module docstring) over F with a certified gap.

    Parameters
    ----------
    S : SimpleStructure
    loss : RowLoss
        The smooth (possibly smoothed) per-row loss.
    Xt : ndarray (n, d)
        The clipped rows (with the intercept's column).
    y : ndarray (n,)
        The clipped labels (zeros without labels).
    feature_bound, label_bound : float
        The public ``R~`` (``||x~_i|| <= R~``) and ``B`` (``|y_i| <= B``): ``L`` is read at
        them.
    Delta : float
    b : ndarray (d,)
    m : float
        Public strong convexity of phi (``Delta + mu``), > 0.
    target_gap : float
        The certified ``phi(theta+) - phi*`` to reach.

    Returns
    -------
    (theta+, certified gap) or None
    """
    # inside a mechanism: a numerical failure (a factorisation, a non-finite value) depends
    # on the private rows, so it neither raises nor warns -- None, and the caller solves with
    # CVXPY
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            return _newton(S, loss, Xt, y, feature_bound=feature_bound,
                           label_bound=label_bound, Delta=Delta, b=b, m=m,
                           target_gap=target_gap)
        except (np.linalg.LinAlgError, ValueError, ArithmeticError):
            return None
