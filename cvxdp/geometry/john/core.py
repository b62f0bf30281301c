"""The numpy core of the John ellipsoid that the Dask path shares: shape checks, the public row
domain, the Cholesky factor and the iteration count.

Nothing here dispatches to Dask, so :mod:`cvxdp.dask_backend.john` (the chunk-wise implementations,
which the modules of :mod:`cvxdp.geometry.john` call for a Dask ``A``) depends on this package
through this module only: no import circle between ``geometry`` and ``scale``
(``tests/test_import_cycles.py``).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import linalg

from cvxdp.errors import UnsupportedProblemError
from cvxdp.privacy.clipping import clip_rows_l2

__all__ = ["JITTER", "check_shape", "chol", "clip_into_domain", "iterations_for", "sym_noise",
           "project_psd"]

#: relative jitter added to A'WA before Cholesky when it is numerically singular (not in the paper)
JITTER = 1e-12


def chol(M: np.ndarray) -> np.ndarray:
    """Lower Cholesky factor of the symmetric ``M``, with :data:`JITTER` on the diagonal (relative
    to its mean eigenvalue) when ``M`` is numerically singular."""
    try:
        return linalg.cholesky(M, lower=True, check_finite=False)
    except linalg.LinAlgError:
        jit = JITTER * max(float(np.trace(M)) / M.shape[0], 1e-300)
        return linalg.cholesky(M + jit * np.eye(M.shape[0]), lower=True, check_finite=False)


def iterations_for(n: int, d: int, accuracy: float) -> int:
    """Iterations T such that the averaged exact iteration has ``max_i h_i(u) <= 1 + accuracy``.

    Lemma 7.1 (telescoping, with convexity of ``log h_i``) gives
    ``log h_i(u) <= (1/T) log(w_{T+1,i} / w_{1,i}) <= (1/T) log(n/d)`` since ``w_1 = d/n`` and
    every weighted leverage score is <= 1; so ``T = ceil(log(n/d) / log(1+accuracy))`` suffices.

    References
    ----------
    Gu et al. (2024), Lemma 7.1.
    """
    return max(1, math.ceil(math.log(max(n / d, 1.0 + 1e-12)) / math.log1p(accuracy)))


def check_shape(shape: tuple[int, ...]) -> None:
    """The public shape checks of :func:`cvxdp.geometry.john.exact.check_matrix` (numpy and Dask
    arrays alike)."""
    if len(shape) != 2 or shape[0] < 1 or shape[1] < 1:
        raise UnsupportedProblemError(
            f"A must be a 2-D array (n rows, d columns); got shape {shape}.")
    n, d = shape
    if n < d:
        raise UnsupportedProblemError(
            f"A has n={n} rows and d={d} columns; the polytope {{x : |A x| <= 1}} is bounded "
            "only with n >= d rows of full column rank.")


def clip_into_domain(A: np.ndarray, row_bound: float) -> tuple[np.ndarray, int]:
    """:func:`cvxdp.geometry.john.john_private.public_domain` of a numpy ``A`` (also each block
    of a Dask one): a row with a NaN or inf entry becomes the zero row, a row longer than
    ``row_bound`` is scaled to that norm; returns ``(rows, count changed)``, the count PRIVATE."""
    finite = np.all(np.isfinite(A), axis=1)
    clipped, long_rows = clip_rows_l2(np.where(finite[:, None], A, 0.0), row_bound)
    return clipped, long_rows + int(np.count_nonzero(~finite))


def sym_noise(gen: np.random.Generator, d: int, sigma: float) -> np.ndarray:
    """Symmetric Gaussian ``Z = (G + G')/2``, ``G`` with iid ``N(0, sigma^2)`` entries: diagonal
    variance ``sigma^2``, off-diagonal ``sigma^2/2`` (``N(0, sigma^2)`` on each coordinate of
    svec, an isometry for the Frobenius norm)."""
    G = gen.standard_normal((d, d)) * sigma
    return (G + G.T) / 2


def project_psd(Q: np.ndarray, R: float, shift: float = 0.0) -> np.ndarray:
    """``Q + shift I`` with its eigenvalues floored at ``max(1e-9 R^2, 1e-12)``
    (post-processing)."""
    lam, V = np.linalg.eigh((Q + Q.T) / 2)
    return (V * np.maximum(lam + shift, max(1e-9 * R * R, 1e-12))) @ V.T
