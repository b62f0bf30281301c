"""Fit terms with private targets beside private constraints: the fit terms' certificate over
the loosened counterpart.

The pattern: the objective's private parameters ``P_o`` have the fit pattern of
:mod:`cvxdp.solvers.perturbation.fit_detect` and occur in no constraint; the constraints'
private parameters ``P_c`` occur nowhere in the objective (ridge regression with private
targets under a private l1 budget; index tracking of a private benchmark with a private floor
on expected return).  The robust counterpart tightens every unit, the objective's epigraph rows
too, so its point pays the noise radius twice in the objective (trial 17: 1.2e-2 against a
second-order 1e-4) and its certificate can be ``inf`` when no public row bounds the epigraph
variable.  Two more post-processings of the same release (the same noise; no budget):

* ``T_f``, the counterpart with the constraint units tightened and the objective's rows kept
  at the released ``y~``: it minimises the noisy objective ``h`` over the tightened
  constraints, and its point ``x_f`` meets the TRUE constraints on the release's noise event
  (``T_f`` lies in the true feasible set ``F`` there);
* ``L_f``, the loosened counterpart with the constraint units loosened and the objective's
  rows exact: it contains ``F`` on the same event, and its optimum is ``min over L_f of h``.

The derivation of :mod:`cvxdp.solvers.perturbation.fit_term` holds with the public constraints
replaced by ``L_f``: the true minimiser ``x*`` lies in ``L_f``, ``x_e`` minimises ``h`` over
``L_f`` (so ``h(x*) >= h(x_e) + lam ||D||^2`` per square term, strong convexity along the
residual), and the released point lies in ``T_f``, a subset of ``L_f`` (so ``||r(x^) -
r(x_e)||^2 <= delta / lam``).  So ``fit_bounds`` at any point of ``T_f`` (``x_f``, or the
tightened counterpart's point) with ``h_min = min over L_f of h`` less the solver's margin
bounds its sub-optimality on the union of the release's event (``beta``) and the fit terms'
events (``beta`` more).  The refinements that solve over the user's constraints read the public
ones only (``detect_fit_terms(exclude=...)``): a superset of ``L_f``, so their minima stay
lower bounds and their boxes contain it.  The violation is the constraint units' slack test
(:func:`cvxdp.solvers.certificate.violation_bounds` on those units) and the public rows,
exactly.  Everything is computed from the release and public data.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import cvxpy as cp
import numpy as np

from cvxdp.declarations import spec_parameters
from cvxdp.solution import Certificate
from cvxdp.solvers.certificate import violation_bounds
from cvxdp.solvers.perturbation.entries import private_entries, within_domains
from cvxdp.solvers.perturbation.fit_detect import FitModel, detect_fit_terms
from cvxdp.solvers.perturbation.fit_term import fit_bounds
from cvxdp.solvers.perturbation.loosened import solve_loosened
from cvxdp.solvers.perturbation.plan import robust_plan
from cvxdp.solvers.perturbation.solve import _solve_tight as solve_exact_tight
from cvxdp.solvers.perturbation.solve import tightened_point
from cvxdp.transform.canon import released_values
from cvxdp.transform.parametric import program_data
from cvxdp.transform.reference import proven_point

__all__ = ["FitBeside", "detect_fit_beside", "release_beside"]


@dataclass(frozen=True)
class FitBeside:
    """The public structure of the pattern (module doc): the fit model over ``P_o`` (its noise
    vector is ``entries`` restricted to ``cols``), the plan of the constraint units alone, each
    of whose units is unit ``units[i]`` of the release's plan, and the mask of those units in
    the release's plan."""

    fit: FitModel
    params: tuple[Any, ...]
    cols: np.ndarray
    plan: Any
    units: np.ndarray
    mask: np.ndarray


def detect_fit_beside(problem: cp.Problem, scp: Any, specs: tuple[Any, ...], entries: Any,
                      plan: Any) -> FitBeside | None:
    """The pattern of the module doc, from the model's structure and the specs only; None when
    the model does not have it.  ``entries`` / ``plan``: the release's."""
    private = {p.id for p in entries.params}
    in_cons = {p.id for c in problem.constraints for p in c.parameters()} & private
    in_obj = {p.id for p in problem.objective.parameters()} & private
    if not in_cons or not in_obj or in_cons & in_obj or in_cons | in_obj != private:
        return None
    tids = entries.tensor_ids or tuple(p.id for p in entries.params)
    if any(t != p.id for p, t in zip(entries.params, tids, strict=True) if p.id in in_obj):
        return None  # the fit terms' noise map reads plain parameters only
    params_o = tuple(p for p in entries.params if p.id in in_obj)
    fit = detect_fit_terms(problem, params_o, exclude=frozenset(in_cons))
    if fit is None:
        return None
    specs_c = []
    for s in specs:
        ids = {p.id for p in spec_parameters(s)}
        if ids & in_cons and ids - in_cons:
            return None  # one declaration over both sides
        if ids & in_cons:
            specs_c.append(s)
    plan_c = robust_plan(scp, private_entries(scp, tuple(specs_c)))
    unit_of_first = {int(r): u for u, r in enumerate(plan.first_row)}
    units = np.array([unit_of_first.get(int(r), -1) for r in plan_c.first_row], dtype=int)
    # each constraint unit is the release's unit with the same rows, reached by the same
    # entries (so its noise bound B_u is the release's); the other units are the objective's
    if np.any(units < 0) or np.any(plan.support[units] != plan_c.support):
        return None
    sizes = np.array([pp["size"] for pp in entries.per_param], dtype=int)
    starts = np.concatenate([[0], np.cumsum(sizes)])
    cols = np.concatenate([np.arange(starts[i], starts[i + 1])
                           for i, p in enumerate(entries.params) if p.id in in_obj])
    mask = np.zeros(plan.N, dtype=bool)
    mask[units] = True
    return FitBeside(fit, params_o, cols, plan_c, units, mask)


