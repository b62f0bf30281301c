"""Perturbation's solve on a general model: the release, its certificate and its status.

:func:`solve_perturbation` runs the mechanism of :mod:`cvxdp.solvers.perturbation` end to end:
refusals by structure before any budget, the noise (Gaussian, Laplace or truncated), the exact
solve of the tightened counterpart, the loosened counterpart's optimum (the certificate's lower
bound, and the released point when the tightened counterpart is empty), the certificate
(:mod:`cvxdp.solvers.certificate`) and the status :func:`cvxdp.status.status_of` decides from it.
Everything after the noise is post-processing of the release and public data.
"""

from __future__ import annotations

import dataclasses
import math
import time
from dataclasses import dataclass
from typing import Any

import cvxpy as cp
import numpy as np
import scipy.sparse as sp

from cvxdp.argument_values import check_beta
from cvxdp.declarations import spec_parameters
from cvxdp.privacy.accountant import PrivacyAccountant
from cvxdp.privacy.budgets import Budget
from cvxdp.solution import Certificate, PrivateSolution
from cvxdp.solvers.certificate import (
    public_violation,
    reached_coordinates,
    violation_bounds,
)
from cvxdp.solvers.mwu.objective_release import _public_signs
from cvxdp.solvers.perturbation.constraint_fit import (
    ConstraintFits,
    detect_constraint_fits,
    user_terms_certificate,
)
from cvxdp.solvers.perturbation.entries import (
    objective_map,
    private_entries,
    released_user_values,
)
from cvxdp.solvers.perturbation.fit_beside import (
    FitBeside,
    detect_fit_beside,
    release_beside,
)
from cvxdp.solvers.perturbation.fit_detect import FitModel, detect_fit_terms
from cvxdp.solvers.perturbation.fit_term import fit_bounds, predicted_gap
from cvxdp.solvers.perturbation.loosened import (
    loosened_box,
    objective_reaches_private_rows,
    solve_loosened,
    unbounded_hint,
)
from cvxdp.solvers.perturbation.noise import PERTURBATION_THEOREM, choose_noise, noise_plan
from cvxdp.solvers.perturbation.noise_tails import noise_norm
from cvxdp.solvers.perturbation.plan import robust_plan
from cvxdp.solvers.perturbation.solve import _solve_tight as solve_exact_tight
from cvxdp.solvers.perturbation.solve import solve_robust_counterpart
from cvxdp.solvers.public_part import (
    BOX_SOLVES_MAX,
    _descent,
    _infeasible,
    coordinate_box,
    public_descent,
    public_feasibility,
)
from cvxdp.status import DEFAULT_BETA, refine_until, status_of
from cvxdp.transform import objective_at, public_violation_at, released_values, to_scp
from cvxdp.transform.canon import user_columns
from cvxdp.transform.domain import objective_range
from cvxdp.transform.epigraph import (
    epigraph_bounds,
    epigraph_members,
    exp_hypograph_bounds,
    hypograph_cones,
    hypograph_members,
)
from cvxdp.transform.parametric import program_data
from cvxdp.transform.reference import proven_point, validate

__all__ = ["solve_perturbation", "prepare_perturbation", "PerturbationSetup"]

#: largest certified violation of the objective's epigraph rows (canonical units) read as the
#: exact solver's feasibility tolerance (Clarabel at 1e-10, _solve_tight): below it the
#: counterpart's objective bounds count for the user's objective
EPIGRAPH_TOLERANCE = 1e-9


@dataclass(frozen=True)
class PerturbationSetup:
    """Everything perturbation decides from public quantities before any noise: the private
    entries, the counterpart's units (:class:`~cvxdp.solvers.perturbation.plan.RobustPlan`),
    the private objective's map (None when the objective is public), the noise family (and
    why, under ``noise="auto"``) and its calibration.  Built once: ``mechanism="auto"``
    predicts from it and the solve reuses it."""

    entries: Any
    plan: Any
    E_c: Any
    noise: str
    noise_why: dict | None
    npl: Any
    fit: FitModel | None = None
    #: private nonlinear constraints bounded in the user's terms (constraint_fit.py)
    cfit: ConstraintFits | None = None
    #: fit terms beside private constraints (fit_beside.py)
    beside: FitBeside | None = None


def prepare_perturbation(scp: Any, specs: tuple[Any, ...], budget: Budget, *, noise: str,
                         beta: float) -> PerturbationSetup:
    """The public half of perturbation (:class:`PerturbationSetup`); raises the typed
    refusals (``PrivacySpecError`` for a private equality it cannot bound, ``BudgetError``)
    before any budget is spent."""
    entries = private_entries(scp, specs)
    plan = robust_plan(scp, entries)  # refuses private equality rows (structure only)
    E_c = objective_map(scp, entries) if scp.sensitivity.objective_private else None
    noise_why = None
    fit = cfit = beside = None
    inverse = getattr(scp, "inverse", None)
    plain = not entries.tensor_ids or all(
        t == p.id for p, t in zip(entries.params, entries.tensor_ids, strict=True))
    problem = getattr(inverse, "problem", None)
    if problem is not None:
        if plain:
            fit = detect_fit_terms(problem, tuple(entries.params))
        cfit = detect_constraint_fits(problem, tuple(entries.params), traceable=plain)
        beside = None if fit is not None else detect_fit_beside(problem, scp, specs, entries,
                                                                plan)
    if noise == "auto":
        # a fit model is certified by its fit terms' noise norms: the families are compared
        # on those (choose_noise; public values only)
        fit_gap = None if fit is None else (
            lambda family, sigma_unit: predicted_gap(fit, entries.delta * sigma_unit, beta,
                                                     family))
        noise, noise_why = choose_noise(budget, entries, plan, beta, _support(E_c),
                                        fit_gap=fit_gap)
    return PerturbationSetup(entries, plan, E_c, noise, noise_why,
                             noise_plan(budget, noise, entries, plan, beta), fit, cfit,
                             beside)


