"""The loosened counterpart's lower bound when Clarabel stops short of 'solved'."""

from __future__ import annotations

import cvxpy as cp

import cvxdp


def test_regularised_logistic_with_a_private_design_is_certified(exact_value, labelled_rows):
    # reproducer (trial 13): L2-regularised logistic regression with a private X inside
    # logistic() (a lifted cone coordinate): the loosened counterpart came back 'almost solved'
    # at both tolerances and no lower bound was taken (certified gap 0.48 = the objective)
    m, n = 150, 5
    Xv, yv = labelled_rows(1005, m, n)
    X = cp.Parameter((m, n), name="X", value=Xv)
    w = cp.Variable(n)
    obj = cp.sum(cp.logistic(-cp.multiply(yv, X @ w))) / m + 0.1 * cp.sum_squares(w)
    prob = cp.Problem(cp.Minimize(obj), [cp.abs(w) <= 10])
    opt = exact_value(prob)
    sol = prob.solve_private(epsilon=1e6, delta=1e-6, rng=0,
                             private=cvxdp.ConstraintPrivacy(X, 1e-3))
    c = sol.certificate
    assert sol.status == "optimal_inaccurate"
    assert c.optimum_lower <= opt + 1e-7 and c.relative_gap_bound <= 1e-2
