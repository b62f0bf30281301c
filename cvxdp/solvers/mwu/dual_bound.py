"""A lower bound on the optimum from each run's averaged loss (weak duality with the MWU's
empirical dual).

A run of the objective search looks for ``z`` in the MWU's domain ``D = {z in K, tr z = 1}``
with ``G_i z <= h_i`` for every row, the target row ``(c'x - tau) / (R w) <= 0`` last.  Its
oracle picks a row ``p_t`` each round, and the loss the MWU exponentiates is that row plus
Gaussian noise on its private coordinates (Song, Xue & Zhang 2025, Alg. 1): the cumulative loss
is a post-processing of released values.  Let ``y_i = chosen_i / T`` (a distribution over the
rows) and ``L = (1/T) sum_t (G_{p_t} + n_t) = sum_i y_i G_i + N``.  Over the whole domain,

    sum_i y_i (G_i z - h_i) = <L - N, z> - y'h >= lambda_min(L / gram) - E - y'h =: margin,

with ``E >= max_{z in D} <N, z>`` on an event of probability ``1 - beta`` (below) and
``lambda_min`` the algebra's smallest eigenvalue of the released ``L``.  The optimum ``z*``
meets every true row except perhaps the target's, so ``y_obj (c'x* - tau) / (R w) >=
margin``, i.e. ``OPT >= tau + margin R w / y_obj``: a positive margin proves ``tau`` below
the optimum, a negative one still bounds it.  This is Lagrangian weak duality with the
multipliers the MWU's oracle chose; the MWU's regret bound is what makes it tight once ``T`` is
large (Arora, Hazan & Kale 2012, "The Multiplicative Weights Update Method: a Meta-Algorithm and
Applications", Sec. 3.3), but the bound reads the released average directly and needs no
theorem's conditions.  ``y'h`` is public when every chosen row's right-hand side is; otherwise
an upper bound from a Gaussian release of it (sensitivity ``sum_i y_i dh_i``, ``y`` released)
takes its place: the objective search releases it and charges it to the budget.

The noise.  ``N_j = (1/T) sum_t n_{t,j}``: round ``t``'s noise is drawn after ``p_t`` is chosen,
with standard deviation ``s_{p_t, j} = sigma_unit d2_{p_t} phi_j`` on row ``p_t``'s private
support, so ``T N_j`` is a martingale with Gaussian increments whose variances sum to at most
``T s_j^2``, ``s_j = max_i s_{i,j}`` (over all rows: a bound fixed before the run).  Hence
``|N_j| <= u s_j / sqrt(T)`` for every coordinate with probability ``>= 1 - beta``, ``u =
sqrt(2 ln(2 k / beta))`` (sub-Gaussian martingale tail and a union bound over the ``k``
coordinates).  On that event ``max_{z in D} <N, z> = lambda_max(N / gram)`` is at most the
largest entry on the orthant block and, on each spin-factor or PSD block, the block's Jordan
Frobenius norm ``sqrt(sum_j N_j^2 / gram_j)`` (the largest eigenvalue is at most the root of
the sum of squared eigenvalues); ``D``'s elements put their unit trace across the blocks, so
the maximum is over blocks.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import scipy.sparse as sp

__all__ = ["noise_bound", "averaged_loss_lower", "rhs_sensitivity", "chosen_average"]


def noise_bound(noise: Any, algebra: Any, rounds: int, beta: float) -> float:
    """``E`` with ``max_{z in D} <N, z> <= E`` with probability ``>= 1 - beta`` (module doc),
    for the average noise ``N`` of ``rounds`` rounds of ``noise`` (a
    :class:`cvxdp.solvers.mwu.loop.RowGaussianNoise`; None: no noise, 0)."""
    if noise is None or rounds <= 0 or noise.sigma_unit == 0:
        return 0.0
    S = sp.csr_matrix(noise.support, dtype=float, copy=True)
    S.data[:] = 1.0
    k = S.shape[1]
    # s_j = max_i sigma_unit d2_i phi_j over the rows whose private support holds j
    s = np.asarray(S.multiply(np.asarray(noise.d2, dtype=float)[:, None]).max(axis=0)
                   .toarray()).ravel() * float(noise.sigma_unit) * np.asarray(noise.phi_scale)
    if not np.any(s > 0):
        return 0.0
    u = math.sqrt(2.0 * math.log(2.0 * k / beta))
    b = u * s / math.sqrt(rounds)          # |N_j| <= b_j on the event
    gram = np.asarray(algebra.gram, dtype=float)
    n0 = int(algebra.nonneg)
    out = float(b[:n0].max()) if n0 else 0.0
    blocks = [(int(o), int(q)) for o, q in zip(algebra._soc_off, algebra.soc, strict=True)]
    blocks += [(int(o), r * (r + 1) // 2) for o, r in zip(algebra._psd_off, algebra.psd,
                                                          strict=True)]
    for o, q in blocks:
        sl = slice(o, o + q)
        out = max(out, math.sqrt(float(np.sum(b[sl] ** 2 / gram[sl]))))
    return out


def chosen_average(values: np.ndarray, chosen: np.ndarray) -> float:
    """``y'v`` for the oracle's frequencies ``y = chosen / sum(chosen)`` (0 with no round)."""
    chosen = np.asarray(chosen, dtype=float)
    total = float(chosen.sum())
    return float(chosen @ np.asarray(values, dtype=float)) / total if total > 0 else 0.0


def rhs_sensitivity(form: Any, chosen: np.ndarray) -> float:
    """The sensitivity of ``y'h``: ``y'dh`` for entrywise bounds ``dh`` on the right-hand
    sides (0 when every chosen row's is public)."""
    return chosen_average(form.dh, chosen)


def averaged_loss_lower(form: Any, tau: float, chosen: np.ndarray,
                        loss_sum: np.ndarray | None, rounds: int, noise: Any, beta: float,
                        rhs_upper: float | None = None) -> float | None:
    """A lower bound on the optimum (canonical ``c'x``) from one run of the objective search at
    target ``tau`` (``form`` has the target row last, :meth:`MWUForm.with_target`), valid on
    the noise event of probability ``1 - beta`` (module doc): ``tau + margin R w / y_obj``.

    ``margin = lambda_min(L / gram) - y'h - E`` bounds ``sum_i y_i (G_i z - h_i)`` from below
    over the whole domain; at the optimum ``z*`` every row but the target's is met, so ``y_obj
    (c'x* - tau) / (R w) >= margin`` (the target row is ``(c'x - tau) / (R w)``, ``w`` the
    objective's width).  A positive margin proves ``tau`` below the optimum; a negative one
    still bounds it.  When a chosen row's right-hand side is private, ``rhs_upper`` (an upper
    bound on ``y'h`` from its release, on its own event) takes the place of ``y'h``; without
    it, or without the run's loss or any weight on the target row, None.
    """
    if loss_sum is None or rounds <= 0:
        return None
    chosen = np.asarray(chosen, dtype=float)
    y = chosen / float(rounds)
    if y[-1] <= 0:
        return None
    if rhs_sensitivity(form, chosen) > 0:
        if rhs_upper is None:
            return None                    # y'h would read private right-hand sides
        yh = float(rhs_upper)
    else:
        yh = float(y @ np.asarray(form.h, dtype=float))
    L = np.asarray(loss_sum, dtype=float) / float(rounds)
    lam_min = float(form.algebra.eigenvalues(L / form.algebra.gram).min())
    margin = lam_min - yh - noise_bound(noise, form.algebra, rounds, beta)
    return float(tau) + margin * form.R * form.objective_width / float(y[-1])
