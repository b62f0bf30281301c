"""Solve a general LP / SOCP / SDP model privately with the noisy-oracle MWU.

The algorithm is Song, Xue & Zhang (2025).

The ``mechanism="mwu"`` branch of the general cone-program path of ``solve_private``
(:func:`cvxdp.solvers.dispatch.solve_general` picks it): :func:`solve_mwu` checks the public
part, builds the MWU form and runs the MWU (with the objective search below).
``ConstraintPrivacy`` and ``ScalarPrivacy`` run the noisy-oracle MWU of Song, Xue & Zhang 2025
(Alg 1 / Thm C.5) on the MWU form of the model (:mod:`cvxdp.solvers.mwu.mwu_form`).  The MWU solves
feasibility; an objective is handled either by ``target=`` (one more public row "objective no
worse than target") or by a private bisection over its value (budget split evenly over the
runs and their noisy feasibility tests).  ``ObjectivePrivacy`` perturbs ``c`` once and solves
the perturbed program exactly inside a public ball (Thm C.12).
"""

from __future__ import annotations

import math
import time
from typing import Any

import cvxpy as cp
import numpy as np

from cvxdp.arguments import COMMON_OPTIONS, check_beta, check_count, check_number, check_options
from cvxdp.citations import SYMMETRIC_CONE_PROGRAMMING, cite
from cvxdp.declarations import spec_parameters
from cvxdp.errors import (
    CvxdpError,
    PrivacyGuaranteeError,
    PrivacySpecError,
    UnsupportedProblemError,
    warn_user,
)
from cvxdp.privacy.accountant import PrivacyAccountant
from cvxdp.privacy.budgets import resolve_budget
from cvxdp.privacy.rng import as_generator
from cvxdp.solution import Certificate, PrivateSolution
from cvxdp.solvers import public_part
from cvxdp.solvers.covering.covering_model import solve_covering_private
from cvxdp.solvers.mwu.mwu_form import build_mwu_form
from cvxdp.solvers.mwu.objective_release import ball_growth_bound
from cvxdp.solvers.mwu.objective_search import objective_search, trace_set_only
from cvxdp.solvers.mwu.private_scp import (
    ALG1,
    THM_C5,
    _run,
    objective_private_solve,
)
from cvxdp.solvers.objective_certificate import sharp_objective_gap
from cvxdp.solvers.objective_curvature import curvature_gap
from cvxdp.solvers.perturbation.loosened import unbounded_hint
from cvxdp.specs import as_spec_tuple
from cvxdp.status import DEFAULT_ACCURACY, DEFAULT_BETA, refine_until, status_of
from cvxdp.transform import public_violation_at, released_values, to_scp
from cvxdp.transform.canon import variables_at
from cvxdp.transform.reference import validate
from cvxdp.transform.support import exp_cone_reason

__all__ = ["solve_mwu", "ObjectiveNotOptimisedWarning", "AccuracyNotGuaranteedWarning"]

#: the second-order bound's solves are held to about this many exact solves' time: the time
#: target's ceiling (no model above 20x the exact solve); it is not started when
#: two levels (2 solves per private coordinate each) do not fit (docs/certificates.md,
#: "Objective perturbation")
_SHARP_EXACT_SOLVES = 20
#: a bound solve's cost per row of the level program, as a share of the exact solve: the exact
#: solve is CVXPY's compile plus one interior-point solve of the user's cones, a bound solve one
#: interior-point solve of the same cones and one more row (a Clarabel session per level, set
#: up once).  Symmetric cones (LP, SOC, PSD) take a tenth (the compile dominates: 1-3 ms
#: against 20-30 ms on trial 14's models); exponential cones, solved on Clarabel's
#: nonsymmetric path (about twice the exact solve's iterations on a level set, each dearer), a
#: half: trial 23's Poisson regression (300 cones) measured 0.18-0.49 of the exact solve
#: (median 0.35) over 15 paired runs at epsilon 1e6, 10 and 1, the thin level sets of large
#: epsilon at the top; counted at the top, the budget holds on them too.  As the
#: denominators ``(symmetric, exponential)``
_SHARP_SHARE = (10, 2)
#: the budget of a program of symmetric cones only, the largest (20 exact solves at a tenth)
_SHARP_MAX_SOLVES = _SHARP_EXACT_SOLVES * _SHARP_SHARE[0]


