"""Private nonlinear constraints of shapes the user's-terms fits do not cover: certified at
the tightened counterpart's point, and named without their data."""

from __future__ import annotations

import cvxpy as cp
import numpy as np

import cvxdp


def _model(variable_denominator: bool):
    rng = np.random.default_rng(934)
    m, n = 200, 6
    A = rng.normal(size=(m, n)) / np.sqrt(m)
    bv = A @ rng.normal(size=n) + 0.1 * rng.normal(size=m)
    b = cp.Parameter(m, name="b", value=bv)
    x, s = cp.Variable(n), cp.Variable(nonneg=True)
    den = s + 1 if variable_denominator else 3
    con = cp.quad_over_lin(A @ x - b, den) <= 1
    prob = cp.Problem(cp.Minimize(rng.normal(size=n) @ x + 5 * s), [con, cp.norm(x, "inf") <= 3])
    return prob, b, con


def test_quad_over_lin_with_a_variable_denominator_is_certified():
    # reproducer (trial 11): certified violation inf at every epsilon (user_limit at 1e6, true
    # violation 0), and the guarantee printed the matrix A in the middle of a sentence
    prob, b, con = _model(True)
    sol = prob.solve_private(epsilon=1e6, delta=1e-6, rng=0,
                             private=cvxdp.ScalarPrivacy(b, 1e-3))
    assert sol.status == "optimal_inaccurate"
    assert float(np.max(con.violation())) <= sol.certificate.violation_bound <= 1e-6
    assert "[[" not in sol.info["guarantee"]


def test_unbounded_constraint_is_named_by_index_and_atom():
    # at a small epsilon the point may come from a weaker level: the message names the
    # constraint by its index and atoms, never by its data
    prob, b, con = _model(True)
    for seed in range(4):
        sol = prob.solve_private(epsilon=0.05, delta=1e-6, rng=seed,
                                 private=cvxdp.ScalarPrivacy(b, 1e-3))
        assert "[[" not in sol.info["guarantee"] and "[[" not in str(sol.status_reason)
        assert float(np.max(con.violation())) <= sol.certificate.violation_bound + 1e-7
