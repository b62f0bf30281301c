"""Calibration of objective perturbation: the epsilon split, the Delta term and the noise.

The mechanism releases ``theta^ = argmin_{theta in F} sum_i l(theta; d_i) + r(theta)
+ Delta/2 ||theta||^2 + b' theta`` (F and r public, convex).  Its privacy rests on two
constants of one row's loss on F: ``zeta >= ||grad l||`` and ``lambda >=`` the largest
eigenvalue of ``hess l``, a matrix of rank at most one (a loss of ``x' theta``: ``l'' x x'``).
With ``mu`` the strong convexity of r, the output's density changes between neighbours by

1. the Jacobian of the map from ``b`` to ``theta^``: at most ``1 + lambda / (Delta + mu)``
   either way (the two Hessians differ by rank-one PSD terms; matrix determinant lemma against
   their common part, which is ``>= (Delta + mu) I`` -- once, for replace-one as for
   add/remove).  ``Delta = max(0, lambda / (e^eps1 - 1) - mu)`` makes it ``e^eps1``
   (:func:`jacobian_delta`);
2. the noise density at ``b`` and ``b + g``, ``g`` the change of one row's gradient: in the
   span of the one (add/remove, ``k = 1``) or two (replace-one, ``k = 2``) rows' features,
   ``||g|| <= G = zeta`` (add/remove) or ``2 zeta`` (replace-one).  Gaussian ``b ~ N(0,
   sigma^2 I)``: the log-ratio ``(2 <b, g> + ||g||^2) / (2 sigma^2)`` is at most
   ``q t + t^2 / 2``, ``t = G / sigma``, outside ``||P_S b|| > q sigma`` (probability
   ``delta`` for ``q^2`` the ``1 - delta`` quantile of chi-square(k)); ``t = sqrt(q^2 + 2 eps2)
   - q`` makes it ``eps2`` (:func:`objpert_sigma`).  Pure DP: density ``exp(-eps2 ||b|| / G)``,
   log-ratio ``<= eps2 ||g|| / G <= eps2`` (norm ``Gamma(d, G / eps2)``).

Together ``(eps1 + eps2, delta)``-DP.  This is the proof of Kifer, Smith & Thakurta (2012,
Thm 2) with the exact chi-square tail in place of their closed form ``sigma^2 = zeta^2
(8 log(2/delta) + 4 eps) / eps^2`` (:func:`kst_sigma`, never smaller), and the Jacobian cost
counted once for replace-one where Chaudhuri, Monteleoni & Sarwate (2011, Thm 9) count it twice
(``eps - 2 log(1 + c/(n Lambda))``).

References
----------
K. Chaudhuri, C. Monteleoni, A. D. Sarwate, "Differentially Private Empirical Risk
Minimization", JMLR 12 (2011), Alg. 2 and Thm 9.  D. Kifer, A. Smith, A. Thakurta, "Private
Convex Empirical Risk Minimization and High-dimensional Regression", COLT 2012, Alg. 1 and
Thm 2.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from scipy import stats

from cvxdp.errors import BudgetError
from cvxdp.privacy.accountant import PrivacyRecord
from cvxdp.privacy.budgets import ApproxDP, PureDP

__all__ = ["OBJPERT_REFERENCE", "ObjPertCalibration", "calibrate_objective_perturbation",
           "jacobian_delta", "objpert_sigma", "kst_sigma"]

OBJPERT_REFERENCE = (
    "Kifer, Smith & Thakurta 2012, 'Private Convex Empirical Risk Minimization and "
    "High-dimensional Regression' (COLT), Alg. 1 / Thm 2 (Gaussian b, exact chi-square tail); "
    "Chaudhuri, Monteleoni & Sarwate 2011, 'Differentially Private Empirical Risk "
    "Minimization' (JMLR), Alg. 2 / Thm 9 (pure DP, Gamma-norm b)")


def _inv_expm1(x: float) -> float:
    """``1 / (e^x - 1)`` without overflow for large x."""
    return math.exp(-x) / -math.expm1(-x)


def jacobian_delta(*, hessian_bound: float, strong_convexity: float,
                   epsilon_jacobian: float) -> float:
    """``Delta = max(0, lambda / (e^eps1 - 1) - mu)``: the Jacobian factor
    ``1 + lambda / (Delta + mu)`` is then at most ``e^eps1`` (module docstring, step 1)."""
    if hessian_bound == 0:
        return 0.0
    if not epsilon_jacobian > 0:
        raise BudgetError("objective perturbation with a curved loss needs a positive share "
                          f"of epsilon for its Jacobian, got {epsilon_jacobian!r}.")
    Delta = max(0.0, hessian_bound * _inv_expm1(epsilon_jacobian) - strong_convexity)
    if not Delta + strong_convexity > 0 or not math.isfinite(
            hessian_bound / (Delta + strong_convexity)):
        # lambda / (e^eps1 - 1) underflows to 0 (eps1 >~ 745) with no strong convexity: the
        # factor 1 + lambda / (Delta + mu) is not bounded by the computed Delta
        raise BudgetError(f"the Jacobian's share of epsilon, {epsilon_jacobian!r}, is too large "
                          "to compute its ridge in floating point with no strong convexity; "
                          "give it a smaller share (at most log(1 + 1e12) is ever useful).")
    return Delta


def objpert_sigma(*, epsilon: float, delta: float, sensitivity: float, k: int) -> float:
    """Gaussian scale making the noise part (epsilon, delta)-DP: ``sigma = G / t``,
    ``t = sqrt(q^2 + 2 epsilon) - q``, ``q^2 = chi2.ppf(1 - delta, k)`` (module docstring,
    step 2); ``k`` the dimension of the span of the rows that differ."""
    if not (epsilon > 0 and 0 < delta < 1):
        raise BudgetError(f"objective perturbation's Gaussian part needs epsilon > 0 and "
                          f"0 < delta < 1, got {epsilon!r}, {delta!r}.")
    q = math.sqrt(float(stats.chi2.isf(delta, k)))
    t = math.sqrt(q * q + 2 * epsilon) - q
    return sensitivity / t


def kst_sigma(*, epsilon: float, delta: float, zeta: float) -> float:
    """Kifer, Smith & Thakurta (2012) Alg. 1's closed form ``zeta sqrt(8 log(2/delta) +
    4 epsilon) / epsilon`` (total epsilon, split in halves); for comparison."""
    return zeta * math.sqrt(8 * math.log(2 / delta) + 4 * epsilon) / epsilon


@dataclass(frozen=True)
class ObjPertCalibration:
    """Every privacy constant of one objective-perturbation release (public).

    Attributes
    ----------
    Delta : float
        The added ridge ``Delta/2 ||theta||^2``.
    eps_jacobian, eps_noise : float
        The two shares of epsilon (they sum to it).
    sensitivity : float
        ``G``: the largest change of one row's gradient.
    span : int
        ``k``: the dimension of the span that change lies in.
    sigma : float or None
        Gaussian scale of ``b`` (``delta > 0``).
    gamma_scale : float or None
        Pure DP: ``||b|| ~ Gamma(d, gamma_scale)``, uniform direction.
    budget : ApproxDP or PureDP
        What the release spends.
    """

    Delta: float
    eps_jacobian: float
    eps_noise: float
    sensitivity: float
    span: int
    sigma: float | None
    gamma_scale: float | None
    budget: Any

    def record(self, params: dict[str, Any] | None = None) -> PrivacyRecord:
        """The release's :class:`PrivacyRecord` (its budget is the calibrated one)."""
        return PrivacyRecord("objective_perturbation", self.budget, OBJPERT_REFERENCE,
                             params=dict(params or {}))


