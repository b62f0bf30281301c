"""Wood's exact von Mises-Fisher sampler (continuous exponential mechanism with a linear score,
spin-factor covering oracle, digest 002 G7) and its volume-argument accuracy bound."""

import numpy as np
import pytest
from scipy import special, stats

from cvxdp.solvers.covering.bingham import sample_vmf, vmf_oracle_error


@pytest.mark.parametrize("p,kappa", [(2, 3.0), (3, 5.0), (6, 20.0), (6, 0.5)])
def test_vmf_mean_resultant_matches_bessel_ratio(p, kappa):
    """E[mu'u] = I_{p/2}(kappa) / I_{p/2-1}(kappa) (independent closed form), 5 sigma."""
    rng = np.random.default_rng(p)
    mu = rng.standard_normal(p)
    u = sample_vmf(mu, kappa, size=40000, rng=1)
    np.testing.assert_allclose(np.linalg.norm(u, axis=1), 1.0)
    w = u @ (mu / np.linalg.norm(mu))
    expect = special.ive(p / 2, kappa) / special.ive(p / 2 - 1, kappa)
    assert abs(w.mean() - expect) < 5 * w.std() / np.sqrt(len(w))


def test_vmf_circle_matches_von_mises_density():
    u = sample_vmf(np.array([0.0, 1.0]), 2.5, size=30000, rng=3)
    th = np.arctan2(u[:, 1], u[:, 0]) - np.pi / 2
    th = (th + np.pi) % (2 * np.pi) - np.pi
    assert stats.kstest(th, stats.vonmises(2.5).cdf).pvalue > 1e-3


def test_vmf_orthogonal_part_is_isotropic_and_seeded():
    mu = np.array([0.0, 0.0, 1.0])
    u = sample_vmf(mu, 4.0, size=30000, rng=5)
    np.testing.assert_allclose(u[:, :2].mean(axis=0), 0.0, atol=0.02)
    np.testing.assert_array_equal(sample_vmf(mu, 4.0, size=3, rng=5),
                                  sample_vmf(mu, 4.0, size=3, rng=5))
    z = sample_vmf(np.zeros(3), 4.0, size=20000, rng=1)  # zero mean direction: uniform
    np.testing.assert_allclose(z.T @ z / len(z), np.eye(3) / 3, atol=0.01)


def test_vmf_oracle_error_bound_holds():
    kappa, p, beta = 60.0, 5, 0.05
    mu = np.eye(p)[0]
    t = vmf_oracle_error(kappa, p, beta)
    assert 0 < t < 1
    u = sample_vmf(mu, kappa, size=20000, rng=2)
    assert np.mean(1 - u[:, 0] > t) <= beta + 3 * np.sqrt(beta * (1 - beta) / 20000)


def test_vmf_bad_input():
    with pytest.raises(ValueError, match="kappa"):
        sample_vmf(np.ones(3), -1.0)
    with pytest.raises(ValueError, match="NaN"):
        sample_vmf(np.array([np.nan, 1.0]), 1.0)
