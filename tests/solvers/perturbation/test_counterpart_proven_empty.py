"""A tightened counterpart that bound propagation proves empty is not solved: the release is
the one the exact solvers' answers give (they find no point either), without their solves."""

from __future__ import annotations

import warnings

import cvxpy as cp
import numpy as np

import cvxdp
from cvxdp.solvers.perturbation import solve as pert_solve


def _kl_projection(n: int = 60):
    rng = np.random.default_rng(508)
    s = np.linspace(-2, 2, n)
    q = cp.Parameter(n, name="q", value=rng.dirichlet(np.ones(n) * 5))
    x = cp.Variable(n)
    prob = cp.Problem(cp.Minimize(cp.sum(cp.kl_div(x, q))),
                      [cp.sum(x) == 1, s @ x == 0.1, (s ** 2) @ x <= 1.0])
    return prob, x, cvxdp.ScalarPrivacy(q, sensitivity=3e-3)


def _solve():
    prob, x, spec = _kl_projection()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = prob.solve_private(epsilon=100, delta=1e-6, rng=0, private=spec)
    return sol, np.array(x.value)


def test_empty_counterpart_is_proven_and_the_release_is_the_solvers(monkeypatch):
    # the kl_div rows w_i <= q~_i - tau with w_i >= 0 (the exponential cone) and tau >= the
    # noise bound: some q~_i is below it at every level, so the counterpart is empty
    sol, x = _solve()
    assert sol.info["robust_solver"] == "bound propagation"
    assert sol.info["robust_status"] == cp.INFEASIBLE
    assert sol.info["point"] == "loosened counterpart"
    # the same release when every level is solved instead (no proof)
    monkeypatch.setattr(pert_solve, "proven_empty", lambda prog, slack: False)
    solved, x_solved = _solve()
    assert solved.info["robust_solver"] != "bound propagation"
    assert solved.info["point"] == "loosened counterpart"
    assert solved.value == sol.value and solved.status == sol.status
    np.testing.assert_array_equal(x_solved, x)
    c, c2 = sol.certificate, solved.certificate
    assert (c.gap_bound, c.violation_bound) == (c2.gap_bound, c2.violation_bound)
