"""The general cone-program path of ``solve_private``: LP / SOCP / SDP models with a privacy spec.

``ConstraintPrivacy`` and ``ScalarPrivacy`` run the noisy-oracle MWU of paper 002 (Alg 1 /
Thm C.5) on the MWU form of the model (:mod:`cvxdp.solvers.mwu_form`).  The MWU solves
feasibility; an objective is handled either by ``target=`` (one more public row "objective no
worse than target") or by a private bisection over its value (budget split evenly over the
runs and their noisy feasibility tests).  ``ObjectivePrivacy`` perturbs ``c`` once and solves
the perturbed program exactly inside a public ball (Thm C.12).
"""

from __future__ import annotations

import difflib
import math
import time
import warnings
from typing import Any

import cvxpy as cp
import numpy as np
import scipy.sparse as sp

from cvxdp.errors import (
    InfeasibleProblemError,
    PrivacyGuaranteeError,
    PrivacySpecError,
    UnsupportedProblemError,
)
from cvxdp.privacy.accountant import PrivacyAccountant
from cvxdp.privacy.budgets import ZCDP, resolve_budget
from cvxdp.privacy.mechanisms import gaussian_record
from cvxdp.privacy.rng import as_generator
from cvxdp.solution import PrivateSolution
from cvxdp.solvers.mwu_form import _row_blocks, build_mwu_form
from cvxdp.solvers.private_scp import (
    ALG1,
    THM_C5,
    _run,
    objective_private_solve,
    row_sensitivities,
    total_rho,
)
from cvxdp.specs import as_spec_tuple

__all__ = ["solve_general", "public_bounds", "public_feasibility", "canonical_constraints",
           "ObjectiveNotOptimisedWarning"]

MECHANISMS = ("mwu", "perturbation", "auto")
_OPTS = {"schedule", "beta", "width", "norm_bound", "search_steps", "search_share"}


