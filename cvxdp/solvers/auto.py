"""``mechanism="auto"``: the public choice between the MWU and perturbation, and the routing.

:func:`solve_with_mechanism` is what :func:`cvxdp.solvers.dispatch.solve_general` calls when the
user asks for a mechanism other than the noisy-oracle MWU; perturbation's solve itself is
:func:`cvxdp.solvers.perturbation.certified.solve_perturbation`.  Under ``ObjectivePrivacy`` the
constraints are public, so perturbation is plain objective perturbation, which the general path
already runs (:func:`cvxdp.solvers.mwu.objective_release.objective_private_solve`, Thm C.12 of Song,
Xue & Zhang 2025); it is reused, not duplicated.

``"auto"`` chooses from PUBLIC quantities only -- the model's structure, the declared
sensitivities, sizes, the budget, ``beta`` and the public constraints (never a private value):

1. ``ConstraintSetPrivacy`` -> ``"mwu"`` (perturbation needs a bounded per-entry change).
2. ``ObjectivePrivacy`` -> ``"perturbation"`` (the two are the same algorithm there); private
   data in the objective and the constraints -> ``"perturbation"`` (one release of all).
3. Perturbation not applicable (an unbounded private equality; zCDP with ``noise="truncated"``)
   -> ``"mwu"``.
4. Otherwise each mechanism's *certificate* is predicted before any noise, in one currency:
   canonical row units, the shift of the constraint rows that separates what the certificate
   proves from the truth (the same model turns a row shift into an objective change, so the
   two predictions are like with like).  Perturbation's released point is feasible (violation
   0) and its certified gap is the optimum's change between the counterparts tightened and
   loosened by its tightening ``t``, a shift of ``2 t`` per row (docs/certificates.md,
   "Perturbation"); ``t`` is the counterpart's largest tightening ``max_u B_u sigma_u (R
   max_j ||E_u[:, j]||_2 + ||E_u[:, n]||_2)`` with the noise family ``noise="auto"`` picks
   (``R``: the MWU form's public trace bound, ``>= ||x||_1``).  The MWU's average violates
   every row by at most its theorem's ``alpha`` and its oracle's frequencies are a Lagrange
   multiplier within ``alpha`` of optimal (the regret bound covers both: Arora, Hazan & Kale
   2012, "The Multiplicative Weights Update Method: a Meta-Algorithm and Applications", Sec.
   3.3), so its violation and gap shift are both ``alpha``, minimised over the number of
   rounds (:func:`cvxdp.solvers.mwu.schedule.plan_schedule`, for the per-run budget of its
   objective search, ``0.9 rho / 6``, when the model has an objective), whether or not the
   theorem's conditions hold at that value.  Each prediction's score is ``max(gap shift,
   violation)``: ``2 t`` against ``alpha``.  The smaller runs; perturbation on a tie and when
   the MWU form cannot be built (no public trace bound).

The choice, both predictions and the rule are in ``info["mechanism"]`` and ``info["auto"]``
(docs/solvers.md, "How auto chooses the mechanism").
"""

from __future__ import annotations

import difflib
import math
from typing import Any

import cvxpy as cp
import numpy as np

from cvxdp.arguments import check_options
from cvxdp.errors import BudgetError, CvxdpError, PrivacySpecError, UnsupportedProblemError
from cvxdp.privacy.budgets import ZCDP, Budget, resolve_budget
from cvxdp.privacy.rng import as_generator
from cvxdp.solution import PrivateSolution
from cvxdp.solvers.mwu.mwu_form import build_mwu_form
from cvxdp.solvers.mwu.schedule import plan_schedule, row_sensitivities, total_rho
from cvxdp.solvers.mwu.solve import _OPTS, solve_mwu
from cvxdp.solvers.perturbation import (
    NOISES,
)
from cvxdp.solvers.perturbation.certified import (
    prepare_perturbation,
    solve_perturbation,
)
from cvxdp.solvers.perturbation.plan import segments
from cvxdp.solvers.public_part import _exact_solver, simple_box
from cvxdp.solvers.quadform_combined import quadform_split, solve_quadform_combined
from cvxdp.solvers.quadform_perturbation import quadform_only_ids, solve_quadform_perturbation
from cvxdp.specs import as_spec_tuple
from cvxdp.status import DEFAULT_BETA
from cvxdp.transform import to_scp

__all__ = ["solve_with_mechanism", "choose_mechanism", "check_mechanism", "MECHANISMS"]

MECHANISMS = ("mwu", "perturbation", "auto")
_PERTURBATION_OPTS = {"noise", "beta", "solver", "accuracy"}
_MWU_DEFAULTS = {"accuracy": None, "verbose": False, "max_iterations": None,
                 "trace_bound": None, "target": None}
