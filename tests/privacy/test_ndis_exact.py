"""NDIS (paper 003, Thm 1): exact delta between two normals against independent references."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, stats

from cvxdp.errors import BudgetError, PrivacySpecError
from cvxdp.privacy.calibration import gaussian_delta
from cvxdp.privacy.ndis import (
    ndis_delta,
    ndis_delta_montecarlo,
    ndis_epsilon,
    privacy_loss,
)


def _analytic(t: float, eps: float) -> float:
    """Independent closed form of the Gaussian curve (Balle & Wang 2018, Thm 8)."""
    return stats.norm.cdf(t / 2 - eps / t) - math.exp(eps) * stats.norm.cdf(-t / 2 - eps / t)


def _quad_1d(eps, m1, s1, m2, s2):
    def f(x):
        return max(0.0, stats.norm.pdf(x, m1, s1) - math.exp(eps) * stats.norm.pdf(x, m2, s2))
    lo, hi = min(m1 - 14 * s1, m2 - 14 * s2), max(m1 + 14 * s1, m2 + 14 * s2)
    return integrate.quad(f, lo, hi, limit=500, epsabs=1e-14, epsrel=1e-12,
                          points=np.linspace(lo, hi, 60))[0]


def _quad_2d(eps, m1, c1, m2, c2):
    """Outer quadrature in x1; inner integral over {L > eps} in closed form by conditioning."""
    p = [np.linalg.inv(c1), np.linalg.inv(c2)]
    ms, cs = [m1, m2], [c1, c2]
    ld = [np.linalg.slogdet(c1)[1], np.linalg.slogdet(c2)[1]]

    def loss(x1, x2):
        out = 0.0
        for i, sgn in ((0, 1), (1, -1)):
            d = np.array([x1, x2]) - ms[i]
            out += sgn * (-0.5 * d @ p[i] @ d - 0.5 * ld[i])
        return out

    def inner(x1):
        c0 = loss(x1, 0.0) - eps
        a = (loss(x1, 1.0) + loss(x1, -1.0)) / 2 - loss(x1, 0.0)
        b = (loss(x1, 1.0) - loss(x1, -1.0)) / 2
        disc = b * b - 4 * a * c0
        if abs(a) < 1e-14:
            raise AssertionError("degenerate test instance")
        if disc <= 0:
            pieces = [(-np.inf, np.inf)] if a > 0 else []
        else:
            r1, r2 = sorted([(-b - math.sqrt(disc)) / (2 * a), (-b + math.sqrt(disc)) / (2 * a)])
            pieces = [(-np.inf, r1), (r2, np.inf)] if a > 0 else [(r1, r2)]
        total = 0.0
        for i, w in ((0, 1.0), (1, -math.exp(eps))):
            m, c = ms[i], cs[i]
            marg = stats.norm.pdf(x1, m[0], math.sqrt(c[0, 0]))
            cm = m[1] + c[1, 0] / c[0, 0] * (x1 - m[0])
            cs_ = math.sqrt(c[1, 1] - c[1, 0] ** 2 / c[0, 0])
            mass = sum(stats.norm.cdf(hi, cm, cs_) - stats.norm.cdf(lo, cm, cs_)
                       for lo, hi in pieces)
            total += w * marg * mass
        return total

    return integrate.quad(inner, -15, 15, limit=800, epsabs=1e-13, epsrel=1e-11,
                          points=np.linspace(-15, 15, 61))[0]


@pytest.mark.parametrize("sigma", [0.5, 1.0, 3.7306, 8.0])
@pytest.mark.parametrize("eps", [0.0, 0.3, 1.0, 3.0])
def test_equal_covariance_is_analytic_gaussian(sigma, eps):
    ref = _analytic(1.0 / sigma, eps)
    for method in ("auto", "contour"):
        got = ndis_delta(epsilon=eps, mean1=[1.0], cov1=[[sigma**2]], mean2=[0.0],
                         cov2=[[sigma**2]], method=method)
        assert got == pytest.approx(ref, rel=1e-6, abs=1e-15)
    assert got == pytest.approx(gaussian_delta(sigma=sigma, epsilon=eps), rel=1e-9, abs=1e-300)


def test_anisotropic_equal_covariance_uses_mahalanobis_distance():
    rng = np.random.default_rng(3)
    a = rng.standard_normal((4, 4))
    cov = a @ a.T + 0.5 * np.eye(4)
    m1, m2 = rng.standard_normal(4), rng.standard_normal(4)
    t = math.sqrt((m1 - m2) @ np.linalg.solve(cov, m1 - m2))
    for eps in (0.2, 1.0, 2.5):
        ref = _analytic(t, eps)
        for method in ("auto", "contour"):
            got = ndis_delta(epsilon=eps, mean1=m1, cov1=cov, mean2=m2, cov2=cov, method=method)
            assert got == pytest.approx(ref, rel=1e-6)


def test_tiny_delta_keeps_relative_accuracy_on_contour_path():
    # delta ~ 1e-17: a difference of two CDFs would have no correct digit left.
    ref = gaussian_delta(sigma=8.0, epsilon=1.0)
    got = ndis_delta(epsilon=1.0, mean1=[1.0], cov1=[[64.0]], mean2=[0.0], cov2=[[64.0]],
                     method="contour")
    assert ref < 1e-16
    assert got == pytest.approx(ref, rel=1e-9)


@pytest.mark.parametrize("m1,s1,m2,s2", [(1, 1, 0, 1.3), (0, 1.3, 1, 1), (0.3, 1, 0, 0.9),
                                         (0, 2, 0, 1), (-0.4, 0.7, 0.2, 1.1)])
@pytest.mark.parametrize("eps", [0.2, 1.0, 2.0])
def test_one_dimensional_against_quadrature(m1, s1, m2, s2, eps):
    got = ndis_delta(epsilon=eps, mean1=[m1], cov1=[[s1**2]], mean2=[m2], cov2=[[s2**2]])
    assert got == pytest.approx(_quad_1d(eps, m1, s1, m2, s2), abs=1e-10)


def test_one_dimensional_equal_means_closed_form_to_tiny_delta():
    # N(0, 4) vs N(0, 1): L = 3x^2/8 - ln 2, so delta is a difference of normal tails.
    for eps in (0.0, 1.0, 8.0, 30.0):
        c = math.sqrt(8 / 3 * (eps + math.log(2)))
        la = math.log(2) + stats.norm.logsf(c / 2)
        lb = eps + math.log(2) + stats.norm.logsf(c)
        ref = math.exp(la) * -math.expm1(lb - la)
        got = ndis_delta(epsilon=eps, mean1=[0], cov1=[[4]], mean2=[0], cov2=[[1]])
        assert got == pytest.approx(ref, rel=1e-10)
    # reverse order: the loss is bounded above by ln 2 -> delta = 0 beyond it
    assert ndis_delta(epsilon=0.7, mean1=[0], cov1=[[1]], mean2=[0], cov2=[[4]]) == 0.0


@pytest.mark.parametrize("eps", [0.1, 0.5, 1.5])
def test_two_dimensional_against_quadrature(eps):
    m1, c1 = np.array([0.5, -0.2]), np.array([[1.0, 0.3], [0.3, 0.8]])
    m2, c2 = np.zeros(2), np.array([[1.2, -0.1], [-0.1, 0.9]])
    ref = _quad_2d(eps, m1, c1, m2, c2)
    got = ndis_delta(epsilon=eps, mean1=m1, cov1=c1, mean2=m2, cov2=c2)
    assert got == pytest.approx(ref, abs=1e-9)
    rev = ndis_delta(epsilon=eps, mean1=m2, cov1=c2, mean2=m1, cov2=c1)
    assert rev == pytest.approx(_quad_2d(eps, m2, c2, m1, c1), abs=1e-9)


def test_digest_reference_values():
    m1, cov = np.array([1.0, 0, 0]), 0.64 * np.eye(3)
    want = [0.441434, 0.337281, 0.221018, 0.068422]
    for eps, w in zip([0.1, 0.5, 1.0, 2.0], want, strict=True):
        got = ndis_delta(epsilon=eps, mean1=m1, cov1=cov, mean2=np.zeros(3), cov2=cov)
        assert got == pytest.approx(w, abs=1e-6)


def test_random_projection_spectrum_theorem2_matches_general_ndis():
    # vec(D^T G) ~ N(0, I_r (x) D^T D); Thm 2 gives the delta from the leverage p alone.
    rng = np.random.default_rng(0)
    d_mat = rng.standard_normal((12, 3))
    d_mat[0] *= 3
    r = 4
    p = d_mat[0] @ np.linalg.solve(d_mat.T @ d_mat, d_mat[0])
    c1 = np.kron(np.eye(r), d_mat.T @ d_mat)
    c2 = np.kron(np.eye(r), d_mat[1:].T @ d_mat[1:])
    z = np.zeros(3 * r)
    for eps in (0.5, 1.0, 2.0):
        x = (2 * eps - r * math.log1p(-p)) / p
        thm2 = stats.chi2.sf((1 - p) * x, r) - math.exp(eps) * stats.chi2.sf(x, r)
        fwd = ndis_delta(epsilon=eps, mean1=z, cov1=c1, mean2=z, cov2=c2)
        rev = ndis_delta(epsilon=eps, mean1=z, cov1=c2, mean2=z, cov2=c1)
        assert fwd == pytest.approx(thm2, abs=1e-12)
        assert rev <= fwd  # Thm 2: the with-row -> without-row direction dominates
        sym = ndis_delta(epsilon=eps, mean1=z, cov1=c1, mean2=z, cov2=c2, symmetric=True)
        assert sym == fwd


def test_epsilon_is_the_inverse_of_delta():
    m1, c1 = np.array([0.5, -0.2]), np.array([[1.0, 0.3], [0.3, 0.8]])
    m2, c2 = np.zeros(2), np.array([[1.2, -0.1], [-0.1, 0.9]])
    for target in (1e-2, 1e-4, 1e-7):
        eps = ndis_epsilon(delta=target, mean1=m1, cov1=c1, mean2=m2, cov2=c2)
        at = ndis_delta(epsilon=eps, mean1=m1, cov1=c1, mean2=m2, cov2=c2, symmetric=True)
        below = ndis_delta(epsilon=eps * (1 - 1e-6), mean1=m1, cov1=c1, mean2=m2, cov2=c2,
                           symmetric=True)
        assert at <= target < below
        assert at == pytest.approx(target, rel=1e-5)
    # equal covariances: inverse of the analytic curve (sigma = 3.7306 <-> (1, 1e-5))
    eps = ndis_epsilon(delta=1e-5, mean1=[1.0], cov1=[[3.7306**2]], mean2=[0.0],
                       cov2=[[3.7306**2]])
    assert eps == pytest.approx(1.0, abs=1e-4)


def test_singular_covariances_support_rule():
    cov = np.diag([1.0, 0.0])
    # same support (the x-axis): reduces to the 1-D problem
    got = ndis_delta(epsilon=0.5, mean1=[1.0, 0.0], cov1=cov, mean2=[0.0, 0.0], cov2=cov)
    assert got == pytest.approx(_analytic(1.0, 0.5), rel=1e-9)
    got = ndis_delta(epsilon=0.5, mean1=[1.0, 0.0], cov1=cov, mean2=[0.0, 0.0],
                     cov2=np.diag([1.69, 0.0]))
    assert got == pytest.approx(_quad_1d(0.5, 1, 1, 0, 1.3), abs=1e-10)
    # shifted off the support, or a different range: delta = 1 for every epsilon, both orders
    for m2, c2 in (([0.0, 0.1], cov), ([0.0, 0.0], np.diag([0.0, 1.0])),
                   ([0.0, 0.0], np.eye(2))):
        for sym in (False, True):
            assert ndis_delta(epsilon=5.0, mean1=[1.0, 0.0], cov1=cov, mean2=m2, cov2=c2,
                              symmetric=sym) == 1.0
        assert ndis_epsilon(delta=0.5, mean1=[1.0, 0.0], cov1=cov, mean2=m2, cov2=c2) == math.inf
    # two equal point masses are indistinguishable
    zero = np.zeros((2, 2))
    assert ndis_delta(epsilon=0.0, mean1=[1, 2], cov1=zero, mean2=[1, 2], cov2=zero) == 0.0


def test_montecarlo_estimator_within_hoeffding_band():
    m1, cov = np.array([1.0, 0, 0]), 0.64 * np.eye(3)
    exact = ndis_delta(epsilon=1.0, mean1=m1, cov1=cov, mean2=np.zeros(3), cov2=np.eye(3))
    est, upper = ndis_delta_montecarlo(epsilon=1.0, mean1=m1, cov1=cov, mean2=np.zeros(3),
                                       cov2=np.eye(3), alpha=0.01, gamma=1e-4, rng=5)
    assert abs(est - exact) <= 0.01
    assert upper == pytest.approx(est + 0.01)
    again = ndis_delta_montecarlo(epsilon=1.0, mean1=m1, cov1=cov, mean2=np.zeros(3),
                                  cov2=np.eye(3), alpha=0.01, gamma=1e-4, rng=5)
    assert again == (est, upper)


def test_privacy_loss_eigenvalues_and_constant():
    loss = privacy_loss(mean1=[0.0, 0.0], cov1=np.diag([4.0, 1.0]), mean2=[0.0, 0.0],
                        cov2=np.eye(2))
    assert sorted(loss.h) == pytest.approx([0.0, 1.5])
    assert loss.k == pytest.approx(-math.log(2))


def test_bad_inputs_are_rejected():
    good = {"mean1": [0.0], "cov1": [[1.0]], "mean2": [1.0], "cov2": [[1.0]]}
    with pytest.raises(BudgetError, match="epsilon must be >= 0"):
        ndis_delta(epsilon=-1.0, **good)
    with pytest.raises(BudgetError, match="delta"):
        ndis_epsilon(delta=1.5, **good)
    with pytest.raises(PrivacySpecError, match="symmetric"):
        ndis_delta(epsilon=1.0, mean1=[0, 0], cov1=[[1, 0.5], [0, 1]], mean2=[0, 0],
                   cov2=np.eye(2))
    with pytest.raises(PrivacySpecError, match="positive semidefinite"):
        ndis_delta(epsilon=1.0, mean1=[0, 0], cov1=np.diag([1.0, -1.0]), mean2=[0, 0],
                   cov2=np.eye(2))
    with pytest.raises(PrivacySpecError, match="shapes"):
        ndis_delta(epsilon=1.0, mean1=[0, 0], cov1=[[1.0]], mean2=[0], cov2=[[1.0]])
    with pytest.raises(PrivacySpecError, match="NaN"):
        ndis_delta(epsilon=1.0, mean1=[np.nan], cov1=[[1.0]], mean2=[0], cov2=[[1.0]])
