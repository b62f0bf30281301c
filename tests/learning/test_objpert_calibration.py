"""cvxdp.privacy.objective_perturbation against independent computations of its two steps."""

from __future__ import annotations

import math

import numpy as np
import pytest

from cvxdp.errors import BudgetError
from cvxdp.learning.objective_perturbation import EPS1_MAX
from cvxdp.privacy.budgets import ApproxDP, PureDP
from cvxdp.privacy.objective_perturbation import (
    calibrate_objective_perturbation,
    jacobian_delta,
)


@pytest.mark.parametrize("lam,mu,eps1", [(0.25, 0.0, 0.5), (0.25, 1.0, 0.05), (2.0, 0.1, 3.0),
                                         (0.25, 1.0, 0.5)])
def test_delta_makes_the_worst_determinant_ratio_e_to_eps1(lam, mu, eps1):
    # replace-one at the worst case: the common Hessian is (Delta + mu) I (the other rows
    # add nothing in some direction), the two rows' Hessians lam u u' and lam v v'
    Delta = jacobian_delta(hessian_bound=lam, strong_convexity=mu, epsilon_jacobian=eps1)
    d = 3
    A = (Delta + mu) * np.eye(d)
    rng = np.random.default_rng(0)
    worst = 0.0
    for _ in range(200):
        u, v = rng.normal(size=(2, d))
        u, v = u / np.linalg.norm(u), v / np.linalg.norm(v)
        a, b = rng.uniform(0, lam, 2)
        r = np.linalg.slogdet(A + a * np.outer(u, u))[1] - np.linalg.slogdet(
            A + b * np.outer(v, v))[1]
        worst = max(worst, abs(r))
    exact = math.log1p(lam / (Delta + mu))      # one row at lam against none
    assert worst <= eps1 + 1e-12 and exact <= eps1 + 1e-12
    if Delta > 0:
        assert exact == pytest.approx(eps1, rel=1e-12)   # no ridge beyond what is needed


def test_replace_and_add_remove_sensitivities_and_budgets():
    rep = calibrate_objective_perturbation(epsilon=1.0, delta=1e-6, epsilon_jacobian=0.3,
                                           hessian_bound=0.25, strong_convexity=0.0,
                                           gradient_bound=0.5, neighbours="replace")
    add = calibrate_objective_perturbation(epsilon=1.0, delta=1e-6, epsilon_jacobian=0.3,
                                           hessian_bound=0.25, strong_convexity=0.0,
                                           gradient_bound=0.5, neighbours="add_remove")
    assert (rep.sensitivity, rep.span, add.sensitivity, add.span) == (1.0, 2, 0.5, 1)
    assert rep.Delta == add.Delta == pytest.approx(0.25 / math.expm1(0.3))
    assert rep.eps_noise == pytest.approx(0.7) and rep.budget == ApproxDP(1.0, 1e-6)
    assert rep.record().budget == ApproxDP(1.0, 1e-6)
    pure = calibrate_objective_perturbation(epsilon=2.0, delta=0.0, epsilon_jacobian=0.5,
                                            hessian_bound=0.25, strong_convexity=0.0,
                                            gradient_bound=0.5, neighbours="replace")
    assert pure.sigma is None and pure.gamma_scale == pytest.approx(1.0 / 1.5)
    assert pure.budget == PureDP(2.0)


def test_bad_splits_are_refused():
    with pytest.raises(BudgetError, match="share of epsilon"):
        calibrate_objective_perturbation(epsilon=1.0, delta=1e-6, epsilon_jacobian=1.0,
                                         hessian_bound=0.25, strong_convexity=0.0,
                                         gradient_bound=0.5, neighbours="replace")
    with pytest.raises(BudgetError, match="positive share"):
        jacobian_delta(hessian_bound=0.25, strong_convexity=0.0, epsilon_jacobian=0.0)


def test_the_jacobian_ridge_is_never_zero_where_the_proof_needs_it():
    """``Delta = lambda / (e^eps1 - 1)`` underflows to 0 from eps1 ~ 745 on: with ``mu = 0`` the
    Jacobian factor ``1 + lambda / (Delta + mu)`` was then unbounded for the computed Delta (a
    division by zero in the calibration). Such a share is refused (the planner skips it), and
    the planner's shares stop at EPS1_MAX, where Delta is 1e-12 lambda."""
    with pytest.raises(BudgetError, match="too large"):
        jacobian_delta(hessian_bound=0.5, strong_convexity=0.0, epsilon_jacobian=1000.0)
    Delta = jacobian_delta(hessian_bound=0.5, strong_convexity=0.0, epsilon_jacobian=EPS1_MAX)
    assert Delta == pytest.approx(0.5e-12, rel=1e-9)
    assert math.log1p(0.5 / Delta) <= EPS1_MAX * (1 + 1e-12)
    # with strong convexity a zero Delta is what the rule asks for (mu bounds the factor)
    assert jacobian_delta(hessian_bound=0.5, strong_convexity=0.1, epsilon_jacobian=1000.0) == 0
