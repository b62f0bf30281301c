"""Exact (non-private) reference solve of a cone program, and the validation report.

Everything here reads the TRUE data: it is for the analyst who owns the data, to judge a private
answer, and must never feed a released quantity.
"""

from __future__ import annotations

import time
import warnings
from typing import Any

import cvxpy as cp
import numpy as np

from cvxdp.errors import CvxdpError
from cvxdp.solution import ValidationReport
from cvxdp.transform.canon import extended_value, to_scp
from cvxdp.transform.exact import ExactSolution, solve_exact
from cvxdp.transform.scp import SymmetricConeProgram
from cvxdp.transform.support import non_finite_parameters

__all__ = ["cone_violations", "exp_cone_violations", "proven_point", "validate",
           "validate_user_terms"]


#: an ``optimal_inaccurate`` point is released only when it meets every row of its program to
#: this tolerance (relative to ``1 + max |b|``): Clarabel's own feasibility tolerance
POINT_TOLERANCE = 1e-8


def proven_point(prog: SymmetricConeProgram, sol: Any) -> np.ndarray | None:
    """The solver's point when it is one to release, else None.

    ``optimal``: the solver proved it.  ``optimal_inaccurate`` (SCS after a Clarabel solver
    error, typically): only when it meets every row of ``prog`` to :data:`POINT_TOLERANCE`
    -- the certificates read the objective from its epigraph rows and assume the counterpart's
    rows hold, so a point outside them (a FIR filter with ``|h| ~ 2e3`` against an optimum of
    0.0026) would be certified below its true gap.  Post-processing of the program's (noisy or
    public) data only.
    """
    if sol.x is None or sol.status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE):
        return None
    x = np.asarray(sol.x, dtype=float)
    if sol.status == cp.OPTIMAL:
        return x
    worst = float(cone_violations(prog, x).max(initial=0.0))
    scale = 1.0 + float(np.abs(prog.b).max(initial=0.0))
    return x if worst <= POINT_TOLERANCE * scale else None


def cone_violations(scp: SymmetricConeProgram, x: np.ndarray) -> np.ndarray:
    """Violation of each canonical constraint at ``x`` on the true data (>= 0).

    With ``s = b - A x``: equality rows ``|s_i|``; orthant rows ``max(0, -s_i)``; each SOC block
    ``max(0, ||s_bar|| - s_0)``; each PSD block ``max(0, -lambda_min(smat s))``; each public
    exponential cone of ``scp.exp_tail`` (:func:`exp_cone_violations`).

    Returns
    -------
    ndarray, shape (zero + nonneg + len(soc) + len(psd) + exponential cones,)
    """
    d = scp.dims
    s = scp.b - scp.A @ np.asarray(x, dtype=float).ravel()
    parts = [np.abs(s[:d.zero]), np.maximum(0.0, -s[d.zero:d.zero + d.nonneg])]
    start = d.zero + d.nonneg
    if d.soc:
        q = np.asarray(d.soc)
        starts = start + np.concatenate([[0], np.cumsum(q)[:-1]])
        block = s[start:start + q.sum()]
        sq = np.add.reduceat(block**2, starts - start)
        head = s[starts]
        parts.append(np.maximum(0.0, np.sqrt(np.maximum(sq - head**2, 0.0)) - head))
        start += int(q.sum())
    if d.psd:
        r_arr = np.asarray(d.psd)
        sizes = r_arr * (r_arr + 1) // 2
        starts = start + np.concatenate([[0], np.cumsum(sizes)[:-1]])
        out = np.empty(len(r_arr))
        for r in np.unique(r_arr):  # batch all blocks of one order into one eigvalsh call
            which = np.flatnonzero(r_arr == r)
            size = r * (r + 1) // 2
            vecs = s[starts[which][:, None] + np.arange(size)]
            out[which] = np.maximum(0.0, -np.linalg.eigvalsh(_smat(vecs, int(r)))[:, 0])
        parts.append(out)
    if scp.exp_tail is not None:
        tail = scp.exp_tail
        parts.append(exp_cone_violations(tail.b - tail.rows(scp.n) @ np.asarray(x, dtype=float)
                                         .ravel()))
    return np.concatenate(parts)


