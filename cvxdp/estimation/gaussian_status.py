"""The unbounded Gaussian learner's answer and its status, decided from public values and
released estimates only (the status is a promise: ``optimal_inaccurate`` only when the stated
accuracy bound applies).

References
----------
Ashtiani & Liaw (2022), §5.1 (the accuracy bound behind ``required_n``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import cvxpy as cp
import numpy as np

from cvxdp.estimation.gaussian_bounded import bounded_error, bounds_margin_ok
from cvxdp.estimation.gaussian_steps import SampleRequirement
from cvxdp.privacy.accountant import PrivacyAccountant, PrivacyRecord
from cvxdp.privacy.budgets import ApproxDP
from cvxdp.solution import PrivateSolution

__all__ = ["GaussianSolution", "bounded_status", "release_status", "step_budget"]


@dataclass(repr=False)  # keep PrivateSolution's concise repr
class GaussianSolution(PrivateSolution):
    """Result of :func:`private_gaussian`.

    Attributes
    ----------
    mean : (d,) ndarray or None
        Private mean (None when a private test returned ⊥).
    covariance : (d, d) ndarray or None
        Private covariance, PSD of rank ``rank``.
    rank : int or None
        Dimension of the privately recovered subspace range(Sigma).
    samples_required : SampleRequirement
        What the accuracy bounds ask for (compare with ``n``).
    step_records : dict
        Each step's privacy records (with their lemma citations); the report's ledger holds the
        single parallel-composition record over the steps.
    """

    mean: np.ndarray | None = None
    covariance: np.ndarray | None = None
    rank: int | None = None
    samples_required: SampleRequirement | None = None
    step_records: dict[str, tuple[PrivacyRecord, ...]] = field(default_factory=dict)



def bounded_status(n: int, b: Any, mean: np.ndarray, cov: np.ndarray, info: dict,
                    alpha: float, epsilon: float, delta: float) -> tuple[str, bool, str]:
    """Plug-in claim from released values only: the released covariance must be non-singular,
    put the bounds >= 3 standard deviations from the released mean (clipping bias small), and
    make :func:`bounded_error` <= alpha."""
    tail = f" The release is ({epsilon}, {delta})-DP."
    e_mean, e_cov = bounded_error(n, b, cov, info)
    if not math.isfinite(e_cov):
        return (cp.USER_LIMIT, False, "the released covariance is singular (noise swamps a "
                "direction): the bounds are too wide for n and the budget." + tail)
    if not bounds_margin_ok(b, mean, cov):
        return (cp.USER_LIMIT, False, "the released mean and covariance put the public bounds "
                "within 3 standard deviations of the mean: clipping may bias both." + tail)
    if max(e_mean, e_cov) > alpha:
        return ("user_limit", False, f"at the released covariance the expected errors are "
                f"{e_mean:.3g} (Mahalanobis mean) and {e_cov:.3g} (whitened Frobenius), above "
                f"alpha={alpha}: more samples, a larger budget or tighter bounds are needed."
                + tail)
    return ("optimal_inaccurate", True, f"at the released covariance the expected errors "
            f"{e_mean:.3g} (Mahalanobis mean) and {e_cov:.3g} (whitened Frobenius) are <= "
            f"alpha={alpha} and the bounds are >= 3 standard deviations away (plug-in check on "
            "released values)")


def release_status(n: int, req: SampleRequirement, info: dict[str, Any], bottom: bool,
            epsilon: float, delta: float) -> tuple[str, bool, str]:
    """Status, whether the accuracy claim holds, and why, from public values and releases only.

    The claim (Mahalanobis mean error and whitened Frobenius covariance error <= alpha with
    probability >= 1 - beta) is :func:`required_n`'s bound, so it needs ``n >= required_n``
    (public: n, d, budget, alpha, beta).  The practical schedule budgets for a 1e6 tightening,
    so a larger condition number can leave directions unresolved even then; the count of
    directions whose released eigenvalue is below twice the final round's noise level
    (``info["covariance"]["unresolved"]``, a function of the noisy covariance only) says so.

    Returns
    -------
    ("optimal_inaccurate", True, claim) when both hold; ``"user_limit"`` when the released
    signal shows unresolved directions; ``"user_limit"`` when only n is below required_n;
    ``"solver_error"`` on ⊥.
    """
    reasons = []
    short = _shortfall(info.get("block_sizes", {}), req)
    if bottom:
        return ("solver_error", False, f"a private test returned ⊥ at step "
                f"{info.get('bottom_step', '?')!r} (itself a DP output; nothing else released)"
                + (f"; public cause: {short}" if short else ""))
    unresolved = int(info.get("covariance", {}).get("unresolved", 0))
    if unresolved:
        reasons.append(f"the released covariance is not resolved in {unresolved} direction(s) "
                       "(there its whitened eigenvalue is below twice the final round's noise "
                       "level psi, so its relative error can exceed 1/2): more samples are "
                       "needed (or a smaller condition number)")
    if n < req.total:
        reasons.append(f"n={n} is below required_n={req.total:.3g} ({req.basis}) for "
                       f"alpha={req.alpha}, beta={req.beta}: the accuracy bound does not apply"
                       + (f" ({short})" if short else ""))
    if reasons:
        return (cp.USER_LIMIT, False,
                "; ".join(reasons) + f". The release is still ({epsilon}, {delta})-DP.")
    return ("optimal_inaccurate", True,
            f"n >= required_n={req.total:.3g} and every direction resolved: Mahalanobis mean "
            f"error and whitened Frobenius covariance error <= alpha={req.alpha} with "
            f"probability >= {1 - req.beta:g} ({req.basis})")


def _shortfall(sizes: dict[str, int], req: SampleRequirement) -> str:
    """Steps whose public block size is below what ``required_n`` asks of them (public)."""
    bad = [f"{k}: {sizes[k]} < {req.steps[k]:.0f}" for k in sizes
           if k in req.steps and sizes[k] + 2 < req.steps[k]]
    return ("blocks below their requirement (samples), " + ", ".join(bad)) if bad else ""


def step_budget(records: tuple[PrivacyRecord, ...], delta: float) -> tuple[float, float]:
    acct = PrivacyAccountant(ApproxDP(1e9, delta))
    for r in records:
        acct.spend(r)
    b = acct.spent
    return float(b.epsilon), float(getattr(b, "delta", 0.0))