def release_beside(problem: cp.Problem, scp: Any, fb: FitBeside, entries: Any, plan: Any,
                   npl: Any, released: Any, out: dict, lo: np.ndarray, hi: np.ndarray,
                   probability: float, beta: float, family: str, solver: str | None,
                   user_violation: Callable[[dict, float], float], enough: float = 0.0
                   ) -> dict | None:
    """The module doc's two programs on the release ``out`` (solve_robust_counterpart's) and
    the certifier of points of ``L_f``: ``{"x", "value", "certify", "level", "x_loose",
    "value_loose"}`` with ``x`` the point of ``T_f`` (None when it has none), ``x_loose``
    ``L_f``'s own point and ``certify(x)`` the fit terms' certificate of a point of ``L_f``
    (any tightened point is one); None when ``L_f`` has no optimal value.  ``entries``, ``plan``,
    ``npl``: the release's; ``lo, hi``: the public box of the coordinates the units reach;
    ``user_violation(primal, canonical)``: the violation of the user's constraints at a point
    from its canonical bound (``certified._user_violation``); ``probability``: the release's event's
    (``1 - beta_release``, or 1 for truncated noise); ``beta``: the fit terms' events' total.
    Post-processing of the release and public data only."""
    obj_ids = {p.id for p in fb.params}
    clipped = within_domains(entries, out["noisy"])
    # the counterparts read the constraints' data within their signs (as the release's
    # counterpart does) and the objective's at the released y~ (the fit bound's h)
    data = {k: (out["noisy"][k] if k in obj_ids else v) for k, v in clipped.items()}
    c_f, off_f, A_f, b_f = program_data(scp, data)
    prog0 = dataclasses.replace(released, c=c_f, offset=off_f)
    plan_c = fb.plan
    scale = (npl.B * npl.sigma_unit)[fb.units]
    # T_f at the release's level, else (Gaussian noise) at the weaker levels its counterpart
    # falls back to (solve.FALLBACK_BETAS): such a point is still in the noisy constraints,
    # so in L_f, and the fit bound holds for it; its violation bound is the requested level's
    point, _, level, _ = tightened_point(prog0, A_f, b_f, plan, npl, solver, units=fb.units,
                                         sub_plan=plan_c)
    x_f = None if point is None else np.asarray(point[:scp.n])
    # the loosened counterpart's box may grow from a point of F on the event: T_f's at the
    # release's level only (a fallback level's point may lie outside F)
    loose_prog, loose = solve_loosened(prog0, A_f, b_f, plan_c, scale, lo, hi,
                                       lambda prog: solve_exact_tight(prog, solver),
                                       x_f if level == npl.beta else None,
                                       public_objective=False, enough=enough)
    if loose.status != cp.OPTIMAL or loose.value is None:
        return None
    # 100x the duality-gap tolerance the solve met below the minimum (ExactSolution)
    h_min = loose.lower_bound()
    noisy_y = tuple(np.asarray(out["noisy"][p.id], dtype=float) for p in fb.params)
    sigma = entries.delta[fb.cols] * npl.sigma_unit
    scale_all = npl.B * npl.sigma_unit

    def certify(x: np.ndarray) -> tuple[Certificate, dict]:
        primal = released_values(problem, scp, x)
        upper, lower, gap = fit_bounds(fb.fit, primal, noisy_y, h_min, sigma, beta, family,
                                       enough=enough)
        viol, viol_eq = violation_bounds(scp, out["A"], out["b"], plan, scale_all, x,
                                         units=fb.mask)
        cert = Certificate.from_bounds(
            objective_upper=upper, optimum_lower=lower,
            violation_bound=user_violation(primal, viol),
            equality_violation_bound=viol_eq, probability=probability - beta,
            gap_bound=gap,
            how=("perturbation, fit terms with private targets beside private constraints: the "
                 "fit terms' bound over the loosened constraints (the objective's rows exact), "
                 "at a point of them, on the release's noise event and the fit terms' (beta = "
                 f"{beta:g} each)"))
        return cert, primal

    h_f = None if x_f is None else float(c_f @ x_f + off_f)
    # L_f's own point: in L_f, so the fit bound holds for it too (with the loosened rows'
    # violation); a candidate where T_f has no point at any level
    x_l = proven_point(loose_prog, loose)
    x_l = None if x_l is None else np.asarray(x_l[:scp.n])
    return {"x": x_f, "value": h_f, "certify": certify, "level": level, "x_loose": x_l,
            "value_loose": None if x_l is None else float(c_f @ x_l + off_f)}
