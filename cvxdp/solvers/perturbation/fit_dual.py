"""A second-order certificate of Lipschitz fit terms: the conjugate (dual) bound at the point.

The first-order share of :mod:`cvxdp.solvers.perturbation.fit_term` charges a Lipschitz term
``lam psi(a)`` with ``2 lam L N(J e)`` wherever the point lies, because the true minimiser's
residual is unknown.  This module bounds the gap through the term's convex conjugate instead,
at the released point ``x^`` with the noisy residual ``r = a(x^, y~)`` (the true argument is
``a(x, y) = a(x, y~) - v``, ``v = J e``).

For an entry (or a Euclidean term) whose loss is smooth or linear near ``r`` -- set ``S`` --
take ``u`` its derivative at ``r``; Fenchel-Young gives ``psi(z) >= u z - psi*(u)`` for every
``z``.  For the others -- set ``K`` -- ``psi(z - v) >= psi(z) - L |v|``.  So for every ``x``
in the public constraints ``X``::

    f(x) >= g(x) + lam sum_S [u a(x, y~) - psi*(u)] + lam sum_K psi(a(x, y~))
            - lam sum_S u v - lam L sum_K |v|,

``g`` the objective's public terms; its minimum over ``X`` is one exact solve ``M`` on released
data (the partially linearised noisy objective), so ``OPT >= M - lam u'v_S - lam L |v_K|``.
At ``x^``, ``f(x^) <= h(x^) + lam sum_S [psi(r - v) - psi(r)] + lam L |v_K|`` and, adding::

    f(x^) - OPT <= [h(x^) - M] + lam sum_S D(v) + 2 lam L sum_K |v|,

``D(v) = psi(r - v) - psi(r) + u v``, the Bregman divergence of ``psi`` between ``r - v`` and
``r``.  ``h(x^) - M`` is ``0`` at an exact minimiser (``M`` is tight there: ``x^`` minimises the
linearisation too) and is evaluated exactly otherwise.  On the events ``|v_i| <= t_i`` (every
separable entry) and ``||v_k|| <= T_k`` (every Euclidean term), one union bound of fixed
events (so ``S`` and ``K`` may be chosen from released values):

* ``abs`` / ``max(a, c)``: ``S`` = the entries whose kink is farther than ``t_i`` from
  ``r_i``; there ``psi`` is linear on ``[r_i - t_i, r_i + t_i]`` and ``D = 0`` exactly.
* ``huber(a, M)``: every entry in ``S`` (``psi`` is differentiable; ``psi'' <= 2``):
  ``D <= min(t^2, 4 M t)``; ``psi*(u) = u^2 / 4``.
* Euclidean norm, ``u = r / ||r||``: ``||r - v||^2 = R^2 - 2 R s + ||v||^2`` with ``s = u'v``,
  so ``D <= max_s sqrt(R^2 - 2 R s + T^2) - R + s = T^2 / (2 R)`` (at ``s = T^2 / (2R)``, a
  concave maximum, and ``(T - 2R)^2 >= 0`` when that ``s`` exceeds ``T``): second order.  A
  term goes to ``K`` (charge ``2 T``) when its divergence bound reaches ``2 T``.

  The slope is shrunk, ``u = s r / ||r||`` with ``s < 1``: Fenchel-Young holds for every
  ``||u|| <= 1`` (``psi* = 0`` on the unit ball), and :func:`euclid_divergence` is ``sup D``
  for that ``u``.  At ``s = 1`` the linearised problem sits on the edge of boundedness whenever
  a norm regulariser balances the slope at the optimum (``min ||A x - b|| + c ||x||``:
  ``||lam A'u|| = c`` there), and Clarabel reported it unbounded on about half the noise draws
  (trial 24, D3), dropping the candidate.  ``s = 1 - SLOPE_MARGIN`` (100 times the solve's
  tolerance) is tried first; if its solve is not optimal, ``1 - s = T^2 / (2 R^2)``, whose cost
  in ``h(x^) - M`` (``M`` is concave in ``s``: ``h - M(s) <= s (h - M(1)) + (1 - s)(h -
  M(0))``) is of the divergence's own second order.  Each candidate is valid on the same
  events; which one is used reads released values only.  The solves' CVXPY warnings are
  silenced (released data; their status decides).

The gap is second order in the noise for smooth terms and counts only the entries near a kink
for piecewise-linear ones, where the first-order share counts every entry's noise.

References
----------
Fenchel-Young's inequality and conjugates of norms and of the Huber function (Boyd &
Vandenberghe 2004, "Convex Optimization", Sec. 3.3 and Example 3.26; Rockafellar 1970,
"Convex Analysis", Thm 23.5); Bregman divergences of functions with bounded curvature (ibid.,
Sec. 9.1.2).  The Gaussian tail is ``Phi``'s, the Laplace's ``P(|g| > s) = e^{-s}``, and the
Euclidean terms' norms are :func:`~cvxdp.solvers.perturbation.noise_tails.noise_norm`'s.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import cvxpy as cp
import numpy as np
import scipy.sparse as sp
from scipy.stats import norm as normal

from cvxdp.solvers.perturbation.fit_detect import FitModel, FitTerm
from cvxdp.solvers.perturbation.noise_tails import exp_sum_bound, noise_norm
from cvxdp.transform.exact import TIGHT_GAP, TIGHT_TOLERANCES, value_lower_bound

__all__ = ["applies", "dual_gap"]

#: entries of separable terms above which the per-entry events are not formed (one solve with
#: that many linear coefficients is still cheap; the Laplace rows with several noise
#: coordinates each take a Chernoff bound apiece)
ENTRIES_MAX = 200_000
#: the Euclidean slope's shrink ``1 - s`` (module doc): 100 times the tight solve's tolerances,
#: the margin :func:`~cvxdp.transform.exact.value_lower_bound` keeps, so that the linearised
#: problem's dual is strictly feasible by more than the solver's own feasibility tolerance
SLOPE_MARGIN = 100.0 * TIGHT_GAP


def applies(model: FitModel) -> bool:
    """Every private term has a loss this module handles (and a residual to evaluate)."""
    return bool(model.terms) and all(
        t.psi is not None and t.residual is not None for t in model.terms) and sum(
        int(t.J.shape[0]) for t in model.terms if t.psi != "euclid") <= ENTRIES_MAX


def event_count(model: FitModel) -> int:
    """The number of events the bound takes (one per separable entry, one per Euclidean term)."""
    return sum(1 if t.psi == "euclid" else int(t.J.shape[0]) for t in model.terms)


def dual_gap(model: FitModel, residuals: list[np.ndarray], noisy_y: tuple[np.ndarray, ...],
             h_value: float, sigma: np.ndarray, beta: float, noise: str,
             cap: float = math.inf) -> float:
    """The module doc's gap bound at a point whose noisy residuals are ``residuals`` (one flat
    column-major array per term) and noisy objective ``h_value``, from the released ``y~``,
    on events of total probability ``beta``; ``inf`` when the linearised solve has no
    optimal value, or when the divergences' charge alone reaches ``cap`` (a bound already in
    hand: the solve could not improve on it, so it is not made)."""
    b = beta / max(event_count(model), 1)
    constant, charge = 0.0, 0.0
    linear, kept, euclid = [], [], []
    for k, (term, r) in enumerate(zip(model.terms, residuals, strict=True)):
        a = cp.vec(term.residual, order="F")
        # the events' bounds are public (J, sigma, b): computed once per model and level
        key = ("fit_dual", k, b, noise)
        if term.psi == "euclid":
            if key not in model.cache:
                model.cache[key] = noise_norm(term.J, sigma, b, "l2", noise)
            euclid.append((term.lam, r, a, model.cache[key]))
            continue
        w = np.ones(r.size) if term.weights is None else np.asarray(term.weights, dtype=float)
        if key not in model.cache:
            model.cache[key] = _entry_bounds(term, w, sigma, b, noise)
        t = model.cache[key]
        c0, coef, keep, share = _separable(term, r, t)
        constant += term.lam * float(w @ c0)
        charge += term.lam * float(w @ share)
        if np.any(coef):
            linear.append(term.lam * (w * coef) @ a)
        if np.any(keep):
            idx = np.flatnonzero(keep)
            kept.append(term.lam * _loss(term, a[idx], idx, w[idx]))
    # the Euclidean slopes' shrinks tried in turn (module doc): the solver's margin, then the
    # divergence's own order; without Euclidean terms one solve
    for second in ((False, True) if euclid else (False,)):
        more, extra = [], 0.0
        for lam, r, a, T in euclid:
            R = float(np.linalg.norm(r))
            s = 1.0 - (max(SLOPE_MARGIN, T * T / (2.0 * R * R)) if second else SLOPE_MARGIN) \
                if R > 0 else 0.0
            D = euclid_divergence(R, T, s) if s > 0 else math.inf
            if D < 2.0 * T:
                more.append(lam * (s / R) * r @ a)
                extra += lam * D
            else:
                more.append(lam * cp.norm(a, 2))
                extra += 2.0 * lam * T
        if charge + extra >= cap:
            return math.inf
        objective = sum([*linear, *kept, *more]) + constant
        if model.public_part is not None:
            objective = objective + model.public_part
        M = _minimum(model, objective, noisy_y)
        if math.isfinite(M):
            return max(h_value - M, 0.0) + charge + extra
    return math.inf


def euclid_divergence(R: float, T: float, s: float) -> float:
    """``sup_{||v|| <= T} ||r - v|| - R + s u'v`` for ``u = r / R`` (``R = ||r|| > 0``, ``0 <
    s <= 1``): with ``alpha = -u'v`` and the rest of ``v`` orthogonal, ``||r - v||^2 <= R^2 +
    2 R alpha + T^2``, so it is ``max_{|alpha| <= T} sqrt(R^2 + 2 R alpha + T^2) - s alpha -
    R``, concave in ``alpha`` with its stationary point at ``(R^2 / s^2 - R^2 - T^2) / (2 R)``
    (``T^2 / (2 R)`` at ``s = 1`` when ``T <= 2 R``; module doc)."""
    alpha = min(max((R * R / (s * s) - R * R - T * T) / (2.0 * R), -T), T)
    return math.sqrt(max(R * R + 2.0 * R * alpha + T * T, 0.0)) - s * alpha - R


def _separable(term: FitTerm, r: np.ndarray, t: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per entry: the linearisation's constant ``-psi*(u)``, its slope ``u`` (0 in ``K``), the
    mask of ``K`` and the charge (``sup D`` in ``S``, ``2 L t`` in ``K``), unweighted."""
    if term.psi == "huber":
        M = float(term.psi_c)
        u = np.where(np.abs(r) <= M, 2.0 * r, 2.0 * M * np.sign(r))
        return -u * u / 4.0, u, np.zeros(r.size, dtype=bool), np.minimum(t * t, 4.0 * M * t)
    kink = np.zeros(r.size) if term.psi == "abs" else np.asarray(term.psi_c, dtype=float)
    far = np.abs(r - kink) > t
    if term.psi == "abs":
        u, c0 = np.where(far, np.sign(r), 0.0), np.zeros(r.size)
    else:  # max(a, c): slope 1 above c (psi* = 0), 0 below (psi*(0) = -c)
        above = far & (r > kink)
        u, c0 = above.astype(float), np.where(far & ~above, kink, 0.0)
    return c0, u, ~far, np.where(far, 0.0, 2.0 * term.lip * t)


