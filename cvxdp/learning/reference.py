"""``reference=True`` for a row-level model: the exact (NOT private) reference on the true data,
for the data owner, in the user's terms.

Solved on a copy of the model with the spec's X and y as constants, as the mechanisms solve
(CVXPY's parametrised compile of the user's model can need ``n d^2`` memory); a failure of the
reference is reported in ``metrics["reference_unavailable"]``, never raised: the budget is spent
and the private answer stands.
"""

from __future__ import annotations

import time
import warnings
from typing import Any

import cvxpy as cp
import numpy as np

from cvxdp.learning.detect import RowModel
from cvxdp.learning.domain import public_completion
from cvxdp.solution import ValidationReport
from cvxdp.specs import RowPrivacy

__all__ = ["validate_rows", "with_constant_data", "VIOLATION_TOLERANCE"]

#: a constraint counts as violated in the reference report above this (as on the general path)
VIOLATION_TOLERANCE = 1e-6


def validate_rows(problem: cp.Problem, model: RowModel, theta_hat: np.ndarray,
              solver: str | None) -> ValidationReport:
    """Exact (NOT private) reference on the true data, for the data owner.

    Solved on a copy of the model with the spec's X and y as constants, as the mechanism
    solves (CVXPY's parametrised compile of the user's model can need ``n d^2`` memory); a
    failure of that solve is reported in ``metrics["reference_unavailable"]``, never raised:
    the budget is spent and the private answer stands."""
    t0 = time.perf_counter()
    metrics: dict[str, Any] = {}
    ref = None
    try:
        exact = with_constant_data(problem, model.spec)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            exact.solve(solver=solver)
        if exact.status in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE):
            ref = exact.value
        else:
            metrics["reference_unavailable"] = (
                f"the exact reference solve ended with status {exact.status!r}")
    except (cp.error.SolverError, MemoryError, ValueError, ArithmeticError, RuntimeError) as err:
        # a solver's failure, memory, bad numbers: reported, the private answer stands
        metrics["reference_unavailable"] = (
            f"the exact reference solve failed ({type(err).__name__}: {str(err)[:200]})")
    ref_time = time.perf_counter() - t0
    public_completion(model, problem, theta_hat, solver)   # the released point back
    got = problem.objective.value
    metrics["private_objective_on_true_data"] = metrics["private_value"] = got
    gap = None if ref is None or got is None else model.sense * (float(got) - float(ref))
    if gap is not None:
        metrics["suboptimality"] = gap
        metrics["relative_gap"] = abs(float(got) - float(ref)) / max(1.0, abs(float(ref)))
    # the constraints are public; measured in the user's terms at the released point
    viol = [float(np.max(np.abs(c.violation()))) if np.size(c.violation()) else 0.0
            for c in problem.constraints]
    return ValidationReport(reference_value=ref, objective_gap=gap,
                            max_violation=max(viol, default=0.0),
                            mean_violation=float(np.mean(viol)) if viol else 0.0,
                            violated=int(sum(v > VIOLATION_TOLERANCE for v in viol)),
                            tolerance=VIOLATION_TOLERANCE, reference_time=ref_time,
                            reference_solver=solver or "cvxpy default", metrics=metrics)


def with_constant_data(problem: cp.Problem, spec: RowPrivacy) -> cp.Problem:
    """``problem`` with the spec's Parameters replaced by Constants of their values (same
    Variables, same function)."""
    values = {p.id: p.value for p in spec.params}

    def sub(e: Any) -> Any:
        if isinstance(e, cp.Parameter) and e.id in values:
            return cp.Constant(values[e.id])
        if not e.args:
            return e
        return e.copy([sub(a) for a in e.args])

    return cp.Problem(type(problem.objective)(sub(problem.objective.args[0])),
                      [sub(c) for c in problem.constraints])
