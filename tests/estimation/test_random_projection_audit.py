"""Empirical audits (cvxdp.audit) of M_RP and the noisy-Gram least-squares release on
worst-case neighbouring pairs: the honest calibration passes, an under-noised one is caught."""

from __future__ import annotations

import numpy as np

from cvxdp.audit import audit_mechanism
from cvxdp.estimation.random_projection import clip_rows, gaussian_sketch, rp_sigma
from cvxdp.estimation.regression import noisy_gram
from cvxdp.privacy.calibration import calibrate_gaussian


def _worst_pair():
    rng = np.random.default_rng(2)
    data = clip_rows(rng.standard_normal((30, 3)) * np.array([3.0, 1.0, 0.3]), 1.0)
    _, vec = np.linalg.eigh(data.T @ data)
    return data, np.vstack([data, vec[:, 0]])  # added row: norm l, smallest eigendirection


def test_audit_random_projection():
    small, big = _worst_pair()
    eps, delta, r = 1.0, 1e-3, 5
    sigma = rp_sigma(epsilon=eps, delta=delta, r=r, row_bound=1.0)
    results = []
    for s in (sigma, sigma / 2):
        prec_small = np.linalg.inv(small.T @ small + s**2 * np.eye(3))
        prec_big = np.linalg.inv(big.T @ big + s**2 * np.eye(3))

        def loss(sk, diff=prec_small - prec_big):  # the optimal (likelihood-ratio) statistic
            return float(np.einsum("ij,ik,kj->", sk, diff, sk))

        results.append(audit_mechanism(lambda d, g, s=s: gaussian_sketch(d, r, s, g), big, small,
                                       epsilon=eps, delta=delta, n_samples=20000, rng=0,
                                       statistic=loss))
    assert results[0].passed
    assert not results[1].passed and results[1].epsilon_lower > 1.2


def test_audit_noisy_gram():
    small, big = _worst_pair()
    eps, delta, bound = 1.0, 1e-3, 1.0
    sigma = calibrate_gaussian(epsilon=eps, delta=delta, sensitivity=bound**2)
    v = big[-1]
    direction = np.outer(v, v) / np.linalg.norm(np.outer(v, v))
    results = [audit_mechanism(lambda d, g, s=s: noisy_gram(d, s, g), big, small, epsilon=eps,
                               delta=delta, n_samples=20000, rng=1,
                               statistic=lambda m: float(np.sum(m * direction)))
               for s in (sigma, sigma / 3)]
    assert results[0].passed
    assert not results[1].passed
