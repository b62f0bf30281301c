"""The uniform-weights candidates of the private John ellipsoid: the released Gram matrix ``Q0``
and the two runs that stop there (no iteration).

A run's public numbers, its generator and the marker of noisy outputs travel together as
:class:`Run`; every release here is a Gaussian mechanism on ``Q0 = (d/n) A'A`` (Frobenius
sensitivity ``2 R eps0 d/n``) or on a candidate's support scale
(:func:`cvxdp.geometry.john.john_select.score`).  The decisions (shares, shift, which candidate)
are those of :mod:`cvxdp.geometry.john.john_select`, derived in ``docs/john.md``.

References
----------
Gu, Li, Liang, Shi, Song, Yu, "Fast John Ellipsoid Computation with Differential Privacy
Optimization" (2024): Lemma 3.5 (the ellipsoid of weights).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from cvxdp.geometry.john.core import project_psd, sym_noise
from cvxdp.geometry.john.john_iter import gram
from cvxdp.geometry.john.john_select import (
    GRAM_SCHEDULES,
    Scored,
    choose,
    score,
    shifted_gram,
    split,
)
from cvxdp.geometry.john.john_sensitivity import support_sensitivity

__all__ = ["Run", "released_eigs", "combine", "second_uniform", "scales_can_matter",
           "without_iteration", "uniform_only"]


@dataclass(frozen=True)
class Run:
    """What every release of one private run shares.

    ``A`` are the rows in the public domain (numpy or Dask), ``release`` the identity through
    which every noisy output passes (``john_private.released``), ``w_unif`` the weights ``d/n``
    (on the workers for a Dask ``A``), ``delta_0`` the sensitivity of ``Q0``, ``mu`` the whole
    budget's GDP parameter and ``mu_s`` one scale's, ``z`` the confidence level of the scales.
    """

    A: Any
    gen: np.random.Generator
    release: Callable[[Any], Any]
    eps0: float
    R: float
    mu: float
    mu_s: float
    z: float
    w_unif: Any
    delta_0: float

    @property
    def d(self) -> int:
        return int(self.A.shape[1])

    def gram_release(self, mu_g: float) -> np.ndarray:
        """``Q0 + Z``, ``Z`` symmetric Gaussian of entry sd ``delta_0 / mu_g``."""
        return self.release(gram(self.A, self.w_unif)
                            + sym_noise(self.gen, self.d, self.delta_0 / mu_g))

    def score(self, name: str, Q: np.ndarray, weights: Any, G: np.ndarray | None,
              mu_s: float, *, gram_sigma: float = math.nan, schedules: int = 1) -> Scored:
        """The candidate ``{x' Q x <= 1}`` with its support scale released at ``mu_s``; ``G``
        (noise sd ``gram_sigma``, ``schedules`` combinations of releases) sizes it
        (:meth:`~cvxdp.geometry.john.john_select.Scored.sized`)."""
        return score(self.A, name, Q, weights, G, eps0=self.eps0, mu_s=mu_s, z=self.z,
                     gen=self.gen, release=self.release, gram_sigma=gram_sigma,
                     schedules=schedules)

    def sizing(self, uni: Scored) -> dict[str, Any]:
        """The keywords of :meth:`score` that size a candidate by the uniform weights' Gram
        release (the ball: ``max_i ||c_i||^2 >= tr(Q0)/d``)."""
        return {"gram_sigma": uni.gram_sigma, "schedules": uni.schedules}


def released_eigs(Q: np.ndarray, R: float) -> np.ndarray:
    """Eigenvalues of a released matrix, floored at ``1e-9 R^2`` (public)."""
    return np.maximum(np.linalg.eigvalsh(Q), 1e-9 * R * R)


def combine(G_a: np.ndarray, mu_a: float, G_b: np.ndarray, mu_b: float
            ) -> tuple[np.ndarray, float]:
    """Two releases of the same matrix by inverse-variance weights: one Gaussian release at
    ``mu_a^2 + mu_b^2``."""
    G = (mu_a ** 2 * G_a + mu_b ** 2 * G_b) / (mu_a ** 2 + mu_b ** 2)
    return G, math.hypot(mu_a, mu_b)


def second_uniform(run: Run, uni: Scored, G0: np.ndarray, *, gain: float, extra: float,
                   floor: float) -> tuple[np.ndarray, str, float] | None:
    """The second uniform-weights candidate of the branch without iteration (docs/john.md D0),
    or None when none can be scored usefully.

    The unshifted ``Q0``, or, when its scale cannot be released usefully (relative noise at the
    whole extra share ``extra`` not below the largest possible gain, the rule of D3: its
    sensitivity ``eps0 / sqrt(lambda_min)`` grows without bound as a released eigenvalue nears
    zero), ``Q0`` with its eigenvalues floored at ``floor`` (the floor of D0's shift, the reach
    of the noise in the weakest directions), by the same rule.  Returns the matrix, its name and
    its scale's noise coefficient (sensitivity over the released scale of ``Q0``); public.
    """
    eps0, R, z = run.eps0, run.R, run.z
    s_ref = max(uni.scale, 1.0)

    def usable(Q: np.ndarray) -> float | None:
        c = support_sensitivity(closeness=eps0, min_eig=float(released_eigs(Q, R)[0])) / s_ref
        return c if z * c / extra < 1 and -math.log1p(-z * c / extra) < gain else None

    second, name = project_psd(G0, R), "uniform-unshifted"
    c_second = usable(second)
    if c_second is None:
        lam, V = np.linalg.eigh((G0 + G0.T) / 2)
        second, name = (V * np.maximum(lam, floor)) @ V.T, "uniform-floored"
        c_second = usable(second)
    return None if c_second is None else (second, name, c_second)


def scales_can_matter(run: Run, uni: Scored, second: tuple | None, *, gain: float,
                      extra: float) -> bool:
    """Whether the scale releases of the branch without iteration can change the answer
    (docs/john.md D3'): a second uniform candidate can be scored (:func:`second_uniform`), or
    the ball could beat the uniform weights with certainty when the uniform weights' scale gets
    the largest share it can have in this branch (its first release at ``mu_s`` combined with
    the whole ``extra``): D3's margin ``-log(1 - z sigma / s_u)`` at that share below D3's
    largest possible gain.  When neither holds, no scale released in the branch can change
    which candidate is returned, and their budget goes to ``Q0`` (:func:`uniform_only`)."""
    if second is not None:
        return True
    sigma_best = uni.sigma * run.mu_s / math.hypot(run.mu_s, extra)
    r = run.z * sigma_best / uni.scale if uni.scale > 0 else math.inf
    return r < 1 and -math.log1p(-r) < gain


def without_iteration(run: Run, uni: Scored, G0: np.ndarray, Q0: np.ndarray, *,
                      second: tuple | None, extra: float
                      ) -> tuple[Scored, str | None, tuple, float]:
    """Candidates when the iteration is not run (D2's share, or ``T < 1``).

    The budget of the iterate's Gram matrix and scale (``extra``) goes to a second release of
    the uniform weights' scale (inverse-variance mean), to the ball's scale and to the scale of
    the second uniform candidate ``second`` (:func:`second_uniform`; none when it is None),
    split by :func:`~cvxdp.geometry.john.john_select.split`.  Returns the winner, the note of
    the selection, the candidates and the GDP parameter of all scale releases.
    """
    d, eps0, R = run.d, run.eps0, run.R
    s_ref = max(uni.scale, 1.0)
    q0 = float(released_eigs(Q0, R)[0])
    coef = [support_sensitivity(closeness=eps0, min_eig=q0) / s_ref, eps0 / R]
    mu_u2, mu_b2, *mu_r = split(coef + ([second[2]] if second is not None else []), extra)
    uni = uni.combined(run.score("uniform", Q0, run.w_unif, G0, mu_u2, **run.sizing(uni)),
                       run.mu_s, mu_u2)
    ball = run.score("ball", np.eye(d), None, G0, math.hypot(run.mu_s, mu_b2), **run.sizing(uni))
    raw = ([run.score(second[1], second[0], run.w_unif, G0, mu_r[0], **run.sizing(uni))]
           if second is not None else [])
    winner, note = choose([uni, *raw], [ball])
    return winner, note, (uni, *raw, ball), math.sqrt(2 * run.mu_s ** 2 + extra ** 2)


def uniform_only(run: Run, uni: Scored, G0: np.ndarray, mu_0: float, *, rest: float,
                 inscribed: bool) -> tuple[Scored, float, float, np.ndarray]:
    """Uniform weights only (D3: no candidate could be certainly better).

    The unspent budget ``rest`` goes to another release of ``Q0`` (combined with the first by
    inverse-variance weights) and, when ``inscribed``, to a new scale release for the combined
    matrix, split to minimise the sum of their losses.  Returns the candidate, the GDP
    parameters of ``Q0`` (combined) and of the new scale release, and the shifts of ``Q0``.
    """
    d, eps0, R = run.d, run.eps0, run.R
    q0 = float(released_eigs(uni.Q, R)[0])
    if inscribed:
        c_gram = math.sqrt(2 * d) * run.delta_0 / q0
        c_scale = support_sensitivity(closeness=eps0, min_eig=q0) / max(uni.scale, 1.0)
        mu_b, mu_s2 = split([c_gram, c_scale], rest)
    else:
        mu_b, mu_s2 = rest, 0.0
    G0, mu_0 = combine(G0, mu_0, run.gram_release(mu_b), mu_b)
    Q0, shifts = shifted_gram(G0, R, run.delta_0 / mu_0)
    sizing = {"gram_sigma": run.delta_0 / mu_0, "schedules": GRAM_SCHEDULES}
    if inscribed:
        uni = run.score("uniform", Q0, run.w_unif, G0, mu_s2, **sizing)
    else:  # the scale is not used: only the matrix changes
        uni = Scored("uniform", Q0, run.w_unif, G0, math.nan, math.nan, run.z, **sizing)
    return uni, mu_0, mu_s2, shifts
