"""Dense multiplicative weights over constraints (Song et al. 2025, Appendix B, Alg. 2 and Alg. 3).

The dense MWU keeps one weight per constraint ("action") and plays the Bregman (KL) projection
of the weights onto the ``1/s``-dense distributions ``{p : sum p = 1, 0 <= p_i <= 1/s}``.  No
single constraint ever carries more than ``1/s`` of the mass, which is what makes the method
private when a neighbouring dataset adds or removes one whole constraint (Lemma B.6, Thm B.7).

* :func:`bregman_project` -- ``Gamma_s F`` (Def B.2), exact, ``O(m log m)``, in log space.
* :class:`DenseMWU` -- Alg. 2 (weights kept as cumulative log-weights, never multiplied).
* :func:`scp_dense_mwu` -- Alg. 3, the feasibility loop with a pluggable (private) oracle.
* :func:`dense_mwu_regret` -- the regret term of Lemma B.3, ``eta + log|F| / (eta T)``.

References
----------
Song, Xue & Zhang (2025): Def B.2, Alg. 2, Lemma B.3, Alg. 3, Lemma B.5,
Lemma B.6; Herbster & Warmuth 2001 (tracking the best expert, capping); Hsu, Roth, Roughgarden,
Ullman 2014 (private LPs, dense MWU).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = [
    "bregman_project",
    "bregman_project_log",
    "DenseMWU",
    "DenseMWUResult",
    "scp_dense_mwu",
    "dense_mwu_regret",
]


def bregman_project_log(log_weights: Any, s: float) -> np.ndarray:
    """KL (Bregman) projection of ``exp(log_weights)`` onto the ``1/s``-dense distributions.

    Returns ``p_f = min(1, c F_f) / s`` with ``c >= 0`` solving ``sum_f min(1, c F_f) = s``
    (Song et al. 2025, Def B.2).  Exact: sort once, then the number ``j`` of capped entries is the
    smallest ``j`` with ``c_j w_(j) <= 1`` where ``c_j = (s - j) / sum_{i >= j} w_(i)`` over the
    weights sorted in decreasing order (Herbster & Warmuth's capping).  Everything is done in log
    space, so weights spanning thousands of orders of magnitude are handled exactly.

    Parameters
    ----------
    log_weights : array_like, shape (m,)
        Logarithms of the (positive) measure ``F``; ``-inf`` entries are zero weights.
    s : float
        Density parameter, ``1 <= s <= (number of finite entries)``.

    Returns
    -------
    ndarray, shape (m,)
        The projected distribution: sums to 1, every entry in ``[0, 1/s]``.

    Raises
    ------
    ValueError
        If ``s < 1``, if fewer than ``s`` entries have positive weight (the dense set is then
        empty), or if an entry is NaN / ``+inf``.

    References
    ----------
    Song, Xue & Zhang (2025), Def B.2; Herbster & Warmuth, JMLR 2001, Sec. 5.
    """
    lw = np.asarray(log_weights, dtype=float).ravel()
    s = float(s)
    if not s >= 1:
        raise ValueError(f"density parameter s must be >= 1, got {s!r}.")
    if np.any(np.isnan(lw)) or np.any(lw == np.inf):
        raise ValueError("log_weights contain NaN or +inf.")
    finite = np.isfinite(lw)
    if finite.sum() < s:
        raise ValueError(
            f"the 1/s-dense distributions need at least s={s:g} actions of positive weight, "
            f"got {int(finite.sum())}; lower s or pad the universe with public dummy actions.")
    return _project_log(lw, s)


def _project_log(lw: np.ndarray, s: float) -> np.ndarray:
    """:func:`bregman_project_log` without the input checks (for the MWU loop's own weights)."""
    if s == 1.0:  # the cap 1/s = 1 never binds: the plain softmax
        p = np.exp(lw - lw.max())
        return p / p.sum()
    order = np.argsort(-lw, kind="stable")
    w = lw[order]
    # suffix log-sums: tail[j] = log sum_{i >= j} exp(w[i])
    tail = np.logaddexp.accumulate(w[::-1])[::-1]
    jmax = int(math.ceil(s))  # at most ceil(s) - 1 entries can be capped
    j = np.arange(jmax)
    log_c = np.log(s - j) - tail[:jmax]
    ok = log_c + w[:jmax] <= 1e-12
    k = int(np.argmax(ok)) if ok.any() else jmax - 1
    with np.errstate(over="ignore"):
        p = np.minimum(1.0, np.exp(lw + log_c[k])) / s
    return p


def bregman_project(weights: Any, s: float) -> np.ndarray:
    """:func:`bregman_project_log` for a measure given directly (non-negative weights)."""
    w = np.asarray(weights, dtype=float).ravel()
    if np.any(w < 0) or not np.all(np.isfinite(w)):
        raise ValueError("weights must be finite and non-negative.")
    with np.errstate(divide="ignore"):
        return bregman_project_log(np.log(w), s)


def dense_mwu_regret(eta: float, T: int, m: float) -> float:
    """Average-regret bound of Lemma B.3: ``eta + log(m) / (eta T)`` (needs ``eta <= 1/2``).

    References
    ----------
    Song, Xue & Zhang (2025), Lemma B.3.
    """
    return float(eta + math.log(max(m, 2.0)) / (eta * T))


class DenseMWU:
    """Algorithm 2 of Song, Xue & Zhang (2025): multiplicative weights played through ``Gamma_s``.

    Parameters
    ----------
    m : int
        Number of actions (constraints, including any public dummy actions).
    s : float
        Density: no action gets more than ``1/s`` of the played distribution.
    eta : float
        Step size (Lemma B.3 needs ``eta <= 1/2`` and losses in ``[0, 1]``).

    Notes
    -----
    The weights are stored as cumulative log-weights ``-eta * sum_t l^t``; the starting measure
    (uniform or all ones) does not matter because ``Gamma_s`` is invariant to rescaling.

    References
    ----------
    Song, Xue & Zhang (2025), Alg. 2, Lemma B.3.
    """

    def __init__(self, m: int, s: float, eta: float) -> None:
        if int(m) < s:
            raise ValueError(f"DenseMWU needs m >= s, got m={m}, s={s}.")
        if not (eta > 0 and math.isfinite(eta)):
            raise ValueError(f"eta must be finite and > 0, got {eta!r}.")
        self.m, self.s, self.eta = int(m), float(s), float(eta)
        self.log_weights = np.zeros(self.m)

    def distribution(self) -> np.ndarray:
        """The played distribution ``B^t = Gamma_s F^t``."""
        return bregman_project_log(self.log_weights, self.s)

    def update(self, losses: Any) -> None:
        """``F^{t+1}_f = exp(-eta l^t_f) F^t_f`` for losses in ``[0, 1]``."""
        ell = np.asarray(losses, dtype=float).ravel()
        if ell.shape != (self.m,):
            raise ValueError(f"losses must have shape ({self.m},), got {ell.shape}.")
        if np.any(ell < -1e-12) or np.any(ell > 1 + 1e-12):
            raise ValueError("Lemma B.3 needs losses in [0, 1].")
        self.log_weights = self.log_weights - self.eta * ell
        self.log_weights -= self.log_weights.max()  # rescaling leaves Gamma_s unchanged


@dataclass
class DenseMWUResult:
    """Output of :func:`scp_dense_mwu`.

    Attributes
    ----------
    average : ndarray
        ``x_bar = (1/T) sum_t x^t``.
    iterates : list
        The oracle outputs ``x^t`` (released quantities).
    distributions : list of ndarray
        The played distributions ``y^t`` (private: for tests only, never reported).
    y_average : ndarray or None
        The mean of the played distributions over rounds ``t >= average_from`` (private: only
        noisy statistics of it may be released).
    """

    average: np.ndarray
    iterates: list[Any] = field(default_factory=list)
    distributions: list[np.ndarray] = field(default_factory=list)
    y_average: np.ndarray | None = None


def scp_dense_mwu(
    oracle: Callable[[np.ndarray, np.random.Generator], Any],
    losses: Callable[[Any], np.ndarray],
    m: int,
    *,
    s: float,
    T: int,
    eta: float,
    rng: np.random.Generator,
    keep_history: bool = False,
    average_from: int | None = None,
) -> DenseMWUResult:
    """Algorithm 3 (SCPDenseMWU): dense MWU over constraints with an (private) oracle.

    Parameters
    ----------
    oracle : callable ``(y, rng) -> x``
        Returns ``x^t`` for the played distribution ``y^t`` (an ``(alpha/3, beta/T)``-approximate,
        ``rho``-bounded oracle in Lemma B.5; the exponential mechanism for privacy, Thm B.7).
    losses : callable ``x -> ndarray (m,)``
        The loss vector ``l^t`` in ``[0, 1]^m``; in Alg. 3 ``l_i = (b_i - <a_i, x>)/(2 rho) + 1/2``.
        For privacy the loss of a constraint must depend only on that constraint and the
        released ``x^t`` (then neighbouring runs share the weights of all common constraints).
    m : int
        Number of actions.
    s, T, eta : density, rounds, step size.
    rng : numpy Generator passed to the oracle.
    keep_history : bool
        Keep the played distributions (for tests of Lemma B.6).
    average_from : int, optional
        Also average the played distributions over rounds ``average_from .. T-1``
        (``y_average``; the dual of the certificate).

    Returns
    -------
    DenseMWUResult

    References
    ----------
    Song, Xue & Zhang (2025), Alg. 3, Lemma B.5, Thm B.7.
    """
    mwu = DenseMWU(m, s, eta)  # checks m, s, eta; the loop below updates its weights directly
    lw = mwu.log_weights
    total = None
    out = DenseMWUResult(average=np.zeros(0))
    y_sum = None
    for t in range(int(T)):
        y = _project_log(lw, mwu.s)
        if average_from is not None and t >= average_from:
            y_sum = y.copy() if y_sum is None else y_sum + y
        x = oracle(y, rng)
        total = np.array(x, dtype=float) if total is None else total + x
        # F <- F exp(-eta l), losses in [0, 1] (checked by DenseMWU.update for outside callers);
        # rescaling leaves Gamma_s unchanged
        ell = losses(x)
        if not (ell.min() >= -1e-12 and ell.max() <= 1 + 1e-12):
            raise ValueError("Lemma B.3 needs losses in [0, 1].")
        lw -= mwu.eta * ell
        lw -= lw.max()
        if keep_history:
            out.iterates.append(x)
            out.distributions.append(y)
    out.average = total / int(T)
    if y_sum is not None:
        out.y_average = y_sum / (int(T) - int(average_from))
    return out