def solve_general(
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
    mechanism: str = "auto",
    **opts: Any,
) -> PrivateSolution:
    """Solve a CVXPY LP/SOCP/SDP privately (paper 002, Sec 5.2 and App. C).

    ``mechanism="auto"`` (the default) picks the MWU or perturbation from public quantities
    (:func:`cvxdp.solvers.mechanism.choose_mechanism`); ``"perturbation"`` goes to
    :mod:`cvxdp.solvers.mechanism` (noise on the private parameters + exact robust
    counterpart; options ``noise=``, ``beta=``, ``solver=``); ``"mwu"`` runs the paper's
    noisy-oracle MWU below.

    Parameters
    ----------
    problem : cvxpy.Problem
    epsilon, delta, rho : float
        Budget ((epsilon, delta)-DP or rho-zCDP).  Constraint privacy and objective privacy
        need ``delta > 0`` (or ``rho``); scalar privacy also accepts pure epsilon.
    private : ConstraintPrivacy, ScalarPrivacy or ObjectivePrivacy
    accuracy : float, optional
        Target additive violation alpha of the canonical constraints (MWU paths) -- sets T.
    rng : None, int or Generator
    reference : bool
        Attach ``validation`` (exact solve and violations on the TRUE data: not private).
    verbose : bool
        Progress bar (tqdm, optional).
    max_iterations : int, optional
        Cap on T per MWU run (default 20000).
    trace_bound : float, optional
        Public bound R on the trace of the MWU variable (sum of |free variables| plus traces of
        cone variables and slacks); computed from the public constraints if omitted.
    target : float, optional
        Objective value to reach, in the user's sense (MWU paths): added as a public row.
    **opts
        ``schedule`` ("auto" | "paper"), ``beta`` (failure probability of the utility bound,
        default 0.05), ``width`` (public bound on the spectral norm of private rows),
        ``norm_bound`` (public radius of the ball, objective privacy), ``search_steps`` (runs of
        the objective bisection, default 6), ``search_share`` (share of the budget spent on the
        bisection's noisy tests, default 0.1), ``solver`` (``"CLARABEL"`` or ``"SCS"``, as in
        ``problem.solve(solver=...)``: the conic solver of the exact steps -- the public
        feasibility check and the ``reference=True`` solve).  An unknown option raises
        ``TypeError`` naming the nearest valid one; ``max_iterations`` / ``trace_bound`` /
        ``target`` on the covering path (``ConstraintSetPrivacy``) raise ``TypeError`` too.

    Returns
    -------
    PrivateSolution
        ``status="optimal_inaccurate"`` when the objective was handled (``target=``, the private
        search, no objective, objective privacy); ``"user_limit"`` for a feasibility-only
        answer (``info["objective_optimised"]`` is False, with ``info["status_reason"]`` and an
        :class:`ObjectiveNotOptimisedWarning`); ``"infeasible"`` when the public constraints
        are infeasible (decided before any budget is spent: nothing spent, variables cleared).
        The user's variables hold the private answer.  ``value`` is computed from released
        quantities only (under objective privacy: ``sign * (c~ . x + offset~)``).
        ``privacy.details`` has T, eta, the per-round noise of cvxdp and of the paper, and
        ``alpha_guaranteed`` (the theorem's bound at the settings used, None if vacuous).

    Raises
    ------
    BudgetError, PrivacySpecError, PrivacyGuaranteeError, UnsupportedProblemError,
    InfeasibleProblemError (objective privacy: the perturbed program has no solution)

    References
    ----------
    002_26bee910280b74ae.txt: Algorithm 1, Algorithm 5, Theorems C.2, C.5, C.7, C.9, C.12.
    """
    if mechanism not in MECHANISMS:
        near = difflib.get_close_matches(str(mechanism), MECHANISMS, n=1)
        raise PrivacySpecError(
            f"mechanism={mechanism!r} is not one of {', '.join(repr(m) for m in MECHANISMS)}"
            + (f"; did you mean {near[0]!r}?" if near else "."))
    if mechanism != "mwu":  # issue 23: input perturbation / the public choice between the two
        from cvxdp.solvers.mechanism import solve_with_mechanism

        return solve_with_mechanism(
            problem, mechanism=mechanism, epsilon=epsilon, delta=delta, rho=rho,
            private=private, rng=rng, reference=reference, accuracy=accuracy, verbose=verbose,
            max_iterations=max_iterations, trace_bound=trace_bound, target=target, **opts)
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
        # constraints (paper 002 App. B), which checks the model is a covering program.
        if len(specs) > 1:
            raise PrivacySpecError("ConstraintSetPrivacy cannot be combined with other specs.")
        from cvxdp.solvers.covering import solve_covering_private

        # options of the MWU path only: refused here rather than silently dropped (issue 22)
        mwu_only = {k: v for k, v in (("max_iterations", max_iterations),
                                      ("trace_bound", trace_bound), ("target", target))
                    if v is not None}
        if mwu_only:
            raise TypeError(f"solve_private: {sorted(mwu_only)} are options of the MWU path; "
                            "the covering path (ConstraintSetPrivacy) takes T= (rounds), "
                            "opt= / opt_bounds= (target trace) and s= instead.")
        return solve_covering_private(problem, specs[0], epsilon=epsilon, delta=delta, rho=rho,
                                      rng=gen, reference=reference, accuracy=accuracy, **opts)
    from cvxdp.api import COMMON_OPTIONS, check_options

    # the covering path above checks its own options; the nearest valid name is suggested
    check_options(opts, _OPTS | set(COMMON_OPTIONS) | {"max_iterations", "trace_bound",
                                                       "target", "mechanism"},
                  "the general path (MWU)")
    solver = _exact_solver(opts.pop("solver", None))
    if "objective" in settings and len(settings) > 1:
        raise PrivacySpecError(
            "ObjectivePrivacy cannot be combined with ConstraintPrivacy/ScalarPrivacy in one "
            "solve (paper 002 treats them separately); declare one setting.")
    from cvxdp.transform import from_scp, to_scp

    scp = to_scp(problem, private=specs)
    sb = scp.sensitivity
    neighbouring = "; ".join(s.describe() for s in specs)
    # Feasibility of the public part depends on public data only: decide it exactly before any
    # budget is spent (issue 21 item 7).
    row_private = np.zeros(scp.m, dtype=bool)
    row_private[sb.private_rows()] = True
    form0 = None
    if "objective" not in settings:
        try:  # structure and public constants only; errors surface below where they did
            form0 = build_mwu_form(scp.A, scp.b, scp.c, scp.dims, dA=sb.A, db=sb.b,
                                   trace_bound=trace_bound, width=opts.get("width"),
                                   check_feasible=False)
        except Exception:  # noqa: BLE001
            form0 = None
    if form0 is not None and trace_set_only(form0):
        public_status = cp.OPTIMAL  # {z in K, tr z = R >= 0} contains R e / tr(e)
    else:
        public_status = public_feasibility(scp.A, scp.b, scp.dims, row_private, solver=solver)
    if public_status in (cp.INFEASIBLE, cp.INFEASIBLE_INACCURATE):
        return _infeasible(problem, scp, public_status, neighbouring, t0)
    max_iter = int(max_iterations) if max_iterations is not None else 20000
    if max_iter < 1:
        raise PrivacyGuaranteeError("max_iterations must be >= 1.")
    beta = float(opts.get("beta", 0.05))
    if not 0 < beta < 1:
        raise PrivacyGuaranteeError(f"beta must be in (0, 1), got {beta!r}.")

    if "objective" in settings:
        x, report, info = objective_private_solve(
            scp, sb, budget, rng=gen, beta=beta, norm_bound=opts.get("norm_bound"),
            neighbouring=neighbouring)
        iterations = None
        status = cp.OPTIMAL_INACCURATE
        value_released = info.pop("value")  # sign * (c~ . x + offset~): released data only
        if info.get("alpha_guaranteed") is None:
            status = cp.USER_LIMIT
            info["status_reason"] = (
                "no accuracy is promised: the public constraints do not bound the variables "
                "the private objective multiplies, so Thm C.12's sub-optimality bound "
                "2 R ||z|| has no R; the point is exactly feasible (the constraints are public). "
                "Pass norm_bound= (a public bound on their Euclidean norm) or add public bounds "
                "on them for a guarantee.")
    else:
        setting = "constraint" if "constraint" in settings else "scalar"
        form = form0 if form0 is not None else build_mwu_form(
            scp.A, scp.b, scp.c, scp.dims, dA=sb.A, db=sb.b, trace_bound=trace_bound,
            width=opts.get("width"), check_feasible=False)
        acct = PrivacyAccountant(budget)
        kw = dict(accuracy=accuracy, beta=beta, schedule=opts.get("schedule", "auto"),
                  max_iterations=max_iter, verbose=verbose)
        has_obj = bool(np.any(scp.c != 0))
        status = cp.OPTIMAL_INACCURATE
        if target is not None:
            tau = scp.sign * float(target) - scp.offset
            res, det = _run(setting, form.with_target(tau), budget, rng=gen, accountant=acct,
                            **kw)
            det["objective"] = "target"
        elif not has_obj:
            res, det = _run(setting, form, budget, rng=gen, accountant=acct, **kw)
            det["objective"] = "none (feasibility)"
        else:
            res, det = _search(setting, form, scp, budget, acct, gen, kw, opts)
        x = form.to_scp_point(res.x)
        iterations = int(det.get("total_iterations", det["T"]))
        theorem = ALG1 if det["setting"] == "constraint" else THM_C5
        optimised = not str(det["objective"]).startswith("not optimised")
        det["objective_optimised"] = optimised
        report = acct.report(theorem=theorem, neighbouring=neighbouring, details=det)
        info = {"method": "mwu", "setting": setting, "alpha_guaranteed":
                det.get("alpha_guaranteed"), "alpha_requested": accuracy,
                "schedule": kw["schedule"], "objective_optimised": optimised,
                "form": {k: v for k, v in form.info.items() if k != "source_rows"}}
        if not optimised:
            # A feasibility answer is not an approximate optimum: say so in the status, in
            # info and with a warning (issue 21 item 15).
            status = cp.USER_LIMIT
            info["status_reason"] = (
                "objective " + det["objective"] + "; the released point only approximately "
                "satisfies the constraints and its objective value carries no guarantee")
            warnings.warn(ObjectiveNotOptimisedWarning(
                "cvxdp: the objective was not optimised (" + det["objective"] + "); status "
                "is 'user_limit' and the answer is only an approximately feasible point."),
                stacklevel=3)
        elif info["alpha_guaranteed"] is None:
            # The theorem's accuracy bound needs conditions (enough budget for the iterations it
            # asks) that do not hold here: the answer is private, but its accuracy is not
            # promised, so the status does not say it is (issue 21: status is a promise).
            status = cp.USER_LIMIT
            info["status_reason"] = (
                f"the accuracy bound of {theorem} does not hold at this budget and size "
                "(theorem_conditions_hold is False in the privacy details); the released point "
                "is private but carries no accuracy guarantee: raise epsilon, or pass a larger "
                "accuracy=")
            warnings.warn(AccuracyNotGuaranteedWarning(
                "cvxdp: the accuracy bound of the MWU theorem does not hold at this budget; "
                "status is 'user_limit' (see info['status_reason'])."), stacklevel=3)
    # With a private objective, problem.value must come from the released (noisy) c only: the
    # true objective at x is a function of the private c and is not released.
    released = value_released if "objective" in settings else None
    value = from_scp(problem, scp, x, status=status, value=released)
    solve_time = time.perf_counter() - t0
    validation = None
    if reference:
        from cvxdp.transform.reference import validate

        validation = validate(scp, x, solver=solver)
        # validate() may overwrite variable values: write the released ones back
        from_scp(problem, scp, x, status=status, value=released)
    primal = {v.name(): v.value for v in problem.variables()}
    return PrivateSolution(status=status, value=value, privacy=report,
                           validation=validation, iterations=iterations,
                           solve_time=solve_time, primal=primal, info=info)


