"""The generic Gaussian mechanism on a Euclidean Jordan algebra (paper 002, Section 4)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from cvxdp.errors import PrivacySpecError
from cvxdp.jordan.base import EuclideanJordanAlgebra, normalize_ord
from cvxdp.privacy.accountant import PrivacyAccountant, PrivacyRecord
from cvxdp.privacy.calibration import calibrate_gaussian
from cvxdp.privacy.mechanisms import gaussian_record
from cvxdp.privacy.rng import as_generator

__all__ = ["gaussian_mechanism", "effective_l2_sensitivity", "EJA_GAUSSIAN_REFERENCE"]

EJA_GAUSSIAN_REFERENCE = (
    "002_26bee910280b74ae.txt Lemma 4.2 (generic Gaussian mechanism; l1: Cor 4.3, l-inf: Cor 4.4),"
    " sigma by the analytic Gaussian (Balle & Wang 2018, Thm 8)"
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
    try:
        s = float(sensitivity)
    except (TypeError, ValueError):
        raise PrivacySpecError(f"sensitivity must be a number, got {sensitivity!r}.") from None
    if not math.isfinite(s) or s <= 0:
        raise PrivacySpecError(
            f"sensitivity must be finite and > 0, got {sensitivity!r}: give a public bound on "
            "||f(D) - f(D')|| over neighbouring datasets D, D'."
        )
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

    Why the whole element is perturbed, not only its eigenvalues (002, text after Cor 4.4):
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
    BudgetError
        Out-of-range or missing budget.

    References
    ----------
    002_26bee910280b74ae.txt, Section 4: Lemma 4.2, Corollaries 4.3 and 4.4 and the negative
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
        sigma = calibrate_gaussian(rho=rho, sensitivity=d2, method="zcdp")
        record = gaussian_record(sigma=sigma, sensitivity=d2, mechanism="eja_gaussian",
                                 reference=EJA_GAUSSIAN_REFERENCE, **extra)
    else:
        if method not in ("analytic", "classical"):
            raise PrivacySpecError(f"method must be 'analytic' or 'classical', got {method!r}.")
        sigma = calibrate_gaussian(epsilon=epsilon, delta=delta, sensitivity=d2, method=method)
        record = gaussian_record(sigma=sigma, sensitivity=d2, epsilon=epsilon, delta=delta,
                                 mechanism="eja_gaussian", reference=EJA_GAUSSIAN_REFERENCE,
                                 calibration=method, **extra)
    if accountant is not None:
        accountant.spend(record)
    z = sigma * algebra.random_normal(as_generator(rng))
    return value + z, record
