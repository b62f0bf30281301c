"""Clip private data into a public domain, and release how many records were clipped, noisily.

A record that breaks a public domain (a point outside the public box, a row longer than the
public ``row_bound``, a matrix entry above the public bound) is *clipped* (projected into the
domain) inside the mechanism, never refused: a refusal is a deterministic function of the data
and leaks whether some record lies outside the domain.  Clipping acts record by record, so
neighbouring datasets stay neighbouring (replace-one stays replace-one, add/remove stays
add/remove), and every sensitivity computed from the public domain holds for the clipped data.

The number of clipped records is itself private (it changes by at most 1 between neighbours).
It is never released exactly; :func:`noisy_count` releases it with noise and a privacy record
that the caller spends from its accountant, so the user can learn that a bound was wrong.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from cvxdp.citations import LAPLACE_MECHANISM, ZCDP_GAUSSIAN
from cvxdp.errors import BudgetError, PrivacySpecError
from cvxdp.privacy.accountant import PrivacyRecord
from cvxdp.privacy.budgets import ZCDP, PureDP
from cvxdp.privacy.rng import as_generator

__all__ = ["clip_to_box", "clip_rows_l2", "count_share", "noisy_count", "COUNT_SHARE",
           "NOISY_COUNT_REFERENCE"]

#: default share of a solve's budget spent on the opt-in noisy count (``count_clipped=True``)
COUNT_SHARE = 0.1

NOISY_COUNT_REFERENCE = (f"{LAPLACE_MECHANISM} (eps-DP); {ZCDP_GAUSSIAN} (rho-zCDP); a count "
                         "has sensitivity 1")


def clip_to_box(points: Any, lo: Any, hi: Any) -> tuple[np.ndarray, int]:
    """Project every row of ``points`` onto the public box ``[lo, hi]`` (coordinate-wise).

    Returns
    -------
    clipped : ndarray
        A new array (the input is not modified); rows inside the box are unchanged.
    count : int
        Number of rows that were moved.  PRIVATE: release it only through :func:`noisy_count`.
    """
    p = np.asarray(points, dtype=float)
    lo = np.broadcast_to(np.asarray(lo, dtype=float), p.shape[1:])
    hi = np.broadcast_to(np.asarray(hi, dtype=float), p.shape[1:])
    outside = np.any((p < lo) | (p > hi), axis=-1) if p.ndim > 1 else (p < lo) | (p > hi)
    count = int(np.count_nonzero(outside))
    return (np.clip(p, lo, hi) if count else p.copy()), count


def clip_rows_l2(rows: Any, bound: float) -> tuple[np.ndarray, int]:
    """Scale every row with l2 norm above ``bound`` down to norm ``bound``.

    Returns ``(clipped, count)``; ``count`` is PRIVATE, as in :func:`clip_to_box`.
    Overflow of a huge row's norm is handled (the row is scaled to the bound), with no warning.
    Every row with norm above ``bound`` is scaled (the sensitivity proofs need ``<= bound``), but
    only rows above ``bound * (1 + 4u)`` (``u = 2^-53``) are *counted*: a row normalised to the
    bound can have a computed norm one rounding above it, and is not a record that broke the
    domain.
    """
    d = np.asarray(rows, dtype=float)
    with np.errstate(over="ignore", invalid="ignore"):
        norms = np.linalg.norm(d, axis=-1)
        big = norms > bound
        if not np.any(big):
            return d.copy(), 0
        # a norm that overflowed to inf: rescale the row by its largest entry first
        safe = d / np.maximum(np.max(np.abs(d), axis=-1, keepdims=True), 1e-300)
        safe_norms = np.linalg.norm(safe, axis=-1)
    out = d.copy()
    out[big] = safe[big] * (bound / safe_norms[big])[..., None]
    return out, int(np.count_nonzero(norms > bound * (1.0 + 4.0 * 2.0 ** -53)))


def count_share(count_clipped: Any, *, default: float = COUNT_SHARE,
                at_most: float | None = None) -> float:
    """The share of a solve's budget for the opt-in noisy count (a public argument).

    ``False`` / ``None``: 0 (no count is released); ``True``: ``default``; a number in
    ``(0, 1)`` (and ``<= at_most`` when given): that share.  The caller gives the rest of the
    budget to the estimator, so the total is unchanged.

    Raises
    ------
    PrivacySpecError
        Anything else (the message names the valid range).
    """
    if count_clipped is False or count_clipped is None:
        return 0.0
    if count_clipped is True:
        return float(default)
    ok = isinstance(count_clipped, (int, float)) and not isinstance(count_clipped, bool)
    share = float(count_clipped) if ok else math.nan
    top = 1.0 if at_most is None else float(at_most)
    if not (0 < share < 1 and share <= top):
        rng_txt = "(0, 1)" if at_most is None else f"(0, {top:g}]"
        raise PrivacySpecError(f"count_clipped must be True/False or a share of the budget in "
                               f"{rng_txt}, got {count_clipped!r}.")
    return share


def noisy_count(count: int, *, rng: Any, epsilon: float | None = None,
                rho: float | None = None, what: str = "clipped records"
                ) -> tuple[float, PrivacyRecord]:
    """Release a count of sensitivity 1 with noise: Laplace (``epsilon=``) or Gaussian (``rho=``).

    The caller spends the returned record from its accountant *before* publishing the value.

    Parameters
    ----------
    count : int
        The exact (private) count.
    rng : Generator
    epsilon : float, optional
        Pure DP: ``count + Laplace(1/epsilon)``.
    rho : float, optional
        zCDP: ``count + N(0, 1/(2 rho))``.
    what : str
        What is counted (goes into the record's note).

    Returns
    -------
    value : float
        The noisy count (not rounded, not clipped at 0: post-processing is the user's choice).
    record : PrivacyRecord
    """
    if (epsilon is None) == (rho is None):
        raise PrivacySpecError("noisy_count needs exactly one of epsilon= or rho=.")
    gen = as_generator(rng)
    if epsilon is not None:
        eps = float(epsilon)
        if not (math.isfinite(eps) and eps > 0):
            raise BudgetError(f"the clipped-count budget epsilon must be a finite number > 0, "
                              f"got {epsilon!r}.")
        rec = PrivacyRecord("laplace", PureDP(eps), NOISY_COUNT_REFERENCE,
                            params={"scale": 1.0 / eps, "sensitivity": 1.0, "note": what})
        return float(count) + float(gen.laplace(0.0, 1.0 / eps)), rec
    r = float(rho)
    if not (math.isfinite(r) and r > 0):
        raise BudgetError(f"the clipped-count budget rho must be a finite number > 0, got "
                          f"{rho!r}.")
    sigma = 1.0 / math.sqrt(2.0 * r)
    rec = PrivacyRecord("gaussian", ZCDP(r), NOISY_COUNT_REFERENCE,
                        params={"sigma": sigma, "sensitivity": 1.0, "note": what})
    return float(count) + float(gen.normal(0.0, sigma)), rec
