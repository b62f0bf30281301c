"""Public sensitivity bounds for the private John ellipsoid (our proofs; the paper's L is private).

Neighbouring relation (Def 1.2 of Gu et al. (2024) read by rows; docs/john.md, deviation 1): A and
A' have the same n rows except one row j with ``||a_j - a'_j||_2 <= eps0``; every row has norm <= R
(enforced by clipping rows to the ball of radius R, a 1-Lipschitz map, so clipped neighbours stay
eps0-close).

Mechanism step: given PUBLIC weights ``w in [w_min, 1]^n`` (a function of earlier noisy releases),
release ``h_i = a_i' M^{-1} a_i`` with ``M = A' W A + ridge I`` for all i, plus Gaussian noise.

Bound (Lemma S, proved in :func:`leverage_ratio_sensitivity` and in ``docs/john.md``; tightness
checked by an adversarial search in ``tests/geometry/john/test_john_sensitivity.py``): with
``lam`` a public lower bound on ``lambda_min(M)`` and every weight in ``[w_min, w_max]``::

    ||h(A) - h(A')||_2 <= (R eps0 / lam) (sqrt(w_max / w_min) + 2).

It needs no smallness of eps0.  The earlier rank-two bound (kept as :func:`rank_two_bound`, valid
when ``2 R eps0 < lam / 2``) is about ``2 R sqrt(2/lam)`` times larger in the usual regime; the
smaller of the two is used.
"""

from __future__ import annotations

import math

from cvxdp.errors import PrivacySpecError

__all__ = ["leverage_ratio_sensitivity", "lemma_s_coefficient", "rank_two_bound",
           "gram_sensitivity", "support_sensitivity", "paper_lipschitz"]


def leverage_ratio_sensitivity(*, n: int, closeness: float, row_bound: float, weight_floor: float,
                               eig_floor: float, weight_cap: float = 1.0) -> float:
    """l2 sensitivity of ``h(w, A) = (a_i' (A'WA + ridge I)^{-1} a_i)_i`` for public w (Lemma S).

    Parameters
    ----------
    n : int
        Number of rows (public; the relation does not change n).  Enters only the rank-two bound.
    closeness : float
        eps0: one row moves by at most this much in l2.
    row_bound : float
        R >= every row norm (rows are clipped to the ball, so both neighbours obey it).
    weight_floor : float
        w_min <= every weight (weights are clipped to [w_min, w_max]).
    eig_floor : float
        Public lower bound ``lam`` on ``lambda_min(A'WA + ridge I)``: the ridge (which enforces it
        for every A), plus ``w_min sigma_min^2`` when ``sigma_min=`` is given.
    weight_cap : float
        w_max >= every weight (1 by default).

    Returns
    -------
    float
        ``min((R eps0/lam)(sqrt(w_max/w_min) + 2), rank_two_bound(...))`` (the second only when
        it applies).

    Notes
    -----
    Lemma S.  Let ``M = L + sum_i w_i a_i a_i'`` with a data-independent ``L >= lam I`` (the
    ridge), ``w_i in [w_min, w_max]``, ``||a_i|| <= R``; ``M'`` the same with row j replaced by
    ``a' = a + delta``, ``||delta|| <= eps0``, ``||a'|| <= R`` (``a = a_j``, ``w = w_j``, the
    weights public and equal for both).  Then, with ``h_i = a_i'M^{-1}a_i`` and ``h'`` from M',
    ``||h - h'||_2 <= (R eps0/lam)(sqrt(w_max/w_min) + 2)``.

    Proof.  (1) Rows i != j.  ``M' - M = D = w (delta a'^T + a delta^T)`` and
    ``M^{-1} - M'^{-1} = M^{-1} D M'^{-1}``, so ``h_i - h'_i = w (p_i q_i + r_i s_i)`` with
    ``p_i = a_i'M^{-1}delta``, ``q_i = a'^T M'^{-1} a_i``, ``r_i = a^T M^{-1}a_i``,
    ``s_i = delta'M'^{-1}a_i``.  ``|p_i|, |s_i| <= R eps0 / lam`` since
    ``||M^{-1}||, ||M'^{-1}|| <= 1/lam``.  Since ``sum_{i != j} a_i a_i' <= (1/w_min)
    sum_{i != j} w_i a_i a_i' <= (M' - w a' a'^T) / w_min``,
    ``w^2 sum_{i != j} q_i^2 <= (w / w_min)(w h' - (w h')^2) / w <= w g (1 - g) / w_min
    <= w_max / (4 w_min)`` with ``h' = a'^T M'^{-1} a'`` and ``g = w h' in [0, 1]``
    (``M' >= w a' a'^T``); the same with M and a for r.  So each of the vectors
    ``(w p_i q_i)``, ``(w r_i s_i)`` over i != j has l2 norm
    ``<= (R eps0/lam) sqrt(w_max/w_min) / 2``.
    (2) Row j.  ``N = M - w a a^T = M' - w a' a'^T >= L >= lam I`` (the other rows and the
    ridge; the same N for both).  Sherman-Morrison: ``h_j = t/(1 + w t)`` with ``t = a^T N^{-1} a``,
    ``h'_j = t'/(1 + w t')``, so ``|h_j - h'_j| = |t - t'| / ((1 + w t)(1 + w t')) <= |t - t'|
    = |delta^T N^{-1} (a + a')| <= 2 R eps0 / lam``.
    The triangle inequality over (1) and (2) gives the bound.  It is within a small constant of
    the truth: in two dimensions, k rows of norm R at weight w_min on a line at a small angle to
    the moving row, chosen so that both directions of M sit near ``lam``, give a change of about
    ``(R eps0/lam) sqrt(1/w_min) / 3.6`` (first order); the test's adversarial search finds
    about 1/4 of the bound.

    References
    ----------
    Replaces the data-dependent Lipschitz constant L of Gu et al. (2024) Thm 5.1/C.15
    (docs/john.md, deviation 3) by a bound in public quantities only; ``docs/john.md``
    (Sensitivity lemma).
    """
    eps0, R, wmin, lam = float(closeness), float(row_bound), float(weight_floor), float(eig_floor)
    wmax = float(weight_cap)
    if lam <= 0:
        raise PrivacySpecError(
            "no public lower bound on lambda_min(A'WA): pass sigma_min= (a public lower bound on "
            "the smallest singular value of A) or ridge= > 0.")
    if not 0 < wmin <= wmax:
        raise PrivacySpecError(f"need 0 < weight_floor <= weight_cap, got {wmin!r}, {wmax!r}.")
    lemma_s = lemma_s_coefficient(closeness=eps0, row_bound=R, weight_floor=wmin,
                                  weight_cap=wmax) / lam
    old = rank_two_bound(n=n, closeness=eps0, row_bound=R, weight_floor=wmin, eig_floor=lam)
    return lemma_s if old is None else min(lemma_s, old)