def solve_perturbation(problem: cp.Problem, specs: tuple[Any, ...], budget: Budget, *,
                        noise: str, beta: float, rng: np.random.Generator, reference: bool,
                        solver: str | None, accuracy: float | None = None,
                        setup: PerturbationSetup | None = None) -> PrivateSolution:
    """Perturbation, its certificate and its status (module doc; certificate.py).

    ``setup`` is the public half when the caller built it already (``mechanism="auto"``
    does, to predict); it must come from the same model, specs, budget, ``noise`` and
    ``beta``.
    """

    t0 = time.perf_counter()
    beta = check_beta(beta)
    scp = to_scp(problem, private=specs)
    sb = scp.sensitivity
    neighbouring = "; ".join(s.describe() for s in specs)
    if setup is None:
        setup = prepare_perturbation(scp, specs, budget, noise=noise, beta=beta)
    entries, plan, E_c, npl = setup.entries, setup.plan, setup.E_c, setup.npl
    noise, noise_why = setup.noise, setup.noise_why
    objective_private = sb.objective_private
    row_private = np.zeros(scp.m, dtype=bool)
    row_private[sb.private_rows()] = True
    public_status = public_feasibility(scp.A, scp.b, scp.dims, row_private,
                                       exp_tail=scp.exp_tail)
    if public_status in (cp.INFEASIBLE, cp.INFEASIBLE_INACCURATE):
        return _infeasible(problem, scp, public_status, neighbouring, t0)
    if public_descent(scp):
        return _descent(problem, neighbouring, t0)
    acct = PrivacyAccountant(budget)
    acct.spend(npl.record)
    out = solve_robust_counterpart(scp, entries, plan, npl, rng, solver=solver)
    # post-processing of the release: the certificate (certificate.py) and, when the tightened
    # counterpart is empty, the loosened counterpart's point; one public box serves the
    # constraint units and a private objective
    A_t, b_t, released = out["A"], out["b"], out["released_program"]
    scale = npl.B * npl.sigma_unit
    reached = reached_coordinates([plan.E_all, *([E_c] if objective_private else [])], scp.n)
    lo, hi = coordinate_box(scp, reached, allow_unbounded=True)
    # the tightened counterpart's point is in the true feasible set on the event when it
    # comes from the requested level (a fallback level's promise is weaker)
    x_t = out["x"] if out["beta_used"] == npl.beta else None
    loose_prog, loose = solve_loosened(released, A_t, b_t, plan, scale, lo, hi,
                                       lambda prog: solve_exact_tight(prog, solver), x_t,
                                       public_objective=not objective_private,
                                       enough=refine_until(accuracy))
    x, from_loosened = out["x"], False
    loose_point = proven_point(loose_prog, loose)
    if x is None and loose_point is not None:
        x, from_loosened = loose_point[:scp.n], True
    details = {
        "mechanism": "perturbation", "noise": noise, "sigma_unit": npl.sigma_unit,
        "sigma": {p["name"]: p["sensitivity"] * npl.sigma_unit for p in entries.per_param},
        "l2_sensitivity": entries.l2_sensitivity, "l2_sensitivity_scaled": math.sqrt(entries.K),
        "per_parameter": [dict(p) for p in entries.per_param], "private_entries": entries.K,
        "units": plan.N, "norm_bound_max": float(npl.B.max(initial=0.0)),
        "beta": npl.beta, "truncation_mass": npl.q, "draws": out["draws"],
    }
    report = acct.report(theorem=PERTURBATION_THEOREM, neighbouring=neighbouring,
                         details=details)
    probability = 1.0 if noise == "truncated" else 1.0 - npl.beta
    info: dict[str, Any] = {
        "method": "perturbation", "mechanism": "perturbation", "noise": noise,
        "beta": npl.beta, "robust_status": out["status"], "loosened_status": loose.status,
        "robust_solver": out["solver"], "radius_max": out["radius_max"],
        "noisy_parameters": released_user_values(entries, out["noisy"]),
        "equality_rows_private": out["equality_rows_private"],
        "point": "loosened counterpart" if from_loosened else "tightened counterpart",
    }
    if noise_why is not None:
        info["noise_choice"] = noise_why
    if x is None:
        if loose.status in (cp.INFEASIBLE, cp.INFEASIBLE_INACCURATE):
            # the loosened counterpart contains the TRUE feasible set on the noise event: its
            # being empty proves the model infeasible for the true data with that probability
            # (post-processing of the release; the public part alone is feasible)
            sure = ("surely" if noise == "truncated"
                    else f"with probability >= {probability:.4g}")
            status = cp.INFEASIBLE_INACCURATE
            value = -np.inf if isinstance(problem.objective, cp.Maximize) else np.inf
            reason = ("the model is infeasible for the true private data, " + sure + ": the "
                      "loosened counterpart, which contains the true feasible set on the noise "
                      "event, is empty (docs/certificates.md); the constraints without private "
                      "data are feasible.")
        else:
            # neither counterpart has a point (e.g. the loosened one is unbounded): nothing is
            # released; the public part is feasible, so the status is not "infeasible"
            status, value = cp.SOLVER_ERROR, None
            reason = (f"neither the tightened ({out['status']}) nor the loosened "
                      f"({loose.status}) counterpart of the noisy data has a point at this "
                      "budget; raise epsilon or add public bounds on the variables (e.g. x <= "
                      "10, cp.norm(x) <= R; the MWU, mechanism='mwu', needs them too, or "
                      "trace_bound=, a public bound on their l1 norm).")
        reason += " (Post-processing of the noisy release; the budget was spent.)"
        info["status_reason"] = reason
        return PrivateSolution(status=status, value=value, privacy=report,
                               solve_time=time.perf_counter() - t0,
                               primal={v.name(): None for v in problem.variables()},
                               info=info, status_reason=reason)
    fitted = None
    if setup.fit is not None:
        fitted = _fit_release(problem, scp, setup, released, out, solver,
                              enough=refine_until(accuracy))
    viol, viol_eq = violation_bounds(scp, A_t, b_t, plan, scale, x)
    released_value = float(released.c @ x + released.offset)  # with the released data
    # the user's variables at the point, once: its violation of their constraints, the user
    # terms' certificate and the released primal read them (post-processing)
    x_values = released_values(problem, scp, x)
    # the objective's error anywhere needs a bound on the variables its noise multiplies at
    # the TRUE optimum: CVXPY's epigraph variables get one through their atoms (some optimal
    # point has them tight; _epigraph_box)
    e_lo, e_hi = _epigraph_box(scp, row_private, lo, hi, reached) if objective_private \
        else (lo, hi)
    slack_x, slack_max, beta_c = _objective_slack(E_c, npl, x, e_lo, e_hi)
    one_sided_lower = beta_one_sided = None
    if not math.isfinite(slack_max) and loose.status == cp.OPTIMAL:
        # the public rows leave a variable the objective's noise multiplies unbounded; the
        # loosened counterpart contains the TRUE feasible set on the noise event, so its box
        # bounds that variable at the true optimum
        hit_c = reached_coordinates([E_c], scp.n)
        l_lo, l_hi = loosened_box(loose_prog, hit_c, scp.n)
        # and its epigraph variables through their atoms, on the same box (_epigraph_box)
        l_lo, l_hi = _epigraph_box(scp, row_private, l_lo, l_hi, hit_c,
                                   ranges=lambda idx: loosened_box(loose_prog, idx, scp.n))
        slack_max = _objective_slack(E_c, npl, x, l_lo, l_hi)[1]
        if not math.isfinite(slack_max):
            # a variable bounded on one side only: the noisy objective's own growth there
            # (_one_sided_lower; its own event)
            one_sided = _one_sided_lower(E_c, npl, loose_prog, l_lo, l_hi, beta_c,
                                         lambda prog: solve_exact_tight(prog, solver))
            if one_sided is not None:
                one_sided_lower, beta_one_sided = one_sided
    upper = released_value + slack_x
    # c'x bounds the user's objective only where the rows defining its epigraph variables hold:
    # the tightened counterpart's inequality rows do on the event (at the requested level);
    # otherwise only a point meeting every row does (docs/certificates.md)
    meets = not from_loosened and viol <= EPIGRAPH_TOLERANCE * (
        1.0 + float(np.max(np.abs(b_t), initial=0.0)))
    if not meets:  # the structural search runs only where its answer matters
        reaches, reaches_eq = objective_reaches_private_rows(scp, plan.hit_idx)
        tightened = not from_loosened and out["beta_used"] == npl.beta
        if reaches and not (tightened and not reaches_eq):
            upper = math.inf
    lower = -math.inf
    if loose.status == cp.OPTIMAL:
        # 100x the duality-gap tolerance the solve met below the loosened optimum (1e-10
        # when _solve_tight met it, Clarabel's default 1e-8 when it fell back)
        lower = loose.lower_bound() - slack_max
    grew = ""
    if one_sided_lower is not None and not math.isfinite(lower):
        lower = one_sided_lower
        probability -= beta_one_sided
        grew = ("; the optimum's lower bound through the noisy objective's growth along the "
                "variables bounded on one side (their own events)")
    if not objective_private and math.isfinite(upper):
        # a public objective: the user's own objective at the released variables is released
        # too, and the epigraph value c'x sits within the exact solver's tolerance of it on
        # either side (2.4e-10 below it on trial 22a's entropy maximisation)
        at_user = objective_at(problem, x_values, {})
        if at_user is not None:
            upper = max(upper, scp.sign * at_user)
    cert = Certificate.from_bounds(
        objective_upper=upper, optimum_lower=lower,
        violation_bound=_user_violation(
            problem, x_values, {par.id for s in specs for par in spec_parameters(s)}, viol),
        equality_violation_bound=viol_eq,
        probability=probability - (beta_c if objective_private else 0.0),
        how=("perturbation: noisy slack test at the released point and the loosened "
             "counterpart's optimum, on the noise event of " +
             ("the truncated noise (surely)" if noise == "truncated"
              else f"the {noise.capitalize()} tail bounds (beta = {npl.beta:g})") + grew))
    if setup.cfit is not None:
        noisy_y = () if setup.cfit.unbounded else tuple(
            np.asarray(out["noisy"][p.id], dtype=float) for p in entries.params)
        cert = user_terms_certificate(
            setup.cfit, cert, lambda: x_values, noisy_y,
            entries.delta * npl.sigma_unit,
            float(npl.beta) if npl.beta is not None else DEFAULT_BETA,
            _tail_family(noise), meets_rows=meets)
    primal = None
    if setup.beside is not None:
        found = _beside_release(problem, scp, setup, specs, released, out, lo, hi, probability,
                                None if from_loosened else x, cert, solver, accuracy)
        if found is not None:
            x, cert, primal, released_value, viol_eq, note = found
            from_loosened = note["point"] == LOOSE_FIT_POINT
            info.update(note)
    if fitted is not None:
        # two post-processings of the same release, each certified: the better-certified
        # point is released (a choice made from released values only).  The chosen
        # certificate fails only on the union of the two events, on which every bound holds
        # at once: the counterpart's point also gets the fit bound (it meets the public
        # constraints), each point keeps the best of its bounds, and the loosened
        # counterpart's optimum bounds the TRUE optimum below whichever point is released
        fc = fitted["cert"]
        both = fc.probability + cert.probability - 1.0
        tc, _ = fitted["certify"](x)
        low = max(fc.optimum_lower, tc.optimum_lower, cert.optimum_lower)
        fitted["cert"] = Certificate.from_bounds(
            objective_upper=fc.objective_upper, optimum_lower=low,
            violation_bound=fc.violation_bound, equality_violation_bound=None,
            probability=both, gap_bound=fc.gap_bound,
            how=fc.how + "; the optimum's lower bound is the largest of the candidates'")
        # the private rows are the objective's own epigraph: the counterpart's bounds are on
        # the user's objective only where its point meets them on the event, i.e. where its
        # certified violation is the solver's tolerance (not the loosened point, nor one
        # tightened at a weaker fallback level).  The violation is the user's constraints',
        # public and exact (tc's).
        keep = not from_loosened and viol <= EPIGRAPH_TOLERANCE
        cert = Certificate.from_bounds(
            objective_upper=min(cert.objective_upper, tc.objective_upper) if keep
            else tc.objective_upper,
            optimum_lower=low, violation_bound=tc.violation_bound,
            equality_violation_bound=None, probability=both,
            gap_bound=min(cert.gap_bound, tc.gap_bound) if keep else tc.gap_bound,
            how=(cert.how + "; and the fit terms' bound at this point (the smaller of each)"
                 if keep else tc.how))
        info["point_candidates"] = {"noisy objective's minimiser": str(fitted["cert"]),
                                    "tightened counterpart": str(cert)}
        if _score(fitted["cert"], problem) <= _score(cert, problem):
            x, cert, primal = fitted["x"], fitted["cert"], fitted["primal"]
            released_value, viol_eq, from_loosened = fitted["value"], None, False
            info.update({"point": "noisy objective's minimiser (fit terms with private "
                                  "targets)", "fit_terms": fitted["terms"]})
    status, reason = status_of(cert, accuracy)  # the one status rule, for every point
    if objective_private and primal is None:
        info["objective_tail_beta"] = beta_c
    if from_loosened:
        empty = out["status"] in (cp.INFEASIBLE, cp.INFEASIBLE_INACCURATE)
        note = (("the tightened counterpart of the noisy data is empty at this budget" if empty
                 else "the exact solver found no point of the tightened counterpart of the "
                      f"noisy data ({out['status']})") +
                "; the released point solves the loosened one (post-processing, no extra "
                "budget)")
        info["point_note"] = note
        if reason:
            reason = note + "; " + reason
    info["guarantee"] = str(cert)
    info["equality_violation_bound"] = viol_eq
    if reason:
        # the variables the private data multiply that no public constraint bounds: on either
        # side when no bound is proven; on both sides when one is (a free variable leaves the
        # loosened counterpart's rows or the fit terms' noise map unbounded, and the bound
        # falls back to a weaker candidate, e.g. the objective's sign); structure only
        lo_f, hi_f = np.isfinite(lo[reached]), np.isfinite(hi[reached])
        reason += unbounded_hint(scp, reached[~(lo_f & hi_f)] if not math.isfinite(
            cert.gap_bound) else reached[~lo_f & ~hi_f])
    if reason:
        info["status_reason"] = reason
    # the objective at the released point with the released data (the TRUE objective when
    # it is public); the variables' values by name -- write_back is the one write
    value = scp.sign * released_value
    validation = validate(scp, x) if reference else None
    if primal is None:
        primal = x_values
    # the counterparts' rows move CVXPY's epigraph variables off their atoms (the tightened
    # ones inflate them by the noise radius, the loosened ones let them fall below): the
    # user's own objective at the released variables with the released data instead
    # (post-processing; +-inf outside its domain, transform.canon.extended_value)
    at = objective_at(problem, primal, info["noisy_parameters"])
    if at is not None:
        value = at
    return PrivateSolution(status=status, value=value, privacy=report, validation=validation,
                           iterations=None, solve_time=time.perf_counter() - t0,
                           primal=primal, info=info, certificate=cert, status_reason=reason)


