"""NDIS supports are decided jointly and scale-free (issue 21 item 3).

A direction in which both covariances are tiny is still a direction in which the two normals
differ; the reference values come from direct quadrature of the hockey-stick divergence
``int max(0, p1 - e^eps p2)``, independent of cvxdp.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, stats

from cvxdp.privacy.ndis import ndis_delta, ndis_epsilon


def _hockey_stick_1d(eps: float, m1: float, s1: float, m2: float, s2: float) -> float:
    """sup_S P1(S) - e^eps P2(S) for two 1-D normals, by adaptive quadrature of its density."""

    def f(x: float) -> float:
        return max(0.0, stats.norm.pdf(x, m1, s1) - math.exp(eps) * stats.norm.pdf(x, m2, s2))

    lo, hi = min(m1 - 15 * s1, m2 - 15 * s2), max(m1 + 15 * s1, m2 + 15 * s2)
    return integrate.quad(f, lo, hi, limit=500, epsabs=1e-14, epsrel=1e-12,
                          points=np.linspace(lo, hi, 61))[0]


def _rotation(theta: float) -> np.ndarray:
    return np.array([[math.cos(theta), -math.sin(theta)], [math.sin(theta), math.cos(theta)]])


def test_tiny_direction_below_both_rank_cutoffs_still_counts():
    # The pair: the second direction is 1e-14 relative in both covariances, yet the
    # normals differ there exactly as N(0, 1) and N(0, 2) do.
    c1, c2 = np.diag([1.0, 1e-14]), np.diag([1.0, 2e-14])
    z = np.zeros(2)
    fwd_ref = _hockey_stick_1d(1.0, 0.0, 1.0, 0.0, math.sqrt(2.0))  # N(0,1) vs N(0,2)
    rev_ref = _hockey_stick_1d(1.0, 0.0, math.sqrt(2.0), 0.0, 1.0)  # N(0,2) vs N(0,1)
    assert fwd_ref == 0.0  # the loss ln(p1/p2) <= ln(sqrt 2) < 1: exactly zero
    assert rev_ref == pytest.approx(0.0456116, abs=1e-6)
    assert ndis_delta(epsilon=1.0, mean1=z, cov1=c1, mean2=z, cov2=c2) == 0.0
    assert ndis_delta(epsilon=1.0, mean1=z, cov1=c2, mean2=z, cov2=c1) == pytest.approx(
        rev_ref, rel=1e-9)
    assert ndis_delta(epsilon=1.0, mean1=z, cov1=c1, mean2=z, cov2=c2,
                      symmetric=True) == pytest.approx(rev_ref, rel=1e-9)
    for eps in (0.0, 0.2):  # at small epsilon both orders are positive
        for a, b in ((1.0, 2.0), (2.0, 1.0)):
            got = ndis_delta(epsilon=eps, mean1=z, cov1=np.diag([1.0, a * 1e-14]), mean2=z,
                             cov2=np.diag([1.0, b * 1e-14]))
            assert got == pytest.approx(
                _hockey_stick_1d(eps, 0.0, math.sqrt(a), 0.0, math.sqrt(b)), rel=1e-8)


def test_mean_shift_along_a_tiny_direction_is_a_gaussian_mechanism():
    # N((0, 1e-7), diag(1, 1e-14)) vs N(0, diag(1, 1e-14)): Mahalanobis distance 1.
    cov = np.diag([1.0, 1e-14])
    for eps in (0.3, 1.0):
        want = _hockey_stick_1d(eps, 1.0, 1.0, 0.0, 1.0)
        got = ndis_delta(epsilon=eps, mean1=[0.0, 1e-7], cov1=cov, mean2=[0.0, 0.0], cov2=cov)
        assert got == pytest.approx(want, rel=1e-8)


@pytest.mark.parametrize("scale", [1e-30, 1e-14, 3.7, 1e20])
def test_delta_is_invariant_under_a_common_rescaling(scale):
    # x -> sqrt(c) x maps the pair to (c Sigma1, c Sigma2) with means sqrt(c) mu: same delta.
    m1, c1 = np.array([0.5, -0.2]), np.array([[1.0, 0.3], [0.3, 0.8]])
    m2, c2 = np.zeros(2), np.array([[1.2, -0.1], [-0.1, 0.9]])
    r = math.sqrt(scale)
    for eps in (0.1, 1.0):
        base = ndis_delta(epsilon=eps, mean1=m1, cov1=c1, mean2=m2, cov2=c2, symmetric=True)
        got = ndis_delta(epsilon=eps, mean1=r * m1, cov1=scale * c1, mean2=r * m2,
                         cov2=scale * c2, symmetric=True)
        assert base > 1e-3
        assert got == pytest.approx(base, rel=1e-8)
    # the second pair: every direction tiny, one of them differing by a factor 2
    z = np.zeros(2)
    d1, d2 = scale * np.diag([1.0, 1.0]), scale * np.diag([1.0, 2.0])
    assert ndis_delta(epsilon=0.2, mean1=z, cov1=d1, mean2=z, cov2=d2,
                      symmetric=True) == pytest.approx(
        _hockey_stick_1d(0.2, 0.0, math.sqrt(2.0), 0.0, 1.0), rel=1e-8)


def test_nearly_equal_covariances_never_give_zero():
    # Directions whose variance ratio is within 2e-12 of 1 are treated as equal only with the
    # total-variation cost of doing so added: delta stays positive and above the truth.
    z = np.zeros(1)
    got = ndis_delta(epsilon=0.0, mean1=z, cov1=[[1.0]], mean2=z, cov2=[[1.0 + 1e-13]])
    # TV(N(0,1), N(0,1+x)) = x / sqrt(2 pi e) + O(x^2) = 2.42e-14 at x = 1e-13.
    assert 2.4e-14 <= got <= 1e-12
    assert ndis_delta(epsilon=0.0, mean1=z, cov1=[[1.0]], mean2=z, cov2=[[1.0]]) == 0.0


def test_rounding_level_directions_follow_the_support_rule():
    # Exactly singular pairs written in a rotated basis (rounding leaves ~1e-17 entries).
    rot = _rotation(0.7)
    s1 = rot @ np.diag([1.0, 0.0]) @ rot.T
    s2 = rot @ np.diag([2.0, 0.0]) @ rot.T
    mean1 = rot @ np.array([1.0, 0.0])
    got = ndis_delta(epsilon=0.5, mean1=mean1, cov1=s1, mean2=[0.0, 0.0], cov2=s2)
    assert got == pytest.approx(_hockey_stick_1d(0.5, 1.0, 1.0, 0.0, math.sqrt(2.0)), rel=1e-7)
    # one covariance singular in a direction where the other is not: delta = 1
    full = rot @ np.diag([1.0, 1e-3]) @ rot.T
    assert ndis_delta(epsilon=3.0, mean1=[0, 0], cov1=s1, mean2=[0, 0], cov2=full) == 1.0
    assert ndis_delta(epsilon=3.0, mean1=[0, 0], cov1=full, mean2=[0, 0], cov2=s1) == 1.0
    assert ndis_epsilon(delta=0.5, mean1=[0, 0], cov1=full, mean2=[0, 0], cov2=s1) == math.inf
    # a mean shift off the common support: delta = 1
    off = rot @ np.array([0.0, 1e-6])
    assert ndis_delta(epsilon=3.0, mean1=off, cov1=s1, mean2=[0, 0], cov2=s1) == 1.0
