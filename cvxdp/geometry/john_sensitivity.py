"""Public sensitivity bounds for the private John ellipsoid (our proofs; the paper's L is private).

Neighbouring relation (Def 1.2 of ``000_e485cd77aacd52a5.txt`` read by rows, digest gap 1): A and A'
have the same n rows except one row j with ``||a_j - a'_j||_2 <= eps0``; every row has norm <= R
(enforced by clipping rows to the ball of radius R, a 1-Lipschitz map, so clipped neighbours stay
eps0-close).

Mechanism step: given PUBLIC weights ``w in [w_min, 1]^n`` (a function of earlier noisy releases),
release ``h_i = a_i' M^{-1} a_i`` with ``M = A' W A + ridge I`` for all i, plus Gaussian noise.

Bound (proved in :func:`leverage_ratio_sensitivity`, checked numerically in the tests): with
``lam = ridge + w_min * sigma_min^2`` a public lower bound on ``lambda_min(M)``,
``e = 2 R eps0 / lam`` (must be < 1), ``phi = e / (1 - e)``,
``ell = min(R^2/lam, 1/w_min)`` (bound on ``a_i' M^{-1} a_i``),
``m = min(1/w_min, n R^2/lam)`` (bound on ``||M^{-1/2} A' A M^{-1/2}||``),
``ell' = min(R^2/lam, (w_min^{-1/2} + eps0 lam^{-1/2})^2)``::

    ||h(A) - h(A')||_2 <= sqrt(2 phi^2 ell m + (2 R eps0 / lam + phi ell')^2).
"""

from __future__ import annotations

import math

from cvxdp.errors import PrivacySpecError

__all__ = ["leverage_ratio_sensitivity", "gram_sensitivity", "support_sensitivity",
           "paper_lipschitz"]


def leverage_ratio_sensitivity(*, n: int, closeness: float, row_bound: float, weight_floor: float,
                               eig_floor: float) -> float:
    """l2 sensitivity of ``h(w, A) = (a_i' (A'WA + ridge I)^{-1} a_i)_i`` for public w.

    Parameters
    ----------
    n : int
        Number of rows (public; the relation does not change n).
    closeness : float
        eps0: one row moves by at most this much in l2.
    row_bound : float
        R >= every row norm.
    weight_floor : float
        w_min <= every weight (weights are clipped to [w_min, 1]).
    eig_floor : float
        Public lower bound on ``lambda_min(A'WA + ridge I)``, i.e. ``ridge + w_min sigma_min^2``.

    Notes
    -----
    Proof.  ``M' = M + D`` with ``D = w_j (a' a'^T - a a^T) = w_j (a'(a'-a)^T + (a'-a) a^T)``, rank
    <= 2 and ``||D|| <= 2 R eps0`` (``w_j <= 1``).  With ``E = M^{-1/2} D M^{-1/2}``,
    ``||E|| <= e = 2 R eps0 / lam < 1`` and ``M^{-1} - M'^{-1} = M^{-1/2} F M^{-1/2}``,
    ``F = E (I+E)^{-1}``, rank <= 2, ``||F|| <= phi = e/(1-e)``.  For i != j, with
    ``c_i = M^{-1/2} a_i`` and F = sum_k f_k u_k u_k^T,
    ``|h_i - h'_i| <= phi sum_k (u_k' c_i)^2`` so
    ``sum_i (h_i - h'_i)^2 <= phi^2 max_i ||c_i||^2 * sum_k u_k'(sum_i c_i c_i^T) u_k
    <= 2 phi^2 ell m`` because ``||c_i||^2 <= R^2/lam`` and ``<= 1/w_i`` (M >= w_i a_i a_i^T),
    and ``sum_i c_i c_i^T = M^{-1/2} A'A M^{-1/2} <= I/w_min`` (M >= w_min A'A) and
    ``<= n R^2 / lam``.  For row j:
    ``|a'M^{-1}a - a'^T M'^{-1} a'| <= |(a-a')^T M^{-1} (a+a')| + |a'^T M^{-1/2} F M^{-1/2} a'|
    <= 2 R eps0/lam + phi ell'``, ``ell' >= a'^T M^{-1} a'`` (norm <= R, or triangle inequality
    from ``a^T M^{-1} a <= 1/w_min``).  The j-th term is counted in both sums, which only
    over-estimates.

    References
    ----------
    Replaces the data-dependent Lipschitz constant L of ``000_e485cd77aacd52a5.txt`` Thm 5.1/C.15
    (digest gap 5) by a bound in public quantities only.
    """
    eps0, R, wmin, lam = float(closeness), float(row_bound), float(weight_floor), float(eig_floor)
    if lam <= 0:
        raise PrivacySpecError(
            "no public lower bound on lambda_min(A'WA): pass sigma_min= (a public lower bound on "
            "the smallest singular value of A) or ridge= > 0.")
    e = 2 * R * eps0 / lam
    if e >= 0.5:
        raise PrivacySpecError(
            f"closeness={eps0:.3g} is too large for the public bounds: 2 R eps0 / lambda = {e:.3g} "
            f">= 0.5 (lambda = ridge + weight_floor * sigma_min^2 = {lam:.3g}); decrease "
            "closeness=, or increase ridge= / sigma_min=.")
    phi = e / (1 - e)
    ell = min(R * R / lam, 1 / wmin)
    m = min(1 / wmin, n * R * R / lam)
    ell_j = min(R * R / lam, (wmin ** -0.5 + eps0 / math.sqrt(lam)) ** 2)
    return math.sqrt(2 * phi**2 * ell * m + (2 * R * eps0 / lam + phi * ell_j) ** 2)


def gram_sensitivity(*, closeness: float, row_bound: float, max_weight: float) -> float:
    """Frobenius sensitivity of ``Q = A' V A`` for public v: ``v_max (2 R eps0)``.

    ``||v_j (a' a'^T - a a^T)||_F <= v_j (||a'|| + ||a||) ||a' - a|| <= 2 v_max R eps0``
    (digest gap 3: A'VA touches A again, so it gets its own noise).
    """
    return 2.0 * float(max_weight) * float(row_bound) * float(closeness)


def support_sensitivity(*, closeness: float, min_eig: float) -> float:
    """Sensitivity of ``max_i ||Q^{-1/2} a_i||`` for public Q: ``eps0 / sqrt(lambda_min(Q))``.

    A max of functions each ``||Q^{-1/2}||``-Lipschitz in its own row, one row moving.
    """
    return float(closeness) / math.sqrt(float(min_eig))


def paper_lipschitz(*, n: int, closeness: float, sigma_max: float, sigma_min_w: float,
                    kappa_w: float) -> float:
    """The paper's L (Thm C.15 explicit form) -- DATA-DEPENDENT, used only by preset="paper".

    ``L^2 eps0^2 = (n-1)(eps1 smax^2)^2 + (eps1 (smax+eps0)^2 + eps0 smax^2 (2 smax+eps0))^2``
    with ``eps1 = 8 kappa(W^{1/2}A) sigma_min(W^{1/2}A)^{-3} eps0`` (digest Sec. 4).
    """
    e0 = float(closeness)
    e1 = 8 * kappa_w * sigma_min_w ** -3 * e0
    val = (n - 1) * (e1 * sigma_max**2) ** 2 + (
        e1 * (sigma_max + e0) ** 2 + e0 * sigma_max**2 * (2 * sigma_max + e0)) ** 2
    return math.sqrt(val) / e0