def sharp_budget(prog: Any) -> int:
    """Bound solves the second-order bound may make over ``prog``'s public set: about
    :data:`_SHARP_EXACT_SOLVES` exact solves' time, each solve costing its level program's
    rows at their cone's share (:data:`_SHARP_SHARE`; public structure only, so the budget and
    the bound it buys are the same on every machine).  200 without exponential cones; 40 when
    (nearly) every row is in one."""
    tail = getattr(prog, "exp_tail", None)
    exp = 0 if tail is None else 3 * int(tail.cones)
    sym = int(prog.m) + 1  # the level row c~'x <= c~'x~ + d
    per_sym, per_exp = _SHARP_SHARE
    # floor(E (sym + exp) / (sym / per_sym + exp / per_exp)), in integers
    return _SHARP_EXACT_SOLVES * per_sym * per_exp * (sym + exp) // (per_exp * sym
                                                                       + per_sym * exp)

_OPTS = {"schedule", "beta", "width", "norm_bound", "search_steps", "search_share"}


def solve_mwu(
    problem: cp.Problem,
    *,
    epsilon: float | None = None,
    delta: float | None = None,
    rho: float | None = None,
    private: Any,
    accuracy: float | None = None,
    rng: None | int | np.random.Generator = None,
    reference: bool = False,
    verbose: bool = False,
    max_iterations: int | None = None,
    trace_bound: float | None = None,
    target: float | None = None,
    **opts: Any,
) -> PrivateSolution:
    """Solve a CVXPY LP/SOCP/SDP privately with the noisy-oracle MWU.

    Song, Xue & Zhang (2025), Sec 5.2 and App. C.

    The ``mechanism="mwu"`` branch of :func:`cvxdp.solvers.dispatch.solve_general`, whose
    docstring lists the parameters, options, returns and errors (the same here, without
    ``mechanism``).  ``ConstraintSetPrivacy`` is handed to the covering path
    (:func:`cvxdp.solvers.covering.covering_model.solve_covering_private`).

    References
    ----------
    Song, Xue & Zhang (2025), "Differential Privacy for Euclidean Jordan Algebra with
    Applications to Private Symmetric Cone Programming":
    Algorithm 1, Algorithm 5, Theorems C.2, C.5, C.7, C.9, C.12.
    """
    t0 = time.perf_counter()
    budget = resolve_budget(epsilon=epsilon, delta=delta, rho=rho)
    if accuracy is not None and not (math.isfinite(float(accuracy)) and float(accuracy) > 0):
        raise PrivacyGuaranteeError(f"accuracy= must be a finite number > 0, got {accuracy!r}.")
    gen = as_generator(rng)
    specs = as_spec_tuple(private)
    if not specs:
        raise PrivacySpecError("private= is required: e.g. cvxdp.ConstraintPrivacy(A, "
                               "sensitivity=D), D how far one person moves an entry.")
    settings = {s.setting for s in specs}
    if "constraint_set" in settings:
        # High-sensitivity constraint privacy: whole rows added/removed -> dense MWU over the
        # constraints (Song, Xue & Zhang 2025, App. B), which checks the model is a covering
        # program.
        if len(specs) > 1:
            raise PrivacySpecError("ConstraintSetPrivacy cannot be combined with other specs.")

        # options of the MWU path only: refused here rather than silently dropped
        mwu_only = {k: v for k, v in (("max_iterations", max_iterations),
                                      ("trace_bound", trace_bound), ("target", target))
                    if v is not None}
        if mwu_only:
            raise TypeError(f"solve_private: {sorted(mwu_only)} are options of the MWU path; "
                            "the covering path (ConstraintSetPrivacy) takes T= (rounds), "
                            "opt= / opt_bounds= (target trace) and s= instead.")
        return solve_covering_private(problem, specs[0], epsilon=epsilon, delta=delta, rho=rho,
                                      rng=gen, reference=reference, accuracy=accuracy, **opts)

    # the covering path above checks its own options; the nearest valid name is suggested
    check_options(opts, _OPTS | set(COMMON_OPTIONS) | {"max_iterations", "trace_bound",
                                                       "target", "mechanism"},
                  "the general path (MWU)")
    _check_option_values(opts, trace_bound, target)
    solver = public_part._exact_solver(opts.pop("solver", None))
    if "objective" in settings and len(settings) > 1:
        raise PrivacySpecError(
            "mechanism='mwu' cannot combine ObjectivePrivacy with ConstraintPrivacy/"
            "ScalarPrivacy in one solve (Song, Xue & Zhang (2025) treat the settings "
            "separately); declare one setting, or use mechanism='perturbation', which releases "
            "all of them in one Gaussian or Laplace release.")

    scp = to_scp(problem, private=specs)
    if scp.exp_tail is not None and "objective" not in settings:
        raise UnsupportedProblemError("cannot solve this model with the MWU: " + exp_cone_reason(
            problem, scp.exp_tail.cones, private=False))
    sb = scp.sensitivity
    if sb.objective_private and "objective" not in settings:
        names = ", ".join(sorted({p.name() for s in specs for p in s.params}))
        raise PrivacySpecError(
            f"mechanism='mwu': the private parameter(s) {names} also enter the objective (e.g. "
            "through the linear part of a fit term y - X @ w), but the MWU keeps the settings "
            "of Song, Xue & Zhang (2025) apart: private constraint data with a public "
            "objective (Def C.3 / C.6). Use mechanism='perturbation' (or the default 'auto'), "
            "which releases every entry once and reads all its placements from that release.")
    neighbouring = "; ".join(s.describe() for s in specs)
    # Feasibility of the public part depends on public data only: decide it exactly before any
    # budget is spent.
    row_private = np.zeros(scp.m, dtype=bool)
    row_private[sb.private_rows()] = True
    form0 = None
    if "objective" not in settings:
        try:  # structure and public constants only; errors surface below where they did
            form0 = build_mwu_form(scp.A, scp.b, scp.c, scp.dims, dA=sb.A, db=sb.b,
                                   trace_bound=trace_bound, width=opts.get("width"),
                                   check_feasible=False)
        except CvxdpError:  # a typed refusal; it surfaces below where the form is needed
            form0 = None
    if form0 is not None and trace_set_only(form0):
        public_status = cp.OPTIMAL  # {z in K, tr z = R >= 0} contains R e / tr(e)
    else:
        public_status = public_part.public_feasibility(scp.A, scp.b, scp.dims, row_private,
                                                       solver=solver)
    if public_status in (cp.INFEASIBLE, cp.INFEASIBLE_INACCURATE):
        return public_part._infeasible(problem, scp, public_status, neighbouring, t0)
    # no cap of ours beyond the size cap of schedule.iteration_cap: the schedule's T is the
    # theorem's for the requested accuracy and the budget (docs/mwu.md)
    max_iter = int(max_iterations) if max_iterations is not None else 2**62
    if max_iter < 1:
        raise PrivacyGuaranteeError("max_iterations must be >= 1.")
    beta = check_beta(opts.get("beta", DEFAULT_BETA))

    pending: Warning | None = None  # a warning that holds only if the status is user_limit
    if "objective" in settings:
        x, report, info = objective_private_solve(
            scp, sb, budget, rng=gen, beta=beta, norm_bound=opts.get("norm_bound"),
            neighbouring=neighbouring)
        iterations = None
        value_released = info.pop("value")  # sign * (c~ . x + offset~): released data only
        perturbed, supp, R, t = info.pop("_perturbed")
        # |true - released objective at x~| <= t * reach on the event (objective_release)
        reach = info.pop("_value_reach")
        value_spread = None if reach is None else t * reach * (1.0 + 1e-9)
        # the smallest first-order bound in hand (None: none, no public ball)
        firsts = [info[k] for k in ("alpha_guaranteed", "gap_bound_holder",
                                    "gap_bound_holder_inf") if info.get(k) is not None]
        alpha = min(firsts) if firsts else None
        first = math.inf if alpha is None else alpha  # the same, as a number
        acc = DEFAULT_ACCURACY if accuracy is None else float(accuracy)
        # what the status needs proved (status.refine_until), relative to the released value
        enough = refine_until(accuracy) * max(1.0, abs(value_released))
        # held to the solve budget (the time target), with or without a first-order bound in
        # hand: without a public ball the search is the only finite bound, but 1,600 solves
        # for 200 coordinates (11 s against 0.05 s exact) ended at inf on trial 15's weighted
        # least squares; a level cut by the budget counts as failed (the bound stays valid)
        budget = sharp_budget(perturbed)
        fits = 4 * supp.size <= budget
        curved = math.inf
        if (alpha is None or alpha > acc) and supp.size > 0:
            # the public terms' curvature along the private coordinates: one eigenvalue problem
            # on the same event (objective_curvature.py), before the level search's solves
            base = float(info["noisy_objective"]["c"] @ x)
            curved = curvature_gap(getattr(scp.inverse, "problem", None), scp, supp, t,
                                   1e-8 * (1.0 + abs(base)))
            if curved < first:
                info["gap_bound_curvature"] = curved
            # the curvature of a public norm or PSD block at a released point on its boundary:
            # a golden-section search of one linear maximisation per step, on the same event
            # (second order in t; objective_release.ball_growth_bound)
            if min(curved, first) > enough:
                ball = ball_growth_bound(perturbed, supp, x, info["noisy_objective"]["c"], t,
                                         best=min(curved, first))
                if ball is not None and ball < min(curved, first):
                    info["gap_bound_ball"] = ball
                    curved = ball
        if (alpha is None or (alpha > acc and (R is None or R > 0))) and supp.size > 0 \
                and fits and curved > enough:
            # Thm C.12's first-order bound misses the accuracy, or there is none (no public
            # ball): the second-order bound from the released point (objective_certificate.py;
            # 2 solves per private coordinate and level, post-processing) on the same event
            # ||z_S|| <= t, refined until it proves status.refine_until(accuracy) (enough)
            # its top level 2 R t needs only ||x_S - x~_S|| <= 2 R on the public set, which
            # the Hoelder diameter bounds too
            radius = math.inf if R is None else R
            if info.get("gap_bound_holder") is not None and t > 0:
                radius = min(radius, info["gap_bound_holder"] / (2.0 * t))
            sharp = sharp_objective_gap(perturbed, info["noisy_objective"]["c"], x, supp,
                                        radius, t, enough=enough,
                                        max_solves=budget)
            if alpha is None or sharp < alpha:  # (kept when infinite: no bound in hand)
                info["gap_bound_sharp"] = sharp
        if alpha is None:
            # no first-order bound in hand (the released objective's growth gave none either)
            # which variables, by name (structure only): the user's, else the atoms' (a log's
            # hypograph variables: its argument needs a positive floor, trial 24's D2)
            names = variables_at(scp, supp)
            where = f" ({', '.join(names)})" if names else ""
            hint = "" if names else unbounded_hint(scp, supp)
            info["status_reason"] = (
                "no accuracy is promised: the public constraints do not bound the variables "
                f"the private objective multiplies{where}, so Thm C.12's sub-optimality bound "
                "2 R ||z|| has no R; the point is feasible to the solver's tolerance (the "
                "constraints are public). Pass norm_bound= (a public bound on their Euclidean "
                "norm) or add public bounds on them for a guarantee."
                + (f" In this model{hint[1:]}." if hint else ""))
    else:
        setting = "constraint" if "constraint" in settings else "scalar"
        form = form0 if form0 is not None else build_mwu_form(
            scp.A, scp.b, scp.c, scp.dims, dA=sb.A, db=sb.b, trace_bound=trace_bound,
            width=opts.get("width"), check_feasible=False)
        acct = PrivacyAccountant(budget)
        kw = dict(accuracy=accuracy, beta=beta, schedule=opts.get("schedule", "auto"),
                  max_iterations=max_iter, verbose=verbose)
        has_obj = bool(np.any(scp.c != 0))
        if target is not None:
            tau = scp.sign * float(target) - scp.offset
            res, det = _run(setting, form.with_target(tau), budget, rng=gen, accountant=acct,
                            **kw)
            det["objective"] = "target"
        elif not has_obj:
            res, det = _run(setting, form, budget, rng=gen, accountant=acct, **kw)
            det["objective"] = "none (feasibility)"
        else:
            res, det = objective_search(setting, form, scp, budget, acct, gen, kw, opts,
                                        row_private=row_private, solver=solver)
        x = form.to_scp_point(res.x)
        # the public constraints (equalities included) hold in the released point: project
        # onto them (post-processing of the private point, no budget)
        # When the theorem's alpha holds, every row -- public ones included -- is within alpha
        # and the point is released as the theorem covers it; otherwise (no accuracy promised)
        # the public rows are repaired.
        # (A bound beyond the judged accuracy promises nothing useful: repair then too.)
        alpha_ok = det.get("alpha_guaranteed")
        judged = float(accuracy) if accuracy is not None else DEFAULT_ACCURACY
        if alpha_ok is not None and (alpha_ok > judged or det.get("tested_after_repair")):
            alpha_ok = None  # (a point tested after its repair is released repaired)
        x, moved, pub_viol = public_part.public_repair(
            scp.A, scp.b, scp.dims, row_private, x, solver=solver,
            tol=1e-7 if alpha_ok is None else max(1e-7, float(alpha_ok)))
        if moved > 0:
            det["public_repair"] = {"public_violation_before": pub_viol, "moved": moved}
            if det.get("alpha_guaranteed") is not None:
                # the theorem's bound is about the MWU's point, not the projected one
                det["alpha_guaranteed_before_repair"] = det["alpha_guaranteed"]
                det["alpha_guaranteed"] = None
            if not det.get("tested_after_repair"):
                det.pop("violation_bound", None)  # the test was of the unrepaired point
        iterations = int(det.get("total_iterations", det["T"]))
        theorem = ALG1 if det["setting"] == "constraint" else THM_C5
        optimised = not str(det["objective"]).startswith("not optimised")
        det["objective_optimised"] = optimised
        report = acct.report(theorem=theorem, neighbouring=neighbouring, details=det)
        info = {"method": "mwu", "setting": setting, "alpha_guaranteed":
                det.get("alpha_guaranteed"), "alpha_requested": accuracy,
                "schedule": kw["schedule"], "objective_optimised": optimised,
                "form": {k: v for k, v in form.info.items() if k != "source_rows"}}
        if det.get("violation_bound") is not None:
            # from the search's released test value (w.p. >= 1 - beta), whatever the theorem
            info["violation_bound"] = det["violation_bound"]
        if not optimised:
            # A feasibility answer is not an approximate optimum: say so in info and, unless
            # the certificate proves otherwise, with a warning.
            info["status_reason"] = (
                "objective " + det["objective"] + "; the released point only approximately "
                "satisfies the constraints and its objective value carries no guarantee")
            pending = ObjectiveNotOptimisedWarning(
                "cvxdp: the objective was not optimised (" + det["objective"] + "); status "
                "is 'user_limit' and the answer is only an approximately feasible point.")
        elif info["alpha_guaranteed"] is None and "alpha_guaranteed_before_repair" in det:
            info["public_repair"] = det["public_repair"]
            info["status_reason"] = (
                "the MWU's point broke public constraints by "
                f"{det['public_repair']['public_violation_before']:.3g}; it was projected onto "
                "them (post-processing, no budget), so the public constraints hold, but the "
                f"theorem's bound alpha = {det['alpha_guaranteed_before_repair']:.3g} covers the "
                "MWU's point, not the projected one: no accuracy is promised for the private rows")
            pending = AccuracyNotGuaranteedWarning(
                "cvxdp: the public constraints were repaired by projection; the MWU theorem's "
                "bound does not cover the repaired point: status is 'user_limit'.")
        elif info["alpha_guaranteed"] is None:
            # The theorem's accuracy bound needs conditions (enough budget for the iterations it
            # asks) that do not hold here: the answer is private, but its accuracy is not
            # promised by it; the status says so unless the certificate proves the accuracy.
            info["status_reason"] = (
                "the accuracy bound of " + cite(SYMMETRIC_CONE_PROGRAMMING, (
                    "Alg. 1, Thm C.9" if theorem == ALG1 else "Alg. 5, Thm C.5"))
                + " does not hold at this budget and size "
                "(theorem_conditions_hold is False in the privacy details); the released point "
                "is private but carries no accuracy guarantee: raise epsilon, or pass a larger "
                "accuracy=")
            pending = AccuracyNotGuaranteedWarning(
                "cvxdp: the accuracy bound of the MWU theorem does not hold at this budget; "
                "status is 'user_limit' (see info['status_reason']).")
    # the variables' values by name; write_back (the entry point's) is the one write
    primal = released_values(problem, scp, x)
    public_viol = 0.0
    if "objective" in settings:
        # the constraints are public: the released point's violation of them (the exact
        # solver's tolerance) is measured, not assumed 0 (post-processing)
        private_ids = {par.id for s in specs for par in spec_parameters(s)}
        public_viol = public_violation_at(problem, primal, private_ids)
        public_viol = math.inf if public_viol is None else public_viol * (1.0 + 1e-9)
    cert = _certificate(scp, x, info, beta, settings,
                        None if "objective" in settings else det,
                        value=(None if "objective" not in settings or value_spread is None
                               else (scp.sign * value_released, value_spread)),
                        violation=public_viol)
    note = info.pop("status_reason", None)
    if not math.isfinite(cert.violation_bound):
        # say why nothing bounds the violation (the certificate's inf is not a defect)
        note = _why_unbounded(det if "objective" not in settings else None) + (
            "" if note is None else f"; {note}")
    status, reason = status_of(cert, accuracy)
    if note and status != cp.OPTIMAL_INACCURATE:
        reason = note if reason is None else f"{reason}. Also: {note}"
        if pending is not None:  # the warning's 'user_limit' is now the status
            warn_user(pending)
    if reason:
        info["status_reason"] = reason
    # With a private objective, problem.value must come from the released (noisy) c only: the
    # true objective at x is a function of the private c and is not released.
    released = value_released if "objective" in settings else None
    value = released if released is not None else scp.sign * float(scp.c @ x + scp.offset)
    solve_time = time.perf_counter() - t0
    validation = validate(scp, x, solver=solver) if reference else None
    return PrivateSolution(status=status, value=value, privacy=report,
                           validation=validation, iterations=iterations,
                           solve_time=solve_time, primal=primal, info=info, certificate=cert,
                           status_reason=reason)


