"""``mechanism="perturbation" | "auto"`` for general models: the solve and the public choice.

:func:`solve_with_mechanism` is what :func:`cvxdp.solvers.dispatch.solve_general` calls when the
user asks for a mechanism other than the noisy-oracle MWU.

``"perturbation"`` (:mod:`cvxdp.solvers.perturbation`): noise on the private parameters, then an
exact solve of the robust counterpart.  Under ``ObjectivePrivacy`` the constraints are public,
so perturbation is plain objective perturbation, which is exactly what the general path already
runs (:func:`cvxdp.solvers.mwu.private_scp.objective_private_solve`, Thm C.12); it is reused, not
duplicated.

``"auto"`` chooses from PUBLIC quantities only -- the model's structure, the declared
sensitivities, sizes, the budget, ``beta`` and the public constraints (never a private value):

1. ``ConstraintSetPrivacy`` -> ``"mwu"`` (perturbation needs a bounded per-entry change).
2. ``ObjectivePrivacy`` -> ``"perturbation"`` (the two are the same algorithm there).
3. Perturbation not applicable (pure-DP budget; zCDP with ``noise="truncated"``) ->
   ``"mwu"``.
4. Otherwise compare the two a-priori bounds on the error of a constraint row, in the canonical
   program's units: the MWU's proven additive violation ``alpha`` at the schedule it would run
   (its theorem's bound from :func:`cvxdp.solvers.mwu.private_scp.plan_schedule`, for the per-run
   budget of its objective search when the model has an objective: ``0.9 rho / 6``), against the
   largest tightening of the counterpart, ``max_u B_u sigma_u (R max_j ||E_u[:, j]||_2 +
   ||E_u[:, n]||_2)`` (``R``: the MWU form's public trace bound, ``>= ||x||_1``).  Perturbation
   runs when the MWU's bound is not proven (its theorem's conditions fail) or when its
   tightening is at most the MWU's violation; the MWU runs otherwise.  Perturbation's point is
   feasible (w.p. ``1 - beta`` or surely); the MWU's may violate by ``alpha``: at equal size the
   feasible answer is preferred.  If the MWU form cannot be built (no public trace bound),
   perturbation runs.

The choice and its reason are in ``info["mechanism"]`` and ``info["auto"]``.
"""

from __future__ import annotations

import difflib
import math
import time
from typing import Any

import cvxpy as cp
import numpy as np

from cvxdp.errors import BudgetError, CvxdpError, PrivacySpecError, UnsupportedProblemError
from cvxdp.privacy.accountant import PrivacyAccountant
from cvxdp.privacy.budgets import ZCDP, Budget, resolve_budget
from cvxdp.privacy.rng import as_generator
from cvxdp.solution import Certificate, PrivateSolution
from cvxdp.solvers.certificate import (
    loosened_program,
    reached_coordinates,
    unit_reach,
    violation_bounds,
)
from cvxdp.solvers.mwu.mwu_form import build_mwu_form
from cvxdp.solvers.mwu.private_scp import plan_schedule, row_sensitivities, total_rho
from cvxdp.solvers.mwu.solve import _OPTS, solve_mwu
from cvxdp.solvers.perturbation import (
    NOISES,
    PERTURBATION_THEOREM,
    choose_noise,
    noise_plan,
    objective_map,
    private_entries,
    released_user_values,
    robust_plan,
    solve_robust_counterpart,
)
from cvxdp.solvers.perturbation import _solve_tight as solve_exact_tight
from cvxdp.solvers.public_part import (
    _exact_solver,
    _infeasible,
    coordinate_box,
    public_feasibility,
)
from cvxdp.solvers.quadform_perturbation import quadform_parameters, solve_quadform_perturbation
from cvxdp.specs import as_spec_tuple
from cvxdp.status import status_of
from cvxdp.transform import released_values, to_scp
from cvxdp.transform.reference import validate
from cvxdp.validation import check_options

__all__ = ["solve_with_mechanism", "choose_mechanism", "check_mechanism", "MECHANISMS"]

