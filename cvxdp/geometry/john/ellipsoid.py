"""The John ellipsoid's answer type: :class:`Ellipsoid` (and :func:`ellipsoid_from_weights`).

Shared by the exact problem (:mod:`cvxdp.geometry.john.exact`), the private algorithms
(:mod:`cvxdp.geometry.john.john_private`, :mod:`cvxdp.geometry.john.john_paper`) and their
release (:mod:`cvxdp.geometry.john.release`).

References
----------
Gu, Li, Liang, Shi, Song, Yu, "Fast John Ellipsoid Computation with Differential Privacy
Optimization", Gu et al. (2024) (Lemma 3.5).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import special

from cvxdp.dask_backend import is_dask
from cvxdp.dask_backend.john import support_ratios
from cvxdp.errors import UnsupportedProblemError
from cvxdp.geometry.john.john_iter import gram

__all__ = ["Ellipsoid", "ellipsoid_from_weights"]


def _log_unit_ball(d: int) -> float:
    return 0.5 * d * math.log(math.pi) - special.gammaln(d / 2 + 1)


@dataclass(frozen=True)
class Ellipsoid:
    """The ellipsoid ``{x : (x - center)' Q (x - center) <= 1}``.

    Attributes
    ----------
    matrix : ndarray (d, d)
        Q, symmetric positive definite.
    weights : ndarray (n,) or None
        John weights w with ``Q = A' diag(w) A`` (None when Q was released without them).  For a
        private answer they are the released weights v and ``Q = A' V A + noise`` (projected PD).
    center : ndarray (d,)
        Zero for the symmetric polytope ``-1 <= A x <= 1``.
    log_volume : float
        ``log vol(unit ball) - 0.5 log det Q``.
    """

    matrix: np.ndarray
    weights: np.ndarray | None
    center: np.ndarray
    log_volume: float

    @classmethod
    def from_matrix(cls, Q: np.ndarray, weights: np.ndarray | None = None) -> Ellipsoid:
        Q = (np.asarray(Q, dtype=float) + np.asarray(Q, dtype=float).T) / 2
        sign, logdet = np.linalg.slogdet(Q)
        if sign <= 0:
            raise UnsupportedProblemError("the ellipsoid matrix Q is not positive definite.")
        d = Q.shape[0]
        return cls(Q, weights, np.zeros(d), _log_unit_ball(d) - 0.5 * logdet)

    @property
    def dim(self) -> int:
        return self.matrix.shape[0]

    def scaled(self, factor: float) -> Ellipsoid:
        """The ellipsoid ``center + factor (E - center)`` (volume times ``factor**d``)."""
        w = None if self.weights is None else self.weights / factor**2
        return Ellipsoid(self.matrix / factor**2, w, self.center,
                         self.log_volume + self.dim * math.log(factor))

    def contains(self, points: np.ndarray, *, tol: float = 1e-9) -> np.ndarray:
        """Boolean mask of the rows of ``points`` inside the ellipsoid."""
        p = np.atleast_2d(np.asarray(points, dtype=float)) - self.center
        return np.einsum("ij,jk,ik->i", p, self.matrix, p) <= 1 + tol

    def support_ratios(self, A: np.ndarray) -> np.ndarray:
        """``a_i' Q^{-1} a_i`` for every row: E is inside ``|a_i' x| <= 1`` iff it is <= 1.

        For a Dask ``A``: a lazy Dask array computed on the workers (its ``max`` is a reduce)."""
        if is_dask(A):
            return support_ratios(self.matrix, A)
        Y = np.linalg.solve(self.matrix, np.asarray(A, dtype=float).T)
        return np.einsum("ij,ji->i", np.asarray(A, dtype=float), Y)

    def inscribed_in(self, A: np.ndarray, *, tol: float = 1e-6) -> bool:
        """True when E lies in ``{x : -1 <= A x <= 1}`` (up to ``tol``)."""
        return bool(float(np.max(self.support_ratios(A))) <= 1 + tol)

    def volume_ratio(self, other: Ellipsoid) -> float:
        """Per-dimension volume ratio ``(vol(self) / vol(other))^{1/d}``."""
        return math.exp((self.log_volume - other.log_volume) / self.dim)


def ellipsoid_from_weights(A: np.ndarray, w: np.ndarray) -> Ellipsoid:
    """``E = {x : x' A' W A x <= 1}`` (Lemma 3.5 of Gu et al. (2024))."""
    return Ellipsoid.from_matrix(gram(A, w), weights=np.asarray(w, dtype=float))
