"""What values a model is compiled and solved with: public placeholders or clipped data.

Two rules of the privacy boundary, each a context manager over a model's parameters:

* :func:`structural_values` -- deciding whether a model is supported (``cvxdp.explain``,
  ``cvxdp.is_supported``) must depend on its structure only (shapes, attributes, DPP, cone
  types), never on a private value.  CVXPY reads values while compiling (``quad_form`` factors
  its matrix and refuses an indefinite one), so the parameters are given public placeholder
  values that satisfy their attributes while the model is compiled.
* :func:`clipped_values` -- private data is solved inside a public finite domain
  ``[-PRIVATE_VALUE_BOUND, PRIVATE_VALUE_BOUND]``: an entry outside it is clipped (a
  1-Lipschitz map, so a declared per-entry sensitivity still holds), never refused.  Without it
  finite data near ``1e308`` overflow in the compiled program and end in an error that a
  neighbour within the declared sensitivity does not raise -- a refusal that depends on the
  private value.  The bound is a public constant: the squares and row sums the solvers take of
  entries of this size stay finite in float64.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

import cvxpy as cp
import numpy as np
import scipy.sparse as sp
from cvxpy.atoms.atom import Atom
from cvxpy.expressions.expression import Expression

__all__ = ["PRIVATE_VALUE_BOUND", "objective_range", "structural_values", "clipped_values",
           "placeholder_value", "with_public_values"]

#: public bound on the magnitude of a private entry (entries beyond it are clipped)
PRIVATE_VALUE_BOUND = 1e100


def placeholder_value(param: cp.Parameter) -> Any:
    """A public value of ``param``'s shape that satisfies its attributes.

    The identity for a square matrix (symmetric, PSD, diagonal), ones otherwise; negated for
    ``nonpos`` / ``neg`` / ``NSD``; projected onto the attribute set by CVXPY itself.
    """
    shape = param.shape
    square = len(shape) == 2 and shape[0] == shape[1]
    base = np.eye(shape[0]) if square else np.ones(shape)
    attrs = param.attributes
    if attrs.get("nonpos") or attrs.get("neg") or attrs.get("NSD"):
        base = -base
    if attrs.get("diag"):
        return sp.diags_array(np.diag(base)).tocsc() if square else base
    return param.project(base)


@contextmanager
def structural_values(params: Iterable[cp.Parameter]) -> Iterator[None]:
    """Give ``params`` public placeholder values for the duration of the block (module doc);
    the values (None included) are restored afterwards, whatever happens inside."""
    saved = [(p, p.value) for p in params]
    try:
        for p, _ in saved:
            p.value = placeholder_value(p)
        yield
    finally:
        for p, value in saved:
            p.save_value(value)


@contextmanager
def clipped_values(params: Iterable[cp.Parameter],
                   bound: float = PRIVATE_VALUE_BOUND) -> Iterator[None]:
    """Clip each entry of ``params``' values into ``[-bound, bound]`` for the duration of the
    block (module doc).  A value already inside is left as it is (the same array object), so
    a solve on ordinary data reads exactly what it read before; values are restored after."""
    saved = [(p, p.value) for p in params]
    try:
        for p, value in saved:
            if value is None:
                continue
            arr = value.toarray() if sp.issparse(value) else np.asarray(value)
            # inf goes to the bound and NaN to 0, a value fixed in advance: a non-finite
            # private entry is mapped like a huge one, never refused (a refusal would leak)
            if arr.dtype.kind in "fiu" and not np.all(np.abs(arr) <= bound):
                p.save_value(np.clip(np.nan_to_num(arr, nan=0.0, posinf=bound, neginf=-bound),
                                     -bound, bound))
        yield
    finally:
        for p, value in saved:
            p.save_value(value)


def objective_range(problem: cp.Problem) -> tuple[float, float]:
    """A range ``[lower, upper]`` of ``problem``'s minimised objective (``-f`` for a
    ``Maximize``) over its whole domain, from CVXPY's sign analysis of the expression.

    The sign analysis reads the model's structure, its constants and the parameters' declared
    attributes (``nonneg=True``, ``PSD=True``, ...), never a parameter's value, and CVXPY checks
    every value against its attributes: the range holds for any data the model accepts, hence
    for the true data.  ``(0, inf)`` for a nonnegative minimised objective, ``(-inf, 0)`` for a
    nonpositive one, ``(-inf, inf)`` otherwise.
    """
    expr = problem.objective.expr
    maximise = isinstance(problem.objective, cp.Maximize)
    nonneg, nonpos = (expr.is_nonpos(), expr.is_nonneg()) if maximise else (
        expr.is_nonneg(), expr.is_nonpos())
    return (0.0 if nonneg else -np.inf), (0.0 if nonpos else np.inf)


def with_public_values(problem: cp.Problem, public: Iterable[cp.Parameter]) -> cp.Problem:
    """``problem`` with each declared-public parameter replaced by a constant of its value.

    The variables are shared with ``problem``; the private parameters stay parameters.  A
    public parameter that multiplies a private term (``gamma * cp.sum_squares(F.T @ w)``) makes
    the model non-DPP; with its value fixed the model is DPP in the private ones.  Returns
    ``problem`` itself when nothing is public.
    """
    sub = {id(p): cp.Constant(p.value) for p in public}
    if not sub:
        return problem
    ids = {p.id for p in public}
    return cp.Problem(_constant_data(problem.objective.tree_copy(id_objects=sub), ids),
                      [_constant_data(c.tree_copy(id_objects=sub), ids)
                       for c in problem.constraints])


def _constant_data(expr: Any, public_ids: set[int]) -> Any:
    """``expr`` (a tree copy) with every public parameter in an atom's *data* fixed too.

    Some atoms keep an expression outside their arguments (``cp.huber(x, M)`` keeps ``M`` as
    data), which ``tree_copy`` passes through unchanged; such data whose parameters are all
    declared public are replaced by a constant of their value and the atom rebuilt, as CVXPY's
    ``Atom.copy`` does (``type(atom)(*(args + data))``)."""
    args = [_constant_data(a, public_ids) for a in expr.args]
    data = expr.get_data() if isinstance(expr, Atom) else None
    fixed = None
    if data:
        fixed = [cp.Constant(d.value) if isinstance(d, Expression) and d.parameters()
                 and {p.id for p in d.parameters()} <= public_ids else d for d in data]
        if all(f is d for f, d in zip(fixed, data, strict=True)):
            fixed = None
    if fixed is not None:
        return type(expr)(*(args + fixed))
    if any(a is not b for a, b in zip(args, expr.args, strict=True)):
        return expr.copy(args)
    return expr
