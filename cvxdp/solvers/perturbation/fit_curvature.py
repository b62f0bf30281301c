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

That bound reads ``M`` only through its Gram matrix ``K = M'M = B'Q^+B`` (in the noise's
scales, ``D K D`` with ``D = diag(sigma)``): its diagonal (the column norms), its trace, an
upper bound on its largest eigenvalue and the rank.  Without public equalities, with ``Q``
positive definite and no more noise entries ``k`` than variables ``n``, they are computed from
a sparse ``L D L'`` factorisation of ``Q`` (SuperLU, a symmetric permutation and diagonal
pivots only; by Sylvester's law of inertia ``Q`` is positive definite when every pivot is) as
``K = B'(Q^{-1} B)``, ``k`` sparse solves in blocks of columns -- a banded ``Q`` (a
Hodrick-Prescott or Whittaker smoother) costs ``O(n k)`` instead of the dense
eigendecomposition's ``O(n^3)``.  The largest eigenvalue is bounded by the smallest of three
valid bounds: the exact one (a dense ``eigvalsh`` when ``k <= 500``, as
:func:`~cvxdp.solvers.perturbation.noise_tails.spectral_bound` does for a small ``M``, rounded
up by ``1e-12`` relative), Gershgorin's (``max_i sum_j |(D K D)_ij|``) and the private terms'
own ``||Lambda^{1/2} J D||_2^2`` (``J`` the terms' noise Jacobians stacked, ``Lambda`` their
weights): ``Q >= Q_priv = X'Lambda X`` with ``B = X'Lambda J`` in ``Q_priv``'s range gives
``B'Q^+B <= B'Q_priv^+B = J'Lambda^{1/2} P Lambda^{1/2}J <= J'Lambda J`` (``P`` a projection).
The pivots' floor ``1e-12 max_i Q_ii`` is the dense path's rank cut (below it the smallest
eigenvalue is below ``1e-12 lambda_max``, and the dense path is taken).

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
from scipy.linalg import LinAlgError, cholesky_banded, get_lapack_funcs, qr
from scipy.sparse.csgraph import reverse_cuthill_mckee
from scipy.sparse.linalg import splu

from cvxdp.blas_threads import one_blas_thread
from cvxdp.solvers.perturbation.fit_detect import FitModel
from cvxdp.solvers.perturbation.noise_tails import (
    RANGE_DENSE_MAX,
    l2_norm_bound,
    noise_norm,
    spectral_bound,
)

__all__ = ["applies", "CURVATURE_MAX", "noise_map", "sparse_gram", "joint_square_gap"]

#: largest number of variable entries for the dense eigendecomposition of ``Q``; the sparse
#: path (module doc) runs while its flop count ``2 k (nnz(L + U) + nnz(B) + k)`` is at most
#: ``CURVATURE_MAX**3``, the order of the dense path's own work at this size
CURVATURE_MAX = 1500


def applies(model: FitModel) -> bool:
    """Every private term a (plain) square with its ``x``-Jacobian, and some public square or
    public linear equality (else the per-term shares are this bound already)."""
    return (bool(model.terms)
            and (model.public_curvature is not None or model.public_equalities is not None)
            and all(t.kind == "square" and t.Jx is not None for t in model.terms))


def _curvature(model: FitModel) -> tuple[sp.csr_matrix, sp.csr_matrix]:
    """``(Q, B)`` of the module doc (public structure only)."""
    n = int(model.terms[0].Jx.shape[1])
    Q = (sp.csr_matrix((n, n)) if model.public_curvature is None
         else sp.csr_matrix(model.public_curvature, dtype=float))
    B = None
    for t in model.terms:
        Q = Q + t.lam * sp.csr_matrix(t.Jx.T @ t.Jx)
        part = t.lam * (t.Jx.T @ t.J)
        B = part if B is None else B + part
    return Q, sp.csr_matrix(B)


