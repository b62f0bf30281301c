"""A private ``quad_form`` matrix together with other private parameters.

A portfolio model keeps its covariance in ``cp.quad_form(w, Sigma)`` and its expected returns in
``mu @ w``, both private.  ``Sigma`` never reaches the cone program (CVXPY factors its value:
the model is not DPP in it), and the canonical mechanisms see only ``mu``.  This module joins
the model-level release of :mod:`cvxdp.solvers.quadform_perturbation` with the general path:

1. **Budget.**  The zCDP budget ``rho`` is split in proportion to the private entries, ``rho_q =
   rho K_q / (K_q + K_r)`` for the ``K_q`` distinct entries of the matrices and ``rho_r = rho -
   rho_q`` for the ``K_r`` entries of the other parameters.  With Gaussian noise on both halves
   this is exactly the per-entry noise of ONE joint Gaussian release of all ``K_q + K_r``
   entries (``sigma = sqrt(K) / sqrt(2 rho)`` either way): the split costs nothing.  zCDP
   composition (Bun & Steinke 2016, Lemma 2.3) gives the total.
2. **Release and substitute.**  The matrices are released once (``release_quadform``); the
   model's objective gets ``Pi(S~)``, its constraints ``Pi(S~ + r I)`` (``>= S`` on the event).
   The copy is DPP in the other private parameters.
3. **The general path** (``mechanism=`` as the user chose) solves the copy with ``rho_r``.
4. **Certificate** (post-processing).  A convex model is nondecreasing in each ``quad_form``
   matrix (Loewner order).  When every objective term that holds a matrix is ``c *
   quad_form(a(x), S)`` with a public ``c > 0`` (in the minimised sense) and holds no other
   private parameter, the objective is ``f = f_mid + sum_k c_k a_k' (S_k - S~mid_k) a_k``:

   * upper: ``f(x^) <= U_in + sum_k c_k [q_k(x^; Pi(S~ + r I)) - q_k(x^; Pi(S~))]`` with
     ``U_in`` the copy's certified upper bound (both terms are evaluated at the released
     point);
   * lower, when no matrix sits in a constraint (the feasible sets agree): ``OPT >= L_in -
     sum_k c_k lambda_max(Pi(S~) - S~ + r I) B_k``, ``B_k >= max ||a_k(x)||^2`` over the public
     constraints (each entry's range by one linear program), ``L_in`` the copy's certified
     lower bound.  With a matrix in a constraint the tightened copy's feasible set is smaller
     than the true one and no lower bound is claimed; the relaxed copy's holds the true one
     (``S~ - r I <= S``), and the same bound holds;
   * gap, for a copy certified by a theorem's gap alone (objective perturbation): ``f(x^) -
     OPT <= [f_mid(x^) - OPT_mid] + [f(x^) - f_mid(x^)] + [OPT_mid - OPT]``, the copy's gap
     plus the two shifts above;
   * violation: the copy's (its constraints are tighter than the true ones on the event).
     With a matrix in a constraint, the relaxed copy (``S~ - r I``, which holds the true
     feasible set on the event, so the lower bound above applies) is solved instead when its
     violation bound, known from the release before the inner mechanism runs, meets the
     accuracy (:func:`_relaxed_violation`; docs/certificates.md).
     When the tightened copy's public part is empty (the tightening above a public limit),
     the copies with the released, relaxed and no matrices are tried in turn
     (:meth:`~cvxdp.solvers.quadform_perturbation.QuadformRelease.constraint_copies`; the
     inner mechanism spent nothing on an empty public part), and a constraint that holds a
     matrix is then bounded by its value with ``Pi(S~ + r I)`` at the released point (``inf``
     when it also holds another private parameter, which cannot be evaluated).

   The events: the copy's and the matrices' tail (``beta`` more).  A term of another shape
   leaves the objective's bounds unproven (``inf``): the answer stands, its status says so.
"""

from __future__ import annotations

import dataclasses
import math
import time
from typing import Any

import cvxpy as cp
import numpy as np
from cvxpy.constraints.nonpos import Inequality

from cvxdp.errors import BudgetError
from cvxdp.privacy.accountant import PrivacyAccountant
from cvxdp.privacy.budgets import ZCDP, Budget
from cvxdp.solution import Certificate, PrivateSolution
from cvxdp.solvers.mwu.schedule import total_rho
from cvxdp.solvers.quadform_bounds import expression_quad_terms, quad_terms, square_bound
from cvxdp.solvers.quadform_perturbation import (
    FALLBACK_NOTE,
    QUADFORM_THEOREM,
    release_quadform,
)
from cvxdp.status import DEFAULT_ACCURACY, status_of

__all__ = ["quadform_split", "solve_quadform_combined"]


