"""One entry point for private solves: ``problem.solve_private`` / ``cvxdp.solve_private``.

Dispatch: a :class:`cvxdp.structured.StructuredProblem` (ellipsoid, ball, least squares, covering,
...) runs its own algorithm; any other CVXPY problem goes down the cone-program path
(``cvxdp.transform`` then ``cvxdp.solvers.dispatch.solve_general``).  The three spellings --
``problem.solve_private(...)``, ``problem.solve(method="private", ...)`` (returns the value, like
``solve``) and ``cvxdp.solve_private(problem, ...)`` -- share this one implementation.

The common keywords (epsilon, delta, rho, budget, rng, reference, verbose, accuracy,
accountant) are checked by :func:`cvxdp.arguments.entry_point`, the same as at every other entry
point; the rest is validated here, before any solver runs (scikit-learn style: validate
once at the boundary): the budget (:func:`cvxdp.privacy.budgets.resolve_budget`), the privacy
spec (present, of the right type, its parameters where its setting allows), the model (a
symmetric cone program: :func:`explain` lists what is not), ``accuracy`` and ``rng``.
"""

from __future__ import annotations

import dataclasses
import importlib
import warnings
from typing import Any

import cvxpy as cp

from cvxdp.arguments import COMMON_OPTIONS, check_options, entry_point, option_names
from cvxdp.errors import CvxdpError, PrivacySpecError, UnsupportedProblemError
from cvxdp.estimation.regression import LeastSquaresPrivacy, least_squares_from_model
from cvxdp.learning import explain_rows, solve_rows
from cvxdp.learning.solve import check_row_declared, row_spec
from cvxdp.privacy.budgets import resolve_budget
from cvxdp.progress import budget_text, problem_size, verbose_run
from cvxdp.solution import PrivateSolution
from cvxdp.solvers.dispatch import solve_general
from cvxdp.solvers.quadform_perturbation import quadform_only_ids
from cvxdp.specs import as_spec_tuple, check_declared, spec_parameters
from cvxdp.status import within_objective_range
from cvxdp.structured import StructuredProblem
from cvxdp.transform import to_scp, unsupported_reasons
from cvxdp.transform.domain import (
    PRIVATE_VALUE_BOUND,
    clipped_values,
    objective_range,
    structural_values,
    with_public_values,
)
from cvxdp.transform.reference import validate_user_terms
from cvxdp.writeback import forget_solution, write_back

__all__ = ["solve_private", "install", "is_supported", "explain", "check_options",
           "option_names"]


#: structured problems whose ``solve_private(**kwargs)`` hands everything to one function: the
#: function whose signature lists the options (module, name)
_DELEGATES = {
    "JohnEllipsoidProblem": ("cvxdp.geometry.john.john_private", "private_john"),
    "MinEnclosingBall": ("cvxdp.geometry.meb.meb_solve", "solve_private_meb"),
}


def _structured_options(problem: StructuredProblem) -> set[str] | None:
    """Options of a structured problem's private solve, or None when they cannot be listed."""
    cls = type(problem)
    if hasattr(cls.solve_private, "_entry_keywords"):
        return None  # an entry point of cvxdp.arguments: checks its own keywords
    for klass in cls.__mro__:
        if klass.__name__ in _DELEGATES:
            mod, name = _DELEGATES[klass.__name__]
            names, _ = option_names(getattr(importlib.import_module(mod), name))
            return names
    names, open_ = option_names(cls.solve_private)
    if open_:  # solve_private(self, **kwargs): the options are not listed anywhere
        return None
    return names | {"private", "accuracy", "verbose"}  # swallowed by ``**_`` when not named


def explain(problem: cp.Problem, private: Any = None, public: Any = None) -> list[str]:
    """Why ``problem`` (with the spec ``private``) cannot be solved privately.

    Decided from the model's structure only (shapes, attributes, DPP, cone types): the
    parameters are compiled with public placeholder values, never with their (private) values.

    Parameters
    ----------
    problem : cvxpy.Problem
    private : privacy spec, sequence of specs, or None
        When given, the spec is also checked against the model, and every parameter of the
        model must be declared in it or in ``public``.
    public : cvxpy.Parameter or sequence of them, optional
        The model's public parameters (as in :func:`solve_private`).

    Returns
    -------
    list of str
        Empty when supported; otherwise one sentence per cause saying what to change.  Never
        raises for a bad model or spec.
    """
    if isinstance(problem, StructuredProblem):
        return []  # carries its own algorithm (e.g. john_ellipsoid uses log_det on purpose)
    try:
        rows = _row_spec(private)
    except PrivacySpecError as err:
        return [str(err)]
    if rows is not None:  # a learning model: any cone (cvxdp.learning)
        try:
            check_row_declared(problem, rows, public)
        except PrivacySpecError as err:
            return [str(err)]
        return explain_rows(problem, rows)
    if not isinstance(problem, cp.Problem):
        return unsupported_reasons(problem)
    with structural_values(problem.parameters()):
        try:
            specs = as_spec_tuple(private)
            public_t = check_declared(problem, specs, public) if specs else ()
        except PrivacySpecError as err:
            return [str(err)]
        work = with_public_values(problem, public_t)
        reasons = unsupported_reasons(work)
        if reasons or private is None:
            return reasons
        try:
            if quadform_only_ids(work, specs):
                return []  # released at the model level by the default mechanism ("auto")
            to_scp(work, private=private)
        except (PrivacySpecError, UnsupportedProblemError) as err:
            return [str(err)]
    return []


