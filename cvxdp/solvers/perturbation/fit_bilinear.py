"""A squared fit with a private design matrix: ``lam * sum_squares(a(x, y))``, ``a`` bilinear.

The square terms of :mod:`cvxdp.solvers.perturbation.fit_term` with ``a`` affine in the
variables ``x`` for fixed private ``y`` and affine in ``y`` for fixed ``x`` (``F @ w`` and
``A @ x - b`` with private ``F``, ``A``, ``b``).  The released noise enters as ``v(x) = J(x) e``,
affine in ``x``: ``v(x) = v(x_e) + W (x - x_e)`` with ``W = sum_k e_k B_k``, ``B_k = d^2 a /
dy_k dx`` (public).  With ``r(x) = a(x, y~)``, ``R = dr/dx`` (released), the true residual's
``T = R - W``, ``x_e`` the exact minimiser of the noisy objective ``h``, ``d = x* - x_e``, ``v0
= v(x_e)``, ``r0 = r(x_e)``:

    f(x_e) - f(x*) <= lam ||v0||^2 + 2 lam (W d)'r0 - lam ||T d - v0||^2

(expand ``Delta(x) = lam ||r - v||^2 - lam ||r||^2`` at ``x*`` around ``x_e``, use ``h(x*) >= h(x_e)
+ lam ||R d||^2`` and complete the square in ``R d``).  With ``||W|| <= omega``, ``s = sigma_min(R)
- omega`` (so ``||T d|| >= s ||d||``), ``a = ||v0||``, ``c = omega ||r0||`` and ``t = ||d|| <=
t_max`` (the public set's box, when known), the right side is at most ``lam (a^2 + max_t [2 c t
- (s t - a)_+^2])``: ``lam (a + c/s)^2`` when ``s > 0`` and the maximiser ``a/s + c/s^2`` is
within ``t_max``.  Second order in the noise when ``s > 0``, first order (``2 lam c t_max``)
otherwise.  The solver's point ``x^`` against ``x_e``: ``||R (x^ - x_e)||^2 <= eps_h / lam``, so
``||x^ - x_e|| <= delta_1 = sqrt(eps_h / lam) / sigma_min(R)``, and ``f(x^) - f(x_e) <= eps_h +
|Delta(x^) - Delta(x_e)|``, bounded through the same quantities.

``omega``: the matrix Gaussian series ``sum_k g_k sigma_k B_k`` has ``P(||.|| >= t) <= (d_1 + d_2)
exp(-t^2 / (2 v))``, ``v = max(||sum_k sigma_k^2 B_k B_k'||, ||sum_k sigma_k^2 B_k' B_k||)``
(Tropp 2012, "User-friendly tail bounds for sums of random matrices", Thm 4.1.1), or, when its
entries are distinct noise coordinates, Davidson & Szarek's ``s (sqrt(d_1) + sqrt(d_2) + sqrt(2
ln(1/beta)))`` (:func:`_entrywise_bound`), the smaller (chosen from public values); for the
Laplace (``E g^p <= p!``), the sub-exponential matrix Bernstein inequality (ibid., Thm 6.2) on
the dilations: ``P(||.|| >= t) <= (d_1 + d_2) exp(-t^2 / (2 (2 v + R t)))``, ``R = max_k
||sigma_k B_k||``.
"""

from __future__ import annotations

import math
from typing import Any

import cvxpy as cp
import numpy as np
import scipy.sparse as sp

__all__ = ["is_bilinear", "second_derivatives", "design_noise_norm", "bilinear_share",
           "SparseTensor", "BILINEAR_DENSE_MAX"]

#: largest dense matrix formed for a bilinear term: ``J0`` (rows x private entries) and
#: ``sum_k sigma_k^2 B_k B_k'`` (rows x rows), ``sum_k sigma_k^2 B_k' B_k`` (n x n), whose
#: spectral norms are taken densely (:func:`variance_sums`); the second derivatives themselves
#: are kept sparse (:class:`SparseTensor`)
BILINEAR_DENSE_MAX = 4_000_000


