"""Recognising a user's least-squares model: its privacy spec (:class:`LeastSquaresPrivacy`) and
the match of ``cp.Minimize(cp.sum_squares(X @ beta - y))`` in a CVXPY problem
(:func:`match_least_squares`), from the model's public structure only.

:func:`cvxdp.estimation.regression.least_squares_from_model` builds the structured problem on
the matched data; ``LeastSquaresPrivacy`` stays importable from :mod:`cvxdp.estimation.regression`.

References
----------
Lu, Magdon-Ismail, Wei & Zikas (2024), "The Normal Distributions Indistinguishability Spectrum
and its Application to Privacy-Preserving Machine Learning", §3 (rows are people; neighbours add
or remove one row).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import cvxpy as cp
import numpy as np
from cvxpy.atoms.affine.add_expr import AddExpression
from cvxpy.atoms.affine.binary_operators import MulExpression
from cvxpy.atoms.affine.unary_operators import NegExpression
from cvxpy.atoms.quad_over_lin import quad_over_lin

from cvxdp.errors import PrivacySpecError, UnsupportedProblemError
from cvxdp.estimation.random_projection import check_bound
from cvxdp.estimation.regression_mechanisms import neighbouring
from cvxdp.transform.support import quoted

__all__ = ["LeastSquaresPrivacy", "match_least_squares"]


@dataclass(frozen=True, eq=False)
class LeastSquaresPrivacy:
    """Privacy spec of a user's ``cp.Minimize(cp.sum_squares(X @ beta - y))`` model.

    Rows (x_i, y_i) of the Parameters ``X`` and ``y`` belong to people; neighbours add or remove
    one row; ``row_bound`` is the public bound on ``||(x_i, y_i)||_2`` (rows above it are clipped).
    """

    X: cp.Parameter
    y: cp.Parameter
    row_bound: float

    def __post_init__(self) -> None:
        for name in ("X", "y"):
            if not isinstance(getattr(self, name), cp.Parameter):
                raise PrivacySpecError(f"LeastSquaresPrivacy.{name} must be a cvxpy.Parameter.")
        object.__setattr__(self, "row_bound", check_bound(self.row_bound))

    def describe(self) -> str:
        return neighbouring(self.row_bound)



def _match_residual(expr: Any) -> tuple[cp.Parameter, cp.Variable, cp.Parameter] | None:
    """(X, beta, y) if ``expr`` is ``X @ beta - y`` or ``y - X @ beta``."""
    if not isinstance(expr, AddExpression) or len(expr.args) != 2:
        return None
    a, b = expr.args
    for prod, neg in ((a, b), (b, a)):
        if isinstance(neg, NegExpression):
            inner, other = neg.args[0], prod
            for mul, y in ((other, inner), (inner, other)):
                if (isinstance(mul, MulExpression) and isinstance(y, cp.Parameter)
                        and isinstance(mul.args[0], cp.Parameter)
                        and isinstance(mul.args[1], cp.Variable)):
                    return mul.args[0], mul.args[1], y
    return None


def match_least_squares(problem: cp.Problem, private: Any
                        ) -> tuple[LeastSquaresPrivacy, cp.Parameter, cp.Variable, cp.Parameter]:
    """``(spec, X, beta, y)`` of a user's ``cp.Minimize(cp.sum_squares(X @ beta - y))`` model.

    Parameters
    ----------
    problem : cvxpy.Problem
        Objective exactly ``sum_squares(X @ beta - y)`` (or ``y - X @ beta``) with X, y
        Parameters (values set) and beta a vector Variable; constraints, if any, may involve only
        beta and public data.
    private : LeastSquaresPrivacy or a sequence holding one
        Names X and y and the public row bound.

    Raises
    ------
    UnsupportedProblemError
        The model is not of that form (message says what is expected).
    PrivacySpecError
        The spec does not name the model's X and y, or their values are missing.

    References
    ----------
    Lu, Magdon-Ismail, Wei & Zikas (2024), "The Normal Distributions Indistinguishability
    Spectrum and its Application to Privacy-Preserving Machine Learning", §3 (the problem).
    """
    specs = [private] if not isinstance(private, (list, tuple)) else list(private)
    specs = [s for s in specs if isinstance(s, LeastSquaresPrivacy)]
    if len(specs) != 1:
        raise PrivacySpecError(
            "a least-squares model needs private=cvxdp.LeastSquaresPrivacy(X, y, row_bound=l) "
            "(rows (x_i, y_i) are people; l is a public bound on their norm).")
    spec = specs[0]
    obj = problem.objective
    expr = obj.args[0]

    matched = None
    if isinstance(obj, cp.Minimize) and isinstance(expr, quad_over_lin):
        denom = expr.args[1]
        if isinstance(denom, cp.Constant) and np.allclose(denom.value, 1.0):
            matched = _match_residual(expr.args[0])
    if matched is None:
        raise UnsupportedProblemError(
            "only the objective cp.Minimize(cp.sum_squares(X @ beta - y)) with X, y "
            "cp.Parameters and beta a vector cp.Variable is recognised; build it that way or "
            "use cvxdp.least_squares(X, y, row_bound=...).")
    X, beta, y = matched
    for con in problem.constraints:
        if any(p is X or p is y for p in con.parameters()) or any(
                v is not beta for v in con.variables()):
            raise UnsupportedProblemError(
                f"constraint {quoted(con)} must involve only beta and public data (not X or "
                "y): the "
                "private data may appear in the objective only.")
    if X is not spec.X or y is not spec.y:
        raise PrivacySpecError("LeastSquaresPrivacy must name the model's own X and y Parameters.")
    if X.value is None or y.value is None:
        raise PrivacySpecError("set X.value and y.value before solving privately.")
    if beta.ndim != 1:
        raise UnsupportedProblemError("beta must be a vector Variable (shape (d,)).")
    return spec, X, beta, y
