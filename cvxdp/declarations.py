"""Fail closed on undeclared data: every parameter of a CVXPY model is declared private (a
privacy spec of :mod:`cvxdp.specs`) or public (``public=`` of ``solve_private``).

cvxdp uses nothing as public that the user did not declare: :func:`check_declared` refuses a
model with a parameter in neither list, naming the parameter and both fixes.  A public
parameter's value is then used exactly and listed in the privacy report.

References
----------
Dwork & Roth (2014), "The Algorithmic Foundations of Differential Privacy", Definition 2.4:
the guarantee holds over neighbouring datasets, which differ only in the data declared private;
anything else the answer uses exactly must be public.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import cvxpy as cp
from cvxpy.atoms.affine.binary_operators import MulExpression

from cvxdp.errors import PrivacySpecError

__all__ = ["check_declared", "spec_parameters"]


def spec_parameters(spec: Any) -> tuple[cp.Parameter, ...]:
    """The parameters a spec declares private (``params``, or a row spec's ``X`` and ``y``)."""
    params = getattr(spec, "params", None)
    if params is not None:
        return tuple(params)
    return tuple(p for p in (getattr(spec, "X", None), getattr(spec, "y", None))
                 if isinstance(p, cp.Parameter))


def check_declared(problem: cp.Problem, specs: Sequence[Any], public: Any = None
                   ) -> tuple[cp.Parameter, ...]:
    """Fail closed: every parameter of ``problem`` is declared private (a spec) or public.

    Parameters
    ----------
    problem : cvxpy.Problem
    specs : sequence of privacy specs
    public : cvxpy.Parameter, sequence of them, or None
        The parameters whose values are public (used exactly, listed in the privacy report).

    Returns
    -------
    tuple of cvxpy.Parameter
        The public parameters, in the order given.

    Raises
    ------
    PrivacySpecError
        A parameter of the model that is in neither list (named, with both fixes); a public
        entry that is not a Parameter of the model, or is also declared private; a parameter
        declared private twice.
    """
    if public is None:
        public_t: tuple[Any, ...] = ()
    elif isinstance(public, cp.Parameter):
        public_t = (public,)
    elif isinstance(public, (list, tuple, set, frozenset)):
        public_t = tuple(public)
    else:
        raise PrivacySpecError(
            f"public= takes the model's public cvxpy.Parameter objects (one or a list), got "
            f"{type(public).__name__}.")
    bad = [type(p).__name__ for p in public_t if not isinstance(p, cp.Parameter)]
    if bad:
        raise PrivacySpecError(
            f"public= takes cvxpy.Parameter objects, got {', '.join(sorted(set(bad)))}. Public "
            "data that is not a Parameter needs no declaration: write it as a constant.")
    in_model = {p.id: p for p in problem.parameters()}
    private_ids = {p.id for s in specs for p in spec_parameters(s)}
    foreign = [p.name() for p in public_t if p.id not in in_model]
    if foreign:
        raise PrivacySpecError(
            f"public= names parameter(s) {', '.join(map(repr, foreign))} that the model does "
            "not use; drop them from public=.")
    unused = [p.name() for s in specs for p in spec_parameters(s) if p.id not in in_model]
    if unused:
        raise PrivacySpecError(
            f"the model does not use the private parameter(s) {', '.join(map(repr, unused))} "
            "of private=; declare the cp.Parameter objects the model is written with.")
    declared: dict[int, list[str]] = {}
    names: dict[int, str] = {}
    for s in specs:
        for p in spec_parameters(s):
            declared.setdefault(p.id, []).append(type(s).__name__)
            names[p.id] = p.name()
    twice = [(names[pid], kinds) for pid, kinds in declared.items() if len(kinds) > 1]
    if twice:
        name, kinds = twice[0]
        raise PrivacySpecError(
            f"parameter {name!r} is declared private {len(kinds)} times ({', '.join(kinds)}); "
            "declare each private parameter in one spec, with the one sensitivity that "
            "holds for it (a spec takes several parameters: cvxdp.ConstraintPrivacy([A, b], "
            "sensitivity=D)).")
    both = [p.name() for p in public_t if p.id in private_ids]
    if both:
        raise PrivacySpecError(
            f"parameter(s) {', '.join(map(repr, both))} are declared both private and public; "
            "keep each in one of private= and public=.")
    public_ids = {p.id for p in public_t}
    undeclared = [p for pid, p in in_model.items()
                  if pid not in private_ids and pid not in public_ids]
    if undeclared:
        names = ", ".join(repr(p.name()) for p in undeclared)
        first = undeclared[0].name()
        raise PrivacySpecError(
            f"parameter(s) {names} of the model are neither private nor public; cvxdp uses "
            "nothing as public that you did not declare. If a parameter holds people's data, "
            "add the spec that matches where it enters to private=: "
            f"cvxdp.ObjectivePrivacy({first}, sensitivity=D) in the objective's coefficients, "
            f"cvxdp.ConstraintPrivacy({first}, sensitivity=D) as a coefficient of variables in "
            f"constraints, cvxdp.ScalarPrivacy({first}, sensitivity=D) as a constant term "
            "(a right-hand side, a variable's bound); if its value is public, pass "
            f"public=[{', '.join(p.name() for p in undeclared)}] (its value is then used "
            "exactly and listed in the privacy report)." + row_hint(problem, undeclared))
    return public_t


def row_hint(problem: cp.Problem, undeclared: Sequence[Any]) -> str:
    """The refusal's pointer to :class:`cvxdp.RowPrivacy` when an undeclared parameter has the
    row-learning shape (docs/learning.md): a matrix ``X`` (n, d) that the objective uses as
    ``X @ w`` with ``w`` a variable; the labels are a length-n vector parameter of the model,
    if one is.  Structure only; empty otherwise."""
    objective = problem.objective.expr
    for X in undeclared:
        if len(X.shape) != 2 or not _times_variable(objective, X):
            continue
        labels = [p.name() for p in problem.parameters() if p.shape == (X.shape[0],)]
        x = X.name()
        if labels:
            return (f" If each row of {x} with its label in {labels[0]} is one person's and the "
                    f"objective is a sum of per-row losses of {x} @ w (a learning model, "
                    f"docs/learning.md): cvxdp.RowPrivacy({x}, {labels[0]}, row_bound=R, "
                    "label_bound=B), R a public bound on a row's norm, B one on a label.")
        return (f" If each row of {x} is one person's and the objective is a sum of per-row "
                f"losses of {x} @ w (a learning model, docs/learning.md): "
                f"cvxdp.RowPrivacy({x}, row_bound=R), R a public bound on a row's norm.")
    return ""


def _times_variable(expr: Any, X: cp.Parameter) -> bool:
    """Whether ``expr`` contains ``X @ v`` with ``v`` an expression of variables."""
    stack = [expr]
    while stack:
        e = stack.pop()
        if isinstance(e, MulExpression) and \
                e.args[0] is X and e.args[1].variables():
            return True
        stack.extend(e.args)
    return False
