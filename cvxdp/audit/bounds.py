"""Confidence bounds and tests behind the auditor: Clopper--Pearson, the epsilon lower bound, its
p-value, and family-wise corrections (Bonferroni, Holm) for several audits at once.

For an event S, (epsilon, delta)-DP implies ``P[M(D) in S] <= e^epsilon P[M(D') in S] + delta``,
hence ``epsilon >= log((P[M(D) in S] - delta) / P[M(D') in S])``.  Replacing the numerator's
probability by a one-sided Clopper--Pearson lower bound and the denominator's by an upper bound,
each at level ``alpha / 2``, gives a lower bound on epsilon that holds with probability at least
``1 - alpha`` (union bound over the two intervals), as in Jagielski et al. 2020 and Nasr et al.
2021.  The bound is monotone in ``alpha``, so ``p = inf{alpha : bound(alpha) > epsilon_claimed}``
is a valid p-value for the null hypothesis "the mechanism is (epsilon_claimed, delta)-DP".

References
----------
C. J. Clopper, E. S. Pearson, "The use of confidence or fiducial limits illustrated in the case of
the binomial", Biometrika 26 (1934).
M. Jagielski, J. Ullman, A. Oprea, "Auditing Differentially Private Machine Learning: How Private
is Private SGD?", NeurIPS 2020 (Clopper--Pearson bounds on the two event probabilities).
M. Nasr, S. Song, A. Thakurta, N. Papernot, N. Carlini, "Adversary Instantiation: Lower Bounds
for Differentially Private Machine Learning", IEEE S&P 2021.
S. Holm, "A simple sequentially rejective multiple test procedure", Scand. J. Statist. 6 (1979).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

__all__ = ["clopper_pearson", "epsilon_lower_bound", "epsilon_p_value", "family_levels"]


def clopper_pearson(k: np.ndarray, n: int | np.ndarray, alpha: float, side: str) -> np.ndarray:
    """One-sided Clopper--Pearson bound on a binomial proportion at level ``alpha``.

    Parameters
    ----------
    k : array_like
        Successes (non-integer values are accepted: the Beta quantile is continuous in ``k``).
    n : int or array_like
        Trials.
    alpha : float
        The bound fails with probability at most ``alpha``.
    side : {"lower", "upper"}

    Returns
    -------
    numpy.ndarray
        ``Beta^{-1}(alpha; k, n - k + 1)`` (lower, 0 at ``k = 0``) or
        ``Beta^{-1}(1 - alpha; k + 1, n - k)`` (upper, 1 at ``k = n``).

    References
    ----------
    Clopper & Pearson, Biometrika 1934.
    """
    k = np.asarray(k, dtype=float)
    n = np.asarray(n, dtype=float)
    if side == "lower":
        return np.where(k > 0, stats.beta.ppf(alpha, np.maximum(k, 1e-300), n - k + 1), 0.0)
    if side == "upper":
        # isf, not ppf(1 - alpha): 1 - alpha rounds to 1 below alpha ~ 1e-16
        return np.where(k < n, stats.beta.isf(alpha, k + 1, np.maximum(n - k, 1e-300)), 1.0)
    raise ValueError(f"side must be 'lower' or 'upper', got {side!r}")


def epsilon_lower_bound(kp: np.ndarray, kq: np.ndarray, n: int, delta: float, alpha: float,
                        n_q: int | None = None) -> np.ndarray:
    """``max(0, log((p_lower - delta) / q_upper))`` for event counts ``kp`` on D, ``kq`` on D'.

    Parameters
    ----------
    kp, kq : array_like
        Times the event occurred in ``n`` runs on D and in ``n_q`` runs on D'.
    n : int
        Runs on D (and on D' unless ``n_q`` is given).
    delta : float
        The claimed delta.
    alpha : float
        Total failure probability, split evenly between the two Clopper--Pearson bounds.
    n_q : int, optional

    Returns
    -------
    numpy.ndarray
        A lower bound on epsilon at ``delta``, valid with probability ``>= 1 - alpha`` for each
        event fixed before the counts were drawn.
    """
    p_lo = clopper_pearson(kp, n, alpha / 2, "lower")
    q_hi = clopper_pearson(kq, n if n_q is None else n_q, alpha / 2, "upper")
    num = p_lo - delta
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(num > 0, np.log(np.maximum(num, 1e-300) / q_hi), 0.0)
    return np.maximum(out, 0.0)


def epsilon_p_value(kp: int, kq: int, n: int, n_q: int, delta: float, epsilon: float) -> float:
    """p-value of "(epsilon, delta)-DP" from one held-out event: the smallest ``alpha`` at which
    :func:`epsilon_lower_bound` exceeds ``epsilon`` (1 if none does).

    Under the null, ``P[p <= a] <= a`` for every ``a``, because ``{p <= a}`` is the event that the
    level-``a`` bound exceeds the true epsilon.  Found by bisection on ``log(alpha)`` (the bound
    is nondecreasing in ``alpha``), to a relative accuracy of about 1e-6.
    """

    def exceeds(a: float) -> bool:
        return float(epsilon_lower_bound(np.array(kp), np.array(kq), n, delta, a, n_q)) > epsilon

    if not exceeds(1.0 - 1e-12):
        return 1.0
    lo, hi = math.log(1e-300), math.log(1.0 - 1e-12)
    if exceeds(1e-300):
        return 1e-300
    for _ in range(60):  # invariant: fails at lo, holds at hi
        mid = 0.5 * (lo + hi)
        if exceeds(math.exp(mid)):
            hi = mid
        else:
            lo = mid
    return math.exp(hi)


def family_levels(p_values: np.ndarray, alpha: float, method: str = "holm"
                  ) -> tuple[np.ndarray, np.ndarray]:
    """Per-test levels and rejections that keep the family-wise error rate at most ``alpha``.

    Parameters
    ----------
    p_values : array_like, shape (m,)
    alpha : float
        Family-wise level: the probability of rejecting any true null is at most ``alpha``.
    method : {"holm", "bonferroni"}
        Bonferroni tests each hypothesis at ``alpha / m``.  Holm's step-down procedure sorts the
        p-values and tests the j-th smallest (j = 1..m) at ``alpha / (m - j + 1)``, stopping at
        the first acceptance; it is uniformly at least as powerful as Bonferroni.

    Returns
    -------
    levels : numpy.ndarray
        The level each test was held to (for Holm, tests after the first acceptance get the
        level of that step: they are accepted).
    rejected : numpy.ndarray of bool

    References
    ----------
    Holm, Scand. J. Statist. 1979.
    """
    p = np.asarray(p_values, dtype=float).ravel()
    m = p.size
    if m == 0:
        return np.zeros(0), np.zeros(0, dtype=bool)
    if method == "bonferroni":
        levels = np.full(m, alpha / m)
        return levels, p <= levels
    if method != "holm":
        raise ValueError(f"method must be 'holm' or 'bonferroni', got {method!r}")
    order = np.argsort(p, kind="stable")
    levels, rejected = np.empty(m), np.zeros(m, dtype=bool)
    stopped = False
    for j, i in enumerate(order):
        level = alpha / (m - j) if not stopped else levels[order[j - 1]]
        levels[i] = level
        if not stopped and p[i] <= level:
            rejected[i] = True
        else:
            stopped = True
    return levels, rejected
