"""Tail bounds on norms of linear images ``J e`` of the mechanism's noise ``e``.

The certificates of perturbation's fit terms (:mod:`cvxdp.solvers.perturbation.fit_term`) and of
elementwise private constraints (:mod:`cvxdp.solvers.perturbation.constraint_fit`) need ``V``
with ``N(J e) <= V`` on an event of probability ``>= 1 - beta``, for the l1, l2 and single-row
norms and for weighted sums of them.  Every bound here is computed from public values (``J``,
the noise scales, ``beta``), so the event it names is the one that holds.

References
----------
Gaussian concentration (Boucheron, Lugosi & Massart 2013, "Concentration Inequalities",
Thm 5.6), Chernoff's bound (ibid., Sec. 2.2), the chi-square quantile of a projected Gaussian
vector, Hoelder's inequality for the spectral norm.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp
from scipy.special import chdtri, chndtr, chndtrinc, ndtri

from cvxdp.blas_threads import one_blas_thread
from cvxdp.solvers.perturbation.noise import gaussian_norm_bound

__all__ = ["RANGE_DENSE_MAX", "noise_norm", "l2_norm_bound", "norm_sum_bound", "spectral_bound",
           "exp_sum_bound", "noncentral_lower"]

#: largest dense size (rows x columns) for the range projection and exact spectral norms
RANGE_DENSE_MAX = 4_000_000


def noise_norm(J: sp.csr_matrix, sigma: np.ndarray, beta: float, norm: str,
               noise: str = "gaussian") -> float:
    """``V`` with ``N(J e) <= V`` with probability ``>= 1 - beta``; ``N`` is ``"l2"``,
    ``"l1"`` or ``"abs"`` (a single row, two-sided); ``e_j = sigma_j g_j``.

    Gaussian ``g``: with ``M = J diag(sigma)``, ``N(M g) <= E N(M g) + Lip sqrt(2 ln(1/beta))``
    (Gaussian concentration): l2 ``E <= ||M||_F``, ``Lip = ||M||_2``, or ``||M||_2`` times the
    chi-square quantile of ``||P g||`` (``P`` the projection on ``M``'s row space), the
    smaller; l1 ``E = sqrt(2/pi)
    sum_i ||M_i||`` (rows), ``Lip <= sqrt(rows) ||M||_2``; a single row ``|m'g| <= ||m||
    sqrt(2 ln(2/beta))``.  Laplace ``g``: ``N(J e) <= sum_j w_j |g_j|`` (triangle inequality,
    ``w_j = sigma_j N(J_j)``), a weighted sum of independent Exp(1) variables
    (:func:`exp_sum_bound`), or the Gaussian bound given the scale mixture's variances
    (commented in the code), whichever is smaller (chosen from public values: its own event
    holds).
    """
    sigma = np.asarray(sigma, dtype=float)
    M = sp.csr_matrix(J @ sp.diags(sigma))
    if M.shape[0] == 0 or M.nnz == 0:
        return 0.0
    spec = spectral_bound(M)
    if norm == "l2":
        return l2_norm_bound(np.asarray(M.multiply(M).sum(axis=0)).ravel(), spec, min(M.shape),
                             beta, noise)
    if noise == "laplace":
        if norm == "l1":
            w = np.asarray(abs(M).sum(axis=0)).ravel()
        else:
            w = np.sqrt(np.asarray(M.multiply(M).sum(axis=0)).ravel())
        best = exp_sum_bound(w, beta)
        K = int(sigma.size)
        rows = M.shape[0] if norm == "l1" else 1
        # the Laplace as a Gaussian scale mixture, g_j = sqrt(2 W_j) Z_j with W_j ~ Exp(1):
        # given W, M g is Gaussian with E N <= sqrt(2/pi)^[l1] sqrt(rows sum_j 2 W_j ||M_j||^2)
        # (Cauchy-Schwarz over rows for l1) and Lipschitz constant <= sqrt(rows)^[l1] ||M||_2
        # sqrt(2 max W); three events of beta/3: the Exp(1) sum (Chernoff), max W <= ln(3K/beta)
        # (union bound), the conditional Gaussian tail
        c = np.asarray(M.multiply(M).sum(axis=0)).ravel()
        mean = math.sqrt(rows * 2.0 * exp_sum_bound(c, beta / 3.0))
        if norm == "l1":
            mean *= math.sqrt(2.0 / math.pi)
        lip = math.sqrt(rows) * spec * math.sqrt(2.0 * math.log(3.0 * K / beta))
        best = min(best, mean + lip * math.sqrt(2.0 * math.log(3.0 / beta)))
        return float(best)
    if norm == "abs":
        return spec * math.sqrt(2.0 * math.log(2.0 / beta))
    tail = math.sqrt(2.0 * math.log(1.0 / beta))
    rows = np.sqrt(np.asarray(M.multiply(M).sum(axis=1)).ravel())
    return float(math.sqrt(2.0 / math.pi) * rows.sum() + math.sqrt(M.shape[0]) * spec * tail)


def l2_norm_bound(col2: np.ndarray, spec: float, rank: int, beta: float, noise: str) -> float:
    """:func:`noise_norm`'s l2 bound (``||M g|| <= V`` with probability ``>= 1 - beta``, ``M =
    J diag(sigma)``) from what it reads of ``M``: its squared column norms ``col2`` (their sum
    the squared Frobenius norm), an upper bound ``spec`` on ``||M||_2`` and an upper bound
    ``rank`` on its rank.  These are the Gram matrix ``M'M``'s diagonal, trace and
    largest eigenvalue, the same for every ``U M`` with orthonormal columns ``U``, so a caller
    may pass them from any factor of ``M'M`` (:mod:`cvxdp.solvers.perturbation.fit_curvature`
    does, from a sparse factorisation)."""
    frob2 = float(np.sum(col2))
    if frob2 <= 0.0:
        return 0.0
    if noise == "laplace":
        # the triangle inequality with w_j = ||M_j|| (noise_norm's doc), or the scale mixture's
        # conditional Gaussian: E ||M g|| <= sqrt(sum_j 2 W_j ||M_j||^2), Lipschitz ||M||_2
        # sqrt(2 max W); three events of beta/3 as in noise_norm
        best = exp_sum_bound(np.sqrt(col2), beta)
        mean = math.sqrt(2.0 * exp_sum_bound(col2, beta / 3.0))
        lip = spec * math.sqrt(2.0 * math.log(3.0 * int(col2.size) / beta))
        return float(min(best, mean + lip * math.sqrt(2.0 * math.log(3.0 / beta))))
    tail = math.sqrt(2.0 * math.log(1.0 / beta))
    # ||M g||^2 <= ||M||_2^2 ||P g||^2 with P the projection on M's row space, of rank at most
    # r = min(shape): chi-square with <= r degrees of freedom (its exact quantile)
    return min(math.sqrt(frob2) + spec * tail,
               spec * float(gaussian_norm_bound(rank, math.log(1.0 / beta))))


#: above this noncentrality the exact quantile is replaced by the union bound below (SciPy's
#: ``chndtr`` / ``chndtrinc`` lose accuracy near 1e10; at 1e8 they agree with ``ncx2.ppf`` to 1e-12)
NONCENTRAL_EXACT_MAX = 1e8


def noncentral_lower(x: float, k: int, beta: float) -> float:
    """A lower bound on the noncentrality ``lam`` of ``X = ||sqrt(lam) u + g||^2`` (``u`` a unit
    vector, ``g`` standard normal in ``R^k``: noncentral chi-square) from one draw ``x`` of
    ``X``, valid with probability ``>= 1 - beta``: on the event ``X <= q(lam)`` (``q(lam)`` any
    upper bound on the ``1 - beta`` quantile, here nondecreasing in ``lam``), ``lam >= inf {l :
    q(l) >= x}``.

    ``q`` is the exact quantile (noncentral chi-square, stochastically increasing in ``lam``:
    SciPy's ``chndtr`` / ``chndtrinc``) up to ``NONCENTRAL_EXACT_MAX``, and above it the union
    bound ``lam + 2 sqrt(lam) z + c`` (``X = lam + 2 sqrt(lam) u'g + ||g||^2``, ``P(u'g > z) =
    P(||g||^2 > c) = beta / 2``), which is larger than the exact quantile, so ``q`` stays
    nondecreasing across the switch.  The exact root is checked against ``chndtr`` and moved
    down until ``q(l) >= x`` is confirmed, so an inaccurate inversion only loosens the bound."""
    if not (x > 0 and math.isfinite(x)) or k < 1:
        return 0.0
    if x <= float(chdtri(k, beta)):
        return 0.0
    if float(chndtr(x, k, NONCENTRAL_EXACT_MAX)) <= 1.0 - beta:
        lam = float(chndtrinc(x, k, 1.0 - beta))
        if not math.isfinite(lam):
            return 0.0
        # confirm cdf(x; lam) >= 1 - beta, i.e. lam at or below the root (cdf falls with lam)
        for _ in range(60):
            if lam <= 0.0 or float(chndtr(x, k, lam)) >= 1.0 - beta:
                break
            lam *= 1.0 - 1e-9 if lam > 1.0 else 0.5
        return max(lam, 0.0)
    z = float(-ndtri(beta / 2.0))
    c = float(chdtri(k, beta / 2.0))
    root = -z + math.sqrt(z * z + max(x - c, 0.0))
    return max(NONCENTRAL_EXACT_MAX, root * root)


def exp_sum_bound(w: np.ndarray, beta: float) -> float:
    """``sum_j w_j X_j <= B`` with probability ``>= 1 - beta`` for independent ``X_j ~ Exp(1)``
    and ``w >= 0`` (Chernoff: ``min_t (ln(1/beta) - sum_j ln(1 - t w_j)) / t`` over ``0 < t <
    1/max w``, on a geometric grid of ``t``: any ``t`` gives a valid bound)."""
    w = np.asarray(w, dtype=float)
    w = w[w > 0]
    if not w.size:
        return 0.0
    ts = np.geomspace(1e-6, 1.0 - 1e-9, 400) / float(w.max())
    # the grid's 400 values at once, in blocks of columns so that memory stays ~ 400 x 4096;
    # ln(1 - t w_j) is evaluated once per distinct w_j (the same numbers, summed in the same
    # order: noise of one scale over many entries repeats a few weights)
    # a block whose weights repeat an earlier block's (one noise scale over many entries: every
    # full block) has the same sums, which are reused
    uniq, where = np.unique(w, return_inverse=True)
    table = np.log1p(-np.outer(ts, uniq)) if uniq.size < w.size else None
    logs = np.zeros(ts.size)
    sums: dict[bytes, np.ndarray] = {}
    for start in range(0, w.size, 4096):
        if table is None:
            logs += np.log1p(-np.outer(ts, w[start:start + 4096])).sum(axis=1)
            continue
        key = where[start:start + 4096].tobytes()
        if key not in sums:
            sums[key] = np.ascontiguousarray(table[:, where[start:start + 4096]]).sum(axis=1)
        logs += sums[key]
    return float(np.min((math.log(1.0 / beta) - logs) / ts))


def spectral_bound(M: sp.csr_matrix) -> float:
    """``||M||_2``: exact (dense SVD, rounded up by 1e-12 relative) when ``M`` is small, and
    never above ``sqrt(||M||_1 ||M||_inf)`` (Hoelder).  A matrix with at most one entry per row
    and per column (a scaled partial permutation: one column of a private design's noise map)
    is ``P D Q'`` with ``P``, ``Q`` orthonormal columns: its norm is its largest ``|entry|``,
    exactly, without an SVD."""
    absM = abs(M)
    if (absM.nnz and np.diff(absM.indptr).max() <= 1
            and np.bincount(absM.indices, minlength=M.shape[1]).max() <= 1):
        # at most one entry per row and per column: the singular values are those entries
        return float(absM.data.max())
    norm1_ = float(np.asarray(absM.sum(axis=0)).max(initial=0.0))
    norm_inf_ = float(np.asarray(absM.sum(axis=1)).max(initial=0.0))
    holder = math.sqrt(norm1_ * norm_inf_)
    if M.shape[0] * M.shape[1] <= RANGE_DENSE_MAX and min(M.shape) <= 500:
        with one_blas_thread():  # a one-off dense SVD: BLAS threads only contend for cores
            exact = float(np.linalg.norm(M.toarray(), 2))
        return min(holder, exact * (1.0 + 1e-12))
    return holder


def norm_sum_bound(parts: list[tuple[float, str, sp.csr_matrix]], sigma: np.ndarray,
                   beta: float, noise: str) -> float:
    """``B`` with ``F(e) = sum_k w_k N_k(J_k e) <= B`` with probability ``>= 1 - beta``
    (``parts``: ``(w_k >= 0, N_k in {"l1", "l2", "abs"}, J_k)``), the smallest of bounds
    chosen from public values (so its own event is the one that holds).

    Gaussian: ``F`` is convex with ``E F <= sum_k w_k E N_k`` (l2: ``||M_k||_F``; l1 and abs:
    ``sqrt(2/pi) sum_rows ||M_k,i||``; ``M_k = J_k diag(sigma)``) and Lipschitz constant at most
    ``min(sum_k a_k ||M_k||_2, ||a|| ||[M_1; M_2; ...]||_2)`` (Cauchy-Schwarz), ``a_k = w_k
    sqrt(rows_k)`` for l1 and ``w_k`` otherwise: ``B = E F + Lip sqrt(2 ln(1/beta))``.
    Laplace: the triangle inequality ``F <= sum_j c_j |g_j|``, ``c_j = sigma_j sum_k w_k
    N_k(J_k,j)`` (:func:`exp_sum_bound`), or the sum of the terms' own bounds
    (:func:`noise_norm`) at ``beta / #terms`` each.
    """
    sigma = np.asarray(sigma, dtype=float)
    if noise == "laplace":
        c = np.zeros(sigma.size)
        for w, norm, J in parts:
            A = abs(J) if norm in ("l1", "abs") else None
            cols = (np.asarray(A.sum(axis=0)).ravel() if A is not None else
                    np.sqrt(np.asarray(J.multiply(J).sum(axis=0)).ravel()))
            c += w * cols
        per_term = sum(w * noise_norm(J, sigma, beta / len(parts), "l2" if n == "l2" else "l1",
                                      noise) for w, n, J in parts)
        return float(min(exp_sum_bound(c * sigma, beta), per_term))
    mean, crude, a2, Ms = 0.0, 0.0, 0.0, []
    for w, norm, J in parts:
        M = sp.csr_matrix(J @ sp.diags(sigma))
        Ms.append(M)
        if norm == "l2":
            mean += w * math.sqrt(float(M.multiply(M).sum()))
            a = w
        else:
            rows = np.sqrt(np.asarray(M.multiply(M).sum(axis=1)).ravel())
            mean += w * math.sqrt(2.0 / math.pi) * float(rows.sum())
            a = w * (math.sqrt(M.shape[0]) if norm == "l1" else 1.0)
        crude += a * spectral_bound(M)
        a2 += a * a
    joint = math.sqrt(a2) * spectral_bound(sp.csr_matrix(sp.vstack(Ms)))
    return mean + min(crude, joint) * math.sqrt(2.0 * math.log(1.0 / beta))