def exp_cone_violations(s: np.ndarray) -> np.ndarray:
    """Violation of each triple ``(u, v, w)`` of ``s`` for the exponential cone ``cl{v > 0,
    v exp(u / v) <= w}``: ``max(0, v exp(u / v) - w)`` for ``v > 0`` (an overflow counts as
    inf), and for ``v <= 0`` the distance to the cone's face ``{u <= 0, v = 0, w >= 0}`` in the
    largest coordinate, ``max(-v, u, -w, 0)``."""
    u, v, w = (np.asarray(s, dtype=float).reshape(-1, 3).T if s.size else (np.zeros(0),) * 3)
    out = np.maximum.reduce([-v, u, -w, np.zeros_like(v)])
    pos = v > 0
    with np.errstate(over="ignore"):
        out[pos] = np.maximum(0.0, v[pos] * np.exp(u[pos] / v[pos]) - w[pos])
    return out


def _smat(vecs: np.ndarray, r: int) -> np.ndarray:
    """Batch of SCS svec (lower triangle, column-major, off-diagonal * sqrt 2) -> matrices."""
    rows, cols = np.triu_indices(r)  # (col, row) of the lower triangle in column-major order
    cols, rows = rows, cols
    order = np.lexsort((rows, cols))
    rows, cols = rows[order], cols[order]
    scale = np.where(rows == cols, 1.0, 1.0 / np.sqrt(2.0))
    mats = np.zeros((vecs.shape[0], r, r))
    mats[:, rows, cols] = vecs * scale
    mats[:, cols, rows] = vecs * scale
    return mats


def validate(
    problem_or_scp: cp.Problem | SymmetricConeProgram,
    x_private: np.ndarray,
    *,
    tolerance: float = 1e-6,
    reference: ExactSolution | None = None,
    solver: str | None = None,
    metrics: dict[str, Any] | None = None,
) -> ValidationReport:
    """Compare a private cone-program point with the exact solve, on the TRUE data.

    Parameters
    ----------
    problem_or_scp : cvxpy.Problem or SymmetricConeProgram
        A problem is compiled with :func:`cvxdp.transform.to_scp` first.
    x_private : ndarray, shape (scp.n,)
        The private answer in cone-program coordinates.
    tolerance : float
        A canonical constraint counts as violated when its violation exceeds this.
    reference : ExactSolution, optional
        A reference already computed (otherwise :func:`solve_exact` runs).
    solver : str, optional
        Reference solver (see :func:`solve_exact`).
    metrics : dict, optional
        Extra path-specific numbers to include.

    Returns
    -------
    ValidationReport
        ``reference_value`` and ``objective_gap = private value - reference value`` in the
        user's sense (``sign * (c'x + offset)``); ``max_violation``, ``mean_violation`` and
        ``violated`` over the canonical constraints (equality rows, orthant rows, one per SOC /
        PSD block; see :func:`cone_violations`).  Metrics: ``private_value``,
        ``suboptimality`` (gap made positive-is-worse for max and min), ``relative_gap``,
        ``constraints`` (the count), ``reference_status``.
    """
    scp = problem_or_scp if isinstance(problem_or_scp, SymmetricConeProgram) else to_scp(
        problem_or_scp)
    x = np.asarray(x_private, dtype=float).ravel()
    if x.shape != (scp.n,):
        raise ValueError(f"x_private must have shape ({scp.n},), got {x.shape}.")
    ref = reference if reference is not None else solve_exact(scp, solver=solver,
                                                              memo=_reference_memo(scp))
    viol = cone_violations(scp, x)
    private_value = scp.sign * float(scp.c @ x + scp.offset)
    extra: dict[str, Any] = {"private_value": private_value, "constraints": int(viol.size),
                             "reference_status": ref.status}
    ref_value = gap = None
    if ref.value is not None and np.isfinite(ref.value):
        ref_value = scp.sign * ref.value
        gap = private_value - ref_value
        extra["suboptimality"] = scp.sign * gap
        extra["relative_gap"] = abs(gap) / max(1.0, abs(ref_value))
    extra.update(metrics or {})
    return ValidationReport(
        reference_value=ref_value,
        objective_gap=gap,
        max_violation=float(viol.max(initial=0.0)),
        mean_violation=float(viol.mean()) if viol.size else 0.0,
        violated=int(np.sum(viol > tolerance)),
        tolerance=tolerance,
        reference_time=ref.solve_time,
        reference_solver=ref.solver,
        metrics=extra,
    )


