"""A user's sum-of-squares model with LeastSquaresPrivacy goes through problem.solve_private."""

import cvxpy as cp
import numpy as np
import pytest

import cvxdp


def test_user_least_squares_model_is_solved_privately_and_sets_beta():
    rng = np.random.default_rng(0)
    n, d = 20000, 3
    Xv = rng.uniform(-1, 1, (n, d)) / 2
    yv = Xv @ np.array([1.0, -0.5, 0.25]) + 0.1 * rng.standard_normal(n)
    X = cp.Parameter((n, d), name="X", value=Xv)
    y = cp.Parameter(n, name="y", value=yv)
    beta = cp.Variable(d, name="beta")
    prob = cp.Problem(cp.Minimize(cp.sum_squares(X @ beta - y)))
    sol = prob.solve_private(epsilon=1.0, delta=1e-6, rng=1, reference=True,
                             private=cvxdp.LeastSquaresPrivacy(X, y, row_bound=1.0))
    assert sol.privacy.guarantee == "dp"
    assert np.allclose(beta.value, sol.coef)
    ols = np.linalg.lstsq(Xv, yv, rcond=None)[0]
    assert np.linalg.norm(sol.coef - ols) / np.linalg.norm(ols) < 0.05


def test_wrong_model_with_least_squares_spec_is_refused():
    X = cp.Parameter((5, 2), value=np.ones((5, 2)))
    y = cp.Parameter(5, value=np.ones(5))
    beta = cp.Variable(2)
    prob = cp.Problem(cp.Minimize(cp.norm1(X @ beta - y)))
    with pytest.raises(cvxdp.UnsupportedProblemError):
        prob.solve_private(epsilon=1.0, delta=1e-6,
                           private=cvxdp.LeastSquaresPrivacy(X, y, row_bound=1.0))