MECHANISMS = ("mwu", "perturbation", "auto")
_PERTURBATION_OPTS = {"noise", "beta", "solver", "accuracy"}
_DEFAULT_BETA = 1e-3
_MWU_DEFAULTS = {"accuracy": None, "verbose": False, "max_iterations": None,
                 "trace_bound": None, "target": None}
#: options only the MWU (or the covering path) takes: given to "auto", they choose the MWU
_MWU_ONLY = {"accuracy", "max_iterations", "trace_bound", "target", "schedule", "width",
             "search_steps", "search_share", "norm_bound", "s", "T", "eta", "opt", "opt_bounds",
             "m_max", "count_clipped"}


def _given(opts: dict[str, Any]) -> dict[str, Any]:
    """The options the user set: the MWU's own keywords arrive from ``solve_general`` at their
    defaults, and only a set one asks for something (e.g. an option perturbation cannot
    honour)."""
    return {k: v for k, v in opts.items() if not (k in _MWU_DEFAULTS and v is _MWU_DEFAULTS[k])}


def check_mechanism(mechanism: Any) -> None:
    """The one check of ``mechanism=`` on the general path (a typed error naming the nearest
    valid spelling)."""
    if mechanism not in MECHANISMS:
        near = difflib.get_close_matches(str(mechanism), MECHANISMS, n=1)
        raise PrivacySpecError(
            f"mechanism={mechanism!r} is not one of {', '.join(repr(m) for m in MECHANISMS)}"
            + (f"; did you mean {near[0]!r}?" if near else "."))


def _check_choice(mechanism: Any, noise: Any) -> None:
    check_mechanism(mechanism)
    if noise not in NOISES:
        near = difflib.get_close_matches(str(noise), NOISES, n=1)
        raise PrivacySpecError(
            f"noise={noise!r} is not one of {', '.join(repr(m) for m in NOISES)}"
            + (f"; did you mean {near[0]!r}?" if near else "."))


