"""cvxdp.least_squares: exact reference, private mechanisms, reports, model recognition."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest

import cvxdp
from cvxdp.errors import BudgetError, PrivacySpecError, UnsupportedProblemError
from cvxdp.estimation.random_projection import ls_sigma
from cvxdp.estimation.regression import (
    LeastSquaresPrivacy,
    least_squares,
    least_squares_from_model,
    noisy_gram,
)
from cvxdp.estimation.regression_mechanisms import ssp_release
from cvxdp.privacy.budgets import ApproxDP
from cvxdp.privacy.calibration import calibrate_gaussian, gaussian_delta
from cvxdp.status import status_of


def _data(n, d=4, seed=0, noise=0.1):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, (n, d)) / np.sqrt(d)
    beta = np.linspace(-0.5, 0.5, d)
    return x, x @ beta + noise * rng.standard_normal(n)


def test_exact_solve_is_ols():
    x, y = _data(200)
    prob = least_squares(x, y, row_bound=2.0)
    val = prob.solve()
    coef = np.linalg.lstsq(x, y, rcond=None)[0]
    assert prob.beta.value == pytest.approx(coef, abs=1e-5)
    assert val == pytest.approx(np.sum((x @ coef - y) ** 2), rel=1e-6)
    assert prob.solve(method="ols") == pytest.approx(val, rel=1e-6)


def test_ssp_default_is_dp_accurate_and_deterministic():
    x, y = _data(20000)
    prob = least_squares(x, y, row_bound=1.5)
    sol = prob.solve_private(epsilon=1.0, delta=1e-6, rng=3, reference=True)
    # the status is the certificate's (tests/estimation/test_regression_certificate.py)
    assert (sol.status, sol.status_reason) == status_of(sol.certificate)
    assert sol.privacy.guarantee == "dp"
    assert sol.privacy.epsilon <= 1.0 + 1e-9 and sol.privacy.delta == 1e-6
    assert sol.validation.relative_error < 0.1
    assert sol.validation.rows_clipped == 0
    assert np.array_equal(prob.beta.value, sol.coef)
    again = prob.solve_private(epsilon=1.0, delta=1e-6, rng=3)
    assert np.array_equal(again.coef, sol.coef)
    # the objective estimate comes from the noisy Gram matrix and is near the true optimum
    assert sol.value == pytest.approx(sol.validation.reference_value, rel=0.5)


def test_ssp_error_shrinks_with_n():
    errs = []
    for n in (2000, 50000):
        x, y = _data(n, seed=n)
        prob = least_squares(x, y, row_bound=1.5)
        errs.append(np.mean([prob.solve_private(epsilon=1.0, delta=1e-6, rng=s,
                                                reference=True).validation.coef_error
                             for s in range(5)]))
    assert errs[1] < errs[0] / 5


def test_ssp_noise_scale_and_structure():
    bound = 1.5
    sigma = calibrate_gaussian(epsilon=1.0, delta=1e-6, sensitivity=bound**2)
    assert gaussian_delta(sigma=sigma, epsilon=1.0, sensitivity=bound**2) <= 1e-6
    _, record, info = ssp_release(np.zeros((1, 3)), ApproxDP(1.0, 1e-6), bound,
                              np.random.default_rng(0))
    assert info["sigma"] == pytest.approx(sigma, rel=1e-12)
    assert record.params["gdp_mu"] == pytest.approx(bound**2 / sigma)
    # Gram noise: diag variance sigma^2, off-diagonal sigma^2 / 2 (isotropic in svec)
    gen = np.random.default_rng(1)
    w = np.array([noisy_gram(np.zeros((1, 3)), 2.0, gen) for _ in range(6000)])
    assert np.allclose(w, np.swapaxes(w, 1, 2))
    assert np.var(w[:, 0, 0]) == pytest.approx(4.0, rel=0.08)
    assert np.var(w[:, 0, 1]) == pytest.approx(2.0, rel=0.08)
    assert np.var(w[:, 1, 2]) == pytest.approx(2.0, rel=0.08)


def test_ssp_with_rho_budget():
    x, y = _data(5000)
    sol = least_squares(x, y, row_bound=1.5).solve_private(rho=0.5, rng=0)
    assert sol.privacy.guarantee == "dp"
    assert sol.privacy.rho == pytest.approx(0.5, rel=1e-9)


def test_named_paper_mechanisms_say_what_they_are():
    x, y = _data(5000)
    prob = least_squares(x, y, row_bound=1.5)
    got = {m: prob.solve_private(epsilon=1.0, delta=1e-5, rng=0, mechanism=m, sketch_size=200,
                                 reference=True)
           for m in ("rp", "ls", "als")}
    assert got["rp"].privacy.guarantee == "dp"
    assert got["ls"].privacy.guarantee == "conjectural"
    assert got["als"].privacy.guarantee == "asymptotic"
    assert "Thm 5" in got["ls"].privacy.theorem and "Lemma 1" in got["als"].privacy.theorem
    for sol in got.values():
        assert sol.validation.relative_error < 1.0


def test_ls_mean_is_ridge():
    x, y = _data(3000, d=2)
    prob = least_squares(x, y, row_bound=1.0)
    sigma = ls_sigma(epsilon=1.0, delta=1e-5, r=100, d=2, row_bound=1.0)
    ridge = np.linalg.solve(x.T @ x + sigma**2 * np.eye(2), x.T @ y)
    draws = np.array([prob.solve_private(epsilon=1.0, delta=1e-5, rng=s, mechanism="ls",
                                         sketch_size=100).coef for s in range(300)])
    se = draws.std(axis=0) / np.sqrt(len(draws))
    assert np.all(np.abs(draws.mean(axis=0) - ridge) < 5 * se)


def test_user_model_is_recognised_and_dispatched():
    x, y = _data(8000)
    X = cp.Parameter(x.shape, name="X", value=x)
    Y = cp.Parameter(y.shape, name="y", value=y)
    beta = cp.Variable(x.shape[1], name="beta")
    model = cp.Problem(cp.Minimize(cp.sum_squares(X @ beta - Y)))
    spec = LeastSquaresPrivacy(X, Y, row_bound=1.5)
    structured = least_squares_from_model(model, spec)
    sol = cvxdp.solve_private(structured, epsilon=1.0, delta=1e-6, rng=0, reference=True)
    assert np.array_equal(beta.value, sol.coef)
    assert sol.validation.relative_error < 0.2
    flipped = cp.Problem(cp.Minimize(cp.sum_squares(Y - X @ beta)))
    assert least_squares_from_model(flipped, [spec]).X.shape == x.shape
    with pytest.raises(UnsupportedProblemError, match="only beta and public data"):
        least_squares_from_model(cp.Problem(cp.Minimize(cp.sum_squares(X @ beta - Y)),
                                            [X @ beta >= 0]), spec)
    with pytest.raises(UnsupportedProblemError, match="sum_squares"):
        least_squares_from_model(cp.Problem(cp.Minimize(cp.norm1(X @ beta - Y))), spec)
    with pytest.raises(PrivacySpecError, match="LeastSquaresPrivacy"):
        least_squares_from_model(model, None)
    other = cp.Parameter(x.shape, value=x)
    with pytest.raises(PrivacySpecError, match="own X and y"):
        least_squares_from_model(model, LeastSquaresPrivacy(other, Y, row_bound=1.0))


def test_public_constraints_are_applied_to_the_released_surrogate():
    x, y = _data(20000)  # true beta = linspace(-0.5, 0.5, 4): two negative entries
    X = cp.Parameter(x.shape, value=x)
    Y = cp.Parameter(y.shape, value=y)
    beta = cp.Variable(x.shape[1])
    model = cp.Problem(cp.Minimize(cp.sum_squares(X @ beta - Y)), [beta >= 0, cp.sum(beta) <= 1])
    structured = least_squares_from_model(model, LeastSquaresPrivacy(X, Y, row_bound=1.5))
    for mech in ("ssp", "rp"):
        sol = structured.solve_private(epsilon=1.0, delta=1e-6, rng=0, mechanism=mech,
                                       sketch_size=300, reference=True)
        assert np.all(sol.coef >= -1e-6) and sol.coef.sum() <= 1 + 1e-6
        assert np.array_equal(beta.value, sol.coef)
        assert sol.validation.reference_solver == "cvxpy"
        ref = sol.validation.reference_coef
        assert np.all(ref >= -1e-6) and ref[:2] == pytest.approx([0, 0], abs=1e-5)
        assert sol.validation.coef_error < 0.1
    with pytest.raises(UnsupportedProblemError, match="not 'ls'"):
        structured.solve_private(epsilon=1.0, delta=1e-6, mechanism="ls")


def test_bad_inputs():
    x, y = _data(50)
    with pytest.raises(PrivacySpecError, match="row_bound"):
        least_squares(x, y, row_bound=-1.0)
    with pytest.raises(UnsupportedProblemError, match="NaN"):  # the exact solve only
        least_squares(np.where(x > 0.4, np.nan, x), y, row_bound=1.0).solve(method="ols")
    with pytest.raises(UnsupportedProblemError, match="shape"):
        least_squares(x, y[:-1], row_bound=1.0)
    prob = least_squares(x, y, row_bound=1.0)
    with pytest.raises(BudgetError, match="never pure DP"):
        prob.solve_private(epsilon=1.0)
    with pytest.raises(BudgetError, match="delta > 0"):
        prob.solve_private(rho=0.5, mechanism="rp")
    with pytest.raises(UnsupportedProblemError, match="mechanism must be one of"):
        prob.solve_private(epsilon=1.0, delta=1e-5, mechanism="magic")
    with pytest.raises(PrivacySpecError, match="sketch size"):
        prob.solve_private(epsilon=1.0, delta=1e-5, mechanism="rp", sketch_size=0)
