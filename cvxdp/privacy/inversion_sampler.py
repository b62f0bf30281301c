"""The exponential mechanism sampled by inversion: one uniform and ``m`` exps per draw.

:func:`exponential_inversion` draws ``j`` with probability ``softmax(logits)_j``, the law of the
exponential mechanism (McSherry & Talwar 2007) and of the Gumbel-max trick
(:func:`cvxdp.privacy.mechanisms.gumbel_argmax`), from ONE uniform ``u``: with ``w = exp(logits
- max)`` and ``C_j = w_1 + ... + w_j``, it returns the first ``j`` with ``C_j > u C_m``.  For a
continuous uniform, ``P[C_{j-1} <= u C_m < C_j] = (C_j - C_{j-1}) / C_m = w_j / sum w``:
exactly the exponential mechanism.  It costs ``m`` exps where the Gumbel-max trick costs ``m``
Gumbels (``2 m`` logs and ``m`` uniforms); the MWU loop (:mod:`cvxdp.solvers.mwu.loop` and its
compiled kernel) runs the same arithmetic in the same order on a block of pre-drawn uniforms.

In floating point the law is within total variation :func:`inversion_tv` of the ideal one (about
``2.4 m 2^-53``, where numpy's Gumbel sampler has ``16.8 m 2^-53``,
:func:`cvxdp.privacy.mechanisms.sampler_float_limits`), so one draw is
``(epsilon, (1 + e^epsilon) inversion_tv(m))``-DP (:func:`inversion_float_delta`), which is at
most :func:`cvxdp.privacy.mechanisms.exponential_float_delta` for every ``m`` and ``epsilon``.
The derivation is in :func:`inversion_tv` and ``docs/privacy.md`` ("Floating-point noise").

References
----------
McSherry & Talwar (2007), "Mechanism Design via Differential Privacy", FOCS.
Higham (2002), *Accuracy and Stability of Numerical Algorithms*, 2nd ed., Sec. 2.2 (the rounding
model) and Sec. 4.2 (recursive summation).
"""

from __future__ import annotations

import math

import numpy as np

from cvxdp.privacy.budgets import check_epsilon

__all__ = ["EXP_ERROR_U", "exponential_inversion", "inversion_float_delta", "inversion_index",
           "inversion_tv"]

#: Largest error of the float64 ``exp`` the samplers use on ``[-746, 0]``, in units of ``2^-53``
#: relative (8 = 4 ulp), plus ``2^-1020`` absolute.  numpy's exp (SIMD) and libm's: assumed, and
#: measured at 0.69 and 0.51 ulp on 4e6 points against an 80-bit reference
#: (tests/privacy/test_inversion_sampler.py); the compiled MWU kernel's own exp: proven within
#: ``4.5 h`` (0 below -708), see :func:`cvxdp.solvers.mwu.loop_numba._exp_nonpositive`.
EXP_ERROR_U = 8.0
_H = math.ldexp(1.0, -53)  # unit roundoff, and the step of numpy's uniform grid k 2^-53


def inversion_index(cumulative: np.ndarray, u: float) -> int:
    """The first ``j`` with ``cumulative[j] > u * cumulative[-1]`` (inverse-CDF sampling).

    ``cumulative`` is the float running sum of non-negative weights, the largest of them 1, and
    ``u`` a draw of numpy's ``Generator.random`` (``k 2^-53``, ``k < 2^53``).  The index exists
    since ``fl(u C) < C`` for ``C >= 1`` and ``u <= 1 - 2^-53``; a zero weight's cell is empty,
    so it is never chosen."""
    return int(cumulative.searchsorted(float(u * cumulative[-1]), "right"))


def exponential_inversion(logits: np.ndarray, rng: np.random.Generator) -> int:
    """Draw ``j`` with probability ``softmax(logits)_j`` from one uniform (see the module doc).

    ``w = exp(logits - max)`` (the maximiser's weight is exactly 1), ``C = cumsum(w)``
    (sequential), then :func:`inversion_index` with ``u = rng.random()``.

    Parameters
    ----------
    logits : ndarray (m,)
        Finite log-weights, e.g. ``epsilon * score / (2 sensitivity)``.
    rng : numpy.random.Generator
        Consumed: one ``random()``.

    Returns
    -------
    int

    References
    ----------
    McSherry & Talwar (2007), "Mechanism Design via Differential Privacy", FOCS.
    """
    w = np.subtract(logits, np.max(logits))
    np.exp(w, out=w)
    np.add.accumulate(w, out=w)  # = np.cumsum: sequential
    return inversion_index(w, rng.random())