def is_supported(problem: cp.Problem, private: Any = None, public: Any = None) -> bool:
    """True when :func:`explain` finds nothing to refuse (never raises)."""
    return not explain(problem, private, public)


@entry_point("solve_private",
             describe=lambda problem, *_: f"solve_private({type(problem).__name__})")
def solve_private(
    problem: cp.Problem,
    *,
    epsilon: float | None = None,
    delta: float | None = None,
    rho: float | None = None,
    budget: Any = None,
    private: Any = None,
    public: Any = None,
    accuracy: float | None = None,
    rng: Any = None,
    reference: bool = False,
    verbose: bool = False,
    solver: str | None = None,
    accountant: Any = None,
    **solver_opts: Any,
) -> Any:
    """Solve ``problem`` with differential privacy.

    Parameters
    ----------
    problem : cvxpy.Problem
        An LP / SOCP / SDP model whose private data are Parameters, or a structured problem
        built by ``cvxdp.john_ellipsoid``, ``cvxdp.min_enclosing_ball``, ...
    epsilon, delta, rho : float, optional
        The budget: ``epsilon`` (+ ``delta``) for (approximate) DP, or ``rho`` for zCDP.
        Ranges: ``0 < epsilon <= 1e6``, ``0 <= delta <= 0.01``, ``0 < rho <= 1e6``.
        Without ``delta`` the budget is pure epsilon-DP (``delta = 0``).
    budget : PureDP, ApproxDP or ZCDP, optional
        The same budget as one value, instead of ``epsilon`` / ``delta`` / ``rho``.
    accountant : PrivacyAccountant, optional
        A session budget: this call's budget must fit into what is left of it (else
        ``BudgetError`` before any data is read) and is recorded in its ledger afterwards.
    private : privacy spec or sequence of specs
        Which data is private and how neighbours differ (``cvxdp.ConstraintPrivacy``,
        ``ScalarPrivacy``, ``ObjectivePrivacy``, ``ConstraintSetPrivacy``; ``RowPrivacy``
        for a learning model with one person per row, ``docs/learning.md``).  Required for a
        general model; structured problems know their own.
    public : cvxpy.Parameter or sequence of them, optional
        The model's parameters whose values are public: used exactly and listed in
        ``privacy.details["public_parameters"]``.  Every parameter of a general model must be
        in ``private=`` or ``public=`` (fail closed: anything else is refused with
        ``PrivacySpecError``).
    accuracy : float, optional
        Target additive error alpha (> 0) of the private solver.
    rng : None, int or numpy.random.Generator
        Source of all randomness; the same seed gives the same answer.
    reference : bool
        Also solve exactly (NOT private) and attach ``solution.validation``.
    verbose : bool
    solver : str, optional
        The conic solver of the exact (non-private) steps, as in ``problem.solve(solver=...)``:
        on the general path the public feasibility check and the ``reference=True`` solve
        (``"CLARABEL"`` or ``"SCS"``); passed on to a structured path that takes it.
    **solver_opts
        ``mechanism="mwu" | "perturbation" | "auto"`` (general models only; default
        ``"auto"``; ``"mwu"`` is the paper's noisy-oracle MWU, and an MWU-only option such as
        ``target=`` or ``max_iterations=`` makes ``"auto"`` take it): ``"perturbation"`` adds noise
        to the private parameters
        and solves a robust counterpart exactly (``noise="auto"`` (default), ``"gaussian"`` or
        ``"laplace"``: feasible for the true data with probability ``>= 1 - beta``,
        ``beta=1e-3`` by default; ``noise="truncated"``: feasible with certainty);
        ``"auto"`` picks one from public quantities and says why in ``info``
        (``docs/solvers.md``, "Perturbation and auto").
        Every option of the path chosen (e.g. ``max_iterations=``, ``target=`` on the MWU path,
        ``s=``, ``T=`` on the covering path): forwarded unchanged.  An option the path does not
        take raises ``TypeError`` naming the nearest valid one.

    Returns
    -------
    PrivateSolution
        ``status`` (``"optimal_inaccurate"`` for a private answer), ``value``, ``privacy``,
        ``validation``, ...; the user's variables hold the private answer.

    Raises
    ------
    BudgetError, PrivacySpecError, UnsupportedProblemError, PrivacyGuaranteeError
        Before any solver runs, for a bad budget, spec, model, ``accuracy`` or ``rng``.
    TypeError
        For a keyword the chosen path does not take (the message suggests the nearest one).
    """
    del budget, accountant  # turned into epsilon/delta/rho and spent by @entry_point
    if not isinstance(problem, cp.Problem):
        raise TypeError(f"solve_private expects a cvxpy.Problem, got {type(problem).__name__}.")
    if isinstance(problem, StructuredProblem):
        if public is not None:
            raise PrivacySpecError(
                f"public= declares the parameters of a general CVXPY model; "
                f"{type(problem).__name__} is built by cvxdp and knows which of its data is "
                "private. Drop public=.")
        kwargs: dict[str, Any] = {"epsilon": epsilon, "delta": delta, "rho": rho, "rng": rng,
                                  "reference": reference}
        if private is not None:
            kwargs["private"] = private
        if accuracy is not None:
            kwargs["accuracy"] = accuracy
        if verbose:
            kwargs["verbose"] = verbose
        if solver is not None:
            kwargs["solver"] = solver
        valid = _structured_options(problem)
        if valid is not None:
            check_options([*kwargs, *solver_opts], valid, f"{type(problem).__name__}")
        return problem.solve_private(**kwargs, **solver_opts)  # its wrapper writes back

    forget_solution(problem)  # a refused or failed private solve leaves no answer behind
    try:
        sol = _solve_model(problem, epsilon=epsilon, delta=delta, rho=rho, private=private,
                           public=public, accuracy=accuracy, rng=rng, reference=reference,
                           verbose=verbose, solver=solver, **solver_opts)
    except BaseException:
        forget_solution(problem)  # nothing a solver wrote on its way stays on the problem
        raise
    write_back(problem, sol)
    if reference and isinstance(sol, PrivateSolution) and _row_spec(private) is None and any(
            v is not None for v in sol.primal.values()):
        # compared in the user's terms: their objective and constraints at their variables
        # (a path's own comparison, when it made one, is kept in the report's metrics;
        # RowPrivacy's is in the user's terms already, solved on constant data)
        sol.validation = validate_user_terms(problem, sol.validation, solver=solver)
        write_back(problem, sol)
    return sol


