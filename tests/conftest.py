"""Suite-wide pytest hooks and fixtures."""

from importlib import metadata

import cvxpy as cp
import numpy as np
import pytest

_TRACED = ("numpy", "scipy", "cvxpy", "clarabel", "scs", "numba")


def pytest_report_header(config):
    """Print the numerical stack's versions at the top of every run (CI included), so that a
    failure that depends on solver or BLAS rounding can be traced to the versions that gave it."""
    found = []
    for name in _TRACED:
        try:
            found.append(f"{name} {metadata.version(name)}")
        except metadata.PackageNotFoundError:
            found.append(f"{name} (not installed)")
    return "numerical stack: " + ", ".join(found)


@pytest.fixture
def factor_portfolio():
    """A portfolio with expected returns ``mu``, factor loadings ``F`` and a risk-aversion
    ``gamma``: ``max mu'w - gamma ||F'w||^2`` over the simplex (not DPP in (gamma, F)).
    Returns ``(problem, mu, F, gamma, w)``."""
    rng = np.random.default_rng(0)
    n, k = 10, 3
    mu = cp.Parameter(n, name="mu", value=rng.normal(size=n) * 0.1)
    F = cp.Parameter((n, k), name="F", value=rng.normal(size=(n, k)))
    gamma = cp.Parameter(nonneg=True, name="gamma", value=0.5)
    w = cp.Variable(n, name="w")
    prob = cp.Problem(cp.Maximize(mu @ w - gamma * cp.sum_squares(F.T @ w)),
                      [cp.sum(w) == 1, w >= 0])
    return prob, mu, F, gamma, w
