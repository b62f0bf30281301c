"""Reproducers from the privacy review of the row-level mechanisms (docs/learning.md).

Each test states a promise the mechanisms make and checks it where a solver's tolerance or a
failure could break it: the status comes from a certificate at the default accuracy, one row
moves a released sum by at most its stated sensitivity at ANY released point, and a failing
solve on the private rows raises nothing.
"""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest
from scipy import stats

import cvxdp
from cvxdp.learning.detect import detect
from cvxdp.learning.domain import theta_bound
from cvxdp.learning.noisy_gradient import _gradient, plan_noisy_gradient
from cvxdp.learning.objective_perturbation import (
    objective_perturbation,
    plan_objective_perturbation,
)
from cvxdp.learning.solve import _release_value
from cvxdp.privacy.budgets import ApproxDP
from cvxdp.status import DEFAULT_ACCURACY
from tests.learning.gallery import data, least_squares

N = 200


def _logistic(n=N, radius=3.0, seed=3):
    rng = np.random.default_rng(seed)
    Xv = rng.uniform(-0.5, 0.5, (n, 3))
    yv = np.where(Xv @ np.array([1.0, -2.0, 0.5]) > 0, 1.0, -1.0)
    X, y = cp.Parameter(Xv.shape, value=Xv), cp.Parameter(n, value=yv)
    w = cp.Variable(3, name="w")
    cons = [cp.norm(w, 2) <= radius] if radius else []
    prob = cp.Problem(cp.Minimize(cp.sum(cp.logistic(-cp.multiply(y, X @ w))) / n
                                  + 0.01 * cp.sum_squares(w)), cons)
    return prob, cvxdp.RowPrivacy(X, y, row_bound=1.0, label_bound=1.0)


def test_status_without_accuracy_is_the_default_accuracy_promise():
    # a finite but large excess-risk bound is not a success: the default accuracy (1e-2,
    # relative to max(1, |OPT|)) applies, as on every other path (cvxdp.status.status_of)
    prob, spec = _logistic()
    sol = prob.solve_private(epsilon=0.1, delta=1e-6, private=spec, rng=0, value_share=0.0)
    assert sol.info["excess_risk_bound"] > DEFAULT_ACCURACY
    assert sol.status == cp.USER_LIMIT
    assert "certified relative gap" in sol.info["status_reason"]


def _neighbours():
    Xv, y_reg, y_cls = data(n=50)
    X2, y2 = Xv.copy(), y_reg.copy()
    Xv, y_reg = Xv.copy(), y_reg.copy()
    Xv[0], y_reg[0] = [1.0, 0.0, 0.0, 0.0], -2.0      # both inside the public bounds
    X2[0], y2[0] = [0.0, 0.0, 0.0, 0.0], 0.0
    prob, spec = least_squares(Xv, y_reg, y_cls)    # ||w|| <= 2, row 1, label 2
    return detect(prob, spec), (Xv, y_reg), (X2, y2)


def test_released_loss_sum_moves_by_its_sensitivity_at_any_point():
    # the point is public, but a solver returns it within a tolerance of the constraint set;
    # the sum's sensitivity 2 sup|l| must hold wherever it lies (here outside ||w|| <= 2)
    model, (X, y), (X2, y2) = _neighbours()
    W = theta_bound(model)
    theta = np.array([4.0, 0.0, 0.0, 0.0])
    V = model.loss.value_bound(model.feature_bound * W, model.label_bound)
    vals = [_release_value(model, theta, Xv, yv, W, np.random.default_rng(1),
                           {"epsilon": 1e9})[0] for Xv, yv in ((X, y), (X2, y2))]
    assert abs(vals[0] - vals[1]) <= 2 * V * (1 + 1e-9)


def test_gradient_step_moves_by_its_sensitivity_at_any_iterate():
    model, (X, y), (X2, y2) = _neighbours()
    W = theta_bound(model)
    plan = plan_noisy_gradient(model, ApproxDP(1.0, 1e-6), W, beta=1e-3, steps=5)
    theta = np.array([10.0, 0.0, 0.0, 0.0])
    L = plan.dl_bound
    g = _gradient(model, X, y, theta, L) - _gradient(model, X2, y2, theta, L)
    assert np.linalg.norm(g) <= plan.G * (1 + 1e-9)


def test_a_failing_solve_on_the_private_rows_raises_nothing(monkeypatch):
    # whether the solver fails on the private rows depends on them: it must not surface
    prob, spec = _logistic(radius=None)
    model = detect(prob, spec)
    budget = ApproxDP(1.0, 1e-6)
    plan = plan_objective_perturbation(model, budget, theta_bound(model), beta=1e-3)

    def fail(self, *args, **kwargs):
        raise cp.SolverError("solver failed on these data")

    monkeypatch.setattr(cp.Problem, "solve", fail)
    X, y = spec.X.value, spec.y.value
    theta, record, _ = objective_perturbation(model, plan, budget, X, y,
                                              np.random.default_rng(0))
    assert theta.shape == (3,) and record.mechanism == "objective_perturbation"


@pytest.mark.parametrize("neighbours", ["replace", "add_remove"])
def test_record_budget_is_the_calibrated_budget(neighbours):
    prob, spec = _logistic()
    spec = cvxdp.RowPrivacy(spec.X, spec.y, row_bound=1.0, label_bound=1.0,
                            neighbours=neighbours)
    for mech in ("objective", "output", "gradient"):
        sol = prob.solve_private(epsilon=1.0, delta=1e-6, private=spec, rng=0,
                                 mechanism=mech, steps=5, value_share=0.05)
        assert sol.privacy.epsilon == pytest.approx(1.0, rel=1e-6)
        assert sol.privacy.delta == pytest.approx(1e-6, rel=1e-6)


def test_output_bound_uses_the_true_lipschitz_constant_of_a_linear_regulariser():
    # F(th^) - F* <= (n zeta + L_R) |b|_beta needs L_R >= the regulariser's Lipschitz constant;
    # for w @ a that is ||a|| (50 here), not sqrt(d)
    prob, spec = _logistic()
    w = prob.variables()[0]
    a = np.array([50.0, 0.0, 0.0])
    prob = cp.Problem(cp.Minimize(prob.objective.args[0] + w @ a), prob.constraints)
    sol = prob.solve_private(epsilon=1.0, delta=1e-6, private=spec, rng=0, mechanism="output",
                             value_share=0.0)
    zeta = 1.0 / N                              # logistic: |l'| <= 1 / N per row, ||x|| <= 1
    L_R = 2 * 0.01 * 3.0 + 50.0                 # 0.01 sum_squares on ||w|| <= 3, and w @ a
    # the noise's norm quantile, whichever family ran (the Gaussian or the pure Gamma norm)
    b = (sol.info["noise_sigma"] * np.sqrt(stats.chi2.isf(1e-3, 3))
         if sol.info["noise_sigma"] is not None
         else stats.gamma.isf(1e-3, 3, scale=sol.info["noise_gamma_scale"]))
    assert sol.info["excess_risk_bound"] >= (N * zeta + L_R) * b * (1 - 1e-9)
