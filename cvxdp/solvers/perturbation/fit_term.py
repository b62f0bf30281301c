"""Fit terms with private targets: the certificate of perturbation's noisy minimiser.

The pattern: the private parameters appear in no constraint, only in additive terms of a
minimised objective, each term one of

* **square**: ``lam * sum_squares(a)`` (or ``lam * norm(a, 2)**2``);
* **Lipschitz**: ``lam * phi(a)`` with ``phi`` convex and ``L``-Lipschitz in a norm ``N``:
  ``norm1`` / ``sum(abs)`` / ``sum(pos)`` / ``sum(maximum(a, c))`` (``N = l1``, ``L = 1``),
  ``sum(huber(a, M))`` (``l1``, ``L = 2M``), each also with public weights ``w >= 0``
  (``sum(multiply(w, abs(a)))``: ``N`` is the l1 norm of ``diag(w) J e``); ``norm(a, 2)``,
  ``norm(a, "fro")``, ``norm_inf``, ``lambda_max`` (``N = l2``, ``L = 1``: the operator norm is
  at most the Frobenius norm);
* **affine**: a scalar affine term (e.g. ``(tau - 0.5) * sum(y - X @ w)`` of a quantile loss);

where ``a`` is affine jointly in the variables ``x`` and the private ``y`` (so ``y`` enters with
a public coefficient ``J = da/dy``) and ``lam > 0`` is public.  Every other term and every
constraint is public.  Least squares, LAD, quantile, Huber and l2 regression, Kalman smoothing,
trend filtering, facility location and nearest-matrix problems with private targets are
written this way.

Perturbation releases ``y~ = y + e`` and the released point is ``x^``, the exact minimiser of
the noisy objective ``h`` (``y`` replaced by ``y~``) over the public constraints: no tightening
is needed, since no constraint holds private data.  With ``f`` the true objective, ``f - h =
sum_k Delta_k`` over the private terms, and ``f(x^) - f(x*) <= eps_h + Delta(x^) - Delta(x*) +
[h(x^) - eps_h - h(x*)]`` (``eps_h``: the solver's optimality margin):

* square, ``r(x) = a(x, y~)``, ``v = J e``: ``Delta(x) = -2 lam v'r(x) + lam ||v||^2``, and the
  term makes ``h`` strongly convex along ``r``: ``h(x*) >= h(x_e) + lam ||D||^2``, ``D = r(x*) -
  r(x_e)``, ``x_e`` the exact minimiser (the quadratic part is exact; the rest is convex).  So
  its share of the gap is ``max_D 2 lam v'D - lam ||D||^2 = lam ||P v||^2``, ``P`` the
  projection on the range of ``da/dx`` (where ``D`` lies): second order in the noise; the
  solver's point ``x^`` adds ``2 lam ||P v|| ||r(x^) - r(x_e)|| <= 2 ||P v|| sqrt(lam eps_h)``;
* Lipschitz: ``|Delta(x)| <= lam L N(J e)`` for every ``x``: share ``2 lam L N(J e)``;
* affine: ``Delta`` is the constant ``J e``: share 0.

So ``gap <= eps_h + sum_sq lam ||P J e||^2 + sum_Lip 2 lam L N(J e)``, and the objective's
bounds are ``f(x^) <= h(x^) + sum_k sup|Delta_k(x^)|`` and ``f(x*) >= h(x^) - eps_h - sum_k
sup|Delta_k(x^)| - gap``.  The norms of ``J e`` are bounded on events of total probability
``beta`` (:mod:`cvxdp.solvers.perturbation.noise_tails`).  Every quantity is public or
released.

References
----------
The expansion is the textbook analysis of least squares with a perturbed response (Boyd &
Vandenberghe 2004, "Convex Optimization", Sec. 6.1 and 9.1.2 on strong convexity); the norms'
tails are the Gaussian concentration inequality (Boucheron, Lugosi & Massart 2013,
"Concentration Inequalities", Thm 5.6), Chernoff's bound and Bernstein's inequality (ibid.,
Sec. 2.2 and 2.8).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import cvxpy as cp
import numpy as np

from cvxdp.solvers.perturbation import fit_curvature, fit_dual
from cvxdp.solvers.perturbation.fit_bilinear import (
    bilinear_share,
    design_noise_norm,
)
from cvxdp.solvers.perturbation.fit_detect import FitModel, FitTerm
from cvxdp.solvers.perturbation.noise_tails import noise_norm, norm_sum_bound

__all__ = ["fit_bounds"]


def fit_bounds(model: FitModel, primal: dict[str, Any], noisy_y: tuple[np.ndarray, ...],
               h_min: float, sigma: np.ndarray, beta: float, noise: str,
               enough: float = 0.0, refine: bool = True) -> tuple[float, float, float]:
    """``(upper on f(x), lower on f(x*), gap bound of x)`` of the module doc at a point ``x``
    feasible for the public constraints (its variable values ``primal``, by name), from the
    released ``y~``, a lower bound ``h_min`` on the noisy objective's minimum (the solver's
    optimum less its margin) and the noise scales ``sigma``.

    ``delta = h(x) - h_min`` (``h(x)`` evaluated exactly) plays the solver's margin ``eps_h``
    of the module doc for any point: it bounds ``h(x) - h(x_e)``.  The Lipschitz terms' ``sum_k
    lam_k L_k N_k(J_k e)`` is bounded as one function of the noise (:func:`norm_sum_bound`), and
    so are the affine terms' ``sum |J e|``; each square term has two events (``||J e||`` and its
    projection).  The events share ``beta`` equally.

    The refinements of :mod:`~cvxdp.solvers.perturbation.fit_dual` (one exact solve) and
    :mod:`~cvxdp.solvers.perturbation.fit_curvature` are taken only with ``refine`` and when
    the first-order gap exceeds ``enough`` relative to the objective (the status is decided
    below that); their events are counted whenever they apply, taken or not, so the bound's
    probability does not depend on the data."""
    h_pt = _noisy_objective(model, primal, noisy_y)
    delta = max(h_pt - h_min, 0.0)
    squares = [t for t in model.terms if t.kind == "square"]
    bilinear = [t for t in model.terms if t.kind == "bilinear"]
    lips = [(t.lam * t.lip, t.kind, t.J) for t in model.terms if t.kind in ("l1", "l2")]
    affs = [(1.0, "abs", t.J) for t in model.terms if t.kind == "affine"]
    floor = model.single_norm and model.terms[0].J_perp is not None
    conjugate = fit_dual.applies(model)
    joint = fit_curvature.applies(model)
    b = beta / (2 * len(squares) + 2 * len(bilinear) + bool(lips) + bool(affs)
                + model.single_norm + 2 * floor + conjugate + joint)
    gap, sup = delta, 0.0
    for t in bilinear:
        R, x_norm = _design_at(model, t, primal, noisy_y)
        share, s_t = bilinear_share(
            t.lam, V0=noise_norm(t.J, sigma, b, "l2", noise),
            omega=design_noise_norm(t.B, sigma, b, noise), R=R, x_norm=x_norm,
            r_norm=_residual(model, t, primal, noisy_y), eps_h=delta,
            t_max=lambda t=t: _box_diameter(model, t.x_names))
        gap += share - delta       # bilinear_share counts f(x) - f(x_e)'s delta itself
        sup += s_t
    share_before = gap
    for t in squares:
        V = noise_norm(t.J, sigma, b, "l2", noise)
        Vp = noise_norm(t.J_range, sigma, b, "l2", noise)
        r = _residual(model, t, primal, noisy_y)
        # lam ||P v||^2, plus 2 lam ||P v|| ||r(x) - r(x_e)|| for the point x against the
        # exact minimiser x_e: ||r(x) - r(x_e)||^2 <= delta / lam (strong convexity along r)
        gap += t.lam * Vp**2 + 2.0 * Vp * math.sqrt(t.lam * delta)
        sup += 2.0 * t.lam * V * r + t.lam * V**2
    if joint and refine and gap > enough * max(1.0, abs(h_pt)):
        # the squares' shares together, with the public squares' curvature (its own event)
        gap = min(gap, share_before - delta
                  + fit_curvature.joint_square_gap(model, delta, sigma, b, noise))
    if lips:
        B = norm_sum_bound(lips, sigma, b, noise)
        if model.single_norm:
            t0 = model.terms[0]
            Vp = noise_norm(t0.J_range, sigma, b, "l2", noise)
            A = h_pt - B
            if floor:
                A = max(A, _norm_floor(model, t0, primal, noisy_y, sigma, b, noise))
            gap += min(2.0 * B, _single_norm_gap(t0.lam, h_pt, delta, A, Vp))
        else:
            gap += 2.0 * B
        sup += B
    if affs:
        sup += norm_sum_bound(affs, sigma, b, noise)
    if conjugate and refine and gap > enough * max(1.0, abs(h_pt)):
        # every private term a Lipschitz loss: the conjugate bound (its own event, share b)
        gap = min(gap, fit_dual.dual_gap(model, _residuals(model, primal, noisy_y), noisy_y,
                                         h_pt, sigma, b, noise, cap=gap))
    return h_pt + sup, h_pt - sup - gap, gap


@contextmanager
def _at_point(model: FitModel, primal: dict[str, Any], noisy_y: tuple[np.ndarray, ...]
              ) -> Iterator[None]:
    """The copies' leaves hold the point's variable values (zeros for a variable without one)
    and the released ``y~`` inside the block, nothing after it."""
    for name, v in model.x_copies.items():
        v.value = np.zeros(v.shape) if primal.get(name) is None else np.asarray(
            primal[name], dtype=float)
    for y, val in zip(model.y_copies, noisy_y, strict=True):
        y.value = np.asarray(val, dtype=float)
    try:
        yield
    finally:
        for v in [*model.x_copies.values(), *model.y_copies]:
            v.value = None


def _noisy_objective(model: FitModel, primal: dict[str, Any],
                     noisy_y: tuple[np.ndarray, ...]) -> float:
    """``h(x)``: the objective at the point's variable values with the released ``y~``."""
    with _at_point(model, primal, noisy_y):
        value = model.objective.value
    return math.inf if value is None else float(value)


