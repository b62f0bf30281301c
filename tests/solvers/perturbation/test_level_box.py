"""The loosened counterpart's lower bound when the true feasible set is unbounded: the
objective's level set through the released point bounds where the optimum lies."""

from __future__ import annotations

import cvxpy as cp
import numpy as np

import cvxdp


def test_svm_without_public_bounds_is_certified_at_large_epsilon(exact_value, labelled_rows):
    # reproducer (trial 11): soft-margin SVM (cvxpy.org's example) with private features and
    # no public bound on the weights: optimum_lower was 0 (CVXPY's sign analysis), so the
    # certified gap was the objective itself (0.092) at every epsilon
    m, n = 500, 5
    Xv, yv = labelled_rows(919, m, n)
    X = cp.Parameter((m, n), name="X", value=Xv)
    beta, v = cp.Variable(n), cp.Variable()
    f = 0.1 * cp.sum(cp.pos(1 - cp.multiply(yv, X @ beta - v))) / m + cp.sum_squares(beta) / 2
    prob = cp.Problem(cp.Minimize(f))
    opt = exact_value(prob)
    sol = prob.solve_private(epsilon=1e6, delta=1e-6, rng=0,
                             private=cvxdp.ConstraintPrivacy(X, 1e-2))
    c = sol.certificate
    assert sol.status == "optimal_inaccurate"
    assert c.optimum_lower <= opt + 1e-7 and c.relative_gap_bound <= 1e-3
    assert float(prob.objective.value) - opt <= c.gap_bound + 1e-7


def test_binding_lyapunov_lmi_is_certified_at_large_epsilon(exact_value):
    # reproducer (trial 11): min trace(P) s.t. P >> 0.1 I, A'P + PA << -I, private A: the
    # solutions scale up (P -> cP), the LMI unit was dropped and the bound was the public-only
    # optimum 0.6 against 6.308 (certified gap 5.7)
    rng = np.random.default_rng(932)
    k = 6
    Av = rng.normal(size=(k, k))
    Av -= (max(np.linalg.eigvals(Av).real) + 0.3) * np.eye(k)
    A = cp.Parameter((k, k), name="A", value=Av)
    P = cp.Variable((k, k), symmetric=True)
    prob = cp.Problem(cp.Minimize(cp.trace(P)),
                      [P >> 0.1 * np.eye(k), A.T @ P + P @ A << -np.eye(k)])
    opt = exact_value(prob)
    sol = prob.solve_private(epsilon=1e6, delta=1e-6, rng=0,
                             private=cvxdp.ConstraintPrivacy(A, 1e-3))
    c = sol.certificate
    assert sol.status == "optimal_inaccurate"
    assert opt - 1e-3 <= c.optimum_lower <= opt + 1e-7
    assert c.relative_gap_bound <= 1e-2


def test_level_box_lower_bounds_hold_over_seeds(exact_value):
    # the bound stays valid at a small epsilon, seed by seed
    rng = np.random.default_rng(3)
    m, n = 200, 3
    Xv = rng.normal(size=(m, n))
    yv = np.sign(Xv @ np.ones(n) + 0.3 * rng.normal(size=m))
    X = cp.Parameter((m, n), name="X", value=Xv)
    beta, v = cp.Variable(n), cp.Variable()
    f = cp.sum(cp.pos(1 - cp.multiply(yv, X @ beta - v))) / m + cp.sum_squares(beta)
    prob = cp.Problem(cp.Minimize(f))
    opt = exact_value(prob)
    for seed in range(8):
        sol = prob.solve_private(epsilon=3.0, delta=1e-6, rng=seed,
                                 private=cvxdp.ConstraintPrivacy(X, 1e-2))
        assert sol.certificate.optimum_lower <= opt + 1e-7