def _loss(term: FitTerm, a: Any, idx: np.ndarray, w: np.ndarray) -> Any:
    """``sum_K w psi(a)`` on the kept entries, as a CVXPY expression."""
    if term.psi == "abs":
        return cp.sum(cp.multiply(w, cp.abs(a)))
    return cp.sum(cp.multiply(w, cp.maximum(a, np.asarray(term.psi_c, dtype=float)[idx])))


def _entry_bounds(term: FitTerm, w: np.ndarray, sigma: np.ndarray, b: float, noise: str
                  ) -> np.ndarray:
    """``t_i`` with ``P(|v_i| > t_i) <= b`` for each entry ``v_i`` of the unweighted ``J e``
    (``J`` holds ``diag(w) da/dy``: its rows are divided back by ``w``; zero-weight rows get
    0, they do not count)."""
    M = sp.csr_matrix(term.J @ sp.diags(np.asarray(sigma, dtype=float)))
    scale = np.where(w > 0, 1.0 / np.where(w > 0, w, 1.0), 0.0)
    M = sp.csr_matrix(sp.diags(scale) @ M)
    if noise != "laplace":
        rows = np.sqrt(np.asarray(M.multiply(M).sum(axis=1)).ravel())
        return rows * float(normal.isf(b / 2.0))
    absM = abs(M)
    out = np.asarray(absM.max(axis=1).todense()).ravel() * math.log(1.0 / b)
    several = np.flatnonzero(np.diff(absM.indptr) > 1)
    for i in several:  # |sum_j m_j g_j| <= sum_j |m_j| |g_j|, |g_j| ~ Exp(1) (Chernoff)
        out[i] = exp_sum_bound(absM.data[absM.indptr[i]:absM.indptr[i + 1]], b)
    return out


def _minimum(model: FitModel, objective: Any, noisy_y: tuple[np.ndarray, ...]) -> float:
    """A lower bound on the minimum of ``objective`` over the public constraints: Clarabel's
    optimum at tight gap tolerances (:data:`~cvxdp.transform.exact.TIGHT_TOLERANCES`) less
    :func:`~cvxdp.transform.exact.value_lower_bound`'s margin; ``-inf`` when not optimal.
    The private copies hold the released ``y~`` as constants."""
    consts = {id(y): cp.Constant(np.asarray(val, dtype=float))
              for y, val in zip(model.y_copies, noisy_y, strict=True)}
    prob = cp.Problem(cp.Minimize(objective.tree_copy(consts)), list(model.constraints))
    try:
        with warnings.catch_warnings():   # released data only; the status below decides
            warnings.simplefilter("ignore")
            prob.solve(solver=cp.CLARABEL, **TIGHT_TOLERANCES)
    except cp.error.SolverError:
        return -math.inf
    if prob.status != cp.OPTIMAL or prob.value is None:
        return -math.inf
    return value_lower_bound(float(prob.value), TIGHT_GAP)
