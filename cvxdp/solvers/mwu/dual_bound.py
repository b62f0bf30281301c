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

The multipliers.  The oracle's frequencies fix only the *direction* of the private rows'
multiplier, ``y_c`` (``y`` without the target's entry): weak duality holds for every weight
``lam >= 0`` on it, every ``mu >= 0`` on the public rows (known ``G_P``, ``h_P``; the optimum
meets them too) and weight 1 on the target row ``g z <= h_o``.  With ``L_c = L - y_obj g =
sum_{i != obj} y_i G_i + N`` (the target row is public, so it is subtracted exactly),

    g z* - h_o >= F(lam, mu) := min_{z in D} <g + lam L_c + G_P' mu, z>
                                - lam (y_c'h + E) - mu'h_P - h_o

on the noise event (``<N, z> <= E`` on D and every row but the target's met at ``z*``), for
all ``(lam, mu)`` at once: the event does not depend on them, so they may be chosen after the
run from released values (post-processing).  The oracle's own ratio is ``lam = 1 / y_obj``,
``mu = 0`` (the bound before); ``F`` is concave, and the bound takes the best of that point, a
linear program ``max F`` over ``(lam, mu)`` when the domain is an orthant (HiGHS through SciPy),
else a golden-section search over ``lam`` (``mu = 0``).  Whatever the search returns, the
bound is ``F`` evaluated directly at the chosen multipliers (clipped to ``>= 0``), so a solver's
inaccuracy can only loosen it.  It matters when the oracle spreads its choices (a small budget
per round, many rows): its frequencies then put little weight on the target (``y_obj`` of
0.005 at m = 1e4 rows, epsilon 1), and ``1 / y_obj`` multiplies the noise term ``E`` and the
right-hand sides.

Pooling the runs.  The runs of one search share every row but the target, whose right-hand
side ``tau_s`` changes; the target row is public, so each run's private part ``L_c`` is known
exactly up to its noise, and a nonnegative combination of the runs' private parts is again a
multiplier direction.  Round ``t`` of run ``s`` is weighed ``a_t = 1 / (S T_s)``, ``T_s`` the
run's planned rounds (fixed before the run, so ``a_t`` is predictable), the run's weight being
``w_s = rounds_s / (S T_s)``: the pooled noise ``sum_t a_t n_t`` is again a martingale with
Gaussian increments, whose variances sum to at most ``s_j^2 / (S min_s T_s)``, so ``E`` is the
bound above at ``S min_s T_s`` rounds -- about ``sqrt(S)`` smaller than a single run's.  The
pooled bound uses the last target's row (any target row may be used: only the weight-1 target
term carries ``tau``).  With private right-hand sides each run's released upper bound on
``y'h`` enters with its weight (on the events the runs' releases already hold).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linprog

from cvxdp.solvers.golden import golden_min

__all__ = ["noise_bound", "noise_scales", "averaged_loss_lower", "best_lagrangian", "PooledLoss",
           "public_rows", "rhs_sensitivity", "chosen_average"]

#: public rows given their own multiplier in the linear program (beyond, ``mu = 0``)
_MAX_PUBLIC_MULTIPLIERS = 20000
_GOLDEN_STEPS = 60


def noise_scales(noise: Any) -> np.ndarray | None:
    """``s_j = max_i sigma_unit d2_i phi_j`` over the rows whose private support holds ``j``
    (the largest standard deviation coordinate ``j`` of one round's noise can have; None: no
    noise)."""
    if noise is None or noise.sigma_unit == 0:
        return None
    S = sp.csr_matrix(noise.support, dtype=float, copy=True)
    S.data[:] = 1.0
    return np.asarray(S.multiply(np.asarray(noise.d2, dtype=float)[:, None]).max(axis=0)
                      .toarray()).ravel() * float(noise.sigma_unit) * np.asarray(noise.phi_scale)


def noise_bound(noise: Any, algebra: Any, rounds: int, beta: float,
                scales: np.ndarray | None = None) -> float:
    """``E`` with ``max_{z in D} <N, z> <= E`` with probability ``>= 1 - beta`` (module doc),
    for the average noise ``N`` of ``rounds`` rounds of ``noise`` (a
    :class:`cvxdp.solvers.mwu.loop.RowGaussianNoise`; None: no noise, 0), or of rounds whose
    coordinates' standard deviations are at most ``scales``."""
    s = noise_scales(noise) if scales is None else np.asarray(scales, dtype=float)
    if s is None or rounds <= 0 or not np.any(s > 0):
        return 0.0
    k = s.size
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


def public_rows(form: Any) -> np.ndarray:
    """Rows of ``form`` with no private coefficient or right-hand side, the target excluded."""
    dG = sp.csr_matrix(form.dG)
    return np.flatnonzero((np.diff(dG.indptr) == 0) & (np.asarray(form.dh) == 0)
                          & (np.asarray(form.kinds) != "target"))


def averaged_loss_lower(form: Any, tau: float, chosen: np.ndarray,
                        loss_sum: np.ndarray | None, rounds: int, noise: Any, beta: float,
                        rhs_upper: float | None = None) -> float | None:
    """A lower bound on the optimum (canonical ``c'x``) from one run of the objective search at
    target ``tau`` (``form`` has the target row last, :meth:`MWUForm.with_target`), valid on
    the noise event of probability ``1 - beta`` (module doc): ``tau + F R w``, ``F`` the
    Lagrangian bound at the best multipliers found (module doc, "The multipliers").

    ``F(lam, mu)`` bounds the target row's value ``(c'x* - tau) / (R w)`` at the optimum from
    below for every ``lam, mu >= 0`` (``w`` the objective's width); with the oracle's ratio
    ``lam = 1 / y_obj`` it is ``margin / y_obj``, ``margin = lambda_min(L / gram) - y'h - E``.
    When a chosen row's right-hand side is private, ``rhs_upper`` (an upper bound on ``y'h``
    from its release, on its own event) takes the place of ``y'h``; without it, or without the
    run's loss, None.
    """
    part = _private_part(form, chosen, loss_sum, rounds, rhs_upper)
    if part is None:
        return None
    L_c, yh_c, y_obj = part
    # lam's price: the private part's right-hand sides (the target's is public) and the noise
    price = yh_c + noise_bound(noise, form.algebra, rounds, beta)
    return best_lagrangian(form, tau, L_c, price, 1.0 / y_obj if y_obj > 0 else None)


def _target_row(form: Any) -> tuple[np.ndarray, float]:
    """The target row ``g z <= h_o`` (the form's last row, public)."""
    return sp.csr_matrix(form.G)[-1].toarray().ravel(), float(np.asarray(form.h)[-1])


def _private_part(form: Any, chosen: np.ndarray, loss_sum: np.ndarray | None, rounds: int,
                  rhs_upper: float | None) -> tuple[np.ndarray, float, float] | None:
    """One run's ``(L_c, y_c'h, y_obj)``: its averaged loss and right-hand side with the
    (public) target row's share subtracted, and the target's frequency; ``y'h`` is read from
    the right-hand sides only when every chosen row's is public, else ``rhs_upper`` (its
    release's upper bound) stands for it.  None without the run's loss, or when a private
    right-hand side has no release."""
    if loss_sum is None or rounds <= 0:
        return None
    chosen = np.asarray(chosen, dtype=float)
    y = chosen / float(rounds)
    if rhs_sensitivity(form, chosen) > 0:
        if rhs_upper is None:
            return None                    # y'h would read private right-hand sides
        yh = float(rhs_upper)
    else:
        yh = float(y @ np.asarray(form.h, dtype=float))
    g, h_o = _target_row(form)
    L_c = np.asarray(loss_sum, dtype=float) / float(rounds) - y[-1] * g
    return L_c, yh - y[-1] * h_o, float(y[-1])


def best_lagrangian(form: Any, tau: float, L_c: np.ndarray, price: float,
                    oracle_lam: float | None = None) -> float:
    """``tau + R w max F(lam, mu)`` (module doc, "The multipliers") for the private part's
    averaged loss ``L_c`` (the target row subtracted) and its price ``y_c'h + E``; the
    maximum over the oracle's ratio ``oracle_lam`` and, on an orthant domain, the linear
    program (else a golden-section search over ``lam``), ``F`` evaluated directly at each."""
    h = np.asarray(form.h, dtype=float)
    G = sp.csr_matrix(form.G)
    g, h_o = _target_row(form)
    pub = public_rows(form)
    G_P = G[pub]
    h_P = h[pub]
    alg = form.algebra
    gram = np.asarray(alg.gram, dtype=float)

    def F(lam: float, mu: np.ndarray | None = None) -> float:
        lam = max(float(lam), 0.0)
        v = g + lam * L_c
        extra = 0.0
        if mu is not None and mu.size:
            mu = np.maximum(mu, 0.0)
            v = v + G_P.T @ mu
            extra = float(mu @ h_P)
        return float(alg.eigenvalues(v / gram).min()) - lam * price - extra - h_o

    best = F(oracle_lam) if oracle_lam is not None else -math.inf
    mult = None
    if not alg.soc and not alg.psd and pub.size <= _MAX_PUBLIC_MULTIPLIERS:
        mult = _orthant_lp(g, L_c, G_P, h_P, price, gram)
        if mult is not None:
            best = max(best, F(mult[0], mult[1]))
    if mult is None:  # cone blocks (or no LP solution): the line mu = 0
        best = max(best, F(_golden_max(F, oracle_lam or 1.0)))
    return float(tau) + best * form.R * form.objective_width


class PooledLoss:
    """The runs' averaged losses pooled into one Lagrangian (module doc, "Pooling the runs").

    ``add`` is called once per run with its planned rounds ``T_plan`` (fixed before the run);
    the run's rounds weigh ``1 / (S T_plan)`` each, ``S`` the number of runs the search
    plans.  ``lower`` is the bound at the last target, its noise bound at ``beta``."""

    def __init__(self, S: int) -> None:
        self.S = int(S)
        self.L_c: np.ndarray | None = None
        self.yh = 0.0
        self.min_plan = math.inf
        self.noises: list[Any] = []
        self.ok = True

    def add(self, form: Any, chosen: np.ndarray, loss_sum: np.ndarray | None, rounds: int,
            T_plan: int, noise: Any, rhs_upper: float | None) -> None:
        part = _private_part(form, chosen, loss_sum, rounds, rhs_upper)
        if part is None or rounds > T_plan:
            # (a run past its plan would break the weights' predictable bound)
            self.ok = False
            return
        L_c, yh_c, _ = part
        w = rounds / (self.S * float(T_plan))
        self.L_c = w * L_c if self.L_c is None else self.L_c + w * L_c
        self.yh += w * yh_c
        self.min_plan = min(self.min_plan, float(T_plan))
        self.noises.append(noise)

    def lower(self, form: Any, tau: float, beta: float) -> float | None:
        if not self.ok or self.L_c is None:
            return None
        # sum of squared weights <= 1 / (S min T_plan): the noise of S min T_plan rounds, each
        # coordinate's standard deviation the largest any run's noise gives it
        eff = int(self.S * self.min_plan)
        scales = [sc for sc in map(noise_scales, self.noises) if sc is not None]
        E = noise_bound(None, form.algebra, eff, beta,
                        scales=np.max(scales, axis=0)) if scales else 0.0
        return best_lagrangian(form, tau, self.L_c, self.yh + E)


def _golden_max(F: Any, start: float) -> float:
    """A maximiser of the concave ``F`` on ``lam >= 0``: the bracket doubles from ``start``
    while ``F`` still rises, then golden-section search (any ``lam`` gives a valid bound; the
    search only makes it tighter)."""
    hi = max(float(start), 1e-12)
    f_hi = F(hi)
    for _ in range(80):
        f2 = F(2.0 * hi)
        if f2 <= f_hi:
            break
        hi, f_hi = 2.0 * hi, f2
    return golden_min(lambda lam: -F(lam), 0.0, 2.0 * hi, _GOLDEN_STEPS)[0]


def _orthant_lp(g: np.ndarray, L_c: np.ndarray, G_P: sp.csr_matrix, h_P: np.ndarray,
                price: float, gram: np.ndarray) -> tuple[float, np.ndarray] | None:
    """``argmax F(lam, mu)`` on an orthant domain (the simplex: ``min_z <v, z> = min_j v_j /
    gram_j``) as the linear program ``max s - lam price - mu'h_P`` subject to ``s <= (g + lam
    L_c + G_P' mu)_j / gram_j``; None when HiGHS does not return a solution."""
    k, p = g.size, G_P.shape[0]
    inv = sp.diags(1.0 / gram)
    A = sp.hstack([sp.csr_matrix(np.ones((k, 1))), sp.csr_matrix(-(L_c / gram)[:, None]),
                   -(inv @ G_P.T)], format="csr")
    cost = np.concatenate([[-1.0, price], h_P])
    bounds = [(None, None)] + [(0.0, None)] * (1 + p)
    res = linprog(cost, A_ub=A, b_ub=g / gram, bounds=bounds, method="highs")
    if res.status != 0 or res.x is None:
        return None
    return float(res.x[1]), np.asarray(res.x[2:], dtype=float)