def validate_user_terms(problem: cp.Problem, canonical: ValidationReport | None = None, *,
                        tolerance: float = 1e-6, solver: str | None = None
                        ) -> ValidationReport:
    """Compare the released point with ``problem.solve()``, in the user's own terms (NOT
    private: only for ``reference=True``).

    The user's objective and constraints -- their CVXPY expressions, with the TRUE parameter
    values -- are evaluated at the values the user's variables hold (the released point); the
    reference is ``cvxpy.Problem(objective, constraints).solve()`` on the same model.  The
    variables keep the released values and no dual value is left behind.

    Parameters
    ----------
    problem : cvxpy.Problem
        The user's model, its variables holding the released point.
    canonical : ValidationReport, optional
        A path's own comparison: its ``metrics`` are kept as they are, its comparison fields
        (``reference_value``, ``objective_gap``, ``max_violation``, ...) under a ``canonical_``
        prefix.
    tolerance : float
        A constraint counts as violated when its largest violation exceeds this.
    solver : str, optional
        The reference solver (Clarabel when None and installed, else CVXPY's default).

    Returns
    -------
    ValidationReport
        ``reference_value`` (the exact optimum), ``objective_gap`` (the user's objective at the
        released point minus it, positive = worse in the user's sense), ``max_violation`` /
        ``mean_violation`` / ``violated`` over the user's constraints, ``metrics["private_value"]``
        (the user's objective at the released point on the true data) and
        ``metrics["reference_status"]`` (the reference solve's CVXPY status: ``optimal`` unless
        no solver proved the optimum; a path's own is ``canonical_reference_status``) and,
        when the reference solves warned (CVXPY's "Solution may be inaccurate"),
        ``metrics["reference_warnings"]`` (their distinct texts; nothing is printed).
    """
    metrics: dict[str, Any] = {}
    if canonical is not None:
        # the path's own numbers keep their names; its comparison fields, which the user's
        # terms now fill, stay readable under a canonical_ prefix
        metrics.update(canonical.metrics)
        metrics.update({f"canonical_{k}": getattr(canonical, k) for k in (
            "reference_value", "objective_gap", "max_violation", "mean_violation", "violated")})
        # the comparison metrics are recomputed below in the user's terms
        for k in ("suboptimality", "relative_gap", "private_value", "reference_status"):
            if k in metrics:
                metrics[f"canonical_{k}"] = metrics.pop(k)
    released = {v.id: v.value for v in problem.variables()}
    if any(v is None for v in released.values()):
        return ValidationReport(metrics=metrics, tolerance=tolerance)
    # the user's objective on the true data, +-inf outside its domain (CVXPY's extended value)
    f_private = extended_value(problem.objective.expr, isinstance(problem.objective,
                                                                   cp.Maximize))
    f_private = np.nan if f_private is None else f_private
    viol = [float(np.max(np.abs(c.violation()))) if np.size(c.violation()) else 0.0
            for c in problem.constraints]
    t0 = time.perf_counter()
    nonfinite = non_finite_parameters(problem)
    if nonfinite:
        # reference=True reads the true data (not private, as asked); an exact solve needs
        # finite data, and the private answer (its budget spent) is kept
        metrics["reference_unavailable"] = (
            f"the exact reference needs finite data; parameter(s) {', '.join(nonfinite)} "
            "contain NaN or inf (the private solve mapped them into the public domain)")
        f_star, ref_solver, ref_status = None, None, None
    else:
        # not private (reference=True reads the true data), but not the user's own solve
        # either: CVXPY's warnings from it ("Solution may be inaccurate") are recorded here
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            f_star, ref_solver, ref_status = _reference_optimum(problem, solver, released)
        if caught:
            metrics["reference_warnings"] = list(dict.fromkeys(str(w.message) for w in caught))
    elapsed = time.perf_counter() - t0
    sign = -1.0 if isinstance(problem.objective, cp.Maximize) else 1.0
    metrics["private_value"] = f_private
    metrics["reference_status"] = ref_status
    if f_star is not None and np.isfinite(f_star):
        metrics["suboptimality"] = sign * (f_private - f_star)
        metrics["relative_gap"] = abs(f_private - f_star) / max(1.0, abs(f_star))
    return ValidationReport(
        reference_value=f_star,
        objective_gap=None if f_star is None else sign * (f_private - f_star),
        max_violation=max(viol, default=0.0),
        mean_violation=float(np.mean(viol)) if viol else 0.0,
        violated=int(sum(v > tolerance for v in viol)), tolerance=tolerance,
        reference_time=elapsed, reference_solver=ref_solver, metrics=metrics)