def _residuals(model: FitModel, primal: dict[str, Any], noisy_y: tuple[np.ndarray, ...]
               ) -> list[np.ndarray]:
    """Each term's noisy residual ``a(x, y~)`` at the point, flat and column-major."""
    with _at_point(model, primal, noisy_y):
        return [np.asarray(t.residual.value, dtype=float).ravel(order="F")
                for t in model.terms]


def _single_norm_gap(lam: float, h_value: float, eps_h: float, A: float, Vp: float) -> float:
    """The gap when the objective is exactly ``f = lam ||a||`` (Euclidean): ``x^`` also
    minimises ``h^2``, a square term of weight ``lam^2``, so ``f(x^)^2 - f(x*)^2 <= c = e2 +
    lam^2 ||P J e||^2 + 2 lam ||P J e|| sqrt(e2)`` (the square case, with ``h^2``'s margin ``e2 =
    2 h(x^) eps_h >= (h + min h) eps_h``),
    and with ``g = f(x^) - f(x*) >= 0``: ``g (2 f(x^) - g) <= c``, so ``g <= A - sqrt(A^2 -
    c)`` for any ``A <= f(x^)`` with ``A^2 >= c`` (the root is decreasing in ``A``): ``A =
    h(x^) - B`` (``|f - h| <= lam ||J e|| <= B``) or the floor of :func:`_norm_floor`, the
    larger.  ``inf`` when ``A^2 < c``."""
    eps2 = 2.0 * h_value * eps_h
    c = eps2 + (lam * Vp) ** 2 + 2.0 * lam * Vp * math.sqrt(eps2)
    if A <= 0 or A * A < c:
        return math.inf
    return c / (A + math.sqrt(A * A - c))  # = A - sqrt(A^2 - c), without cancellation


