"""Gaussian noise calibration: analytic (exact), classical and zCDP.

The *analytic Gaussian mechanism* (Balle & Wang 2018, Thm 8) is exact: adding N(0, sigma^2 I) to a
function of l2 sensitivity D is (epsilon, delta)-DP iff

    Phi(D/(2 sigma) - epsilon sigma/D) - e^epsilon Phi(-D/(2 sigma) - epsilon sigma/D) <= delta.

:func:`calibrate_gaussian` returns the smallest such sigma (to 1e-12 relative); it is never larger
than the classical ``sqrt(2 ln(1.25/delta)) D / epsilon`` (Dwork & Roth 2014, Thm A.1, valid only
for epsilon < 1), which is offered for comparison with the papers' constants.

Calibrations are functions of public numbers only (budget, sensitivity, counts), so they are
cached (:func:`cached_calibration`): a repeated call with the same arguments costs a lookup.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import numpy as np
from scipy import optimize, special

from cvxdp.errors import BudgetError
from cvxdp.privacy.budgets import (
    check_delta,
    check_epsilon,
    check_finite,
    check_positive,
    check_rho,
    zcdp_from_approx,
)

__all__ = ["calibrate_gaussian", "gaussian_delta", "gaussian_epsilon", "classical_sigma",
           "cached_calibration"]


def cached_calibration(fn: Callable[..., Any]) -> Callable[..., Any]:
    """:func:`functools.lru_cache` for a calibration whose arguments are public numbers.

    Only for functions of public arguments that return an immutable value (a float): the cache
    then holds nothing private, and a repeated call costs a dictionary lookup instead of a root
    search.  An unhashable argument (e.g. a 0-d array) is computed without the cache.  The
    wrapper keeps ``cache_info`` / ``cache_clear`` and ``__wrapped__`` (the uncached function).
    """
    cached = functools.lru_cache(maxsize=1024)(fn)

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            hash((args, tuple(kwargs.items())))
        except TypeError:
            return fn(*args, **kwargs)
        return cached(*args, **kwargs)

    wrapper.cache_info = cached.cache_info      # type: ignore[attr-defined]
    wrapper.cache_clear = cached.cache_clear    # type: ignore[attr-defined]
    return wrapper


def check_sensitivity(sensitivity: float) -> float:
    return check_positive("sensitivity", sensitivity)


def gaussian_delta(*, sigma: float, epsilon: float, sensitivity: float = 1.0) -> float:
    """Exact delta(epsilon) of the Gaussian mechanism (Balle & Wang 2018, Thm 8).

    Parameters
    ----------
    sigma : float
        Noise standard deviation, > 0.
    epsilon : float
        >= 0.
    sensitivity : float
        l2 sensitivity D.

    References
    ----------
    B. Balle, Y.-X. Wang, "Improving the Gaussian Mechanism for Differential Privacy: Analytical
    Calibration and Optimal Denoising", ICML 2018, Theorem 8.
    """
    sigma = check_finite("sigma", sigma)
    if sigma <= 0:
        raise BudgetError(f"sigma must be > 0, got {sigma!r}.")
    eps = check_finite("epsilon", epsilon)
    if eps < 0:
        raise BudgetError(f"epsilon must be >= 0, got {epsilon!r}.")
    mu = check_sensitivity(sensitivity) / sigma  # Gaussian DP parameter
    a = mu / 2.0 - eps / mu
    b = -mu / 2.0 - eps / mu
    # delta = Phi(a) - e^eps Phi(b); the second term in log space to avoid overflow.
    d = special.ndtr(a) - math.exp(eps + special.log_ndtr(b))
    if d < 1e-12:
        # Catastrophic cancellation regime: use logs of both terms.
        la, lb = special.log_ndtr(a), eps + special.log_ndtr(b)
        d = math.exp(la) * -math.expm1(lb - la) if lb < la else 0.0
    return float(min(max(d, 0.0), 1.0))


def gaussian_epsilon(*, sigma: float, delta: float, sensitivity: float = 1.0) -> float:
    """Smallest epsilon such that the Gaussian mechanism is (epsilon, delta)-DP (exact)."""
    delta = check_delta(delta)
    if delta == 0:
        return math.inf
    if gaussian_delta(sigma=sigma, epsilon=0.0, sensitivity=sensitivity) <= delta:
        return 0.0
    hi = 1.0
    while gaussian_delta(sigma=sigma, epsilon=hi, sensitivity=sensitivity) > delta:
        hi *= 2.0
        if hi > 1e15:
            return math.inf
    return float(optimize.brentq(
        lambda e: gaussian_delta(sigma=sigma, epsilon=e, sensitivity=sensitivity) - delta,
        0.0, hi, xtol=1e-14, rtol=1e-13, maxiter=500))


def classical_sigma(*, epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """``sqrt(2 ln(1.25/delta)) D / epsilon`` (Dwork & Roth 2014, Thm A.1); needs epsilon < 1."""
    eps = check_epsilon(epsilon)
    delta = check_delta(delta)
    if delta == 0:
        raise BudgetError("the Gaussian mechanism needs delta > 0.")
    if eps >= 1:
        raise BudgetError(
            f"the classical Gaussian calibration is only valid for epsilon < 1 (got {eps}); "
            "use method='analytic', which is exact for every epsilon."
        )
    return math.sqrt(2 * math.log(1.25 / delta)) * check_sensitivity(sensitivity) / eps


@cached_calibration
def calibrate_gaussian(
    *,
    epsilon: float | None = None,
    delta: float | None = None,
    rho: float | None = None,
    sensitivity: float = 1.0,
    method: str = "analytic",
) -> float:
    """Noise scale sigma of a Gaussian mechanism with l2 sensitivity ``sensitivity``.

    Parameters
    ----------
    epsilon, delta : float
        Target (epsilon, delta) (``method`` "analytic" or "classical"; "zcdp" converts them to
        the largest rho by the CKS bound).
    rho : float
        Target zCDP (``method="zcdp"`` only): ``sigma = D / sqrt(2 rho)`` (Bun & Steinke 2016,
        Prop. 1.6).
    sensitivity : float
        l2 sensitivity D > 0.
    method : {"analytic", "classical", "zcdp"}

    Returns
    -------
    float
        sigma.

    Raises
    ------
    BudgetError
        Out-of-range budget, or ``"classical"`` with epsilon >= 1.

    References
    ----------
    Balle & Wang, ICML 2018, Thm 8 and Alg. 1 (analytic); Dwork & Roth 2014, Thm A.1 (classical);
    Bun & Steinke, TCC 2016, Prop. 1.6 (zCDP).
    """
    D = check_sensitivity(sensitivity)
    if method == "zcdp":
        if rho is None:
            if epsilon is None or delta is None:
                raise BudgetError("method='zcdp' needs rho= or both epsilon= and delta=.")
            rho = zcdp_from_approx(epsilon, delta)
        elif epsilon is not None or delta is not None:
            raise BudgetError("give rho= or epsilon=/delta=, not both.")
        return D / math.sqrt(2 * check_rho(rho))
    if rho is not None:
        raise BudgetError(f"rho= is only used by method='zcdp' (got method={method!r}).")
    if epsilon is None or delta is None:
        raise BudgetError("calibrate_gaussian needs epsilon= and delta= (delta > 0).")
    eps = check_epsilon(epsilon)
    delta = check_delta(delta)
    if delta == 0:
        raise BudgetError("the Gaussian mechanism needs delta > 0 (it is not pure DP).")
    if method == "classical":
        return classical_sigma(epsilon=eps, delta=delta, sensitivity=D)
    if method != "analytic":
        raise ValueError(f"method must be 'analytic', 'classical' or 'zcdp', got {method!r}")
    # delta(sigma) decreases in sigma: bracket in log-sigma and solve.
    f = lambda ls: gaussian_delta(sigma=math.exp(ls), epsilon=eps, sensitivity=D) - delta  # noqa: E731
    lo = math.log(D) - 5.0
    while f(lo) <= 0:
        lo -= 5.0
        if lo < math.log(D) - 200:
            return math.exp(lo)
    hi = math.log(D) + 1.0
    while f(hi) > 0:
        hi += 2.0
    ls = optimize.brentq(f, lo, hi, xtol=1e-14, rtol=1e-14, maxiter=500)
    sigma = math.exp(ls)
    # brentq may end a hair below the root: step up until the constraint holds exactly.
    while gaussian_delta(sigma=sigma, epsilon=eps, sensitivity=D) > delta:
        sigma = float(np.nextafter(sigma * (1 + 1e-13), np.inf))
    return sigma
