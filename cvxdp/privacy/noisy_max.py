"""Report-noisy-max with Gaussian noise, accounted in Gaussian differential privacy.

A vector of scores ``u(D) in R^m`` whose l2 sensitivity (the largest ``||u(D) - u(D')||_2`` over
neighbours) is ``Delta`` is released as ``u(D) + N(0, sigma^2 I)``, ``sigma = Delta / mu``: a
Gaussian mechanism, hence exactly ``mu``-GDP (Dong, Roth & Su 2022, Thm 2.7), composable with
every other Gaussian step of a run by ``mu^2 = sum_k mu_k^2`` (their Cor. 3.3).  The index of the
largest (or smallest) noisy score is a post-processing of that release, so it is private at the
same ``mu``; releasing the whole noisy vector costs nothing more.  Unlike the exponential
mechanism (McSherry & Talwar 2007), whose guarantee is pure epsilon-DP and composes with Gaussian
steps only through zCDP, this selection lives in the same exact GDP ledger as the Gaussian
releases around it.

The sensitivity is the caller's to prove: with per-candidate bounds ``Delta_j`` on
``|u_j(D) - u_j(D')|`` (one record changes every coordinate at once, in the worst case),
``Delta = sqrt(sum_j Delta_j^2)`` (:func:`vector_sensitivity`).

References
----------
Dong, Roth & Su (2022), "Gaussian differential privacy", Thm 2.7 and Cor. 3.3; McSherry &
Talwar (2007), "Mechanism design via differential privacy" (the exponential mechanism);
Dwork & Roth (2014), "The algorithmic foundations of differential privacy", Sec. 3.3
(report-noisy-max).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import special

from cvxdp.citations import GDP_COMPOSITION, GDP_GAUSSIAN
from cvxdp.errors import BudgetError
from cvxdp.privacy.budgets import check_finite
from cvxdp.privacy.calibration import check_sensitivity

__all__ = ["vector_sensitivity", "gdp_noise_scale", "noisy_scores", "noisy_argmax",
           "two_way_probability", "NOISY_MAX_REFERENCE"]

NOISY_MAX_REFERENCE = (f"{GDP_GAUSSIAN}; {GDP_COMPOSITION}; report-noisy-max as "
                       "post-processing of the noisy score vector")


def vector_sensitivity(per_candidate: Any) -> float:
    """``sqrt(sum_j Delta_j^2)``: the l2 sensitivity of a score vector whose ``j``-th score
    moves by at most ``Delta_j`` between neighbours (all at once, in the worst case)."""
    c = np.asarray(per_candidate, dtype=float).ravel()
    if c.size == 0 or not np.all(np.isfinite(c)) or np.any(c < 0):
        raise BudgetError(f"per-candidate sensitivities must be finite and >= 0, got {c!r}.")
    return float(math.sqrt(float(np.sum(c * c))))


def gdp_noise_scale(*, sensitivity: float, mu: float) -> float:
    """``sigma = Delta / mu``: the Gaussian mechanism with this sd is exactly ``mu``-GDP
    (Dong, Roth & Su 2022, Thm 2.7)."""
    mu = check_finite("mu", mu)
    if mu <= 0:
        raise BudgetError(f"mu must be > 0, got {mu!r}.")
    return check_sensitivity(sensitivity) / mu


def noisy_scores(scores: Any, *, sensitivity: float, mu: float, rng: np.random.Generator
                 ) -> tuple[np.ndarray, float]:
    """Release ``scores + N(0, sigma^2 I)`` at ``mu``-GDP; returns the noisy vector and sigma."""
    s = np.asarray(scores, dtype=float).ravel()
    if s.size == 0 or not np.all(np.isfinite(s)):
        raise ValueError("scores must be a non-empty vector of finite numbers.")
    sigma = gdp_noise_scale(sensitivity=sensitivity, mu=mu)
    return s + sigma * rng.standard_normal(s.size), sigma


def noisy_argmax(noisy: Any) -> int:
    """The index of the largest released score (post-processing; ties to the first)."""
    return int(np.argmax(np.asarray(noisy, dtype=float)))


def two_way_probability(score_a: float, score_b: float, sigma: float) -> float:
    """``P[noisy a > noisy b] = Phi((a - b) / (sigma sqrt 2))``: the exact law of a two-way
    report-noisy-max (for audits)."""
    return float(special.ndtr((score_a - score_b) / (sigma * math.sqrt(2.0))))