def _reference_optimum(problem: cp.Problem, solver: str | None, released: dict[int, Any]
                       ) -> tuple[float | None, str | None, str | None]:
    """The exact optimum of ``problem`` (user's sense), the solver's name and its status.

    The cone program the private solve compiled is reused when it is the same (same values:
    :func:`cvxdp.transform.to_scp` keeps it on the problem) and solved by Clarabel or SCS
    directly; another solver, or a model outside the cone program's reach, is solved by
    CVXPY on a copy of the problem.  Only a proved answer (``optimal``, ``infeasible``,
    ``unbounded``) of the cone program is taken: its ``sum_squares`` rows are rotated cones
    ``||(1 - t, 2 r)|| <= 1 + t`` whose head and tail nearly cancel when ``t`` is large, and
    Clarabel can stop ``AlmostSolved`` there (a least squares on 2000 observations: 1.8e-5
    relative above the optimum).  Then CVXPY solves a copy (Clarabel and OSQP read a
    ``sum_squares`` objective as a quadratic form: no such cone), and SCS (``eps 1e-9``) the
    cone program last; an inaccurate value is returned only when none of them proves one.
    """
    name = (str(solver).upper() if solver else
            cp.CLARABEL if cp.CLARABEL in cp.installed_solvers() else None)
    proved = (cp.OPTIMAL, cp.INFEASIBLE, cp.UNBOUNDED)
    fallback: tuple[float | None, str | None, str | None] | None = None
    scp = None
    if name in ("CLARABEL", "SCS"):
        try:
            scp = to_scp(problem)
        except CvxdpError:
            scp = None
        if scp is not None:
            found = _cone_program_optimum(scp, name)
            if found[2] in proved:
                return found
            if found[0] is not None:
                fallback = found
    found = _cvxpy_optimum(problem, name, released)
    if found[2] in proved:
        return found
    if scp is not None and name != "SCS":
        last = _cone_program_optimum(scp, "SCS")
        if last[2] in proved:
            return last
    if fallback is None and found[0] is not None:
        fallback = found
    return fallback if fallback is not None else found


def _reference_memo(scp: SymmetricConeProgram) -> dict[bytes, Any]:
    """The memo of the program's reference solves (:func:`solve_exact`'s ``memo``): the
    canonical comparison (:func:`validate`) and the user's terms (:func:`validate_user_terms`)
    solve the same compiled program, once.  Kept in ``meta``, which copies of the program
    share: the memo's keys are digests of the data solved."""
    return scp.meta.setdefault("_reference_solves", {})


def _cone_program_optimum(scp: SymmetricConeProgram, solver: str
                          ) -> tuple[float | None, str | None, str | None]:
    ref = solve_exact(scp, solver=solver, memo=_reference_memo(scp))
    value = None if ref.value is None else scp.sign * float(ref.value)
    return value, ref.solver, ref.status


def _cvxpy_optimum(problem: cp.Problem, name: str | None, released: dict[int, Any]
                   ) -> tuple[float | None, str | None, str | None]:
    ref = cp.Problem(problem.objective, problem.constraints)
    try:
        # Clarabel (interior point) unless asked otherwise: CVXPY's default for SDPs is SCS,
        # whose 1e-5 accuracy can exceed the gaps being validated
        try:
            ref.solve(**({"solver": name} if name else {}))
        except cp.error.SolverError:
            ref.solve()
    except cp.error.SolverError:
        return None, None, cp.SOLVER_ERROR
    finally:
        for var in problem.variables():  # the released point stays on the user's variables
            var.save_value(released[var.id])
        for con in problem.constraints:
            for dual in con.dual_variables:
                dual.save_value(None)
    f_star = None if ref.value is None else float(ref.value)
    return f_star, (str(ref.solver_stats.solver_name) if ref.solver_stats is not None
                    else None), ref.status
