"""Numerical kernels of the John ellipsoid: leverage ratios, fixed-point and sketched iterations.

For ``A`` in R^{n x d} and weights ``w >= 0`` the leverage ratio of row i is
``h_i(w) = a_i' (A' W A)^{-1} a_i`` and the weighted leverage score is ``w_i h_i(w)``.  The John
ellipsoid weights are the fixed point ``w_i = w_i h_i(w)`` (l-infinity Lewis weights).

References
----------
Gu, Li, Liang, Shi, Song, Yu, "Fast John Ellipsoid Computation with Differential Privacy
Optimization", Gu et al. (2024): Def 3.2, Lemma 3.3 (optimality),
Lemma 7.1 (telescoping), Algorithm 1 (FastApproxGeneral); Cohen, Cousins, Lee, Yang, "A near-optimal
algorithm for approximating the John ellipsoid", COLT 2019 (the fixed-point iteration).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import linalg

from cvxdp.dask_backend import is_dask
from cvxdp.dask_backend import john as dask_john
from cvxdp.errors import UnsupportedProblemError
from cvxdp.geometry.john.core import chol as _chol
from cvxdp.geometry.john.core import iterations_for

__all__ = ["leverage_ratios", "fixed_point_weights", "sketched_weights", "iterations_for",
           "uniform_weights"]


def uniform_weights(A: np.ndarray) -> np.ndarray:
    """``w = d/n`` for every row; for a Dask ``A`` a Dask array made on the workers with its row
    blocks (the client never holds ``n`` numbers)."""
    if is_dask(A):
        return dask_john.uniform_weights(A)
    n, d = A.shape
    return np.full(n, d / n)


def gram(A: np.ndarray, w: np.ndarray, ridge: float = 0.0) -> np.ndarray:
    """``A' diag(w) A + ridge I`` (symmetric, d x d); chunk-wise for a Dask ``A``."""
    if is_dask(A):
        return dask_john.gram(A, w, ridge)
    M = (A * w[:, None]).T @ A
    if ridge:
        M[np.diag_indices_from(M)] += ridge
    return (M + M.T) / 2


def leverage_ratios(A: np.ndarray, w: np.ndarray, ridge: float = 0.0) -> np.ndarray:
    """``h_i = a_i' (A' W A + ridge I)^{-1} a_i`` for every row (exact, O(n d^2)).

    References
    ----------
    Gu et al. (2024), Def 3.2 / Lemma 3.3 (h_i), Thm 5.1 (f_i = w_i h_i).
    """
    if is_dask(A):  # a lazy Dask array of ratios, computed on the workers
        return dask_john.leverage_ratios(A, w, ridge)
    L = _chol(gram(A, w, ridge))
    Y = linalg.solve_triangular(L, A.T, lower=True, check_finite=False)
    return np.einsum("ij,ij->j", Y, Y)


def fixed_point_weights(A: np.ndarray, accuracy: float = 0.01, iterations: int | None = None
                        ) -> tuple[np.ndarray, int]:
    """Averaged fixed-point iteration ``w_{k+1} = w_k * h(w_k)`` (Cohen-Cousins-Lee-Yang).

    Returns ``(u, T)`` with ``u = (1/T) sum_{k=1..T} w_k`` (``w_1 = d/n`` included).
    ``sum(u) = d`` exactly and ``max_i h_i(u) <= 1 + accuracy`` (:func:`iterations_for`).

    References
    ----------
    Gu et al. (2024), Algorithm 1 without sketching/noise, Lemma 7.1.
    """
    if is_dask(A):  # u is then a Dask array on the workers
        return dask_john.fixed_point_weights(A, accuracy, iterations)
    n, d = A.shape
    T = iterations if iterations is not None else iterations_for(n, d, accuracy)
    w = np.full(n, d / n)
    total = np.zeros(n)
    for _ in range(T):
        total += w
        w = w * leverage_ratios(A, w)
    return total / T, T


def sketched_weights(A: np.ndarray, accuracy: float = 0.1, *, rng: np.random.Generator,
                     iterations: int | None = None, sketch_size: int | None = None,
                     sample_size: int | None = None) -> tuple[np.ndarray, int, dict]:
    """Algorithm 1 of the paper without noise: sampled Gram matrix and Gaussian sketch.

    Per iteration: the Gram matrix ``B'DB`` is formed from ``sample_size`` rows drawn with
    probability proportional to the previous leverage estimates (D rescales by 1/(N p_i)), and the
    leverage scores are estimated as ``(1/s) ||S (B'DB)^{-1/2} b_i||^2`` with ``S`` an ``s x d``
    standard Gaussian matrix.  Cost O(N d^2 + n d s + d^3) per iteration instead of O(n d^2).

    Constants (the paper gives Theta(.)): ``s = min(d, ceil(8/accuracy))`` and
    ``N = min(n, ceil(4 d log(n) / accuracy))``.  The proof's ``s = 8000/xi`` exceeds d for every
    d <= 8000/xi, where the sketch is no faster than the exact scores, so it is not the default.
    The output is normalised to ``sum(v) = d`` (Algorithm 1, last line).

    References
    ----------
    Gu et al. (2024), Algorithm 1 (FastApproxGeneral), Def 3.10, Lemma E.6.
    """
    if is_dask(A):
        raise UnsupportedProblemError(
            "method='sketched' samples rows to the client; on a Dask array use "
            "method='fixed-point' (chunk-wise) or solve_private.")
    n, d = A.shape
    T = iterations if iterations is not None else iterations_for(n, d, accuracy)
    s = sketch_size if sketch_size is not None else min(d, math.ceil(8 / accuracy))
    N = sample_size if sample_size is not None else min(
        n, math.ceil(4 * d * math.log(n) / accuracy))
    w = np.full(n, d / n)
    lev = w * leverage_ratios(A, w)  # one exact pass for the first sampling distribution
    total = np.zeros(n)
    for _ in range(T):
        total += w
        if N < n:
            p = np.maximum(lev, 1e-300)
            p = p / p.sum()
            idx = rng.choice(n, size=N, replace=True, p=p)
            scale = w[idx] / (N * p[idx])
            M = (A[idx] * scale[:, None]).T @ A[idx]
        else:
            M = gram(A, w)
        L = _chol((M + M.T) / 2)
        if s < d:
            S = rng.standard_normal((s, d))
            # S L^{-1}: rows of A mapped through (B'DB)^{-1/2} then sketched (s x d, then n x s)
            P = linalg.solve_triangular(L, S.T, lower=True, trans="T", check_finite=False)
            Y = A @ P
            h = np.einsum("ij,ij->i", Y, Y) / s
        else:
            Y = linalg.solve_triangular(L, A.T, lower=True, check_finite=False)
            h = np.einsum("ij,ij->j", Y, Y)
        lev = w * h
        w = lev
    u = total / T
    return d * u / u.sum(), T, {"sketch_size": s, "sample_size": N}
