"""Square fit terms certified with the whole objective's curvature (the public squares too).

The square share of :mod:`cvxdp.solvers.perturbation.fit_term` is ``lam ||P J e||^2`` per term:
it uses only the term's own curvature ``lam ||J_x d||^2``, so on a smoother (``sum_squares(y -
x) + mu sum_squares(D x)``, a Kalman smoother, ridge regression, Tikhonov regularisation) it
charges the noise in every direction of the range of ``J_x`` -- all ``n`` of them -- while the
public regulariser damps most of them.

With every private term a square ``lam_k ||a_k(x, y)||^2`` (``a_k`` affine, ``J_k = da_k/dy``,
``X_k = da_k/dx``) and the objective's public squares ``mu_p ||b_p(x)||^2`` (``Y_p = db_p/dx``),
the noisy objective ``h`` satisfies ``h(x) >= h(x_e) + d'Q d`` for ``d = x - x_e`` (``x_e`` its
exact minimiser; every other term convex), with ``Q = sum_k lam_k X_k'X_k + sum_p mu_p
Y_p'Y_p``.  The true objective differs from ``h`` by ``-2 g'x + const`` with ``g = sum_k lam_k
X_k' J_k e``, so for the released ``x^`` with ``delta = h(x^) - h(x_e)``::

    f(x^) - OPT <= delta + max_d [2 g'd - d'Q d] + 2 g'(x_e - x^)
                <= delta + G + 2 sqrt(G delta),     G = g'Q^+ g

(``(x^ - x_e)'Q(x^ - x_e) <= delta``; ``g`` lies in the range of ``Q``).  Public linear
equalities ``E x = e`` confine ``d`` to the null space of ``E`` (basis ``N``): there ``Q`` and
``g`` become ``N'Q N`` and ``N'g`` (a Kalman smoother's dynamics tie the states to the damped
process noise).  ``G = ||M e||^2``
with ``M = Q^{+1/2} B``, ``B = sum_k lam_k X_k' J_k``: its bound on an event of probability
``1 - beta`` is :func:`~cvxdp.solvers.perturbation.noise_tails.noise_norm`'s (the chi-square
quantile of the rank of ``M`` for the Gaussian).  Where the regulariser damps a direction, ``Q``
is large there and the noise in it costs little: the bound follows the smoother's effective
degrees of freedom instead of ``n``.

References
----------
Strong convexity and the quadratic upper bound (Boyd & Vandenberghe 2004, "Convex
Optimization", Sec. 9.1.2); the effective degrees of freedom of a linear smoother (Hastie,
Tibshirani & Friedman 2009, "The Elements of Statistical Learning", Sec. 5.4.1).
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp
from scipy.linalg import get_lapack_funcs, qr

from cvxdp.blas_threads import one_blas_thread
from cvxdp.solvers.perturbation.fit_detect import FitModel
from cvxdp.solvers.perturbation.noise_tails import noise_norm

__all__ = ["applies", "CURVATURE_MAX", "noise_map", "joint_square_gap"]

#: largest number of variable entries for the dense eigendecomposition of ``Q``
CURVATURE_MAX = 1500


def applies(model: FitModel) -> bool:
    """Every private term a (plain) square with its ``x``-Jacobian, and some public square or
    public linear equality (else the per-term shares are this bound already)."""
    return (bool(model.terms)
            and (model.public_curvature is not None or model.public_equalities is not None)
            and all(t.kind == "square" and t.Jx is not None for t in model.terms))


def noise_map(model: FitModel) -> sp.csr_matrix | None:
    """``M = Q^{+1/2} B`` (module doc), computed once per model (public structure only);
    None when ``Q`` is too large to factor densely."""
    if "curvature_map" in model.cache:
        return model.cache["curvature_map"]
    n = int(model.terms[0].Jx.shape[1])
    M = None
    if n <= CURVATURE_MAX:
        Q = (sp.csr_matrix((n, n)) if model.public_curvature is None
             else sp.csr_matrix(model.public_curvature, dtype=float))
        B = None
        for t in model.terms:
            Q = Q + t.lam * sp.csr_matrix(t.Jx.T @ t.Jx)
            part = t.lam * (t.Jx.T @ t.J)
            B = part if B is None else B + part
        B = sp.csr_matrix(B)
        with one_blas_thread():
            if model.public_equalities is not None:
                # d = x - x_e moves in the null space of the public equalities' rows; the
                # sparse factors multiply the basis (n x (n - rank)) before anything dense
                N = _null_space(np.asarray(model.public_equalities.todense(), dtype=float))
                Q = N.T @ np.asarray(Q @ N)
                B = np.asarray((B.T @ N).T)
            else:
                Q, B = Q.toarray(), B.toarray()
            w, U = np.linalg.eigh((Q + Q.T) / 2.0)
            keep = w > 1e-12 * max(float(w.max(initial=0.0)), 1e-300)
            half = U[:, keep] / np.sqrt(w[keep])  # Q^{+1/2} on its range, as U L^-1/2
            M = sp.csr_matrix(half.T @ B)
    model.cache["curvature_map"] = M
    return M


def _null_space(E: np.ndarray) -> np.ndarray:
    """An orthonormal basis of ``{d : E d = 0}`` from a column-pivoted QR of ``E'`` (rank
    where ``|R_ii|`` falls below ``1e-10 |R_00|``; a smaller rank only enlarges the space, so
    the bound stays valid): the trailing ``n - rank`` columns of its ``Q``, as the Householder
    reflectors applied to ``[0; I]`` (LAPACK ``ormqr``) -- the full ``n x n`` ``Q`` is not
    formed."""
    n = E.shape[1]
    if E.shape[0] == 0:
        return np.eye(n)
    (reflectors, tau), R, _ = qr(E.T, mode="raw", pivoting=True)
    diag = np.abs(np.diag(R))
    rank = int(np.sum(diag > 1e-10 * diag[0])) if diag.size and diag[0] > 0 else 0
    tail = np.zeros((n, n - rank))
    tail[rank:, :] = np.eye(n - rank)
    if tau.size == 0 or n == rank:
        return tail
    # the reflectors are the first min(n, rows) columns (more rows than variables: E' is wide)
    reflectors = reflectors[:, :tau.size]
    ormqr = get_lapack_funcs("ormqr", (reflectors,))
    lwork = max(int(ormqr("L", "N", reflectors, tau, tail, -1)[1][0].real), 1)
    basis, _, info = ormqr("L", "N", reflectors, tau, tail, lwork)
    if info != 0:  # pragma: no cover - LAPACK argument errors
        raise ValueError(f"ormqr failed (info={info}) forming the null space basis")
    return basis


def joint_square_gap(model: FitModel, delta: float, sigma: np.ndarray, beta: float,
                     noise: str) -> float:
    """``delta + G + 2 sqrt(G delta)`` with ``G`` bounded on an event of probability ``1 -
    beta`` (module doc); ``inf`` when the map is not formed."""
    M = noise_map(model)
    if M is None:
        return math.inf
    V = noise_norm(M, sigma, beta, "l2", noise)  # its dense SVD runs on one BLAS thread
    G = V * V
    return delta + G + 2.0 * math.sqrt(G * max(delta, 0.0))