#: options only the MWU (or the covering path) takes: given to "auto", they choose the MWU
#: (``accuracy=`` is not one: it is every path's status threshold, and the MWU's T follows it)
_MWU_ONLY = {"max_iterations", "trace_bound", "target", "schedule", "width",
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
        ``noise`` ("auto" | "gaussian" | "laplace" | "truncated", default "auto"), ``beta``
        (failure probability of the noise event, default 1e-3; with "auto" and the MWU chosen,
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

    quad_ids = quadform_only_ids(problem, specs) if mechanism != "mwu" else set()
    quad, rest = quadform_split(specs, quad_ids)
    if quad and not rest:
        # the private matrices sit only inside quad_form, which CVXPY compiles by factoring
        # their values: released at the model level (quadform_perturbation.py)
        bad = {k for k, v in _given(opts).items() if v is not None} - _PERTURBATION_OPTS
        if bad or noise not in ("gaussian", "auto"):
            raise TypeError(
                f"a private matrix inside quad_form is released by Gaussian perturbation, "
                f"which takes {sorted(_PERTURBATION_OPTS)} with noise='gaussian'; got "
                f"{sorted(bad) or 'noise=' + repr(noise)}.")
        sol = solve_quadform_perturbation(
            problem, specs, budget, beta=float(opts.get("beta", DEFAULT_BETA)), rng=gen,
            reference=reference, solver=opts.get("solver"), accuracy=opts.get("accuracy"))
        if mechanism == "auto":
            sol.info["auto"] = {"rule": "private matrices only inside quad_form (not DPP): "
                                        "perturbation at the model level"}
        return sol
    if quad:
        # a private matrix inside quad_form beside other private parameters: the matrices are
        # released at the model level, the rest by this entry point on the copy
        # (quadform_combined.py)
        inner_opts = dict(opts, noise=noise, verbose=verbose)

        def inner(copy: cp.Problem, rest_specs: tuple, b: ZCDP) -> PrivateSolution:
            return solve_with_mechanism(copy, mechanism=mechanism, rho=b.rho,
                                        private=rest_specs, rng=gen, reference=False,
                                        **inner_opts)

        sol = solve_quadform_combined(problem, quad, rest, budget,
                                      beta=float(opts.get("beta", DEFAULT_BETA)), rng=gen,
                                      inner=inner, accuracy=opts.get("accuracy"))
        sol.info["auto" if mechanism == "auto" else "quad_form"] = {
            "rule": "private matrices only inside quad_form (not DPP) beside other private "
                    "parameters: the matrices released at the model level, the rest by "
                    f"mechanism={mechanism!r} on the copy", "inner": sol.info.get("auto")}
        return sol
    chosen, why, setup = mechanism, None, None
    mwu_set = sorted(k for k in _given(opts) if k in _MWU_ONLY)
    if mechanism == "auto" and mwu_set:
        # options only the MWU takes (accuracy=, target=, ...) say which mechanism is meant
        chosen, why = "mwu", {"rule": f"options of the MWU given: {mwu_set}"}
    elif mechanism == "auto":
        chosen, why, setup = _choose(problem, specs, budget, noise=noise, opts=opts)
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
    sol = solve_perturbation(problem, specs, budget, noise=noise,
                             beta=float(opts.get("beta", DEFAULT_BETA)), rng=gen,
                             reference=reference, solver=opts.get("solver"),
                             accuracy=opts.get("accuracy"), setup=setup)
    if why is not None:
        sol.info["auto"] = why
    return sol


def choose_mechanism(problem: cp.Problem, specs: tuple[Any, ...], budget: Budget, *,
                     noise: str = "auto", opts: dict[str, Any] | None = None
                     ) -> tuple[str, dict[str, Any]]:
    """The rule of ``mechanism="auto"`` (module doc); public quantities only.

    Returns
    -------
    (name, why) : ("mwu" | "perturbation", dict with ``rule`` and both predictions)
    """
    name, why, _ = _choose(problem, specs, budget, noise=noise, opts=opts)
    return name, why


def _choose(problem: cp.Problem, specs: tuple[Any, ...], budget: Budget, *, noise: str,
            opts: dict[str, Any] | None) -> tuple[str, dict[str, Any], Any]:
    """:func:`choose_mechanism` and perturbation's public half
    (:class:`~cvxdp.solvers.perturbation.certified.PerturbationSetup`, None when it was not
    built), which the solve then reuses."""
    opts = dict(opts or {})
    settings = {s.setting for s in specs}
    if "constraint_set" in settings:
        return "mwu", {"rule": "ConstraintSetPrivacy: rows added/removed (dense MWU)"}, None
    if settings == {"objective"}:
        return "perturbation", {"rule": "ObjectivePrivacy: objective perturbation (the same "
                                        "algorithm under both names)"}, None
    if "objective" in settings:
        return "perturbation", {"rule": "private data in the objective and the constraints: "
                                        "one release of all of them (the MWU keeps the "
                                        "paper's separation of the settings)"}, None
    scp = to_scp(problem, private=specs)
    beta = float(opts.get("beta", DEFAULT_BETA))
    try:
        setup = prepare_perturbation(scp, specs, budget, noise=noise, beta=beta)
    except (PrivacySpecError, BudgetError) as err:
        return "mwu", {"rule": "perturbation not applicable: " + str(err)}, None
    if scp.sensitivity.objective_private:
        return "perturbation", {"rule": "the private parameters enter the objective too: one "
                                        "release of all their placements (the MWU keeps the "
                                        "paper's separation of the settings)"}, setup
    if scp.exp_tail is not None:
        return "perturbation", {"rule": "the model has (public) exponential cones: the MWU runs "
                                        "on symmetric cones only"}, setup
    alpha_mwu, R, proven = _mwu_bound(scp, budget, opts)
    tight = _largest_tightening(scp, setup.plan, setup.npl, R or 0.0)
    # each mechanism's certificate, predicted in one currency (canonical row units, before
    # any noise; module doc, rule 4): perturbation's violation is 0 and its certified gap is
    # the optimum's change between the counterparts tightened and loosened by t, a shift of
    # 2 t per row; the MWU's violation and the gap of its Lagrangian certificate are both
    # its theorem's alpha
    pert = {"gap_shift": 2.0 * tight, "violation": 0.0}
    mwu = None if alpha_mwu is None else {"gap_shift": alpha_mwu, "violation": alpha_mwu}
    why: dict[str, Any] = {
        "predicted": {"perturbation": {"tightening": tight, "noise": setup.noise, **pert},
                      "mwu": {"violation": alpha_mwu, "gap_shift": alpha_mwu,
                              "proven": proven}},
        "alpha_mwu": alpha_mwu, "tightening_perturbation": tight, "trace_bound": R}
    if R is None:
        why["rule"] = "the MWU form has no public trace bound"
        return "perturbation", why, setup
    if mwu is None:
        why["rule"] = "the MWU's schedule has no accuracy bound at this budget"
        return "perturbation", why, setup
    score_pert = max(pert["gap_shift"], pert["violation"])
    score_mwu = max(mwu["gap_shift"], mwu["violation"])
    if score_pert <= score_mwu:
        why["rule"] = ("perturbation's predicted certificate (violation 0, gap from a row shift "
                       "of 2 x its largest tightening) <= the MWU's (violation and gap shift: "
                       "its theorem's alpha at its best T)")
        return "perturbation", why, setup
    why["rule"] = ("the MWU's predicted certificate (violation and gap shift: its theorem's "
                   "alpha at its best T) < perturbation's (gap from a row shift of 2 x its "
                   "largest tightening)")
    return "mwu", why, setup


def _largest_tightening(scp: Any, plan: Any, npl: Any, R: float) -> float:
    """``max_u B_u sigma_u sup_x ||E_u [x; 1]||`` over the public bounds on ``x``, one pass over
    the stacked maps.

    ``||E_u [x; 1]|| <= ||E_u[:, :n] x|| + ||E_u[:, n]||`` and ``||E_u[:, :n] x||`` is at most
    both ``max_j ||E_u[:, j]|| ||x||_1`` and ``||E_u[:, :n]||_op ||x||_2`` with ``||M||_op <=
    sqrt(||M||_1 ||M||_inf)`` (Hoelder / Schur).  The public bounds: ``||x||_1 <= R`` (the MWU
    form's trace bound) and ``||x||_2^2 <= ||x||_inf ||x||_1 <= R max_j |x_j|`` when the public
    rows are bounds on single variables (their box, no solve).  A nuclear-norm unit is at most
    ``sqrt(min(r, c))`` times the Frobenius bound.
    """
    n = scp.n
    if plan.N == 0:
        return 0.0
    norms = plan.column_norms()
    const = np.asarray(norms[:, n].toarray()).ravel()
    by_l1 = (np.asarray(norms[:, :n].max(axis=1).toarray()).ravel() * R if n
             else np.zeros(plan.N))
    reach = by_l1
    box = simple_box(scp)
    if n and box is not None:
        big = float(np.max(np.maximum(np.abs(box[0]), np.abs(box[1])), initial=0.0))
        if math.isfinite(big):
            x2 = min(R, math.sqrt(R * big))
            absE = abs(plan.E_all[:, :n]).tocsr()
            col_sum = np.asarray((plan.unit_sum() @ absE).max(axis=1).toarray()).ravel()
            row_sum = np.asarray(absE.sum(axis=1)).ravel()
            row_max = np.zeros(plan.N)
            np.maximum.at(row_max, segments(plan.E_ptr), row_sum)
            reach = np.minimum(by_l1, np.sqrt(col_sum * row_max) * x2)
    factor = np.array([math.sqrt(min(shape)) if (npl.nuclear is not None and npl.nuclear[u])
                       else 1.0 for u, shape in enumerate(plan.matrix)])
    return float(np.max(factor * npl.B * npl.sigma_unit * (reach + const), initial=0.0))


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
                              check_feasible=False, estimate=True)
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
                            beta=float(opts.get("beta", DEFAULT_BETA)), schedule="auto",
                            max_iterations=int(opts.get("max_iterations") or 20000))
    except CvxdpError:  # the schedule's typed refusal: no bound to compare
        return None, float(form.R), False
    scale = form.R * form.rho
    alpha = sch.alpha * scale if math.isfinite(sch.alpha) else None
    return alpha, float(form.R), bool(sch.valid)
