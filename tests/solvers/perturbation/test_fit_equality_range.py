"""The square share's range under public equalities (fit_detect._equality_range_part): the
noise counts only in the directions the equalities leave to the variables."""

import cvxpy as cp
import numpy as np

import cvxdp
from cvxdp.solvers.perturbation.fit_detect import detect_fit_terms


def _nearest_correlation(seed, n=5):
    rng = np.random.default_rng(seed)
    M = rng.uniform(-1, 1, (n, n))
    M = (M + M.T) / 2
    np.fill_diagonal(M, 1.0)
    C = cp.Parameter((n, n), name="C", value=M)
    X = cp.Variable((n, n), symmetric=True, name="X")
    return cp.Problem(cp.Minimize(cp.norm(X - C, "fro")), [cp.diag(X) == 1, X >> 0]), C


def _fixed_sum_ls(seed, m=30, n=6):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((m, n))
    y = cp.Parameter(m, name="y", value=A @ rng.dirichlet(np.ones(n)) + 0.1 * rng.normal(size=m))
    x = cp.Variable(n, name="x")
    return cp.Problem(cp.Minimize(cp.norm(A @ x - y, 2)), [cp.sum(x) == 1, x[0] == 0.2]), y


def test_the_range_is_that_of_the_directions_the_equalities_leave():
    """A 5 x 5 symmetric matrix with a fixed diagonal moves in 10 of the residual's 25
    directions (the square share's chi-square has 10 degrees of freedom, not 25); six
    coefficients under two independent equalities, in 4 of the residual's 30."""
    prob, C = _nearest_correlation(0)
    (term,) = detect_fit_terms(prob, (C,)).terms
    assert term.J_range.shape == (10, 25)
    prob, y = _fixed_sum_ls(0)
    (term,) = detect_fit_terms(prob, (y,)).terms
    assert term.J_range.shape == (4, 30)
    # without an equality the range is J_x's, as before (6 directions)
    free = cp.Problem(cp.Minimize(prob.objective.args[0]), [])
    (term,) = detect_fit_terms(free, (y,)).terms
    assert term.J_range.shape == (6, 30)


def test_certificates_with_the_equalities_range_hold_against_the_exact_solve():
    """12 seeds of each model at epsilon 10 and 1: every certificate holds against the exact
    solve (0 of 48 invalid; the events' probability is 1 - 2e-3)."""
    bad = 0
    for seed in range(12):
        for build, sens in ((_nearest_correlation, 2e-2), (_fixed_sum_ls, 1e-2)):
            for eps in (10.0, 1.0):
                prob, p = build(seed)
                sol = prob.solve_private(epsilon=eps, delta=1e-6, rng=seed, reference=True,
                                         private=cvxdp.ScalarPrivacy(p, sensitivity=sens))
                ref = sol.validation.reference_value
                bad += sol.validation.objective_gap > (sol.certificate.gap_bound
                                                       + 1e-7 * (1 + abs(ref)))
    assert bad == 0