class SparseTensor:
    """A (rows, K, n) tensor by its non-zero entries ``(i, k, j, vals)``, listed in C order
    (the order of ``np.nonzero`` on the dense tensor, so every sum over them runs in the same
    order as on the dense one).  ``B[:, k, j]`` of a private design ``A @ x`` has one entry per
    noise coordinate: the dense tensor of a 400 x 10 design held 16 million numbers, 4,000
    of them non-zero."""

    __slots__ = ("shape", "i", "k", "j", "vals")

    def __init__(self, shape: tuple[int, int, int], i: np.ndarray, k: np.ndarray,
                 j: np.ndarray, vals: np.ndarray) -> None:
        i, k, j = (np.asarray(a, dtype=np.int64) for a in (i, k, j))
        vals = np.asarray(vals, dtype=float)
        keep = vals != 0
        i, k, j, vals = i[keep], k[keep], j[keep], vals[keep]
        order = np.lexsort((j, k, i))  # C order: i slowest, j fastest
        self.shape = (int(shape[0]), int(shape[1]), int(shape[2]))
        self.i, self.k, self.j, self.vals = i[order], k[order], j[order], vals[order]

    @classmethod
    def of(cls, B: Any) -> SparseTensor:
        """``B`` itself, or the sparse form of a dense (rows, K, n) array."""
        if isinstance(B, SparseTensor):
            return B
        B = np.asarray(B, dtype=float)
        i, k, j = np.nonzero(B)
        return cls(B.shape, i, k, j, B[i, k, j])

    def rows_scaled(self, w: np.ndarray) -> SparseTensor:
        """``w[:, None, None] * B`` (entries that become 0 are dropped, as ``np.nonzero``
        would)."""
        w = np.asarray(w, dtype=float)
        return SparseTensor(self.shape, self.i, self.k, self.j, w[self.i] * self.vals)

    def toarray(self) -> np.ndarray:
        out = np.zeros(self.shape)
        out[self.i, self.k, self.j] = self.vals
        return out


def is_bilinear(a: Any, problem: cp.Problem, params: tuple[Any, ...]) -> bool:
    """``a`` is affine in the variables for fixed private parameters and affine in the private
    parameters for fixed variables (each checked by DCP on a copy whose other side are
    parameters); structure only."""
    y_par = {id(p): cp.Parameter(p.shape) for p in params}
    x_par = {id(v): cp.Parameter(v.shape) for v in problem.variables()}
    y_var = {id(p): cp.Variable(p.shape) for p in params}
    return bool(a.tree_copy(y_par).is_affine() and a.tree_copy({**x_par, **y_var}).is_affine())


def second_derivatives(copy: Any, x_copies: dict[str, cp.Variable],
                       y_copies: tuple[cp.Variable, ...]) -> tuple[np.ndarray, np.ndarray,
                                                                   list[str]] | None:
    """``(J0, B, names)``: ``J0 = da/dy`` at ``x = 0`` (rows x K) and ``B[:, k, j] = d^2 a / dy_k
    dx_j`` (rows x K x n) over the entries of the variables ``a`` holds (``names``, in order);
    gradients of the bilinear copy at ``x = 0`` and at each unit vector.  None above
    :data:`BILINEAR_DENSE_MAX` (``J0`` and the dense sums of :func:`variance_sums`; the
    tensor ``B``, a :class:`SparseTensor`, holds its non-zeros only)."""
    leaves = [*x_copies.values(), *y_copies]
    for v in leaves:
        v.value = np.zeros(v.shape)
    try:
        base = copy.grad
        names = [n for n, v in x_copies.items() if base.get(v) is not None]
        rows = int(copy.size)
        K = sum(int(y.size) for y in y_copies)
        n = sum(int(x_copies[nm].size) for nm in names)
        if max(rows * K, rows * rows, n * n) > BILINEAR_DENSE_MAX:
            return None  # J0 (rows x K) and variance_sums' two matrices are dense

        def jac(g: dict) -> np.ndarray:
            return np.hstack([np.asarray(g[y].todense()).T if g.get(y) is not None
                              else np.zeros((rows, int(y.size))) for y in y_copies])

        J0 = jac(base)
        parts: list[tuple[np.ndarray, ...]] = []
        col = 0
        for nm in names:
            v = x_copies[nm]
            for j in range(int(v.size)):
                e = np.zeros(int(v.size))
                e[j] = 1.0
                v.value = e.reshape(v.shape, order="F")
                g = copy.grad
                start = 0
                for y in y_copies:
                    # the gradients' difference taken sparse (the same entries as the dense
                    # difference), its entries kept as the tensor's (K x rows: d a_i / dy_k
                    # is entry (k, i)); one entry per (i, k, col)
                    size = int(y.size)
                    gy, by = g.get(y), base.get(y)
                    if gy is not None or by is not None:
                        d = (sp.csr_matrix(gy) if gy is not None else sp.csr_matrix(by.shape)) \
                            - (sp.csr_matrix(by) if by is not None else 0)
                        d = sp.coo_matrix(d)
                        d.sum_duplicates()
                        parts.append((d.col, start + d.row, np.full(d.nnz, col), d.data))
                    start += size
                col += 1
            v.value = np.zeros(v.shape)
        i, k, j, vals = (np.concatenate([p[m] for p in parts]) if parts else np.zeros(0)
                         for m in range(4))
        return J0, SparseTensor((rows, K, n), i, k, j, vals), names
    finally:
        for v in leaves:
            v.value = None


