"""The spin factor L^k (Jordan algebra of the second-order / Lorentz cone)."""

from __future__ import annotations

from typing import Any

import numpy as np

from cvxdp.jordan.base import EuclideanJordanAlgebra

__all__ = ["SpinFactor", "SPIN_TRACE_FORM"]

#: The trace form of the spin factor in raw ``(t, x)`` coordinates: ``<x, y> = Tr(x o y) =
#: SPIN_TRACE_FORM * x . y``.  This is the single place where cvxdp states the factor 2 (and
#: hence ``phi(x) = sqrt(2) x`` on spin-factor blocks); everything else reads ``gram``.
SPIN_TRACE_FORM = 2.0


class SpinFactor(EuclideanJordanAlgebra):
    """The spin factor ``L^k``: elements ``x = (x0, xbar)`` in ``R x R^{k-1}``.

    Stored raw, exactly as CVXPY/SCS order a second-order-cone row block ``(t, x)`` with
    ``||x|| <= t``.  Jordan product ``x o y = (x . y, x0 ybar + y0 xbar)``, identity ``(1, 0)``,
    rank 2, eigenvalues ``(x0 + |xbar|, x0 - |xbar|)`` (in that order) with Jordan frame
    ``q_pm = (1, +-u) / 2``, ``u = xbar / |xbar|`` (``u = e_1`` when ``xbar = 0``).  Hence
    ``Tr x = 2 x0`` and ``<x, y> = Tr(x o y) = 2 x . y`` (see :data:`SPIN_TRACE_FORM`).

    Parameters
    ----------
    k : int
        Dimension (>= 2): the length of the cone block ``(t, x)``.

    References
    ----------
    Song, Xue & Zhang (2025), Section 3.2 (spin factor) and Appendix A.
    """

    def __init__(self, k: int) -> None:
        k = int(k)
        if k < 2:
            raise ValueError(f"SpinFactor(k) needs k >= 2 (t and at least one x), got {k}.")
        self.k = k
        self.dim = k
        self.rank = 2
        self.gram = np.full(k, SPIN_TRACE_FORM)

    def __repr__(self) -> str:
        return f"SpinFactor({self.k})"

    def identity(self) -> np.ndarray:
        e = np.zeros(self.k)
        e[0] = 1.0
        return e

    def product(self, x: Any, y: Any) -> np.ndarray:
        x, y = np.broadcast_arrays(self._as_element(x), self._as_element(y, "y"))
        out = np.empty(x.shape)
        out[..., 0] = np.sum(x * y, axis=-1)
        out[..., 1:] = x[..., :1] * y[..., 1:] + y[..., :1] * x[..., 1:]
        return out

    def _eig(self, x: np.ndarray) -> tuple[np.ndarray, Any]:
        xb = x[..., 1:]
        nrm = np.sqrt(np.sum(xb * xb, axis=-1))
        zero = nrm == 0
        u = xb / np.where(zero, 1.0, nrm)[..., None]
        u[..., 0] += zero  # xbar = 0: any unit vector is a valid frame; take e_1
        lam = np.stack([x[..., 0] + nrm, x[..., 0] - nrm], axis=-1)
        return lam, u

    def _recompose(self, vals: np.ndarray, u: np.ndarray) -> np.ndarray:
        out = np.empty((*u.shape[:-1], self.k))
        out[..., 0] = 0.5 * (vals[..., 0] + vals[..., 1])
        out[..., 1:] = (0.5 * (vals[..., 0] - vals[..., 1]))[..., None] * u
        return out

    def _frame(self, u: np.ndarray) -> np.ndarray:
        q = np.empty((*u.shape[:-1], 2, self.k))
        q[..., :, 0] = 0.5
        q[..., 0, 1:] = 0.5 * u
        q[..., 1, 1:] = -0.5 * u
        return q
