"""The derivations behind the decisions of the private John ellipsoid (john_select), checked
against independent computations, and the budget spent in full in every branch."""

import math

import numpy as np
import pytest
from scipy import integrate, stats

from cvxdp.geometry.john.exact import ExactJohnEllipsoid
from cvxdp.geometry.john.john import ellipsoid_from_weights, john_ellipsoid
from cvxdp.geometry.john.john_iter import gram, leverage_ratios
from cvxdp.geometry.john.john_select import (
    gain_bound,
    noise_shift,
    noise_term,
    ridge_bias,
    split,
    uniform_share,
)
from cvxdp.privacy.calibration import calibrate_gaussian


def _polytope(seed, n, d, cond=5.0):
    g = np.random.default_rng(seed)
    A = g.standard_normal((n, d)) * np.geomspace(1, 1 / cond, d)
    return A / np.linalg.norm(A, axis=1).max()


@pytest.mark.parametrize("sigma", [0.05, 0.1, 0.2])
def test_noise_term_is_the_mean_of_minus_log_one_plus_z(sigma):
    # independent: numerical integration of E[-log(1 + z)] over |z| < 4.5 sigma (< 1 here)
    exact, _ = integrate.quad(lambda x: -math.log1p(x) * stats.norm.pdf(x, scale=sigma),
                              -4.5 * sigma, 4.5 * sigma)
    assert noise_term(sigma) == pytest.approx(exact, rel=2e-3 if sigma < 0.2 else 2e-2)


def test_split_minimises_the_sum_of_losses():
    c, total = [3.0, 0.5, 1.2], 2.0
    mu = split(c, total)
    assert sum(m * m for m in mu) == pytest.approx(total ** 2)
    best = sum(ci / mi for ci, mi in zip(c, mu, strict=True))
    g = np.random.default_rng(0)
    for _ in range(200):  # any other split of the same total is no better
        x = g.uniform(0.05, 1, 3)
        x *= total / np.linalg.norm(x)
        assert sum(ci / xi for ci, xi in zip(c, x, strict=True)) >= best - 1e-12


@pytest.mark.parametrize("lam", [1e-3, 1e-2, 1e-1])
def test_ridge_bias_bounds_the_log_det_lost_to_the_ridge(lam):
    # the ridge-regularised fixed point (many exact iterations) against the exact John ellipsoid
    A = _polytope(1, 300, 3)
    n, d = A.shape
    ex = ExactJohnEllipsoid(A)
    ex.solve(solver="CLARABEL")
    Qs = ex.ellipsoid.matrix
    w = np.full(n, d / n)
    for _ in range(3000):
        w = w * leverage_ratios(A, w, lam)
    M = gram(A, w, lam)
    assert leverage_ratios(A, w, lam).max() <= 1 + 1e-3  # X_lam = M^{-1} is inside P
    lost = 0.5 * (np.linalg.slogdet(M)[1] - np.linalg.slogdet(Qs)[1]) / d  # per dimension
    assert lost <= ridge_bias(lam, np.linalg.eigvalsh(Qs)) + 1e-6


@pytest.mark.parametrize("ratio", [2.0, 10.0, 100.0])
def test_capped_ridge_bias_bounds_the_loss_where_the_ridge_exceeds_john(ratio):
    # a ridge above the John matrix's smallest eigenvalues: the axes it caps cost 1 + log(lam/m)
    # (not lam/m), and the bound still holds against the exact John ellipsoid
    A = _polytope(2, 400, 4, cond=30.0)
    n, d = A.shape
    ex = ExactJohnEllipsoid(A)
    ex.solve(solver="CLARABEL")
    Qs = ex.ellipsoid.matrix
    m = np.linalg.eigvalsh(Qs)
    lam = ratio * float(m[0])
    w = np.full(n, d / n)
    for _ in range(3000):
        w = w * leverage_ratios(A, w, lam)
    M = gram(A, w, lam)
    assert leverage_ratios(A, w, lam).max() <= 1 + 1e-3
    lost = 0.5 * (np.linalg.slogdet(M)[1] - np.linalg.slogdet(Qs)[1]) / d
    assert lost <= ridge_bias(lam, m) + 1e-6
    assert ridge_bias(lam, m) < 0.5 * lam * float(np.mean(1 / m)) - 0.02  # tighter than lam tr X*