def _user_violation(problem: cp.Problem, primal: dict[str, Any], private_ids: set[int],
                    canonical: float) -> float:
    """The violation bound the certificate reports: about the USER's constraints.

    ``canonical`` bounds every canonical row at ``x`` (:func:`violation_bounds`), including
    CVXPY's epigraph rows of the objective (``t >= ||x - y||``), which are no constraint of the
    user's (the objective's bounds account for them), and it measures a public constraint row
    by row, while the user measures the constraint's own expression (``tv(x) <= 60`` sums the
    rows' tolerances).  So the public constraints are measured as the user does, at the
    released values (:func:`cvxdp.transform.public_violation_at`: public data only); when no
    user constraint reads a private parameter that is the whole bound, otherwise the larger of
    it and ``canonical`` (which covers the private rows).  ``* (1 + 1e-9)``: the evaluation's
    rounding, on the safe side.  ``primal``: the user's variables' values at the point
    (:func:`cvxdp.transform.released_values`)."""
    measured = public_violation_at(problem, primal, private_ids, skip_private=True)
    if measured is None:
        return canonical
    measured *= 1.0 + 1e-9
    private = any(p.id in private_ids for c in problem.constraints for p in c.parameters())
    return max(canonical, measured) if private else measured


def _tail_family(noise: str) -> str:
    """The family whose tail bounds the certificates' noise norms read (``noise_tails``): the
    Laplace's for Laplace noise, the Gaussian's for the others; one rule for every caller."""
    return "laplace" if noise == "laplace" else "gaussian"


