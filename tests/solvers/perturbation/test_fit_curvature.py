"""Square fit terms certified with the whole objective's curvature (``fit_curvature``)."""

import math

import cvxpy as cp
import numpy as np
import pytest
from scipy.linalg import qr

import cvxdp
from cvxdp.solvers.perturbation import fit_curvature
from cvxdp.solvers.perturbation.fit_detect import detect_fit_terms


def _kalman(T=120, seed=15):
    """The smoother of trial 14 (CVXPY's Kalman-smoothing example, one dimension): the states
    tied by public dynamics to a damped process noise."""
    rng = np.random.default_rng(seed)
    pos = np.cumsum(np.cumsum(0.01 * rng.normal(size=T)))
    y = cp.Parameter(T, name="y", value=pos + 0.3 * rng.normal(size=T))
    x, v, w = cp.Variable(T, name="x"), cp.Variable(T, name="v"), cp.Variable(T - 1, name="w")
    cons = [x[1:] == x[:-1] + v[:-1], v[1:] == v[:-1] + w]
    prob = cp.Problem(cp.Minimize(cp.sum_squares(y - x) + 100 * cp.sum_squares(w)), cons)
    return prob, y


def test_detects_public_squares_and_equalities():
    prob, y = _kalman(T=20)
    model = detect_fit_terms(prob, (y,))
    assert fit_curvature.applies(model)
    n = 20 + 20 + 19
    assert model.public_curvature.shape == (n, n)
    assert model.public_curvature.diagonal().sum() == pytest.approx(100 * 19)
    assert model.public_equalities.shape == (2 * 19, n)
    y2, x2 = cp.Parameter(5, name="y2", value=np.ones(5)), cp.Variable(5)
    alone = detect_fit_terms(cp.Problem(cp.Minimize(cp.sum_squares(x2 - y2))), (y2,))
    assert not fit_curvature.applies(alone)  # the per-term share is this bound already


@pytest.mark.parametrize("eps", [10.0, 1.0])
def test_kalman_smoother_certificate_holds(eps):
    """Five seeds at T = 120: the certificate is never below the true gap."""
    prob, y = _kalman()
    opt = prob.solve()
    for seed in range(5):
        sol = prob.solve_private(epsilon=eps, delta=1e-6, rng=seed,
                                 private=cvxdp.ScalarPrivacy(y, sensitivity=0.02))
        true_gap = prob.objective.value - opt
        assert true_gap <= sol.certificate.gap_bound <= 20.0 * true_gap


def test_kalman_smoother_follows_the_effective_degrees_of_freedom():
    """Trial 14 (T = 400, epsilon 10): the per-term share charged the noise in all T directions
    of x (certified relative gap 6.4 against a true 0.072); with the dynamics and the
    process-noise penalty the bound follows the smoother's effective degrees of freedom and is
    within 3x of the true gap (5.47 against 2.11 absolute)."""
    prob, y = _kalman(T=400)
    opt = prob.solve()
    sol = prob.solve_private(epsilon=10, delta=1e-6, rng=0,
                             private=cvxdp.ScalarPrivacy(y, sensitivity=0.02))
    true_gap = prob.objective.value - opt
    assert true_gap <= sol.certificate.gap_bound <= 3.0 * true_gap


def test_ridge_regularisation_shrinks_the_bound():
    """Ridge regression (a public sum_squares(x)): the joint bound is below the per-term share
    (which ignores the ridge) and still holds."""
    rng = np.random.default_rng(2)
    m, n = 60, 40
    A = rng.normal(size=(m, n))
    b = cp.Parameter(m, name="b", value=A @ rng.normal(size=n) + rng.normal(size=m))
    x = cp.Variable(n, name="x")
    prob = cp.Problem(cp.Minimize(cp.sum_squares(A @ x - b) + 30 * cp.sum_squares(x)))
    opt = prob.solve()
    sol = prob.solve_private(epsilon=5, delta=1e-6, rng=0,
                             private=cvxdp.ScalarPrivacy(b, sensitivity=0.05))
    assert prob.objective.value - opt <= sol.certificate.gap_bound
    model = detect_fit_terms(prob, (b,))
    M = fit_curvature.noise_map(model)
    # the ridge damps every direction: ||M||_F^2 (the bound's mean in sigma^2 units) is below
    # the per-term share's n directions, by the shrinkage factor sum_i s_i^2 / (s_i^2 + 30)
    s = np.linalg.svd(A, compute_uv=False)
    assert np.sum(M.multiply(M)) == pytest.approx(np.sum(s**2 / (s**2 + 30.0)), rel=1e-6)