def test_gain_bound_bounds_john_over_the_fitted_uniform_ellipsoid():
    for seed in range(3):
        A = _polytope(seed, 400, 4, cond=30.0)
        n, d = A.shape
        ex = ExactJohnEllipsoid(A)
        ex.solve(solver="CLARABEL")
        U = ellipsoid_from_weights(A, np.full(n, d / n))
        s0 = math.sqrt(U.support_ratios(A).max())
        gain = (ex.ellipsoid.log_volume - (U.log_volume - d * math.log(s0))) / d
        assert 0 < gain <= gain_bound(d, s0)


def test_uniform_share_keeps_the_first_share_or_gives_all_by_the_regret_it_sees():
    kw = dict(mu=1.0, free=0.725, first=0.05, gap_max=3.0, gram_share=0.05)
    # a precise uniform release and an iterate whose loss falls with its budget: Q0 keeps about
    # its first share (the first two grid points, 0.05 and 0.059, are within 1e-3 in regret)
    assert uniform_share(gram_loss=1e-4, iterate=lambda m: 0.02 / m, **kw) < 0.07
    # a hopeless iterate: everything to Q0 (no iteration)
    assert uniform_share(gram_loss=0.1, iterate=lambda m: 1e3, **kw) == pytest.approx(0.725)


@pytest.mark.parametrize("closeness", [1e-6, 1e-2, 0.3])
def test_the_whole_budget_is_spent_in_every_branch(closeness):
    A = _polytope(3, 1500, 4, cond=10.0)
    sol = john_ellipsoid(A).solve_private(epsilon=1.0, delta=1e-6, closeness=closeness,
                                          row_bound=1.0, rng=0)
    rec = sol.privacy.records[0].params
    mu = math.sqrt(sum(v * v for k, v in rec.items() if k.startswith("mu_")))
    assert mu == pytest.approx(1 / calibrate_gaussian(epsilon=1.0, delta=1e-6), rel=1e-9)
    assert sol.privacy.epsilon == pytest.approx(1.0, rel=1e-9)


@pytest.mark.parametrize("d", [2, 10, 40])
def test_noise_shift_of_a_round_spectrum_is_the_semicircle_edge(d):
    # equal eigenvalues: the cheapest B with a typical-norm-1 B^{-1/2} Z B^{-1/2} is b I with
    # 2 sqrt((d + 1) sigma^2 / (2 b^2)) = 1 (d - 1 off-diagonal entries of variance
    # sigma^2/2 and one diagonal of sigma^2 per row), i.e. b = sqrt(2 (d + 1)) sigma
    b = noise_shift(np.full(d, 3.0), 0.01, 1e-12)
    np.testing.assert_allclose(b, math.sqrt(2 * (d + 1)) * 0.01, rtol=1e-9)


def test_noise_shift_never_costs_more_than_the_isotropic_shift():
    g = np.random.default_rng(4)
    for _ in range(50):
        d = int(g.integers(2, 40))
        eigs = np.exp(g.uniform(-12, 1, d))
        sigma = float(np.exp(g.uniform(-10, -2)))
        b = noise_shift(eigs, sigma, 1e-12)
        iso = math.sqrt(2 * (d + 1)) * sigma
        assert np.mean(np.log1p(b / eigs)) <= np.mean(np.log1p(iso / eigs)) + 1e-12
        # the condition it is derived from: b_min >= 2 sigma^2 (sum 1/b + 1/b_min)
        assert b.min() >= 2 * sigma ** 2 * (np.sum(1 / b) + 1 / b.min()) * (1 - 1e-9)
