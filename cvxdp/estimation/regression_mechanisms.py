"""The least-squares mechanisms behind ``LeastSquaresProblem.solve_private`` (see
:mod:`cvxdp.estimation.regression`): sufficient-statistics perturbation (a noisy Gram matrix),
the M_RP sketch, M_LS / M_ALS, the post-processing fit of the released quadratic, and the
release's privacy report.

References
----------
Sheffet 2017; Wang 2018 (sufficient-statistics perturbation); Lu, Magdon-Ismail, Wei & Zikas
(2024), Fig. 3 / Thm 3 (rp), Fig. 4 / Thm 5 (ls), Fig. 11 (als).
"""

from __future__ import annotations

import math
from typing import Any

import cvxpy as cp
import numpy as np

from cvxdp.citations import ANALYTIC_GAUSSIAN
from cvxdp.errors import BudgetError, InfeasibleProblemError
from cvxdp.estimation.random_projection import (
    PAPER,
    als_release,
    ls_release,
    ls_sigma,
    random_projection,
)
from cvxdp.privacy.accountant import PrivacyAccountant, PrivacyRecord, PrivacyReport
from cvxdp.privacy.budgets import ZCDP, ApproxDP
from cvxdp.privacy.gdp import compose_gdp_records
from cvxdp.privacy.mechanisms import gaussian_noise
from cvxdp.privacy.neighbours import AddRemoveOne

__all__ = ["MECHANISMS", "THEOREMS", "SSP_REFERENCE", "Surrogate", "noisy_gram", "noisy_gram_of",
           "ssp_release", "rp_release", "fit_surrogate", "ls_or_als_release", "release_report",
           "split_budget", "neighbouring"]

MECHANISMS = {"ssp": "dp", "rp": "dp", "ls": "conjectural", "als": "asymptotic"}
SSP_REFERENCE = (
    "Sufficient-statistics perturbation (Sheffet 2017; Wang 2018) with the analytic Gaussian "
    f"({ANALYTIC_GAUSSIAN}); sensitivity ||v v^T||_F = ||v||^2 <= l^2 under add/remove"
)
THEOREMS = {
    "ssp": SSP_REFERENCE,
    "rp": f"{PAPER}, Thm 3 (M_RP) + post-processing (OLS on the sketch, Table II)",
    "ls": f"{PAPER}, Fig. 4 and Thm 5 -- conditional on the unproven monotonicity of delta_ALS",
    "als": f"{PAPER}, Fig. 11 and Lemma 1 -- private only asymptotically in the sketch size r",
}


def neighbouring(bound: float) -> str:
    return (AddRemoveOne(f"row (x_i, y_i), ||(x_i, y_i)||_2 <= {bound:g} (public; larger rows "
                         "clipped)").describe())



def noisy_gram(data: np.ndarray, sigma: float, gen: np.random.Generator) -> np.ndarray:
    """``data^T data + W``, W symmetric with diagonal N(0, sigma^2) and off-diagonal
    N(0, sigma^2/2): isotropic N(0, sigma^2 I) in the svec isometry (<X, Y> = tr XY), so the l2
    sensitivity of the Gram matrix under add/remove of a row v is ``||v v^T||_F = ||v||^2``."""
    return noisy_gram_of(data.T @ data, sigma, gen)


def noisy_gram_of(gram: np.ndarray, sigma: float, gen: np.random.Generator) -> np.ndarray:
    """:func:`noisy_gram` from the exact Gram matrix ``gram = data^T data`` (the same noise
    draws): the Dask path computes ``gram`` chunk-wise on the workers
    (:func:`cvxdp.dask_backend.regression.gram_and_count`) and adds the noise here, on the
    client."""
    m = gram.shape[0]
    z = gen.standard_normal((m, m))
    return gram + sigma * (z + z.T) / 2.0


Surrogate = tuple[np.ndarray, np.ndarray, float]  # (Q, q, c0): ||X b - y||^2 ~ b'Qb - 2q'b + c0


def ssp_release(data: np.ndarray | None, budget: Any, bound: float, gen: np.random.Generator,
         exact_gram: np.ndarray | None = None
         ) -> tuple[Surrogate, PrivacyRecord, dict[str, Any]]:
    """SSP on the mapped rows ``data``, or on their exact Gram matrix ``exact_gram`` (the Dask
    path's reduction); the noise and everything after it are the same."""
    sens = bound**2
    sigma, record = gaussian_noise(budget, sensitivity=sens, ledger="gdp",
                                   mechanism="gaussian_gram", reference=SSP_REFERENCE)
    gram = noisy_gram(data, sigma, gen) if exact_gram is None else noisy_gram_of(
        exact_gram, sigma, gen)
    d = gram.shape[0] - 1
    lam, u = np.linalg.eigh(gram[:d, :d])
    floor = sigma * math.sqrt(2.0 * d)  # typical spectral norm of the noise block
    q_mat = (u * np.maximum(lam, floor)) @ u.T
    info = {"sigma": sigma, "eigenvalue_floor": floor, "noisy_gram": gram}
    return (q_mat, gram[:d, d], float(gram[d, d])), record, info