class ObjectiveNotOptimisedWarning(UserWarning):
    """The private solve returned a feasibility answer: the objective was not optimised."""


class AccuracyNotGuaranteedWarning(UserWarning):
    """The private solve's theorem does not bound the accuracy at the settings used."""


def public_feasibility(A: sp.spmatrix, b: np.ndarray, dims: Any, row_private: np.ndarray,
                       solver: str | None = None) -> str:
    """CVXPY status of ``find x  s.t.  b - A x in K`` over the rows that carry no private data.

    Only public data enters, so the answer can be acted on (and reported) before any budget is
    spent.  Returns ``"optimal"`` when there is no public row.  ``solver`` (e.g. ``"SCS"``)
    chooses CVXPY's solver; None: Clarabel, else CVXPY's default.
    """
    x = cp.Variable(A.shape[1])
    cons = canonical_constraints(x, A, b, dims, keep=~np.asarray(row_private, dtype=bool))
    if not cons:
        return cp.OPTIMAL
    prob = cp.Problem(cp.Minimize(0), cons)
    try:
        _solve_accurately(prob, solver)
    except cp.error.SolverError:  # undecided: let the private path run as before
        return cp.SOLVER_ERROR
    return str(prob.status)


def _infeasible(problem: cp.Problem, scp: Any, status: str, neighbouring: str,
                t0: float) -> PrivateSolution:
    """The answer for an infeasible public part: no mechanism ran, nothing was spent."""
    from cvxdp.privacy.accountant import PrivacyReport
    from cvxdp.transform.canon import set_no_solution

    value = set_no_solution(problem, status)
    report = PrivacyReport(guarantee="dp", epsilon=0.0, delta=0.0, rho=0.0,
                           neighbouring=neighbouring,
                           theorem="no mechanism ran (public data only)", records=(),
                           details={"public_status": status})
    info = {"method": "public feasibility check", "public_status": status,
            "status_reason": "the constraints that carry no private data are infeasible "
                             "(decided by an exact solve of public data only); no privacy "
                             "budget was spent"}
    return PrivateSolution(status=cp.INFEASIBLE, value=value, privacy=report,
                           iterations=0, solve_time=time.perf_counter() - t0, primal={
                               v.name(): None for v in problem.variables()}, info=info)