def quadform_split(specs: tuple[Any, ...], quad_ids: set[int]
                   ) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """``(quad_form specs, other specs)``: the specs whose parameters are all in ``quad_ids``
    (private matrices used only inside ``quad_form``), and the rest.

    A parameter spec that holds both kinds is split into one spec of each, with the same
    sensitivity: its sensitivity bounds every entry's change between neighbours, so it bounds
    each part's, and the two parts' releases compose over the same neighbouring pair (the
    combined release's budget split), as two specs declared by the user do."""
    quad: list[Any] = []
    rest: list[Any] = []
    for s in specs:
        params = tuple(getattr(s, "params", ()))
        inside = tuple(p for p in params if p.id in quad_ids)
        if not params or not inside:
            rest.append(s)
        elif len(inside) == len(params):
            quad.append(s)
        else:
            quad.append(dataclasses.replace(s, params=inside))
            rest.append(dataclasses.replace(
                s, params=tuple(p for p in params if p.id not in quad_ids)))
    return tuple(quad), tuple(rest)


def solve_quadform_combined(problem: cp.Problem, quad_specs: tuple[Any, ...],
                            rest_specs: tuple[Any, ...], budget: Budget, *, beta: float,
                            rng: np.random.Generator, inner: Any, accuracy: float | None
                            ) -> PrivateSolution:
    """Release the ``quad_form`` matrices, solve the copy with the general path (``inner(copy,
    rest_specs, budget_r)`` returns its :class:`PrivateSolution`) and certify the released point
    for the TRUE model (module doc)."""
    t0 = time.perf_counter()
    rho = total_rho(budget)
    if rho is None:
        raise BudgetError("a private quad_form matrix is released with Gaussian noise and needs "
                          "delta > 0 (or rho=); pass epsilon= and delta=.")
    K_q = sum(p.shape[0] * (p.shape[0] + 1) // 2 for s in quad_specs for p in s.params)
    K_r = sum(int(p.size) for s in rest_specs for p in s.params)
    rho_q = rho * K_q / (K_q + K_r)
    rel = release_quadform(problem, quad_specs, ZCDP(rho_q), beta, rng)
    objective = problem.objective.tree_copy(id_objects=rel.mid)
    copies = rel.constraint_copies()
    quad = {p.id for s in quad_specs for p in s.params}
    rest = {p.id for s in rest_specs for p in s.params}
    acc = DEFAULT_ACCURACY if accuracy is None else float(accuracy)
    relaxed_bound = _relaxed_violation(problem, rel, quad, rest) if rel.n_constrained else None
    if relaxed_bound is not None and relaxed_bound <= acc:
        # step 4's rule: only a copy whose feasible set holds the true one bounds OPT below,
        # and its violation bound (released and public data) meets the accuracy
        copies = [(label, sub) for label, sub in copies if label in _CONTAINING]
    for label, sub in copies:  # noqa: B007 (used after the loop)
        copy = cp.Problem(objective, [c.tree_copy(id_objects=sub) for c in problem.constraints])
        sol = inner(copy, rest_specs, ZCDP((rho - rho_q) * (1.0 - 1e-12)))
        # an empty public part of the copy (decided before the inner mechanism spent anything)
        # is a fact about the released matrices, not the model: the next copy (module doc)
        if sol.status != cp.INFEASIBLE or sol.privacy.records:
            break
    acct = PrivacyAccountant(budget)
    acct.spend(rel.record)
    for r in sol.privacy.records:  # checked by the copy's own accountant against rho_r
        acct.spend(r, check=False)
    report = acct.report(
        theorem=QUADFORM_THEOREM + "; the other private parameters: " + sol.privacy.theorem,
        neighbouring="; ".join(s.describe() for s in (*quad_specs, *rest_specs)),
        details={"rho_quad_form": rho_q, "rho_other": rho - rho_q, "entries_quad_form": K_q,
                 "entries_other": K_r, "inner": dict(sol.privacy.details or {})})
    info = dict(sol.info)
    info.update(quad_form_parameters=[p.name() for p in rel.params],
                quad_form_released=rel.released, quad_form_constraints=label,
                budget_split={"quad_form": rho_q, "other": rho - rho_q})
    if relaxed_bound is not None:
        info["quad_form_rule"] = (
            f"the relaxed copy's violation bound {relaxed_bound:.3g} "
            + (f"meets the accuracy {acc:g}: the relaxed copy (its feasible set holds the true "
               "one on the event, so the optimum is bounded below)" if relaxed_bound <= acc
               else f"exceeds the accuracy {acc:g}: the tightened copy (feasible for the true "
                    "data on the event; no lower bound on the optimum)"))
    cert = None
    if sol.certificate is not None and all(v is not None for v in sol.primal.values()):
        cert = _certificate(problem, quad, rest, rel, sol, beta, label)
    status, reason = status_of(cert, accuracy) if cert is not None else (
        sol.status, sol.status_reason)
    chosen = copies[0][0] != "tightened" and label == copies[0][0]  # by the rule, not empty
    if label in FALLBACK_NOTE and not chosen and sol.primal and all(
            v is not None for v in sol.primal.values()):
        reason = f"{reason}; {FALLBACK_NOTE[label]}" if reason else FALLBACK_NOTE[label]
    elif sol.status == cp.INFEASIBLE and not sol.privacy.records:
        reason = ("the constraints that carry no private data are infeasible (an exact solve "
                  "of public data only, after the quad_form matrices' release: their share of "
                  "the budget was spent)")
    if reason:
        info["status_reason"] = reason
    return PrivateSolution(status=status, value=sol.value, privacy=report, validation=None,
                           iterations=sol.iterations, solve_time=time.perf_counter() - t0,
                           primal=sol.primal, info=info, certificate=cert,
                           status_reason=reason)


def _certificate(problem: cp.Problem, quad: set[int], rest: set[int], rel: Any,
                 sol: PrivateSolution, beta: float,
                 label: str = "tightened") -> Certificate:
    """Step 4 of the module doc (``label``: which copy the point solves)."""
    terms = quad_terms(problem, quad, rest)
    inner = sol.certificate
    upper, lower, gap = math.inf, -math.inf, None
    violation = inner.violation_bound
    by_id = {p.id: p for p in rel.params}
    extra = 0.0
    # the released point in the user's variables, once, for both evaluations (restored after)
    saved = {v.id: v.value for v in problem.variables()}
    try:
        for v in problem.variables():
            v.value = sol.primal[v.name()]
        if label != "tightened":
            violation = max(violation, _matrix_violation(problem, rel, quad, rest))
        for c, a, S in terms or ():
            x_a = np.asarray(a.value, dtype=float).ravel(order="F")
            up = np.asarray(rel.up[id(by_id[S.id])].value)
            mid = np.asarray(rel.mid[id(by_id[S.id])].value)
            extra += c * float(x_a @ (up - mid) @ x_a)
    finally:
        for v in problem.variables():
            v.value = saved[v.id]
    if terms is not None:
        upper = inner.objective_upper + extra
        if rel.n_constrained == 0 or label in _CONTAINING:
            # OPT_mid - OPT <= sup over the feasible set of f_mid - f_low: the same set, or
            # the copy's, which holds the true one on the event (S~ - r I <= S, or 0)
            private = quad | rest
            slack = rel.objective_shift(problem, terms, private)
            lower = inner.optimum_lower - slack
            # a copy certified by a theorem's gap alone (objective perturbation): the true
            # gap is the copy's plus the two shifts
            gap = inner.gap_bound + extra + slack
    return Certificate.from_bounds(
        objective_upper=upper, optimum_lower=lower, gap_bound=gap,
        violation_bound=violation,
        equality_violation_bound=inner.equality_violation_bound,
        probability=inner.probability - beta,
        how=inner.how + "; the quad_form matrices released at the model level, the objective "
            "bounded by Loewner monotonicity (docs/certificates.md)")


#: the copies whose feasible set holds the true model's on the event: ``S~ - r I <= S`` (or
#: ``0``) in every constraint, which DCP puts on the convex side
_CONTAINING = ("relaxed", "public part")


def _relaxed_violation(problem: cp.Problem, rel: Any, quad: set[int], rest: set[int]
                       ) -> float | None:
    """A bound, from the release and public data, on the TRUE violation at any point of the
    relaxed copy: each constraint holding a matrix is ``sum_k c_k quad_form(a_k, S_k) + g(x)
    <= 0`` with public ``c_k > 0`` and ``g``, it holds with ``L_k`` (``S~_k - r I`` or 0) at
    the point, and ``S_k <= U_k = Pi(S~_k + r I)`` on the event, so its true value is at most
    ``sum_k c_k lambda_max(U_k - L_k) B_k`` (``B_k >= ||a_k||^2`` over the public constraints).
    None when a constraint holding a matrix is of another shape or holds another private
    parameter (its violation cannot be bounded before the point exists)."""
    by_id = {p.id: p for p in rel.params}
    worst = 0.0
    for con in problem.constraints:
        ids = {p.id for p in con.parameters()}
        if not ids & quad:
            continue
        if ids & rest or not isinstance(con, Inequality):
            return None
        terms = expression_quad_terms(con.expr, 1.0, quad, rest)
        if not terms:
            return None
        total = 0.0
        for c, a, S in terms:
            key = id(by_id[S.id])
            gap = np.asarray(rel.up[key].value) - np.asarray(rel.low[key].value)
            total += c * max(float(np.linalg.eigvalsh(gap)[-1]), 0.0) * square_bound(
                problem, a, quad | rest)
        worst = max(worst, total)
    return worst


def _matrix_violation(problem: cp.Problem, rel: Any, quad: set[int], rest: set[int]) -> float:
    """The largest violation, at the variables' (released) values, of the constraints that
    hold a ``quad_form`` matrix, each evaluated with ``Pi(S~ + r I)`` (``>= S`` on the event,
    and DCP puts every ``quad_form`` of a constraint on its convex side, so this bounds the
    TRUE violation); ``inf`` when such a constraint also holds another private parameter
    (its value is private)."""
    worst = 0.0
    for c in problem.constraints:
        ids = {p.id for p in c.parameters()}
        if not ids & quad:
            continue
        if ids & rest:
            return math.inf
        worst = max(worst, float(np.max(np.abs(c.tree_copy(id_objects=rel.up).violation()))))
    return worst
