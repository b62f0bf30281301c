"""The operator-norm bound of a released symmetric matrix's noise
(:func:`cvxdp.solvers.perturbation.noise.symmetric_gaussian_op_bound`): valid at its level
against a Monte Carlo of the same law, the spectral bound where it is the smaller, and the
quad_form release's tightening reads it."""

import math

import numpy as np
import pytest

from cvxdp.solvers.perturbation.noise import gaussian_norm_bound, symmetric_gaussian_op_bound


def _draws(n, count, seed):
    rng = np.random.default_rng(seed)
    i, j = np.triu_indices(n)
    out = np.empty(count)
    for k in range(count):
        Z = np.zeros((n, n))
        Z[i, j] = Z[j, i] = rng.standard_normal(i.size)
        out[k] = np.abs(np.linalg.eigvalsh(Z)).max()
    return out


@pytest.mark.parametrize("n", [5, 12, 30])
def test_holds_at_its_level_and_is_within_twice_the_quantile(n):
    level = 0.02
    bound = symmetric_gaussian_op_bound(n, math.log(1 / level))
    norms = _draws(n, 2000, seed=n)
    # valid: exceedances at most the level (a binomial's mean; the bound is conservative)
    assert np.mean(norms > bound) <= level
    # informative: within 2x of the Monte Carlo quantile at that level
    assert bound <= 2.0 * np.quantile(norms, 1 - level)


def test_the_smaller_of_frobenius_and_spectral():
    s = math.log(1e3)
    frob = lambda n: math.sqrt(2) * float(gaussian_norm_bound(n * (n + 1) // 2, s))  # noqa: E731
    spec = lambda n: 2 * math.sqrt(n) + 2 * math.sqrt(s + math.log(2))  # noqa: E731
    assert symmetric_gaussian_op_bound(5, s) == pytest.approx(frob(5))      # 8.7 < 10.0
    assert symmetric_gaussian_op_bound(30, s) == pytest.approx(spec(30))    # 16.5 < 33.6
    assert symmetric_gaussian_op_bound(30, s) < 0.5 * frob(30)
