"""Perturbation for a private matrix inside ``quad_form(x, Sigma)``.

``cp.quad_form(w, Sigma)`` with ``Sigma = cp.Parameter((n, n), PSD=True)`` is how CVXPY users
write a covariance, but the model is not DPP in ``Sigma``: CVXPY factors the parameter's current
value while compiling, so the parameter never reaches the cone program's tensor and the
canonical-level mechanisms (:mod:`cvxdp.solvers.perturbation`, the MWU) cannot see it.  This
module releases such a parameter at the MODEL level instead:

1. **Release.**  ``Sigma~ = Sigma + Delta sigma_u Z`` with ``Z`` symmetric, its ``K = n (n+1)/2``
   distinct entries i.i.d. ``N(0, 1)`` (one draw per distinct entry, mirrored).  Neighbours move
   every distinct entry by at most the declared ``Delta``, so the scaled vector of distinct
   entries has l2 sensitivity ``sqrt(K)`` and ``sigma_u`` is the analytic Gaussian calibration
   for it (Balle & Wang 2018, Thm 8; ``sqrt(K) / sqrt(2 rho)`` for rho-zCDP) -- the same
   accounting as :func:`cvxdp.solvers.perturbation.noise_plan`.
2. **Post-processing** (no budget; Dwork & Roth 2014, Prop. 2.1).  A copy of the user's model
   with ``Sigma`` replaced by constants is solved exactly:

   * in the objective by ``Pi(Sigma~)`` (``Pi``: projection onto the PSD cone, so the copy is
     convex);
   * in a constraint by ``Pi(Sigma~ + r I)``, ``r = Delta sigma_u B_op``, ``B_op`` a bound on
     ``||Z||_op`` failing with probability ``exp(-t^2 / 2)``
     (:func:`cvxdp.solvers.perturbation.noise.symmetric_gaussian_op_bound`: the smaller of
     ``sqrt(2)`` times the chi-square quantile of ``||g||_2``, through ``||Z||_op <= ||Z||_F
     <= sqrt(2) ||g||_2``, and the spectral ``2 sqrt(n) + 2 sqrt(t^2 / 2 + ln 2)``; 16.5
     against 33.6 at ``n = 30``), so with probability ``>= 1 - beta``
     ``Sigma = Sigma~ - Delta sigma_u Z <= Sigma~ + r I <= Pi(Sigma~ + r I)``; DCP puts every
     ``quad_form`` of a constraint on its convex side, which only grows with the matrix, so the
     released point is feasible for the TRUE ``Sigma`` on that event.  With ``P`` private
     matrices, ``t = sqrt(2 ln(P / beta))`` (a union bound over their ``P`` tail events), so
     all hold together with probability ``>= 1 - beta``.
3. **Certificate** (post-processing).  A convex model is nondecreasing in each ``quad_form``
   matrix (Loewner order: DCP composes a convex ``quad_form`` only through nondecreasing
   arguments), so on the event the TRUE objective at the released point is at most the
   objective evaluated with ``Pi(Sigma~ + r I)``, and the TRUE optimum is at least the optimum of
   the copy with ``Sigma~ - r I`` where that is PSD (``0`` otherwise: still ``<= Sigma``) in
   objective and constraints (a superset of the true feasible set).  The violation of the
   released point is that of the tightened copy's constraints, evaluated exactly.
4. **An empty tightened copy** (the tightening ``r`` above a public limit, e.g. a risk cap at
   small epsilon) is not an infeasible model: the true one may be feasible, and the released
   matrices are public.  The constraints' matrices are replaced in turn by ``Pi(S~)`` (the
   released matrices), ``S~ - r I`` or 0 (the relaxed ones, whose copy contains the TRUE
   feasible set on the event) and 0 (the public part) until the copy has a point
   (:meth:`QuadformRelease.constraint_copies`); step 3's certificate holds for any point, so
   its violation bound (the constraints with ``Pi(S~ + r I)``, evaluated there) is what the
   status is decided by.  Only an empty public part is reported ``infeasible``.

Applies when every private parameter occurs only as the matrix of ``quad_form`` atoms; any
other occurrence goes through the canonical path (which then says what to rewrite).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import cvxpy as cp
import numpy as np
from cvxpy.atoms.quad_form import QuadForm

from cvxdp.citations import GAUSSIAN_MECHANISM, POST_PROCESSING
from cvxdp.privacy.accountant import PrivacyAccountant
from cvxdp.privacy.budgets import Budget
from cvxdp.privacy.mechanisms import gaussian_noise
from cvxdp.solution import Certificate, PrivateSolution
from cvxdp.solvers.perturbation.noise import symmetric_gaussian_op_bound
from cvxdp.solvers.quadform_bounds import quad_terms, square_bound
from cvxdp.status import status_of

__all__ = ["quadform_only_ids", "solve_quadform_perturbation",
           "release_quadform", "QuadformRelease", "QUADFORM_THEOREM", "FALLBACK_NOTE"]

QUADFORM_THEOREM = (
    f"input perturbation of quad_form matrices (Gaussian on the distinct entries: "
    f"{GAUSSIAN_MECHANISM}) + exact solve of the model with the released matrices "
    f"({POST_PROCESSING})")


def _walk(expr: Any, param_id: int, counts: dict[str, int], in_constraint: bool) -> None:
    if isinstance(expr, QuadForm) and getattr(expr.args[1], "id", None) == param_id:
        counts["quad_form"] += 1
        counts["in_constraint"] += int(in_constraint)
        _walk(expr.args[0], param_id, counts, in_constraint)
        return
    if getattr(expr, "id", None) == param_id and not getattr(expr, "args", None):
        counts["other"] += 1
        return
    for arg in getattr(expr, "args", []):
        _walk(arg, param_id, counts, in_constraint)


def _only_in_quad_form(problem: cp.Problem, p: Any) -> bool:
    """``p`` is square and occurs in the model only as a ``quad_form`` matrix (structure)."""
    if len(p.shape) != 2 or p.shape[0] != p.shape[1]:
        return False
    counts = {"quad_form": 0, "other": 0, "in_constraint": 0}
    _walk(problem.objective, p.id, counts, False)
    for con in problem.constraints:
        _walk(con, p.id, counts, True)
    return bool(counts["quad_form"]) and not counts["other"]


def quadform_only_ids(problem: cp.Problem, specs: tuple[Any, ...]) -> set[int]:
    """Ids of the private parameters that occur only as ``quad_form`` matrices (square) in a
    model that is not DPP in them (public structure); empty when there are none."""
    out = {p.id for spec in specs for p in getattr(spec, "params", ())
           if _only_in_quad_form(problem, p)}
    return out if out and not problem.is_dcp(dpp=True) else set()


def _psd_part(M: np.ndarray) -> np.ndarray:
    w, V = np.linalg.eigh((M + M.T) / 2)
    return (V * np.maximum(w, 0.0)) @ V.T


@dataclass(frozen=True)
class QuadformRelease:
    """One Gaussian release of the private ``quad_form`` matrices (module doc, steps 1-2):
    the substitutions by leaf ``id`` -- ``mid`` ``Pi(S~)`` (objective), ``up`` ``Pi(S~ + r I)``
    (constraints; ``>= S`` on the event), ``low`` ``S~ - r I`` or 0 (``<= S`` on the event) --
    the released matrices by name, the record, and the calibration."""

    params: list[Any]
    record: Any
    sigma: float
    K: int
    t: float
    n_constrained: int
    released: dict[str, np.ndarray]
    mid: dict[int, Any]
    up: dict[int, Any]
    low: dict[int, Any]
    gap: dict[int, float]  # lambda_max(Pi(S~) - S~ + r I) per matrix (by leaf id)

    def objective_shift(self, problem: cp.Problem, terms: list[tuple[float, Any, Any]],
                        private: set[int]) -> float:
        """``sum_k c_k lambda_max(Pi(S~) - S~ + r I) B_k`` over the objective's ``c * quad_form(a,
        S)`` terms (:func:`~cvxdp.solvers.quadform_bounds.quad_terms`): how far the optimum
        with ``Pi(S~)`` can lie above the true one when no matrix sits in a constraint, ``B_k``
        bounding ``||a_k||^2`` over the constraints without ``private`` data."""
        by_id = {p.id: p for p in self.params}
        return sum(c * self.gap[id(by_id[S.id])] * square_bound(problem, a, private)
                   for c, a, S in terms)

    def constraint_copies(self) -> list[tuple[str, dict[int, Any]]]:
        """The substitutions for the constraints' matrices, tried in turn while the copy with
        the one before is empty (module doc, step 4; post-processing of the release):
        ``"tightened"`` (``up``), ``"released"`` (``mid``), ``"relaxed"`` (``low``) and
        ``"public part"`` (0), skipping one equal to the one before."""
        if self.n_constrained == 0:
            return [("tightened", self.up)]
        zero = {k: cp.Constant(np.zeros(v.shape)) for k, v in self.up.items()}
        out: list[tuple[str, dict[int, Any]]] = []
        for label, sub in (("tightened", self.up), ("released", self.mid),
                           ("relaxed", self.low), ("public part", zero)):
            if out and all(np.array_equal(sub[k].value, out[-1][1][k].value) for k in sub):
                continue
            out.append((label, sub))
        return out


#: the note appended to the status reason when the point solves a copy other than the
#: tightened one (module doc, step 4)
FALLBACK_NOTE = {
    "released": "the copy with Pi(S~ + r I) in the constraints is empty, so the point solves "
                "the copy with the released matrices Pi(S~)",
    "relaxed": "the copies with Pi(S~ + r I) and Pi(S~) in the constraints are empty, so the "
               "point solves the relaxed copy (S~ - r I, or 0 where that is not PSD)",
    "public part": "every copy with the released matrices in the constraints is empty, so the "
                   "point solves the constraints without them (the public part)",
}


def release_quadform(problem: cp.Problem, specs: tuple[Any, ...], budget: Budget, beta: float,
                     rng: np.random.Generator) -> QuadformRelease:
    """Release the matrices of ``specs`` once (module doc, steps 1-2); every tail event holds
    together with probability ``>= 1 - beta``."""
    params = [p for s in specs for p in s.params]
    deltas = [float(s.sensitivity) for s in specs for _ in s.params]
    sizes = [p.shape[0] * (p.shape[0] + 1) // 2 for p in params]
    K = int(sum(sizes))
    sigma, rec = gaussian_noise(
        budget, sensitivity=math.sqrt(K), mechanism="input_gaussian",
        note="sigma per unit of declared per-entry sensitivity",
        refusal="a private quad_form matrix is released with Gaussian noise and needs delta > 0 "
                "(or rho=); pass epsilon= and delta=.")
    g = rng.standard_normal(K)
    # one tail event per private matrix: union bound over them, so the released point is
    # feasible for every constraint and the certificate's bounds hold, together, with
    # probability >= 1 - beta
    in_constraints = {p.id for c in problem.constraints for p in c.parameters()}
    n_constrained = sum(1 for p in params if p.id in in_constraints)
    t = math.sqrt(2 * math.log(len(params) / beta))
    mid, up, low, released, gap = {}, {}, {}, {}, {}
    at = 0
    for p, d, k in zip(params, deltas, sizes, strict=True):
        n = p.shape[0]
        i, j = np.triu_indices(n)
        Z = np.zeros((n, n))
        Z[i, j] = g[at:at + k]
        Z[j, i] = g[at:at + k]
        at += k
        S = (np.asarray(p.value, dtype=float) + np.asarray(p.value, dtype=float).T) / 2
        S_t = S + d * sigma * Z
        r = d * sigma * symmetric_gaussian_op_bound(n, t * t / 2.0)
        released[p.name()] = S_t
        S_mid = _psd_part(S_t)
        mid[id(p)] = cp.Constant(S_mid)
        # Pi(S~ + r I) >= S and S~ - r I <= S on the event (or 0 where that is not PSD): the
        # tightened copy and the certificate's two bounds (module doc)
        up[id(p)] = cp.Constant(_psd_part(S_t + r * np.eye(n)))
        S_low = S_t - r * np.eye(n)
        # S~ - r I <= S on the event, PSD or not: the shift between the objective's matrix
        # and the truth is at most lambda_max(Pi(S~) - S~ + r I) (the noise's size); only the
        # lower model, which must stay convex, falls back to 0 where S~ - r I is not PSD
        gap[id(p)] = max(float(np.linalg.eigvalsh(S_mid - S_low)[-1]), 0.0)
        if np.linalg.eigvalsh(S_low)[0] < 0:
            S_low = np.zeros((n, n))
        low[id(p)] = cp.Constant(S_low)
    return QuadformRelease(params, rec, float(sigma), K, t, n_constrained, released, mid, up,
                           low, gap)


def solve_quadform_perturbation(problem: cp.Problem, specs: tuple[Any, ...], budget: Budget, *,
                                beta: float, rng: np.random.Generator, reference: bool,
                                solver: str | None = None, accuracy: float | None = None
                                ) -> PrivateSolution:
    """Release each private ``quad_form`` matrix once and solve the model exactly (module doc).

    Returns
    -------
    PrivateSolution
        ``optimal_inaccurate`` with ``info["guarantee"]`` (feasible for the TRUE data: surely
        when the matrices occur only in the objective, with probability ``>= 1 - beta``
        otherwise; the sub-optimality is not bounded by a theorem here), or the exact solver's
        status with no point when the released model has none (public: post-processing).
    """
    t0 = time.perf_counter()
    rel = release_quadform(problem, specs, budget, beta, rng)
    acct = PrivacyAccountant(budget)
    acct.spend(rel.record)
    params, n_constrained, released = rel.params, rel.n_constrained, rel.released
    objective_sub, constraint_sub, lower_sub = rel.mid, rel.up, rel.low
    sigma, K, t = rel.sigma, rel.K, rel.t
    obj = problem.objective.tree_copy(id_objects=objective_sub)
    kw = {"solver": solver} if solver else {}
    for label, sub in rel.constraint_copies():  # noqa: B007 (step 4; used after the loop)
        copy = cp.Problem(obj, [c.tree_copy(id_objects=sub) for c in problem.constraints])
        try:
            copy.solve(**kw)
        except cp.error.SolverError:
            copy.solve(solver=cp.SCS)
        if copy.status in cp.settings.SOLUTION_PRESENT:
            break
    in_cons = n_constrained > 0
    info: dict[str, Any] = {
        "method": "perturbation", "mechanism": "perturbation", "noise": "gaussian",
        "quad_form_parameters": [p.name() for p in params], "noisy_parameters": released,
        "beta": beta if in_cons else None, "robust_status": copy.status,
        "quad_form_constraints": label,
        "guarantee": ("the released point is feasible for the TRUE data with probability >= "
                      f"1 - beta = {1 - beta:g}" if in_cons and label == "tightened" else
                      "the released point solves a copy with looser matrices: its violation of "
                      "the TRUE constraints is the certificate's" if in_cons else
                      "the constraints are public: the released point is feasible") +
                     "; its objective's sub-optimality is not bounded",
    }
    details = {"mechanism": "perturbation (quad_form matrices)", "sigma_unit": sigma,
               "private_entries": K, "l2_sensitivity_scaled": math.sqrt(K),
               "tail": t, "matrices_in_constraints": n_constrained}
    neighbouring = "; ".join(s.describe() for s in specs)
    report = acct.report(theorem=QUADFORM_THEOREM, neighbouring=neighbouring, details=details)
    if copy.status in cp.settings.SOLUTION_PRESENT:
        value = float(copy.value)  # the objective with the released matrices: public
        cert = _certificate(problem, constraint_sub, lower_sub, beta, kw,
                            lambda: _mid_lower(problem, rel, float(copy.value)))
        status, reason = status_of(cert, accuracy)
        if label in FALLBACK_NOTE:
            reason = f"{reason}; {FALLBACK_NOTE[label]}" if reason else FALLBACK_NOTE[label]
        primal = {v.name(): np.asarray(v.value) for v in problem.variables()}
    elif (label == "public part" or not in_cons) and copy.status in (
            cp.INFEASIBLE, cp.INFEASIBLE_INACCURATE):
        cert, primal = None, {v.name(): None for v in problem.variables()}
        status = cp.INFEASIBLE
        value = -np.inf if isinstance(problem.objective, cp.Maximize) else np.inf
        reason = ("the constraints that carry no private data are infeasible (an exact solve "
                  "of public data only, after the matrices' release: the budget was spent)")
    else:
        cert, primal, value = None, {v.name(): None for v in problem.variables()}, None
        status = cp.SOLVER_ERROR
        reason = (f"the model with the released matrices is {copy.status} (post-processing "
                  "of the noisy release; the budget was spent)")
    if reason:
        info["status_reason"] = reason
    # reference=True: the entry point compares the released point in the user's terms
    return PrivateSolution(status=status, value=value, privacy=report, validation=None,
                           iterations=None, solve_time=time.perf_counter() - t0,
                           primal=primal, info=info, certificate=cert,
                           status_reason=reason)


def _mid_lower(problem: cp.Problem, rel: QuadformRelease, value: float) -> float:
    """``OPT >= OPT_mid - sum_k c_k lambda_max(Pi(S~) - S~ + r I) B_k`` (minimised sense), the
    lower bound of :mod:`cvxdp.solvers.quadform_bounds` from the copy's optimum ``value`` (the
    model with ``Pi(S~)``), when no matrix sits in a constraint and every objective term that
    holds one is ``c * quad_form(a, S)``; ``-inf`` otherwise.  ``S~ - r I <= S`` on the event
    whether or not it is PSD, so a nearly singular ``S`` keeps a bound of the noise's size
    where the lower model must fall back to ``0``."""
    ids = {p.id for p in rel.params}
    terms = quad_terms(problem, ids, set()) if rel.n_constrained == 0 else None
    if not terms:
        return -math.inf
    sign = -1.0 if isinstance(problem.objective, cp.Maximize) else 1.0
    return sign * _below_solver(value) - rel.objective_shift(problem, terms, ids)


def _below_solver(value: float) -> float:
    """``value`` less the solver's stopping rule (relative gap ~1e-8): a 1e-7 (1 + |p|)
    margin, on the side the lower bound needs (``value`` in the minimised sense)."""
    return value - 1e-7 * (1.0 + abs(value))


def _certificate(problem: cp.Problem, upper_sub: dict[int, Any], lower_sub: dict[int, Any],
                 beta: float, kw: dict[str, Any], mid_lower: Any = None) -> Certificate:
    """The certificate of the released point (module doc, step 3): the model with the upper
    matrices at the point, the optimum of the model with the lower ones (or ``mid_lower()``,
    :func:`_mid_lower`, when larger; it solves on the user's variables, whose released values
    are restored)."""
    sign = -1.0 if isinstance(problem.objective, cp.Maximize) else 1.0
    upper = sign * float(problem.objective.tree_copy(id_objects=upper_sub).value)
    viol = max([float(np.max(np.abs(c.tree_copy(id_objects=upper_sub).violation())))
                for c in problem.constraints] + [0.0])
    released = {v.id: v.value for v in problem.variables()}
    loose = cp.Problem(problem.objective.tree_copy(id_objects=lower_sub),
                       [c.tree_copy(id_objects=lower_sub) for c in problem.constraints])
    try:
        try:
            loose.solve(**kw)
        except cp.error.SolverError:
            loose.solve(solver=cp.SCS)
        mid = mid_lower() if mid_lower is not None else -math.inf
    finally:
        for v in problem.variables():
            v.save_value(released[v.id])
    lower = -math.inf
    if loose.status == cp.OPTIMAL:
        lower = _below_solver(sign * float(loose.value))
    return Certificate.from_bounds(
        objective_upper=upper, optimum_lower=max(lower, mid), violation_bound=viol,
        equality_violation_bound=None, probability=1.0 - beta,
        how=("quad_form perturbation: the model with Pi(S~ + r I) at the released point and "
             "the optimum with S~ - r I (docs/certificates.md)"))