def solve_with_mechanism(problem: cp.Problem, *, mechanism: str, epsilon: float | None = None,
                         delta: float | None = None, rho: float | None = None, private: Any,
                         rng: Any = None, reference: bool = False, **opts: Any
                         ) -> PrivateSolution:
    """Run ``mechanism`` ("perturbation" or "auto") on a general model.

    Parameters
    ----------
    problem : cvxpy.Problem
    mechanism : {"perturbation", "auto"}
    epsilon, delta, rho : float
        The budget.
    private : spec or sequence of specs
    rng : None, int or Generator
    reference : bool
        Attach ``validation`` (exact solve on the TRUE data; not private).
    **opts
        ``noise`` ("gaussian" | "truncated", default "gaussian"), ``beta`` (failure
        probability of the Gaussian tightening, default 1e-3; with "auto" and the MWU chosen,
        its utility failure probability), ``solver`` ("CLARABEL" | "SCS"); every MWU option is
        forwarded when the MWU runs.

    Returns
    -------
    PrivateSolution
        Perturbation: ``status="optimal_inaccurate"`` with ``info["guarantee"]`` (feasible for
        the TRUE data with probability ``>= 1 - beta``, or surely for truncated noise; the
        objective's sub-optimality is not bounded); ``"infeasible"`` (``"unbounded"``,
        ``"solver_error"``) with ``info["status_reason"]`` and no point when the counterpart
        built from the noisy data has none -- a post-processed, public fact about the noisy
        release, not about the true model; the budget is spent.
    """
    noise = opts.pop("noise", "auto")
    verbose = bool(opts.pop("verbose", False))  # every mechanism takes it (header/summary
    # are printed by the entry point; the MWU also shows its progress bar)
    _check_choice(mechanism, noise)
    # every option either mechanism takes; an unknown one is named with its nearest valid
    # spelling before anything runs
    check_options(opts, _PERTURBATION_OPTS | _MWU_ONLY | set(_MWU_DEFAULTS) | _OPTS,
                  f"mechanism={mechanism!r}")
    if opts.get("solver") is not None:
        opts["solver"] = _exact_solver(opts["solver"])
    gen = as_generator(rng)
    specs = as_spec_tuple(private)
    budget = resolve_budget(epsilon=epsilon, delta=delta, rho=rho)

    if mechanism != "mwu" and quadform_parameters(problem, specs) is not None:
        # the private matrices sit only inside quad_form, which CVXPY compiles by factoring
        # their values: released at the model level (quadform_perturbation.py)
        bad = {k for k, v in _given(opts).items() if v is not None} - _PERTURBATION_OPTS
        if bad or noise not in ("gaussian", "auto"):
            raise TypeError(
                f"a private matrix inside quad_form is released by Gaussian perturbation, "
                f"which takes {sorted(_PERTURBATION_OPTS)} with noise='gaussian'; got "
                f"{sorted(bad) or 'noise=' + repr(noise)}.")
        sol = solve_quadform_perturbation(
            problem, specs, budget, beta=float(opts.get("beta", _DEFAULT_BETA)), rng=gen,
            reference=reference, solver=opts.get("solver"), accuracy=opts.get("accuracy"))
        if mechanism == "auto":
            sol.info["auto"] = {"rule": "private matrices only inside quad_form (not DPP): "
                                        "perturbation at the model level"}
        return sol
    chosen, why = mechanism, None
    mwu_set = sorted(k for k in _given(opts) if k in _MWU_ONLY)
    if mechanism == "auto" and mwu_set:
        # options only the MWU takes (accuracy=, target=, ...) say which mechanism is meant
        chosen, why = "mwu", {"rule": f"options of the MWU given: {mwu_set}"}
    elif mechanism == "auto":
        chosen, why = choose_mechanism(problem, specs, budget, noise=noise, opts=opts)
    objective_only = {s.setting for s in specs} == {"objective"}
    if chosen == "mwu" or objective_only:
        mwu_opts = {k: v for k, v in opts.items() if k != "solver" or v is not None}
        try:
            sol = solve_mwu(problem, epsilon=epsilon, delta=delta, rho=rho, private=specs,
                            rng=gen, reference=reference, verbose=verbose, **mwu_opts)
        except (UnsupportedProblemError, PrivacySpecError) as err:
            if why is None or not str(why.get("rule", "")).startswith(
                    "perturbation not applicable"):
                raise
            # auto tried both: say what each needs, not only the MWU's refusal
            raise type(err)(
                "mechanism='auto' could not run either mechanism on this model: perturbation "
                "needs public bounds on the variables that private coefficients multiply in "
                "an equality (to bound its noise), and the MWU needs a public bound on the "
                "trace of every variable; the model's public constraints give neither. Add a "
                "public bound on the variables -- cp.trace(X) <= R for a PSD matrix, x <= 10 "
                "or cp.norm(x) <= R for a vector -- and both can run (or pass trace_bound= "
                f"with mechanism='mwu'). Details -- perturbation: {why['rule']}; MWU: {err}"
            ) from None
        sol.info["mechanism"] = chosen
        if chosen == "perturbation":
            sol.info["perturbation"] = (
                "objective perturbation (the constraints are public, so the released point is "
                "feasible and the noise family does not matter: Gaussian on c, Thm C.12)")
        if why is not None:
            sol.info["auto"] = why
        return sol
    opts = _given(opts)
    bad = set(opts) - _PERTURBATION_OPTS
    if bad:
        raise TypeError(f"option(s) {sorted(bad)} belong to the MWU, not to "
                        f"mechanism='perturbation', which takes {sorted(_PERTURBATION_OPTS)}; "
                        "pass mechanism='mwu' (or 'auto', which then takes the MWU).")
    sol = _solve_perturbation(problem, specs, budget, noise=noise,
                              beta=float(opts.get("beta", _DEFAULT_BETA)), rng=gen,
                              reference=reference, solver=opts.get("solver"),
                              accuracy=opts.get("accuracy"))
    if why is not None:
        sol.info["auto"] = why
    return sol