def _norm_floor(model: FitModel, term: FitTerm, primal: dict[str, Any],
                noisy_y: tuple[np.ndarray, ...], sigma: np.ndarray, beta: float,
                noise: str) -> float:
    """A lower bound on ``f(x) = lam ||a(x, y)||`` valid at every ``x``, from the residual's part
    outside the range of ``da/dx``.

    With ``P = Q Q'`` (``Q`` spanning a space that contains the range of ``da/dx``), ``(I - P)
    a(x, y) = w`` is the same vector for every ``x`` (``a`` is affine, ``J_x x`` lies in the
    range), so ``f(x) >= lam ||w||``.  At the released point ``(I - P) a(x^, y~) = w + (I - P)
    J e`` with ``rho`` its (released) norm: ``rho^2 <= ||w||^2 + 2 ||w|| s_1 + V_perp^2`` on two
    events of ``beta`` each, ``|u'(I - P) J e| <= s_1`` for the fixed unit ``u = w / ||w||``
    (one Gaussian direction) and ``||(I - P) J e|| <= V_perp`` (:func:`noise_norm`), so
    ``||w|| >= sqrt(max(rho^2 - V_perp^2 + s_1^2, 0)) - s_1``.  Unlike ``h(x^) - lam ||J e||``
    it loses only the fluctuation of ``||(I - P) J e||^2`` around its mean, not the whole noise
    norm: on the gallery's l2 regression (20 private responses, 4 unknowns) the floor is near
    the true residual while ``h - B`` is 40% below it."""
    with _at_point(model, primal, noisy_y):
        r = term.residual.value
    if r is None:
        return -math.inf
    r = np.asarray(r, dtype=float).ravel(order="F")
    rho = float(np.linalg.norm(r - term.Q @ (term.Q.T @ r)))
    V = noise_norm(term.J_perp, sigma, beta, "l2", noise)
    s1 = noise_norm(term.J_perp, sigma, beta, "abs", noise)
    return term.lam * (math.sqrt(max(rho * rho - V * V + s1 * s1, 0.0)) - s1)


