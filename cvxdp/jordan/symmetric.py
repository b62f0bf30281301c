"""Real symmetric matrices S^r (Jordan algebra of the PSD cone) in SCS's scaled svec."""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any

import numpy as np

from cvxdp.jordan.base import EuclideanJordanAlgebra

__all__ = ["SymmetricMatrices", "svec_indices"]

SQRT2 = math.sqrt(2.0)


@lru_cache(maxsize=64)
def svec_indices(r: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(rows, cols, scale)`` of each svec coordinate in SCS order.

    SCS stacks the lower triangle column by column: ``(0,0), (1,0), ..., (r-1,0), (1,1), ...``,
    with off-diagonal entries multiplied by ``sqrt(2)`` (``scale``).  This map is an isometry
    from (S^r, Frobenius) to R^{r(r+1)/2} -- the paper's phi (Song, Xue & Zhang
    2025, Section 4, with our correction: the unscaled upper triangle is *not* an isometry).
    """
    iu, ju = np.triu_indices(r)
    rows, cols = ju, iu  # the upper triangle row by row = the lower triangle column by column
    scale = np.where(rows == cols, 1.0, SQRT2)
    for a in (rows, cols, scale):
        a.setflags(write=False)
    return rows, cols, scale


class SymmetricMatrices(EuclideanJordanAlgebra):
    """``S^r``: real symmetric ``r x r`` matrices with ``X o Y = (XY + YX) / 2``.

    Stored as SCS's scaled svec (see :func:`svec_indices`), which *is* the isometry phi, so
    ``gram = 1``.  Rank ``r``, dimension ``r (r + 1) / 2``, identity ``svec(I)``, trace the
    matrix trace, ``<X, Y> = Tr(XY)``.  Eigenvalues come in ascending order (``numpy.linalg.eigh``)
    and the Jordan frame is ``{svec(u_i u_i^T)}``.  Norms ``ord`` = 1, 2, inf are the nuclear,
    Frobenius and spectral norms.

    Parameters
    ----------
    r : int
        Matrix order (>= 1).

    References
    ----------
    Song, Xue & Zhang (2025), Section 3.2 and Section 4 (svec as the isometry of S^r).
    """

    def __init__(self, r: int) -> None:
        r = int(r)
        if r < 1:
            raise ValueError(f"SymmetricMatrices(r) needs r >= 1, got {r}.")
        self.r = r
        self.dim = r * (r + 1) // 2
        self.rank = r
        self.gram = np.ones(self.dim)

    def __repr__(self) -> str:
        return f"SymmetricMatrices({self.r})"

    # ---- svec <-> matrix ------------------------------------------------------------------
    def to_matrix(self, x: Any) -> np.ndarray:
        """svec ``(..., dim)`` -> symmetric matrices ``(..., r, r)``."""
        x = self._as_element(x)
        rows, cols, scale = svec_indices(self.r)
        v = x / scale
        M = np.empty((*x.shape[:-1], self.r, self.r))
        M[..., rows, cols] = v
        M[..., cols, rows] = v
        return M

    def from_matrix(self, M: Any, *, check: bool = True) -> np.ndarray:
        """Symmetric matrices ``(..., r, r)`` -> svec ``(..., dim)``.

        Raises ``ValueError`` if ``M`` is not ``r x r`` or (with ``check``) not symmetric to
        1e-10 relative; only the lower triangle is read.
        """
        M = np.asarray(M, dtype=float)
        if M.ndim < 2 or M.shape[-2:] != (self.r, self.r):
            raise ValueError(f"from_matrix needs shape (..., {self.r}, {self.r}), got {M.shape}.")
        if check:
            asym = np.max(np.abs(M - np.swapaxes(M, -1, -2)), initial=0.0)
            if asym > 1e-10 * max(1.0, float(np.max(np.abs(M), initial=0.0))):
                raise ValueError(f"from_matrix needs a symmetric matrix (asymmetry {asym:.3g}).")
        rows, cols, scale = svec_indices(self.r)
        return M[..., rows, cols] * scale

    # ---- algebra --------------------------------------------------------------------------
    def identity(self) -> np.ndarray:
        rows, cols, _ = svec_indices(self.r)
        return (rows == cols).astype(float)

    def product(self, x: Any, y: Any) -> np.ndarray:
        X, Y = self.to_matrix(x), self.to_matrix(y)
        XY = X @ Y
        return self.from_matrix(0.5 * (XY + np.swapaxes(XY, -1, -2)), check=False)

    def _eig(self, x: np.ndarray) -> tuple[np.ndarray, Any]:
        return np.linalg.eigh(self.to_matrix(x))

    def _recompose(self, vals: np.ndarray, U: np.ndarray) -> np.ndarray:
        # U diag(vals) U^T, read off its lower triangle only (one matmul, no symmetrisation)
        M = (U * vals[..., None, :]) @ np.swapaxes(U, -1, -2)
        return self.from_matrix(M, check=False)

    def _frame(self, U: np.ndarray) -> np.ndarray:
        rows, cols, scale = svec_indices(self.r)
        # q_i = u_i u_i^T: entry (a, b) of q_i is U[a, i] U[b, i]; built row-major in (r, dim)
        Ut = np.swapaxes(U, -1, -2)
        return (Ut[..., rows] * scale) * Ut[..., cols]

    def eigh(self, x: Any) -> tuple[np.ndarray, np.ndarray]:
        """``(lam, U)``: ascending eigenvalues and orthonormal eigenvectors (columns of ``U``)
        of ``to_matrix(x)``.  The compact form of the Jordan frame ``q_i = u_i u_i^T``
        (``O(r^2)`` memory instead of the ``O(r^3)`` of :meth:`spectral_decomposition`)."""
        return np.linalg.eigh(self.to_matrix(x))

    def trace(self, x: Any) -> np.ndarray | float:
        x = self._as_element(x)
        rows, cols, _ = svec_indices(self.r)
        t = x[..., rows == cols].sum(axis=-1)
        return float(t) if np.ndim(t) == 0 else t
