"""The two basic mechanisms every solver uses: Gaussian (vectors, l2) and exponential.

Each returns ``(output, record)``; when an ``accountant`` is given the record is spent from it
first, so an over-budget call raises :class:`cvxdp.BudgetError` *before* any noise is drawn.

Floating-point limits (computed by :func:`sampler_float_limits`).  The records state the
guarantee of the *ideal* mechanisms.  numpy's samplers approximate them:

* Gumbel (exponential mechanism): ``-log(-log U)`` with ``U`` on the grid ``k 2^-53``, so the
  noise lies in [-3.60, 36.74] and is discretised.  A candidate whose scaled score is more than
  40.34 below the best can never win, although it can under a neighbouring dataset: the sampler
  is **not** pure epsilon-DP.  Coupling it with ideal Gumbel noise bounds the total variation of
  the selected index from the ideal law by ``eta <= m 2^-53 (2 + 40.34 / e) = m 1.87e-15`` for
  m candidates, so it is (epsilon, (1 + e^epsilon) eta)-DP (:func:`exponential_float_delta`);
  exact enumeration of the same sampler on 14- to 21-bit grids gives ``eta ~ 0.3 m 2^-bits``,
  i.e. about ``m 3e-17`` at 53 bits.
* Inversion (the MWU's exponential mechanism,
  :func:`cvxdp.privacy.inversion_sampler.exponential_inversion`): one uniform on the same grid
  against the float cumulative sum of ``exp(logit - max)``; its law is within total variation
  ``~ 2.4 m 2^-53`` of the ideal one, below the Gumbel bound above.
* Gaussian: numpy's ziggurat returns values from a finite, data-independent set and never
  beyond ``|z| <= 12.23`` (the tail mass cut off is 2.3e-34); ``value + sigma z`` is then rounded
  to a float, and Mironov (CCS 2012) showed that such low-order bits can reveal the unnoised
  value.  No (epsilon, delta) bound is proven here for the exact bits of a continuous-noise
  release.  ``gaussian_mechanism(..., discrete=True)`` releases on a grid with an exact
  discrete Gaussian sampler instead (:mod:`cvxdp.privacy.discrete_gaussian`).
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np
from scipy import special

from cvxdp.citations import GAUSSIAN_MECHANISM
from cvxdp.errors import BudgetError
from cvxdp.privacy.accountant import PrivacyAccountant, PrivacyRecord
from cvxdp.privacy.budgets import ZCDP, ApproxDP, PureDP, check_epsilon, check_finite
from cvxdp.privacy.calibration import calibrate_gaussian, check_sensitivity, gaussian_epsilon
from cvxdp.privacy.discrete_gaussian import discrete_gaussian_mechanism
from cvxdp.privacy.gdp import gdp_record
from cvxdp.privacy.rng import as_generator

__all__ = [
    "gaussian_noise",
    "gaussian_record",
    "gaussian_mechanism",
    "exponential_record",
    "exponential_mechanism",
    "exponential_float_delta",
    "gumbel_argmax",
    "sampler_float_limits",
]

GAUSSIAN_REFERENCE = GAUSSIAN_MECHANISM
EXPONENTIAL_REFERENCE = (
    "McSherry & Talwar 2007 (eps-DP); Cesar & Rogers 2021, Lemma 3.2 (bounded range: eps^2/8-zCDP)"
)


def gaussian_record(
    *,
    sigma: float,
    sensitivity: float,
    epsilon: float | None = None,
    delta: float | None = None,
    reference: str = GAUSSIAN_REFERENCE,
    mechanism: str = "gaussian",
    count: int = 1,
    **params: Any,
) -> PrivacyRecord:
    """Privacy record of adding N(0, sigma^2 I) to a value of l2 sensitivity ``sensitivity``.

    The record's zCDP bound is ``D^2 / (2 sigma^2)`` (Bun & Steinke 2016, Prop. 1.6).  Its primary
    budget is ``ApproxDP(epsilon, delta)`` when ``delta`` is given (epsilon computed exactly by the
    analytic Gaussian if omitted, and checked if given), else the zCDP bound.
    """
    sigma = check_finite("sigma", sigma)
    if sigma <= 0:
        raise BudgetError(f"sigma must be > 0, got {sigma!r}.")
    D = check_sensitivity(sensitivity)
    z = ZCDP(D**2 / (2 * sigma**2))
    if delta is None:
        budget: PureDP | ApproxDP | ZCDP = z
    else:
        exact = gaussian_epsilon(sigma=sigma, delta=delta, sensitivity=D)
        if epsilon is not None and exact > epsilon * (1 + 1e-9):
            raise BudgetError(
                f"sigma={sigma:.6g} gives epsilon={exact:.6g} > claimed {epsilon:.6g} at "
                f"delta={delta:.3g}; calibrate sigma with calibrate_gaussian()."
            )
        budget = ApproxDP(exact if epsilon is None else epsilon, delta)
    # gdp_mu: the step is exactly mu-Gaussian-DP with mu = D / sigma (Dong, Roth & Su 2022);
    # the accountant composes such steps exactly.
    return PrivacyRecord(mechanism, budget, reference, zcdp=z, count=count,
                         params={"sigma": sigma, "sensitivity": D, "gdp_mu": D / sigma,
                                 **params})


#: What :func:`gaussian_noise` says when the budget has no Gaussian calibration.
GAUSSIAN_NEEDS_DELTA = ("the Gaussian mechanism needs delta > 0 (or rho=); pass epsilon= and "
                        "delta=.")


def gaussian_noise(
    budget: Any,
    *,
    sensitivity: float,
    mechanism: str = "gaussian",
    reference: str = GAUSSIAN_REFERENCE,
    ledger: str = "epsilon",
    refusal: str = GAUSSIAN_NEEDS_DELTA,
    method: str = "analytic",
    **params: Any,
) -> tuple[float, PrivacyRecord]:
    """Gaussian noise for ``budget`` and its privacy record: the one calibration every solver uses.

    ``sigma = D / sqrt(2 rho)`` for a :class:`ZCDP` budget (Bun & Steinke 2016, Prop. 1.6);
    for ``ApproxDP(epsilon, delta)`` with ``delta > 0`` the exact analytic-Gaussian sigma
    (Balle & Wang 2018, Thm 8).  Like an OpenDP measurement, the noise and its privacy map are
    defined once: the record states the guarantee of exactly this sigma.

    Parameters
    ----------
    budget : ZCDP or ApproxDP
        The step's budget.  Pure DP (or ``delta = 0``) has no Gaussian calibration.
    sensitivity : float
        l2 sensitivity D > 0 of the released value.
    mechanism, reference : str
        The record's name and citation.
    ledger : {"epsilon", "gdp"}
        How an (epsilon, delta) record states its budget: ``"epsilon"``
        (:func:`gaussian_record`) keeps the budget's epsilon (checked against sigma);
        ``"gdp"`` (:func:`cvxdp.privacy.gdp.gdp_record`) states the exact epsilon of the
        ``D / sigma``-GDP step at delta, for ledgers composed in Gaussian DP.  zCDP budgets give
        the zCDP record either way.
    refusal : str
        The :class:`~cvxdp.BudgetError` message for a budget without a Gaussian calibration
        (the caller names its own way out).
    method : {"analytic", "classical"}
        Calibration for an (epsilon, delta) budget: exact (default) or the classical
        ``sqrt(2 ln(1.25/delta)) D / epsilon`` (epsilon < 1 only; Dwork & Roth 2014, Thm A.1).
    **params
        Extra record parameters.

    Returns
    -------
    sigma : float
    record : PrivacyRecord

    Raises
    ------
    BudgetError
        Pure-DP budget, or ``delta = 0``.

    References
    ----------
    Balle & Wang 2018, Thm 8; Bun & Steinke 2016, Prop. 1.6; Dong, Roth & Su 2022, Thm 2.7.
    """
    if ledger not in ("epsilon", "gdp"):
        raise ValueError(f"ledger must be 'epsilon' or 'gdp', got {ledger!r}.")
    if isinstance(budget, ZCDP):
        sigma = calibrate_gaussian(rho=budget.rho, sensitivity=sensitivity, method="zcdp")
        if ledger == "gdp":
            return sigma, gdp_record(sigma=sigma, sensitivity=sensitivity, mechanism=mechanism,
                                     reference=reference, **params)
        return sigma, gaussian_record(sigma=sigma, sensitivity=sensitivity, mechanism=mechanism,
                                      reference=reference, **params)
    if not isinstance(budget, ApproxDP) or budget.delta <= 0:
        raise BudgetError(refusal)
    eps, delta = budget.epsilon, budget.delta
    sigma = calibrate_gaussian(epsilon=eps, delta=delta, sensitivity=sensitivity, method=method)
    if ledger == "gdp":
        return sigma, gdp_record(sigma=sigma, sensitivity=sensitivity, delta=delta,
                                 mechanism=mechanism, reference=reference, **params)
    return sigma, gaussian_record(sigma=sigma, sensitivity=sensitivity, epsilon=eps, delta=delta,
                                  mechanism=mechanism, reference=reference, **params)


def gaussian_mechanism(
    value: Any,
    *,
    sensitivity: float,
    epsilon: float | None = None,
    delta: float | None = None,
    rho: float | None = None,
    rng: None | int | np.random.Generator = None,
    accountant: PrivacyAccountant | None = None,
    discrete: bool = False,
    granularity: float | None = None,
) -> tuple[np.ndarray, PrivacyRecord]:
    """Release ``value + N(0, sigma^2 I)`` with sigma calibrated exactly.

    With ``discrete=True`` the release is ``g (round(value / g) + Y)`` with ``Y`` i.i.d. discrete
    Gaussian on the integers, drawn by an exact integer/rational sampler
    (:func:`cvxdp.privacy.discrete_gaussian.discrete_gaussian_mechanism`); use it when the exact
    bits of the output are published.  The default continuous path is proven for ideal real
    noise only (module docstring: numpy's sampler is finite and truncated at 12.23 sigma).

    Parameters
    ----------
    value : array_like
        The true value (any shape), l2 sensitivity ``sensitivity`` under the neighbouring relation.
    sensitivity : float
        l2 sensitivity D > 0.
    epsilon, delta : float
        Target (epsilon, delta): sigma by the analytic Gaussian (Balle & Wang 2018).
    rho : float
        Target zCDP instead: ``sigma = D / sqrt(2 rho)``.
    rng : None, int or Generator
    accountant : PrivacyAccountant, optional
        Spent from before noise is drawn.
    discrete : bool
        Release on the grid ``granularity * Z`` with exact discrete Gaussian noise; the record
        is ``rho = D_g^2 / (2 s^2)``-zCDP with the sensitivity rounded up to the grid (and
        (epsilon, delta) through the CKS conversion when those are the target).
    granularity : float, optional
        Grid step for ``discrete=True`` (default: the largest power of two not above
        ``sensitivity / (1024 sqrt(size))``).

    Returns
    -------
    noisy : ndarray
    record : PrivacyRecord

    References
    ----------
    Balle & Wang, ICML 2018, Thm 8; Bun & Steinke, TCC 2016, Prop. 1.6.  Discrete: Canonne,
    Kamath & Steinke, NeurIPS 2020, Thm 4 / Thm 14 and Alg. 1-3.
    """
    if discrete:
        return discrete_gaussian_mechanism(value, sensitivity=sensitivity, epsilon=epsilon,
                                           delta=delta, rho=rho, granularity=granularity,
                                           rng=rng, accountant=accountant)
    if granularity is not None:
        raise ValueError("granularity= applies to the discrete Gaussian only: pass "
                         "discrete=True with it.")
    x = np.asarray(value, dtype=float)
    if not np.all(np.isfinite(x)):
        raise ValueError("value contains NaN or inf; the Gaussian mechanism needs finite data.")
    if rho is not None:
        if epsilon is not None or delta is not None:
            raise BudgetError("give rho= or epsilon=/delta=, not both.")
        sigma, record = gaussian_noise(ZCDP(rho), sensitivity=sensitivity)
    else:
        if epsilon is None or delta is None:
            raise BudgetError("gaussian_mechanism needs epsilon= and delta= (delta > 0), or rho=.")
        sigma, record = gaussian_noise(ApproxDP(epsilon, delta), sensitivity=sensitivity)
    if accountant is not None:
        accountant.spend(record)
    gen = as_generator(rng)
    return x + gen.normal(0.0, sigma, size=x.shape), record


def exponential_record(*, epsilon: float, count: int = 1, **params: Any) -> PrivacyRecord:
    """Record of the exponential mechanism with parameter epsilon: epsilon-DP and
    epsilon^2/8-zCDP (bounded-range property, Cesar & Rogers 2021)."""
    eps = check_epsilon(epsilon)
    return PrivacyRecord("exponential", PureDP(eps), EXPONENTIAL_REFERENCE,
                         zcdp=ZCDP(eps**2 / 8), count=count, params=params)


def exponential_mechanism(
    scores: Any,
    *,
    epsilon: float,
    sensitivity: float,
    rng: None | int | np.random.Generator = None,
    accountant: PrivacyAccountant | None = None,
) -> tuple[int, PrivacyRecord]:
    """Draw index i with probability proportional to ``exp(epsilon * score_i / (2 sensitivity))``.

    Sampled by the Gumbel-max trick (argmax of scaled scores plus i.i.d. standard Gumbel noise),
    numerically safe for arbitrarily large scores; no Python loop.  The record states the ideal
    mechanism's epsilon-DP.  numpy's Gumbel sampler is not exact (its noise is discretised and
    confined to [-3.60, 36.74]), so the implemented mechanism is only
    (epsilon, (1 + e^epsilon) m 1.87e-15)-DP for m candidates (``params["float_delta"]``, see
    :func:`exponential_float_delta`), not pure.

    Parameters
    ----------
    scores : array_like, shape (m,)
        Utility of each candidate (higher is better); each changes by at most ``sensitivity``
        between neighbours.
    epsilon : float
    sensitivity : float
    rng, accountant : see :func:`gaussian_mechanism`.

    Returns
    -------
    index : int
    record : PrivacyRecord

    References
    ----------
    McSherry & Talwar, FOCS 2007; Song, Xue & Zhang (2025) Def 3.11 / Lemma 3.12;
    Cesar & Rogers 2021 for the zCDP bound.
    """
    s = np.asarray(scores, dtype=float).ravel()
    if s.size == 0:
        raise ValueError("exponential_mechanism needs at least one candidate.")
    if not np.all(np.isfinite(s)):
        raise ValueError("scores contain NaN or inf.")
    D = check_sensitivity(sensitivity)
    record = exponential_record(epsilon=epsilon, sensitivity=D, candidates=int(s.size),
                                float_delta=exponential_float_delta(candidates=int(s.size),
                                                                    epsilon=epsilon))
    if accountant is not None:
        accountant.spend(record)
    gen = as_generator(rng)
    logits = (record.budget.epsilon / (2.0 * D)) * s
    return gumbel_argmax(logits, gen), record


def gumbel_argmax(logits: np.ndarray, rng: np.random.Generator) -> int:
    """The one sampler of every exponential mechanism in cvxdp: ``argmax(logits + G)``, ``G``
    i.i.d. standard Gumbel (Gumbel-max trick).  Its law is ``softmax(logits)`` up to numpy's
    float sampler, whose distance is :func:`exponential_float_delta` for the record."""
    return int(np.argmax(logits + rng.gumbel(size=logits.shape[0])))


def exponential_probabilities(scores: Any, *, epsilon: float, sensitivity: float) -> np.ndarray:
    """The exact selection probabilities of :func:`exponential_mechanism` (for tests/audits)."""
    s = np.asarray(scores, dtype=float).ravel()
    logits = (check_epsilon(epsilon) / (2.0 * check_sensitivity(sensitivity))) * s
    logits -= logits.max()
    p = np.exp(logits)
    return p / p.sum()


_GRID_BITS = 53  # numpy Generator.random / next_double: k 2^-53, k uniform in [0, 2^53)
_ZIGGURAT_R = 3.6541528853610087963519472518  # numpy's ziggurat_nor_r (start of the tail)


def sampler_float_limits() -> dict[str, float]:
    """The floating-point limits of numpy's Gumbel and normal samplers, computed.

    Returns
    -------
    dict
        ``gumbel_min``, ``gumbel_max``: the range of ``-log(-log U)``, ``U = 1 - k 2^-53``,
        ``k = 1 .. 2^53 - 1`` (numpy's ``random_gumbel`` rejects ``U = 1``);
        ``gumbel_tv_per_candidate``: ``2^-53 (2 + (gumbel_max - gumbel_min) / e)``, the bound on
        the total variation between the sampled and the ideal argmax per candidate (coupling
        ``U`` with a continuous uniform rounded up to the grid: the bottom and rejected cells
        cost ``2 * 2^-53``; elsewhere a candidate's noise moves by ``Delta_j`` with
        ``E[Delta_j] <= 2^-53 (gumbel_max - gumbel_min)``, and the best of the others has
        density ``<= 1/e`` (a Gumbel), so its win changes with probability ``<= E[Delta_j]/e``);
        ``normal_max_abs``: the largest ``|z|`` numpy's ziggurat can return
        (``r + min(53 ln2 / r, sqrt(2 * 53 ln2))``); ``normal_tail_mass``: ``P[|N(0,1)| >
        normal_max_abs]``.
    """
    h = math.ldexp(1.0, -_GRID_BITS)
    g_max = -math.log(-math.log1p(-h))  # U = 1 - 2^-53
    g_min = -math.log(-math.log(h))  # U = 2^-53
    y_max = -math.log1p(-(1.0 - h))  # -log1p(-next_double) at its largest: 53 ln 2
    x_max = min(y_max / _ZIGGURAT_R, math.sqrt(2.0 * y_max))  # accept iff 2 y > x^2
    z_max = _ZIGGURAT_R + x_max
    return {
        "gumbel_min": g_min,
        "gumbel_max": g_max,
        "gumbel_tv_per_candidate": h * (2.0 + (g_max - g_min) / math.e),
        "normal_max_abs": z_max,
        "normal_tail_mass": float(2.0 * special.ndtr(-z_max)),
    }


def exponential_float_delta(*, candidates: int, epsilon: float) -> float:
    """delta of :func:`exponential_mechanism` as implemented with numpy's Gumbel sampler.

    If the sampled law is within total variation ``eta`` of the ideal (epsilon-DP) law on every
    dataset, then ``P(S) <= P_ideal(S) + eta <= e^eps P_ideal'(S) + eta <= e^eps P'(S) +
    (1 + e^eps) eta``; ``eta = candidates * gumbel_tv_per_candidate``
    (:func:`sampler_float_limits`).
    """
    eps = check_epsilon(epsilon)
    eta = int(candidates) * _gumbel_tv_per_candidate()
    if eps + math.log(eta) >= 0.0:  # (1 + e^eps) eta >= 1: vacuous (and e^eps may overflow)
        return 1.0
    return min(1.0, (1.0 + math.exp(eps)) * eta)


@functools.cache
def _gumbel_tv_per_candidate() -> float:
    return sampler_float_limits()["gumbel_tv_per_candidate"]
