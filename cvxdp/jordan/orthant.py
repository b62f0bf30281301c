"""The orthant algebra R^k (componentwise product): the cone of linear programs."""

from __future__ import annotations

from typing import Any

import numpy as np

from cvxdp.jordan.base import EuclideanJordanAlgebra

__all__ = ["Orthant"]


class Orthant(EuclideanJordanAlgebra):
    """``R^k`` with the componentwise product; the cone of squares is the nonnegative orthant.

    Rank ``k``, dimension ``k``, identity ``(1, ..., 1)``, trace form ``x . y`` (so ``phi`` is
    the identity).  The eigenvalues are the coordinates themselves, in order, and the Jordan frame
    is the standard basis (unique, which is why eigenvalue-only noise is private *only* here).

    Parameters
    ----------
    k : int
        Number of coordinates (>= 1).

    References
    ----------
    Song, Xue & Zhang (2025), Section 3.2 (the orthant as the EJA of LP).
    """

    def __init__(self, k: int) -> None:
        k = int(k)
        if k < 1:
            raise ValueError(f"Orthant(k) needs k >= 1, got {k}.")
        self.k = k
        self.dim = k
        self.rank = k
        self.gram = np.ones(k)

    def __repr__(self) -> str:
        return f"Orthant({self.k})"

    def identity(self) -> np.ndarray:
        return np.ones(self.k)

    def product(self, x: Any, y: Any) -> np.ndarray:
        return self._as_element(x) * self._as_element(y, "y")

    def _eig(self, x: np.ndarray) -> tuple[np.ndarray, Any]:
        return x.copy(), x.shape[:-1]

    def _recompose(self, vals: np.ndarray, aux: Any) -> np.ndarray:
        return vals

    def _frame(self, aux: Any) -> np.ndarray:
        return np.broadcast_to(np.eye(self.k), (*aux, self.k, self.k)).copy()