def _support(E_c: Any) -> int:
    """Number of private entries the objective's map reaches (0 for a public objective)."""
    if E_c is None:
        return 0
    return int(np.count_nonzero(np.asarray(abs(E_c).sum(axis=1)).ravel()))


def _epigraph_box(scp: Any, row_private: np.ndarray, lo: np.ndarray, hi: np.ndarray,
                  cols: np.ndarray, ranges: Any = None) -> tuple[np.ndarray, np.ndarray]:
    """``(lo, hi)`` with the bounds of CVXPY's epigraph and hypograph variables among ``cols``
    that the public rows leave unbounded replaced by their atoms' ranges over the public box:
    second-order-cone epigraph variables above (:func:`cvxdp.transform.epigraph.
    epigraph_bounds`), exponential-cone hypograph variables (``log``, ``entr``: ``t <= log(u)``)
    below and above (:func:`cvxdp.transform.epigraph.exp_hypograph_bounds`).

    ``w_i * norm(x - p_i)`` in a minimised objective is ``w_i t_i`` with ``t_i >= ||x - p_i||``;
    a DCP objective gives ``t_i`` a nonnegative TRUE coefficient (``w_i >= 0``, a declared sign)
    and ``t_i`` occurs in nothing else, so lowering it to its atom keeps every constraint and
    does not raise the true objective: SOME optimal point has ``t_i <= max over the box of ||x
    - p_i||`` (CVXPY's epigraph variables only: a variable the user wrote, ``s >= ||x - p||``,
    may carry a private coefficient of either sign).  Likewise ``w_i * log(u_i(x))`` maximised
    is ``-w_i t_i`` minimised with ``t_i <= log(u_i)``: a coefficient never positive (the
    declared signs, :func:`~cvxdp.solvers.mwu.objective_release._public_signs`), so raising
    ``t_i`` to its atom is free and some optimal point has ``t_i >= log(min over the box of
    u_i)``, finite where the box keeps ``u_i`` above 0.  That is all the loosened counterpart's
    lower bound needs (``OPT = c'x* >= c~'x* - max_box |z'x| >= min_loosened c~'x - max_box
    |z'x|`` at that ``x*``).  The cones' other variables get their range first (at most
    :data:`BOX_SOLVES_MAX` directions): over the public rows, or ``ranges(idx)`` (``(lo,
    hi)``, full length), e.g. the loosened counterpart's box, which holds every true-feasible
    point on the event.  Public rows and constants, and the release."""
    free = cols[~(np.isfinite(lo[cols]) & np.isfinite(hi[cols]))]
    # CVXPY's own variables only: their objective coefficient's sign is DCP's (a user's
    # variable s >= ||x - p|| can carry a private coefficient of either sign)
    free = free[~user_columns(scp)[free]]
    tail = scp.exp_tail
    if free.size == 0 or not (scp.dims.soc or tail is not None):
        return lo, hi
    known = np.zeros(scp.n, dtype=bool)
    known[cols] = True  # lo / hi hold ranges for the listed coordinates only
    soc_start = scp.dims.zero + scp.dims.nonneg
    need = set()
    if scp.dims.soc:
        need |= epigraph_members(sp.csr_matrix(scp.A), scp.dims.soc, soc_start,
                                 free[~np.isfinite(hi[free])])
    E, cones = None, []
    if tail is not None:
        E = sp.csr_matrix(tail.rows(scp.n))
        cones = hypograph_cones(E, free)
        need |= hypograph_members(E, cones)
    need = {j for j in need if not known[j]}
    lo2 = np.where(known, lo, -np.inf)
    hi2 = np.where(known, hi, np.inf)
    if need:
        if len(need) > BOX_SOLVES_MAX:
            return lo, hi
        idx = np.array(sorted(need), dtype=int)
        l_n, h_n = (coordinate_box(scp, idx, allow_unbounded=True) if ranges is None
                    else ranges(idx))
        lo2[idx], hi2[idx] = l_n[idx], h_n[idx]
    out_lo, out_hi = lo.copy(), hi.copy()
    if scp.dims.soc:
        bounded = epigraph_bounds(scp.A, scp.b, scp.dims.soc, soc_start, lo2, hi2, ~row_private)
        out_hi[free] = np.minimum(out_hi[free], bounded[free])
    if cones:
        c_max = _public_signs(scp, scp.sensitivity)[1]
        h_lo, h_hi = exp_hypograph_bounds(scp.A, scp.b, E, tail.b, lo2, hi2, c_max)
        out_lo[free] = np.maximum(out_lo[free], h_lo[free])
        out_hi[free] = np.minimum(out_hi[free], h_hi[free])
    return out_lo, out_hi


