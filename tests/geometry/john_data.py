"""Polytopes and the reference measurement shared by the John ellipsoid's utility tests."""

import math

import numpy as np

from cvxdp.geometry.john.john import ellipsoid_from_weights
from cvxdp.geometry.john.john_iter import fixed_point_weights


def fitted_ratio(F, A, E):
    """Per-dimension volume ratio of F shrunk until it fits in ``|A x| <= 1`` (never grown)."""
    s = math.sqrt(float(F.support_ratios(A).max()))
    return F.scaled(1 / max(s, 1.0)).volume_ratio(E)


def reference(A):
    """(John ellipsoid at accuracy 3e-2, the uniform-weights ellipsoid's ratio to it after
    scaling it to touch P)."""
    n, d = A.shape
    E = ellipsoid_from_weights(A, fixed_point_weights(A, accuracy=3e-2)[0])
    U = ellipsoid_from_weights(A, np.full(n, d / n))
    U = U.scaled(1 / math.sqrt(float(U.support_ratios(A).max())))
    return E, fitted_ratio(U, A, E)


def gaussian_rows(n, d, seed=0):
    return np.random.default_rng(seed).standard_normal((n, d)) / math.sqrt(d)


def clustered(n, d, seed=0, frac=0.9, spread=0.05):
    """``frac`` of the rows near +-e1, the rest uniform on the unit sphere, all of norm < 1."""
    g = np.random.default_rng(seed)
    k = int(round(frac * n))
    C = np.zeros((k, d))
    C[:, 0] = g.choice([-1.0, 1.0], k)
    C += spread * g.standard_normal((k, d)) / math.sqrt(d)
    S = g.standard_normal((n - k, d))
    S /= np.linalg.norm(S, axis=1)[:, None]
    A = np.vstack([C, S])[g.permutation(n)]
    return A * np.minimum(1.0, 0.999 / np.linalg.norm(A, axis=1))[:, None]


def anisotropic(n, d, seed=0, cond=10.0):
    """Gaussian rows with axis scales geomspace(1, 1/cond), / the 99% row-norm quantile, clipped."""
    g = np.random.default_rng(seed)
    A = g.standard_normal((n, d)) * np.geomspace(1, 1 / cond, d)
    A /= np.quantile(np.linalg.norm(A, axis=1), 0.99)
    return A * np.minimum(1.0, 0.999 / np.linalg.norm(A, axis=1))[:, None]
