"""The user's constraints that hold private data inside a nonlinear atom, bounded in the user's
terms.

Perturbation certifies the violation of the canonical program's rows (docs/certificates.md).
For a constraint whose private data sit in affine terms (``a'x + ||P x|| <= b`` with private
``a``), or in one unit-weight Euclidean norm (``||F w|| <= s``), the canonical rows carry the
user's violation with coefficient one. A vector constraint ``g(x, y) <= 0`` is the user's entry
by entry (CVXPY's ``violation()`` is entrywise; the user's violation is the largest entry's):
when every entry's private part is affine, or one unit-weight elementwise atom (``abs``,
``maximum``, ``pos``, ``neg``) of affine arguments, or one scalar term of the shapes above,
entry ``i``'s epigraph variable ``t_i`` bounds its rows and ``|a_i| - c_i <= (|a_i| - t_i) +
(t_i - c_i)``: the canonical rows carry it with coefficient one as well. For a constraint such
as ``norm1(x - y) <= r``, CVXPY writes one epigraph row per entry, and the user's violation is
the SUM of their violations (``n`` times a row's bound), or a weighted atom scales it (``2
norm(a) <= r``). For those constraints the bound is computed in the user's terms instead, with
the fit-term machinery of :mod:`cvxdp.solvers.perturbation.fit_term`: the constraint ``g(x, y)
<= 0`` is a sum of terms, each private one Lipschitz (or square, or scalar affine) in an affine
``a(x, y)``; at the released point ``x^`` and the released ``y~``, ``g(x^, y) <= g(x^, y~) +
sum_k sup |Delta_k|`` on the noise norms' events
(:func:`~cvxdp.solvers.perturbation.fit_term.fit_bounds`'s upper bound), so the user's
violation is at most its positive part. A vector constraint gets the same bound entry by entry
(:class:`EntryFit`): each private term an affine expression, or a (public, possibly entrywise,
weight times an) elementwise Lipschitz atom ``psi(a)`` or ``square(a)`` of an affine ``a(x,
y)``, or a scalar Lipschitz / affine term broadcast to every entry, so ``g_i(x^, y) <= g_i(x^,
y~) + sum_k |w_ki| L_k |(J_k e)_i| + sum_sq |w_i| (2 |a_i(x^, y~)| |(J e)_i| + (J e)_i^2) +
sum_scalar lam L N(J e)``; the rows' ``|(J_k e)_i|`` are bounded at once on one event
(:func:`rows_noise_bound`), vectorised over the entries. A private nonlinear
constraint none of these shapes covers is reported, and its violation is not bounded (fail
closed: the status cannot be a success).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import cvxpy as cp
import numpy as np
import scipy.sparse as sp
from cvxpy.atoms.affine.affine_atom import AffAtom
from cvxpy.atoms.affine.binary_operators import DivExpression, MulExpression, multiply
from cvxpy.atoms.affine.promote import Promote
from cvxpy.atoms.affine.unary_operators import NegExpression
from cvxpy.atoms.elementwise.abs import abs as cp_abs
from cvxpy.atoms.elementwise.maximum import maximum
from cvxpy.atoms.elementwise.minimum import minimum
from cvxpy.atoms.lambda_max import lambda_max
from cvxpy.atoms.max import max as cp_max
from cvxpy.atoms.norm_inf import norm_inf
from cvxpy.atoms.pnorm import Pnorm
from cvxpy.constraints.nonpos import Inequality

from cvxdp.solution import Certificate
from cvxdp.solvers.perturbation.fit_detect import (
    FitModel,
    _classify,
    _elementwise_lipschitz,
    _jacobians,
    _peel,
    _terms,
    detect_fit_terms,
    fresh_leaves,
    is_square,
)
from cvxdp.solvers.perturbation.fit_term import _at_point, fit_bounds
from cvxdp.solvers.perturbation.noise_tails import norm_sum_bound

__all__ = ["ConstraintFits", "EntryFit", "detect_constraint_fits", "constraint_violation_bound",
           "user_terms_certificate", "rows_noise_bound"]


@dataclass(frozen=True)
class ConstraintFits:
    """``fits``: one :class:`FitModel` per constraint bounded in the user's terms (the model's
    objective is the constraint's ``g``, ``g <= 0``); ``unbounded``: the constraints whose
    violation in the user's terms no bound covers (their text, shortened)."""

    fits: tuple[FitModel, ...]
    unbounded: tuple[str, ...]
    #: vector constraints bounded in the user's terms entry by entry
    entries: tuple[EntryFit, ...] = ()


