"""John ellipsoid, exact and NOT private: the conic reference and the fast iterations.

:class:`ExactJohnEllipsoid` is the SOC + PSD model of ``P = {x : -1 <= A x <= 1}`` (see
:mod:`cvxdp.geometry.john.john`) with ``solve()`` (exact) and ``solve(method="fixed-point" |
"sketched")``; :func:`check_matrix` / :func:`check_exact` validate ``A``.

References
----------
Gu, Li, Liang, Shi, Song, Yu, "Fast John Ellipsoid Computation with Differential Privacy
Optimization", Gu et al. (2024) (Def 3.2, Lemma 3.3, Lemma 3.5,
Algorithm 1).
"""

from __future__ import annotations

import time
import warnings
from typing import Any

import cvxpy as cp
import numpy as np

from cvxdp.dask_backend import is_dask
from cvxdp.dask_backend.john import check_exact as dask_check_exact
from cvxdp.dask_backend.john import dask_matrix
from cvxdp.errors import UnsupportedProblemError
from cvxdp.geometry.john.core import check_shape
from cvxdp.geometry.john.ellipsoid import Ellipsoid, ellipsoid_from_weights
from cvxdp.geometry.john.john_iter import (
    fixed_point_weights,
    leverage_ratios,
    sketched_weights,
)
from cvxdp.privacy.rng import as_generator
from cvxdp.structured import StructuredProblem

__all__ = ["ExactJohnEllipsoid", "check_matrix", "check_exact"]


def check_matrix(A: Any) -> np.ndarray:
    """Validate the constraint matrix's shape (public): 2-D with ``n >= d >= 1``.

    Nothing about the values is checked here: the same problem object feeds the private path,
    where a refusal decided by the data would leak (rows out of the domain are clipped there).
    The exact (non-private) methods check the values with :func:`check_exact`.  A Dask array
    stays a lazy Dask array split by rows (:func:`cvxdp.dask_backend.john.dask_matrix`).
    """
    if is_dask(A):
        return dask_matrix(A)
    A = np.asarray(A, dtype=float)
    check_shape(A.shape)
    return A


def check_exact(A: np.ndarray) -> None:
    """Refuse, for the exact (NOT private) methods, values with no John ellipsoid.

    Raises
    ------
    UnsupportedProblemError
        A has a NaN/inf entry, or rank < d (the polytope is unbounded).
    """
    if is_dask(A):  # chunk-wise: a count and the d x d Gram matrix's rank
        return dask_check_exact(A)
    if not np.all(np.isfinite(A)):
        raise UnsupportedProblemError("A contains NaN or inf; clean the data first.")
    if np.linalg.matrix_rank(A) < A.shape[1]:
        raise UnsupportedProblemError(
            f"A must have full column rank d={A.shape[1]}, otherwise the polytope "
            "{x : |A x| <= 1} is unbounded and has no John ellipsoid; drop redundant columns.")