def _sparse_plan(model: FitModel) -> tuple | None:
    """How the sparse path computes ``K``'s diagonal (module doc), once per model: ``("band",
    diag K, Q, B)`` from the band of ``Q^{-1}``, ``("lu", factor, Q, B)`` for the blocked solves,
    or None where the sparse path does not apply (public equalities, ``k > n``, ``Q`` not
    certified positive definite, or neither path within its size)."""
    if "curvature_plan" in model.cache:
        return model.cache["curvature_plan"]
    plan = None
    if model.public_equalities is None:
        Q, B = _curvature(model)
        n, k = B.shape
        if k <= n and Q.nnz:
            floor = 1e-12 * float(Q.diagonal().max())
            lu_work = 2.0 * k * (Q.nnz + B.nnz + k)   # at least the blocked solves' flops
            if k > 500:   # (at most 500: the blocked path's exact largest eigenvalue)
                diag = _band_diagonal(Q, B, floor, lu_work)
                if diag is not None:
                    plan = ("band", diag, Q, B)
            if plan is None and n <= CURVATURE_MAX:
                lu = _ldl(Q, floor)
                if lu is not None:
                    plan = ("lu", lu, Q, B)
    model.cache["curvature_plan"] = plan
    return plan


def _ldl(Q: sp.csr_matrix, floor: float):
    """SuperLU's ``L D L'`` of ``Q`` (a symmetric permutation, diagonal pivots), or None unless
    every pivot exceeds ``floor`` (then ``Q`` is positive definite: Sylvester's law of inertia)."""
    try:
        lu = splu(sp.csc_matrix(Q), permc_spec="MMD_AT_PLUS_A", diag_pivot_thresh=0.0,
                  options={"SymmetricMode": True})
    except RuntimeError:  # exactly singular
        return None
    if not (np.array_equal(lu.perm_r, lu.perm_c) and float(lu.U.diagonal().min()) > floor):
        return None
    return lu


def _band_diagonal(Q: sp.csr_matrix, B: sp.csr_matrix, floor: float,
                   lu_work: float) -> np.ndarray | None:
    """``diag(B'Q^{-1}B)`` from the band of ``Q^{-1}`` (Takahashi's recursion on a banded
    Cholesky factor), or None when it does not apply: ``Q`` in its reverse Cuthill-McKee order
    has half-bandwidth ``p`` with every column of ``B`` inside ``p + 1`` consecutive entries (so
    ``b_j'Q^{-1}b_j`` reads ``Q^{-1}`` within the band only), its ``n (p + 1)^2`` flops are below
    the blocked solves' ``lu_work`` and ``CURVATURE_MAX**3``, and the Cholesky factor exists with
    every pivot ``L_ii^2`` above ``floor``."""
    n = Q.shape[0]
    perm = reverse_cuthill_mckee(sp.csr_matrix(Q), symmetric_mode=True)
    Qp = sp.coo_matrix(sp.csr_matrix(Q)[perm][:, perm])
    p = int(np.abs(Qp.row - Qp.col).max(initial=0))
    work = float(n) * (p + 1) ** 2
    if work > min(lu_work, float(CURVATURE_MAX) ** 3):
        return None
    Bp = sp.csc_matrix(sp.csr_matrix(B)[perm])
    Bp.eliminate_zeros()
    filled = np.diff(Bp.indptr) > 0
    if filled.any():
        starts = Bp.indptr[:-1][filled]
        spans = (np.maximum.reduceat(Bp.indices, starts)
                 - np.minimum.reduceat(Bp.indices, starts))
        if int(spans.max()) > p:
            return None
    lower = Qp.row >= Qp.col
    ab = np.zeros((p + 1, n))
    ab[Qp.row[lower] - Qp.col[lower], Qp.col[lower]] = Qp.data[lower]
    try:
        L = cholesky_banded(ab, lower=True)    # L[d, j] = L_{j+d, j}
    except LinAlgError:
        return None
    if float(np.min(L[0] ** 2)) <= floor:
        return None
    for d in range(1, p + 1):
        L[d, n - d:] = 0.0                     # outside the matrix
    # Z = Q^{-1} = L^{-T} L^{-1} satisfies L'Z = L^{-1} (lower triangular, diagonal 1 / L_ii):
    # for j >= i, Z_ij = (delta_ij / L_ii - sum_{i < k <= i + p} L_ki Z_kj) / L_ii, from the
    # last row up; every Z_kj read lies in the band (|k - j| <= p), already computed
    zb = np.zeros((n + p, p + 1))              # zb[i, d] = Z_{i, i+d}; rows past n stay 0
    rows_, cols_ = np.meshgrid(np.arange(p), np.arange(p), indexing="ij")
    lo, off = np.minimum(rows_, cols_), np.abs(rows_ - cols_)
    Lc = np.ascontiguousarray(L.T)             # Lc[j, d] = L_{j+d, j}
    for i in range(n - 1, -1, -1):
        lii, col = Lc[i, 0], Lc[i, 1:]
        z = -(col @ zb[i + 1 + lo, off]) / lii
        zb[i, 1:] = z
        zb[i, 0] = (1.0 / lii - col @ z) / lii
    offsets = list(range(p + 1))
    upper = sp.diags([zb[:n - d, d] for d in offsets], offsets, shape=(n, n))
    Z = sp.csr_matrix(upper + sp.triu(upper, 1).T)
    return np.asarray(Bp.multiply(Z @ Bp).sum(axis=0)).ravel()