@pytest.mark.parametrize("shape, rank", [((6, 15), 6), ((8, 15), 5), ((1, 4), 1),
                                         ((20, 15), 6), ((17, 16), 16)])
def test_null_space_is_the_pivoted_qrs_trailing_columns(shape, rank):
    # the basis is the last n - rank columns of the full Q of E' = Q R P' (formed without the
    # full Q): orthonormal, E N = 0, and the same columns as scipy's full Q to rounding
    rng = np.random.default_rng(rank)
    E = rng.normal(size=(shape[0], rank)) @ rng.normal(size=(rank, shape[1]))
    N = fit_curvature._null_space(E)
    assert N.shape == (shape[1], shape[1] - rank)
    np.testing.assert_allclose(N.T @ N, np.eye(N.shape[1]), atol=1e-12)
    np.testing.assert_allclose(E @ N, 0.0, atol=1e-10)
    full = qr(E.T, mode="full", pivoting=True)[0][:, rank:]
    np.testing.assert_allclose(N, full, atol=1e-12)


def test_null_space_of_no_rows_is_everything():
    np.testing.assert_array_equal(fit_curvature._null_space(np.zeros((0, 3))), np.eye(3))


def _hp(n, seed=0):
    """A Hodrick-Prescott filter (held-out trial 22a): private targets, a public
    second-difference square; Q = 0.5 I + 50 D'D is banded and positive definite."""
    rng = np.random.default_rng(seed)
    y = cp.Parameter(n, name="y", value=np.clip(np.cumsum(0.02 * rng.normal(size=n)) + 0.5, 0, 1))
    x = cp.Variable(n, name="x")
    prob = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(y - x)
                                  + 50 * cp.sum_squares(cp.diff(x, 2))))
    return prob, y


@pytest.mark.parametrize("n, kind", [(200, "lu"), (700, "band")])
def test_sparse_gram_reads_the_dense_maps_gram(n, kind):
    """The sparse path's column norms are the dense map's (M'M is the same Gram matrix for
    any factor of Q), and its spectral bound is at least ||M D||_2 (here sqrt(0.5) sigma, the
    private term's own bound, exact: D'D has the linear functions as its null space)."""
    prob, y = _hp(n)
    model = detect_fit_terms(prob, (y,))
    assert fit_curvature._sparse_plan(model)[0] == kind
    sigma = np.full(n, 0.01)
    col2, spec, rank = fit_curvature.sparse_gram(model, sigma)
    M = fit_curvature.noise_map(model).toarray() * 0.01
    np.testing.assert_allclose(col2, np.sum(M * M, axis=0), rtol=1e-8, atol=1e-14)
    exact = np.linalg.norm(M, 2)   # sqrt(0.5) 0.01, to the dense map's own rounding
    assert exact * (1 - 1e-10) <= spec <= exact * (1 + 1e-9)
    assert rank == n


def test_sparse_path_leaves_a_singular_curvature_to_the_dense_one():
    """x[5:] in no square: Q is singular, no pivot certifies it, and the dense
    eigendecomposition (its range) is used."""
    y = cp.Parameter(5, name="y", value=np.linspace(0, 1, 5))
    x = cp.Variable(8, name="x")
    prob = cp.Problem(cp.Minimize(cp.sum_squares(y - x[:5]) + cp.sum_squares(cp.diff(x[:5]))),
                      [x >= 0, x <= 1])
    model = detect_fit_terms(prob, (y,))
    assert fit_curvature.applies(model)
    assert fit_curvature._sparse_plan(model) is None
    assert fit_curvature.sparse_gram(model, np.full(5, 0.1)) is None
    assert math.isfinite(fit_curvature.joint_square_gap(model, 0.0, np.full(5, 0.1), 1e-3,
                                                        "gaussian"))


@pytest.mark.parametrize("noise", ["gaussian", "laplace"])
def test_hp_filter_certificate_holds_on_the_banded_path(noise):
    """n = 700 at epsilon 10, three seeds: the certificate is never below the true gap and
    within 10x of it (the Gaussian's 1,500-sample case: 6.40 against a true 3.78)."""
    prob, y = _hp(700)
    opt = prob.solve()
    for seed in range(3):
        sol = prob.solve_private(epsilon=10, delta=1e-6, rng=seed, noise=noise,
                                 private=cvxdp.ScalarPrivacy(y, sensitivity=0.01))
        true_gap = prob.objective.value - opt
        assert true_gap <= sol.certificate.gap_bound <= 10.0 * true_gap