@dataclass(frozen=True)
class EntryFit:
    """A vector constraint ``g(x, y) <= 0`` bounded entry by entry (module doc): ``g`` on
    fresh leaves (``x_copies`` by user variable name, ``y_copies`` per private parameter);
    ``rows``: per private vector term ``(c_k, J_k, a_k)``, ``c_k`` the entries' public
    weights (``|w| L`` for a Lipschitz atom, 1 for an affine term, ``|w|`` for a square),
    ``J_k = da_k/dy`` (one row per entry, column-major, columns in the order of the noise
    vector) and, for a square ``w a_k^2``, ``a_k`` on the fresh leaves (else None);
    ``scalars``: the private scalar terms, broadcast to every entry, as
    :func:`~cvxdp.solvers.perturbation.noise_tails.norm_sum_bound` parts ``(lam L, norm, J)``."""

    g: Any
    x_copies: dict[str, cp.Variable]
    y_copies: tuple[cp.Variable, ...]
    rows: tuple[tuple[np.ndarray, sp.csr_matrix, Any], ...]
    scalars: tuple[tuple[float, str, sp.csr_matrix], ...]


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


def _elementwise_exact(terms: list[Any]) -> bool:
    """Entry by entry, the private terms of a vector constraint reach the canonical rows with
    coefficient one: all affine; or one scalar term :func:`_canonical_exact` accepts
    (broadcast); or one elementwise atom of weight one whose arguments are affine, ``abs``,
    ``maximum`` (``pos``) or ``-minimum`` (``neg``): entry ``i``'s epigraph variable bounds
    each of its rows (``t_i >= +-a_i``, ``t_i >= a_ki``), so the entry's violation is the
    largest of those rows' plus the public rows' (docs/certificates.md)."""
    if all(t.is_affine() for t in terms):
        return True
    if len(terms) != 1:
        return False
    term = _unpromote(terms[0])
    if term.size == 1:
        return _canonical_exact([term])
    peeled = _peel(term, signed=True) if _weights_only(term) else None
    if peeled is None:
        return False
    lam, t = peeled
    atom = (lam == 1.0 and isinstance(t, (cp_abs, maximum))) or (
        lam == -1.0 and isinstance(t, minimum))
    return atom and all(a.is_affine() for a in t.args)


def _weights_only(term: Any) -> bool:
    """``term``'s chain of negations, products and quotients (what ``_peel`` removes) holds no
    matrix product by a constant matrix: ``ones((n, n)) @ abs(a)`` sums the entries, it is
    not a scalar weight, though every entry of the matrix is equal."""
    while isinstance(term, (NegExpression, MulExpression, DivExpression)):
        if type(term) is MulExpression and any(a.is_constant() and a.size > 1
                                               for a in term.args):
            return False
        variable = [a for a in term.args if not a.is_constant()]
        if len(variable) != 1:
            return True  # not a weighted term: _peel stops here as well
        term = variable[0]
    return True


def _unpromote(term: Any) -> Any:
    """A scalar broadcast to the constraint's shape (``Promote``), as the scalar."""
    return term.args[0] if isinstance(term, Promote) else term