def inversion_tv(candidates: int) -> float:
    """Bound on the total variation between :func:`exponential_inversion`'s law and softmax.

    Rounding model: every float operation is exact up to a relative ``h = 2^-53``; exp is within
    ``EXP_ERROR_U h`` relative plus ``2^-1020`` absolute (:data:`EXP_ERROR_U`).  Let ``l`` be
    the float logits, ``x_j = l_j - max l``, ``w_j = e^{x_j}`` and ``S = sum w >= 1`` (the ideal
    law is ``w / S``).

    1. Weights.  ``fl(l_j - max)`` has relative error ``<= h``, so ``|e^{fl(x_j)} - w_j| <=
       1.01 h |x_j| e^{x_j} <= 1.01 h / e`` (``|x| e^x <= 1/e``), and exp adds ``EXP_ERROR_U h
       (1 + 1e-13) w_j`` plus ``2^-1020`` (which also covers underflow, ``w_j < 2^-1021``).
    2. Cumulative sum.  Cell ``j`` of the float sums has length ``c_j = C_j - C_{j-1} = w^_j +
       e_j``, ``|e_j| <= 1.0001 h C_j <= 1.0001 h C_m`` (one rounding per add), and ``C_m =
       sum c_j`` exactly (telescoping).  With ``r = 1.0001 m h`` and ``C_m <= S + ||c - w||_1``:
       ``||c - w||_1 / S <= (r + EXP_ERROR_U h (1 + 1e-13) + m (1.01 h / e + 2^-1020)) /
       (1 - r)``, and ``TV(c / C_m, w / S) <= ||c - w||_1 / S``.
    3. The uniform.  ``{u < b_j (1 - h)} ⊆ {fl(u C_m) < C_j} ⊆ {u < b_j}`` with ``b_j = C_j /
       C_m``, and ``P[u < t]`` lies in ``[t, t + h)`` on the grid, so ``P[J <= j]`` is within
       ``h`` of ``b_j`` for ``j < m`` (and exact, 1, at ``j = m``): this step adds
       ``TV <= (m - 1) h``.

    The total is about ``(2.37 m + 8) h``; 1 (vacuous) when ``r >= 1/2``.

    References
    ----------
    Higham (2002), *Accuracy and Stability of Numerical Algorithms*, 2nd ed., Sec. 2.2, 4.2.
    """
    m = int(candidates)
    r = 1.0001 * m * _H
    if r >= 0.5:
        return 1.0
    tiny = math.ldexp(1.0, -1020)
    weights = (r + EXP_ERROR_U * _H * (1.0 + 1e-13) + m * (1.01 * _H / math.e + tiny)) / (1.0 - r)
    return min(1.0, (m - 1) * _H + weights)


def inversion_float_delta(*, candidates: int, epsilon: float) -> float:
    """delta of :func:`exponential_inversion` as implemented: ``(1 + e^eps) inversion_tv(m)``.

    The argument of :func:`cvxdp.privacy.mechanisms.exponential_float_delta`: if the sampled law
    is within ``eta`` of the ideal epsilon-DP law on every input, ``P(S) <= e^eps P'(S) + (1 +
    e^eps) eta``.  It never exceeds ``exponential_float_delta`` (what the MWU's record states):
    ``inversion_tv(1) = 9.4 h``, and for ``m >= 2`` while ``r < 1/2``, ``inversion_tv(m) <= (m -
    1) h + 2 (1.373 m + 8) h <= 16.8 m h``, the Gumbel sampler's distance; past ``r = 1/2``
    that one is vacuous too."""
    eps = check_epsilon(epsilon)
    eta = inversion_tv(candidates)
    if eps + math.log(eta) >= 0.0:  # (1 + e^eps) eta >= 1: vacuous (and e^eps may overflow)
        return 1.0
    return min(1.0, (1.0 + math.exp(eps)) * eta)
