"""Report-noisy-max with Gaussian noise (cvxdp.privacy.noisy_max): its noise scale against the
analytic Gaussian calibration (an independent formula), and its selection law audited on
seeded draws against the exact two-way and three-way probabilities."""

import math

import numpy as np
import pytest
from scipy import integrate, stats

from cvxdp.errors import BudgetError
from cvxdp.privacy.calibration import gaussian_epsilon
from cvxdp.privacy.gdp_curve import gdp_epsilon
from cvxdp.privacy.noisy_max import (
    gdp_noise_scale,
    noisy_argmax,
    noisy_scores,
    two_way_probability,
    vector_sensitivity,
)


@pytest.mark.parametrize("sensitivity, mu", [(1.0, 0.5), (0.3, 2.0), (2.5, 0.1)])
def test_noise_scale_is_mu_gdp_by_the_analytic_gaussian(sensitivity, mu):
    sigma = gdp_noise_scale(sensitivity=sensitivity, mu=mu)
    assert sigma == pytest.approx(sensitivity / mu, rel=1e-12)
    # one Gaussian step at this sigma has the (epsilon, delta) curve of mu-GDP (Balle & Wang's
    # exact formula against the GDP curve)
    for delta in (1e-3, 1e-6):
        assert gaussian_epsilon(sigma=sigma, delta=delta, sensitivity=sensitivity) == \
            pytest.approx(gdp_epsilon(mu=mu, delta=delta), rel=1e-6)


def test_vector_sensitivity_and_bad_inputs():
    assert vector_sensitivity([3.0, 4.0]) == pytest.approx(5.0)
    assert vector_sensitivity([0.0, 2.0, 0.0]) == pytest.approx(2.0)
    for bad in ([], [1.0, -0.1], [1.0, math.nan], [math.inf]):
        with pytest.raises(BudgetError, match="per-candidate sensitivities"):
            vector_sensitivity(bad)
    with pytest.raises(BudgetError, match="mu must be > 0"):
        gdp_noise_scale(sensitivity=1.0, mu=0.0)
    with pytest.raises(ValueError, match="finite"):
        noisy_scores([1.0, math.nan], sensitivity=1.0, mu=1.0, rng=np.random.default_rng(0))


def test_two_way_selection_law_seeded_audit():
    # P[a wins] = Phi((a - b) / (sigma sqrt 2)); 40000 seeded draws, 4.5 standard errors
    g = np.random.default_rng(7)
    scores, draws = [0.4, 0.0], 40_000
    wins, sigma = 0, None
    for _ in range(draws):
        noisy, sigma = noisy_scores(scores, sensitivity=1.0, mu=2.0, rng=g)
        wins += noisy_argmax(noisy) == 0
    p = two_way_probability(scores[0], scores[1], sigma)
    assert p == pytest.approx(stats.norm.cdf(0.4 / (0.5 * math.sqrt(2))), rel=1e-12)
    assert abs(wins / draws - p) < 4.5 * math.sqrt(p * (1 - p) / draws)


def test_three_way_selection_law_seeded_audit():
    # P[j wins] = int phi(x) prod_{k != j} Phi((s_j - s_k)/sigma + x) dx, by quadrature
    g = np.random.default_rng(11)
    scores, sensitivity, mu, draws = np.array([0.0, 0.5, 0.8]), 1.2, 1.5, 30_000
    counts = np.zeros(3)
    for _ in range(draws):
        noisy, sigma = noisy_scores(scores, sensitivity=sensitivity, mu=mu, rng=g)
        counts[noisy_argmax(noisy)] += 1
    for j in range(3):
        others = [k for k in range(3) if k != j]
        p = integrate.quad(lambda x, j=j, others=others: stats.norm.pdf(x) * np.prod(
            [stats.norm.cdf((scores[j] - scores[k]) / sigma + x) for k in others]),
            -10, 10)[0]
        assert abs(counts[j] / draws - p) < 4.5 * math.sqrt(p * (1 - p) / draws)