def _solve_model(problem: cp.Problem, *, epsilon: float | None, delta: float | None,
                 rho: float | None, private: Any, public: Any, accuracy: float | None,
                 rng: Any, reference: bool, verbose: bool, solver: str | None,
                 **solver_opts: Any) -> Any:
    """The general model's path (least squares or the cone-program path); returns the
    :class:`~cvxdp.solution.PrivateSolution` without writing it into ``problem``."""
    rows = _row_spec(private)
    if rows is not None:  # one person per row of a learning model: cvxdp.learning
        public_t = check_row_declared(problem, rows, public)
        check_options(solver_opts, option_names(solve_rows)[0] - {"spec"},
                      "the row-level learning path (RowPrivacy)")
        if solver is not None:
            solver_opts["solver"] = solver
        sol = solve_rows(problem, rows, epsilon=epsilon, delta=delta, rho=rho,
                         accuracy=accuracy, rng=rng, reference=reference, **solver_opts)
        return _with_public(sol, public_t)
    if private is not None and _is_least_squares_spec(private):
        # sum_squares(X @ beta - y) with private rows: the least-squares mechanisms (Lu et al. 2024)
        raw = list(private) if isinstance(private, (list, tuple)) else [private]
        public_t = check_declared(problem, raw, public)
        structured = least_squares_from_model(problem, private)
        names, _ = option_names(type(structured).solve_private)
        given = [*solver_opts, *(["solver"] if solver is not None else []),
                 *(["accuracy"] if accuracy is not None else [])]  # not dropped silently
        check_options(given, (names | set(COMMON_OPTIONS)) - {"accuracy", "solver"},
                      "the least-squares path (LeastSquaresPrivacy)")
        sol = structured.solve_private(epsilon=epsilon, delta=delta, rho=rho, rng=rng,
                                       reference=reference, **solver_opts)
        user_var = getattr(structured, "_user_variable", None)
        if user_var is not None and getattr(sol, "coef", None) is not None:
            # the released coefficients belong to the user's variable, whatever its name
            sol.primal = {**sol.primal, user_var.name(): sol.coef}
        return _with_public(sol, public_t)

    resolve_budget(epsilon=epsilon, delta=delta, rho=rho)  # values checked by @entry_point
    # cheap checks (to_scp finds the cones); never on the private parameters' values
    reasons = unsupported_reasons(problem, compile=False, private=_private_ids(private))
    if reasons:
        raise UnsupportedProblemError("cannot solve this model privately: " + " ".join(reasons))
    if private is None:
        with structural_values(problem.parameters()), warnings.catch_warnings():
            # (CVXPY warns that a model with data multiplying data is not DPP: the refusal
            # below is the message that matters)
            warnings.filterwarnings("ignore", message=".*not DPP", category=UserWarning)
            to_scp(problem)  # an unsupported model is reported before a missing spec
        raise PrivacySpecError(
            "a general CVXPY model needs private= to say which data is private, e.g. "
            "private=cvxdp.ConstraintPrivacy(A, sensitivity=D) where D is how far one person "
            "can move an entry of Parameter A (e.g. 1e-3 for averages over 1,000 people; it "
            "sets the noise), cvxdp.ScalarPrivacy(b, sensitivity=...), "
            "cvxdp.ObjectivePrivacy(c, sensitivity=...) or cvxdp.ConstraintSetPrivacy(con); "
            "a model that fits one person's record per row (regression, classification: "
            "docs/learning.md) takes private=cvxdp.RowPrivacy(X, y, row_bound=B), B a public "
            "bound on a row's norm."
        )
    specs = as_spec_tuple(private)
    public_t = check_declared(problem, specs, public)
    private_params = [p for s in specs for p in spec_parameters(s)]
    # the public parameters' values are fixed (they are public): a model such as
    # gamma * cp.sum_squares(F.T @ w) is then DPP in the private ones; the result is written
    # into the user's problem by the entry point
    problem = with_public_values(problem, public_t)
    with clipped_values(private_params):
        if solver_opts.get("mechanism", "auto") == "mwu" or not quadform_only_ids(problem,
                                                                                 specs):
            # validates the spec against the model (a private matrix only inside quad_form
            # never reaches the cone program: the perturbation path releases it at the model
            # level)
            to_scp(problem, private=private)
        if solver is not None:  # CVXPY's habit: the conic solver of the exact steps
            solver_opts["solver"] = solver
        run = verbose_run(bool(verbose), "general model", size=problem_size(problem),
                          mechanism=str(solver_opts.get("mechanism", "auto")),
                          budget=budget_text(epsilon, delta, rho))
        sol = solve_general(
            problem, epsilon=epsilon, delta=delta, rho=rho, private=private,
            accuracy=accuracy, rng=rng, reference=reference, verbose=verbose, **solver_opts)
        # the objective's public range (its sign) bounds the optimum: post-processing
        sol = run.finish(within_objective_range(sol, *objective_range(problem), accuracy))
    sol.info["clipped_domain"] = (f"private entries are clipped into "
                                  f"[-{PRIVATE_VALUE_BOUND:g}, {PRIVATE_VALUE_BOUND:g}]")
    return _with_public(sol, public_t)


