"""End-to-end audits of the row-level learning path (``RowPrivacy``), one case per mechanism.

Each case calls ``problem.solve_private(private=cvxdp.RowPrivacy(...), mechanism=...)`` on a
one-coefficient logistic model (a ridge and the box ``|w| <= 2``; six rows) for D and for D'
with one row replaced by its mirror image -- the largest change of one row's gradient the
public bounds allow, where each mechanism's calibration is used in full -- and reads the
released coefficient and the released objective value (as its gap to the value D's true rows
give at the released point, :func:`cvxdp.audit.solver_cases._gap`).  The planted twin
(``<case>, true value``) recomputes ``value`` from the true rows inside the call.

References
----------
M. Jagielski, J. Ullman, A. Oprea, "Auditing Differentially Private Machine Learning: How Private
is Private SGD?", NeurIPS 2020.
"""

from __future__ import annotations

from typing import Any

import cvxpy as cp
import numpy as np

import cvxdp
from cvxdp.audit.planting import field_from_true_data
from cvxdp.audit.solver_cases import CONIC_RUNS, SolverCase, _gap, _pair, _value

__all__ = ["learning_cases", "LEARNING_MECHANISMS"]

LEARNING_MECHANISMS = ("objective", "output", "gradient")
_N = 6


def _case(mechanism: str, eps: float, delta: float) -> list[SolverCase]:
    X = cp.Parameter((_N, 1), name="X", value=np.ones((_N, 1)))
    y = cp.Parameter(_N, name="y", value=np.ones(_N))
    w = cp.Variable(1, name="w")
    prob = cp.Problem(cp.Minimize(cp.sum(cp.logistic(-cp.multiply(y, X @ w)))
                                  + 0.5 * cp.sum_squares(w)), [cp.abs(w) <= 2])
    spec = cvxdp.RowPrivacy(X, y, row_bound=1.0, label_bound=1.0)
    D = np.ones((_N, 1))
    Dn = D.copy()
    Dn[0] = -1.0                  # the mirror row: its gradient is the opposite one

    def objective(data: np.ndarray, coef: np.ndarray) -> float:
        p = data[:, 0] * float(coef[0])
        return float(np.sum(np.logaddexp(0.0, -p)) + 0.5 * float(coef[0]) ** 2)

    def solve(data: np.ndarray, rng: Any) -> Any:
        X.value = data
        return prob.solve_private(epsilon=eps, delta=delta, rng=rng, private=spec,
                                  mechanism=mechanism, steps=2, value_share=0.2)

    def features(sol: Any) -> np.ndarray:
        coef = sol.primal.get("w")
        if coef is None:
            return np.array([_value(None), _gap(None, 0.0)])
        coef = np.atleast_1d(np.asarray(coef, dtype=float))
        return np.array([coef[0], _gap(sol.value, objective(D, coef))])

    def plant(data: np.ndarray) -> Any:   # value := the true objective at the released point
        return field_from_true_data("cvxdp.learning.solve", "PrivateSolution", "value",
                                    lambda sol: objective(data, np.atleast_1d(
                                        np.asarray(sol.primal["w"], dtype=float))))

    return _pair(f"row-level {mechanism}", solve, features, D, Dn, eps, delta, plant,
                 runs=CONIC_RUNS)


def learning_cases(epsilon: float = 1.0, delta: float = 1e-5) -> list[SolverCase]:
    """The honest case and the planted twin of each row-level mechanism."""
    out: list[SolverCase] = []
    for mech in LEARNING_MECHANISMS:
        out += _case(mech, epsilon, delta)
    return out
