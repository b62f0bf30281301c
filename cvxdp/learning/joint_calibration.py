"""Objective perturbation's noise for a logistic row loss: the Jacobian and noise terms bounded
together (a tighter, proven calibration).

The privacy proof of objective perturbation (:mod:`cvxdp.privacy.objective_perturbation`;
Kifer, Smith & Thakurta 2012, Thm 2; Chaudhuri, Monteleoni & Sarwate 2011, Thm 9) bounds the
log density ratio of the output ``theta`` between neighbours by the sum of two terms, each at
its own worst case:

1. the Jacobian, ``log(1 + l''(z) ||x||^2 / (Delta + mu))`` with ``z`` the differing row's
   predictor at ``theta``;
2. the noise, a function ``N(||g||)`` of the change ``g`` of that row's gradient, ``||g|| <=
   (|l'(z)| + |l'(z')|) R`` (replace-one) or ``|l'(z)| R`` (add/remove).

Both terms are evaluated at the same ``z``.  For a loss with the *slope-curvature profile*

    l''(p) <= (4 beta / L^2) |l'(p)| (L - |l'(p)|)        (L = sup |l'|, beta = sup l''),

the curvature vanishes where the slope is largest.  One logistic piece ``c logistic(a_p p +
a_y y + a_yp y p + a_1)`` has it: with ``k = a_p + a_yp y``, ``|k| <= S`` (the slope bound),
``s`` the sigmoid, ``l'' = c s (1 - s) k^2 <= c s |k| (S - s |k|) = (4 beta / L^2) |l'|
(L - |l'|)`` (``L = c S``, ``beta = c S^2 / 4``).  With ``a = |l'(z)| / L`` in ``[0, 1]``
and ``kappa = lambda / (Delta + mu)`` (``lambda = beta R^2``) the log ratio is at most

    J(a) + N(a)      J(a) = log(1 + 4 kappa a (1 - a)),

``N(a) = eps2 (1 + a) / 2`` for the pure-DP noise of norm ``Gamma(d, 2 L R / eps2)``
(replace-one: ``||g|| <= (a + 1) L R``), ``eps2 a`` for add/remove (``Gamma(d, L R / eps2)``);
for Gaussian noise ``N(a) = q t(a) + t(a)^2 / 2`` with ``t(a) = (1 + a) L R / sigma``
(replace-one) or ``a L R / sigma`` (add/remove), outside the event ``||P_S b|| > q sigma`` of
probability ``delta`` (``q^2`` the ``1 - delta`` quantile of chi-square(k)), which does not
depend on ``a``.  The reverse ratio has ``-J`` in place of ``J`` and is at most ``N(1)``.
The release is ``(epsilon, delta)``-DP when ``max(sup_a J(a) + N(a), N(1)) <= epsilon``.
``sup_a`` is bounded rigorously from monotonicity, with no Lipschitz constant (which grows
like ``kappa = e^eps1 - 1`` and would exceed epsilon at large epsilon): ``J`` increases on
``[0, 1/2]`` and decreases on ``[1/2, 1]`` (``4 kappa a (1 - a)`` does, ``log1p`` is
increasing) and ``N`` is non-decreasing in ``a`` (``t >= 0`` grows with ``a``), so on a grid
cell ``[a_i, a_{i+1}]``

    J(a) + N(a) <= J(clip(1/2, a_i, a_{i+1})) + N(a_{i+1}),

and the largest of these over the cells bounds ``sup_a``.  At the separate analysis's noise
(``eps2 = epsilon - log(1 + kappa)``) every cell's bound is at most ``log(1 + kappa) + N(1) =
epsilon`` (``J <= J(1/2) = log(1 + kappa)``, ``N <= N(1)``), so it is certified up to
floating-point rounding; the noise scale is the smallest one (bisection) meeting the bound,
and when even the separate scale is not certified (rounding) :func:`joint_calibration`
raises :class:`~cvxdp.errors.BudgetError` and the planner keeps the separate analysis, which
is valid by Kifer, Smith & Thakurta (2012, Thm 2) alone.

References
----------
K. Chaudhuri, C. Monteleoni, A. D. Sarwate, "Differentially Private Empirical Risk
Minimization", JMLR 12 (2011), Thm 9.  D. Kifer, A. Smith, A. Thakurta, "Private Convex
Empirical Risk Minimization and High-dimensional Regression", COLT 2012, Thm 2.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from cvxdp.errors import BudgetError
from cvxdp.learning.loss import RowLoss
from cvxdp.privacy.budgets import ApproxDP, PureDP
from cvxdp.privacy.objective_perturbation import ObjPertCalibration

__all__ = ["has_slope_curvature_profile", "joint_loss_bound", "joint_calibration"]

#: grid cells on [0, 1] for the supremum over ``a`` (a finer grid only tightens the bound)
GRID = 20_000
#: bisection steps for the noise scale (relative precision 2^-40)
BISECT = 40


def has_slope_curvature_profile(loss: RowLoss) -> bool:
    """True when the loss is one logistic piece (module docstring: the profile is proven for
    it); any other piece (even a linear one) can move the slope without the curvature."""
    return len(loss.pieces) == 1 and loss.pieces[0].kind == "logistic"


def _noise(a: np.ndarray, scale: float, *, delta: float, q: float, replace: bool
           ) -> tuple[np.ndarray, float]:
    """``N(a)`` and a bound on its slope in ``a``; ``scale`` is ``eps2`` (pure) or
    ``tau = L R / sigma`` (Gaussian)."""
    frac = (1.0 + a) / 2.0 if replace else a
    if delta == 0:
        return scale * frac, scale * (0.5 if replace else 1.0)
    t = (1.0 + a) * scale if replace else a * scale
    tmax = 2.0 * scale if replace else scale
    return q * t + t * t / 2.0, scale * (q + tmax)


def joint_loss_bound(kappa: float, scale: float, *, delta: float, q: float, replace: bool,
                     grid: int = GRID) -> float:
    """A proven upper bound on ``max(sup_a J(a) + N(a), N(1))`` (module docstring)."""
    a = np.linspace(0.0, 1.0, grid + 1)
    return _bound(a, _cell_jacobian(a, kappa), scale, delta=delta, q=q, replace=replace)


def _cell_jacobian(a: np.ndarray, kappa: float) -> np.ndarray:
    """``max J`` on each cell ``[a_i, a_{i+1}]``: ``J`` at the cell's point nearest 1/2 (``J``
    is unimodal with its peak at 1/2)."""
    peak = np.clip(0.5, a[:-1], a[1:])
    return np.log1p(4.0 * kappa * peak * (1.0 - peak))


def _bound(a: np.ndarray, Jcell: np.ndarray, scale: float, *, delta: float, q: float,
           replace: bool) -> float:
    """``max(max_i Jcell_i + N(a_{i+1}), N(1))``: ``N`` is non-decreasing in ``a``."""
    N, _ = _noise(a, scale, delta=delta, q=q, replace=replace)
    top = float(np.max(Jcell + N[1:]))
    return max(top, float(N[-1]))


def joint_calibration(*, epsilon: float, delta: float, Delta: float, hessian_bound: float,
                      strong_convexity: float, gradient_bound: float, neighbours: str
                      ) -> ObjPertCalibration:
    """The noise for ridge ``Delta`` under the joint analysis (module docstring).

    ``gradient_bound`` is ``zeta = L R``; ``hessian_bound`` ``lambda = beta R^2``.  The
    calibration's ``eps_noise`` is the noise's own epsilon at the largest gradient change
    (``N(1)``) and ``eps_jacobian`` the rest of ``epsilon``; the budget is ``(epsilon,
    delta)``.
    """
    replace = neighbours == "replace"
    kappa = hessian_bound / (Delta + strong_convexity)
    k = 2 if replace else 1
    q = math.sqrt(float(stats.chi2.isf(delta, k))) if delta > 0 else 0.0
    G = (2.0 if replace else 1.0) * gradient_bound

    a = np.linspace(0.0, 1.0, GRID + 1)
    Jcell = _cell_jacobian(a, kappa)

    def ok(scale: float) -> bool:
        return _bound(a, Jcell, scale, delta=delta, q=q, replace=replace) <= epsilon

    # the separate analysis's scale is feasible (J <= log(1 + kappa)): start there
    e2 = epsilon - math.log1p(kappa)
    if delta == 0:
        lo, hi = max(e2, 0.0), epsilon
    else:
        t = math.sqrt(q * q + 2 * e2) - q if e2 > 0 else 0.0
        lo = t / (2.0 if replace else 1.0)                 # tau = t L R / G
        t_max = math.sqrt(q * q + 2 * epsilon) - q
        hi = t_max / (2.0 if replace else 1.0)
    if not (lo > 0 and ok(lo)):
        # only by floating-point rounding (module docstring): the caller keeps the separate
        # analysis, valid on its own
        raise BudgetError("the joint analysis does not certify the separate analysis's noise "
                          f"at epsilon={epsilon!r}, Delta={Delta!r}; use the separate one.")
    for _ in range(BISECT):
        mid = (lo + hi) / 2
        if ok(mid):
            lo = mid
        else:
            hi = mid
    if delta == 0:
        return ObjPertCalibration(Delta, epsilon - lo, lo, G, k, None, G / lo,
                                  PureDP(epsilon))
    sigma = gradient_bound / lo
    t1 = G / sigma
    n1 = q * t1 + t1 * t1 / 2
    return ObjPertCalibration(Delta, max(epsilon - n1, 0.0), n1, G, k, sigma, None,
                              ApproxDP(epsilon, delta))