def _search(setting, form, scp, budget, acct, gen, kw, opts):
    """Private bisection over the objective value (digest 002 §8 G1, option (c)).

    Run 0 solves feasibility (objective row at the public upper end of the range) and is the
    fallback answer; runs 1..S-1 bisect ``tau``.  Every run is followed by a noisy test of its
    largest normalised violation (Gaussian, sensitivity = the score sensitivity, since the
    average iterate is a distribution); a target counts as reached when the noisy violation is
    at most run 0's noisy violation plus the accuracy (or two test noise scales).  The zCDP
    budget is split evenly: ``(1 - q) rho / S`` per run and ``q rho / S`` per test.
    """
    rho = total_rho(budget)
    if rho is None:  # pure DP: no Gaussian tests; solve feasibility and say so
        res, det = _run(setting, form, budget, rng=gen, accountant=acct, **kw)
        det["objective"] = ("not optimised: a pure-DP budget cannot pay for the noisy tests of "
                            "the search (pass target= or delta > 0)")
        return res, det
    S = int(opts.get("search_steps", 6))
    q = float(opts.get("search_share", 0.1))
    if S < 1 or not 0 < q < 1:
        raise PrivacyGuaranteeError("search_steps must be >= 1 and 0 < search_share < 1.")
    row_private = (np.asarray(scp.sensitivity.A.sum(axis=1)).ravel() > 0) | (
        scp.sensitivity.b > 0)
    try:
        if trace_set_only(form):
            # the public set is {z in K, tr z = R}: the range of c'x is R times the extreme
            # eigenvalues of c_z (EJA spectrum; eigvalsh per block), no conic solve
            lam = form.algebra.eigenvalues(form.c_z / form.algebra.gram)
            lo = form.c_z_shift + form.R * float(lam.min())
            hi = form.c_z_shift + form.R * float(lam.max())
        else:
            lo, hi = public_bounds(scp.A, scp.b, scp.dims, row_private, [scp.c])
            lo, hi = float(lo[0]), float(hi[0])
    except Exception:  # noqa: BLE001 - unbounded public part: fall back to the trace bound
        w = form.algebra.norm_inf(form.c_z / form.algebra.gram) * form.R
        lo, hi = form.c_z_shift - w, form.c_z_shift + w
    # Fewer steps when a test would be pure noise: each test's noise must stay below half the
    # acceptance margin, else the search degenerates to feasibility (reported in details).
    acc = kw["accuracy"]
    score = row_sensitivities(form.with_target(hi)).score
    margin = acc / (form.R * form.rho) if acc is not None else 0.05
    while S > 1 and score / math.sqrt(2 * rho * q / S) > margin / 2:
        S -= 1
    run_budget = ZCDP(rho * (1 - q) / S) if S > 1 else ZCDP(rho)
    test_rho = rho * q / S
    best = None
    runs = []
    base = None
    for s in range(S):
        tau = hi if s == 0 else 0.5 * (lo + hi)
        f = form.with_target(tau)
        res, det = _run(setting, f, run_budget, rng=gen, accountant=acct, **kw)
        if S == 1:
            best = (res, det)
            runs.append({"tau": tau, "noisy_violation": None, "reached": None})
            break
        sens = row_sensitivities(f)
        sig = sens.score / math.sqrt(2 * test_rho)
        acct.spend(gaussian_record(sigma=sig, sensitivity=sens.score, mechanism="gaussian",
                                   note="noisy feasibility test of the objective search"))
        v = float(np.max(f.G @ res.x - f.h)) + gen.normal(0.0, sig)
        if s == 0:
            base = v
            best = (res, det)
            ok = True
        else:
            ok = v <= base + margin
            if ok:
                best = (res, det)
                hi = tau
            else:
                lo = tau
        runs.append({"tau": tau, "noisy_violation": v, "reached": ok})
    res, det = best
    det = dict(det)
    det.update(objective="private bisection" if S > 1 else
               "not optimised: budget too small for an informative search (pass target=)",
               search_runs=runs, search_steps=S,
               search_share=q, total_iterations=len(runs) * det["T"],
               rho_per_run=rho * (1 - q) / S, rho_per_test=test_rho)
    return res, det