def _why_unbounded(det: dict[str, Any] | None) -> str:
    """The reason an MWU answer's violation is not bounded (its certificate's ``inf``)."""
    head = "the violation of the true constraints is not bounded: "
    if det is not None and det.get("public_repair") is not None and \
            det.get("tested_after_repair") is False:
        return head + ("the public repair moved the point after its noisy test, and the "
                       "theorem's alpha does not cover the repaired point")
    if det is not None and int(det.get("search_steps", 0)) > 1:
        return head + ("the search's test bound does not cover the released point, and the "
                       "theorem's alpha does not hold")
    return head + ("no noisy test of the released point was affordable at this budget (or a "
                   "target= run makes none), and the theorem's alpha does not hold; raise "
                   "epsilon for a bound")


def _check_option_values(opts: dict[str, Any], trace_bound: Any, target: Any) -> None:
    """The MWU path's own numeric options, checked before anything runs (public values: a
    typed error naming the option, never a raw error from the loop)."""
    for key, value, what in (
            ("width", opts.get("width"), "the public bound on ||a_i||_inf of the private rows"),
            ("trace_bound", trace_bound, "the public bound on the MWU form's trace"),
            ("norm_bound", opts.get("norm_bound"), "the public bound on the objective "
             "vector's Euclidean norm")):
        if value is not None:
            check_number(key, value, f"a finite number > 0 ({what})", lambda v: v > 0)
    if target is not None:
        check_number("target", target, "a finite number (the public objective level to reach)",
                     lambda v: True)
    if opts.get("search_steps") is not None:
        check_count("search_steps", opts["search_steps"])
    if opts.get("search_share") is not None:
        check_number("search_share", opts["search_share"], "a number in (0, 1) (the share of "
                     "the budget the objective search spends on its tests)",
                     lambda v: 0 < v < 1)


