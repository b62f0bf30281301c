"""gaussian_mle(X).solve_private releases nothing but post-processing of private_gaussian
(issue 21 item 13): ``value`` is computed from the released mean and covariance only."""

from __future__ import annotations

import dataclasses
import re

import numpy as np

import cvxdp.estimation.gaussians as gmod
from cvxdp.estimation.gaussians import gaussian_mle


def _data(n=60_000, secret=13.37, seed=0):
    x = np.random.default_rng(seed).normal(10.0, 2.0, n)
    x[0] = secret
    return x[:, None]


def _roots_from_release(others, prec, mean, value):
    """The attack of item 13: knowing the other n-1 records, solve
    ``value = log p - p S(x0) - (m - xbar(x0))^2`` for the secret x0 (S = sample variance,
    ddof 1).  Quadratic in x0."""
    n = len(others) + 1
    s, q = others.sum(), (others**2).sum()
    poly = np.polynomial.Polynomial
    x0 = poly([0.0, 1.0])
    xbar = (s + x0) / n
    var = (q + x0**2 - n * xbar**2) / (n - 1)
    f = np.log(prec) - prec * var - (mean - xbar) ** 2 - value
    r = f.roots()
    return np.real(r[np.abs(np.imag(r)) < 1e-9 * np.abs(r)])


def test_attacker_knowing_n_minus_1_records_cannot_recover_the_secret():
    """n = 60000, d = 1, epsilon = 0.5, reference=False.  Before the fix, ``value`` was the
    exact-data log-likelihood at the released point and a root of the quadratic equals the
    secret 13.37 to ~1e-6; after it, ``value`` depends on the data only through the release."""
    x = _data()
    sol = gaussian_mle(x).solve_private(epsilon=0.5, delta=1e-6, rng=1)
    assert sol.validation is None
    prec = float(sol.primal["precision"][0, 0])
    mean = float(sol.primal["mean"][0])
    roots = _roots_from_release(x[1:, 0], prec, mean, sol.value)
    dist = np.min(np.abs(roots - 13.37)) if roots.size else np.inf
    assert dist > 1e-2, (roots, dist)


def test_value_is_the_objective_of_the_released_estimates():
    """The released value equals the model's objective with the released (mu_hat, Sigma_hat) in
    place of (xbar, S): ``log det P - tr(Sigma_hat P)`` at ``P = Sigma_hat^{-1}``; it is *not*
    the exact-data objective at the released point (which the attack above inverts)."""
    x = np.random.default_rng(5).normal(size=(60_000, 2)) * [1.0, 3.0] + [4.0, -2.0]
    prob = gaussian_mle(x)
    sol = prob.solve_private(epsilon=1.0, delta=1e-6, rng=2)
    prec, mean = sol.primal["precision"], sol.primal["mean"]
    cov = sol.covariance
    from_release = np.linalg.slogdet(prec)[1] - np.trace(cov @ prec)
    assert abs(sol.value - from_release) <= 1e-9 * abs(from_release)
    s = np.cov(x, rowvar=False)
    exact = (np.linalg.slogdet(prec)[1] - np.trace(s @ prec)
             - np.sum((mean - x.mean(axis=0)) ** 2))
    assert abs(sol.value - exact) > 1e-6  # differs by the noise, not by rounding


def _fields(sol):
    rep = re.sub(r"solve_time=[^)]*\)", "solve_time=?)", repr(sol))
    return (sol.status, sol.value, {k: np.asarray(v).tolist() for k, v in sol.primal.items()},
            repr(sol.info), rep)


def test_held_release_gives_identical_fields_for_neighbours(monkeypatch):
    """Swap one record for a neighbour and hold private_gaussian's release fixed: every field of
    the GaussianMLE answer (value, primal, info, repr) must be the same."""
    x = _data(n=30_000)
    xn = x.copy()
    xn[0] = -40.0  # replace one record
    fixed = gmod.private_gaussian(x, epsilon=1.0, delta=1e-6, rng=3, reference=False)

    def held(*_a, **_k):
        return dataclasses.replace(fixed, mean=fixed.mean.copy(), covariance=fixed.covariance
                                   .copy(), info=dict(fixed.info), primal={})

    monkeypatch.setattr(gmod, "private_gaussian", held)
    a = gaussian_mle(x).solve_private(epsilon=1.0, delta=1e-6, rng=3)
    b = gaussian_mle(xn).solve_private(epsilon=1.0, delta=1e-6, rng=3)
    assert _fields(a) == _fields(b)