def _one_sided_lower(E_c: Any, npl: Any, loose_prog: Any, lo: np.ndarray, hi: np.ndarray,
                     beta_c: float, solve: Any) -> tuple[float, float] | None:
    """A lower bound on the TRUE optimum when the objective's noise multiplies a variable
    bounded on one side only (``t <= log(u)``: above), and the event it costs, ``(bound,
    beta)``; None when a variable it multiplies is bounded on neither side, the noise is
    truncated, or the program has no optimum.

    The true objective is ``c'x = c~'x - e'x`` (``e = sigma E_c' g``, the released
    coefficients' error).  For a coordinate ``j`` of ``J`` (bounded on one side) and ``|e_j| <=
    s_j`` (one event per coordinate, :func:`noise_norm` of its column at ``beta_c / |J|``):
    ``-e_j x_j >= -s_j |x_j| >= s_j x_j - 2 s_j max(h_j, 0)`` where ``x_j <= h_j`` (above),
    ``>= -s_j x_j + 2 s_j min(l_j, 0)`` where ``x_j >= l_j``.  The other coordinates ``K``
    (bounded on both sides) and the constant keep :func:`_objective_slack`'s bound on the
    same event as the upper bound (``||g_S||``, the full support).  So at the true minimiser
    ``x*`` (in the loosened counterpart ``L`` on the release's event, and within ``[lo,
    hi]``: the loosened box, or the atoms' bounds at some optimal point): ``OPT >= min over
    L of (c~ + sum_J +-s_j e_j)'x - 2 sum_J s_j m_j - U_K``, one more exact solve, finite where
    the shifted objective still grows as ``x_j`` runs to its open side (a log weight larger
    than its noise).  Released data and public structure only."""
    if E_c is None or npl.noise == "truncated":
        return None
    E = sp.csc_matrix(E_c)
    n = E.shape[1] - 1
    hit = reached_coordinates([E_c], n)
    up_open = hit[np.isfinite(lo[hit]) & ~np.isfinite(hi[hit])]
    down_open = hit[~np.isfinite(lo[hit]) & np.isfinite(hi[hit])]
    if np.any(~np.isfinite(lo[hit]) & ~np.isfinite(hi[hit])):
        return None
    J = np.concatenate([down_open, up_open])
    if J.size == 0:
        return None
    family = _tail_family(npl.noise)
    sigma = np.full(E.shape[0], float(npl.sigma_unit))
    b = beta_c / J.size
    s_j = np.array([noise_norm(sp.csr_matrix(E[:, [j]].T), sigma, b, "abs", family)
                    for j in J])
    shift = np.zeros(loose_prog.n)
    shift[down_open] = s_j[:down_open.size]
    shift[up_open] = -s_j[down_open.size:]
    const = 2.0 * (float(s_j[:down_open.size] @ np.maximum(hi[down_open], 0.0))
                   - float(s_j[down_open.size:] @ np.minimum(lo[up_open], 0.0)))
    # the two-sided coordinates and the constant: the upper bound's event (full support)
    E_K = sp.csc_matrix(E, copy=True)
    for j in J:
        E_K.data[E_K.indptr[j]:E_K.indptr[j + 1]] = 0.0
    E_K.eliminate_zeros()
    in_J = np.isin(np.arange(n), J)
    lo_K, hi_K = np.where(in_J, 0.0, lo), np.where(in_J, 0.0, hi)
    U_K = _objective_slack(E_K, npl, np.zeros(n), lo_K, hi_K, k_c=_support(E_c))[1]
    if not math.isfinite(U_K):
        return None
    sol = solve(dataclasses.replace(loose_prog, c=np.asarray(loose_prog.c, dtype=float)
                                    + shift))
    if sol.status != cp.OPTIMAL or sol.value is None:
        return None
    # the solve's own tolerance (ExactSolution.lower_bound: 1e-10 when _solve_tight met it)
    return sol.lower_bound() - const - U_K, beta_c