def design_noise_norm(B: Any, sigma: np.ndarray, beta: float, noise: str) -> float:
    """``omega`` with ``||sum_k e_k B_k||_2 <= omega`` with probability ``>= 1 - beta`` (module
    doc: Tropp's matrix Gaussian series; the matrix Bernstein bound for the Laplace)."""
    B = SparseTensor.of(B)
    rows, K, n = B.shape
    sigma = np.asarray(sigma, dtype=float)
    S1, S2, fro2 = variance_sums(B, sigma)
    v = max(_spectral_norm(S1), _spectral_norm(S2))
    L = math.log((rows + n) / beta)
    if noise == "laplace":
        # E g^p <= p! for the standard Laplace: the sub-exponential matrix Bernstein bound with
        # A_k^2 = 2 H_k^2 (H_k the dilation of sigma_k B_k), R = max_k ||sigma_k B_k||
        # (Frobenius, an upper bound): t^2 = 2 L (2 v + R t)
        R = float(np.max(sigma * np.sqrt(fro2)))
        return R * L + math.sqrt((R * L) ** 2 + 4.0 * L * v)
    return min(math.sqrt(2.0 * v * L), _entrywise_bound(B, sigma, beta))


def _spectral_norm(S: np.ndarray) -> float:
    """``||S||_2``; ``max_i |S_ii|`` exactly when ``S`` is diagonal (``S1`` of a private design
    ``A @ x``: no two rows share a noise coordinate), without the dense SVD (0.66 s of 1.3 s
    on a 1,000 x 4 design)."""
    d = np.diagonal(S)
    if np.count_nonzero(S) == np.count_nonzero(d):
        return float(np.max(np.abs(d), initial=0.0))
    return float(np.linalg.norm(S, 2))


