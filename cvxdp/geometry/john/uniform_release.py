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
from cvxdp.geometry.john.ellipsoid import Ellipsoid
from cvxdp.geometry.john.john_iter import gram
from cvxdp.geometry.john.john_select import Scored, choose, score, shifted_gram, split, z_level
from cvxdp.geometry.john.john_sensitivity import depth_profile_sensitivity, support_sensitivity
from cvxdp.privacy.noisy_max import noisy_scores, vector_sensitivity

#: band width of the depth profiles, per dimension of log volume: the resolution at which two
#: uniform-weights candidates are told apart (the issue's tolerance of 0.01 per dimension)
BAND = 0.01

__all__ = ["Run", "released_eigs", "combine", "tail_levels", "depth_profile", "deepest_band",
           "without_iteration", "uniform_only"]


@dataclass(frozen=True)
class Run:
    """What every release of one private run shares.

    ``A`` are the rows in the public domain (numpy or Dask), ``release`` the identity through
    which every noisy output passes (``john_private.released``), ``w_unif`` the weights ``d/n``
    (on the workers for a Dask ``A``), ``delta_0`` the sensitivity of ``Q0``, ``mu`` the whole
    budget's GDP parameter and ``mu_s`` one scale's, ``z`` the confidence level of the scales,
    ``failure`` the probability the confidence bounds may fail.
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
    failure: float = 1e-3

    @property
    def d(self) -> int:
        return int(self.A.shape[1])

    def gram_release(self, mu_g: float) -> np.ndarray:
        """``Q0 + Z``, ``Z`` symmetric Gaussian of entry sd ``delta_0 / mu_g``."""
        return self.release(gram(self.A, self.w_unif)
                            + sym_noise(self.gen, self.d, self.delta_0 / mu_g))

    def score(self, name: str, Q: np.ndarray, weights: Any, G: np.ndarray | None,
              mu_s: float) -> Scored:
        """The candidate ``{x' Q x <= 1}`` with its support scale released at ``mu_s``."""
        return score(self.A, name, Q, weights, G, eps0=self.eps0, mu_s=mu_s, z=self.z,
                     gen=self.gen, release=self.release)


def released_eigs(Q: np.ndarray, R: float) -> np.ndarray:
    """Eigenvalues of a released matrix, floored at ``1e-9 R^2`` (public)."""
    return np.maximum(np.linalg.eigvalsh(Q), 1e-9 * R * R)


def combine(G_a: np.ndarray, mu_a: float, G_b: np.ndarray, mu_b: float
            ) -> tuple[np.ndarray, float]:
    """Two releases of the same matrix by inverse-variance weights: one Gaussian release at
    ``mu_a^2 + mu_b^2``."""
    G = (mu_a ** 2 * G_a + mu_b ** 2 * G_b) / (mu_a ** 2 + mu_b ** 2)
    return G, math.hypot(mu_a, mu_b)


def tail_levels(Qs: list[np.ndarray], G: np.ndarray, n: int) -> tuple[np.ndarray, float]:
    """Thresholds ``t_j`` and the depth range of the profiles of uniform-weights candidates
    (public).

    Candidate ``j`` scaled so that row ``i`` touches has per-dimension log volume
    ``f_ij = l_j - log r_ij`` (``l_j = log vol(E_j) / d``, ``r_ij = ||Q_j^{-1/2} c_i||``); its
    fitted volume is ``min_i f_ij``.  All candidates are measured from one level ``v``: row
    ``i`` lies ``x_ij = v - f_ij = log(r_ij / t_j)`` below it, ``t_j = exp(l_j - v)``.
    ``v = max_j (l_j - log m_j)`` with ``m_j = sqrt(tr(Q_j^{-1} G) / d)`` the root mean ratio
    under the released uniform-weights Gram matrix ``G`` (``sum_i (d/n) r_ij^2 = tr(Q_j^{-1}
    G)``): the largest ratio is at least the mean one, so every candidate's fitted volume lies
    below ``v``.  ``sum_i r_ij^2 = n m_j^2`` bounds the largest ratio by ``sqrt(n) m_j``, so
    every binding row lies at most ``1/2 log n + v - (l_j - log m_j)`` below ``v``: the range.
    """
    d = G.shape[0]
    ell = np.array([Ellipsoid.from_matrix(Q).log_volume / d for Q in Qs])
    m = np.array([math.sqrt(max(float(np.trace(np.linalg.solve(Q, G))) / d, 1e-300))
                  for Q in Qs])
    top = ell - np.log(m)
    v = float(np.max(top))
    return np.exp(ell - v), 0.5 * math.log(n) + float(v - np.min(top))


def depth_profile(A: Any, Qs: list[np.ndarray], thresholds: np.ndarray, depth: float,
                  width: float) -> np.ndarray:
    """``P_jk = sum_i clip(x_ij / width - k, 0, 1)``, ``k = 0 .. K - 1``, ``K = ceil(depth /
    width)``: about the number of rows lying more than ``k width`` below the common level for
    candidate ``j`` (``x_ij = log(r_ij / t_j)``, :func:`tail_levels`), each row's share
    spread over the bands it crosses.  PRIVATE: released only through
    :func:`cvxdp.privacy.noisy_max.noisy_scores` (sensitivity:
    :func:`~cvxdp.geometry.john.john_sensitivity.depth_profile_sensitivity`)."""
    K = int(math.ceil(depth / width))
    out = np.zeros((len(Qs), K))
    for j, (Q, t) in enumerate(zip(Qs, thresholds, strict=True)):
        r2 = Ellipsoid.from_matrix(Q).support_ratios(A)  # lazy on the workers for a Dask A
        y = np.minimum(np.maximum((0.5 * np.log(np.maximum(r2, 1e-300)) - math.log(t))
                                  / width, 0.0), K)
        for k in range(K):
            out[j, k] = float(np.minimum(np.maximum(y - k, 0.0), 1.0).sum())
    return out


def deepest_band(noisy: np.ndarray, present: float) -> np.ndarray:
    """Per candidate, the deepest band whose noisy count exceeds ``present`` (-1: none):
    the band of its binding rows, seen through the noise (post-processing)."""
    hit = noisy > present
    K = noisy.shape[1]
    return np.where(hit.any(axis=1), K - 1 - np.argmax(hit[:, ::-1], axis=1), -1)


def without_iteration(run: Run, uni: Scored, G0: np.ndarray, Q0: np.ndarray, *, gain: float,
                      extra: float, floor: float
                      ) -> tuple[Scored, str | None, tuple, float, dict[str, Any]]:
    """Candidates when the iteration is not run (D2's share, or ``T < 1``).

    The budget of the iterate's Gram matrix and scale (``extra``) goes to a second release of
    the uniform weights' scale (inverse-variance mean), to the ball's scale, to the scale of
    a second uniform candidate (docs/john.md D0) and to the selection between the two uniform
    candidates (D6), split by :func:`~cvxdp.geometry.john.john_select.split`.  The second
    candidate is the unshifted ``Q0``, or, when its scale cannot be released usefully (relative
    noise at the whole extra share not below the largest possible gain, the rule of D3: its
    sensitivity ``eps0 / sqrt(lambda_min)`` grows without bound as a released eigenvalue nears
    zero), ``Q0`` with its eigenvalues floored at ``floor`` (the floor of D0's shift, the reach
    of the noise in the weakest directions), by the same rule.  Which uniform candidate is kept
    is decided by report-noisy-max on their tail depths (:func:`tail_depths`, D6); the ball
    must then beat it with certainty (D4).  Returns the winner, the note of the selection, the
    candidates, the GDP parameter of all scale and selection releases, and the selection's
    fields of ``info``.
    """
    d, eps0, R, z = run.d, run.eps0, run.R, run.z
    n = int(run.A.shape[0])
    s_ref = max(uni.scale, 1.0)
    q0 = float(released_eigs(Q0, R)[0])

    def usable(Q: np.ndarray) -> float | None:
        c = support_sensitivity(closeness=eps0, min_eig=float(released_eigs(Q, R)[0])) / s_ref
        return c if z * c / extra < 1 and -math.log1p(-z * c / extra) < gain else None

    second, name = project_psd(G0, R), "uniform-unshifted"
    c_second = usable(second)
    if c_second is None:
        lam, V = np.linalg.eigh((G0 + G0.T) / 2)
        second, name = (V * np.maximum(lam, floor)) @ V.T, "uniform-floored"
        c_second = usable(second)
    coef = [support_sensitivity(closeness=eps0, min_eig=q0) / s_ref, eps0 / R]
    fields: dict[str, Any] = {}
    if c_second is None:
        mu_u2, mu_b2 = split(coef, extra)
    else:
        Qs = [Q0, second]
        t, depth = tail_levels(Qs, G0, n)
        per = [depth_profile_sensitivity(closeness=eps0, min_eig=float(released_eigs(Q, R)[0]),
                                         threshold=float(tj), depth=depth, width=BAND)
               for Q, tj in zip(Qs, t, strict=True)]
        delta_p = vector_sensitivity(per)
        # D6: the selection's loss model, like a scale's: its noise in per-dimension log volume
        # when one row carries the profile, BAND delta_p / mu_sel
        mu_u2, mu_b2, mu_2, mu_sel = split(coef + [c_second, BAND * delta_p], extra)
    uni = uni.combined(run.score("uniform", Q0, run.w_unif, G0, mu_u2), run.mu_s, mu_u2)
    ball = run.score("ball", np.eye(d), None, None, math.hypot(run.mu_s, mu_b2))
    uniforms = [uni]
    if c_second is not None:
        uniforms.append(run.score(name, second, run.w_unif, G0, mu_2))
        profile = depth_profile(run.A, Qs, t, depth, BAND)
        noisy, sigma = noisy_scores(profile, sensitivity=delta_p, mu=mu_sel, rng=run.gen)
        noisy = run.release(noisy).reshape(profile.shape)
        # a band holds a row when its noisy count exceeds the noise's union bound over bands
        present = z_level(run.failure, noisy.size) * sigma
        deepest = deepest_band(noisy, present)
        # the shallowest binding band wins; a tie goes to the smaller count in that band
        k = int(deepest.min())
        tie = np.flatnonzero(deepest == k)
        pick = int(tie[np.argmin(noisy[tie, max(k, 0)])])
        fields = {"deepest_band": {c.name: int(b) for c, b in zip(uniforms, deepest,
                                                                   strict=True)},
                  "band_width": BAND, "sigma_profile": sigma, "mu_select": mu_sel,
                  "profile_present": present}
        uni = uniforms[pick]
    winner, note = choose(uni, [ball])
    return (winner, note, (*uniforms, ball), math.sqrt(2 * run.mu_s ** 2 + extra ** 2),
            fields)


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
    if inscribed:
        uni = run.score("uniform", Q0, run.w_unif, G0, mu_s2)
    else:  # the scale is not used: only the matrix changes
        uni = Scored("uniform", Q0, run.w_unif, G0, math.nan, math.nan, run.z)
    return uni, mu_0, mu_s2, shifts