def _objective_slack(E_c: Any, npl: Any, x: np.ndarray, lo: np.ndarray, hi: np.ndarray,
                     k_c: int | None = None) -> tuple[float, float, float]:
    """Bounds on the released objective's error when the objective is private.

    The error at ``x`` is ``sigma g' E_c [x; 1]`` (:func:`objective_map`); with ``||g_{S_c}||
    <= sqrt(k_c) + sqrt(2 ln(1 / beta_c))`` (Gaussian concentration, its own event at
    ``beta_c = beta``) it is at most ``scale_c ||E_c [x; 1]||`` at the released point and
    ``scale_c U_c`` anywhere on the public box ``[lo, hi]`` (``U_c`` the smaller of the
    triangle bound ``sum_j ||E_c e_j|| |x_j| + ||E_c e_n||`` and Gershgorin's ``sqrt(sum_j
    d_j x_j^2 + d_n)``, ``d`` the absolute row sums of ``E_c' E_c`` (``diag(d) - E_c' E_c`` is
    diagonally dominant, hence PSD), each at the box's largest ``|x_j|``; ``inf`` where the box
    does not bound a variable the objective's private data multiply).  With one private
    coefficient per variable the second is the exact maximum, ``sqrt(n)`` below the first.

    Returns
    -------
    (at_x, anywhere, beta_c) : (float, float, float)
        ``(0, 0, 0)`` for a public objective (``E_c`` None).
    """
    if E_c is None:
        return 0.0, 0.0, 0.0
    k_c = _support(E_c) if k_c is None else k_c
    beta_c = float(npl.beta) if npl.beta is not None else DEFAULT_BETA
    scale_c = npl.sigma_unit * npl.norm_bound(k_c, math.log(1 / beta_c))
    at_x = scale_c * float(np.linalg.norm(E_c @ np.append(x, 1.0)))
    cols = np.sqrt(np.asarray(E_c.multiply(E_c).sum(axis=0)).ravel())
    hit = cols[:-1] > 0
    xmax = np.maximum(np.abs(lo[hit]), np.abs(hi[hit]))
    if not np.all(np.isfinite(xmax)):
        return at_x, math.inf, beta_c
    d = np.asarray(abs(E_c.T @ E_c).sum(axis=1)).ravel()
    gersh = math.sqrt(float(d[:-1][hit] @ xmax**2 + d[-1]))
    anywhere = scale_c * min(float(cols[:-1][hit] @ xmax + cols[-1]), gersh)
    return at_x, anywhere, beta_c


