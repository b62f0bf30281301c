"""Privacy budgets as small immutable values, and the conversions between them.

Three notions are used across cvxdp:

* :class:`PureDP` -- epsilon-DP.
* :class:`ApproxDP` -- (epsilon, delta)-DP.
* :class:`ZCDP` -- rho-zero-concentrated DP (Bun & Steinke 2016).

Conversions implemented here (all sound, none hard-coded):

* ``PureDP(e) -> ZCDP(e**2 / 2)``  (Bun & Steinke 2016, Prop. 1.4).
* ``ZCDP(rho) -> ApproxDP(eps, delta)`` by the tight conversion of Canonne, Kamath & Steinke 2020
  (Cor. 13): ``delta = inf_{a>1} exp((a-1)(a rho - eps)) (1 - 1/a)^(a-1) / a``; we report the
  minimum of that and the textbook ``rho + 2 sqrt(rho log(1/delta))`` (both are valid bounds and the
  CKS one is never looser up to root-finding tolerance).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import optimize

from cvxdp.errors import BudgetError

__all__ = [
    "PureDP",
    "ApproxDP",
    "ZCDP",
    "Budget",
    "zcdp_to_epsilon",
    "zcdp_to_delta",
    "zcdp_from_approx",
    "resolve_budget",
]


def check_finite(name: str, value: float) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise BudgetError(f"{name} must be a real number, got {value!r}.") from None
    if not math.isfinite(v):
        raise BudgetError(f"{name} must be finite, got {value!r}.")
    return v


def check_positive(name: str, value: float) -> float:
    """``value`` as a finite float > 0, else a ``BudgetError`` naming ``name``."""
    v = check_finite(name, value)
    if v <= 0:
        raise BudgetError(f"{name} must be > 0 (finite), got {value!r}.")
    return v


def check_epsilon(epsilon: float, name: str = "epsilon") -> float:
    return check_positive(name, epsilon)


def check_delta(delta: float, name: str = "delta") -> float:
    d = check_finite(name, delta)
    # delta = 1 is the vacuous guarantee every mechanism has: a composition whose float
    # samplers' delta is vacuous reports it rather than claiming less
    if not 0 <= d <= 1:
        raise BudgetError(f"{name} must satisfy 0 <= {name} <= 1, got {delta!r}.")
    return d


def check_rho(rho: float) -> float:
    return check_positive("rho", rho)


def _deprecated_call(budget: Any) -> Any:
    """``acct.spent()`` from before ``PrivacyAccountant.spent`` was an attribute: the budget
    itself, with a :class:`DeprecationWarning`."""
    warnings.warn("PrivacyAccountant.spent is an attribute now, like .total: write "
                  "acct.spent, not acct.spent() (calling it will stop working in a future "
                  "release)", DeprecationWarning, stacklevel=2)
    return budget


@dataclass(frozen=True)
class PureDP:
    """epsilon-differential privacy.

    Parameters
    ----------
    epsilon : float
        Finite, > 0.
    """

    epsilon: float

    __call__ = _deprecated_call

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))

    def to_zcdp(self) -> ZCDP:
        """``ZCDP(epsilon**2 / 2)`` (Bun & Steinke 2016, Prop. 1.4)."""
        return ZCDP(self.epsilon**2 / 2)

    def to_approx_dp(self, *, delta: float = 0.0) -> ApproxDP:
        """An epsilon-DP mechanism is (epsilon, delta)-DP for every delta >= 0."""
        return ApproxDP(self.epsilon, delta)


@dataclass(frozen=True)
class ApproxDP:
    """(epsilon, delta)-differential privacy.

    Parameters
    ----------
    epsilon : float
        Finite, > 0.
    delta : float
        ``0 <= delta <= 1`` (1: no guarantee).
    """

    epsilon: float
    delta: float = 0.0

    __call__ = _deprecated_call

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        object.__setattr__(self, "delta", check_delta(self.delta))

    def to_zcdp(self) -> ZCDP:
        """Only pure DP (``delta == 0``) converts to zCDP; refuse otherwise."""
        if self.delta == 0:
            return PureDP(self.epsilon).to_zcdp()
        raise BudgetError(
            "an (epsilon, delta)-DP guarantee with delta > 0 does not imply any zCDP bound; "
            "give the budget as rho= (zCDP) or account this step in (epsilon, delta)."
        )


@dataclass(frozen=True)
class ZCDP:
    """rho-zero-concentrated differential privacy (Bun & Steinke 2016).

    Parameters
    ----------
    rho : float
        Finite, > 0.
    """

    rho: float

    __call__ = _deprecated_call

    def __post_init__(self) -> None:
        object.__setattr__(self, "rho", check_rho(self.rho))

    def to_zcdp(self) -> ZCDP:
        return self

    def to_approx_dp(self, *, delta: float) -> ApproxDP:
        """The tight (epsilon, delta) implied by rho-zCDP (Canonne, Kamath & Steinke 2020).

        Parameters
        ----------
        delta : float
            ``0 < delta < 1``.
        """
        delta = check_delta(delta)
        if delta == 0:
            raise BudgetError("delta must be > 0 to convert zCDP to (epsilon, delta)-DP.")
        return ApproxDP(zcdp_to_epsilon(self.rho, delta), delta)


Budget = PureDP | ApproxDP | ZCDP


def _cks_epsilon_at(alpha: float, rho: float, log_inv_delta: float) -> float:
    # From delta = exp((a-1)(a rho - eps)) (1-1/a)^(a-1) / a solved for eps.
    return alpha * rho + math.log1p(-1.0 / alpha) + (log_inv_delta - math.log(alpha)) / (alpha - 1)


def zcdp_to_epsilon(rho: float, delta: float) -> float:
    """Smallest epsilon such that rho-zCDP implies (epsilon, delta)-DP.

    Minimises the Canonne--Kamath--Steinke 2020 (Cor. 13) bound over the Renyi order alpha > 1
    and returns the minimum of it and the textbook ``rho + 2 sqrt(rho log(1/delta))``.

    References
    ----------
    C. Canonne, G. Kamath, T. Steinke, "The Discrete Gaussian for Differential Privacy",
    NeurIPS 2020, Corollary 13.  M. Bun, T. Steinke, TCC 2016, Prop. 1.3.
    """
    rho = check_rho(rho)
    delta = check_delta(delta)
    if delta == 0:
        return math.inf
    L = math.log(1.0 / delta)
    textbook = rho + 2.0 * math.sqrt(rho * L)
    # eps(alpha) is convex-ish in log(alpha - 1); minimise on a wide bracket in that variable.
    f = lambda u: _cks_epsilon_at(1.0 + math.exp(u), rho, L)  # noqa: E731
    grid = np.linspace(-12.0, 12.0, 97)
    vals = [f(u) for u in grid]
    i = int(np.argmin(vals))
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, len(grid) - 1)]
    res = optimize.minimize_scalar(f, bounds=(lo, hi), method="bounded",
                                   options={"xatol": 1e-12})
    best = min(float(res.fun), vals[i])
    return max(0.0, min(best, textbook))


def zcdp_to_delta(rho: float, epsilon: float) -> float:
    """Smallest delta such that rho-zCDP implies (epsilon, delta)-DP (CKS 2020, Cor. 13)."""
    rho = check_rho(rho)
    eps = check_finite("epsilon", epsilon)

    def log_delta(u: float) -> float:
        a = 1.0 + math.exp(u)
        return (a - 1) * (a * rho - eps) + (a - 1) * math.log1p(-1.0 / a) - math.log(a)

    grid = np.linspace(-12.0, 12.0, 97)
    vals = [log_delta(u) for u in grid]
    i = int(np.argmin(vals))
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, len(grid) - 1)]
    res = optimize.minimize_scalar(log_delta, bounds=(lo, hi), method="bounded",
                                   options={"xatol": 1e-12})
    return float(min(1.0, math.exp(min(float(res.fun), vals[i]))))


def zcdp_from_approx(epsilon: float, delta: float) -> float:
    """Largest rho such that rho-zCDP implies (epsilon, delta)-DP by :func:`zcdp_to_epsilon`.

    This is how a user's (epsilon, delta) budget is turned into a zCDP budget for algorithms
    whose analysis is in zCDP (e.g. the minimum-enclosing-ball paper).
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    if delta == 0:
        raise BudgetError("delta must be > 0 to express an (epsilon, delta) budget as zCDP.")
    # zcdp_to_epsilon is increasing in rho; the textbook bound gives a bracket.
    lo = 1e-300
    hi = max(epsilon, 1e-12)
    while zcdp_to_epsilon(hi, delta) < epsilon:
        hi *= 2.0
    return float(optimize.brentq(lambda r: zcdp_to_epsilon(r, delta) - epsilon, lo, hi,
                                 xtol=1e-300, rtol=1e-13, maxiter=500))


def resolve_budget(
    *, epsilon: float | None = None, delta: float | None = None, rho: float | None = None
) -> Budget:
    """Turn the keyword budget arguments of a public entry point into one budget value.

    Exactly one of ``epsilon`` (with optional ``delta``) or ``rho`` must be given.
    """
    if rho is not None:
        if epsilon is not None or delta is not None:
            raise BudgetError("give either epsilon= (and delta=) or rho=, not both.")
        return ZCDP(rho)
    if epsilon is None:
        raise BudgetError(
            "a privacy budget is required: pass epsilon= (and delta= for approximate DP) "
            "or rho= for zCDP."
        )
    if delta is None or delta == 0:
        if delta is not None:
            check_delta(delta)
        return PureDP(epsilon)
    return ApproxDP(epsilon, delta)
