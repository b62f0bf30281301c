"""Suite-wide pytest hooks and fixtures."""

from importlib import metadata

import cvxpy as cp
import numpy as np
import pytest

import cvxdp

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


@pytest.fixture
def exact_value():
    """``exact_value(problem)``: the exact optimum of the model (a fresh copy solved by
    Clarabel, so the user's variables keep the private answer)."""

    def solve(problem):
        ref = cp.Problem(problem.objective, problem.constraints)
        ref.solve(solver=cp.CLARABEL)
        return float(ref.value)

    return solve


@pytest.fixture
def labelled_rows():
    """``labelled_rows(seed, m, n, noise)``: Gaussian rows ``X`` (m x n) and labels ``sign(X
    w0 + noise * e)`` with a random ``w0``, as CVXPY's classification examples draw them."""

    def draw(seed, m, n, noise=0.5):
        rng = np.random.default_rng(seed)
        X = rng.normal(size=(m, n))
        return X, np.sign(X @ rng.normal(size=n) + noise * rng.normal(size=m))

    return draw


@pytest.fixture
def lad_private_design():
    """A factory of trial 14's least absolute deviations with a private design:
    ``min norm1(A x - b)``, ``||x||_inf <= 5``, ``A`` private (sensitivity 0.02)."""

    def build(m: int = 200, n: int = 10, seed: int = 13):
        rng = np.random.default_rng(seed)
        A0 = rng.normal(size=(m, n))
        b = A0 @ rng.normal(size=n) + rng.laplace(size=m)
        A = cp.Parameter((m, n), name="A", value=A0)
        x = cp.Variable(n)
        prob = cp.Problem(cp.Minimize(cp.norm1(A @ x - b)), [cp.norm(x, "inf") <= 5])
        return prob, cvxdp.ConstraintPrivacy(A, sensitivity=0.02)

    return build


@pytest.fixture
def newsvendor():
    """A factory of trial 18's newsvendor: order ``x >= 0`` (at most 60 in all) against ``S``
    private demand scenarios ``D`` (S x n), ``min sum(x) + (3 sum(pos(D - X)) + 0.5 sum(pos(X -
    D))) / S`` with ``X`` the order repeated per scenario. Returns ``(problem, D, x)``."""

    def build(seed: int, n: int, S: int):
        rng = np.random.default_rng(seed)
        D = cp.Parameter((S, n), name="D", value=rng.uniform(5, 15, (S, n)))
        x = cp.Variable(n, name="x")
        X = np.ones((S, 1)) @ cp.reshape(x, (1, n), order="C")
        prob = cp.Problem(cp.Minimize(cp.sum(x) + (3 * cp.sum(cp.pos(D - X))
                                                   + 0.5 * cp.sum(cp.pos(X - D))) / S),
                          [x >= 0, cp.sum(x) <= 60])
        return prob, D, x

    return build