def _solve_perturbation(problem: cp.Problem, specs: tuple[Any, ...], budget: Budget, *,
                        noise: str, beta: float, rng: np.random.Generator, reference: bool,
                        solver: str | None, accuracy: float | None = None
                        ) -> PrivateSolution:
    """Perturbation, its certificate and its status (module doc; certificate.py)."""

    t0 = time.perf_counter()
    if not 0 < beta < 1:
        raise ValueError(f"beta must be in (0, 1), got {beta!r}.")
    scp = to_scp(problem, private=specs)
    sb = scp.sensitivity
    neighbouring = "; ".join(s.describe() for s in specs)
    entries = private_entries(scp, specs)
    plan = robust_plan(scp, entries)  # refuses private equality rows (structure only)
    objective_private = sb.objective_private
    E_c = objective_map(scp, entries) if objective_private else None
    noise_why = None
    if noise == "auto":
        noise, noise_why = choose_noise(budget, entries, plan, beta, _support(E_c))
    npl = noise_plan(budget, noise, entries, plan, beta)
    row_private = np.zeros(scp.m, dtype=bool)
    row_private[sb.private_rows()] = True
    public_status = public_feasibility(scp.A, scp.b, scp.dims, row_private)
    if public_status in (cp.INFEASIBLE, cp.INFEASIBLE_INACCURATE):
        return _infeasible(problem, scp, public_status, neighbouring, t0)
    acct = PrivacyAccountant(budget)
    acct.spend(npl.record)
    out = solve_robust_counterpart(scp, entries, plan, npl, rng, solver=solver)
    # post-processing of the release: the certificate (certificate.py) and, when the tightened
    # counterpart is empty, the loosened counterpart's point; one public box serves the
    # constraint units and a private objective
    A_t, b_t, released = out["A"], out["b"], out["released_program"]
    scale = npl.B * npl.sigma_unit
    lo, hi = coordinate_box(
        scp, reached_coordinates([plan.E_all, *([E_c] if objective_private else [])], scp.n),
        allow_unbounded=True)
    loose = solve_exact_tight(
        loosened_program(released, A_t, b_t, plan, scale, unit_reach(plan, lo, hi)), solver)
    x, from_loosened = out["x"], False
    if x is None and loose.x is not None:
        x, from_loosened = np.asarray(loose.x)[:scp.n], True
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
        # neither counterpart has a point (e.g. the loosened one is unbounded): nothing is
        # released; the public part is feasible, so the status is not "infeasible"
        reason = (f"neither the tightened ({out['status']}) nor the loosened "
                  f"({loose.status}) counterpart of the noisy data has a point at this "
                  "budget; raise epsilon, add public bounds on the variables, or use "
                  "mechanism='mwu'. (Post-processing of the noisy release; the budget was "
                  "spent.)")
        info["status_reason"] = reason
        return PrivateSolution(status=cp.SOLVER_ERROR, value=None, privacy=report,
                               solve_time=time.perf_counter() - t0,
                               primal={v.name(): None for v in problem.variables()},
                               info=info, status_reason=reason)
    viol, viol_eq = violation_bounds(scp, A_t, b_t, plan, scale, x)
    released_value = float(released.c @ x + released.offset)  # with the released data
    slack_x, slack_max, beta_c = _objective_slack(E_c, npl, x, lo, hi)
    upper = released_value + slack_x
    lower = -math.inf
    if loose.status == cp.OPTIMAL:
        # Clarabel stops at a relative duality gap of 1e-10 (_solve_tight); 1e-8 (1 + |p|)
        # keeps the bound below the loosened optimum with a margin of 100x that
        lower = float(loose.value) - 1e-8 * (1.0 + abs(float(loose.value))) - slack_max
    cert = Certificate.from_bounds(
        objective_upper=upper, optimum_lower=lower, violation_bound=viol,
        equality_violation_bound=viol_eq,
        probability=probability - (beta_c if objective_private else 0.0),
        how=("perturbation: noisy slack test at the released point and the loosened "
             "counterpart's optimum, on the noise event of " +
             ("the truncated noise (surely)" if noise == "truncated"
              else f"the {noise.capitalize()} tail bounds (beta = {npl.beta:g})")))
    status, reason = status_of(cert, accuracy)
    if objective_private:
        info["objective_tail_beta"] = beta_c
    if from_loosened:
        reason = ("the tightened counterpart of the noisy data is empty at this budget; the "
                  "released point solves the loosened one (post-processing, no extra budget)"
                  + ("; " + reason if reason else ""))
        status = cp.USER_LIMIT
    info["guarantee"] = str(cert)
    info["equality_violation_bound"] = viol_eq
    if reason:
        info["status_reason"] = reason
    # the objective at the released point with the released data (the TRUE objective when
    # it is public); the variables' values by name -- write_back is the one write
    value = scp.sign * released_value
    validation = validate(scp, x) if reference else None
    primal = released_values(problem, scp, x)
    return PrivateSolution(status=status, value=value, privacy=report, validation=validation,
                           iterations=None, solve_time=time.perf_counter() - t0,
                           primal=primal, info=info, certificate=cert, status_reason=reason)