def _entry_term(term: Any, size: int, shape: tuple[int, ...]
                ) -> tuple[str, Any, Any] | None:
    """A private term of a vector constraint, classified: ``("affine", 1, term)``, ``("row",
    c, a)`` for ``w psi(a)`` with an elementwise ``L``-Lipschitz ``psi`` (``c = |w| L`` per
    entry), ``("square", |w|, a)`` for ``w square(a)``, ``("scalar", part, a)`` for a
    one-number term (``part = (lam L, norm)``), or None."""
    term = _unpromote(term)
    if term.is_affine():
        return ("affine", 1.0, term) if term.size in (1, size) else None
    if term.size == 1:
        c = _classify(term)
        if c is None or c[0] == "square" or c[4] is not None:
            return None
        norm = {"affine": "abs", "l1": "l1"}.get(c[0], "l2")
        return "scalar", (c[1] * c[2], norm), c[3]
    if term.size != size or not _weights_only(term):
        return None
    peeled = _peel(term, signed=True)
    if peeled is None:
        return None
    w, t = abs(peeled[0]), peeled[1]
    if isinstance(t, multiply) and len(t.args) == 2:
        pub = [a.is_constant() and not a.parameters() for a in t.args]
        if sum(pub) != 1:
            return None
        w = np.abs(np.broadcast_to(np.asarray(t.args[pub.index(True)].value, dtype=float),
                                   shape)).ravel(order="F") * w
        t = t.args[pub.index(False)]
    if is_square(t):
        found, kind = (1.0, t.args[0]), "square"
    elif isinstance(t, minimum) and len(t.args) == 2:
        # min(a, c) = -max(-a, -c): 1-Lipschitz in a, as max(a, c) is
        found, kind = _elementwise_lipschitz(maximum(*t.args)), "row"
    else:
        found, kind = _elementwise_lipschitz(t), "row"
    if found is None or found[1].size != size:
        return None
    return kind, np.broadcast_to(w * found[0], (size,)).astype(float), found[1]


def _entry_fit(g: Any, problem: cp.Problem, params: tuple[Any, ...]) -> EntryFit | None:
    """The :class:`EntryFit` of a vector constraint ``g <= 0`` (structure only), or None when
    a private term has none of the module doc's shapes or its argument is not affine jointly
    in the variables and the private data."""
    ids = {p.id for p in params}
    leaves = fresh_leaves(problem, params)
    if leaves is None:
        return None
    found = []
    for term in _terms(g):
        if ids & {p.id for p in term.parameters()}:
            c = _entry_term(term, int(g.size), g.shape)
            if c is None:
                return None
            found.append(c)
    x_copies, y_copies, by_obj = leaves
    rows, scalars = [], []
    for kind, c, a in found:
        copy = a.tree_copy(by_obj)
        if not copy.is_affine() or ids & {p.id for p in copy.parameters()}:
            return None
        J = _jacobians(copy, x_copies, y_copies)[0]
        if kind == "scalar":
            scalars.append((float(c[0]), c[1], J))
        elif J.shape[0] == 1 and g.size > 1:  # an affine scalar, broadcast
            scalars.append((1.0, "abs", J))
        else:
            rows.append((np.broadcast_to(np.asarray(c, dtype=float), (int(g.size),)), J,
                         copy if kind == "square" else None))
    return EntryFit(g.tree_copy(by_obj), x_copies, y_copies, tuple(rows), tuple(scalars))