def _fit_release(problem: cp.Problem, scp: Any, setup: PerturbationSetup, released: Any,
                 out: dict, solver: str | None,
                 enough: float = 0.0) -> dict | None:
    """Fit terms with private targets (:mod:`cvxdp.solvers.perturbation.fit_term`): the exact
    minimiser of the noisy objective over the public constraints, certified by the module's
    bound; and :func:`_fit_certify` for other points.  None when the noisy program has no
    optimal point (the robust counterpart's answer stands).  ``enough``: the relative gap at
    which the certificate's refinements (an extra solve each) are not made.  Post-processing of
    the release and public data only."""
    # the released values themselves, not their projections on declared signs
    # (entries.within_domains, which the counterparts read): the fit terms' bound evaluates the
    # noisy objective at the released y~, so its minimum must be that objective's
    c_r, off_r, A_r, b_r = program_data(scp, out["noisy"])
    noisy_prog = dataclasses.replace(released, c=c_r, offset=off_r, A=A_r, b=b_r)
    sol = solve_exact_tight(noisy_prog, solver)
    if sol.status != cp.OPTIMAL or sol.x is None:
        return None
    x = np.asarray(sol.x)[:scp.n]
    h = float(noisy_prog.c @ x + noisy_prog.offset)
    # the minimum is >= h less 100x the duality-gap tolerance the solve met (1e-10 when
    # _solve_tight met it; a fallback to Clarabel's default 1e-8 ended 3.2e-8 above the
    # minimum on a lasso of 1,000 targets, above the 1e-8 (1 + |h|) assumed before)
    h_min = sol.lower_bound()
    noisy_y = tuple(np.asarray(out["noisy"][p.id], dtype=float) for p in setup.entries.params)

    def certify(point: np.ndarray) -> tuple[Certificate, dict]:
        return _fit_certify(problem, scp, setup, point, noisy_y, h_min, enough)

    cert, primal = certify(x)
    return {"x": x, "primal": primal, "cert": cert, "value": h, "certify": certify,
            "terms": [t.kind for t in setup.fit.terms]}


#: the point of the loosened constraints with the objective's rows exact (fit_beside.py)
LOOSE_FIT_POINT = ("noisy objective's minimiser over the loosened constraints (fit terms beside "
                   "private constraints; the tightened counterpart has no point)")