def _private_ids(private: Any) -> frozenset[int]:
    """Ids of the parameters ``private=`` names (empty when it is malformed: the spec's own
    check reports that, after the model's)."""
    try:
        return frozenset(p.id for s in as_spec_tuple(private) for p in spec_parameters(s))
    except CvxdpError:
        return frozenset()


def _with_public(sol: Any, public: tuple[cp.Parameter, ...]) -> Any:
    """List the declared public parameters in the solution's privacy report."""
    if isinstance(sol, PrivateSolution) and sol.privacy is not None:
        details = {**sol.privacy.details, "public_parameters": [p.name() for p in public]}
        sol.privacy = dataclasses.replace(sol.privacy, details=details)
    return sol


def _row_spec(private: Any) -> Any:
    return None if private is None else row_spec(private)


def _is_least_squares_spec(private: Any) -> bool:
    specs = private if isinstance(private, (list, tuple)) else [private]
    return any(isinstance(s, LeastSquaresPrivacy) for s in specs)


def _solve_private_method(self: cp.Problem, **kwargs: Any) -> Any:
    return solve_private(self, **kwargs)


def _solve_method(self: cp.Problem, *args: Any, **kwargs: Any) -> Any:
    if args:
        raise TypeError("solve(method='private') takes keyword arguments only.")
    return solve_private(self, **kwargs).value


def install() -> None:
    """Attach ``solve_private`` to :class:`cvxpy.Problem` and register ``method="private"``."""
    if not hasattr(cp.Problem, "solve_private") or not getattr(
        cp.Problem.solve_private, "_cvxdp", False
    ):
        _solve_private_method._cvxdp = True  # type: ignore[attr-defined]
        _solve_private_method.__doc__ = solve_private.__doc__
        cp.Problem.solve_private = _solve_private_method  # type: ignore[attr-defined]
    cp.Problem.register_solve("private", _solve_method)
