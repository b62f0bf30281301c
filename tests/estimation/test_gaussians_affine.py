"""The default private_gaussian is affine-invariant in accuracy (issue 26 item 1): errors in the
whitened metric do not depend on the condition number."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from cvxdp.estimation.gaussians import GaussianSampleWarning, private_gaussian


def gaussian(d, n, seed, cond, mean_norm=1e3):
    rng = np.random.default_rng(seed)
    q, _ = np.linalg.qr(rng.standard_normal((d, d)))
    lam = np.logspace(0, math.log10(cond), d)
    mu = rng.standard_normal(d)
    mu *= mean_norm / np.linalg.norm(mu)
    return mu + (rng.standard_normal((n, d)) * np.sqrt(lam)) @ q.T, mu, (q * lam) @ q.T


def errors(sol, mu, sigma):
    low = np.linalg.cholesky(sigma)
    maha = np.linalg.norm(np.linalg.solve(low, sol.mean - mu))
    white = np.linalg.solve(low, np.linalg.solve(low, sol.covariance).T)
    return maha, np.linalg.norm(white - np.eye(len(mu)))


def run(x, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GaussianSampleWarning)
        return private_gaussian(x, epsilon=1.0, delta=1e-6, **kw)


def test_default_at_condition_number_1e10_d4():
    """Reproducer: d = 4, n = 2e5, epsilon = 1, condition number 1e10.  The old default's
    whitened Frobenius error is 52.7 here (kappa = 1: 0.029); the default must stay within
    0.1 (Mahalanobis mean error within 0.05) and say optimal_inaccurate."""
    x, mu, sigma = gaussian(4, 200_000, seed=0, cond=1e10)
    sol = run(x, rng=10)
    maha, white = errors(sol, mu, sigma)
    assert white <= 0.1 and maha <= 0.05, (maha, white)
    assert sol.status == "optimal_inaccurate", sol.info["status_reason"]
