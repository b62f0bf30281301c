"""Noisy proximal gradient descent: the general mechanism for convex Lipschitz row losses.

``theta_{t+1} = argmin_{theta in F} R(theta) + ||theta - (theta_t - eta (g_t + xi_t))||^2/(2 eta)``
with ``g_t = sum_i l'(p_i) x~_i`` the full (sub)gradient of the loss on the clipped rows and
``xi_t ~ N(0, sigma^2 I)``; each step is one exact CVXPY solve of the public part (the
regulariser and the constraints, compiled once).  Released: the average of
``theta_2 .. theta_{T+1}``.  Non-smooth losses need no smoothing here.

Privacy: one step releases a sum of per-row gradients, l2 sensitivity ``G = zeta`` (add/remove)
or ``2 zeta`` (replace); T adaptive Gaussian steps compose exactly in Gaussian DP (Dong, Roth &
Su 2022, Cor. 3.3): ``sigma = G sqrt(T) / mu(epsilon, delta)``
(:func:`cvxdp.privacy.gdp.gdp_sigma`), or ``G sqrt(T / (2 rho))`` for rho-zCDP.  The analysis
is the full-batch case of Bassily, Smith & Thakurta 2014 (Alg. 1, Thm 2.4).

Utility (probability ``>= 1 - beta``; ``D = 2 W`` the diameter bound, ``Gf = n zeta`` the loss
gradient bound): the prox inequality summed over the steps gives

    F(theta_bar) - F* <= [D^2/(2 eta) + eta (T Gf^2 + sigma^2 Q) + sigma D sqrt(2 T log(2/beta))
                          + Gf D] / T,

``Q`` the ``1 - beta/2`` quantile of chi-square(d T) (bounds ``sum ||xi_t||^2``), the third
term the sub-Gaussian martingale ``sum <xi_t, theta_t - theta*>`` (Azuma), the fourth the
shift between ``f(theta_1)`` and ``f(theta_{T+1})``.  ``eta = D / sqrt(2 (T Gf^2 + sigma^2 Q))``
minimises it.  All public.

References
----------
R. Bassily, A. Smith, A. Thakurta, "Private Empirical Risk Minimization: Efficient Algorithms
and Tight Error Bounds", FOCS 2014, Alg. 1 and Thm 2.4.  J. Dong, A. Roth, W. Su, "Gaussian
Differential Privacy", JRSS-B 2022, Cor. 3.3.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from cvxdp.citations import GDP_COMPOSITION
from cvxdp.errors import BudgetError, UnsupportedProblemError
from cvxdp.learning.detect import RowModel
from cvxdp.learning.domain import Projector, public_point
from cvxdp.privacy.accountant import PrivacyRecord
from cvxdp.privacy.budgets import ZCDP
from cvxdp.privacy.gdp import gdp_record, gdp_sigma

__all__ = ["GRADIENT_REFERENCE", "GradientPlan", "plan_noisy_gradient", "noisy_gradient",
           "DEFAULT_STEPS"]

GRADIENT_REFERENCE = (
    "Bassily, Smith & Thakurta 2014, 'Private Empirical Risk Minimization: Efficient "
    f"Algorithms and Tight Error Bounds' (FOCS), Alg. 1 (full batch); {GDP_COMPOSITION}: the "
    "T Gaussian steps compose exactly")

#: default number of steps T (public; each step is one exact CVXPY solve)
DEFAULT_STEPS = 100


@dataclass(frozen=True)
class GradientPlan:
    steps: int
    dl_bound: float         # L: public bound on |dl/dp| over the domain (rows' slopes clipped)
    zeta: float
    G: float
    sigma: float
    eta: float
    bound: float

    def info(self) -> dict[str, Any]:
        return {"steps": self.steps, "lipschitz_zeta": self.zeta, "step_sensitivity": self.G,
                "noise_sigma": self.sigma, "step_size": self.eta}


def plan_noisy_gradient(model: RowModel, budget: Any, W: float, *, beta: float,
                        steps: int = DEFAULT_STEPS) -> GradientPlan:
    """Public constants (module docstring); raises when the mechanism does not apply."""
    if not math.isfinite(W):
        raise UnsupportedProblemError(
            "noisy gradient descent needs a bounded public constraint set (its step size and "
            f"bound use the diameter): add a norm-ball or box constraint on {model.w.name()} "
            f"(or a ridge lam * cp.sum_squares({model.w.name()}), whose minimiser's ball is "
            "used).")
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
        raise UnsupportedProblemError(f"steps must be an integer >= 1, got {steps!r}.")
    if not isinstance(budget, ZCDP) and getattr(budget, "delta", 0.0) == 0:
        raise BudgetError("noisy gradient descent is a Gaussian mechanism: give delta > 0 or "
                          "rho=, or use mechanism='objective' / 'output' for pure DP.")
    R, B, n, d = model.feature_bound, model.label_bound, model.n, model.dim
    L = model.loss.lipschitz(R * W, B)
    zeta = L * R
    if zeta == 0:
        raise UnsupportedProblemError(f"the loss does not depend on {model.w.name()}: nothing "
                                      "to learn.")
    G = (2.0 if model.spec.neighbours == "replace" else 1.0) * zeta
    if isinstance(budget, ZCDP):
        sigma = G * math.sqrt(steps / (2 * budget.rho))
    else:
        sigma = gdp_sigma(epsilon=budget.epsilon, delta=budget.delta, steps=steps,
                          sensitivity=G)
    T, D, Gf = steps, 2 * W, n * zeta
    Q = float(stats.chi2.isf(beta / 2, d * T))
    eta = D / math.sqrt(2 * (T * Gf * Gf + sigma * sigma * Q)) if D > 0 else 1.0
    bound = (D * D / (2 * eta) + eta * (T * Gf * Gf + sigma * sigma * Q)
             + sigma * D * math.sqrt(2 * T * math.log(2 / beta)) + Gf * D) / T
    return GradientPlan(steps, L, zeta, G, sigma, eta, bound)


def _gradient(model: RowModel, X: np.ndarray, y: np.ndarray | None, th: np.ndarray,
              dl_bound: float) -> np.ndarray:
    """``sum_i l'(p_i) x~_i`` with each ``l'(p_i)`` clipped to ``[-dl_bound, dl_bound]``.

    On the domain ``|l'| <= L = dl_bound`` already; an iterate outside it by a solver's
    tolerance would exceed it, and the clip keeps one row's gradient within ``zeta = L R~``
    at every iterate (the step's sensitivity is then exact, not up to the tolerance).
    """
    w = th[:model.w.size]
    p = X @ w + (model.sign_v * th[-1] if model.v is not None else 0.0)
    yv = np.zeros_like(p) if y is None else y
    dl = np.clip(model.loss.derivative(p, yv), -dl_bound, dl_bound)
    g = X.T @ dl
    if model.v is not None:
        g = np.append(g, model.sign_v * float(np.sum(dl)))
    return g


def noisy_gradient(model: RowModel, plan: GradientPlan, budget: Any, X: np.ndarray,
                   y: np.ndarray | None, gen: np.random.Generator, *,
                   solver: str | None = None
                   ) -> tuple[np.ndarray, PrivacyRecord, dict[str, Any]]:
    """Run the T noisy prox steps; returns (the averaged iterate, record, info)."""
    prox = Projector(model, with_regulariser=True, solver=solver)
    th = public_point(model, solver)   # public start
    total = np.zeros(model.dim)
    for _ in range(plan.steps):
        g = _gradient(model, X, y, th, plan.dl_bound) + gen.normal(0.0, plan.sigma, size=model.dim)
        th = prox.step(th - plan.eta * g, plan.eta)
        total += th
    delta = None if isinstance(budget, ZCDP) else budget.delta
    record = gdp_record(sigma=plan.sigma, sensitivity=plan.G, delta=delta, count=plan.steps,
                        mechanism="noisy_gradient_step", reference=GRADIENT_REFERENCE)
    return total / plan.steps, record, plan.info()
