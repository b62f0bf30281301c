"""The private iteration of the John ellipsoid and its two candidates (the iterate and the ball).

``w_1 = d/n``; for ``k = 1..T`` release ``htilde_k = h(w_k) + N(0, sigma_h^2 I_n)`` with
``h_i = a_i'(A' W_k A + lam I)^{-1} a_i`` computed exactly, then
``w_{k+1} = clip(w_k * max(htilde_k, 0), [w_min, 1])`` (post-processing): the paper's
multiplicative update with the noise placed additively on ``h`` so that the Gaussian mechanism
applies (sensitivity: Lemma S, :mod:`cvxdp.geometry.john.john_sensitivity`).  ``u`` is the mean of
``w_1..w_T`` and ``v = d u / sum u``; ``A'VA`` reads the data again and gets its own noise.

References
----------
Gu, Li, Liang, Shi, Song, Yu, "Fast John Ellipsoid Computation with Differential Privacy
Optimization" (2024): Algorithm 1, Lemma 7.1 (telescoping).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from cvxdp.dask_backend import is_dask
from cvxdp.dask_backend.john import private_iterations
from cvxdp.geometry.john.core import project_psd, sym_noise
from cvxdp.geometry.john.john_iter import gram, leverage_ratios
from cvxdp.geometry.john.john_select import Scored
from cvxdp.geometry.john.john_sensitivity import gram_sensitivity
from cvxdp.geometry.john.uniform_release import Run

__all__ = ["iterate"]


def iterate(run: Run, *, T: int, ridge: float, sigma_h: float, w_min: float, mu_gram: float,
            uniform: Scored) -> tuple[Scored, Scored, dict[str, Any]]:
    """Run the ``T`` noisy iterations; release ``A'VA`` at ``mu_gram`` and the scales of the
    iterate and of the ball (each at ``run.mu_s``).  The iterate is sized by its ``A'VA``, the
    ball by the uniform weights' released Gram matrix (``uniform``'s).  Returns the two
    candidates and the iteration's fields of ``info``."""
    A, gen, d = run.A, run.gen, run.d
    n = int(A.shape[0])
    if is_dask(A):  # the same iteration and draws, chunk-wise (cvxdp.dask_backend.john)
        u = private_iterations(A, T, ridge, sigma_h, w_min, gen, release=run.release)
    else:
        w = run.w_unif.copy()
        total = np.zeros(n)
        for _ in range(T):
            total += w
            h_noisy = run.release(leverage_ratios(A, w, ridge) + sigma_h * gen.standard_normal(n))
            w = np.clip(w * np.maximum(h_noisy, 0.0), w_min, 1.0)
        u = total / T
    v = d * u / float(u.sum())
    delta_q = gram_sensitivity(closeness=run.eps0, row_bound=run.R, max_weight=float(v.max()))
    sigma_q = delta_q / mu_gram
    # the iteration's matrix is A'UA + ridge I (h_i(u) <= 1 + xi is about it): the ridge is
    # added back, scaled like v (post-processing of public numbers)
    ridge_back = ridge * d / float(u.sum())
    G = run.release(gram(A, v) + sym_noise(gen, d, sigma_q))
    Q = project_psd(G, run.R, ridge_back)
    pri = run.score("private", Q, v, G, run.mu_s, gram_sigma=sigma_q)  # one release of A'VA
    # the ball {||x|| <= 1/s}: the iteration's limit as the ridge grows, no weights
    ball = run.score("ball", np.eye(d), None, uniform.gram, run.mu_s, **run.sizing(uniform))
    return pri, ball, {"iterations": T, "sigma_h": sigma_h, "sigma_q": sigma_q,
                       "sensitivity_q": delta_q, "ridge_added": ridge_back, "fallback": None}