def _exact_solver(solver: Any) -> str | None:
    """Check ``solver=`` (CVXPY's spelling, e.g. ``cp.SCS``): the conic solver of the exact steps
    (public feasibility check, ``reference=True``); the reference supports Clarabel and SCS."""
    if solver is None:
        return None
    name = str(solver).upper()
    allowed = [s for s in ("CLARABEL", "SCS") if s in cp.installed_solvers()]
    if name not in allowed:
        raise UnsupportedProblemError(
            f"solver={solver!r} cannot run the exact steps of the private solve (public "
            f"feasibility check, reference=True); choose one of {allowed}.")
    return name


def _solve_accurately(prob: Any, solver: str | None = None) -> None:
    """``solver`` when given; else Clarabel (interior point, ~1e-8) when available, else CVXPY's
    default."""
    import cvxpy as cp

    if solver is not None:
        prob.solve(solver=solver)
        return
    try:
        prob.solve(solver=cp.CLARABEL)
    except (cp.error.SolverError, ImportError):
        prob.solve()


def trace_set_only(form: Any) -> bool:
    """True when the MWU form's public part is exactly ``{z in K, tr z = R}``: the trace is a
    public equality (``R`` exact) and every row left in ``G`` carries private data."""
    return (form.info.get("w_coord") is None and form.R >= 0
            and int(form.info.get("private_rows", -1)) == int(form.G.shape[0]))


