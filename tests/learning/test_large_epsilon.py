"""Objective perturbation at large epsilon: every split must be planned (the separate analysis
of Kifer, Smith & Thakurta 2012, Thm 2 is always valid), and more epsilon never gives a larger
noise scale or a refusal."""

from __future__ import annotations

import math

import cvxpy as cp
import numpy as np
import pytest
from scipy import stats

import cvxdp
from cvxdp.learning.detect import detect
from cvxdp.learning.domain import theta_bound
from cvxdp.learning.joint_calibration import joint_calibration
from cvxdp.learning.objective_perturbation import plan_objective_perturbation
from cvxdp.learning.solve import _plans
from cvxdp.privacy.budgets import ApproxDP, PureDP
from cvxdp.privacy.objective_perturbation import calibrate_objective_perturbation

N, D = 300, 5


def _logistic_model(kind):
    rng = np.random.default_rng(0)
    A = rng.normal(size=(N, D))
    X = cp.Parameter((N, D), value=A)
    y = cp.Parameter(N, value=np.sign(A @ np.ones(D) + rng.normal(size=N)))
    w, b = cp.Variable(D), cp.Variable()
    loss = cp.mean(cp.logistic(-cp.multiply(y, X @ w + b)))
    if kind == "boxed":
        prob = cp.Problem(cp.Minimize(loss), [cp.abs(w) <= 3, cp.abs(b) <= 3])
    else:   # ridge on w only, intercept free, no constraint
        prob = cp.Problem(cp.Minimize(loss + 0.01 * cp.sum_squares(w)))
    return detect(prob, cvxdp.RowPrivacy(X, y, row_bound=3 * math.sqrt(D), label_bound=1.0))


@pytest.mark.parametrize("delta", [0.0, 1e-6])
def test_joint_calibration_at_a_large_jacobian_share_is_never_refused(delta):
    # eps1 = 0.9 eps at eps = 15: kappa = e^13.5 - 1 ~ 7e5; the separate analysis is valid
    for eps in (15.0, 30.0, 100.0):
        sep = calibrate_objective_perturbation(
            epsilon=eps, delta=delta, epsilon_jacobian=0.9 * eps, hessian_bound=0.25,
            strong_convexity=0.0, gradient_bound=1.0, neighbours="replace")
        cal = joint_calibration(epsilon=eps, delta=delta, Delta=sep.Delta, hessian_bound=0.25,
                                strong_convexity=0.0, gradient_bound=1.0,
                                neighbours="replace")
        assert cal.Delta == sep.Delta and cal.budget == sep.budget
        if delta == 0:
            assert cal.gamma_scale <= sep.gamma_scale * (1 + 1e-12)
        else:
            assert cal.sigma <= sep.sigma * (1 + 1e-12)


@pytest.mark.parametrize("kind", ["boxed", "free"])
@pytest.mark.parametrize("budget", [ApproxDP, PureDP])
def test_objective_perturbation_noise_is_monotone_in_epsilon(kind, budget):
    model = _logistic_model(kind)
    W = theta_bound(model)
    scales = []
    for eps in (5.0, 10.0, 15.0, 30.0, 100.0):
        b = budget(eps, 1e-6) if budget is ApproxDP else budget(eps)
        plan = plan_objective_perturbation(model, b, W, beta=1e-3)
        assert plan.calibration.budget.epsilon == b.epsilon
        # the noise's norm quantile: comparable across the two noise families an (epsilon,
        # delta) budget plans
        scales.append(plan.noise_norm)
    assert all(s > 0 for s in scales)
    assert all(b <= a * (1 + 1e-9) for a, b in zip(scales[:-1], scales[1:], strict=True)), scales


def test_auto_keeps_objective_perturbation_at_large_epsilon():
    model = _logistic_model("boxed")
    W = theta_bound(model)
    for eps in (10.0, 15.0, 30.0):
        name, plan, auto = _plans(model, ApproxDP(eps, 1e-6), W, 1e-3, 200, "auto", None)
        assert "objective" not in auto["not_applicable"], auto["not_applicable"]
        assert name == "objective"


@pytest.mark.parametrize("delta", [0.0, 1e-6])
def test_joint_calibration_at_large_kappa_meets_epsilon_on_a_dense_grid(delta):
    # independent of the cell bound: J + N on 2e6 points (and near a = 0, where J is steepest)
    eps = 30.0
    sep = calibrate_objective_perturbation(
        epsilon=eps, delta=delta, epsilon_jacobian=0.9 * eps, hessian_bound=0.25,
        strong_convexity=0.0, gradient_bound=1.0, neighbours="replace")
    cal = joint_calibration(epsilon=eps, delta=delta, Delta=sep.Delta, hessian_bound=0.25,
                            strong_convexity=0.0, gradient_bound=1.0, neighbours="replace")
    kappa = 0.25 / sep.Delta
    a = np.concatenate([np.linspace(0, 1, 2_000_001), np.geomspace(1e-14, 1e-3, 20_001)])
    J = np.log1p(4 * kappa * a * (1 - a))
    if delta == 0:
        N = cal.eps_noise * (1 + a) / 2
    else:
        q = math.sqrt(stats.chi2.isf(delta, 2))
        t = (1 + a) / cal.sigma
        N = q * t + t * t / 2
    worst = max(float(np.max(J + N)), float(N[np.argmax(a)]))
    assert worst <= eps
    assert worst >= eps * (1 - 1e-3)      # and the noise is not wasted
