"""Objective perturbation's second-order certificate beside public exponential cones."""

from __future__ import annotations

import cvxpy as cp
import numpy as np

import cvxdp


def test_private_weights_on_log_utilities_are_certified_at_large_epsilon():
    # reproducer (trial 11): Maximize(w @ log(1 + x)) with private weights, 0 <= x <= 2: the
    # hypograph variables have no public lower bound (no ball: R = inf), and a thin level set
    # near the released point failed to solve, which gave up the whole bound (gap inf)
    rng = np.random.default_rng(906)
    n = 30
    wv, price = rng.uniform(0.5, 2, n), rng.uniform(0.5, 1.5, n)
    w = cp.Parameter(n, nonneg=True, name="w", value=wv)
    x = cp.Variable(n, nonneg=True)
    prob = cp.Problem(cp.Maximize(w @ cp.log(1 + x)), [price @ x <= 10, x <= 2])
    ref = cp.Problem(prob.objective, prob.constraints)
    ref.solve(solver=cp.CLARABEL)
    sol = prob.solve_private(epsilon=1e6, delta=1e-6, rng=0,
                             private=cvxdp.ObjectivePrivacy(w, 1e-2))
    gap = (ref.value - float(prob.objective.value)) / max(1.0, abs(ref.value))
    assert sol.status == "optimal_inaccurate"
    assert gap <= sol.certificate.relative_gap_bound + 1e-7
    assert sol.certificate.relative_gap_bound <= 1e-2
