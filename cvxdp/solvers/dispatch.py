"""The entry point of the general cone-program path: picks the private solver of a model.

:func:`solve_general` is what ``solve_private`` calls for an LP / SOCP / SDP model with a
privacy spec (``cvxdp.api``).  ``mechanism="mwu"`` runs the noisy-oracle MWU of Song et al. (2025)
(:func:`cvxdp.solvers.mwu.solve.solve_mwu`, which also hands ``ConstraintSetPrivacy`` to the
covering path :mod:`cvxdp.solvers.covering`); ``"perturbation"`` and ``"auto"`` go to
:func:`cvxdp.solvers.auto.solve_with_mechanism`, which runs the MWU itself when it is the
choice.  This module only dispatches: both families import nothing from it, so no import
circle runs through it.
"""

from __future__ import annotations

from typing import Any

import cvxpy as cp
import numpy as np

from cvxdp.solution import PrivateSolution
from cvxdp.solvers.auto import MECHANISMS, check_mechanism, solve_with_mechanism
from cvxdp.solvers.mwu.solve import solve_mwu

__all__ = ["solve_general", "MECHANISMS"]


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
    """Solve a CVXPY LP/SOCP/SDP privately (Song, Xue & Zhang 2025, Sec 5.2 and App. C).

    ``mechanism="auto"`` (the default) picks the MWU or perturbation from public quantities
    (:func:`cvxdp.solvers.auto.choose_mechanism`); ``"perturbation"`` goes to
    :mod:`cvxdp.solvers.perturbation.certified` (noise on the private parameters + exact robust
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
    Song, Xue & Zhang (2025): Algorithm 1, Algorithm 5, Theorems C.2, C.5, C.7, C.9, C.12.
    """
    check_mechanism(mechanism)
    if mechanism != "mwu":  # input perturbation / the public choice between the two
        return solve_with_mechanism(
            problem, mechanism=mechanism, epsilon=epsilon, delta=delta, rho=rho,
            private=private, rng=rng, reference=reference, accuracy=accuracy, verbose=verbose,
            max_iterations=max_iterations, trace_bound=trace_bound, target=target, **opts)

    return solve_mwu(
        problem, epsilon=epsilon, delta=delta, rho=rho, private=private, accuracy=accuracy,
        rng=rng, reference=reference, verbose=verbose, max_iterations=max_iterations,
        trace_bound=trace_bound, target=target, **opts)
