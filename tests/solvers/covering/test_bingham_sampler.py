"""Exact Bingham sampler (Kent-Ganeiber-Mardia 2013), the explicit-net reference path and the
volume-argument accuracy bound of the continuous exponential mechanism (paper 002, Lemma B.9,
digest G6)."""

import numpy as np
import pytest
from scipy import stats

from cvxdp.solvers.covering.bingham import (
    acg_parameter,
    cap_measure,
    net_exponential_sample,
    sample_bingham,
    sphere_net,
    sphere_oracle_error,
)


def _angle_chi2(v, M, kappa, bins=24):
    """Chi-square p-value of the axial angle of 2-d draws against the numerical density."""
    th = np.mod(np.arctan2(v[:, 1], v[:, 0]), np.pi)
    h, _ = np.histogram(th, bins=bins, range=(0, np.pi))
    g = (np.arange(bins * 2000) + 0.5) * np.pi / (bins * 2000)
    u = np.column_stack([np.cos(g), np.sin(g)])
    logd = kappa * np.einsum("ni,ij,nj->n", u, M, u)
    p = np.exp(logd - logd.max()).reshape(bins, -1).sum(axis=1)
    e = p / p.sum() * len(th)
    keep = e > 5
    chi2 = float(((h[keep] - e[keep]) ** 2 / e[keep]).sum())
    return stats.chi2.sf(chi2, keep.sum() - 1)


@pytest.mark.parametrize("kappa", [0.0, 0.7, 6.0, 80.0])
def test_bingham_r2_matches_numerical_density(kappa):
    M = np.array([[0.8, 0.3], [0.3, 0.1]])
    v = sample_bingham(M, kappa, size=30000, rng=11)
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0)
    assert _angle_chi2(v, M, kappa) > 1e-3


@pytest.mark.parametrize("r,kappa", [(4, 3.0), (6, 15.0)])
def test_bingham_moments_match_importance_sampling(r, kappa):
    """E[v v'] of the sampler vs an independent importance-sampling estimate, with error bars."""
    rng = np.random.default_rng(r)
    B = rng.standard_normal((r, r))
    M = B @ B.T
    M /= np.linalg.norm(M, 2)
    n = 40000
    v = sample_bingham(M, kappa, size=n, rng=5)
    f = np.einsum("ni,ij,nj->n", v, M, v)
    # importance sampling from the uniform distribution on the sphere
    u = rng.standard_normal((400000, r))
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    fu = np.einsum("ni,ij,nj->n", u, M, u)
    w = np.exp(kappa * (fu - fu.max()))
    w /= w.sum()
    is_mean = float(w @ fu)
    is_se = float(np.sqrt(np.sum(w**2 * (fu - is_mean) ** 2)))
    se = float(f.std() / np.sqrt(n))
    assert abs(f.mean() - is_mean) < 5 * np.hypot(se, is_se)
    # second moments along the top eigenvector
    top = np.linalg.eigh(M)[1][:, -1]
    a, b = (v @ top) ** 2, (u @ top) ** 2
    is_a = float(w @ b)
    assert abs(a.mean() - is_a) < 5 * np.hypot(a.std() / np.sqrt(n),
                                               np.sqrt(np.sum(w**2 * (b - is_a) ** 2)))


def test_kappa_zero_is_uniform():
    v = sample_bingham(np.diag([1.0, 0.5, 0.0]), 0.0, size=30000, rng=2)
    np.testing.assert_allclose(v.T @ v / len(v), np.eye(3) / 3, atol=0.01)


def test_same_seed_same_draws():
    M = np.diag([1.0, 0.2, 0.1])
    np.testing.assert_array_equal(sample_bingham(M, 5.0, size=7, rng=3),
                                  sample_bingham(M, 5.0, size=7, rng=3))
    assert sample_bingham(M, 5.0, rng=3).shape == (3,)


def test_acg_parameter_solves_its_equation():
    a = np.array([0.0, 0.5, 3.0, 40.0])
    b = acg_parameter(a)
    assert 1.0 <= b <= 4.0
    assert np.sum(1 / (b + 2 * a)) == pytest.approx(1.0, abs=1e-10)
    assert acg_parameter(np.zeros(5)) == 5.0


def test_net_mechanism_converges_to_bingham_r2():
    """The paper's finite net mechanism (Lemma B.9) has the Bingham law as its limit."""
    M = np.array([[0.6, -0.4], [-0.4, 0.5]])
    kappa = 9.0
    net, gamma = sphere_net(2, 720)
    assert gamma < 0.01
    gen = np.random.default_rng(0)
    v = np.array([net_exponential_sample(M, kappa, net, rng=gen) for _ in range(8000)])
    assert _angle_chi2(v, M, kappa, bins=12) > 1e-3


def test_net_mechanism_r3_mean_score_matches_bingham():
    rng = np.random.default_rng(4)
    B = rng.standard_normal((3, 3))
    M = B @ B.T / np.linalg.norm(B @ B.T, 2)
    kappa = 12.0
    net, gamma = sphere_net(3, 4096)
    assert gamma < 0.1
    vb = sample_bingham(M, kappa, size=6000, rng=1)
    gen = np.random.default_rng(2)
    vn = np.array([net_exponential_sample(M, kappa, net, rng=gen) for _ in range(6000)])
    fb = np.einsum("ni,ij,nj->n", vb, M, vb)
    fn = np.einsum("ni,ij,nj->n", vn, M, vn)
    se = np.hypot(fb.std(), fn.std()) / np.sqrt(6000)
    assert abs(fb.mean() - fn.mean()) < 5 * se + 2 * gamma**2  # + discretisation


@pytest.mark.parametrize("r,kappa", [(3, 40.0), (5, 200.0)])
def test_sphere_oracle_error_bound_holds(r, kappa):
    """The volume bound t(kappa, r, beta): Pr[lam_max - v'Mv > t] <= beta (seeded, error bar)."""
    rng = np.random.default_rng(r)
    B = rng.standard_normal((r, r))
    M = B @ B.T / np.linalg.norm(B @ B.T, 2)
    beta = 0.05
    t = sphere_oracle_error(kappa, r, beta)
    assert 0 < t < 1
    v = sample_bingham(M, kappa, size=20000, rng=8)
    gap = 1.0 - np.einsum("ni,ij,nj->n", v, M, v)
    frac = float(np.mean(gap > t))
    assert frac <= beta + 3 * np.sqrt(beta * (1 - beta) / 20000)


def test_cap_measure_known_values():
    assert cap_measure(np.pi / 2, 3) == pytest.approx(1.0)
    # r = 3: two caps of angle theta have area fraction 1 - cos(theta)
    assert cap_measure(0.3, 3) == pytest.approx(1 - np.cos(0.3), rel=1e-10)
    assert cap_measure(0.3, 1) == 1.0


def test_bad_inputs_rejected():
    with pytest.raises(ValueError, match="square"):
        sample_bingham(np.ones((2, 3)), 1.0)
    with pytest.raises(ValueError, match="kappa"):
        sample_bingham(np.eye(2), -1.0)
    with pytest.raises(ValueError, match="NaN"):
        sample_bingham(np.array([[np.nan, 0], [0, 1]]), 1.0)
    with pytest.raises(ValueError, match="small-r reference"):
        sphere_net(5, 100)