def calibrate_objective_perturbation(*, epsilon: float, delta: float, epsilon_jacobian: float,
                                     hessian_bound: float, strong_convexity: float,
                                     gradient_bound: float, neighbours: str
                                     ) -> ObjPertCalibration:
    """Delta and the noise of objective perturbation for ``(epsilon, delta)`` (module
    docstring; ``delta = 0``: pure DP).

    Parameters
    ----------
    epsilon, delta : float
        The release's budget.
    epsilon_jacobian : float
        ``eps1``, the share for the Jacobian (``0 <= eps1 < epsilon``; 0 only when
        ``hessian_bound == 0``); the noise gets ``epsilon - eps1``.
    hessian_bound : float
        ``lambda``: the largest eigenvalue of one row's (rank-one) Hessian on F.
    strong_convexity : float
        ``mu``: the public regulariser's.
    gradient_bound : float
        ``zeta``: the largest norm of one row's gradient on F.
    neighbours : {"replace", "add_remove"}

    Returns
    -------
    ObjPertCalibration
    """
    if neighbours not in ("replace", "add_remove"):
        raise BudgetError(f"neighbours must be 'replace' or 'add_remove', got {neighbours!r}.")
    if not (0 <= epsilon_jacobian < epsilon):
        raise BudgetError(f"the Jacobian's share of epsilon must be in [0, {epsilon!r}), got "
                          f"{epsilon_jacobian!r}.")
    Delta = jacobian_delta(hessian_bound=hessian_bound, strong_convexity=strong_convexity,
                           epsilon_jacobian=epsilon_jacobian)
    eps2 = epsilon - epsilon_jacobian
    replace = neighbours == "replace"
    G = (2.0 if replace else 1.0) * gradient_bound
    k = 2 if replace else 1
    if delta > 0:
        sigma = objpert_sigma(epsilon=eps2, delta=delta, sensitivity=G, k=k)
        return ObjPertCalibration(Delta, epsilon_jacobian, eps2, G, k, sigma, None,
                                  ApproxDP(epsilon, delta))
    return ObjPertCalibration(Delta, epsilon_jacobian, eps2, G, k, None, G / eps2,
                              PureDP(epsilon))