def _design_at(model: FitModel, term: FitTerm, primal: dict[str, Any],
               noisy_y: tuple[np.ndarray, ...]) -> tuple[np.ndarray, float]:
    """``(R, ||x^||)``: ``dr/dx`` of a bilinear term at the released point and data, over the
    term's variables, and the norm of those variables' released values."""
    with _at_point(model, primal, noisy_y):
        g = term.residual.grad
        R = np.hstack([np.asarray(g[model.x_copies[n]].todense()).T for n in term.x_names])
        xs = np.concatenate([np.ravel(model.x_copies[n].value, order="F")
                             for n in term.x_names])
    return R, float(np.linalg.norm(xs))


def _box_diameter(model: FitModel, names: tuple[str, ...]) -> float:
    """``||hi - lo||`` of the box of the named variables over the user's (public) constraints:
    two exact solves per entry (at most 50 entries; ``inf`` beyond, or when unbounded)."""
    if names in model.cache:
        return model.cache[names]
    model.cache[names] = _box_diameter_solve(model, names)
    return model.cache[names]


def _box_diameter_solve(model: FitModel, names: tuple[str, ...]) -> float:
    vs = [model.x_copies[n] for n in names]
    size = sum(int(v.size) for v in vs)
    if size > 50 or not model.constraints:
        return math.inf
    # one parametrised program (compiled once: DPP), re-solved for +-e_j: min and max of x_j
    c = cp.Parameter(size)
    prob = cp.Problem(cp.Minimize(c @ cp.hstack([cp.vec(v, order="F") for v in vs])),
                      list(model.constraints))
    total = 0.0
    try:
        for j in range(size):
            ends = []
            for sign in (1.0, -1.0):
                c.value = sign * np.eye(size)[j]
                prob.solve(solver=cp.CLARABEL)
                if prob.status != cp.OPTIMAL:
                    return math.inf
                ends.append(sign * float(prob.value))
            total += (ends[1] - ends[0] + 2e-8 * (1.0 + abs(ends[0]) + abs(ends[1]))) ** 2
    finally:
        for v in model.x_copies.values():
            v.value = None
    return math.sqrt(total)


def _residual(model: FitModel, term: FitTerm, primal: dict[str, Any],
              noisy_y: tuple[np.ndarray, ...]) -> float:
    """``||r(x^)||`` of a square term: its residual at the released point and data."""
    with _at_point(model, primal, noisy_y):
        r = term.residual.value
    return math.inf if r is None else float(np.linalg.norm(np.asarray(r, dtype=float)))