def lemma_s_coefficient(*, closeness: float, row_bound: float, weight_floor: float,
                        weight_cap: float = 1.0) -> float:
    """``K = R eps0 (sqrt(w_max/w_min) + 2)``: Lemma S reads ``Delta_h <= K / lam``."""
    return float(row_bound) * float(closeness) * (
        math.sqrt(float(weight_cap) / float(weight_floor)) + 2.0)


def rank_two_bound(*, n: int, closeness: float, row_bound: float, weight_floor: float,
                   eig_floor: float) -> float | None:
    """The earlier bound (weights <= 1), or None when it does not apply (``2 R eps0/lam >= 1/2``).

    With ``e = 2 R eps0 / lam``, ``phi = e/(1-e)``, ``ell = min(R^2/lam, 1/w_min)``,
    ``m = min(1/w_min, n R^2/lam)``, ``ell' = min(R^2/lam, (w_min^{-1/2} + eps0 lam^{-1/2})^2)``:
    ``sqrt(2 phi^2 ell m + (2 R eps0 / lam + phi ell')^2)``.

    Proof.  ``M' = M + D``, ``D = w_j (a' a'^T - a a^T)`` rank <= 2, ``||D|| <= 2 R eps0``.  With
    ``E = M^{-1/2} D M^{-1/2}``, ``||E|| <= e < 1`` and ``M^{-1} - M'^{-1} = M^{-1/2} F M^{-1/2}``,
    ``F = E (I+E)^{-1}``, rank <= 2, ``||F|| <= phi``.  For i != j, with ``c_i = M^{-1/2} a_i``,
    ``sum_i (h_i - h'_i)^2 <= phi^2 max_i ||c_i||^2 * 2 ||sum_i c_i c_i^T|| <= 2 phi^2 ell m``;
    for row j ``|h_j - h'_j| <= 2 R eps0/lam + phi ell'``.
    """
    eps0, R, wmin, lam = float(closeness), float(row_bound), float(weight_floor), float(eig_floor)
    e = 2 * R * eps0 / lam
    if e >= 0.5:
        return None
    phi = e / (1 - e)
    ell = min(R * R / lam, 1 / wmin)
    m = min(1 / wmin, n * R * R / lam)
    ell_j = min(R * R / lam, (wmin ** -0.5 + eps0 / math.sqrt(lam)) ** 2)
    return math.sqrt(2 * phi**2 * ell * m + (2 * R * eps0 / lam + phi * ell_j) ** 2)


def gram_sensitivity(*, closeness: float, row_bound: float, max_weight: float) -> float:
    """Frobenius sensitivity of ``Q = A' V A`` for public v: ``v_max (2 R eps0)``.

    ``||v_j (a' a'^T - a a^T)||_F <= v_j (||a'|| + ||a||) ||a' - a|| <= 2 v_max R eps0``
    (deviation 4: A'VA touches A again, so it gets its own noise).
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
    with ``eps1 = 8 kappa(W^{1/2}A) sigma_min(W^{1/2}A)^{-3} eps0`` (Gu et al. 2024, Sec. 4).
    """
    e0 = float(closeness)
    e1 = 8 * kappa_w * sigma_min_w ** -3 * e0
    val = (n - 1) * (e1 * sigma_max**2) ** 2 + (
        e1 * (sigma_max + e0) ** 2 + e0 * sigma_max**2 * (2 * sigma_max + e0)) ** 2
    return math.sqrt(val) / e0
