"""Exact discrete Gaussian (Canonne, Kamath & Steinke 2020): gaussian_mechanism(discrete=True).

Sampler laws against their exact pmfs (chi-square, fixed seeds), privacy records against
rho = D_g^2 / (2 s^2) with the sensitivity rounded up to the grid (issue 21 item 6).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from cvxdp import BudgetError
from cvxdp.privacy import PrivacyAccountant, as_generator, gaussian_mechanism
from cvxdp.privacy.budgets import ZCDP, zcdp_from_approx, zcdp_to_epsilon
from cvxdp.privacy.discrete_gaussian import (
    bernoulli_exp,
    default_granularity,
    discrete_gaussian_pmf,
    grid_sensitivity,
    sample_discrete_gaussian,
    sample_discrete_laplace,
)


def _chi2_pvalue(draws: np.ndarray, pmf) -> float:
    """Chi-square goodness of fit with the tails pooled so every expected count is >= 5."""
    n = draws.size
    lo, hi = int(draws.min()), int(draws.max())
    support = np.arange(lo, hi + 1)
    while n * pmf(support[0]) < 5:
        support = support[1:]
    while n * pmf(support[-1]) < 5:
        support = support[:-1]
    a, b = int(support[0]), int(support[-1])
    obs = [np.sum(draws <= a)] + [np.sum(draws == v) for v in range(a + 1, b)] + \
          [np.sum(draws >= b)]
    inner = pmf(np.arange(a + 1, b))
    left = 1.0 - sum(pmf(np.arange(a + 1, 10**4)))  # P[Y <= a] by symmetry-free complement
    exp_ = np.concatenate([[left], inner, [1.0 - left - inner.sum()]]) * n
    return float(stats.chisquare(obs, exp_).pvalue)


def test_bernoulli_exp_frequencies():
    gen = as_generator(11)
    for gamma in (Fraction(1, 3), Fraction(5, 2)):
        hits = sum(bernoulli_exp(gamma, gen) for _ in range(20000))
        assert stats.binomtest(hits, 20000, math.exp(-float(gamma))).pvalue > 1e-3


def test_discrete_laplace_matches_its_pmf():
    t = 3
    gen = as_generator(5)
    draws = np.array([sample_discrete_laplace(t, gen) for _ in range(20000)])
    c = (math.exp(1 / t) - 1) / (math.exp(1 / t) + 1)

    def pmf(y):
        return c * np.exp(-np.abs(np.asarray(y, dtype=float)) / t)

    assert _chi2_pvalue(draws, pmf) > 1e-3


@pytest.mark.parametrize("sigma2,n", [(Fraction(5, 2), 20000), (Fraction(3, 10), 8000)])
def test_discrete_gaussian_matches_its_pmf(sigma2, n):
    draws = sample_discrete_gaussian(sigma2, size=n, rng=2024)
    assert draws.dtype == np.int64 and draws.shape == (n,)
    # the pmf normaliser by direct summation, independent of the helper
    z = np.arange(-60, 61, dtype=float)
    norm = np.exp(-z * z / (2 * float(sigma2))).sum()
    assert discrete_gaussian_pmf(2, float(sigma2)) == pytest.approx(
        math.exp(-4 / (2 * float(sigma2))) / norm, rel=1e-12)
    assert _chi2_pvalue(draws, lambda y: discrete_gaussian_pmf(y, float(sigma2))) > 1e-3
    # and the sampler is a function of the seed
    assert np.array_equal(draws[:50], sample_discrete_gaussian(sigma2, size=n, rng=2024)[:50])


def test_discrete_gaussian_exact_for_huge_denominators():
    # sigma^2 = 0.1 as a float has denominator 2^55 (> int64): exercised through big-int draws
    draws = sample_discrete_gaussian(0.1 + 2.0, size=4000, rng=3)
    assert _chi2_pvalue(draws, lambda y: discrete_gaussian_pmf(y, 2.1)) > 1e-3


def test_rounding_to_the_grid_moves_by_at_most_ceil_of_the_distance():
    rng = np.random.default_rng(0)
    g = Fraction(1, 4)
    for _ in range(2000):
        a = float(rng.integers(-40, 40)) / 8 + rng.choice([0.0, 0.125, 1e-12])
        b = a + float(rng.uniform(-1.3, 1.3))
        ra = math.floor(Fraction(a) / g + Fraction(1, 2))
        rb = math.floor(Fraction(b) / g + Fraction(1, 2))
        assert abs(ra - rb) <= math.ceil(abs(Fraction(a) - Fraction(b)) / g)
    assert grid_sensitivity(sensitivity=1.2, granularity=0.5, size=1) == 3.0
    assert grid_sensitivity(sensitivity=1.5, granularity=0.5, size=1) == 3.0
    two = grid_sensitivity(sensitivity=1.0, granularity=0.25, size=2)
    assert 4 + math.sqrt(2) < two < (4 + math.sqrt(2)) * (1 + 1e-15)


def test_privacy_record_is_the_zcdp_formula_on_the_grid():
    # scalar, sensitivity 1.2 on the grid 0.5: D_g = ceil(2.4) = 3; rho = 0.5 -> s^2 = 9
    out, rec = gaussian_mechanism(3.3, sensitivity=1.2, rho=0.5, discrete=True,
                                  granularity=0.5, rng=1)
    assert rec.mechanism == "discrete_gaussian" and "Canonne" in rec.reference
    assert rec.params["grid_sensitivity"] == 3.0
    assert rec.params["sigma2_grid"] == 9.0
    assert rec.zcdp.rho == 3.0**2 / (2 * 9.0) == 0.5
    assert rec.params["sigma"] == pytest.approx(0.5 * 3.0)
    assert "gdp_mu" not in rec.params  # not exactly Gaussian DP: composed in zCDP
    assert (out / 0.5) == pytest.approx(round(out / 0.5), abs=0)  # on the grid
    # vector with (epsilon, delta): rho from the CKS conversion, sigma^2 rounded up
    x = np.array([0.25, 1.0, -3.5])
    out, rec = gaussian_mechanism(x, sensitivity=2.0, epsilon=1.0, delta=1e-6, discrete=True,
                                  granularity=0.25, rng=4)
    d_g = 2.0 / 0.25 + math.sqrt(3)
    rho = rec.zcdp.rho
    assert rho == pytest.approx(d_g**2 / (2 * rec.params["sigma2_grid"]), rel=1e-12)
    assert rho <= zcdp_from_approx(1.0, 1e-6) * (1 + 1e-12)
    assert rho == pytest.approx(zcdp_from_approx(1.0, 1e-6), rel=1e-9)
    assert zcdp_to_epsilon(rho, 1e-6) <= 1.0
    assert rec.budget.epsilon == 1.0 and rec.budget.delta == 1e-6
    assert np.all(np.mod(out, 0.25) == 0)  # values on the grid stay on it


def test_default_granularity_and_determinism():
    g = default_granularity(sensitivity=1.0, size=4)
    assert g == 2.0**-11  # 1 / (1024 sqrt(4)) is itself a power of two
    assert default_granularity(sensitivity=3.0, size=1) == 2.0**-9  # 2^-9 <= 3/1024 < 2^-8
    x = np.linspace(-1, 1, 4)
    a, rec = gaussian_mechanism(x, sensitivity=1.0, rho=0.1, discrete=True, rng=9)
    b, _ = gaussian_mechanism(x, sensitivity=1.0, rho=0.1, discrete=True, rng=9)
    assert np.array_equal(a, b) and rec.params["granularity"] == g
    # inflation of the sensitivity by the grid: below 0.1 %
    assert rec.params["grid_sensitivity"] * g <= 1.001
    # the noise has the calibrated scale (4 draws of sd ~ 2.2: loose, but it cannot be 0)
    assert 0 < np.max(np.abs(a - x)) < 12 * rec.params["sigma"]


def test_accountant_and_argument_errors():
    acct = PrivacyAccountant(ZCDP(0.3))
    gaussian_mechanism(1.0, sensitivity=1.0, rho=0.2, discrete=True, accountant=acct, rng=0)
    with pytest.raises(BudgetError):
        gaussian_mechanism(1.0, sensitivity=1.0, rho=0.2, discrete=True, accountant=acct,
                           rng=0)
    assert len(acct.ledger) == 1
    with pytest.raises(ValueError, match="discrete=True"):
        gaussian_mechanism(1.0, sensitivity=1.0, epsilon=1.0, delta=1e-6, granularity=0.5)
    with pytest.raises(BudgetError, match="delta > 0"):
        gaussian_mechanism(1.0, sensitivity=1.0, epsilon=1.0, discrete=True)
    with pytest.raises(ValueError, match="NaN"):
        gaussian_mechanism([np.nan], sensitivity=1.0, rho=1.0, discrete=True)