def _certificate(scp: Any, x: np.ndarray, info: dict[str, Any], beta: float,
                 settings: set[str], det: dict[str, Any] | None,
                 value: tuple[float, float] | None = None,
                 violation: float = 0.0) -> Certificate:
    """The MWU's certificate from its theorems and released tests (docs/certificates.md).

    Objective privacy (Thm C.12): the constraints are public and the point feasible up to the
    exact solver's tolerance (``violation``: the user's constraints at the released values);
    the sub-optimality is at most the theorem's ``alpha`` w.p. ``1 - beta``.  Constraint and
    scalar privacy: the public objective at the released point, exactly; the optimum is at
    least the public lower bound of the search, raised to every target a test rejected while
    its run met its theorem and to every run's dual bound (:mod:`cvxdp.solvers.mwu.dual_bound`);
    the violation is at most the search's released test bound (or the theorem's ``alpha``).
    Those events hold together w.p. ``>= 1 - (1 + k + d) beta``, ``k`` the runs whose theorem
    raised the lower bound, ``d`` one when a dual bound did (the tests' noise is one event).

    ``value``: objective privacy's released objective at the point (minimised sense) and its
    spread ``t ||x~_S||``: on the event ``||z_S|| <= t`` the true objective there is within the
    spread of it (``c'x~ = c~'x~ - z'x~``, Cauchy-Schwarz), so ``objective_upper = h~ +
    spread`` and ``optimum_lower = h~ - spread - gap``; the relative gap is then relative to
    the objective's size (docs/certificates.md, "Objective perturbation").  The l-infinity
    bound's certificate holds on both events (probability ``1 - 2 beta``), the l2 one among
    them.
    """
    if "objective" in settings:
        alpha = info.get("alpha_guaranteed")
        holder = info.get("gap_bound_holder")
        on_l2 = min(math.inf if alpha is None else float(alpha),
                    math.inf if holder is None else float(holder),
                    info.get("gap_bound_sharp", math.inf),
                    info.get("gap_bound_curvature", math.inf),
                    info.get("gap_bound_ball", math.inf))
        on_inf = info.get("gap_bound_holder_inf")
        # the l-infinity bound holds on its own event: taking it costs a second beta
        gap, prob = (on_inf, 1.0 - 2.0 * beta) if on_inf is not None and on_inf < on_l2 \
            else (on_l2, 1.0 - beta)
        upper = lower = math.nan
        if value is not None:
            upper, lower = value[0] + value[1], value[0] - value[1] - gap
        return Certificate.from_bounds(
            objective_upper=upper if math.isfinite(upper) else math.inf,
            optimum_lower=lower if math.isfinite(lower) else -math.inf,
            violation_bound=violation,
            equality_violation_bound=None, probability=prob, gap_bound=gap,
            how="objective perturbation (" + cite(SYMMETRIC_CONE_PROGRAMMING, "Thm C.12")
                + "): sub-optimality <= alpha, with the proof's ||x* - x~|| bounded through "
                "the public box (Hoelder)" + (
                    ", or the released objective's growth around the released point "
                    "(docs/certificates.md)" if "gap_bound_sharp" in info else "")
                + (", or the public terms' curvature along the private coordinates "
                   "(docs/certificates.md)" if "gap_bound_curvature" in info else "")
                + (", or a public norm or PSD block's curvature at the released point "
                   "(docs/certificates.md)" if "gap_bound_ball" in info else "")
                + ", public constraints hold")
    viol = info.get("violation_bound", info.get("alpha_guaranteed"))
    upper = float(scp.c @ x + scp.offset)
    lower = det.get("optimum_lower") if det is not None else None
    if lower is None and not np.any(scp.c != 0):
        lower = 0.0  # no objective: nothing to optimise
    events = int(det.get("search_events", 1)) if det is not None else 1
    return Certificate.from_bounds(
        objective_upper=upper,
        optimum_lower=-math.inf if lower is None else float(lower) + scp.offset,
        violation_bound=math.inf if viol is None else float(viol),
        equality_violation_bound=None, probability=max(0.0, 1.0 - events * beta),
        how="noisy-oracle MWU: its theorem's alpha or the search's released test bound; the "
            "optimum bounded by the targets its theorem-backed tests rejected and by its runs' "
            "averaged losses (weak duality)")


class ObjectiveNotOptimisedWarning(UserWarning):
    """The private solve returned a feasibility answer: the objective was not optimised."""


class AccuracyNotGuaranteedWarning(UserWarning):
    """The private solve's theorem does not bound the accuracy at the settings used."""
