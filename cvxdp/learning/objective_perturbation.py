"""Objective perturbation for row-level models (Chaudhuri et al. 2011; Kifer et al. 2012).

Released: ``theta^ = argmin_{theta in F} sum_i l_h(p_i, y_i) + R(theta) + Delta/2 ||theta||^2
+ b' theta`` on the clipped rows, ``l_h`` the loss with its kinks publicly smoothed
(:meth:`cvxdp.learning.loss.RowLoss.smoothed`): by the certified projected Newton method of
:mod:`cvxdp.learning.newton_solve` when the public part is a ridge with boxes or one l2 ball
(decided from the structure; the bound then includes what its certified tolerance can cost,
:func:`_with_newton`), else by one CVXPY solve.

Privacy: :mod:`cvxdp.privacy.objective_perturbation` computes Delta and the noise from the
loss's public constants on F -- one row's gradient norm ``zeta = L R~`` and its rank-one
Hessian's eigenvalue ``lambda = beta R~^2`` (``L``, ``beta``: the (smoothed) loss's Lipschitz
and smoothness constants in ``p``, :class:`cvxdp.learning.loss.RowLoss`; ``R~``: the feature
bound) -- and the regulariser's strong convexity ``mu`` (Kifer, Smith & Thakurta 2012, Thm 2;
the derivation, with a non-smooth public regulariser and the constraint set, is in
``docs/learning.md``).

Utility (every term public; probability ``>= 1 - beta``): ``e_h`` the smoothing's largest
effect on one row, ``||b||_beta`` the ``1 - beta`` quantile of ``||b||`` (chi for Gaussian,
Gamma(d, G / eps2) for pure), ``W`` the public bound on ``||theta||`` over F and ``W*`` one on
the exact minimiser ``||theta*||`` (:func:`minimiser_bound`; ``W* <= W``):

    F(theta^) - F* <= n e_h + min(Delta W^2 / 2 + 2 W ||b||_beta,
                                  (Delta W* + ||b||_beta)^2 / (4 Delta + 2 mu)),

the first from ``G(theta^) <= G(theta*)`` for the perturbed objective ``G``, the second from
its ``(Delta + mu)``-strong convexity, ``G(theta*) >= G(theta^) + (Delta + mu)/2 ||theta^ -
theta*||^2`` (docs/learning.md).  ``h = sqrt(R~^2 kappa W*^2 / (2 (e^eps1 - 1) n e_1))``
minimises the first bound's terms in h (with a free intercept, ``W* = inf``, the coefficients'
bound ``W_w`` in its place: :func:`smoothing_width`).  For one logistic piece the noise at a
given ``Delta`` comes from the joint Jacobian-noise analysis
(:mod:`cvxdp.learning.joint_calibration`), never more than the separate one.  The split of
epsilon (public; :func:`choose_split`): the candidates are Chaudhuri et al.'s rule -- ``log(1 +
lambda/mu)`` when it is at most eps/2 (then Delta = 0) -- and the shares :data:`SPLITS`; the one
of smallest proven bound when that bound meets the requested accuracy, else the one of smallest
regret in the quadratic model's expected excess (:func:`curved_regret`; the status is
``user_limit`` at every candidate then, and reports the chosen candidate's bound).

References
----------
K. Chaudhuri, C. Monteleoni, A. D. Sarwate, "Differentially Private Empirical Risk
Minimization", JMLR 12 (2011), Alg. 2 and Thm 9.  D. Kifer, A. Smith, A. Thakurta, "Private
Convex Empirical Risk Minimization and High-dimensional Regression", COLT 2012, Alg. 1, Thm 2
(the privacy of every candidate; the joint analysis refines its proof, docs/learning.md step 3).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import cvxpy as cp
import numpy as np
from cvxpy.atoms.elementwise.power import Power
from cvxpy.atoms.norm1 import norm1
from cvxpy.atoms.pnorm import Pnorm
from cvxpy.atoms.quad_over_lin import quad_over_lin
from scipy import stats

from cvxdp.errors import BudgetError, UnsupportedProblemError
from cvxdp.learning.detect import RowModel
from cvxdp.learning.domain import _power, solve_on_rows, theta, variable_bound
from cvxdp.learning.joint_calibration import has_slope_curvature_profile, joint_calibration
from cvxdp.learning.loss import RowLoss
from cvxdp.learning.newton_solve import SimpleStructure, newton_solve, simple_structure
from cvxdp.privacy.accountant import PrivacyRecord
from cvxdp.privacy.budgets import ZCDP
from cvxdp.privacy.objective_perturbation import (
    OBJPERT_REFERENCE,
    ObjPertCalibration,
    calibrate_objective_perturbation,
)
from cvxdp.status import DEFAULT_ACCURACY

__all__ = ["OBJPERT_REFERENCE", "ObjPertPlan", "plan_objective_perturbation",
           "objective_perturbation"]

#: smallest smoothing width: below it the smoothed loss differs from the loss by less than the
#: conic solvers' own tolerance (1e-8 relative), so a smaller width only adds ill-conditioning
H_MIN = 1e-6
#: the smoothing width when nothing bounds the minimiser (no W*, no coefficient bound): the
#: kink's own unit (the hinge's margin 1); a limit, docs/learning.md 'The smoothing width'
H_UNBOUNDED = 1.0


@dataclass(frozen=True)
class ObjPertPlan:
    """Everything objective perturbation decides from public quantities, before any data."""

    loss: RowLoss           # the (smoothed) loss that is minimised
    h: float | None         # smoothing width (None: the loss is smooth)
    eps1: float
    eps2: float
    Delta: float
    zeta: float
    lam: float
    G: float
    k: int
    sigma: float | None     # Gaussian scale (delta > 0)
    gamma_scale: float | None   # pure DP: ||b|| ~ Gamma(d, gamma_scale)
    bound: float            # excess-risk bound (inf when W is)
    calibration: ObjPertCalibration   # cvxdp.privacy.objective_perturbation
    structure: SimpleStructure | None = None   # the Newton path's public part (None: CVXPY)
    solve_gap: float | None = None       # certified phi(theta^) - phi* the Newton path reaches
    solve_distance: float | None = None  # its bound on ||theta^ - exact minimiser||
    joint: bool = False     # noise from the joint Jacobian-noise analysis (logistic loss)
    #: what choose_split ranks when no bound is finite: the block bound at a zero intercept
    #: (free intercept; docs/learning.md 'An unregularised intercept'), else ``bound``
    split_score: float = math.inf
    #: the ``1 - beta`` quantile of ``||b||`` (either noise family: comparable across them)
    noise_norm: float = math.nan

    def info(self) -> dict[str, Any]:
        return {"Delta": self.Delta, "smoothing_h": self.h, "epsilon_jacobian": self.eps1,
                "epsilon_noise": self.eps2, "lipschitz_zeta": self.zeta,
                "hessian_lambda": self.lam, "noise_sigma": self.sigma,
                "noise_gamma_scale": self.gamma_scale, "noise_sensitivity": self.G,
                "noise_norm_quantile": self.noise_norm,
                "perturbed_solve": ("cvxpy" if self.structure is None else
                                    "projected Newton (certified gap)"),
                "solve_gap_target": self.solve_gap, "solve_distance_bound": self.solve_distance,
                "noise_analysis": ("joint Jacobian-noise (docs/learning.md, step 3)"
                                   if self.joint else "separate (Kifer et al. 2012, Thm 2)")}


def _b_quantile(plan_sigma: float | None, gamma_scale: float | None, d: int,
                beta: float) -> float:
    if plan_sigma is not None:
        return plan_sigma * math.sqrt(float(stats.chi2.isf(beta, d)))
    return float(stats.gamma.isf(beta, d, scale=gamma_scale))


def plan_objective_perturbation(model: RowModel, budget: Any, W: float, *,
                                beta: float, accuracy: float | None = None) -> ObjPertPlan:
    """Public constants of the mechanism (module docstring); raises when it does not apply."""
    if isinstance(budget, ZCDP):
        raise BudgetError("objective perturbation is (epsilon, delta)-DP, not zCDP: give "
                          "epsilon= (and delta=), or use mechanism='output' / 'gradient'.")
    loss = model.loss
    if not loss.smooth and not loss.smoothable():
        raise UnsupportedProblemError(
            "objective perturbation needs a smooth loss or kinks of the form |u| or max(a, b); "
            "this loss has a maximum of three or more terms: use mechanism='gradient'.")
    R, B = model.feature_bound, model.label_bound
    eps, delta = budget.epsilon, getattr(budget, "delta", 0.0)
    L = loss.lipschitz(R * W, B)
    if not math.isfinite(L):
        raise UnsupportedProblemError(
            "the loss's gradient is unbounded on the constraint set (e.g. a squared loss with "
            f"no bound on {model.w.name()}): add a public norm-ball or box constraint on "
            f"{model.w.name()}, or a ridge or norm penalty on all of it (whose minimiser's "
            "ball is then used).")
    zeta = L * R
    if zeta == 0:
        raise UnsupportedProblemError(f"the loss does not depend on {model.w.name()}: nothing "
                                      "to learn.")
    if loss.smooth and loss.smoothness(B) == 0 and model.mu <= 0:
        raise UnsupportedProblemError(
            "objective perturbation needs curvature: the loss is linear in w and the "
            "regulariser is not strongly convex; use mechanism='gradient'.")
    # the split with the smallest proven bound (the smaller of the two in _plan_at; W* a
    # public bound on the exact minimiser); with no finite bound, the first split
    # (Chaudhuri et al.: Delta = 0 when mu alone keeps the Jacobian cost below eps/2)
    W_star = min(W, minimiser_bound(model))
    block = intercept_block(model, W)
    plans, refused = [], []
    # with delta > 0 the pure calibration is a candidate too (an epsilon-DP release is
    # (epsilon, delta)-DP): its noise scales like G / eps against the Gaussian's G / sqrt(2 eps),
    # so it is the smaller at large epsilon; after the Gaussian ones, so a tie keeps them
    for level in ([delta, 0.0] if delta > 0 else [delta]):
        for eps1 in _splits(model, loss, eps, B, R):
            # a split that cannot be calibrated is skipped, never the mechanism
            try:
                plans.append(_plan_at(model, loss, eps1, eps, level, W, W_star, zeta, beta,
                                      block))
            except BudgetError as err:
                refused.append(err)
    if not plans:
        raise refused[0]
    best = choose_split(plans, W_star, model.dim, model.n, model.mu,
                        DEFAULT_ACCURACY if accuracy is None else accuracy)
    return _with_newton(model, best, W, W_star, beta, block)


def noise_second_moment(plan: ObjPertPlan, d: int) -> float:
    """``E ||b||^2``: ``d sigma^2`` (Gaussian), ``d (d + 1) scale^2`` (norm Gamma(d, scale))."""
    if plan.sigma is not None:
        return d * plan.sigma ** 2
    return d * (d + 1) * plan.gamma_scale ** 2


def curved_regret(plans: list[ObjPertPlan], W_star: float, d: int, n: int,
                  mu: float) -> list[float]:
    """Each plan's worst ratio, over ``||theta*|| in [0, W*]``, of its expected excess in the
    quadratic model to the smallest over the plans (``inf`` when ``W*`` is).

    The model (docs/learning.md, 'The split of epsilon'): ``theta^ - theta* = -(H + Delta
    I)^-1 (Delta theta* + b)``, ``b`` isotropic, ``H = g I`` with ``g = mu + n lambda / d``
    -- the largest mean eigenvalue the data's Hessian can have (its trace is at most ``d mu
    + n lambda``) -- so ``E[F(theta^) - F*] = g (Delta^2 ||theta*||^2 + E||b||^2) / (2 (g +
    Delta)^2)``.  In ``u = ||theta*||^2`` each is a line, so the ratio to their lower
    envelope is largest at ``u = 0``, ``u = W*^2`` or where two lines cross."""
    if not math.isfinite(W_star):
        return [math.inf] * len(plans)
    A, C = [], []
    for p in plans:
        g = mu + n * p.lam / d
        f = g / (g + p.Delta) ** 2
        A.append(f * p.Delta ** 2)
        C.append(f * noise_second_moment(p, d))
    U = W_star ** 2
    us = {0.0, U}
    for i in range(len(plans)):
        for j in range(i):
            if A[i] != A[j]:
                u = (C[j] - C[i]) / (A[i] - A[j])
                if 0 < u < U:
                    us.add(u)
    env = {u: min(a * u + c for a, c in zip(A, C, strict=True)) for u in us}
    return [max((a * u + c) / env[u] for u in us) for a, c in zip(A, C, strict=True)]


def choose_split(plans: list[ObjPertPlan], W_star: float, d: int, n: int, mu: float,
                 accuracy: float) -> ObjPertPlan:
    """The split of epsilon (public; docs/learning.md, 'The split of epsilon').

    The plan of smallest proven bound when that bound meets ``accuracy`` (the status is then
    ``optimal_inaccurate``, as the bound promises); otherwise -- the status is ``user_limit``
    at every split -- the plan of smallest :func:`curved_regret` (the expected excess in the
    quadratic model at the largest mean curvature the data can have, ``||theta*||`` known
    only to be at most ``W*``); the plan of smallest bound when no ``W*`` is finite; when no
    bound is, the plan of smallest ``split_score`` (a free intercept: the block bound at a
    zero intercept, docs/learning.md 'An unregularised intercept'), else the first plan."""
    if all(not math.isfinite(p.bound) for p in plans):
        if any(math.isfinite(p.split_score) for p in plans):
            return min(plans, key=lambda p: p.split_score)
        return plans[0]
    by_bound = min(plans, key=lambda p: p.bound)
    if by_bound.bound <= accuracy or not math.isfinite(W_star):
        return by_bound
    regret = curved_regret(plans, W_star, d, n, mu)
    return plans[min(range(len(plans)), key=lambda i: (regret[i], plans[i].bound))]


#: share of the stated excess-risk bound the Newton path's certified tolerance may add
SOLVE_SHARE = 1e-6
#: the certified gap without a finite bound, relative to ``max(1, n sup_y l(0, y))``
SOLVE_GAP_UNBOUNDED = 1e-12


def _with_newton(model: RowModel, plan: ObjPertPlan, W: float, W_star: float,
                 beta: float, block: tuple[float, float] | None = None) -> ObjPertPlan:
    """The plan with the Newton path's public target when the model's public part has its
    shape (:func:`cvxdp.learning.newton_solve.simple_structure`), the bound raised by what
    the tolerance can cost (docs/learning.md, 'Solving the perturbed problem').

    With ``theta~`` the exact minimiser, ``theta^`` the certified one (``phi(theta^) -
    phi(theta~) <= g``, ``||theta^ - theta~|| <= r = sqrt(2 g / m)``, ``m = Delta + mu``):
    ``F_h(theta^) - F_h(theta~) <= g + (Delta W~ + ||b||_beta + Delta r / 2) r``, ``W~ =
    min(W, W* + (Delta W* + ||b||_beta) / m)`` a bound on ``||theta~||``.  ``g`` is the
    largest gap for which that is at most ``SOLVE_SHARE`` times the bound (a quadratic in r).
    """
    S = simple_structure(model)
    m = plan.Delta + model.mu
    if S is None or not m > 0:
        return plan
    bnorm = _b_quantile(plan.sigma, plan.gamma_scale, model.dim, beta)
    Wt = min(W, W_star + (plan.Delta * W_star + bnorm) / m)
    if block is not None and math.isfinite(block[1]):
        Wt = min(Wt, _perturbed_minimiser_bound(model, plan, block[1], bnorm))
    if not (math.isfinite(plan.bound) and math.isfinite(Wt)):
        gap = SOLVE_GAP_UNBOUNDED * max(1.0, model.n * plan.loss.value_bound(
            0.0, model.label_bound))
        return replace(plan, structure=S, solve_gap=gap, solve_distance=math.sqrt(2 * gap / m))
    tau = SOLVE_SHARE * plan.bound
    A = plan.Delta * Wt + bnorm
    # (m + Delta)/2 r^2 + A r = tau, the stable root
    r = 2 * tau / (A + math.sqrt(A * A + 2 * (m + plan.Delta) * tau))
    gap = m * r * r / 2
    cost = gap + (A + plan.Delta * r / 2) * r
    return replace(plan, structure=S, solve_gap=gap, solve_distance=r,
                   bound=plan.bound + cost)


def _perturbed_minimiser_bound(model: RowModel, plan: ObjPertPlan, V: float,
                               bnorm: float) -> float:
    """A bound on ``||theta~||``, ``theta~`` the perturbed minimiser, with a free intercept
    ``|v| <= V``: ``G(theta~) <= G(0) = F_h(0) <= n sup_y l_h(0, y)`` and ``G(theta~) >=
    (Delta + mu_w)/2 ||w~||^2 - ||b|| (||w~|| + V)`` (non-negative loss and public terms, as
    for :func:`minimiser_bound`), a quadratic in ``||w~||``; inf when that does not apply."""
    if not (math.isfinite(_strong_convexity_radius(model, model.mu_w))
            and plan.loss.nonnegative()):
        return math.inf
    f0 = objective_at_zero(model, plan.loss)
    m_w = plan.Delta + model.mu_w
    ww = (bnorm + math.sqrt(bnorm * bnorm + 2 * m_w * (f0 + bnorm * V))) / m_w
    return math.sqrt(ww * ww + V * V)


def minimiser_bound(model: RowModel) -> float:
    """Public bound ``W*`` on ``||theta*||`` for every exact minimiser ``theta*``: when 0 is
    feasible and the loss and the public terms are >= 0, ``F(0)`` bounded by
    :func:`objective_at_zero` (the terms' value at 0 included), through the regulariser's
    ``mu/2 ||theta||^2`` (``F`` is then ``mu``-strongly convex: ``mu/2 ||theta*||^2 <= F(0)``)
    or its norms of all of ``theta``, ``c ||theta||_1`` or ``c ||theta||_2`` (both ``>= c
    ||theta||_2``, ``<= F(theta*) <= F(0)``: the lasso's and the l1-penalised logistic's);
    the smaller of the two radii, inf when neither applies."""
    return _radius(model, model.mu, _norm_total(model) if model.v is None else 0.0)


def coefficient_bound(model: RowModel) -> float:
    """Public bound on ``||w*||`` alone, the coefficients of every exact minimiser, whatever
    the intercept: the ridge on ``w`` (``mu_w/2 ||w*||^2 <= R(theta*) <= F(0)``) or the norms
    of ``w`` (``c ||w*|| <= R(theta*) <= F(0)``), under :func:`minimiser_bound`'s
    conditions; inf when neither applies."""
    return _radius(model, model.mu_w, _norm_total(model))


def _strong_convexity_radius(model: RowModel, mu: float) -> float:
    """``sqrt(2 F(0) / mu)`` under :func:`minimiser_bound`'s conditions, ``mu`` the strong
    convexity of the regulariser in the coordinates bounded (all of theta, or w alone:
    ``mu/2 ||w*||^2 <= R(theta*) <= F(theta*) <= F(0)`` as well); inf otherwise."""
    return _radius(model, mu, 0.0)


def _radius(model: RowModel, mu: float, total: float) -> float:
    """The smaller of ``sqrt(2 F(0) / mu)`` (``mu > 0``) and ``F(0) / total`` (``total > 0``,
    the weights of the norms of ``w``), ``F(0)`` by :func:`public_zero_bound`,
    computed once and only when one of them applies; inf otherwise."""
    if mu <= 0 and total <= 0:
        return math.inf
    f0 = public_zero_bound(model)
    return min(math.sqrt(2 * f0 / mu) if mu > 0 else math.inf,
               f0 / total if total > 0 else math.inf)


def _norm_total(model: RowModel) -> float:
    """``sum c`` over the public terms ``c ||w||_1`` and ``c ||w||_2`` (0 when none)."""
    return sum(c for c, e in model.public_terms
               if (isinstance(e, norm1) or isinstance(e, Pnorm) and _power(e) == 2)
               and e.args and e.args[0] is model.w)


def public_zero_bound(model: RowModel) -> float:
    """:func:`objective_at_zero` under :func:`minimiser_bound`'s conditions -- a loss >= 0,
    public terms >= 0 (norms and squares with positive weights), ``theta = 0`` feasible (a
    public solve) -- else inf.  It bounds ``F(0)``, the radii's ``F(0)``, and the gap ``F(0) -
    OPT`` of the public point ``theta = 0`` surely (``OPT >= 0``; no noise event)."""
    if not model.loss.nonnegative():
        return math.inf
    if not all(isinstance(e, (quad_over_lin, norm1, Pnorm, Power)) and c > 0
               for c, e in model.public_terms):
        return math.inf
    if not zero_feasible(model):
        return math.inf
    return objective_at_zero(model)


def objective_at_zero(model: RowModel, loss: RowLoss | None = None) -> float:
    """A public bound on ``F(0) = sum_i l(0, y_i) + R(0)``: ``n sup_y l(0, y)`` (``loss``:
    the smoothed one, default the model's) plus the public terms' value at ``theta = 0`` (a
    prior ``c ||theta - b0||^2`` is not 0 there); inf when a term reads a variable other than
    ``theta``'s. The radii above use ``R(theta*) <= F(theta*) <= F(0)`` (norms of ``theta``)
    and ``mu/2 ||theta*||^2 <= F(0) - F(theta*) <= F(0)`` (``F`` ``mu``-strongly convex around
    its minimiser over a feasible set holding 0, and ``F >= 0``)."""
    variables = theta(model)
    ids = {v.id for v in variables}
    if any(u.id not in ids for _, e in model.public_terms for u in e.variables()):
        return math.inf
    saved = [v.value for v in variables]
    try:   # the terms' value at 0 (public constants only); the variables' values restored
        for v in variables:
            v.value = np.zeros(v.shape)
        r0 = sum(c * float(e.value) for c, e in model.public_terms)
    finally:
        for v, value in zip(variables, saved, strict=True):
            v.value = value
    f0 = model.n * (loss or model.loss).value_bound(0.0, model.label_bound) + r0
    return f0 if math.isfinite(f0) else math.inf


def intercept_block(model: RowModel, W: float = math.inf) -> tuple[float, float] | None:
    """``(W_w, V)``: public bounds on the exact minimiser's coefficients ``||w*||`` and
    intercept ``|v*|`` when the intercept is less regularised than ``w`` (``mu < mu_w``;
    docs/learning.md 'An unregularised intercept').  ``W_w`` is the smallest of ``W`` (the
    domain's bound on ``||theta||``), the constraints' bound on ``w`` and ``sqrt(2 F(0) /
    mu_w)``; ``V`` is ``W`` when finite, else the constraints' bound on the intercept (inf
    without one).  None when the block bound does not apply (no intercept, the intercept
    regularised like ``w``, or no finite ``W_w``)."""
    if model.v is None or not model.mu < model.mu_w:
        return None
    if math.isfinite(W):       # no further public solves: W bounds both blocks
        return min(W, _strong_convexity_radius(model, model.mu_w)), W
    W_w = min(variable_bound(model, model.w), _strong_convexity_radius(model, model.mu_w))
    if not math.isfinite(W_w):
        return None
    return W_w, variable_bound(model, model.v)


def zero_feasible(model: RowModel) -> bool:
    """``theta = 0`` satisfies the public constraints (an exact public solve; True without
    constraints)."""
    if not model.constraints:
        return True
    prob = cp.Problem(cp.Minimize(0), [*model.constraints, *(v == 0 for v in theta(model))])
    try:
        prob.solve()
    except cp.SolverError:
        return False
    return prob.status == cp.OPTIMAL


#: shares of epsilon tried for the Jacobian part (public; the bound picks one)
SPLITS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
#: the largest Jacobian share: above it ``Delta = lambda / (e^eps1 - 1)`` is below 1e-12
#: lambda (nothing beside the loss's curvature), and from eps1 ~ 745 on it is 0 in floating
#: point, where the proof's Jacobian bound ``log(1 + lambda / (Delta + mu)) <= eps1`` fails
#: for the computed Delta when mu = 0 (a division by zero in the calibration); the rest of
#: epsilon goes to the noise
EPS1_MAX = math.log1p(1e12)


def _splits(model: RowModel, loss: RowLoss, eps: float, B: float, R: float) -> list[float]:
    """Candidate eps1: first the Chaudhuri et al. (2011, Alg. 2) rule -- ``log(1 + lambda/mu)``
    when the regulariser's own curvature keeps it below eps/2 (then Delta = 0), else eps/2 --
    then the grid :data:`SPLITS`, each at most :data:`EPS1_MAX`."""
    first = eps / 2
    if loss.smooth:
        lam = loss.smoothness(B) * R * R
        if lam == 0:
            return [0.0]
        if model.mu > 0 and math.log1p(lam / model.mu) <= eps / 2:
            first = math.log1p(lam / model.mu)
    # capped shares repeat (epsilon above ~2,760): each once, the first candidate first
    return list(dict.fromkeys(min(e, EPS1_MAX) for e in [first, *(eps * f for f in SPLITS)]))


def _plan_at(model: RowModel, loss: RowLoss, eps1: float, eps: float, delta: float, W: float,
             W_star: float, zeta: float, beta: float,
             block: tuple[float, float] | None = None) -> ObjPertPlan:
    R, B, n, d, mu = model.feature_bound, model.label_bound, model.n, model.dim, model.mu
    eps2 = eps - eps1
    h = None
    smooth = loss
    if not loss.smooth:
        h = smoothing_width(loss, n, R, B, eps1, W_star, block)
        smooth = loss.smoothed(h)
    lam = smooth.smoothness(B) * R * R
    cal = calibrate_objective_perturbation(
        epsilon=eps, delta=delta, epsilon_jacobian=eps1, hessian_bound=lam,
        strong_convexity=mu, gradient_bound=zeta, neighbours=model.spec.neighbours)
    joint = has_slope_curvature_profile(smooth) and lam > 0
    if joint:
        # the same ridge, the noise from the joint (tighter, proven) analysis; when it cannot
        # certify (floating-point rounding only) the separate analysis stands, valid alone
        try:
            cal = joint_calibration(epsilon=eps, delta=delta, Delta=cal.Delta,
                                    hessian_bound=lam, strong_convexity=mu,
                                    gradient_bound=zeta, neighbours=model.spec.neighbours)
            eps2 = cal.eps_noise
        except BudgetError:
            joint = False
    Delta, G, k, sigma, gamma_scale = cal.Delta, cal.sensitivity, cal.span, cal.sigma, \
        cal.gamma_scale
    bnorm = _b_quantile(sigma, gamma_scale, d, beta)
    err_h = n * smooth_error(loss, h)
    bound = math.inf
    if math.isfinite(W):           # diameter: Delta/2 (|th*|^2 - |th^|^2) + b'(th* - th^)
        bound = err_h + Delta * W * W / 2 + 2 * W * bnorm
    if math.isfinite(W_star) and 2 * Delta + mu > 0:   # strong convexity of the perturbed
        bound = min(bound, err_h + (Delta * W_star + bnorm) ** 2 / (4 * Delta + 2 * mu))
    score = bound
    if block is not None and 2 * Delta + mu > 0:
        # per block: (Delta + mu_w) on w, (Delta + mu) on the intercept (docs/learning.md,
        # 'An unregularised intercept'); ||b_w||, |b_v| <= ||b|| on one event
        W_w, V = block
        part_w = (Delta * W_w + bnorm) ** 2 / (4 * Delta + 2 * model.mu_w)
        g_v = bnorm + (Delta * V if Delta > 0 else 0.0)    # |Delta v* + b_v|
        bound = min(bound, err_h + part_w + g_v ** 2 / (4 * Delta + 2 * mu))
        score = min(bound, err_h + part_w + bnorm ** 2 / (4 * Delta + 2 * mu))
    return ObjPertPlan(smooth, h, eps1, eps2, Delta, zeta, lam, G, k, sigma, gamma_scale,
                       bound, cal, joint=joint, split_score=score, noise_norm=bnorm)


def smoothing_width(loss: RowLoss, n: int, R: float, B: float, eps1: float, W_star: float,
                    block: tuple[float, float] | None = None) -> float:
    """The smoothing width ``h`` of a kinked loss (public; docs/learning.md, 'The smoothing
    width'), at least :data:`H_MIN`.

    ``h`` minimises ``n e1 h + R~^2 kappa U^2 / (2 (e^eps1 - 1) h)`` -- the smoothing's cost
    plus the Jacobian ridge's ``Delta U^2 / 2`` at ``Delta = lambda(h) / (e^eps1 - 1)`` -- with
    ``U`` the public bound on the exact minimiser: ``W*``, or, when ``W*`` is infinite (a free
    intercept), the coefficients' bound ``W_w`` of :func:`intercept_block` (the block bound's
    ridge term at a zero intercept, the case ``split_score`` ranks).  With neither, ``h = 1``
    (:data:`H_UNBOUNDED`; docs/learning.md says why the accuracy share was not taken)."""
    kappa, e1 = loss.kink_curvature(B), loss.smoothing_error(1.0)
    U = W_star if math.isfinite(W_star) else (block[0] if block is not None else math.inf)
    if not (math.isfinite(U) and U > 0):
        return H_UNBOUNDED
    return max(math.sqrt(R * R * kappa * U * U * _inv_expm1(eps1) / (2 * n * e1)), H_MIN)


def _inv_expm1(x: float) -> float:
    """``1 / (e^x - 1)`` without overflow for large x."""
    return math.exp(-x) / -math.expm1(-x)


def smooth_error(loss: RowLoss, h: float | None) -> float:
    return 0.0 if h is None else loss.smoothing_error(h)


def objective_perturbation(model: RowModel, plan: ObjPertPlan, budget: Any, X: np.ndarray,
                           y: np.ndarray | None, gen: np.random.Generator, *,
                           solver: str | None = None, path: str = "auto"
                           ) -> tuple[np.ndarray, PrivacyRecord, dict[str, Any]]:
    """Draw ``b``, solve the perturbed model once; returns (theta^, record, info).

    ``path="auto"`` solves by the certified Newton method when the plan has its structure
    (public), else -- and when it does not certify within its steps -- by CVXPY;
    ``path="cvxpy"`` always by CVXPY (the reference the tests compare with)."""
    d = model.dim
    if plan.sigma is not None:
        b = gen.normal(0.0, plan.sigma, size=d)
    else:
        direction = gen.standard_normal(d)
        direction /= np.linalg.norm(direction)
        b = gen.gamma(d, plan.gamma_scale) * direction
    value = None
    if plan.structure is not None and path == "auto":
        Xt = X if model.v is None else np.column_stack([X, np.full(X.shape[0], model.sign_v)])
        found = newton_solve(plan.structure, plan.loss, Xt,
                             np.zeros(X.shape[0]) if y is None else y,
                             feature_bound=model.feature_bound,
                             label_bound=model.label_bound, Delta=plan.Delta, b=b,
                             m=plan.Delta + model.mu, target_gap=plan.solve_gap)
        value = None if found is None else found[0]
    if value is None:   # not reported: whether Newton certified depends on the data
        value, status = solve_on_rows(model, plan.loss, X, y, quadratic=plan.Delta, linear=b,
                                      solver=solver)
        del status  # a solver failure is not reported: it would depend on the data
    record = plan.calibration.record({k: v for k, v in plan.info().items() if v is not None})
    return value, record, plan.info()
