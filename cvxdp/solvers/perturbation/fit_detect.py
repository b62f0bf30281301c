"""Detection of fit terms with private targets, the pattern of
:mod:`cvxdp.solvers.perturbation.fit_term`: the private parameters appear only in additive terms
of a minimised objective (squares, Lipschitz losses, affine terms), each affine jointly in the
variables and the private data.  Detection reads the model's structure and public constants
only: the Jacobians ``J = da/dy`` and the ranges of ``da/dx`` are computed on fresh copies of the
leaves (:func:`fresh_leaves`), never at a private value.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

import cvxpy as cp
import numpy as np
import scipy.sparse as sp
from cvxpy.atoms.affine.add_expr import AddExpression
from cvxpy.atoms.affine.binary_operators import DivExpression, MulExpression, multiply
from cvxpy.atoms.affine.sum import Sum
from cvxpy.atoms.affine.unary_operators import NegExpression
from cvxpy.atoms.elementwise.abs import abs as cp_abs
from cvxpy.atoms.elementwise.huber import huber
from cvxpy.atoms.elementwise.maximum import maximum
from cvxpy.atoms.elementwise.minimum import minimum
from cvxpy.atoms.elementwise.power import Power
from cvxpy.atoms.lambda_max import lambda_max
from cvxpy.atoms.norm1 import norm1
from cvxpy.atoms.norm_inf import norm_inf
from cvxpy.atoms.pnorm import Pnorm
from cvxpy.atoms.quad_form import QuadForm
from cvxpy.atoms.quad_over_lin import quad_over_lin
from cvxpy.constraints.zero import Equality
from scipy.linalg import null_space

from cvxdp.blas_threads import one_blas_thread
from cvxdp.solvers.perturbation.fit_bilinear import (
    is_bilinear,
    second_derivatives,
)
from cvxdp.solvers.perturbation.noise_tails import RANGE_DENSE_MAX

__all__ = ["FitTerm", "FitModel", "detect_fit_terms", "fresh_leaves", "attribute_constraints",
           "equality_rows", "is_square"]


@dataclass(frozen=True)
class FitTerm:
    """One private term (module doc): ``kind`` ``"square"``, ``"l1"``, ``"l2"`` (Lipschitz in
    that norm, constant ``lip``), ``"affine"``, ``"bilinear"`` (a square of a bilinear
    argument) or ``"bilinear_l1"`` (an l1-Lipschitz loss of one:
    ``fit_term._bilinear_l1_bounds``) or ``"smooth"`` (``sum_squares(pos(a))``, ``neg(a)``
    read as ``pos(-a)``: convex with a 2-Lipschitz derivative); ``lam`` its public weight;
    ``J`` = ``da/dy``
    (sparse, ``size(a) x K``, columns in the order of the noise vector); ``J_range`` its
    projection on the range of ``da/dx`` (square terms; ``J`` when that range is not smaller);
    ``residual`` a copy of ``a`` on fresh leaves (square terms, to evaluate ``r(x^)``)."""

    kind: str
    lam: float
    lip: float
    J: sp.csr_matrix
    J_range: sp.csr_matrix | None = None
    residual: Any = None
    #: bilinear square terms (:mod:`cvxdp.solvers.perturbation.fit_bilinear`): the second
    #: derivatives ``d^2 a / dy_k dx_j`` (a ``fit_bilinear.SparseTensor``) and the variables (by
    #: name) they run over
    B: Any = None
    x_names: tuple[str, ...] = ()
    #: a single Euclidean norm (``fit_term._norm_floor``) or a square (``fit_term._square_floors``):
    #: the orthonormal basis ``Q`` of a space holding the range of ``da/dx``; a single norm's
    #: ``J`` part orthogonal to it, ``(I - Q Q') J`` (None: no such part)
    Q: np.ndarray | None = None
    J_perp: sp.csr_matrix | None = None
    #: the loss of a Lipschitz term for the conjugate bound (:mod:`fit_dual`): ``"abs"``,
    #: ``"huber"`` (``psi_c`` = M), ``"max"`` (``psi_c`` = the public side, one value per entry
    #: of ``a``, column-major) or ``"euclid"``; None for the others.  ``weights``: the public
    #: weights ``w >= 0`` of a weighted sum (``J`` holds ``diag(w) da/dy``)
    psi: str | None = None
    psi_c: Any = None
    weights: np.ndarray | None = None
    #: ``da/dx`` over every variable entry (the copies' order, column-major; square terms)
    Jx: sp.csr_matrix | None = None


@dataclass(frozen=True)
class FitModel:
    """The private terms of a model with the pattern, and the fresh leaves their copies use
    (``x_copies`` by user variable name, ``y_copies`` per private parameter)."""

    terms: tuple[FitTerm, ...]
    x_copies: dict[str, cp.Variable]
    y_copies: tuple[cp.Variable, ...]
    #: the objective is exactly one Euclidean norm ``lam ||a||`` (``fit_term._single_norm_gap``)
    single_norm: bool = False
    #: the user's (public) constraints on the copies' variables
    constraints: tuple[Any, ...] = ()
    #: the objective on the copies (the noisy objective ``h`` once ``y_copies`` hold ``y~``)
    objective: Any = None
    #: public values computed on first use (the box diameters of ``fit_term._box_diameter``)
    cache: dict = field(default_factory=dict)
    #: the sum of the objective's public terms on the copies (None: there are none)
    public_part: Any = None
    #: ``sum_p mu_p Y_p'Y_p`` over the public square terms ``mu_p ||b_p(x)||^2``
    #: (:mod:`cvxdp.solvers.perturbation.fit_curvature`); None when there is none
    public_curvature: sp.csr_matrix | None = None
    #: the rows ``E`` of the public linear equalities ``E x = e`` (None: there are none)
    public_equalities: sp.csr_matrix | None = None


def _full_sum(e: Any) -> bool:
    """A ``sum`` over every entry (no axis, or an axis that leaves one number)."""
    return isinstance(e, Sum) and (e.axis is None or e.size == 1)


def _terms(expr: Any) -> list[Any]:
    """The additive terms of ``expr``: sums flattened, ``sum(a + b)`` split into ``sum(a) +
    sum(b)`` (full sums only), and anything that splits scaled by a public scalar (``(a + b) /
    S``, ``sum(a - b) / S``, ``k * (a + b)``, ``-(a + b)``) split into its scaled terms (exact:
    distributivity)."""
    if isinstance(expr, AddExpression):
        return [t for a in expr.args for t in _terms(a)]
    if _full_sum(expr) and isinstance(expr.args[0], AddExpression):
        return [t for a in expr.args[0].args for t in _terms(cp.sum(a))]
    if isinstance(expr, NegExpression):
        parts = _terms(expr.args[0])
        if len(parts) > 1:
            return [-t for t in parts]
    if isinstance(expr, DivExpression) and _public_scalar(expr.args[1]) is not None:
        parts = _terms(expr.args[0])
        if len(parts) > 1:
            return [t / expr.args[1] for t in parts]
    if isinstance(expr, MulExpression) and len(expr.args) == 2:  # (multiply is one)
        for k, inner in (expr.args, expr.args[::-1]):
            if _public_scalar(k) is not None and k.size == 1:
                parts = _terms(inner)
                if len(parts) > 1:
                    return [k * t for t in parts]
    return [expr]


def _public_scalar(e: Any) -> float | None:
    """The value of a public constant that is one number (a scalar, or one promoted to an
    array: every entry equal), else None."""
    if e.is_constant() and not e.parameters():
        v = np.asarray(e.value, dtype=float).ravel()
        if v.size and np.all(v == v[0]):
            return float(v[0])
    return None


def _peel(term: Any, signed: bool = False) -> tuple[float, Any] | None:
    """``(lam, inner)`` with products and quotients by public scalars ``> 0`` peeled (also
    inside a full ``sum``); None for a non-positive weight.  ``signed``: negative factors and
    negations are peeled too (``lam`` carries the sign; None only for a zero weight)."""
    lam = 1.0
    while True:
        if signed and isinstance(term, NegExpression):
            k, term = -1.0, term.args[0]
        elif isinstance(term, (multiply, MulExpression)) and len(term.args) == 2:
            ks = [_public_scalar(a) for a in term.args]
            if ks[0] is not None and ks[1] is None:
                k, term = ks[0], term.args[1]
            elif ks[1] is not None and ks[0] is None:
                k, term = ks[1], term.args[0]
            else:
                return lam, term
        elif isinstance(term, DivExpression) and _public_scalar(term.args[1]) is not None:
            k, term = 1.0 / _public_scalar(term.args[1]), term.args[0]
        elif (_full_sum(term)
              and isinstance(term.args[0], (multiply, MulExpression, DivExpression))):
            inner = _peel(term.args[0], signed)
            if inner is None or inner[1] is term.args[0]:
                return lam, term
            k, term = inner[0], cp.sum(inner[1])
        else:
            return lam, term
        if not (k != 0 if signed else k > 0):
            return None
        lam *= k


def _classify(term: Any
              ) -> tuple[str, float, float, Any, np.ndarray | None, tuple | None] | None:
    """``(kind, lam, lip, a, weights, psi)`` of a private term (module doc), ``weights`` the
    rows' weights of ``J`` for a weighted sum (else None), ``psi`` the loss the conjugate bound
    reads (``FitTerm.psi`` and ``psi_c``; None for the shapes it does not: squares, affine
    terms, ``norm_inf``, ``lambda_max``, ``p > 2`` norms), or None."""
    if term.is_affine():
        return ("affine", 1.0, 1.0, term, None, None) if term.size == 1 else None
    peeled = _peel(term)
    if peeled is None:
        return None
    lam, t = peeled
    if isinstance(t, quad_over_lin) and _public_scalar(t.args[1]) is not None:
        k = _public_scalar(t.args[1])
        if k <= 0:
            return None
        side = _one_sided(t.args[0])
        if side is not None:  # sum_squares(pos(a)) / sum_squares(neg(a))
            return "smooth", lam / k, 0.0, side, None, None
        return "square", lam / k, 0.0, t.args[0], None, None
    if isinstance(t, QuadForm):
        factor = _public_psd_factor(t.args[1])
        return None if factor is None else ("square", lam, 0.0, factor @ t.args[0], None, None)
    if (is_square(t) and isinstance(t.args[0], Pnorm)
            and float(t.args[0].p) == 2.0 and t.args[0].axis is None):
        return "square", lam, 0.0, t.args[0].args[0], None, None
    if isinstance(t, norm1) and t.axis is None:
        return "l1", lam, 1.0, t.args[0], None, ("abs", None)
    if isinstance(t, (norm_inf, lambda_max)) and getattr(t, "axis", None) is None:
        return "l2", lam, 1.0, t.args[0], None, None
    if isinstance(t, Pnorm) and t.axis is None and float(t.p) == 2.0:
        return "euclid", lam, 1.0, t.args[0], None, ("euclid", None)
    if isinstance(t, Pnorm) and t.axis is None and float(t.p) > 2.0:
        return "l2", lam, 1.0, t.args[0], None, None
    if isinstance(t, Pnorm) and t.axis is None and float(t.p) == 1.0:
        return "l1", lam, 1.0, t.args[0], None, ("abs", None)
    if _full_sum(t):
        e, weights = t.args[0], None
        if isinstance(e, multiply) and len(e.args) == 2:
            # sum(w * psi(a)) with a public weight array w >= 0: an l1 term on diag(w) J
            pub = [a.is_constant() and not a.parameters() for a in e.args]
            if sum(pub) != 1:
                return None
            w = np.asarray(e.args[pub.index(True)].value, dtype=float)
            if not np.all(w >= 0):
                return None
            e = e.args[pub.index(False)]
            weights = np.broadcast_to(w, e.shape).ravel(order="F")
        if is_square(e):
            # sum(square(a)) = ||a||^2; with public weights w >= 0, ||diag(sqrt(w)) a||^2
            # (and sum(w * square(pos(a))) = ||pos(diag(sqrt(w)) a)||^2)
            a, kind = e.args[0], "square"
            if _one_sided(a) is not None:
                a, kind = _one_sided(a), "smooth"
            if weights is not None:
                a = cp.multiply(np.sqrt(weights.reshape(e.shape, order="F")), a)
            return kind, lam, 0.0, a, None, None
        found = _elementwise_lipschitz(e)
        if found is not None:
            return "l1", lam, found[0], found[1], weights, found[2]
    if isinstance(t, cp_abs) and t.size == 1:
        return "l1", lam, 1.0, t.args[0], None, ("abs", None)
    return None


def _one_sided(e: Any) -> Any:
    """``a`` when ``e`` is ``pos(a)`` (``maximum(a, 0)``, either order) or ``-a`` when it is
    ``neg(a)`` (``-minimum(a, 0)``, CVXPY's ``neg``): the argument of a one-sided residual whose
    square is a ``"smooth"`` term; None otherwise."""
    if isinstance(e, NegExpression) and isinstance(e.args[0], minimum):
        inner = _zero_side(e.args[0].args)
        return None if inner is None else -inner
    if isinstance(e, maximum):
        return _zero_side(e.args)
    return None


def _zero_side(args: Any) -> Any:
    """The argument of two of which the other is the public constant 0 (None otherwise)."""
    if len(args) != 2:
        return None
    for k in (0, 1):
        c = args[k]
        if c.is_constant() and not c.parameters() and np.all(np.asarray(c.value) == 0):
            return args[1 - k]
    return None


def is_square(e: Any) -> bool:
    """``e`` is ``power(a, 2)`` (``cp.square``), its exponent a public number 2."""
    return isinstance(e, Power) and float(getattr(e.p, "value", e.p)) == 2.0


def _public_psd_factor(P: Any) -> np.ndarray | None:
    """``L'`` with ``P = L L'`` for a public constant PSD matrix ``P`` (``quad_form(a, P) =
    ||L' a||^2``, CVXPY's ``matrix_frac(a, P)`` being ``quad_form(a, P^-1)``), from its
    eigendecomposition; None when ``P`` holds a parameter or is not PSD."""
    if P.parameters() or not P.is_constant():
        return None
    M = np.asarray(P.value.toarray() if sp.issparse(P.value) else P.value, dtype=float)
    M = np.atleast_2d(M)
    if M.shape[0] != M.shape[1] or not np.allclose(M, M.T):
        return None
    lam, V = np.linalg.eigh((M + M.T) / 2)
    if lam.size and lam[0] < -1e-12 * max(1.0, float(np.max(np.abs(lam)))):
        return None
    return np.sqrt(np.maximum(lam, 0.0))[:, None] * V.T


def _elementwise_lipschitz(e: Any) -> tuple[float, Any, tuple[str, Any]] | None:
    """``(L, a, psi)`` for ``e = psi(a)`` elementwise with ``psi`` L-Lipschitz (``abs``,
    ``huber``, ``maximum`` with a public side or of two public multiples of one ``u``,
    ``neg`` = ``-minimum`` with a public side; ``psi`` as :class:`FitTerm` records it), else
    None."""
    if isinstance(e, cp_abs):
        return 1.0, e.args[0], ("abs", None)
    if isinstance(e, huber) and _public_scalar(e.M) is not None:
        return 2.0 * _public_scalar(e.M), e.args[0], ("huber", _public_scalar(e.M))
    if isinstance(e, maximum):
        sided = _one_public_side(e.args, e.shape)
        if sided is not None:
            return 1.0, sided[0], ("max", sided[1])
        # max(c1 u, c2 u), public scalars c1, c2 (the pinball loss max(tau u, (tau - 1) u)):
        # max(|c1|, |c2|)-Lipschitz in u (the conjugate bound does not read this shape)
        scaled = [_peel(a, signed=True) for a in e.args]
        if len(scaled) == 2 and all(p is not None for p in scaled) \
                and scaled[0][1] is scaled[1][1] and not scaled[0][1].is_constant():
            return max(abs(scaled[0][0]), abs(scaled[1][0])), scaled[0][1], None
    if isinstance(e, NegExpression) and isinstance(e.args[0], minimum):
        # neg(u) = -minimum(u, c) = maximum(-u, -c), c public: 1-Lipschitz
        sided = _one_public_side(e.args[0].args, e.shape)
        if sided is not None:
            return 1.0, -sided[0], ("max", -sided[1])
    return None


def _one_public_side(args: Any, shape: tuple[int, ...]) -> tuple[Any, np.ndarray] | None:
    """``(a, c)`` for two arguments of which exactly one is a public constant: ``a`` the other,
    ``c`` the constant's value broadcast to ``shape`` (column-major); None otherwise."""
    pub = [a.is_constant() and not a.parameters() for a in args]
    if len(args) != 2 or sum(pub) != 1:
        return None
    side = np.broadcast_to(np.asarray(args[pub.index(True)].value, dtype=float), shape)
    return args[pub.index(False)], side.ravel(order="F")


def detect_fit_terms(problem: cp.Problem, params: tuple[Any, ...],
                     exclude: frozenset[int] = frozenset()) -> FitModel | None:
    """The pattern of the module doc, from the model's structure only (never a private value).

    ``params`` are the private parameters in the order of the noise vector (plain parameters:
    each entry one noise coordinate, column-major).  ``exclude``: ids of other private
    parameters, in constraints only (:mod:`cvxdp.solvers.perturbation.fit_beside`); the
    constraints that read one are left out of the model's ``constraints`` (never a private
    value read as public: what is left is a superset of the feasible set, so every minimum
    over it stays a lower bound and every box over it contains the feasible set).  None when
    the model does not have the pattern.
    """
    if not params or not isinstance(problem.objective, cp.Minimize):
        return None
    ids = {p.id for p in params}
    if any(ids & {p.id for p in c.parameters()} for c in problem.constraints):
        return None
    found, public = [], []
    every = _terms(problem.objective.expr)
    for term in every:
        if ids & {p.id for p in term.parameters()}:
            c = _classify(term)
            if c is None:
                return None
            found.append(c)
        else:
            public.append(term)
    leaves = fresh_leaves(problem, params) if found else None
    if leaves is None:
        return None
    x_copies, y_copies, by_obj = leaves
    terms = []
    on_equalities: list[tuple[int, sp.csr_matrix, sp.csr_matrix]] = []  # (term, J, J_x)
    for kind, lam, lip, a, weights, psi in found:
        copy = a.tree_copy(by_obj)
        if ids & {p.id for p in copy.parameters()}:
            return None
        if not copy.is_affine():
            if kind not in ("square", "l1") or not is_bilinear(a, problem, params):
                return None
            derivs = second_derivatives(copy, x_copies, y_copies)
            if derivs is None:
                return None
            J0, B, names = derivs
            if kind == "l1" and weights is not None:
                # sum(w * psi(a)): the rows of both noise maps carry the public weights
                J0 = weights[:, None] * J0
                B = B.rows_scaled(weights)
            terms.append(FitTerm(kind="bilinear" if kind == "square" else "bilinear_l1",
                                 lam=float(lam), lip=0.0 if kind == "square" else float(lip),
                                 J=sp.csr_matrix(J0), residual=copy, B=B,
                                 x_names=tuple(names)))
            continue
        J, Jx, Jx_full = _jacobians(copy, x_copies, y_copies)
        if weights is not None:
            J = sp.csr_matrix(sp.diags(weights) @ J)
        square = kind == "square"
        single = kind == "euclid" and len(every) == 1
        Q = _range_basis(Jx) if square or single else None
        J_perp = _perp_part(J, Q) if single else None
        if square or single:
            on_equalities.append((len(terms), J, Jx_full))
        terms.append(FitTerm(kind="l2" if kind == "euclid" else kind, lam=float(lam),
                             lip=float(lip), J=J,
                             J_range=_range_part(J, Jx, Q) if square or single else None,
                             residual=copy if square or single or psi or kind == "smooth"
                             else None,
                             Q=Q if square or J_perp is not None else None, J_perp=J_perp,
                             psi=None if psi is None else psi[0],
                             psi_c=None if psi is None else psi[1],
                             weights=None if weights is None else np.asarray(weights),
                             Jx=Jx_full if square else None))
    if any(t.kind == "bilinear_l1" for t in terms) and (
            any(t.kind != "bilinear_l1" for t in terms)
            or len({t.x_names for t in terms}) != 1):
        # fit_term._bilinear_l1_bounds: every private term a bilinear Lipschitz loss over the
        # same variables (LAD with a private design); other mixtures are not certified here
        return None
    var_only = {id(v): x_copies[v.name()] for v in problem.variables()}
    curvature = _public_curvature(public, var_only, x_copies)
    copies = tuple(c.tree_copy(var_only) for c in problem.constraints
                   if not exclude & {p.id for p in c.parameters()}) + \
        attribute_constraints(problem, x_copies)
    equalities = equality_rows(copies, x_copies)
    if equalities is not None:
        for i, J, Jx_full in on_equalities:
            part = _equality_range_part(J, Jx_full, equalities)
            if part is not None and part.shape[0] < terms[i].J_range.shape[0]:
                terms[i] = dataclasses.replace(terms[i], J_range=part)
    return FitModel(tuple(terms), x_copies, y_copies,
                    single_norm=len(every) == 1 and found[0][0] == "euclid",
                    constraints=copies,
                    objective=problem.objective.expr.tree_copy(by_obj),
                    public_part=sum(t.tree_copy(var_only) for t in public) if public else None,
                    public_curvature=curvature,
                    public_equalities=equalities)


def equality_rows(copies: tuple[Any, ...], x_copies: dict[str, cp.Variable]
                  ) -> sp.csr_matrix | None:
    """The rows ``E`` of the affine equalities without parameters among the constraint
    ``copies`` (on the variables' copies), over every variable entry (the copies' order,
    column-major); None when there is none.  Structure and public constants only."""
    rows = [_jacobians(c.args[0] - c.args[1], x_copies, ())[2] for c in copies
            if isinstance(c, Equality) and not c.parameters()
            and (c.args[0] - c.args[1]).is_affine()]
    return sp.csr_matrix(sp.vstack(rows)) if rows else None


def _public_curvature(public: list[Any], var_only: dict[int, Any],
                      x_copies: dict[str, cp.Variable]) -> sp.csr_matrix | None:
    """``sum_p mu_p Y_p'Y_p`` over the public terms that are squares ``mu_p ||b_p(x)||^2`` of
    an affine ``b_p`` (structure and public constants only); None when there is none."""
    total = None
    for term in public:
        c = _classify(term)
        if c is None or c[0] != "square" or c[4] is not None:
            continue
        copy = c[3].tree_copy(var_only)
        if not copy.is_affine() or copy.parameters():
            continue
        Y = _jacobians(copy, x_copies, ())[2]
        part = sp.csr_matrix(c[1] * (Y.T @ Y))
        total = part if total is None else total + part
    return total


def attribute_constraints(problem: cp.Problem, x_copies: dict[str, cp.Variable]
                          ) -> tuple[Any, ...]:
    """The variables' convex attributes as constraints on their copies (the copies are plain
    variables, so that any value can be set on them): ``nonneg`` / ``pos`` as ``>= 0``,
    ``nonpos`` / ``neg`` as ``<= 0``, ``bounds``, ``symmetric``, ``PSD`` and ``NSD``.  Every one
    holds on the user's feasible set (``pos`` / ``neg`` by their closures), and an attribute
    left out (``diag``, ``sparsity``, integrality) only enlarges the set, so each bound computed
    over the copies' constraints stays valid (docs/certificates.md, "The variables'
    attributes").  Public structure only."""
    out: list[Any] = []
    for v in problem.variables():
        c, a = x_copies[v.name()], v.attributes
        if a.get("nonneg") or a.get("pos"):
            out.append(c >= 0)
        if a.get("nonpos") or a.get("neg"):
            out.append(c <= 0)
        bounds = a.get("bounds")
        if bounds is not None:
            for k, side in enumerate(bounds):
                # numeric sides only (an expression or parameter as a bound is left out:
                # never a private value read as public); an infinite entry bounds nothing
                if side is None or isinstance(side, cp.Expression):
                    continue
                val = np.broadcast_to(np.asarray(side, dtype=float), c.shape)
                fin = np.isfinite(val)
                if fin.all():
                    out.append(c >= val if k == 0 else c <= val)
        if a.get("symmetric") or a.get("PSD") or a.get("NSD"):
            out.append(c == c.T)
        if a.get("PSD"):
            out.append(c >> 0)
        if a.get("NSD"):
            out.append(c << 0)
    return tuple(out)


def fresh_leaves(problem: cp.Problem, params: tuple[Any, ...]
                 ) -> tuple[dict[str, cp.Variable], tuple[cp.Variable, ...], dict[int, Any]] | None:
    """Fresh variables for the model's variables (by name) and its private parameters, and
    the ``id -> copy`` map ``tree_copy`` takes; None when two variables share a name (the
    copies are keyed by name)."""
    names = [v.name() for v in problem.variables()]
    if len(set(names)) != len(names):
        return None
    x_copies = {v.name(): cp.Variable(v.shape) for v in problem.variables()}
    y_copies = tuple(cp.Variable(p.shape) for p in params)
    by_obj = {id(v): x_copies[v.name()] for v in problem.variables()}
    by_obj.update({id(p): y for p, y in zip(params, y_copies, strict=True)})
    return x_copies, y_copies, by_obj


def _jacobians(expr: Any, x_copies: dict[str, cp.Variable], y_copies: tuple[cp.Variable, ...]
               ) -> tuple[sp.csr_matrix, sp.csr_matrix | None, sp.csr_matrix]:
    """``(da/dy, da/dx, da/dx over every variable entry)`` of an affine expression (its
    gradient at any point: zeros here); ``da/dx`` lists the variables ``a`` reads, the last
    one every variable of the copies, in their order (zero blocks for the others)."""
    leaves = [*x_copies.values(), *y_copies]
    for v in leaves:
        v.value = np.zeros(v.shape)
    try:
        grad = expr.grad
    finally:
        for v in leaves:
            v.value = None
    rows = int(expr.size)

    def block(v: Any) -> sp.csr_matrix:
        g = grad.get(v)
        return sp.csr_matrix(g).T if g is not None else sp.csr_matrix((rows, int(v.size)))

    J = sp.csr_matrix(sp.hstack([block(y) for y in y_copies])) if y_copies else \
        sp.csr_matrix((rows, 0))
    xs = [block(v) for v in x_copies.values() if grad.get(v) is not None]
    full = sp.csr_matrix(sp.hstack([block(v) for v in x_copies.values()]))
    return J, (sp.csr_matrix(sp.hstack(xs)) if xs else None), full


def _range_basis(Jx: sp.csr_matrix | None) -> np.ndarray | None:
    """``Q``, every left singular vector of ``J_x = da/dx`` (no rank cut-off, so no numerical
    tolerance drops a direction), when ``J_x`` has fewer columns than rows and is small enough
    to factor densely; None otherwise."""
    if Jx is None:
        return None
    rows, cols = Jx.shape
    if cols >= rows or rows * cols > RANGE_DENSE_MAX:
        return None
    with one_blas_thread():  # a one-off dense SVD (blas_threads.one_blas_thread)
        return np.linalg.svd(Jx.toarray(), full_matrices=False)[0]


def _range_part(J: sp.csr_matrix, Jx: sp.csr_matrix | None, Q: np.ndarray | None
                ) -> sp.csr_matrix:
    """``Q' J`` (``Q`` of :func:`_range_basis`, spanning a space that contains the range of
    ``J_x``), else ``J``: ``D = J_x (x* - x^)`` lies in that range, so only ``P v`` enters
    (``||P J e|| = ||Q' J e||``).  No rows when ``a`` does not depend on ``x``."""
    if Jx is None:
        return sp.csr_matrix((0, J.shape[1]))
    return J if Q is None else sp.csr_matrix(Q.T @ J.toarray())


def _equality_range_part(J: sp.csr_matrix, Jx: sp.csr_matrix, E: sp.csr_matrix
                         ) -> sp.csr_matrix | None:
    """``U' J`` with ``U`` an orthonormal basis of the range of ``J_x N``, ``N`` a basis of the
    null space of the public equalities' rows ``E``: the square share's ``D = J_x (x* - x_e)``
    joins two points that both satisfy the equalities exactly (the true minimiser and the
    noisy objective's exact one), so ``x* - x_e`` lies in that null space and ``D`` in the
    range of ``J_x N`` -- a subspace of the range of ``J_x``, so ``||P J e||`` there is a
    chi-square of fewer degrees of freedom (a nearest correlation matrix: the symmetric,
    zero-diagonal directions, 10 of 25 for 5 x 5).  ``N`` from an SVD of ``E`` at a relative
    rank cut of 1e-10 (a smaller rank only enlarges ``N``, and ``U`` keeps every left singular
    vector of ``J_x N``); None when it gains nothing or is too large to form densely."""
    rows, n = Jx.shape
    if n > 1500 or E.shape[0] * n > RANGE_DENSE_MAX or rows * n > RANGE_DENSE_MAX:
        return None
    with one_blas_thread():
        N = null_space(E.toarray(), rcond=1e-10)
        if N.shape[1] >= min(rows, n):
            return None
        U = np.linalg.svd(Jx.toarray() @ N, full_matrices=False)[0]
    return sp.csr_matrix(U.T @ J.toarray())


def _perp_part(J: sp.csr_matrix, Q: np.ndarray | None) -> sp.csr_matrix | None:
    """``(I - Q Q') J`` for the residual's floor (``fit_term._norm_floor``); None without ``Q`` or
    when it is too large to form densely."""
    if Q is None or Q.shape[0] * J.shape[1] > RANGE_DENSE_MAX:
        return None
    Jd = J.toarray()
    return sp.csr_matrix(Jd - Q @ (Q.T @ Jd))