def sparse_gram(model: FitModel, sigma: np.ndarray) -> tuple[np.ndarray, float, int] | None:
    """``(col2, spec, rank)`` of ``M diag(sigma)`` (module doc: the squared column norms, an
    upper bound on the spectral norm, the rank's bound) from the sparse factorisation, or None
    where the sparse path does not apply; once per model and noise scale."""
    plan = _sparse_plan(model)
    if plan is None:
        return None
    sigma = np.asarray(sigma, dtype=float)
    key = ("curvature_gram", sigma.tobytes())
    if key in model.cache:
        return model.cache[key]
    kind, found, Q, B = plan
    n, k = B.shape
    bounds = []
    if kind == "band":
        diag = found
    else:
        diag, gersh, top = _blocked_gram(found, B, sigma)
        bounds = [gersh] + ([top] if top is not None else [])
    # the private terms' own ||Lambda^{1/2} J D||_2 (module doc)
    own = spectral_bound(sp.csr_matrix(
        sp.vstack([math.sqrt(t.lam) * sp.csr_matrix(t.J) for t in model.terms]) @ sp.diags(sigma)))
    spec = min([math.sqrt(max(b, 0.0)) for b in bounds] + [own])
    out = (sigma * sigma * np.maximum(diag, 0.0), spec, min(n, k))
    model.cache[key] = out
    return out


def _blocked_gram(lu, B: sp.csr_matrix, sigma: np.ndarray) -> tuple[np.ndarray, float,
                                                                    float | None]:
    """``K = B'Q^{-1}B`` in blocks of columns (``n x step`` at a time, at most
    ``CURVATURE_MAX**2`` entries): its diagonal, Gershgorin's bound on ``lambda_max(D K D)`` and,
    for ``k <= 500``, that eigenvalue (dense ``eigvalsh``, rounded up by ``1e-12`` relative in
    the norm), else None."""
    n, k = B.shape
    Bc, Bt = sp.csc_matrix(B), sp.csr_matrix(B.T)
    diag = np.empty(k)
    rows = np.zeros(k)                                            # sum_j |K_ij| sigma_j
    keep = np.empty((k, k)) if k <= 500 else None
    step = max(1, CURVATURE_MAX * CURVATURE_MAX // max(n, 1))
    top = None
    with one_blas_thread():
        for start in range(0, k, step):
            stop = min(k, start + step)
            Kb = np.asarray(Bt @ lu.solve(Bc[:, start:stop].toarray()))   # K[:, start:stop]
            diag[start:stop] = Kb[np.arange(start, stop), np.arange(stop - start)]
            rows += np.abs(Kb) @ sigma[start:stop]
            if keep is not None:
                keep[:, start:stop] = Kb
        if keep is not None and n * k <= RANGE_DENSE_MAX:
            DKD = sigma[:, None] * ((keep + keep.T) / 2.0) * sigma[None, :]
            top = max(float(np.linalg.eigvalsh(DKD)[-1]), 0.0) * (1.0 + 1e-12) ** 2
    return diag, float(np.max(sigma * rows)), top


def noise_map(model: FitModel) -> sp.csr_matrix | None:
    """``M = Q^{+1/2} B`` (module doc), computed once per model (public structure only);
    None when ``Q`` is too large to factor densely."""
    if "curvature_map" in model.cache:
        return model.cache["curvature_map"]
    n = int(model.terms[0].Jx.shape[1])
    M = None
    if n <= CURVATURE_MAX:
        Q, B = _curvature(model)
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
    gram = sparse_gram(model, sigma)
    if gram is not None:
        col2, spec, rank = gram
        V = l2_norm_bound(col2, spec, rank, beta, noise)
    else:
        M = noise_map(model)
        if M is None:
            return math.inf
        V = noise_norm(M, sigma, beta, "l2", noise)  # its dense SVD runs on one BLAS thread
    G = V * V
    return delta + G + 2.0 * math.sqrt(G * max(delta, 0.0))