def rp_release(data: np.ndarray, budget: Any, bound: float, gen: np.random.Generator, r: int
        ) -> tuple[Surrogate, PrivacyRecord, dict[str, Any]]:
    sketch, record = random_projection(data, epsilon=budget.epsilon, delta=budget.delta, r=r,
                                       row_bound=bound, rng=gen)
    d = data.shape[1] - 1
    sx, sy = sketch[:d], sketch[d]
    surrogate = (sx @ sx.T / r, sx @ sy / r, float(sy @ sy) / r)
    return surrogate, record, {"sigma": record.params["sigma"], "r": r}


def fit_surrogate(surrogate: Surrogate, variable: cp.Variable | None, constraints: list[Any]
         ) -> tuple[np.ndarray, float]:
    """Minimise the released quadratic b'Qb - 2q'b + c0 (post-processing), under the user's
    public constraints if any; returns (coef, estimated objective)."""
    q_mat, q_vec, c0 = surrogate
    if not constraints:
        coef = np.linalg.lstsq(q_mat, q_vec, rcond=None)[0]
    else:
        obj = cp.quad_form(variable, cp.psd_wrap(q_mat)) - 2 * q_vec @ variable
        prob = cp.Problem(cp.Minimize(obj), constraints)
        prob.solve()
        if prob.status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE):
            raise InfeasibleProblemError(
                f"the public constraints give status {prob.status!r} on the private surrogate; "
                "check that they are feasible.")
        coef = np.asarray(variable.value, dtype=float)
    return coef, float(coef @ q_mat @ coef - 2 * q_vec @ coef + c0)


def ls_or_als_release(data: np.ndarray, budget: Any, bound: float, gen: np.random.Generator, r: int,
               mechanism: str) -> tuple[np.ndarray, PrivacyRecord, dict[str, Any], float | None]:
    d = data.shape[1] - 1
    sigma = ls_sigma(epsilon=budget.epsilon, delta=budget.delta, r=r, d=d, row_bound=bound)
    record = PrivacyRecord(f"M_{mechanism.upper()}", budget, THEOREMS[mechanism],
                           params={"sigma": sigma, "r": r, "row_bound": bound,
                                   "guarantee": MECHANISMS[mechanism]})
    release = als_release if mechanism == "als" else ls_release
    return release(data, sigma, r, gen), record, {"sigma": sigma, "r": r}, None


def release_report(budget: Any, records: list[PrivacyRecord], mechanism: str, bound: float,
            info: dict[str, Any]) -> PrivacyReport:
    """The report of the release (the mechanism, then the opt-in noisy count).  Gaussian steps
    carry their exact GDP parameter and are composed by
    :func:`cvxdp.privacy.gdp.compose_gdp_records` (the plain accountant would go through zCDP +
    CKS, which is looser than the analytic Gaussian for one step)."""
    kw = {"theorem": THEOREMS[mechanism], "neighbouring": neighbouring(bound),
          "guarantee": MECHANISMS[mechanism], "details": {"mechanism": mechanism, **info}}
    if not isinstance(budget, ZCDP) and "gdp_mu" in records[0].params:
        spent = compose_gdp_records(records, delta=budget.delta)
        if spent.epsilon > budget.epsilon * (1 + 1e-9):  # calibration bug guard
            raise BudgetError(f"internal: release spends {spent!r} > {budget!r}.")
        rho = (sum(r.zcdp.rho for r in records)
               if all(r.zcdp is not None for r in records) else None)
        return PrivacyReport(epsilon=spent.epsilon, delta=spent.delta, rho=rho,
                             records=tuple(records), **kw)
    acct = PrivacyAccountant(budget)
    for record in records:
        acct.spend(record)
    return acct.report(**kw)


def split_budget(budget: Any, share: float) -> tuple[Any, dict[str, float]]:
    """(the mechanism's budget, the noisy count's budget as noisy_count kwargs): a share of rho
    (Gaussian count, zCDP) or of epsilon (Laplace count, pure DP, added by basic composition,
    Dwork & Roth Thm 3.16); the total stays ``budget``."""
    if share <= 0:
        return budget, {}
    if isinstance(budget, ZCDP):
        return ZCDP(budget.rho * (1 - share)), {"rho": budget.rho * share}
    return (ApproxDP(budget.epsilon * (1 - share), budget.delta),
            {"epsilon": budget.epsilon * share})

