"""Private learning models written in CVXPY: one person is one row (``cvxdp.RowPrivacy``).

A model whose objective is a sum (or mean) over the rows of ``X`` of a convex loss of
``X @ w`` (and the labels ``y``), plus a public regulariser and public constraints on ``w``, is
recognised from its expression tree (:mod:`cvxdp.learning.detect`) and solved by objective
perturbation, output perturbation or noisy proximal gradient descent (``docs/learning.md``).
"""

from cvxdp.learning.detect import RowModel, detect
from cvxdp.learning.solve import MECHANISMS, explain_rows, row_spec, solve_rows

__all__ = ["MECHANISMS", "RowModel", "detect", "explain_rows", "row_spec", "solve_rows"]
