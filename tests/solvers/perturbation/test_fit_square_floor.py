"""The squares' residual floor (``fit_term._square_floors``): least squares with many private
targets, where the reverse triangle inequality's lower bound on the optimum collapses (it loses
the noise's whole norm), keeps the part of the residual outside the design's range up to the
fluctuation of the noise's chi-square (docs/certificates.md, "Fit terms with private
targets")."""

import warnings

import cvxpy as cp
import numpy as np
import pytest

import cvxdp
import cvxdp.solvers.perturbation.fit_term as fit_term


def _ls(m=1200, n=20, seed=0):
    """Held-out trial 22a's least squares: 1,200 private targets in [-1, 1], 20 coefficients."""
    r = np.random.default_rng(seed)
    A = r.standard_normal((m, n))
    b = cp.Parameter(m, name="b", value=np.clip(
        A @ r.standard_normal(n) / 5 + 0.1 * r.standard_normal(m), -1, 1))
    x = cp.Variable(n, name="x")
    return cp.Problem(cp.Minimize(cp.sum_squares(A @ x - b))), b


def _lower(prob, b, seed):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = prob.solve_private(epsilon=10, delta=1e-6, rng=seed,
                                 private=cvxdp.ScalarPrivacy(b, sensitivity=0.01))
    return sol.certificate.optimum_lower


def test_the_floor_holds_and_keeps_most_of_the_optimum():
    prob, b = _ls()
    opt = prob.solve(solver=cp.CLARABEL)                      # 34.5
    lowers = [_lower(prob, b, seed) for seed in range(8)]
    assert max(lowers) <= opt
    # the reverse triangle alone gave 3.0 (of 34.5) at seed 0; the floor about 25
    assert np.median(lowers) >= 0.6 * opt


def test_without_the_floor_the_bound_is_the_reverse_triangles(monkeypatch):
    prob, b = _ls()
    opt = prob.solve(solver=cp.CLARABEL)
    monkeypatch.setattr(fit_term, "_square_floors", lambda *a, **k: -np.inf)
    assert _lower(prob, b, 0) <= 0.2 * opt


@pytest.mark.parametrize("seed", range(3))
def test_a_fit_beside_a_public_l1_term_takes_no_floor(seed):
    # a private Lipschitz term (norm1 of x - b[:10]) beside the square: the floor needs every
    # private term a square, so it is not taken, and the optimum's lower bound still holds
    prob, b = _ls(m=300, n=10, seed=seed)
    x = prob.variables()[0]
    prob2 = cp.Problem(cp.Minimize(prob.objective.args[0] + 0.1 * cp.norm1(x - b[:10])))
    opt = prob2.solve(solver=cp.CLARABEL)
    assert _lower(prob2, b, seed) <= opt