class ExactJohnEllipsoid(StructuredProblem):
    """The John ellipsoid's conic model with its exact and fast (NOT private) solves.

    :class:`~cvxdp.geometry.john.john.JohnEllipsoidProblem` (what ``john_ellipsoid`` builds) adds
    ``solve_private``; the private path's validation (:func:`cvxdp.geometry.john.release.validate`)
    solves this class, so it needs nothing of the private algorithms.
    """

    _answer_attributes = ("ellipsoid",)  # forgotten before a private solve (no exact leftover)

    def __init__(self, A: np.ndarray) -> None:
        A = check_matrix(A)
        n, d = A.shape
        self.data = A
        self.X = cp.Variable((d, d), symmetric=True, name="X")
        Z = cp.Variable((d, d), name="Z")
        # det(X)^{1/d} = geo_mean(diag Z) at the optimum of this PSD model (Ben-Tal & Nemirovski,
        # Lectures on Modern Convex Optimization, Sec. 4.2): symmetric cones only.
        cons = [
            cp.bmat([[self.X, Z], [Z.T, cp.diag(cp.diag(Z))]]) >> 0,
            cp.multiply(np.triu(np.ones((d, d)), 1), Z) == 0,  # Z lower triangular
        ]
        if not is_dask(A):  # on Dask only the chunk-wise methods run (no conic model of A)
            self._support = cp.norm(A @ self.X, 2, axis=1) <= 1
            cons.append(self._support)
        super().__init__(cp.Maximize(cp.geo_mean(cp.diag(Z))), cons)
        self.ellipsoid: Ellipsoid | None = None

    # -- exact reference -------------------------------------------------------------------------
    def solve(self, *args: Any, method: str | None = None, **kwargs: Any) -> Any:
        """Exact conic solve (default) or ``method="fixed-point" | "sketched"`` (NOT private).

        Raises
        ------
        UnsupportedProblemError
            A has a non-finite entry or is not of full column rank (:func:`check_exact`).
        """
        if method is None and is_dask(self.data):
            raise UnsupportedProblemError(
                "the exact conic John ellipsoid needs A in memory; on a Dask array run "
                "solve(method='fixed-point') or solve_private (chunk-wise, nothing of the data "
                "is gathered), or call .compute() yourself if it fits.")
        check_exact(self.data)
        if method is not None and method in self._methods:
            self._methods[method](self, *args, **kwargs)
        else:
            with warnings.catch_warnings():  # geo_mean's exact SOC tower is intended
                warnings.filterwarnings("ignore", message="geo_mean is being approximated")
                super().solve(*args, method=method, **kwargs)
            if self.X.value is None:  # CVXPY's status says why (no ellipsoid)
                return self.value
            self.ellipsoid = self._from_conic()
        # the value is the ellipsoid's log volume on every path (the conic objective is
        # det(X)^{1/d}, a monotone function of it), as solve_private reports it
        self._value = self.ellipsoid.log_volume
        return self._value

    def _from_conic(self) -> Ellipsoid:
        A = self.data
        n, d = A.shape
        Xv = (self.X.value + self.X.value.T) / 2
        lam, V = np.linalg.eigh(Xv)
        lam = np.maximum(lam, 1e-300)
        Q = (V / lam**2) @ V.T
        # Dual of ||X a_i|| <= 1 under geo_mean: w_i = d * mu_i / det(X)^{1/d} (KKT, Lemma 3.3).
        mu = np.maximum(np.asarray(self._support.dual_value, dtype=float).ravel(), 0.0)
        g = float(np.exp(np.mean(np.log(lam))))
        w = d * mu / g
        if w.sum() > 0:
            w = w * d / w.sum()
        return Ellipsoid.from_matrix(Q, weights=w)

    # -- fast non-private methods ----------------------------------------------------------------
    def _solve_fixed_point(self, accuracy: float = 0.01, iterations: int | None = None) -> float:
        """Averaged fixed-point iteration; ``max h_i(u) <= 1 + accuracy`` (Lemma 7.1)."""
        t0 = time.perf_counter()
        u, T = fixed_point_weights(self.data, accuracy, iterations)
        self.ellipsoid = ellipsoid_from_weights(self.data, u)
        self._fast_info = {"method": "fixed-point", "iterations": T,
                           "time": time.perf_counter() - t0}
        return self.ellipsoid.log_volume

    def _solve_sketched(self, accuracy: float = 0.1, rng: Any = None, **kw: Any) -> float:
        """Algorithm 1 without noise (sampling + Gaussian sketch), output normalised to sum d."""
        t0 = time.perf_counter()
        v, T, info = sketched_weights(self.data, accuracy, rng=as_generator(rng), **kw)
        self.ellipsoid = ellipsoid_from_weights(self.data, v)
        self._fast_info = {"method": "sketched", "iterations": T,
                           "time": time.perf_counter() - t0, **info}
        return self.ellipsoid.log_volume

    _methods = {"fixed-point": _solve_fixed_point, "sketched": _solve_sketched}

    def leverage_ratios(self, w: np.ndarray) -> np.ndarray:
        """``a_i' (A' W A)^{-1} a_i`` for the problem's rows (not private)."""
        return leverage_ratios(self.data, np.asarray(w, dtype=float))