def rows_noise_bound(Js: list[sp.csr_matrix], sigma: np.ndarray, beta: float,
                     noise: str) -> list[np.ndarray]:
    """``r_k`` with ``|(J_k e)_i| <= r_ki`` for every ``k`` and every row ``i`` at once, with
    probability ``>= 1 - beta``; ``e_j = sigma_j g_j``, ``m`` a row of ``J_k diag(sigma)``.

    Gaussian ``g``: ``|m'g| <= ||m|| sqrt(2 ln(2 R / beta))`` for each of the ``R`` rows
    (the Gaussian tail ``P(|N(0, 1)| > s) <= 2 exp(-s^2 / 2)``, union bound).  Laplace ``g``
    (``|g_j| ~ Exp(1)``): ``|m'g| <= ||m||_1 max_j |g_j|`` and ``max_j |g_j| <= ln(K /
    beta)`` (union bound over the ``K`` coordinates): one event for every row."""
    sigma = np.asarray(sigma, dtype=float)
    R = sum(J.shape[0] for J in Js)
    if noise == "laplace":
        tail = math.log(max(int(sigma.size), 1) / beta)
    else:
        tail = math.sqrt(2.0 * math.log(2.0 * max(R, 1) / beta))
    out = []
    for J in Js:
        M = sp.csr_matrix(J @ sp.diags(sigma))
        norms = (np.asarray(abs(M).sum(axis=1)).ravel() if noise == "laplace" else
                 np.sqrt(np.asarray(M.multiply(M).sum(axis=1)).ravel()))
        out.append(norms * tail)
    return out


def _entry_bound(ef: EntryFit, primal: dict[str, Any], noisy_y: tuple[np.ndarray, ...],
                 sigma: np.ndarray, beta: float, noise: str) -> float:
    """``max_i (g_i(x^, y~) + S_i)^+`` (module doc), on events of total probability
    ``beta`` (one for the rows, one for the scalar terms).  A Lipschitz or affine row adds
    ``c_i r_i``; a square ``w a_i^2`` adds ``|w| (2 |a_i(x^, y~)| r_i + r_i^2)``, since
    ``a(x^, y) = a(x^, y~) - (J e)``."""
    with _at_point(ef, primal, noisy_y):
        value = ef.g.value
        resid = [None if a is None else a.value for _, _, a in ef.rows]
    if value is None or any(a is not None and r is None
                            for (_, _, a), r in zip(ef.rows, resid, strict=True)):
        return math.inf
    g = np.asarray(value, dtype=float).ravel(order="F")
    b = beta / max(bool(ef.rows) + bool(ef.scalars), 1)
    if ef.rows:
        bounds = rows_noise_bound([J for _, J, _ in ef.rows], sigma, b, noise)
        for (c, _, a), r, res in zip(ef.rows, bounds, resid, strict=True):
            if a is None:
                g = g + c * r
            else:
                g = g + c * (2.0 * np.abs(np.asarray(res, dtype=float).ravel(order="F")) * r
                             + r * r)
    if ef.scalars:
        g = g + norm_sum_bound(list(ef.scalars), sigma, b, noise)
    if not np.all(np.isfinite(g)):
        return math.inf
    return float(np.max(g, initial=0.0))


def _label(pos: int, con: Any) -> str:
    """How a message names a constraint: its index and its nonlinear atoms (never its data:
    CVXPY's text prints every constant, a matrix included)."""
    atoms = sorted({getattr(a, "__name__", str(a)) for a in con.atoms()
                    if not issubclass(a, AffAtom)})
    return f"constraints[{pos}] ({', '.join(atoms) or 'affine'} <= ...)"


def detect_constraint_fits(problem: cp.Problem, params: tuple[Any, ...],
                           traceable: bool = True) -> ConstraintFits | None:
    """The private nonlinear inequality constraints of ``problem`` (structure only, never a
    private value), or None when every private constraint's canonical rows are the user's.
    ``traceable`` False (private data reshaped into a tensor, so the fit terms' copies cannot
    be built): every private nonlinear inequality counts as unbounded (fail closed)."""
    ids = {p.id for p in params}
    fits, unbounded, entries = [], [], []
    for pos, c in enumerate(problem.constraints):
        if not isinstance(c, Inequality) or not ids & {p.id for p in c.parameters()}:
            continue  # equalities, cones: their canonical rows are the user's
        g = c.expr
        if g.is_affine():
            continue
        private = [t for t in _terms(g) if ids & {p.id for p in t.parameters()}]
        exact = _canonical_exact if g.size == 1 else _elementwise_exact
        if exact(private):
            continue  # structure only: the canonical rows are the user's, traced or not
        if not traceable:
            unbounded.append(_label(pos, c))
            continue
        if g.size > 1:
            ef = _entry_fit(g, problem, params)
            if ef is None:
                unbounded.append(_label(pos, c))
            else:
                entries.append(ef)
            continue
        model = detect_fit_terms(cp.Problem(cp.Minimize(g)), params)
        if model is None:
            unbounded.append(_label(pos, c))
        else:
            fits.append(model)
    if not fits and not unbounded and not entries:
        return None
    return ConstraintFits(tuple(fits), tuple(unbounded), tuple(entries))


