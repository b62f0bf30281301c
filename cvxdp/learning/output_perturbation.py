"""Output perturbation for row-level models with a strongly convex public regulariser.

Released: ``Pi_F(theta* + b)``, ``theta*`` the exact minimiser of the model on the clipped rows
(one CVXPY solve), ``b`` noise, ``Pi_F`` the exact Euclidean projection onto the public
constraint set (a second CVXPY solve; post-processing).

Sensitivity (Chaudhuri, Monteleoni & Sarwate 2011, Cor. 8, in the sum form): if the objective
without one row is ``mu``-strongly convex on F and one row's loss is ``zeta``-Lipschitz in
``theta`` (``zeta = L R~``), adding a row moves the minimiser by at most ``zeta / mu`` and
replacing one by at most ``2 zeta / mu``.  The noise is the analytic Gaussian (Balle & Wang
2018, Thm 8) for (epsilon, delta), ``sigma = D / sqrt(2 rho)`` for zCDP, or the density
``exp(-epsilon ||b|| / D)`` for pure DP (Chaudhuri et al. 2011, Alg. 1); with delta > 0 both
are planned and the one whose norm's (1 - beta)-quantile is smaller runs (an epsilon-DP release
is (epsilon, delta)-DP).

Utility (probability ``>= 1 - beta``): ``||theta^ - theta*|| <= ||b||`` (projection onto a
convex set containing theta* is non-expansive), so ``F(theta^) - F* <= (n zeta + L_R) ||b||_beta``
with ``L_R`` the regulariser's Lipschitz constant on the domain
(:func:`cvxdp.learning.domain.regulariser_lipschitz`).

References
----------
K. Chaudhuri, C. Monteleoni, A. D. Sarwate, "Differentially Private Empirical Risk
Minimization", JMLR 12 (2011), Alg. 1 and Cor. 8.  B. Balle, Y.-X. Wang, ICML 2018, Thm 8.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from cvxdp.citations import ANALYTIC_GAUSSIAN
from cvxdp.errors import UnsupportedProblemError
from cvxdp.learning.detect import RowModel
from cvxdp.learning.domain import Projector, regulariser_lipschitz, solve_on_rows
from cvxdp.privacy.accountant import PrivacyRecord
from cvxdp.privacy.budgets import ZCDP, PureDP
from cvxdp.privacy.mechanisms import gaussian_noise

__all__ = ["OUTPUT_REFERENCE", "OutputPlan", "plan_output_perturbation", "output_perturbation"]

OUTPUT_REFERENCE = (
    "Chaudhuri, Monteleoni & Sarwate 2011, 'Differentially Private Empirical Risk "
    f"Minimization' (JMLR), Alg. 1 / Cor. 8 (argmin sensitivity zeta/mu); {ANALYTIC_GAUSSIAN}")


@dataclass(frozen=True)
class OutputPlan:
    zeta: float
    sensitivity: float
    sigma: float | None
    gamma_scale: float | None
    bound: float
    record: PrivacyRecord | None = None  # the Gaussian step's (None: the pure-DP gamma noise)

    def info(self) -> dict[str, Any]:
        return {"lipschitz_zeta": self.zeta, "argmin_sensitivity": self.sensitivity,
                "noise_sigma": self.sigma, "noise_gamma_scale": self.gamma_scale}


def plan_output_perturbation(model: RowModel, budget: Any, W: float, *,
                             beta: float) -> OutputPlan:
    """Public constants (module docstring); raises when the mechanism does not apply."""
    if model.mu <= 0:
        raise UnsupportedProblemError(
            "output perturbation needs a strongly convex public regulariser on every model "
            "coefficient (e.g. + lam * cp.sum_squares(w), and the intercept's too).")
    R, B, n, d = model.feature_bound, model.label_bound, model.n, model.dim
    L = model.loss.lipschitz(R * W, B)
    if not math.isfinite(L):
        raise UnsupportedProblemError(
            "the loss's gradient is unbounded on the constraint set: add a public norm-ball "
            f"or box constraint on {model.w.name()}, or a ridge or norm penalty on all of it "
            "(whose minimiser's ball is then used).")
    zeta = L * R
    D = (2.0 if model.spec.neighbours == "replace" else 1.0) * zeta / model.mu
    sigma = gamma_scale = record = None
    bnorm = math.inf
    if isinstance(budget, ZCDP) or getattr(budget, "delta", 0.0) > 0:
        sigma, record = gaussian_noise(budget, sensitivity=D, ledger="gdp",
                                       mechanism="output_perturbation",
                                       reference=OUTPUT_REFERENCE)
        bnorm = sigma * math.sqrt(float(stats.chi2.isf(beta, d)))
    if not isinstance(budget, ZCDP):
        # the pure-DP density exp(-epsilon ||b|| / D): epsilon-DP, hence (epsilon, delta)-DP
        # too; it is planned beside the Gaussian and the smaller (1 - beta)-quantile of the
        # noise's norm is kept (at large epsilon the Gaussian's scale falls like 1/sqrt(eps),
        # the Gamma norm's like 1/eps)
        pure = float(stats.gamma.isf(beta, d, scale=D / budget.epsilon))
        if pure < bnorm:
            sigma, record, gamma_scale, bnorm = None, None, D / budget.epsilon, pure
    lip = n * zeta + regulariser_lipschitz(model, W) if math.isfinite(W) else math.inf
    bound = lip * bnorm if math.isfinite(lip) else math.inf
    return OutputPlan(zeta, D, sigma, gamma_scale, bound, record)


def output_perturbation(model: RowModel, plan: OutputPlan, budget: Any, X: np.ndarray,
                        y: np.ndarray | None, gen: np.random.Generator, *,
                        solver: str | None = None
                        ) -> tuple[np.ndarray, PrivacyRecord, dict[str, Any]]:
    """Exact solve, noise, exact projection; returns (theta^, record, info)."""
    exact, status = solve_on_rows(model, model.loss, X, y, solver=solver)
    d = model.dim
    if plan.sigma is not None:
        noisy = exact + gen.normal(0.0, plan.sigma, size=d)
        record = plan.record
    else:
        direction = gen.standard_normal(d)
        direction /= np.linalg.norm(direction)
        noisy = exact + gen.gamma(d, plan.gamma_scale) * direction
        record = PrivacyRecord("output_perturbation", PureDP(budget.epsilon), OUTPUT_REFERENCE,
                               params={"gamma_scale": plan.gamma_scale,
                                       "sensitivity": plan.sensitivity})
    released = Projector(model, with_regulariser=False, solver=solver).step(noisy) \
        if model.constraints else noisy
    del status  # a solver failure is not reported: it would depend on the data
    return released, record, plan.info()
