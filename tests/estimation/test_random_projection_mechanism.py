"""M_RP and the RP / ALS spectra of paper 003 against its theorems, the digest and NDIS."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, special, stats

from cvxdp.errors import BudgetError, PrivacySpecError
from cvxdp.estimation.random_projection import (
    als_delta,
    clip_rows,
    ls_sigma,
    random_projection,
    rp_delta,
    rp_delta_reverse,
    rp_leverage_bound,
    rp_sigma,
    sheffet_sigma,
)
from cvxdp.privacy.ndis import ndis_delta

S_BAR_1E5 = {  # digest §3.3, delta = 1e-5, eps = 0.1 / 0.5 / 1 / 2
    1: [0.018139, 0.069495, 0.121366, 0.204832],
    10: [0.009775, 0.040002, 0.072363, 0.127710],
    100: [0.003998, 0.017039, 0.031585, 0.057665],
    1000: [0.001389, 0.006022, 0.011286, 0.020936],
}


@pytest.mark.parametrize("r", sorted(S_BAR_1E5))
def test_leverage_bound_table(r):
    got = [rp_leverage_bound(epsilon=e, delta=1e-5, r=r) for e in (0.1, 0.5, 1.0, 2.0)]
    assert got == pytest.approx(S_BAR_1E5[r], abs=1.5e-6)
    for e, s in zip((0.1, 0.5, 1.0, 2.0), got, strict=True):
        assert rp_delta(epsilon=e, leverage=s, r=r) <= 1e-5
        assert rp_delta(epsilon=e, leverage=s * 1.001, r=r) > 1e-5


def test_rlc_closed_form_is_r_equal_one():
    # Thm 7 / Prop. 10 (r = 1) in erf form, an independent formula
    for eps in (0.1, 1.0, 2.0):
        for s in (0.05, 0.3, 0.7):
            a = (eps - 0.5 * math.log1p(-s)) / s
            rlc = (1 - math.exp(eps) + math.exp(eps) * special.erf(math.sqrt(a))
                   - special.erf(math.sqrt(a * (1 - s))))
            assert rp_delta(epsilon=eps, leverage=s, r=1) == pytest.approx(rlc, abs=1e-12)


def test_direction_monotonicity_and_limits():
    ps = np.linspace(0.01, 0.99, 40)
    for r in (1, 5, 50):
        fwd = np.array([rp_delta(epsilon=1.0, leverage=p, r=r) for p in ps])
        rev = np.array([rp_delta_reverse(epsilon=1.0, leverage=p, r=r) for p in ps])
        assert np.all(np.diff(fwd) > 0)  # Prop. 3
        assert np.all(rev <= fwd + 1e-15)  # Thm 2
    assert rp_delta(epsilon=1.0, leverage=0.0, r=3) == 0.0
    assert rp_delta(epsilon=1.0, leverage=1.0, r=3) == 1.0
    assert rp_delta(epsilon=1.0, leverage=1 - 1e-9, r=3) > 0.99


def test_reverse_direction_matches_ndis():
    rng = np.random.default_rng(1)
    d_mat = rng.standard_normal((10, 2))
    d_mat[0] *= 2.5
    r = 3
    p = d_mat[0] @ np.linalg.solve(d_mat.T @ d_mat, d_mat[0])
    c1, c2 = np.kron(np.eye(r), d_mat.T @ d_mat), np.kron(np.eye(r), d_mat[1:].T @ d_mat[1:])
    z = np.zeros(2 * r)
    for eps in (0.1, 0.5):
        nd = ndis_delta(epsilon=eps, mean1=z, cov1=c2, mean2=z, cov2=c1)
        assert rp_delta_reverse(epsilon=eps, leverage=p, r=r) == pytest.approx(nd, abs=1e-10)


def test_paper_calibration_ratios_independent_of_l():
    # sigma_RP / sigma_[15] depends only on (eps, delta, r) (digest §5.5)
    cancer = rp_sigma(epsilon=1, delta=1 / 2809, r=300, row_bound=1) / sheffet_sigma(
        epsilon=1, delta=1 / 2809, r=300, row_bound=1)
    assert cancer == pytest.approx(0.33718, abs=5e-5)
    assert cancer == pytest.approx(6.850 / 20.317, abs=1e-4)  # paper Table II
    flight = rp_sigma(epsilon=1, delta=1 / 327346, r=1270, row_bound=1) / sheffet_sigma(
        epsilon=1, delta=1 / 327346, r=1270, row_bound=1)
    assert flight == pytest.approx(0.36182, abs=5e-5)
    assert flight == pytest.approx(0.745 / 2.060, abs=5e-4)
    assert sheffet_sigma(epsilon=1, delta=1 / 2809, r=300, row_bound=1) == pytest.approx(
        18.3449, abs=1e-4)
    # Song: the paper's 0.224 / 12.496 is ~20x off the calibration (digest error 10)
    song = rp_sigma(epsilon=1, delta=1 / 515345, r=1315, row_bound=1) / sheffet_sigma(
        epsilon=1, delta=1 / 515345, r=1315, row_bound=1)
    assert song == pytest.approx(0.36332, abs=5e-5)
    assert song / (0.224 / 12.496) > 15


def test_ls_calibration_and_ratios():
    assert ls_sigma(epsilon=1, delta=1e-5, r=1000, d=10, row_bound=1) == pytest.approx(
        10.9235, abs=2e-4)
    c10 = ls_sigma(epsilon=1, delta=1 / 2809, r=300, d=10, row_bound=1)
    c15 = ls_sigma(epsilon=1, delta=1 / 2809, r=300, d=15, row_bound=1)
    assert (c10, c15) == pytest.approx((7.1423, 7.1586), abs=2e-4)
    c2 = sheffet_sigma(epsilon=1, delta=1 / 2809, r=300, row_bound=1)
    assert c10 / c2 == pytest.approx(0.390, abs=1e-3)
    assert c10 / c2 == pytest.approx(7.917 / 20.317, abs=1e-3)  # paper Table II
    fl = ls_sigma(epsilon=1, delta=1 / 327346, r=1270, d=2, row_bound=1)
    ratio = fl / sheffet_sigma(epsilon=1, delta=1 / 327346, r=1270, row_bound=1)
    assert ratio == pytest.approx(0.4199, abs=1e-4)
    assert ratio == pytest.approx(0.864 / 2.060, abs=1e-3)


def test_als_delta_digest_values():
    assert als_delta(epsilon=1, q=0.02, p=0.01, r=1000, d=10) == pytest.approx(1.29136e-4,
                                                                                rel=1e-4)
    assert als_delta(epsilon=0.5, q=0.02, p=0.01, r=1000, d=10) == pytest.approx(1.03684e-2,
                                                                                  rel=1e-4)
    assert als_delta(epsilon=1, q=0.05, p=0.02, r=300, d=5) == pytest.approx(3.25902e-3,
                                                                              rel=1e-4)


def test_als_delta_one_dimensional_against_quadrature():
    p, q, r, eps = 0.01, 0.02, 300, 0.5
    v2 = p / (1 - p)
    y = math.sqrt(q / (1 - q) - v2)
    m1, s1 = math.sqrt(v2) * y * (1 - p), math.sqrt((1 + y * y * (1 - p)) / (1 + v2) / r)
    s2 = math.sqrt(1 / r)

    def hs(ma, sa, mb, sb):
        f = lambda x: max(0.0, stats.norm.pdf(x, ma, sa) - math.exp(eps) * stats.norm.pdf(  # noqa: E731
            x, mb, sb))
        lo, hi = -40 * s2, 40 * s2
        return integrate.quad(f, lo, hi, limit=2000, epsabs=1e-15, epsrel=1e-11,
                              points=np.linspace(lo, hi, 200))[0]

    ref = max(hs(m1, s1, 0.0, s2), hs(0.0, s2, m1, s1))
    assert als_delta(epsilon=eps, q=q, p=p, r=r, d=1) == pytest.approx(ref, rel=1e-8)


def test_mrp_output_law_and_exact_privacy_of_worst_pair():
    rng = np.random.default_rng(2)
    data = rng.standard_normal((30, 3)) * np.array([3.0, 1.0, 0.3])
    eps, delta, r, bound = 1.0, 1e-3, 5, 1.0
    clipped = clip_rows(data, bound)
    sigma = rp_sigma(epsilon=eps, delta=delta, r=r, row_bound=bound)
    # adversarial row: norm l along the smallest eigendirection of D^T D
    lam, vec = np.linalg.eigh(clipped.T @ clipped)
    worst = np.vstack([clipped, bound * vec[:, 0]])
    reg_small = clipped.T @ clipped + sigma**2 * np.eye(3)
    reg_big = worst.T @ worst + sigma**2 * np.eye(3)
    z = np.zeros(3 * r)
    exact = ndis_delta(epsilon=eps, mean1=z, cov1=np.kron(np.eye(r), reg_big), mean2=z,
                       cov2=np.kron(np.eye(r), reg_small), symmetric=True)
    assert exact <= delta
    assert exact > delta / 50  # close to the budget: the calibration is tight
    half = sigma / 2  # negative control: an under-noised M_RP is caught
    under = ndis_delta(epsilon=eps, mean1=z,
                       cov1=np.kron(np.eye(r), worst.T @ worst + half**2 * np.eye(3)), mean2=z,
                       cov2=np.kron(np.eye(r), clipped.T @ clipped + half**2 * np.eye(3)),
                       symmetric=True)
    assert under > 10 * delta
    # the sketch has covariance I_r (x) (D^T D + sigma^2 I): check S S^T / r with error bars
    big_r = 4000
    sketch, record = random_projection(data, epsilon=eps, delta=delta, r=big_r,
                                       row_bound=bound, rng=7)
    assert sketch.shape == (3, big_r)
    target = clipped.T @ clipped + record.params["sigma"] ** 2 * np.eye(3)
    emp = sketch @ sketch.T / big_r
    se = np.sqrt((np.outer(np.diag(target), np.diag(target)) + target**2) / big_r)
    assert np.all(np.abs(emp - target) < 5 * se)
    assert record.budget.epsilon == eps and record.budget.delta == delta
    again, _ = random_projection(data, epsilon=eps, delta=delta, r=big_r, row_bound=bound, rng=7)
    assert np.array_equal(sketch, again)


def test_clip_rows():
    data = np.array([[3.0, 4.0], [0.3, 0.4], [0.0, 0.0]])
    out = clip_rows(data, 1.0)
    assert np.allclose(out, [[0.6, 0.8], [0.3, 0.4], [0.0, 0.0]])


def test_bad_inputs():
    with pytest.raises(PrivacySpecError, match="row_bound must be a finite public number"):
        random_projection(np.ones((3, 2)), epsilon=1, delta=1e-5, r=2, row_bound=None)
    with pytest.raises(BudgetError, match="delta"):
        random_projection(np.ones((3, 2)), epsilon=1, delta=None, r=2, row_bound=1.0)
    with pytest.raises(PrivacySpecError, match="sketch size"):
        random_projection(np.ones((3, 2)), epsilon=1, delta=1e-5, r=0, row_bound=1.0)
    with pytest.raises(PrivacySpecError, match="2-D"):  # a public property: the shape
        random_projection(np.ones(3), epsilon=1, delta=1e-5, r=2, row_bound=1.0)
    with pytest.raises(PrivacySpecError, match="leverage"):
        rp_delta(epsilon=1.0, leverage=1.5, r=2)
    with pytest.raises(PrivacySpecError, match="p <= q"):
        als_delta(epsilon=1.0, q=0.1, p=0.2, r=10, d=2)