def constraint_violation_bound(cf: ConstraintFits, primal: dict[str, Any],
                               noisy_y: tuple[np.ndarray, ...], sigma: np.ndarray,
                               beta: float, noise: str) -> float:
    """The largest violation of the constraints of ``cf`` at the released point (its variable
    values by name), in the user's terms, with probability ``>= 1 - beta`` (shared equally);
    ``inf`` when a constraint is unbounded (module doc)."""
    if cf.unbounded:
        return float("inf")
    out = 0.0
    b = beta / max(len(cf.fits) + len(cf.entries), 1)
    for model in cf.fits:
        upper, _, _ = fit_bounds(model, primal, noisy_y, np.inf, sigma, b, noise,
                                 refine=False)  # the upper bound only: no gap refinement
        out = max(out, upper)
    for ef in cf.entries:
        out = max(out, _entry_bound(ef, primal, noisy_y, sigma, b, noise))
    return out


def user_terms_certificate(cf: ConstraintFits, cert: Certificate,
                           primal: Callable[[], dict[str, Any]],
                           noisy_y: tuple[np.ndarray, ...], sigma: np.ndarray, beta: float,
                           family: str, *, meets_rows: bool = False) -> Certificate:
    """``cert`` with its violation bound raised to the user's-terms bound of the private
    nonlinear constraints (:func:`constraint_violation_bound`, at the released variables
    ``primal()``), on one more noise event (``beta``).  Under truncated noise too: the
    truncation makes the counterpart sure, but these bounds are Gaussian tail events, which the
    truncated law fails with probability at most ``beta`` (the truncation event and each tail
    event are symmetric convex sets, so conditioning on the first does not lower the second's
    probability: the Gaussian correlation inequality, Royen 2014, "A simple proof of the
    Gaussian correlation conjecture extended to multivariate gamma distributions"), not 0.

    ``meets_rows``: the point is the tightened counterpart's and meets every canonical row to
    the solver's tolerance on the event (relative to the data's largest right-hand side); each
    constraint's canonical rows (its epigraph variables included) then hold there, so the
    user's constraint does, to that tolerance -- whatever its shape (``quad_over_lin`` with a
    variable denominator), as for the objective's epigraph: the canonical bound stands.
    """
    if meets_rows and cf.unbounded:
        return Certificate.from_bounds(
            objective_upper=cert.objective_upper, optimum_lower=cert.optimum_lower,
            violation_bound=cert.violation_bound,
            equality_violation_bound=cert.equality_violation_bound,
            probability=cert.probability,
            how=cert.how + "; the private nonlinear constraints hold at the point as their "
            "canonical rows do (the tightened counterpart's point)")
    user = constraint_violation_bound(cf, primal(), noisy_y, sigma, beta, family)
    note = ("; the violation of " + ", ".join(cf.unbounded) + " in the user's terms is not "
            "bounded" if cf.unbounded else
            "; private nonlinear constraints bounded in the user's terms (their value with "
            "the released data plus the noise's Lipschitz share)")
    return Certificate.from_bounds(
        objective_upper=cert.objective_upper, optimum_lower=cert.optimum_lower,
        violation_bound=max(cert.violation_bound, user),
        equality_violation_bound=cert.equality_violation_bound,
        probability=cert.probability - beta, how=cert.how + note)
