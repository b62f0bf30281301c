"""A squared fit with a private design matrix: detection, the noise matrix's norm, the
certificate against exact solves."""

import cvxpy as cp
import numpy as np
import pytest

import cvxdp
from cvxdp.solvers.perturbation.fit_bilinear import (
    _spectral_norm,
    design_noise_norm,
    second_derivatives,
    variance_sums,
)
from cvxdp.solvers.perturbation.fit_detect import detect_fit_terms


def test_a_private_design_matrix_is_a_bilinear_square():
    F = cp.Parameter((8, 3), name="F", value=np.ones((8, 3)))
    w = cp.Variable(3)
    model = detect_fit_terms(cp.Problem(cp.Minimize(cp.sum_squares(F @ w)), [cp.sum(w) == 1]),
                             (F,))
    (t,) = model.terms
    assert t.kind == "bilinear" and t.B.shape == (8, 24, 3)
    # d^2 (F w)_i / dF_ik dw_j = [i == row of entry k] [j == column of entry k]
    k = 8 * 2 + 5                     # F[5, 2] in column-major order
    B = t.B.toarray()
    assert B[5, k, 2] == 1.0 and np.count_nonzero(B[:, k, :]) == 1


def test_design_noise_norm_holds_with_its_probability():
    """||sum_k e_k B_k||_2 <= omega on at least 1 - beta of 2,000 seeded draws (the matrix
    Gaussian series bound, and the sub-exponential matrix Bernstein bound for the Laplace),
    within 4x the empirical quantile."""
    rows, n = 10, 3
    B = np.zeros((rows, rows * n, n))
    for k in range(rows * n):
        B[k % rows, k, k // rows] = 1.0       # W = E, an iid 10 x 3 noise matrix
    sigma = np.full(rows * n, 0.5)
    rng = np.random.default_rng(5)
    for noise in ("gaussian", "laplace"):
        omega = design_noise_norm(B, sigma, 0.05, noise)
        draws = rng.laplace(size=(2000, rows * n)) if noise == "laplace" else rng.normal(
            size=(2000, rows * n))
        norms = [np.linalg.norm((g * sigma).reshape((rows, n), order="F"), 2) for g in draws]
        assert np.mean(np.array(norms) > omega) <= 0.05
        assert omega <= 4.0 * np.quantile(norms, 0.95)


def _min_variance(seed):
    rng = np.random.default_rng(seed)
    N, n = 30, 6
    F = cp.Parameter((N, n), name="F", value=rng.uniform(-1, 1, (N, n)) / np.sqrt(N))
    w = cp.Variable(n, name="w")
    return cp.Problem(cp.Minimize(cp.sum_squares(F @ w)), [cp.sum(w) == 1, w >= 0]), F, w


def _constrained_ls(seed):
    rng = np.random.default_rng(seed)
    A = cp.Parameter((15, 4), name="A", value=rng.uniform(0, 1, (15, 4)))
    b = rng.uniform(0, 1, 15)
    x = cp.Variable(4, name="x")
    return (cp.Problem(cp.Minimize(cp.sum_squares(A @ x - b)),
                       [cp.sum(x) == 1, cp.norm_inf(x) <= 1]), A, x, b)


@pytest.mark.parametrize("eps", [1e6, 10.0, 1.0])
def test_bilinear_certificate_holds_against_the_exact_solve(eps):
    """Minimum variance with a private factor and constrained least squares with a private
    design, 6 seeds each: every certificate holds against the exact solve; at epsilon 1e6 both
    are certified within accuracy."""
    for seed in range(6):
        prob, F, w = _min_variance(seed)
        F0 = F.value.copy()
        exact = cp.Problem(prob.objective, prob.constraints).solve(solver=cp.CLARABEL)
        sol = prob.solve_private(epsilon=eps, delta=1e-6, rng=seed,
                                 private=cvxdp.ConstraintPrivacy(F, sensitivity=1e-2))
        value = float(np.sum((F0 @ w.value) ** 2))
        cert = sol.certificate
        assert value - exact <= cert.gap_bound + 1e-9
        assert cert.optimum_lower <= exact + 1e-9 and value <= cert.objective_upper + 1e-9
        prob, A, x, b = _constrained_ls(seed)
        A0 = A.value.copy()
        exact = cp.Problem(prob.objective, prob.constraints).solve(solver=cp.CLARABEL)
        sol2 = prob.solve_private(epsilon=eps, delta=1e-6, rng=seed,
                                  private=cvxdp.ConstraintPrivacy(A, sensitivity=1e-3))
        value = float(np.sum((A0 @ x.value - b) ** 2))
        cert2 = sol2.certificate
        assert value - exact <= cert2.gap_bound + 1e-9
        assert cert2.optimum_lower <= exact + 1e-9 and value <= cert2.objective_upper + 1e-9
        if eps == 1e6:
            assert sol.status == sol2.status == cp.OPTIMAL_INACCURATE


def test_second_derivatives_of_a_private_design_and_target():
    # a = A @ x - 2 b + 3 z with private A (3 x 2, column-major entries k = i + 3 j) and b:
    # d^2 a_i / dA_k dx_j = 1 exactly when k = i + 3 j; b and z enter without a product (0),
    # and J0 = da/dy at x = 0 is -2 on b's entries
    A, b = cp.Variable((3, 2)), cp.Variable(3)
    x, z = cp.Variable(2), cp.Variable(3)
    J0, B, names = second_derivatives(A @ x - 2 * b + 3 * z, {"x": x, "z": z}, (A, b))
    assert names == ["x", "z"]
    want = np.zeros((3, 9, 5))
    for i in range(3):
        for j in range(2):
            want[i, i + 3 * j, j] = 1.0
    np.testing.assert_array_equal(B.toarray(), want)
    np.testing.assert_array_equal(J0, np.hstack([np.zeros((3, 6)), -2.0 * np.eye(3)]))


def test_variance_sums_match_the_dense_contraction():
    # the sparse sums against numpy's dense three-operand contraction, on a tensor with the
    # A @ x structure (one entry per noise coordinate) and on a denser random one
    rng = np.random.default_rng(4)
    rows, n = 7, 3
    K = rows * n
    one = np.zeros((rows, K, n))
    for k in range(K):
        one[k % rows, k, k // rows] = rng.uniform(0.5, 2.0)
    dense = rng.normal(size=(rows, 5, n)) * (rng.uniform(size=(rows, 5, n)) < 0.4)
    for B in (one, dense):
        sigma = rng.uniform(0.1, 1.0, B.shape[1])
        S1, S2, fro2 = variance_sums(B, sigma)
        np.testing.assert_allclose(S1, np.einsum("ikj,lkj,k->il", B, B, sigma**2), rtol=1e-12,
                                   atol=1e-14)
        np.testing.assert_allclose(S2, np.einsum("ikj,ikl,k->jl", B, B, sigma**2), rtol=1e-12,
                                   atol=1e-14)
        np.testing.assert_allclose(fro2, np.einsum("ikj,ikj->k", B, B), rtol=1e-12)


def _lasso_private_design(m: int, n: int) -> tuple[cp.Problem, cp.Parameter]:
    """``sum_squares(A @ x - b) / m + 0.05 norm1(x)`` with a private ``m x n`` design ``A``."""
    rng = np.random.default_rng(222)
    A = cp.Parameter((m, n), name="A", value=rng.normal(size=(m, n)))
    x = cp.Variable(n)
    prob = cp.Problem(cp.Minimize(cp.sum_squares(A @ x - rng.normal(size=m)) / m
                                  + 0.05 * cp.norm1(x)))
    return prob, A


def test_a_400_x_10_private_design_is_a_bilinear_square():
    # the second derivatives of A @ x - b with a private 400 x 10 A have one non-zero per
    # entry of A (4,000); the cap is on the dense matrices formed from them (J0: 400 x 4,000,
    # the variance sums: 400 x 400 and 10 x 10), not on the 16 million entries of the dense
    # tensor (trial 16's lasso at epsilon 1e6 fell back to the sign's bound, relative gap 0.90)
    prob, A = _lasso_private_design(400, 10)
    m, n = A.shape
    model = detect_fit_terms(prob, (A,))
    assert model is not None
    (t,) = model.terms
    assert t.kind == "bilinear" and t.B.shape == (m, m * n, n) and t.B.vals.size == m * n


def test_the_spectral_norm_of_a_diagonal_variance_sum_is_its_largest_entry():
    rng = np.random.default_rng(9)
    d = rng.uniform(0.1, 3.0, 50)
    assert _spectral_norm(np.diag(d)) == float(d.max())
    G = rng.normal(size=(50, 50))
    S = G @ G.T                                  # not diagonal: the dense SVD's value
    assert _spectral_norm(S) == float(np.linalg.norm(S, 2))
    assert _spectral_norm(np.zeros((3, 3))) == 0.0


def test_a_fit_certificate_without_an_upper_bound_does_not_displace_a_finite_one():
    """The 400 x 10 lasso at epsilon 1: the fit-term certificate has no upper bound (inf) and
    the counterpart's has one (0.90; the objective's sign gives the lower bound 0). Both had
    relative gap inf before the sign's narrowing, and the tie went to the fit: the answer was
    certified inf where it had been 0.90 (the bilinear cap's change, speed13)."""
    prob, A = _lasso_private_design(400, 10)
    opt = cp.Problem(prob.objective).solve(solver=cp.CLARABEL)
    sol = prob.solve_private(epsilon=1.0, delta=1e-6, rng=0,
                             private=cvxdp.ConstraintPrivacy(A, sensitivity=0.01))
    cert = sol.certificate
    assert np.isfinite(cert.relative_gap_bound) and cert.relative_gap_bound <= 1.0
    assert float(prob.objective.value) - opt <= cert.gap_bound