def public_bounds(A, b, dims, row_private, directions: list[np.ndarray],
                  allow_unbounded: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """min and max of ``d'x`` over the public rows' feasible set for each direction d.

    A parametric (DPP) CVXPY problem is compiled once and re-solved for every direction.
    With ``allow_unbounded`` an unbounded direction gives ``-inf`` / ``inf`` instead of an error.

    Raises
    ------
    InfeasibleProblemError
        If the public part is infeasible.
    UnsupportedProblemError
        If a direction is unbounded (the public part does not bound the variables).
    """
    import cvxpy as cp

    n = A.shape[1]
    x = cp.Variable(n)
    d = cp.Parameter(n)
    cons = canonical_constraints(x, A, b, dims, keep=~row_private)
    prob = cp.Problem(cp.Maximize(d @ x), cons)
    lo, hi = np.zeros(len(directions)), np.zeros(len(directions))
    for i, vec in enumerate(directions):
        for sgn, out in ((1.0, hi), (-1.0, lo)):
            d.value = sgn * vec
            try:
                _solve_accurately(prob)
                status, value = prob.status, prob.value
            except cp.error.SolverError:  # both solvers fail on some unbounded programs
                status, value = "unbounded_inaccurate", None  # no bound proven
            if status in ("infeasible", "infeasible_inaccurate"):
                raise InfeasibleProblemError(
                    "the constraints that carry no private data are infeasible; fix the model "
                    "(the private solver needs a feasible public part).")
            if (status in ("unbounded", "unbounded_inaccurate") or value is None) \
                    and allow_unbounded:
                out[i] = sgn * np.inf
                continue
            if status in ("unbounded", "unbounded_inaccurate") or value is None:
                raise UnsupportedProblemError(
                    "the public constraints do not bound the variables, so no public trace "
                    "bound exists; add public bounds (e.g. cp.sum(x) <= R, cp.trace(X) <= R) "
                    "or pass trace_bound= / norm_bound=.")
            out[i] = sgn * float(value)
    return lo, hi


def canonical_constraints(x: Any, A: sp.spmatrix, b: np.ndarray, dims: Any,
                          keep: np.ndarray | None = None) -> list[Any]:
    """CVXPY constraints ``b - A x in K`` for the rows in ``keep`` (default: all rows).

    A second-order or PSD block is kept only when all its rows are kept (dropping constraints
    only enlarges the set, so bounds computed over it stay valid).
    """
    import cvxpy as cp

    A = sp.csr_matrix(A)
    keep = np.ones(A.shape[0], dtype=bool) if keep is None else np.asarray(keep, dtype=bool)
    cons: list[Any] = []
    for kind, r0, nr, order in _row_blocks(dims):
        if nr == 0:
            continue
        rows = np.arange(r0, r0 + nr)
        if kind in ("zero", "nonneg"):
            rows = rows[keep[rows]]
            if rows.size == 0:
                continue
            s = b[rows] - A[rows] @ x
            cons.append(s == 0 if kind == "zero" else s >= 0)
            continue
        if not keep[rows].all():
            continue
        s = b[rows] - A[rows] @ x
        if kind == "soc":
            cons.append(cp.SOC(s[0], s[1:]))
        else:
            from cvxdp.solvers.mwu import _svec_index

            ri, ci, sc = _svec_index(order)
            flat_lo = ri + order * ci  # column-major index of (ri, ci)
            flat_up = ci + order * ri
            M = sp.csr_matrix((np.concatenate([1 / sc, 1 / sc]),
                               (np.concatenate([flat_lo, flat_up]),
                                np.concatenate([np.arange(nr), np.arange(nr)]))),
                              shape=(order * order, nr))
            # diagonal entries were added twice
            M = M.tolil()
            for i in np.flatnonzero(ri == ci):
                M[flat_lo[i], i] = 1.0
            Xm = cp.reshape(M.tocsr() @ s, (order, order), order="F")
            cons.append(cp.PSD((Xm + Xm.T) / 2))
    return cons