def _beside_release(problem: cp.Problem, scp: Any, setup: PerturbationSetup,
                    specs: tuple[Any, ...], released: Any, out: dict, lo: np.ndarray,
                    hi: np.ndarray, probability: float, x_t: np.ndarray | None,
                    cert_t: Certificate, solver: str | None, accuracy: float | None
                    ) -> tuple | None:
    """Fit terms beside private constraints (:mod:`cvxdp.solvers.perturbation.fit_beside`).

    Candidates: the noisy objective's minimiser over the tightened constraints; the tightened
    counterpart's point ``x_t`` (None when it is the loosened counterpart's) with the smaller
    of each bound of its two certificates, ``cert_t`` and the fit terms' (a point tightened at
    any level is in the loosened constraints, which the fit bound needs); and, when neither
    exists, the minimiser over the loosened constraints.  The better-certified one is
    released (:func:`_score`, released values only), with the largest lower bound on the
    optimum among the candidates and ``cert_t``.  ``(x, cert, primal, value, equality bound,
    info)``, or None when the fit terms' program has no optimum (the counterpart's answer
    stands).  Every certificate holds on the union of the events it uses."""
    npl = setup.npl
    beta = float(npl.beta) if npl.beta is not None else DEFAULT_BETA
    private_ids = {par.id for s in specs for par in spec_parameters(s)}
    bs = release_beside(problem, scp, setup.beside, setup.entries, setup.plan, npl, released,
                        out, lo, hi, probability, beta,
                        _tail_family(setup.noise), solver,
                        lambda primal, canonical: _user_violation(problem, primal, private_ids,
                                                                  canonical),
                        enough=refine_until(accuracy))
    if bs is None:
        return None
    cands = []
    if bs["x"] is not None:
        fc, primal = bs["certify"](bs["x"])
        cands.append((fc, bs["x"], primal, bs["value"],
                      "noisy objective's minimiser over the tightened constraints (fit terms "
                      "beside private constraints)"))
    if bs["x"] is None and x_t is None and bs["x_loose"] is not None:
        # no tightened point at any level: the loosened counterpart's point stands in either
        # case; L_f's is certified by the fit terms (with the loosened rows' violation)
        lc, primal = bs["certify"](bs["x_loose"])
        cands.append((lc, bs["x_loose"], primal, bs["value_loose"], LOOSE_FIT_POINT))
    if x_t is not None:
        tc, primal = bs["certify"](x_t)
        both = Certificate.from_bounds(
            objective_upper=min(cert_t.objective_upper, tc.objective_upper),
            optimum_lower=max(cert_t.optimum_lower, tc.optimum_lower),
            violation_bound=min(cert_t.violation_bound, tc.violation_bound),
            equality_violation_bound=tc.equality_violation_bound,
            probability=cert_t.probability + tc.probability - 1.0,
            gap_bound=min(cert_t.gap_bound, tc.gap_bound),
            how=cert_t.how + "; and the fit terms' bound beside the private constraints (the "
                             "smaller of each)")
        cands.append((both, x_t, primal, float(released.c @ x_t + released.offset),
                      "tightened counterpart"))
    if not cands:
        return None
    # the optimum's lower bound: the largest of the candidates' and the counterpart's (each
    # holds on its events; a certificate built on two adds their failure probabilities, so the
    # smallest probability among them covers the union)
    low = max(c[0].optimum_lower for c in cands)
    prob = min(c[0].probability for c in cands)
    if cert_t.optimum_lower > low:
        low = cert_t.optimum_lower
        prob = min(prob, cert_t.probability + cands[0][0].probability - 1.0)
    best = min(cands, key=lambda c: _score(c[0], problem))
    c0 = best[0]
    cert = Certificate.from_bounds(
        objective_upper=c0.objective_upper, optimum_lower=low,
        violation_bound=c0.violation_bound,
        equality_violation_bound=c0.equality_violation_bound,
        probability=prob, gap_bound=c0.gap_bound, how=c0.how)
    note = {"point": best[4],
            "point_candidates": {c[4]: str(c[0]) for c in cands}}
    return best[1], cert, best[2], best[3], cert.equality_violation_bound, note


def _fit_certify(problem: cp.Problem, scp: Any, setup: PerturbationSetup, x: np.ndarray,
                 noisy_y: tuple[np.ndarray, ...], h_min: float, enough: float = 0.0
                 ) -> tuple[Certificate, dict]:
    """The fit-term certificate of a point ``x`` feasible for the public constraints, and its
    variable values by name."""
    npl, entries = setup.npl, setup.entries
    beta = float(npl.beta) if npl.beta is not None else DEFAULT_BETA
    primal = released_values(problem, scp, x)
    family = _tail_family(setup.noise)
    upper, lower, gap = fit_bounds(setup.fit, primal, noisy_y, h_min,
                                   entries.delta * npl.sigma_unit, beta, family, enough=enough)
    # no constraint holds private data: the point's violation is public and exact, measured
    # on the user's constraints (_user_violation)
    viol = _user_violation(problem, primal, {p.id for p in entries.params},
                           public_violation(scp, setup.plan, x))
    cert = Certificate.from_bounds(
        objective_upper=upper, optimum_lower=lower, violation_bound=viol,
        equality_violation_bound=None, probability=1.0 - beta, gap_bound=gap,
        how=("perturbation, fit terms with private targets: sub-optimality <= the point's "
             "excess in the noisy objective + lam ||P J e||^2 per squared term + 2 lam ||J e||^2 "
             "per squared one-sided term (pos, neg) + 2 lam L N(J e) per Lipschitz term, on the "
             f"noise norms' events (beta = {beta:g})"))
    return cert, primal


def _score(cert: Certificate, problem: cp.Problem | None = None) -> tuple[float, float]:
    """How far a certificate is from proving an answer: the larger of its relative gap and
    violation bounds (the two quantities ``status_of`` compares with ``accuracy``), after the
    narrowing to the objective's public range that the entry point applies to the released one
    (:func:`cvxdp.status.within_objective_range`: a nonnegative objective's lower bound 0 turns
    a finite upper bound into a finite gap), then its upper bound (a tie of two unproven gaps
    goes to the one with a finite bound on the objective).  Public: the model's structure and
    the certificates."""
    if problem is not None:
        cert = cert.within(*objective_range(problem), "the objective's sign")
    return max(cert.relative_gap_bound, cert.violation_bound), cert.objective_upper
