"""Dual oracles for the primal MWU: return an (approximately) most violated constraint.

An ``(alpha, gamma)``-dual oracle (Song, Xue & Zhang 2025, Def C.1) returns ``i`` with
``<a_i, x> - b_i >= max_j (<a_j, x> - b_j) - alpha`` with probability ``>= 1 - gamma``.
Oracles here are callables ``(scores, rng) -> index`` on the score vector ``G x - h``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from cvxdp.privacy.inversion_sampler import exponential_inversion

__all__ = [
    "ExactOracle",
    "ExponentialOracle",
    "exact_oracle",
    "exponential_oracle",
    "exponential_oracle_error",
]


class ExactOracle:
    """``argmax`` of the scores, as a callable ``(scores, rng) -> index`` (see
    :func:`exact_oracle`); the batched loop recognises it and takes the argmax itself."""

    def __call__(self, scores: np.ndarray, rng: np.random.Generator) -> int:
        return int(np.argmax(scores))


@dataclass(frozen=True)
class ExponentialOracle:
    """The exponential mechanism on the logits ``scale * scores``, ``scale = epsilon / (2
    sensitivity)``, sampled by inversion from one uniform
    (:func:`cvxdp.privacy.inversion_sampler.exponential_inversion`), as a callable ``(scores,
    rng) -> index`` (see :func:`exponential_oracle`).  The batched loop
    (:mod:`cvxdp.solvers.mwu.loop`) reads ``scale`` and draws the uniforms a block of rounds at
    a time."""

    epsilon: float
    sensitivity: float

    @property
    def scale(self) -> float:
        return self.epsilon / (2.0 * self.sensitivity)

    def __call__(self, scores: np.ndarray, rng: np.random.Generator) -> int:
        return exponential_inversion(self.scale * scores, rng)


def exact_oracle() -> Callable[[np.ndarray, np.random.Generator], int]:
    """The exact (0, 0)-dual oracle: ``argmax`` of the scores (non-private).

    References
    ----------
    Song, Xue & Zhang (2025), Def C.1 and the exact-oracle case in the proof of Theorem C.2.
    """
    return ExactOracle()


def exponential_oracle(*, epsilon: float, sensitivity: float
                       ) -> Callable[[np.ndarray, np.random.Generator], int]:
    """The exponential-mechanism dual oracle: ``Pr[i] ~ exp(epsilon * score_i / (2 sensitivity))``.

    Sampled by inversion from one uniform
    (:func:`cvxdp.privacy.inversion_sampler.exponential_inversion`): the same distribution as
    :func:`cvxdp.privacy.mechanisms.exponential_mechanism` (which uses the Gumbel-max trick), at
    ``m`` exps instead of ``m`` Gumbels, and without building a privacy record per call: the
    caller accounts for all T calls with one :func:`cvxdp.privacy.mechanisms.exponential_record`
    of ``count=T`` whose ``float_delta`` is the inversion sampler's own
    (:func:`cvxdp.privacy.inversion_sampler.inversion_float_delta`, about 7x below the Gumbel
    sampler's :func:`cvxdp.privacy.mechanisms.exponential_float_delta`).  Each call
    is ``epsilon``-DP and ``epsilon^2/8``-zCDP when every score has sensitivity ``sensitivity``.

    Parameters
    ----------
    epsilon : float
        Per-call privacy parameter (> 0).
    sensitivity : float
        Bound on how much any score changes between neighbours (> 0).

    References
    ----------
    Song, Xue & Zhang (2025), Lemma C.4 (scalar privacy) and Lemma C.8 (constraint privacy);
    McSherry & Talwar 2007; Cesar & Rogers 2021 (zCDP of the exponential mechanism).
    """
    if not (epsilon > 0 and math.isfinite(epsilon)):
        raise ValueError(f"epsilon must be finite and > 0, got {epsilon!r}")
    if not (sensitivity > 0 and math.isfinite(sensitivity)):
        raise ValueError(f"sensitivity must be finite and > 0, got {sensitivity!r}")
    return ExponentialOracle(float(epsilon), float(sensitivity))


def exponential_oracle_error(*, epsilon: float, sensitivity: float, m: int, gamma: float) -> float:
    """Additive error ``alpha_o = (2 Delta / epsilon) log(m / gamma)`` of the exponential oracle.

    With probability ``>= 1 - gamma`` the chosen score is within ``alpha_o`` of the maximum
    (Song, Xue & Zhang 2025, Lemma 3.12, used in Lemmas C.4 and C.8).
    """
    return 2.0 * sensitivity / epsilon * math.log(m / gamma)
