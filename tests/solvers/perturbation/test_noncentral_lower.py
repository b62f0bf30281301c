"""noise_tails.noncentral_lower: a one-draw lower confidence bound on a noncentral chi-square's
noncentrality (the single Euclidean norm's residual floor, fit_term._norm_floor)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import chdtri

from cvxdp.solvers.perturbation.noise_tails import NONCENTRAL_EXACT_MAX, noncentral_lower


@pytest.mark.parametrize(("lam", "k"), [(0.0, 16), (4.0, 16), (300.0, 3), (1e4, 1), (1e6, 40)])
def test_the_bound_holds_on_all_but_beta_of_the_draws(lam, k):
    """``lam`` exceeds the bound on at most a ``beta`` share of 4,000 draws of ``||sqrt(lam) u +
    g||^2`` (3 standard deviations: 0.011 at beta = 0.05), and where the draw is dominated by
    ``lam`` the bound is about ``(sqrt(lam) - 1.64)^2``: within ``4 / sqrt(lam)`` of it."""
    rng = np.random.default_rng(1)
    beta = 0.05
    g = rng.standard_normal((4000, k))
    g[:, 0] += np.sqrt(lam)
    lows = np.array([noncentral_lower(float(x), k, beta) for x in (g * g).sum(axis=1)])
    assert np.mean(lows > lam) <= beta + 0.011
    if lam >= 1e4:
        assert np.median(lows) >= (1.0 - 4.0 / np.sqrt(lam)) * lam


def test_below_the_central_quantile_nothing_follows_and_above_the_exact_range_the_union():
    """A draw at most the central quantile gives 0; beyond the exact range the union bound
    ``lam + 2 sqrt(lam) z + c`` is inverted (``z``, ``c`` at beta / 2 each): still below a
    noncentrality whose draw sits at its mean, and within 0.1% of it."""
    assert noncentral_lower(float(chdtri(5, 1e-3)) * 0.999, 5, 1e-3) == 0.0
    lam = 1e3 * NONCENTRAL_EXACT_MAX
    low = noncentral_lower(lam + 5.0, 5, 1e-3)
    assert 0.999 * lam <= low <= lam
    assert noncentral_lower(float("nan"), 5, 1e-3) == 0.0