def _support(E_c: Any) -> int:
    """Number of private entries the objective's map reaches (0 for a public objective)."""
    if E_c is None:
        return 0
    return int(np.count_nonzero(np.asarray(abs(E_c).sum(axis=1)).ravel()))


def _objective_slack(E_c: Any, npl: Any, x: np.ndarray, lo: np.ndarray, hi: np.ndarray
                     ) -> tuple[float, float, float]:
    """Bounds on the released objective's error when the objective is private.

    The error at ``x`` is ``sigma g' E_c [x; 1]`` (:func:`objective_map`); with ``||g_{S_c}||
    <= sqrt(k_c) + sqrt(2 ln(1 / beta_c))`` (Gaussian concentration, its own event at
    ``beta_c = beta``) it is at most ``scale_c ||E_c [x; 1]||`` at the released point and
    ``scale_c U_c`` anywhere on the public box ``[lo, hi]`` (``U_c``: the triangle bound,
    ``inf`` where the box does not bound a variable the objective's private data multiply).

    Returns
    -------
    (at_x, anywhere, beta_c) : (float, float, float)
        ``(0, 0, 0)`` for a public objective (``E_c`` None).
    """
    if E_c is None:
        return 0.0, 0.0, 0.0
    k_c = _support(E_c)
    beta_c = float(npl.beta) if npl.beta is not None else _DEFAULT_BETA
    scale_c = npl.sigma_unit * npl.norm_bound(k_c, math.log(1 / beta_c))
    at_x = scale_c * float(np.linalg.norm(E_c @ np.append(x, 1.0)))
    cols = np.sqrt(np.asarray(E_c.multiply(E_c).sum(axis=0)).ravel())
    hit = cols[:-1] > 0
    xmax = np.maximum(np.abs(lo[hit]), np.abs(hi[hit]))
    anywhere = scale_c * float(cols[:-1][hit] @ xmax + cols[-1]) \
        if np.all(np.isfinite(xmax)) else math.inf
    return at_x, anywhere, beta_c


