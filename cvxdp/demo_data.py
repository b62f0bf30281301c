"""Built-in data of ``cvxdp demo`` and its pictures, generated from fixed seeds.

Shared by :mod:`cvxdp.demo` (the table) and :mod:`cvxdp.plots` (the pictures) so that both
show the same data and the same constants, and neither imports the other.
"""

from __future__ import annotations

import numpy as np

__all__ = ["DELTA", "JOHN_EPS0", "LP_CAP", "SDP_CAP", "ball_data", "gaussian_data", "lp_data",
           "regression_data", "sdp_data"]

DELTA = 1e-6
# Neighbours of the John ellipsoid demo: one row moves by at most JOHN_EPS0 in l2 (Gu et al. 2024).
# One constant for the demo table and the ellipsoid picture, so the two show the same setting.
JOHN_EPS0 = 1e-8
LP_CAP = 0.7   # public per-person cap of the demo LP (public knowledge, not read off the data)
SDP_CAP = 0.2  # public bound of the demo SDP's constraints


def lp_data(seed: int = 0, m: int = 40, n: int = 15) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A resource-allocation LP: rows of A are people's (private) usage rates in [0, 1].

    The right-hand side is a public cap (0.7 for every person, as a published policy would set
    it): a public constant never comes from the private data.
    """
    rng = np.random.default_rng(seed)
    A = rng.uniform(0, 1, (m, n))
    return A, np.full(m, LP_CAP), rng.uniform(0, 1, n)


def sdp_data(seed: int = 2, r: int = 5, m: int = 24) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows F_i = vec(M_i) of symmetric matrices with spectral norm 1 (private), a public
    right-hand side (the constant :data:`SDP_CAP`, never computed from the private F) and a public
    cost matrix C."""
    rng = np.random.default_rng(seed)
    mats = []
    for _ in range(m):
        B = rng.normal(size=(r, r))
        M = (B + B.T) / 2
        mats.append((M / np.linalg.norm(M, 2)).ravel(order="F"))
    F = np.array(mats)
    C = rng.normal(size=(r, r))
    return F, np.full(m, SDP_CAP), (C + C.T) / 2


def ball_data(seed: int = 0, n: int = 50000) -> np.ndarray:
    """GPS-like points: uniform in a disk of radius 3 around (1, 2), public box [-10, 10]^2."""
    rng = np.random.default_rng(seed)
    ang = rng.uniform(0, 2 * np.pi, n)
    rad = 3.0 * np.sqrt(rng.uniform(0, 1, n))
    return np.c_[1 + rad * np.cos(ang), 2 + rad * np.sin(ang)]


def regression_data(seed: int = 0, n: int = 20000) -> tuple[np.ndarray, np.ndarray]:
    """Rows (x_i, y_i) with ||(x_i, y_i)|| <= 1 mostly; y = x'[1, -0.5, 0.25] + noise."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, 3)) / 2
    return X, X @ np.array([1.0, -0.5, 0.25]) + 0.1 * rng.standard_normal(n)


def gaussian_data(seed: int = 0, n: int = 200_000, d: int = 5) -> np.ndarray:
    """Unbounded Gaussian: mean norm 1e3, covariance condition number 1e3, random rotation."""
    rng = np.random.default_rng(seed)
    q, _ = np.linalg.qr(rng.standard_normal((d, d)))
    return 1e3 / np.sqrt(d) + (rng.standard_normal((n, d)) * np.sqrt(np.logspace(0, 3, d))) @ q.T
