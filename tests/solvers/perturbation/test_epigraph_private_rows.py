"""The certificate's gap at a point that does not meet the rows defining the objective's
epigraph variables, when private data define them: no upper bound on the user's objective."""

from __future__ import annotations

import cvxpy as cp
import numpy as np

import cvxdp


def test_kl_projection_with_a_private_reference_keeps_a_valid_gap():
    # reproducer (trial 13): min sum(kl_div(p, q)) with a private q at epsilon 1: the tightened
    # counterpart is empty, the loosened point is released, and its certified relative gap was
    # ~0 while the user's objective there is 0.22 above the optimum (the excess sits in the
    # epigraph rows, which c'x does not see)
    rng = np.random.default_rng(1015)
    n = 20
    qv = rng.dirichlet(np.ones(n))
    A = rng.uniform(0, 1, (3, n))
    q = cp.Parameter(n, nonneg=True, name="q", value=qv)
    p = cp.Variable(n)
    prob = cp.Problem(cp.Minimize(cp.sum(cp.kl_div(p, q))), [A @ p <= 0.45, cp.sum(p) == 1])
    ref = cp.Problem(prob.objective, prob.constraints)
    ref.solve(solver=cp.CLARABEL)
    for seed in range(3):
        sol = prob.solve_private(epsilon=1, delta=1e-6, rng=seed,
                                 private=cvxdp.ScalarPrivacy(q, 1e-3))
        gap = (float(prob.objective.value) - ref.value) / max(1.0, abs(ref.value))
        assert gap <= sol.certificate.relative_gap_bound + 1e-7, (seed, gap)


def test_tightened_point_keeps_its_gap_when_only_inequality_rows_define_the_epigraph(
        exact_value):
    # an inventory model (trial 11): private demand in the objective's fit term (SOC rows,
    # tightened) and in a balance equality (a band, not part of the objective's epigraph): the
    # tightened point's objective bound stands and the model is certified at 1e6
    rng = np.random.default_rng(929)
    T = 60
    d = cp.Parameter(T, nonneg=True, name="d",
                     value=2 + np.sin(np.arange(T) / 5) + 0.3 * rng.random(T))
    s, q = cp.Variable(T + 1), cp.Variable(T, nonneg=True)
    cons = [s[0] == 0, s[1:] == s[:-1] + q - d, s >= 0, q <= 4]
    prob = cp.Problem(cp.Minimize(cp.sum(q) + 0.1 * cp.sum(s)
                                  + 0.05 * cp.sum_squares(q - d)), cons)
    opt = exact_value(prob)
    sol = prob.solve_private(epsilon=1e6, delta=1e-6, rng=0,
                             private=cvxdp.ScalarPrivacy(d, 1e-2))
    assert sol.status == "optimal_inaccurate"
    assert (float(prob.objective.value) - opt) / max(1.0, abs(opt)) <= \
        sol.certificate.relative_gap_bound + 1e-7
