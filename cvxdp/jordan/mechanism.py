"""The generic Gaussian mechanism on a Euclidean Jordan algebra (Song et al. 2025, Section 4)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from cvxdp.argument_values import check_beta
from cvxdp.citations import ANALYTIC_GAUSSIAN, SYMMETRIC_CONE_PROGRAMMING, cite
from cvxdp.errors import BudgetError, PrivacySpecError, check_positive
from cvxdp.jordan.base import EuclideanJordanAlgebra, normalize_ord
from cvxdp.jordan.orthant import Orthant
from cvxdp.jordan.product import Product
from cvxdp.jordan.spin import SpinFactor
from cvxdp.jordan.symmetric import SymmetricMatrices
from cvxdp.privacy.accountant import PrivacyAccountant, PrivacyRecord
from cvxdp.privacy.budgets import ZCDP, ApproxDP
from cvxdp.privacy.mechanisms import gaussian_noise
from cvxdp.privacy.rng import as_generator

__all__ = [
    "gaussian_mechanism",
    "effective_l2_sensitivity",
    "gaussian_noise_bound",
    "EJA_GAUSSIAN_REFERENCE",
]

EJA_GAUSSIAN_REFERENCE = (
    cite(SYMMETRIC_CONE_PROGRAMMING,
         "Lemma 4.2 (generic Gaussian mechanism; l1: Cor 4.3, l-inf: Cor 4.4)")
    + f", sigma by the analytic Gaussian ({ANALYTIC_GAUSSIAN})"
)


def effective_l2_sensitivity(algebra: EuclideanJordanAlgebra, sensitivity: float,
                             norm: Any = "l2") -> float:
    """The trace-form l2 sensitivity implied by an ``l_p`` sensitivity on ``algebra``.

    ``||x||_2 <= ||x||_1`` (Cor 4.3) and ``||x||_2 <= sqrt(rank) ||x||_inf`` (Cor 4.4), both for
    the spectral norms of the EJA (002 Appendix A norm chain); for a product the rank is the
    total rank.

    Raises
    ------
    PrivacySpecError
        If ``sensitivity`` is not a finite positive number or ``norm`` is not 1, 2 or inf.
    """
    s = check_positive(
        sensitivity, PrivacySpecError,
        f"sensitivity must be finite and > 0, got {sensitivity!r}: give a public bound on "
        "||f(D) - f(D')|| over neighbouring datasets D, D'.",
        type_message=f"sensitivity must be a number, got {sensitivity!r}.")
    try:
        p = normalize_ord(norm)
    except ValueError as err:
        raise PrivacySpecError(str(err)) from None
    if p == np.inf:
        return math.sqrt(algebra.rank) * s
    return s


def gaussian_mechanism(
    x: Any,
    algebra: EuclideanJordanAlgebra,
    *,
    sensitivity: float,
    norm: Any = "l2",
    epsilon: float | None = None,
    delta: float | None = None,
    rho: float | None = None,
    method: str = "analytic",
    rng: None | int | np.random.Generator = None,
    accountant: PrivacyAccountant | None = None,
) -> tuple[np.ndarray, PrivacyRecord]:
    """Release ``x + z`` with ``z = phi^{-1}(nu)``, ``nu ~ N(0, sigma^2 I_dim)`` (Lemma 4.2).

    ``x = f(D)`` is an element of ``algebra`` (stored coordinates; see
    :mod:`cvxdp.jordan.base`) whose spectral ``l_p`` distance between neighbouring datasets is
    at most ``sensitivity``.  Because ``phi`` is an isometry, ``||f(D) - f(D')||_2 =
    ||phi(f(D)) - phi(f(D'))||`` and the mechanism is the vector Gaussian mechanism on
    ``phi(f(D))`` pulled back through ``phi^{-1}``.  The l2 sensitivity used for calibration is

    * ``norm="l2"`` (Frobenius): ``Delta``;
    * ``norm="l1"`` (nuclear): ``Delta`` (Cor 4.3, ``||x||_2 <= ||x||_1``);
    * ``norm="linf"`` (spectral): ``sqrt(rank) Delta`` (Cor 4.4, ``||x||_2 <= sqrt(r)||x||_inf``).

    sigma is calibrated by the exact analytic Gaussian (Balle & Wang 2018), which is never larger
    than Lemma 4.2's ``Delta_2 sqrt(2 log(1.25/delta)) / epsilon`` and, unlike it, is valid for
    every epsilon > 0; ``method="classical"`` gives the paper's formula (epsilon < 1 only).  With
    ``rho=`` instead of ``(epsilon, delta)`` it is calibrated for ``rho``-zCDP,
    ``sigma = Delta_2 / sqrt(2 rho)``.

    Why the whole element is perturbed, not only its eigenvalues (Song, Xue & Zhang 2025, text
    after Cor 4.4):
    releasing ``sum_i (lam_i + nu_i) q_i`` keeps the Jordan frame ``{q_i}`` of ``f(D)``
    *exactly*.  The frame is itself a function of the data: two neighbours with the same
    spectrum but slightly rotated frames (e.g. ``diag(1, 0)`` vs a tiny rotation of it, whose
    difference is arbitrarily small in every norm) give outputs whose supports -- the sets of
    elements with that frame -- are disjoint, so one output identifies the dataset with
    probability 1 and no finite epsilon holds for any delta < 1.  Noise drawn as
    ``phi^{-1}(N(0, sigma^2 I))`` is invariant under all automorphisms of the algebra and
    randomises the frame as well.  (Only on the orthant ``R^k`` is the frame the fixed standard
    basis, which is why entrywise noise is fine for LPs.)  For the same reason Laplace noise
    pulled back through ``phi^{-1}`` does not give pure DP for l1 sensitivity: phi preserves
    only the l2 norm.

    Parameters
    ----------
    x : array_like, shape (algebra.dim,)
        The exact value ``f(D)`` (one element; for several values build a :class:`Product`).
    algebra : EuclideanJordanAlgebra
    sensitivity : float
        Public bound ``Delta`` on ``||f(D) - f(D')||_p`` over neighbours.
    norm : {"l2", "l1", "linf"} or {2, 1, numpy.inf}
        Which spectral norm ``sensitivity`` bounds.
    epsilon, delta : float
        Target (epsilon, delta)-DP (delta > 0).
    rho : float
        Target rho-zCDP instead of (epsilon, delta).
    method : {"analytic", "classical"}
        Calibration of sigma for (epsilon, delta); ignored with ``rho``.
    rng : None, int or numpy.random.Generator
    accountant : PrivacyAccountant, optional
        The record is spent from it before any noise is drawn (over-budget raises BudgetError).

    Returns
    -------
    noisy : ndarray, shape (algebra.dim,)
    record : PrivacyRecord
        ``params`` hold ``sigma``, the declared ``norm`` and sensitivity, the effective l2
        ``sensitivity``, ``dim`` and ``rank``.

    Raises
    ------
    PrivacySpecError
        Bad sensitivity or norm, or ``x`` not a finite element of ``algebra``.

    See Also
    --------
    gaussian_noise_bound : high-probability bounds on ``||z||_1, ||z||_2, ||z||_inf``.
    BudgetError
        Out-of-range or missing budget.

    References
    ----------
    Song, Xue & Zhang (2025), Section 4: Lemma 4.2, Corollaries 4.3 and 4.4 and the negative
    remarks after them; Balle & Wang, ICML 2018, Thm 8 (analytic Gaussian); Bun & Steinke 2016,
    Prop. 1.6 (zCDP).
    """
    if not isinstance(algebra, EuclideanJordanAlgebra):
        raise PrivacySpecError(
            f"algebra must be a cvxdp.jordan algebra (Orthant, SpinFactor, SymmetricMatrices, "
            f"Product), got {type(algebra).__name__}."
        )
    value = np.asarray(x, dtype=float)
    if value.shape != (algebra.dim,):
        raise PrivacySpecError(
            f"x must be one element of {algebra!r}, shape ({algebra.dim},), got {value.shape}; "
            "for several values use a Product algebra."
        )
    if not np.all(np.isfinite(value)):
        raise PrivacySpecError("x contains NaN or inf; the Gaussian mechanism needs finite data.")
    d2 = effective_l2_sensitivity(algebra, sensitivity, norm)
    p = normalize_ord(norm)
    label = {1.0: "l1", 2.0: "l2", np.inf: "linf"}[p]
    extra = {"norm": label, "declared_sensitivity": float(sensitivity), "dim": algebra.dim,
             "rank": algebra.rank, "algebra": repr(algebra)}
    if rho is not None:
        if epsilon is not None or delta is not None:
            raise PrivacySpecError("give rho= or epsilon=/delta=, not both.")
        sigma, record = gaussian_noise(ZCDP(rho), sensitivity=d2, mechanism="eja_gaussian",
                                       reference=EJA_GAUSSIAN_REFERENCE, **extra)
    else:
        if method not in ("analytic", "classical"):
            raise PrivacySpecError(f"method must be 'analytic' or 'classical', got {method!r}.")
        if epsilon is None or delta is None:
            raise BudgetError("the EJA Gaussian mechanism needs epsilon= and delta= (delta > 0), "
                              "or rho=.")
        sigma, record = gaussian_noise(ApproxDP(epsilon, delta), sensitivity=d2, method=method,
                                       mechanism="eja_gaussian", reference=EJA_GAUSSIAN_REFERENCE,
                                       calibration=method, **extra)
    if accountant is not None:
        accountant.spend(record)
    z = sigma * algebra.random_normal(as_generator(rng))
    return value + z, record


def _block_inf_bound(J: EuclideanJordanAlgebra, sigma: float, beta: float) -> float:
    """``P(||z||_inf > bound) <= beta`` for ``z = sigma phi^{-1}(N(0, I))`` on a simple block,
    or ``inf`` when no block-specific bound is known."""
    if isinstance(J, Orthant):  # union bound over k two-sided Gaussian tails 2 exp(-u^2/2)
        return sigma * math.sqrt(2 * math.log(2 * J.dim / beta))
    if isinstance(J, SpinFactor):
        # lam_pm = (nu_0 +- |nu_bar|) / sqrt(2) (phi = sqrt(2) x); |nu_0| by its tail, |nu_bar| by
        # Gaussian concentration of a 1-Lipschitz function (E|nu_bar| <= sqrt(k-1)), beta/2 each
        n0 = math.sqrt(2 * math.log(4 / beta))
        nb = math.sqrt(J.dim - 1) + math.sqrt(2 * math.log(2 / beta))
        return sigma * (n0 + nb) / float(J.phi_scale[0])
    if isinstance(J, SymmetricMatrices):
        # Z has the law of (G + G^T)/2, G with i.i.d. N(0, sigma^2) entries, so ||Z|| <= ||G||;
        # Davidson-Szarek: P(||G|| > sigma (2 sqrt(r) + t)) <= exp(-t^2 / 2)
        return sigma * (2 * math.sqrt(J.rank) + math.sqrt(2 * math.log(1 / beta)))
    return math.inf


def gaussian_noise_bound(algebra: EuclideanJordanAlgebra, sigma: float, *, beta: float,
                         ord: Any = 2) -> float:
    """A bound ``B`` with ``P(||z||_ord > B) <= beta`` for the mechanism's noise ``z``.

    ``ord=2``: ``sigma (sqrt(k) + sqrt(2 log(1/beta)))`` -- Lemma 3.10 (Laurent-Massart) with
    our correction (the paper drops the factor 2 under the root).  ``ord=1``:
    ``sqrt(rank)`` times that.  ``ord=inf``: the smaller of the l2 bound (what the paper's
    analyses use, ``||z||_inf <= ||z||_2``) and a blockwise bound with ``beta`` split evenly
    over the blocks: ``sigma sqrt(2 log(2k/beta))`` on an orthant, ``sigma (|nu_0| + |nu_bar|)
    / sqrt(2)`` tails on a spin factor, ``sigma (2 sqrt(r) + sqrt(2 log(1/beta)))`` on ``S^r``
    (Davidson-Szarek) -- the ``O(sigma sqrt(r))`` random-matrix behaviour the paper mentions
    after Cor 4.4.  The minimum of two bounds each valid at level ``beta`` is valid at level
    ``beta``.  This is a utility statement only; privacy never depends on it.

    Parameters
    ----------
    algebra : EuclideanJordanAlgebra
    sigma : float
        Noise scale (``record.params["sigma"]``).
    beta : float
        Failure probability in (0, 1).
    ord : 1, 2 or inf

    Returns
    -------
    float

    References
    ----------
    Song, Xue & Zhang (2025) Lemma 3.10 and the utility remarks of Section 4; Laurent & Massart,
    Ann. Stat. 2000, Lemma 1; Davidson & Szarek 2001, Thm II.13.
    """
    beta = check_beta(beta)
    if not (math.isfinite(sigma) and sigma > 0):
        raise ValueError(f"sigma must be finite and > 0, got {sigma!r}.")
    p = normalize_ord(ord)
    l2 = sigma * (math.sqrt(algebra.dim) + math.sqrt(2 * math.log(1 / beta)))
    if p == 2.0:
        return l2
    if p == 1.0:
        return math.sqrt(algebra.rank) * l2
    blocks = algebra.blocks if isinstance(algebra, Product) else (algebra,)
    b_beta = beta / len(blocks)
    kinds = {(type(J), J.dim): J for J in blocks}
    return min(l2, max(_block_inf_bound(J, sigma, b_beta) for J in kinds.values()))