def variance_sums(B: Any, sigma: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``sum_k sigma_k^2 B_k B_k'`` (rows x rows), ``sum_k sigma_k^2 B_k' B_k`` (n x n) and
    ``||B_k||_F^2`` per k, for ``B`` of shape (rows, K, n) (``B_k = B[:, k, :]``).

    Through the nonzeros only (each noise coordinate reaches few entries: one for ``A @ x``
    with a private ``A``): ``M = B o sigma`` as a sparse (rows, K n) matrix gives ``M M'``, and
    as a sparse (rows K, n) one ``M' M``.  The dense three-operand contraction these replace
    cost ``O(rows^2 K n)`` (1.7 s of 2.0 s on a 200 x 5 private design)."""
    B = SparseTensor.of(B)
    rows, K, n = B.shape
    i, k, j = B.i, B.k, B.j
    vals = B.vals * np.asarray(sigma, dtype=float)[k]
    M1 = sp.csr_matrix((vals, (i, k * n + j)), shape=(rows, K * n))
    M2 = sp.csr_matrix((vals, (i * K + k, j)), shape=(rows * K, n))
    S1 = np.asarray((M1 @ M1.T).toarray())
    S2 = np.asarray((M2.T @ M2).toarray())
    fro2 = np.bincount(k, weights=B.vals ** 2, minlength=K)
    return S1, S2, fro2


def _entrywise_bound(B: Any, sigma: np.ndarray, beta: float) -> float:
    """Davidson-Szarek's bound when every noise coordinate reaches at most one entry of ``W``
    and no two reach the same (``A @ x`` with a private ``A``): ``W = S o G`` with ``G`` i.i.d.
    standard normal and ``|S_ij| <= s = max_k sigma_k |c_k|``.  The Gaussian process ``u'Wv``
    over unit ``u``, ``v`` has increments at most ``s`` times those of ``u'Gv``, so
    ``E ||W|| <= s E ||G|| <= s (sqrt(rows) + sqrt(n))`` (Sudakov-Fernique; Davidson & Szarek
    2001, Thm II.13), and ``||W||`` is ``s``-Lipschitz in ``g``: ``||W|| <= s (sqrt(rows) +
    sqrt(n) + sqrt(2 ln(1/beta)))`` with probability ``>= 1 - beta`` (Gaussian concentration).
    ``inf`` when the structure does not hold."""
    B = SparseTensor.of(B)
    rows, K, n = B.shape
    per_k = np.bincount(B.k, minlength=K)                       # non-zeros per coordinate
    per_entry = np.bincount(B.i * n + B.j, minlength=rows * n)  # coordinates per entry of W
    if np.any(per_k > 1) or np.any(per_entry > 1) or not per_k.any():
        return math.inf
    top = np.zeros(K)
    top[B.k] = np.abs(B.vals)  # at most one non-zero per k
    s = float(np.max(top * np.asarray(sigma, dtype=float)))
    return s * (math.sqrt(rows) + math.sqrt(n) + math.sqrt(2.0 * math.log(1.0 / beta)))


def bilinear_share(lam: float, *, V0: float, omega: float, R: np.ndarray, x_norm: float,
                   r_norm: float, eps_h: float, t_max: Any) -> tuple[float, float]:
    """``(gap share, sup |Delta(x^)|)`` of one bilinear square term (module doc).

    ``V0`` bounds ``||J(0) e||``, ``omega`` the noise matrix's norm, ``R`` is ``dr/dx`` at the
    released point and data, ``x_norm`` and ``r_norm`` are ``||x^||`` (the term's variables) and
    ``||r(x^)||``; ``t_max()`` bounds ``||x* - x_e||`` (``inf`` when unknown; called only when
    needed, it may solve).
    """
    smin = float(np.linalg.svd(R, compute_uv=False).min()) if R.shape[0] >= R.shape[1] else 0.0
    if smin <= 0:
        return math.inf, math.inf
    d1 = math.sqrt(eps_h / lam) / smin           # ||x^ - x_e||
    vx = V0 + omega * x_norm                     # ||v(x^)||
    v0 = vx + omega * d1                         # ||v(x_e)||
    r0 = r_norm + math.sqrt(eps_h / lam)         # ||r(x_e)||
    c = omega * r0
    s = smin - omega
    # max over 0 <= t <= t_max of 2 c t - (s t - v0)_+^2
    if s > 0:
        t_star = v0 / s + c / s**2
        t = min(t_star, t_max()) if t_star > 0 else 0.0
        best = 2.0 * c * t - max(s * t - v0, 0.0) ** 2
    else:
        tm = t_max()
        if not math.isfinite(tm):
            return math.inf, math.inf
        best = 2.0 * c * tm
    part2 = lam * (v0**2 + best)
    # f(x^) - f(x_e) <= eps_h + |Delta(x^) - Delta(x_e)|, Delta = -2 lam v'r + lam ||v||^2:
    # ||v(x^) - v0|| <= omega d1, ||r(x^) - r0|| <= sqrt(eps_h / lam)
    dv, dr = omega * d1, math.sqrt(eps_h / lam)
    part1 = eps_h + lam * (2.0 * (dv * r0 + vx * dr) + dv * (vx + v0))
    sup = 2.0 * lam * vx * r_norm + lam * vx**2
    return part1 + part2, sup
