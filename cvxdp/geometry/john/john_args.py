"""Arguments of the private John ellipsoid: the budget's mu and the public keywords, checked.

Every check here reads the arguments only, never the data: a bad value raises a typed cvxdp
error naming the argument before any row is read.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from cvxdp.errors import NOT_NUMBERS, BudgetError, PrivacySpecError
from cvxdp.privacy.budgets import ZCDP, PureDP
from cvxdp.privacy.calibration import calibrate_gaussian

__all__ = ["total_mu", "nonneg", "ridge_argument", "positive", "flag", "probability"]


def total_mu(budget: Any) -> float:
    if isinstance(budget, PureDP):
        raise BudgetError("the private John ellipsoid uses Gaussian noise and needs delta > 0 "
                          "(or rho= for zCDP).")
    if isinstance(budget, ZCDP):
        return math.sqrt(2 * budget.rho)  # mu-GDP mechanisms are mu^2/2-zCDP (Gaussian)
    return 1.0 / calibrate_gaussian(epsilon=budget.epsilon, delta=budget.delta, sensitivity=1.0)


def _number(value: Any) -> float:
    """``value`` as a float, NaN when it is not a number (a string such as ``'2'`` is not one,
    as ``epsilon='1'`` is not: the common keyword check refuses it too)."""
    if isinstance(value, NOT_NUMBERS):
        return math.nan
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


def nonneg(name: str, value: Any) -> float | None:
    if value is None:
        return None
    v = _number(value)
    if not (math.isfinite(v) and v >= 0):
        raise PrivacySpecError(f"{name}= must be a finite number >= 0 (public), got {value!r}.")
    return v


def ridge_argument(ridge: Any, sigma_min: Any, w_min: float) -> float | None:
    """The user's public ridge of ``A'WA + ridge I`` (None: chosen by ``balanced_ridge``).

    ``sigma_min`` is NOT checked against the data (a check would leak): it adds
    ``w_min sigma_min^2`` to the ridge, the floor ``lambda_min(A'WA) >= w_min sigma_min(A)^2``
    would give if the data obeyed it, so the bound holds for every A.
    """
    r, s = nonneg("ridge", ridge), nonneg("sigma_min", sigma_min)
    if s is None:
        return r
    return (r or 0.0) + w_min * s * s


def positive(name: str, value: Any, what: str) -> float:
    """A required public number > 0 (finite), else a PrivacySpecError naming ``name``."""
    v = _number(value)
    if not (math.isfinite(v) and v > 0):
        raise PrivacySpecError(f"{name}={value!r}: {name}= ({what}) is required, a finite "
                               "number > 0.")
    return v


def flag(name: str, value: Any) -> bool:
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise PrivacySpecError(f"{name}={value!r}: {name} must be True or False.")


def probability(name: str, value: Any) -> float:
    v = _number(value)
    if not 0 < v < 1:
        raise PrivacySpecError(f"{name}={value!r}: {name} must be a probability in (0, 1).")
    return v