def choose_mechanism(problem: cp.Problem, specs: tuple[Any, ...], budget: Budget, *,
                     noise: str = "auto", opts: dict[str, Any] | None = None
                     ) -> tuple[str, dict[str, Any]]:
    """The rule of ``mechanism="auto"`` (module doc); public quantities only.

    Returns
    -------
    (name, why) : ("mwu" | "perturbation", dict with ``rule`` and both predictions)
    """
    opts = dict(opts or {})
    settings = {s.setting for s in specs}
    if "constraint_set" in settings:
        return "mwu", {"rule": "ConstraintSetPrivacy: rows added/removed (dense MWU)"}
    if settings == {"objective"}:
        return "perturbation", {"rule": "ObjectivePrivacy: objective perturbation (the same "
                                        "algorithm under both names)"}
    if "objective" in settings:
        return "perturbation", {"rule": "private data in the objective and the constraints: "
                                        "one release of all of them (the MWU keeps the "
                                        "paper's separation of the settings)"}
    scp = to_scp(problem, private=specs)
    beta = float(opts.get("beta", _DEFAULT_BETA))
    try:
        entries = private_entries(scp, specs)
        plan = robust_plan(scp, entries)
        family = noise
        if noise == "auto":
            family, _ = choose_noise(budget, entries, plan, beta)
        npl = noise_plan(budget, family, entries, plan, beta)
    except (PrivacySpecError, BudgetError) as err:
        return "mwu", {"rule": "perturbation not applicable: " + str(err)}
    alpha_mwu, R, proven = _mwu_bound(scp, budget, opts)
    # ||E_u [x; 1]|| <= R max_j ||E_u[:, j]|| + ||E_u[:, n]|| for ||x||_1 <= R; a nuclear norm
    # is at most sqrt(min(r, c)) times the Frobenius norm (one pass over the stacked maps)
    norms = plan.column_norms()
    n = scp.n
    xmax = np.asarray(norms[:, :n].max(axis=1).toarray()).ravel() if n else np.zeros(plan.N)
    const = np.asarray(norms[:, n].toarray()).ravel()
    factor = np.array([math.sqrt(min(shape)) if (npl.nuclear is not None and npl.nuclear[u])
                       else 1.0 for u, shape in enumerate(plan.matrix)])
    tight = float(np.max(factor * npl.B * npl.sigma_unit * ((R or 0.0) * xmax + const),
                         initial=0.0))
    why: dict[str, Any] = {
        "predicted": {"perturbation": {"tightening": tight, "noise": family},
                      "mwu": {"violation": alpha_mwu, "proven": proven}},
        "alpha_mwu": alpha_mwu, "tightening_perturbation": tight, "trace_bound": R}
    if R is None:
        why["rule"] = "the MWU form has no public trace bound"
        return "perturbation", why
    if alpha_mwu is None:
        why["rule"] = "the MWU's schedule has no accuracy bound at this budget"
        return "perturbation", why
    if tight <= alpha_mwu:
        why["rule"] = ("perturbation's largest tightening <= the MWU's a-priori violation "
                       "bound (its theorem's, at its best T)")
        return "perturbation", why
    why["rule"] = ("the MWU's a-priori violation bound (its theorem's, at its best T) < "
                   "perturbation's largest tightening")
    return "mwu", why


def _mwu_bound(scp: Any, budget: Budget, opts: dict[str, Any]
               ) -> tuple[float | None, float | None, bool]:
    """The MWU's a-priori violation bound (canonical units), its trace bound R, and whether the
    theorem's conditions hold at that bound (``proven``).

    The bound is the theorem's ``alpha`` minimised over the number of rounds (the schedule
    planner's); when its conditions fail the same formula is still the analysis's prediction
    of the violation's size, and it is compared as such.
    """

    sb = scp.sensitivity
    try:
        form = build_mwu_form(scp.A, scp.b, scp.c, scp.dims, dA=sb.A, db=sb.b,
                              trace_bound=opts.get("trace_bound"), width=opts.get("width"),
                              check_feasible=False)
    except CvxdpError:  # a typed refusal (no public trace bound / width): the MWU cannot run
        return None, None, False
    setting = "constraint" if "constraint" in sb.settings else "scalar"
    sens = row_sensitivities(form)
    if setting == "constraint" and not np.any(sens.d2 > 0):
        setting = "scalar"
    rho = total_rho(budget)
    run_budget: Budget = budget
    if rho is not None and np.any(scp.c != 0) and opts.get("target") is None:
        run_budget = ZCDP(rho * 0.9 / 6)  # the private search's per-run share (mwu/solve.py)
    try:
        sch = plan_schedule(setting, form, sens, run_budget, accuracy=None,
                            beta=float(opts.get("beta", 0.05)), schedule="auto",
                            max_iterations=int(opts.get("max_iterations") or 20000))
    except CvxdpError:  # the schedule's typed refusal: no bound to compare
        return None, float(form.R), False
    scale = form.R * form.rho
    alpha = sch.alpha * scale if math.isfinite(sch.alpha) else None
    return alpha, float(form.R), bool(sch.valid)
