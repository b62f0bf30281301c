"""Objective perturbation's gap through the released point and the public box (Hoelder)."""

import math

import cvxpy as cp
import numpy as np
import pytest
from scipy.stats import norm

import cvxdp


def _portfolio(n, seed=1):
    rng = np.random.default_rng(seed)
    mu = cp.Parameter(n, name="mu", value=np.abs(rng.normal(0.05, 0.03, n)))
    F = rng.normal(0, 0.1, (n, 5))
    Sigma = F @ F.T + np.diag(rng.uniform(0, 0.02, n))
    w = cp.Variable(n, name="w")
    prob = cp.Problem(cp.Maximize(mu @ w - 2.0 * cp.quad_form(w, Sigma)),
                      [cp.sum(w) == 1, w >= 0])
    return prob, mu, w


def test_a_simplex_is_certified_by_its_l1_diameter():
    """Trial 14's portfolio (100 private expected returns on the simplex) at epsilon 10:
    Thm C.12's 2 R t with the box radius R = sqrt(100) certified 0.593; the simplex's l1
    diameter 2 and the union bound on max |z_j| give 2 sigma Phi^-1(1 - beta / 2k), the
    certificate's probability 1 - 2 beta (two events)."""
    prob, mu, w = _portfolio(100)
    opt = prob.solve()
    sol = prob.solve_private(epsilon=10, delta=1e-6, rng=0,
                             private=cvxdp.ObjectivePrivacy(mu, sensitivity=1e-3))
    sigma = sol.privacy.details["sigma"]
    beta = sol.privacy.details["beta"]
    expected = 2.0 * sigma * norm.isf(beta / 200.0)
    assert sol.certificate.gap_bound == pytest.approx(expected, rel=1e-6)
    assert sol.certificate.probability == pytest.approx(1 - 2 * beta)
    assert sol.certificate.gap_bound < 0.593 / 10
    assert opt - prob.objective.value <= sol.certificate.gap_bound


def test_the_holder_bound_holds_on_seeded_runs():
    """20 seeds at epsilon 1 on a 12-asset simplex: the certified gap is never below the true
    gap (and is the Hoelder one: below Thm C.12's 2 R t)."""
    prob, mu, w = _portfolio(12, seed=3)
    opt = prob.solve()
    for seed in range(20):
        sol = prob.solve_private(epsilon=1.0, delta=1e-6, rng=seed,
                                 private=cvxdp.ObjectivePrivacy(mu, sensitivity=1e-2))
        true_gap = opt - prob.objective.value  # the user's objective at the released w
        assert true_gap <= sol.certificate.gap_bound + 1e-9
        alpha = sol.info["alpha_guaranteed"]
        assert math.isfinite(sol.certificate.gap_bound) and sol.certificate.gap_bound < alpha
