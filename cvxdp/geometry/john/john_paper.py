"""``preset="paper"``: Algorithm 1 (Fast DP-JE) as printed -- NOT differentially private as proven.

Refused by default (:class:`~cvxdp.errors.PrivacyGuaranteeError`): a release whose proof does not
hold is not offered under a privacy budget.  With ``unsafe_paper_preset=True`` it runs for
comparison only; its report then says ``guarantee="none"`` and ``epsilon=inf`` (no guarantee at
all), and a :class:`UnsafePrivacyWarning` is raised.  The gaps (our reading of
Gu, Li, Liang, Shi, Song & Yu 2024; docs/john.md), each of which breaks the claimed
(epsilon, delta):

* ``A'VA`` is released without noise although it reads A again: it is an exact function of the
  private rows (two eps0-close neighbours give different deterministic outputs, a distinguisher
  with delta = 1);
* the noise is multiplicative, ``w_{k+1} = wbar (1 + z)``, while Lemma 6.6 analyses additive noise;
* z is the truncated N^T(0, sigma^2, [-0.5, 0.5]) of Def 6.5 (the analysis; Line 19 prints an
  untruncated Gaussian, which can make weights negative); shifted truncated supports do not
  overlap, so the moments-accountant bound does not certify it;
* sigma uses the data-dependent L of Thm C.15 (computed here from the private singular values of
  ``W_1^{1/2} A``) and the unspecified constant c2 = 1 of Thm 6.7.

With the paper's own constants (``s = 8000/xi`` sketch rows, ``N = xi0^-2 d log(nd/delta1)``
samples) the sketch and the sampling are the identity for every d <= 8000/xi and n <= N, so the
leverage scores are computed exactly.  ``T = ceil(8 log(n/d) / xi)`` (Lemma E.4 with xi0 = xi/8).
"""

from __future__ import annotations

import math
import warnings
from typing import TYPE_CHECKING, Any

import numpy as np
from scipy import stats

from cvxdp.citations import JOHN_ELLIPSOID, cite
from cvxdp.errors import BudgetError, PrivacyGuaranteeError
from cvxdp.geometry.john.ellipsoid import Ellipsoid
from cvxdp.geometry.john.john_iter import gram, leverage_ratios
from cvxdp.geometry.john.john_sensitivity import paper_lipschitz
from cvxdp.geometry.john.release import finish
from cvxdp.privacy.accountant import PrivacyReport
from cvxdp.privacy.budgets import ApproxDP

if TYPE_CHECKING:  # annotations only: the problem class imports the algorithms, not back
    from cvxdp.geometry.john.john import JohnEllipsoidProblem

__all__ = ["paper_john", "PROOF_GAPS", "UnsafePrivacyWarning", "refuse_paper_preset"]

PROOF_GAPS = (
    "A'VA released without noise though it reads A again (an exact function of the private rows)",
    "multiplicative noise wbar(1+z), but Lemma 6.6 analyses additive f(D)+z",
    "truncated noise on shifted supports: privacy loss unbounded on the non-overlap",
    "L (Thm C.15) and sigma computed from private singular values",
    "constant c2 of Thm 6.7 unspecified (taken as 1)",
)


class UnsafePrivacyWarning(UserWarning):
    """A release that carries no differential-privacy guarantee was made on explicit request."""


def refuse_paper_preset() -> PrivacyGuaranteeError:
    """The error raised for ``preset="paper"`` without ``unsafe_paper_preset=True``."""
    return PrivacyGuaranteeError(
        f"preset='paper' (Algorithm 1 of {JOHN_ELLIPSOID} as printed) is not "
        "differentially private: it releases A'VA without noise (an exact function of the "
        "private rows), its noise is multiplicative and truncated on shifted supports, and its "
        "sigma is computed from the data's singular values. Use the default preset (proven DP), "
        "or pass unsafe_paper_preset=True to run it for comparison with epsilon=inf (no "
        "guarantee).")


def paper_john(problem: JohnEllipsoidProblem, *, budget: Any, accuracy: float, closeness: float,
               rng: np.random.Generator, reference: bool, t0: float) -> Any:
    """Algorithm 1 of Gu et al. (2024) with Thm 6.7's sigma (c2 = 1): NOT private.

    Only reached with ``unsafe_paper_preset=True``.  The budget only sets the paper's noise
    scale; the report says ``guarantee="none"``, ``epsilon=inf``, and an
    :class:`UnsafePrivacyWarning` is raised.

    References
    ----------
    Gu et al. (2024), Algorithm 1, Def 6.5, Thm 6.7/D.7, Thm C.15.
    """
    if not isinstance(budget, ApproxDP) or budget.delta <= 0:
        raise BudgetError("preset='paper' is stated for (epsilon, delta) with delta > 0.")
    warnings.warn(UnsafePrivacyWarning(
        "preset='paper' with unsafe_paper_preset=True: the release is NOT differentially "
        "private (A'VA is released without noise); its report says epsilon=inf."), stacklevel=3)
    A = problem.data
    n, d = A.shape
    T = math.ceil(8 * math.log(max(n / d, 1.0 + 1e-12)) / accuracy)
    sv = np.linalg.svd(A, compute_uv=False) * math.sqrt(d / n)  # W_1^{1/2} A, data-dependent
    L = paper_lipschitz(n=n, closeness=closeness, sigma_max=float(sv[0] / math.sqrt(d / n)),
                        sigma_min_w=float(sv[-1]), kappa_w=float(sv[0] / sv[-1]))
    beta = L * closeness
    if 2 * beta >= 1:
        # L is computed from the private data: the message names no value (unsafe path anyway)
        raise PrivacyGuaranteeError(
            "Thm 6.7 needs 2 L eps0 < 1, which fails for this data; decrease closeness=.")
    sigma = beta * math.sqrt(T * math.log(1 / budget.delta)) / ((1 - 2 * beta) * budget.epsilon)
    trunc = stats.truncnorm(-0.5 / sigma, 0.5 / sigma, loc=0.0, scale=sigma)
    w = np.full(n, d / n)
    total = np.zeros(n)
    for _ in range(T):
        total += w
        w = w * leverage_ratios(A, w) * (1 + trunc.rvs(size=n, random_state=rng))
    u = total / T
    v = d * u / u.sum()
    E = Ellipsoid.from_matrix(gram(A, v), weights=v)
    info = {"method": "paper-alg1", "preset": "paper", "unsafe": True, "iterations": T,
            "proof_gaps": PROOF_GAPS}
    report = PrivacyReport(
        guarantee="none", epsilon=math.inf, delta=1.0, rho=math.inf,
        neighbouring=f"eps0-close rows, eps0={closeness:g} (no guarantee holds)",
        theorem=cite(JOHN_ELLIPSOID, "Alg 1 as printed: NOT private (A'VA without noise)"),
        details=info)
    return finish(problem, E, report, weights=v, iterations=T, t0=t0, info=info,
                  reference=reference)
