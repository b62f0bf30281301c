"""Gaussian differential privacy (mu-GDP): exact composition of Gaussian steps.

A Gaussian mechanism whose (Mahalanobis) sensitivity over its noise scale is t = D/sigma is exactly
t-GDP, and T such steps -- adaptively chosen -- compose to exactly mu-GDP with
mu = sqrt(sum_k t_k^2) (Dong, Roth & Su 2022, Cor. 3.3).  mu-GDP is equivalent to the family of
(epsilon, delta(epsilon))-DP guarantees

    delta(eps) = Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu),

the same curve as one Gaussian step with t = mu (Lu et al. 2024, Lemma 2 / NDIS with equal
covariances).  This is tighter than composing in zCDP (rho = sum t_k^2 / 2) and converting: at
T = 100 steps, (epsilon, delta) = (1, 1e-5), sensitivity 1, the GDP route needs sigma = 37.31, zCDP
with the Canonne-Kamath-Steinke conversion 40.45.

:func:`gdp_record` builds the :class:`~cvxdp.privacy.accountant.PrivacyRecord` of a Gaussian step
with its exact GDP parameter in ``params["gdp_mu"]`` (and its zCDP bound mu^2/2, so the existing
accountant keeps working); :func:`compose_gdp_records` is the composition route that uses it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np
from scipy import optimize

from cvxdp.citations import GDP_COMPOSITION, GDP_GAUSSIAN, NDIS, cite
from cvxdp.errors import BudgetError
from cvxdp.privacy.accountant import PrivacyRecord, compose
from cvxdp.privacy.budgets import ZCDP, ApproxDP, check_delta, check_epsilon, check_finite
from cvxdp.privacy.calibration import cached_calibration
from cvxdp.privacy.gdp_curve import check_mu, gdp_delta, gdp_epsilon
from cvxdp.privacy.ndis import gaussian_loss_delta

__all__ = [
    "gdp_delta",
    "gdp_epsilon",
    "gdp_mu",
    "compose_gdp",
    "gdp_sigma",
    "gdp_record",
    "compose_gdp_records",
    "mahalanobis_sensitivity",
    "calibrate_mahalanobis",
    "GDP_REFERENCE",
]

GDP_REFERENCE = f"{GDP_GAUSSIAN}; {GDP_COMPOSITION}; {cite(NDIS, 'Lemma 2')}"


@cached_calibration
def gdp_mu(*, epsilon: float, delta: float) -> float:
    """Largest mu such that mu-GDP implies (epsilon, delta)-DP (exact, rounded down)."""
    eps = check_epsilon(epsilon)
    delta = check_delta(delta)
    if delta == 0:
        raise BudgetError("mu-GDP with mu > 0 is never (epsilon, 0)-DP; give delta > 0.")
    f = lambda lm: math.log(max(gaussian_loss_delta(math.exp(lm), eps), 1e-320)) - math.log(delta)  # noqa: E731
    lo, hi = -5.0, 1.0
    while f(lo) > 0:
        lo -= 5.0
    while f(hi) < 0:
        hi += 1.0
    mu = math.exp(optimize.brentq(f, lo, hi, xtol=1e-15, rtol=1e-14, maxiter=500))
    while gaussian_loss_delta(mu, eps) > delta:  # round down until the guarantee holds
        mu = float(np.nextafter(mu * (1 - 1e-13), 0.0))
    return mu


def compose_gdp(mus: Iterable[float]) -> float:
    """mu of the (adaptive) composition of mu_k-GDP steps: ``sqrt(sum mu_k^2)`` (Cor. 3.3)."""
    arr = np.asarray([check_mu(m) for m in mus], dtype=float)
    return float(np.sqrt(np.sum(arr**2)))


def gdp_sigma(*, epsilon: float, delta: float, steps: int = 1, sensitivity: float = 1.0) -> float:
    """Noise sigma so that ``steps`` Gaussian steps of l2 sensitivity D are jointly (eps, delta)-DP.

    ``sigma = D sqrt(steps) / mu*(epsilon, delta)`` with mu* from :func:`gdp_mu`; exact (no
    slack) for Gaussian steps under any adaptive composition.

    References
    ----------
    Dong, Roth & Su 2022, Cor. 3.3; Lu, Magdon-Ismail, Wei & Zikas (2024).
    """
    if int(steps) != steps or steps < 1:
        raise BudgetError(f"steps must be an integer >= 1, got {steps!r}.")
    D = check_finite("sensitivity", sensitivity)
    if D <= 0:
        raise BudgetError(f"sensitivity must be > 0, got {sensitivity!r}.")
    return D * math.sqrt(int(steps)) / gdp_mu(epsilon=epsilon, delta=delta)


def gdp_record(*, sigma: float, sensitivity: float, delta: float | None = None,
               count: int = 1, mechanism: str = "gaussian", reference: str = GDP_REFERENCE,
               **params: Any) -> PrivacyRecord:
    """Record of a Gaussian step N(0, sigma^2 I) on a value of l2 (or Mahalanobis) sensitivity D.

    ``params["gdp_mu"] = D / sigma`` marks the step as exactly mu-GDP for
    :func:`compose_gdp_records`; ``zcdp = mu^2 / 2`` keeps the plain accountant sound.  The
    budget is ``ApproxDP(exact epsilon at delta, delta)`` when ``delta`` is given, else the zCDP
    bound.

    References
    ----------
    Dong, Roth & Su 2022, Thm 2.7; Bun & Steinke 2016, Prop. 1.6.
    """
    sigma = check_finite("sigma", sigma)
    D = check_finite("sensitivity", sensitivity)
    if sigma <= 0 or D <= 0:
        raise BudgetError(f"sigma and sensitivity must be > 0, got {sigma!r}, {sensitivity!r}.")
    mu = D / sigma
    z = ZCDP(mu**2 / 2)
    budget: ApproxDP | ZCDP = z
    if delta is not None:
        budget = ApproxDP(max(gdp_epsilon(mu=mu, delta=delta), 1e-300), delta)
    return PrivacyRecord(mechanism, budget, reference, zcdp=z, count=count,
                         params={"sigma": sigma, "sensitivity": D, "gdp_mu": mu, **params})


def compose_gdp_records(records: Iterable[PrivacyRecord], *, delta: float) -> ApproxDP:
    """Tightest (epsilon, delta) of a ledger using exact GDP composition of its Gaussian steps.

    Records with ``params["gdp_mu"]`` (from :func:`gdp_record`) are composed exactly in GDP,
    ``mu = sqrt(sum count * mu_k^2)``.  When other steps are present the result is the better of
    (a) :func:`cvxdp.privacy.accountant.compose` (zCDP route, GDP steps as rho = mu^2/2) and
    (b) splitting delta between the GDP block and the rest and adding epsilons.  (b) is sound for
    interleaved adaptive steps because adaptive composition is bounded by the tensor product of
    the steps' trade-off functions, which is commutative and associative (Dong, Roth & Su 2022,
    Thm 3.2, Prop. 3.1), and basic composition holds for tensor products.

    Parameters
    ----------
    records : iterable of PrivacyRecord
    delta : float
        Total delta, ``0 < delta < 1``.

    Returns
    -------
    ApproxDP
    """
    recs = list(records)
    delta = check_delta(delta)
    if not recs:
        raise BudgetError("nothing to compose: no privacy records.")
    if delta == 0:
        raise BudgetError("GDP composition needs delta > 0.")
    gauss = [r for r in recs if "gdp_mu" in r.params]
    rest = [r for r in recs if "gdp_mu" not in r.params]
    mu = math.sqrt(sum(r.count * float(r.params["gdp_mu"]) ** 2 for r in gauss))
    if not rest:
        return ApproxDP(max(gdp_epsilon(mu=mu, delta=delta), 1e-300), delta)
    best = compose(recs, notion="approx", delta=delta).epsilon
    if gauss:
        for frac in np.geomspace(1e-3, 1 - 1e-3, 25):
            try:
                e_rest = compose(rest, notion="approx", delta=delta * (1 - frac)).epsilon
            except BudgetError:
                continue
            best = min(best, gdp_epsilon(mu=mu, delta=delta * frac) + e_rest)
    return ApproxDP(best, delta)


def mahalanobis_sensitivity(shift: Any, cov: Any) -> float:
    """t = ||cov^{-1/2} shift||_2: the Gaussian-DP parameter of N(0, cov) noise for a mean shift.

    ``shift`` may be one vector (d,) or several (k, d) (e.g. the vertices of a sensitivity
    polytope); the largest t is returned.  ``cov`` must be positive definite.

    References
    ----------
    Lu, Magdon-Ismail, Wei & Zikas (2024), Theorem 1 with Sigma1 = Sigma2.
    """
    c = np.atleast_2d(np.asarray(cov, dtype=float))
    v = np.atleast_2d(np.asarray(shift, dtype=float))
    if c.shape != (v.shape[1], v.shape[1]) or not np.all(np.isfinite(c)) or not np.all(
            np.isfinite(v)):
        raise BudgetError(f"shift must have shape (d,) or (k, d) and cov (d, d), finite; got "
                          f"{np.shape(shift)} and {np.shape(cov)}.")
    try:
        chol = np.linalg.cholesky((c + c.T) / 2)
    except np.linalg.LinAlgError:
        raise BudgetError("cov must be positive definite for a Mahalanobis sensitivity.") from None
    w = np.linalg.solve(chol, v.T)
    return float(np.max(np.linalg.norm(w, axis=0)))


def calibrate_mahalanobis(*, epsilon: float, delta: float, shift: Any, cov: Any,
                          steps: int = 1) -> float:
    """Smallest scale c such that adding N(0, c^2 cov) noise, ``steps`` times, to a value whose
    neighbouring change is any row of ``shift`` is (epsilon, delta)-DP (exact).

    c = t sqrt(steps) / mu*(epsilon, delta) with t = :func:`mahalanobis_sensitivity`; for
    ``cov = I`` this is the analytic Gaussian sigma.  Anisotropic (e.g. symmetric-matrix or
    preconditioned) noise is calibrated exactly this way.

    References
    ----------
    Lu et al. (2024), Theorem 1, Lemma 2, Prop. 6; Dong, Roth & Su 2022, Cor. 3.3.
    """
    t = mahalanobis_sensitivity(shift, cov)
    if t == 0:
        raise BudgetError("the shift is zero: the release does not depend on the data.")
    return gdp_sigma(epsilon=epsilon, delta=delta, steps=steps, sensitivity=t)
