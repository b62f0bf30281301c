"""The user's constraints that hold private data inside a nonlinear atom, bounded in the user's
terms.

Perturbation certifies the violation of the canonical program's rows (docs/certificates.md).
For a constraint whose private data sit in affine terms (``a'x + ||P x|| <= b`` with private
``a``), or in one unit-weight Euclidean norm (``||F w|| <= s``), the canonical rows carry the
user's violation with coefficient one.  For a constraint such as ``norm1(x - y) <= r``, CVXPY
writes one epigraph row per entry, and the user's violation is the SUM of their violations
(``n`` times a row's bound), or a weighted atom scales it (``2 norm(a) <= r``).  For those
constraints the bound is computed in the user's terms instead, with the fit-term machinery of
:mod:`cvxdp.solvers.perturbation.fit_term`: the constraint ``g(x, y) <= 0`` is a sum of terms,
each private one Lipschitz (or square, or scalar affine) in an affine ``a(x, y)``; at the
released point ``x^`` and the released ``y~``, ``g(x^, y) <= g(x^, y~) + sum_k sup |Delta_k|``
on the noise norms' events (:func:`~cvxdp.solvers.perturbation.fit_term.fit_bounds`'s upper
bound), so the user's violation is at most its positive part.  A private nonlinear constraint
neither shape covers is reported, and its violation is not bounded (fail closed: the status
cannot be a success).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import cvxpy as cp
import numpy as np
from cvxpy.atoms.lambda_max import lambda_max
from cvxpy.atoms.max import max as cp_max
from cvxpy.atoms.norm_inf import norm_inf
from cvxpy.atoms.pnorm import Pnorm
from cvxpy.constraints.nonpos import Inequality

from cvxdp.solvers.perturbation.fit_term import (
    FitModel,
    _peel,
    _terms,
    detect_fit_terms,
    fit_bounds,
)

__all__ = ["ConstraintFits", "detect_constraint_fits", "constraint_violation_bound"]


@dataclass(frozen=True)
class ConstraintFits:
    """``fits``: one :class:`FitModel` per constraint bounded in the user's terms (the model's
    objective is the constraint's ``g``, ``g <= 0``); ``unbounded``: the constraints whose
    violation in the user's terms no bound covers (their text, shortened)."""

    fits: tuple[FitModel, ...]
    unbounded: tuple[str, ...]


def _canonical_exact(terms: list[Any]) -> bool:
    """The private terms reach the canonical rows with coefficient one: all scalar affine, or
    one atom of weight one whose epigraph variable bounds every row at once (a Euclidean norm,
    ``max``, ``norm_inf``, ``lambda_max``: the user's violation is the largest row's, not a
    sum of rows')."""
    if all(t.is_affine() and t.size == 1 for t in terms):
        return True
    if len(terms) != 1:
        return False
    peeled = _peel(terms[0])
    if peeled is None or peeled[0] != 1.0:
        return False
    t = peeled[1]
    if isinstance(t, Pnorm):
        return t.axis is None and float(t.p) == 2.0
    return isinstance(t, (cp_max, norm_inf, lambda_max)) and getattr(t, "axis", None) is None


def detect_constraint_fits(problem: cp.Problem, params: tuple[Any, ...],
                           traceable: bool = True) -> ConstraintFits | None:
    """The private nonlinear inequality constraints of ``problem`` (structure only, never a
    private value), or None when every private constraint's canonical rows are the user's.
    ``traceable`` False (private data reshaped into a tensor, so the fit terms' copies cannot
    be built): every private nonlinear inequality counts as unbounded (fail closed)."""
    ids = {p.id for p in params}
    fits, unbounded = [], []
    for c in problem.constraints:
        if not isinstance(c, Inequality) or not ids & {p.id for p in c.parameters()}:
            continue  # equalities, cones: their canonical rows are the user's
        g = c.expr
        if g.is_affine():
            continue
        if not traceable:
            unbounded.append(str(c)[:80])
            continue
        private = [t for t in _terms(g) if ids & {p.id for p in t.parameters()}]
        if g.size == 1 and _canonical_exact(private):
            continue
        model = detect_fit_terms(cp.Problem(cp.Minimize(g)), params) if g.size == 1 \
            else None
        if model is None:
            unbounded.append(str(c)[:80])
        else:
            fits.append(model)
    if not fits and not unbounded:
        return None
    return ConstraintFits(tuple(fits), tuple(unbounded))


def constraint_violation_bound(cf: ConstraintFits, primal: dict[str, Any],
                               noisy_y: tuple[np.ndarray, ...], sigma: np.ndarray,
                               beta: float, noise: str) -> float:
    """The largest violation of the constraints of ``cf`` at the released point (its variable
    values by name), in the user's terms, with probability ``>= 1 - beta`` (shared equally);
    ``inf`` when a constraint is unbounded (module doc)."""
    if cf.unbounded:
        return float("inf")
    out = 0.0
    b = beta / max(len(cf.fits), 1)
    for model in cf.fits:
        upper, _, _ = fit_bounds(model, primal, noisy_y, np.inf, sigma, b, noise)
        out = max(out, upper)
    return out
