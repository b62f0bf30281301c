"""The two basic mechanisms every solver uses: Gaussian (vectors, l2) and exponential.

Each returns ``(output, record)``; when an ``accountant`` is given the record is spent from it
first, so an over-budget call raises :class:`cvxdp.BudgetError` *before* any noise is drawn.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from cvxdp.errors import BudgetError
from cvxdp.privacy.accountant import PrivacyAccountant, PrivacyRecord
from cvxdp.privacy.budgets import ZCDP, ApproxDP, PureDP, _check_epsilon, _check_finite
from cvxdp.privacy.calibration import _check_sensitivity, calibrate_gaussian, gaussian_epsilon
from cvxdp.privacy.rng import as_generator

__all__ = [
    "gaussian_record",
    "gaussian_mechanism",
    "exponential_record",
    "exponential_mechanism",
]

GAUSSIAN_REFERENCE = "Balle & Wang 2018, Thm 8 (analytic Gaussian); Bun & Steinke 2016, Prop 1.6"
EXPONENTIAL_REFERENCE = (
    "McSherry & Talwar 2007 (eps-DP); Cesar & Rogers 2021, Lemma 3.2 (bounded range: eps^2/8-zCDP)"
)


def gaussian_record(
    *,
    sigma: float,
    sensitivity: float,
    epsilon: float | None = None,
    delta: float | None = None,
    reference: str = GAUSSIAN_REFERENCE,
    mechanism: str = "gaussian",
    count: int = 1,
    **params: Any,
) -> PrivacyRecord:
    """Privacy record of adding N(0, sigma^2 I) to a value of l2 sensitivity ``sensitivity``.

    The record's zCDP bound is ``D^2 / (2 sigma^2)`` (Bun & Steinke 2016, Prop. 1.6).  Its primary
    budget is ``ApproxDP(epsilon, delta)`` when ``delta`` is given (epsilon computed exactly by the
    analytic Gaussian if omitted, and checked if given), else the zCDP bound.
    """
    sigma = _check_finite("sigma", sigma)
    if sigma <= 0:
        raise BudgetError(f"sigma must be > 0, got {sigma!r}.")
    D = _check_sensitivity(sensitivity)
    z = ZCDP(D**2 / (2 * sigma**2))
    if delta is None:
        budget: PureDP | ApproxDP | ZCDP = z
    else:
        exact = gaussian_epsilon(sigma=sigma, delta=delta, sensitivity=D)
        if epsilon is not None and exact > epsilon * (1 + 1e-9):
            raise BudgetError(
                f"sigma={sigma:.6g} gives epsilon={exact:.6g} > claimed {epsilon:.6g} at "
                f"delta={delta:.3g}; calibrate sigma with calibrate_gaussian()."
            )
        budget = ApproxDP(exact if epsilon is None else epsilon, delta)
    # gdp_mu: the step is exactly mu-Gaussian-DP with mu = D / sigma (Dong, Roth & Su 2022);
    # the accountant composes such steps exactly.
    return PrivacyRecord(mechanism, budget, reference, zcdp=z, count=count,
                         params={"sigma": sigma, "sensitivity": D, "gdp_mu": D / sigma,
                                 **params})


def gaussian_mechanism(
    value: Any,
    *,
    sensitivity: float,
    epsilon: float | None = None,
    delta: float | None = None,
    rho: float | None = None,
    rng: None | int | np.random.Generator = None,
    accountant: PrivacyAccountant | None = None,
) -> tuple[np.ndarray, PrivacyRecord]:
    """Release ``value + N(0, sigma^2 I)`` with sigma calibrated exactly.

    Parameters
    ----------
    value : array_like
        The true value (any shape), l2 sensitivity ``sensitivity`` under the neighbouring relation.
    sensitivity : float
        l2 sensitivity D > 0.
    epsilon, delta : float
        Target (epsilon, delta): sigma by the analytic Gaussian (Balle & Wang 2018).
    rho : float
        Target zCDP instead: ``sigma = D / sqrt(2 rho)``.
    rng : None, int or Generator
    accountant : PrivacyAccountant, optional
        Spent from before noise is drawn.

    Returns
    -------
    noisy : ndarray
    record : PrivacyRecord

    References
    ----------
    Balle & Wang, ICML 2018, Thm 8; Bun & Steinke, TCC 2016, Prop. 1.6.
    """
    x = np.asarray(value, dtype=float)
    if not np.all(np.isfinite(x)):
        raise ValueError("value contains NaN or inf; the Gaussian mechanism needs finite data.")
    if rho is not None:
        sigma = calibrate_gaussian(rho=rho, sensitivity=sensitivity, method="zcdp")
        record = gaussian_record(sigma=sigma, sensitivity=sensitivity)
    else:
        sigma = calibrate_gaussian(epsilon=epsilon, delta=delta, sensitivity=sensitivity)
        record = gaussian_record(sigma=sigma, sensitivity=sensitivity, epsilon=epsilon,
                                 delta=delta)
    if accountant is not None:
        accountant.spend(record)
    gen = as_generator(rng)
    return x + gen.normal(0.0, sigma, size=x.shape), record


def exponential_record(*, epsilon: float, count: int = 1, **params: Any) -> PrivacyRecord:
    """Record of the exponential mechanism with parameter epsilon: epsilon-DP and
    epsilon^2/8-zCDP (bounded-range property, Cesar & Rogers 2021)."""
    eps = _check_epsilon(epsilon)
    return PrivacyRecord("exponential", PureDP(eps), EXPONENTIAL_REFERENCE,
                         zcdp=ZCDP(eps**2 / 8), count=count, params=params)


def exponential_mechanism(
    scores: Any,
    *,
    epsilon: float,
    sensitivity: float,
    rng: None | int | np.random.Generator = None,
    accountant: PrivacyAccountant | None = None,
) -> tuple[int, PrivacyRecord]:
    """Draw index i with probability proportional to ``exp(epsilon * score_i / (2 sensitivity))``.

    Sampled by the Gumbel-max trick (argmax of scaled scores plus i.i.d. standard Gumbel noise),
    which is exact and numerically safe for arbitrarily large scores; no Python loop.

    Parameters
    ----------
    scores : array_like, shape (m,)
        Utility of each candidate (higher is better); each changes by at most ``sensitivity``
        between neighbours.
    epsilon : float
    sensitivity : float
    rng, accountant : see :func:`gaussian_mechanism`.

    Returns
    -------
    index : int
    record : PrivacyRecord

    References
    ----------
    McSherry & Talwar, FOCS 2007; paper 002 (002_26bee910280b74ae.txt) Def 3.11 / Lemma 3.12;
    Cesar & Rogers 2021 for the zCDP bound.
    """
    s = np.asarray(scores, dtype=float).ravel()
    if s.size == 0:
        raise ValueError("exponential_mechanism needs at least one candidate.")
    if not np.all(np.isfinite(s)):
        raise ValueError("scores contain NaN or inf.")
    D = _check_sensitivity(sensitivity)
    record = exponential_record(epsilon=epsilon, sensitivity=D, candidates=int(s.size))
    if accountant is not None:
        accountant.spend(record)
    gen = as_generator(rng)
    logits = (record.budget.epsilon / (2.0 * D)) * s
    return int(np.argmax(logits + gen.gumbel(size=s.size))), record


def exponential_probabilities(scores: Any, *, epsilon: float, sensitivity: float) -> np.ndarray:
    """The exact selection probabilities of :func:`exponential_mechanism` (for tests/audits)."""
    s = np.asarray(scores, dtype=float).ravel()
    logits = (_check_epsilon(epsilon) / (2.0 * _check_sensitivity(sensitivity))) * s
    logits -= logits.max()
    p = np.exp(logits)
    return p / p.sum()
