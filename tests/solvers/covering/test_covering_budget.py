"""Covering: the practical schedule follows the budget, and costs below 1 are rescaled instead
of clipped (issue 22 item 3)."""

from __future__ import annotations

import math
import warnings

import cvxpy as cp
import numpy as np
import pytest

import cvxdp
from cvxdp.privacy.budgets import ApproxDP
from cvxdp.solvers.covering.covering_private import T_BUDGET_MAX, plan_schedule


def test_rounds_grow_with_the_budget_and_eta_falls():
    small = plan_schedule(ApproxDP(1.0, 1e-6), kind="sdp", dim=4)
    large = plan_schedule(ApproxDP(1e6, 1e-6), kind="sdp", dim=4)
    assert small.T == 8 and small.eta == 0.5          # T_min = max(8, r): unchanged
    assert large.T == T_BUDGET_MAX
    assert large.eta == pytest.approx(0.5 * math.sqrt(8 / T_BUDGET_MAX))
    given = plan_schedule(ApproxDP(1e6, 1e-6), kind="sdp", dim=4, eta=0.5)
    assert given.eta == 0.5                            # a user's eta is kept


def _set_cover(seed: int = 0):
    rng = np.random.default_rng(seed)
    m, n = 150, 8
    rows = (rng.uniform(size=(m, n)) < 0.4).astype(float)
    rows[np.arange(m), rng.integers(0, n, m)] = 1.0
    A = cp.Parameter((m, n), name="A", value=rows)
    c = rng.uniform(0.2, 0.9, n)  # public costs below 1
    x = cp.Variable(n, name="x")
    con = A @ x >= 1
    return cp.Problem(cp.Minimize(c @ x), [con, x >= 0]), con, x


def test_costs_below_one_are_rescaled_not_clipped():
    prob, con, x = _set_cover()
    ref, *_ = _set_cover()
    ref.solve()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = prob.solve_private(epsilon=1e6, delta=1e-6, rng=0, reference=True,
                                 private=cvxdp.ConstraintSetPrivacy(con))
    # before: rows a_ij / c_j up to 5 clipped to 1 -> cost 2.8 x the optimum (gap +2.8)
    gap = (prob.objective.value - ref.value) / ref.value
    assert gap <= 0.2
    assert np.max(con.violation()) <= 0.05
    assert sol.validation.reference_value == pytest.approx(ref.value, rel=1e-5)
    assert sol.value == pytest.approx(prob.objective.value, rel=1e-6)
