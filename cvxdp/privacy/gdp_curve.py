"""The (epsilon, delta) curve of mu-Gaussian DP, on its own so that both the accountant and
:mod:`cvxdp.privacy.gdp` can use it without importing each other.

mu-GDP is equivalent to the family of (epsilon, delta(epsilon))-DP guarantees

    delta(eps) = Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu)

(Dong, Roth & Su 2022, Cor. 2.13; Lu, Magdon-Ismail, Wei & Zikas (2024), Lemma 2).
"""

from __future__ import annotations

import math
from typing import Any

from scipy import special

from cvxdp.errors import BudgetError
from cvxdp.privacy.budgets import check_delta, check_finite
from cvxdp.privacy.ndis import epsilon_for, gaussian_loss_delta

__all__ = ["gdp_delta", "gdp_epsilon"]


def check_mu(mu: Any) -> float:
    m = check_finite("mu", mu)
    if m < 0:
        raise BudgetError(f"mu must be >= 0, got {mu!r}.")
    return m


def gdp_delta(*, mu: float, epsilon: float) -> float:
    """delta(epsilon) of mu-GDP: ``Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu)``.

    References
    ----------
    Dong, Roth & Su 2022, Cor. 2.13; Lu, Magdon-Ismail, Wei & Zikas (2024), Lemma 2.
    """
    eps = check_finite("epsilon", epsilon)
    if eps < 0:
        raise BudgetError(f"epsilon must be >= 0, got {epsilon!r}.")
    return gaussian_loss_delta(check_mu(mu), eps)


def gdp_epsilon(*, mu: float, delta: float) -> float:
    """Smallest epsilon with ``gdp_delta(mu, epsilon) <= delta`` (inf for delta = 0, mu > 0)."""
    m = check_mu(mu)
    delta = check_delta(delta)
    if m == 0:
        return 0.0
    if delta == 0:
        return math.inf
    # The privacy loss of mu-GDP is L ~ N(mu^2/2, mu^2) and delta(eps) = E[(1 - e^{eps - L})_+]
    # <= P[L > eps], so eps = mu^2/2 + mu z_{1-delta} already has delta(eps) <= delta: a proven
    # bracket for every mu (no search cap; the front door bounds epsilon by 1e6).
    upper = m * m / 2.0 + m * max(float(-special.ndtri(delta)), 0.0)
    return epsilon_for(lambda e: gaussian_loss_delta(m, e), delta, upper=upper)
