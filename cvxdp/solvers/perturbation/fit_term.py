"""Fit terms with private targets: the certificate of perturbation's noisy minimiser.

The pattern: the private parameters appear in no constraint, only in additive terms of a
minimised objective, each term one of

* **square**: ``lam * sum_squares(a)`` (or ``lam * norm(a, 2)**2``);
* **Lipschitz**: ``lam * phi(a)`` with ``phi`` convex and ``L``-Lipschitz in a norm ``N``:
  ``norm1`` / ``sum(abs)`` / ``sum(pos)`` / ``sum(maximum(a, c))`` (``N = l1``, ``L = 1``),
  ``sum(huber(a, M))`` (``l1``, ``L = 2M``), each also with public weights ``w >= 0``
  (``sum(multiply(w, abs(a)))``: ``N`` is the l1 norm of ``diag(w) J e``); ``norm(a, 2)``,
  ``norm(a, "fro")``, ``norm_inf``, ``lambda_max`` (``N = l2``, ``L = 1``: the operator norm is
  at most the Frobenius norm);
* **affine**: a scalar affine term (e.g. ``(tau - 0.5) * sum(y - X @ w)`` of a quantile loss);

where ``a`` is affine jointly in the variables ``x`` and the private ``y`` (so ``y`` enters with
a public coefficient ``J = da/dy``) and ``lam > 0`` is public.  Every other term and every
constraint is public.  Least squares, LAD, quantile, Huber and l2 regression, Kalman smoothing,
trend filtering, facility location and nearest-matrix problems with private targets are
written this way.

Perturbation releases ``y~ = y + e`` and the released point is ``x^``, the exact minimiser of
the noisy objective ``h`` (``y`` replaced by ``y~``) over the public constraints: no tightening
is needed, since no constraint holds private data.  With ``f`` the true objective, ``f - h =
sum_k Delta_k`` over the private terms, and ``f(x^) - f(x*) <= eps_h + Delta(x^) - Delta(x*) +
[h(x^) - eps_h - h(x*)]`` (``eps_h``: the solver's optimality margin):

* square, ``r(x) = a(x, y~)``, ``v = J e``: ``Delta(x) = -2 lam v'r(x) + lam ||v||^2``, and the
  term makes ``h`` strongly convex along ``r``: ``h(x*) >= h(x_e) + lam ||D||^2``, ``D = r(x*) -
  r(x_e)``, ``x_e`` the exact minimiser (the quadratic part is exact; the rest is convex).  So
  its share of the gap is ``max_D 2 lam v'D - lam ||D||^2 = lam ||P v||^2``, ``P`` the
  projection on the range of ``da/dx`` (where ``D`` lies): second order in the noise; the
  solver's point ``x^`` adds ``2 lam ||P v|| ||r(x^) - r(x_e)|| <= 2 ||P v|| sqrt(lam eps_h)``;
* Lipschitz: ``|Delta(x)| <= lam L N(J e)`` for every ``x``: share ``2 lam L N(J e)``;
* affine: ``Delta`` is the constant ``J e``: share 0.

So ``gap <= eps_h + sum_sq lam ||P J e||^2 + sum_Lip 2 lam L N(J e)``, and the objective's
bounds are ``f(x^) <= h(x^) + sum_k sup|Delta_k(x^)|`` and ``f(x*) >= h(x^) - eps_h - sum_k
sup|Delta_k(x^)| - gap``.  The norms of ``J e`` are bounded on events of total probability
``beta`` (:func:`noise_norm`).  Every quantity is public or released.

References
----------
The expansion is the textbook analysis of least squares with a perturbed response (Boyd &
Vandenberghe 2004, "Convex Optimization", Sec. 6.1 and 9.1.2 on strong convexity); the norms'
tails are the Gaussian concentration inequality (Boucheron, Lugosi & Massart 2013,
"Concentration Inequalities", Thm 5.6), Chernoff's bound and Bernstein's inequality (ibid.,
Sec. 2.2 and 2.8).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
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
from cvxpy.atoms.elementwise.power import Power
from cvxpy.atoms.lambda_max import lambda_max
from cvxpy.atoms.norm1 import norm1
from cvxpy.atoms.norm_inf import norm_inf
from cvxpy.atoms.pnorm import Pnorm
from cvxpy.atoms.quad_over_lin import quad_over_lin

from cvxdp.solvers.perturbation.fit_bilinear import (
    bilinear_share,
    design_noise_norm,
    is_bilinear,
    second_derivatives,
)
from cvxdp.solvers.perturbation.noise import gaussian_norm_bound

__all__ = ["FitTerm", "FitModel", "detect_fit_terms", "fresh_leaves", "noise_norm",
           "norm_sum_bound", "fit_bounds"]

#: largest dense size (rows x columns) for the range projection and exact spectral norms
RANGE_DENSE_MAX = 4_000_000


@dataclass(frozen=True)
class FitTerm:
    """One private term (module doc): ``kind`` ``"square"``, ``"l1"``, ``"l2"`` (Lipschitz in
    that norm, constant ``lip``) or ``"affine"``; ``lam`` its public weight; ``J`` = ``da/dy``
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
    #: derivatives ``d^2 a / dy_k dx_j`` and the variables (by name) they run over
    B: np.ndarray | None = None
    x_names: tuple[str, ...] = ()
    #: a single Euclidean norm (:func:`_norm_floor`): the orthonormal basis ``Q`` of the range
    #: of ``da/dx`` and ``J``'s part orthogonal to it, ``(I - Q Q') J`` (None: no such part)
    Q: np.ndarray | None = None
    J_perp: sp.csr_matrix | None = None


@dataclass(frozen=True)
class FitModel:
    """The private terms of a model with the pattern, and the fresh leaves their copies use
    (``x_copies`` by user variable name, ``y_copies`` per private parameter)."""

    terms: tuple[FitTerm, ...]
    x_copies: dict[str, cp.Variable]
    y_copies: tuple[cp.Variable, ...]
    #: the objective is exactly one Euclidean norm ``lam ||a||`` (:func:`_single_norm_gap`)
    single_norm: bool = False
    #: the user's (public) constraints on the copies' variables
    constraints: tuple[Any, ...] = ()
    #: the objective on the copies (the noisy objective ``h`` once ``y_copies`` hold ``y~``)
    objective: Any = None
    #: public values computed on first use (the box diameters of :func:`_box_diameter`)
    cache: dict = field(default_factory=dict)


def _full_sum(e: Any) -> bool:
    """A ``sum`` over every entry (no axis, or an axis that leaves one number)."""
    return isinstance(e, Sum) and (e.axis is None or e.size == 1)


def _terms(expr: Any) -> list[Any]:
    """The additive terms of ``expr``: sums flattened, ``sum(a + b)`` split into ``sum(a) +
    sum(b)`` (full sums only)."""
    if isinstance(expr, AddExpression):
        return [t for a in expr.args for t in _terms(a)]
    if _full_sum(expr) and isinstance(expr.args[0], AddExpression):
        return [t for a in expr.args[0].args for t in _terms(cp.sum(a))]
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


def _classify(term: Any) -> tuple[str, float, float, Any, np.ndarray | None] | None:
    """``(kind, lam, lip, a, weights)`` of a private term (module doc), ``weights`` the rows'
    weights of ``J`` for a weighted sum (else None), or None."""
    if term.is_affine():
        return ("affine", 1.0, 1.0, term, None) if term.size == 1 else None
    peeled = _peel(term)
    if peeled is None:
        return None
    lam, t = peeled
    if isinstance(t, quad_over_lin) and _public_scalar(t.args[1]) is not None:
        k = _public_scalar(t.args[1])
        return ("square", lam / k, 0.0, t.args[0], None) if k > 0 else None
    if (isinstance(t, Power) and float(getattr(t.p, "value", t.p)) == 2.0
            and isinstance(t.args[0], Pnorm)
            and float(t.args[0].p) == 2.0 and t.args[0].axis is None):
        return "square", lam, 0.0, t.args[0].args[0], None
    if isinstance(t, norm1) and t.axis is None:
        return "l1", lam, 1.0, t.args[0], None
    if isinstance(t, (norm_inf, lambda_max)) and getattr(t, "axis", None) is None:
        return "l2", lam, 1.0, t.args[0], None
    if isinstance(t, Pnorm) and t.axis is None and float(t.p) == 2.0:
        return "euclid", lam, 1.0, t.args[0], None
    if isinstance(t, Pnorm) and t.axis is None and float(t.p) > 2.0:
        return "l2", lam, 1.0, t.args[0], None
    if isinstance(t, Pnorm) and t.axis is None and float(t.p) == 1.0:
        return "l1", lam, 1.0, t.args[0], None
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
        found = _elementwise_lipschitz(e)
        if found is not None:
            return "l1", lam, found[0], found[1], weights
    if isinstance(t, cp_abs) and t.size == 1:
        return "l1", lam, 1.0, t.args[0], None
    return None


def _elementwise_lipschitz(e: Any) -> tuple[float, Any] | None:
    """``(L, a)`` for ``e = psi(a)`` elementwise with ``psi`` L-Lipschitz (``abs``, ``huber``,
    ``maximum`` with a public side), else None."""
    if isinstance(e, cp_abs):
        return 1.0, e.args[0]
    if isinstance(e, huber) and _public_scalar(e.M) is not None:
        return 2.0 * _public_scalar(e.M), e.args[0]
    if isinstance(e, maximum) and len(e.args) == 2:
        pub = [a.is_constant() and not a.parameters() for a in e.args]
        if sum(pub) == 1:
            return 1.0, e.args[pub.index(False)]
    return None


def detect_fit_terms(problem: cp.Problem, params: tuple[Any, ...]) -> FitModel | None:
    """The pattern of the module doc, from the model's structure only (never a private value).

    ``params`` are the private parameters in the order of the noise vector (plain parameters:
    each entry one noise coordinate, column-major).  None when the model does not have the
    pattern.
    """
    if not params or not isinstance(problem.objective, cp.Minimize):
        return None
    ids = {p.id for p in params}
    if any(ids & {p.id for p in c.parameters()} for c in problem.constraints):
        return None
    found = []
    every = _terms(problem.objective.expr)
    for term in every:
        if ids & {p.id for p in term.parameters()}:
            c = _classify(term)
            if c is None:
                return None
            found.append(c)
    leaves = fresh_leaves(problem, params) if found else None
    if leaves is None:
        return None
    x_copies, y_copies, by_obj = leaves
    terms = []
    for kind, lam, lip, a, weights in found:
        copy = a.tree_copy(by_obj)
        if ids & {p.id for p in copy.parameters()}:
            return None
        if not copy.is_affine():
            if kind != "square" or not is_bilinear(a, problem, params):
                return None
            derivs = second_derivatives(copy, x_copies, y_copies)
            if derivs is None:
                return None
            J0, B, names = derivs
            terms.append(FitTerm(kind="bilinear", lam=float(lam), lip=0.0,
                                 J=sp.csr_matrix(J0), residual=copy, B=B,
                                 x_names=tuple(names)))
            continue
        J, Jx = _jacobians(copy, x_copies, y_copies)
        if weights is not None:
            J = sp.csr_matrix(sp.diags(weights) @ J)
        square = kind == "square"
        single = kind == "euclid" and len(every) == 1
        Q = _range_basis(Jx) if square or single else None
        J_perp = _perp_part(J, Q) if single else None
        terms.append(FitTerm(kind="l2" if kind == "euclid" else kind, lam=float(lam),
                             lip=float(lip), J=J,
                             J_range=_range_part(J, Jx, Q) if square or single else None,
                             residual=copy if square or single else None,
                             Q=None if J_perp is None else Q, J_perp=J_perp))
    var_only = {id(v): x_copies[v.name()] for v in problem.variables()}
    return FitModel(tuple(terms), x_copies, y_copies,
                    single_norm=len(every) == 1 and found[0][0] == "euclid",
                    constraints=tuple(c.tree_copy(var_only) for c in problem.constraints),
                    objective=problem.objective.expr.tree_copy(by_obj))


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
               ) -> tuple[sp.csr_matrix, sp.csr_matrix | None]:
    """``(da/dy, da/dx)`` of an affine expression (its gradient at any point: zeros here)."""
    leaves = [*x_copies.values(), *y_copies]
    for v in leaves:
        v.value = np.zeros(v.shape)
    grad = expr.grad
    for v in leaves:
        v.value = None
    rows = int(expr.size)
    ys = [sp.csr_matrix(grad[y]).T if grad.get(y) is not None else
          sp.csr_matrix((rows, int(y.size))) for y in y_copies]
    xs = [sp.csr_matrix(grad[v]).T for v in x_copies.values() if grad.get(v) is not None]
    return sp.csr_matrix(sp.hstack(ys)), (sp.csr_matrix(sp.hstack(xs)) if xs else None)


def _range_basis(Jx: sp.csr_matrix | None) -> np.ndarray | None:
    """``Q``, every left singular vector of ``J_x = da/dx`` (no rank cut-off, so no numerical
    tolerance drops a direction), when ``J_x`` has fewer columns than rows and is small enough
    to factor densely; None otherwise."""
    if Jx is None:
        return None
    rows, cols = Jx.shape
    if cols >= rows or rows * cols > RANGE_DENSE_MAX:
        return None
    return np.linalg.svd(Jx.toarray(), full_matrices=False)[0]


def _range_part(J: sp.csr_matrix, Jx: sp.csr_matrix | None, Q: np.ndarray | None
                ) -> sp.csr_matrix:
    """``Q' J`` (``Q`` of :func:`_range_basis`, spanning a space that contains the range of
    ``J_x``), else ``J``: ``D = J_x (x* - x^)`` lies in that range, so only ``P v`` enters
    (``||P J e|| = ||Q' J e||``).  No rows when ``a`` does not depend on ``x``."""
    if Jx is None:
        return sp.csr_matrix((0, J.shape[1]))
    return J if Q is None else sp.csr_matrix(Q.T @ J.toarray())


def _perp_part(J: sp.csr_matrix, Q: np.ndarray | None) -> sp.csr_matrix | None:
    """``(I - Q Q') J`` for the residual's floor (:func:`_norm_floor`); None without ``Q`` or
    when it is too large to form densely."""
    if Q is None or Q.shape[0] * J.shape[1] > RANGE_DENSE_MAX:
        return None
    Jd = J.toarray()
    return sp.csr_matrix(Jd - Q @ (Q.T @ Jd))


def noise_norm(J: sp.csr_matrix, sigma: np.ndarray, beta: float, norm: str,
               noise: str = "gaussian") -> float:
    """``V`` with ``N(J e) <= V`` with probability ``>= 1 - beta``; ``N`` is ``"l2"``,
    ``"l1"`` or ``"abs"`` (a single row, two-sided); ``e_j = sigma_j g_j``.

    Gaussian ``g``: with ``M = J diag(sigma)``, ``N(M g) <= E N(M g) + Lip sqrt(2 ln(1/beta))``
    (Gaussian concentration): l2 ``E <= ||M||_F``, ``Lip = ||M||_2``, or ``||M||_2`` times the
    chi-square quantile of ``||P g||`` (``P`` the projection on ``M``'s row space), the
    smaller; l1 ``E = sqrt(2/pi)
    sum_i ||M_i||`` (rows), ``Lip <= sqrt(rows) ||M||_2``; a single row ``|m'g| <= ||m||
    sqrt(2 ln(2/beta))``.  Laplace ``g``: ``N(J e) <= sum_j w_j |g_j|`` (triangle inequality,
    ``w_j = sigma_j N(J_j)``), a weighted sum of independent Exp(1) variables
    (:func:`_exp_sum_bound`), or the Gaussian bound given the scale mixture's variances
    (commented in the code), whichever is smaller (chosen from public values: its own event
    holds).
    """
    sigma = np.asarray(sigma, dtype=float)
    M = sp.csr_matrix(J @ sp.diags(sigma))
    if M.shape[0] == 0 or M.nnz == 0:
        return 0.0
    spec = _spectral_bound(M)
    if noise == "laplace":
        if norm == "l1":
            w = np.asarray(abs(M).sum(axis=0)).ravel()
        else:
            w = np.sqrt(np.asarray(M.multiply(M).sum(axis=0)).ravel())
        best = _exp_sum_bound(w, beta)
        K = int(sigma.size)
        rows = M.shape[0] if norm == "l1" else 1
        # the Laplace as a Gaussian scale mixture, g_j = sqrt(2 W_j) Z_j with W_j ~ Exp(1):
        # given W, M g is Gaussian with E N <= sqrt(2/pi)^[l1] sqrt(rows sum_j 2 W_j ||M_j||^2)
        # (Cauchy-Schwarz over rows for l1) and Lipschitz constant <= sqrt(rows)^[l1] ||M||_2
        # sqrt(2 max W); three events of beta/3: the Exp(1) sum (Chernoff), max W <= ln(3K/beta)
        # (union bound), the conditional Gaussian tail
        c = np.asarray(M.multiply(M).sum(axis=0)).ravel()
        mean = math.sqrt(rows * 2.0 * _exp_sum_bound(c, beta / 3.0))
        if norm == "l1":
            mean *= math.sqrt(2.0 / math.pi)
        lip = math.sqrt(rows) * spec * math.sqrt(2.0 * math.log(3.0 * K / beta))
        best = min(best, mean + lip * math.sqrt(2.0 * math.log(3.0 / beta)))
        return float(best)
    if norm == "abs":
        return spec * math.sqrt(2.0 * math.log(2.0 / beta))
    tail = math.sqrt(2.0 * math.log(1.0 / beta))
    if norm == "l1":
        rows = np.sqrt(np.asarray(M.multiply(M).sum(axis=1)).ravel())
        return float(math.sqrt(2.0 / math.pi) * rows.sum() + math.sqrt(M.shape[0]) * spec * tail)
    # ||M g||^2 <= ||M||_2^2 ||P g||^2 with P the projection on M's row space, of rank at most
    # r = min(shape): chi-square with <= r degrees of freedom (its exact quantile)
    rank = min(M.shape)
    return min(math.sqrt(float(M.multiply(M).sum())) + spec * tail,
               spec * float(gaussian_norm_bound(rank, math.log(1.0 / beta))))


def _exp_sum_bound(w: np.ndarray, beta: float) -> float:
    """``sum_j w_j X_j <= B`` with probability ``>= 1 - beta`` for independent ``X_j ~ Exp(1)``
    and ``w >= 0`` (Chernoff: ``min_t (ln(1/beta) - sum_j ln(1 - t w_j)) / t`` over ``0 < t <
    1/max w``, on a geometric grid of ``t``: any ``t`` gives a valid bound)."""
    w = np.asarray(w, dtype=float)
    w = w[w > 0]
    if not w.size:
        return 0.0
    ts = np.geomspace(1e-6, 1.0 - 1e-9, 400) / float(w.max())
    return float(min((math.log(1.0 / beta) - float(np.sum(np.log1p(-t * w)))) / t for t in ts))


def _spectral_bound(M: sp.csr_matrix) -> float:
    """``||M||_2``: exact (dense SVD, rounded up by 1e-12 relative) when ``M`` is small, and
    never above ``sqrt(||M||_1 ||M||_inf)`` (Hoelder)."""
    absM = abs(M)
    norm1_ = float(np.asarray(absM.sum(axis=0)).max(initial=0.0))
    norm_inf_ = float(np.asarray(absM.sum(axis=1)).max(initial=0.0))
    holder = math.sqrt(norm1_ * norm_inf_)
    if M.shape[0] * M.shape[1] <= RANGE_DENSE_MAX and min(M.shape) <= 500:
        return min(holder, float(np.linalg.norm(M.toarray(), 2)) * (1.0 + 1e-12))
    return holder


def fit_bounds(model: FitModel, primal: dict[str, Any], noisy_y: tuple[np.ndarray, ...],
               h_min: float, sigma: np.ndarray, beta: float, noise: str
               ) -> tuple[float, float, float]:
    """``(upper on f(x), lower on f(x*), gap bound of x)`` of the module doc at a point ``x``
    feasible for the public constraints (its variable values ``primal``, by name), from the
    released ``y~``, a lower bound ``h_min`` on the noisy objective's minimum (the solver's
    optimum less its margin) and the noise scales ``sigma``.

    ``delta = h(x) - h_min`` (``h(x)`` evaluated exactly) plays the solver's margin ``eps_h``
    of the module doc for any point: it bounds ``h(x) - h(x_e)``.  The Lipschitz terms' ``sum_k
    lam_k L_k N_k(J_k e)`` is bounded as one function of the noise (:func:`norm_sum_bound`), and
    so are the affine terms' ``sum |J e|``; each square term has two events (``||J e||`` and its
    projection).  The events share ``beta`` equally."""
    h_pt = _noisy_objective(model, primal, noisy_y)
    delta = max(h_pt - h_min, 0.0)
    squares = [t for t in model.terms if t.kind == "square"]
    bilinear = [t for t in model.terms if t.kind == "bilinear"]
    lips = [(t.lam * t.lip, t.kind, t.J) for t in model.terms if t.kind in ("l1", "l2")]
    affs = [(1.0, "abs", t.J) for t in model.terms if t.kind == "affine"]
    floor = model.single_norm and model.terms[0].J_perp is not None
    b = beta / (2 * len(squares) + 2 * len(bilinear) + bool(lips) + bool(affs)
                + model.single_norm + 2 * floor)
    gap, sup = delta, 0.0
    for t in bilinear:
        R, x_norm = _design_at(model, t, primal, noisy_y)
        share, s_t = bilinear_share(
            t.lam, V0=noise_norm(t.J, sigma, b, "l2", noise),
            omega=design_noise_norm(t.B, sigma, b, noise), R=R, x_norm=x_norm,
            r_norm=_residual(model, t, primal, noisy_y), eps_h=delta,
            t_max=lambda t=t: _box_diameter(model, t.x_names))
        gap += share - delta       # bilinear_share counts f(x) - f(x_e)'s delta itself
        sup += s_t
    for t in squares:
        V = noise_norm(t.J, sigma, b, "l2", noise)
        Vp = noise_norm(t.J_range, sigma, b, "l2", noise)
        r = _residual(model, t, primal, noisy_y)
        # lam ||P v||^2, plus 2 lam ||P v|| ||r(x) - r(x_e)|| for the point x against the
        # exact minimiser x_e: ||r(x) - r(x_e)||^2 <= delta / lam (strong convexity along r)
        gap += t.lam * Vp**2 + 2.0 * Vp * math.sqrt(t.lam * delta)
        sup += 2.0 * t.lam * V * r + t.lam * V**2
    if lips:
        B = norm_sum_bound(lips, sigma, b, noise)
        if model.single_norm:
            t0 = model.terms[0]
            Vp = noise_norm(t0.J_range, sigma, b, "l2", noise)
            A = h_pt - B
            if floor:
                A = max(A, _norm_floor(model, t0, primal, noisy_y, sigma, b, noise))
            gap += min(2.0 * B, _single_norm_gap(t0.lam, h_pt, delta, A, Vp))
        else:
            gap += 2.0 * B
        sup += B
    if affs:
        sup += norm_sum_bound(affs, sigma, b, noise)
    return h_pt + sup, h_pt - sup - gap, gap


@contextmanager
def _at_point(model: FitModel, primal: dict[str, Any], noisy_y: tuple[np.ndarray, ...]
              ) -> Iterator[None]:
    """The copies' leaves hold the point's variable values (zeros for a variable without one)
    and the released ``y~`` inside the block, nothing after it."""
    for name, v in model.x_copies.items():
        v.value = np.zeros(v.shape) if primal.get(name) is None else np.asarray(
            primal[name], dtype=float)
    for y, val in zip(model.y_copies, noisy_y, strict=True):
        y.value = np.asarray(val, dtype=float)
    try:
        yield
    finally:
        for v in [*model.x_copies.values(), *model.y_copies]:
            v.value = None


def _noisy_objective(model: FitModel, primal: dict[str, Any],
                     noisy_y: tuple[np.ndarray, ...]) -> float:
    """``h(x)``: the objective at the point's variable values with the released ``y~``."""
    with _at_point(model, primal, noisy_y):
        value = model.objective.value
    return math.inf if value is None else float(value)


def _single_norm_gap(lam: float, h_value: float, eps_h: float, A: float, Vp: float) -> float:
    """The gap when the objective is exactly ``f = lam ||a||`` (Euclidean): ``x^`` also
    minimises ``h^2``, a square term of weight ``lam^2``, so ``f(x^)^2 - f(x*)^2 <= c = e2 +
    lam^2 ||P J e||^2 + 2 lam ||P J e|| sqrt(e2)`` (the square case, with ``h^2``'s margin ``e2 =
    2 h(x^) eps_h >= (h + min h) eps_h``),
    and with ``g = f(x^) - f(x*) >= 0``: ``g (2 f(x^) - g) <= c``, so ``g <= A - sqrt(A^2 -
    c)`` for any ``A <= f(x^)`` with ``A^2 >= c`` (the root is decreasing in ``A``): ``A =
    h(x^) - B`` (``|f - h| <= lam ||J e|| <= B``) or the floor of :func:`_norm_floor`, the
    larger.  ``inf`` when ``A^2 < c``."""
    eps2 = 2.0 * h_value * eps_h
    c = eps2 + (lam * Vp) ** 2 + 2.0 * lam * Vp * math.sqrt(eps2)
    if A <= 0 or A * A < c:
        return math.inf
    return c / (A + math.sqrt(A * A - c))  # = A - sqrt(A^2 - c), without cancellation


def _norm_floor(model: FitModel, term: FitTerm, primal: dict[str, Any],
                noisy_y: tuple[np.ndarray, ...], sigma: np.ndarray, beta: float,
                noise: str) -> float:
    """A lower bound on ``f(x) = lam ||a(x, y)||`` valid at every ``x``, from the residual's part
    outside the range of ``da/dx``.

    With ``P = Q Q'`` (``Q`` spanning a space that contains the range of ``da/dx``), ``(I - P)
    a(x, y) = w`` is the same vector for every ``x`` (``a`` is affine, ``J_x x`` lies in the
    range), so ``f(x) >= lam ||w||``.  At the released point ``(I - P) a(x^, y~) = w + (I - P)
    J e`` with ``rho`` its (released) norm: ``rho^2 <= ||w||^2 + 2 ||w|| s_1 + V_perp^2`` on two
    events of ``beta`` each, ``|u'(I - P) J e| <= s_1`` for the fixed unit ``u = w / ||w||``
    (one Gaussian direction) and ``||(I - P) J e|| <= V_perp`` (:func:`noise_norm`), so
    ``||w|| >= sqrt(max(rho^2 - V_perp^2 + s_1^2, 0)) - s_1``.  Unlike ``h(x^) - lam ||J e||``
    it loses only the fluctuation of ``||(I - P) J e||^2`` around its mean, not the whole noise
    norm: on the gallery's l2 regression (20 private responses, 4 unknowns) the floor is near
    the true residual while ``h - B`` is 40% below it."""
    with _at_point(model, primal, noisy_y):
        r = term.residual.value
    if r is None:
        return -math.inf
    r = np.asarray(r, dtype=float).ravel(order="F")
    rho = float(np.linalg.norm(r - term.Q @ (term.Q.T @ r)))
    V = noise_norm(term.J_perp, sigma, beta, "l2", noise)
    s1 = noise_norm(term.J_perp, sigma, beta, "abs", noise)
    return term.lam * (math.sqrt(max(rho * rho - V * V + s1 * s1, 0.0)) - s1)


def norm_sum_bound(parts: list[tuple[float, str, sp.csr_matrix]], sigma: np.ndarray,
                   beta: float, noise: str) -> float:
    """``B`` with ``F(e) = sum_k w_k N_k(J_k e) <= B`` with probability ``>= 1 - beta``
    (``parts``: ``(w_k >= 0, N_k in {"l1", "l2", "abs"}, J_k)``), the smallest of bounds
    chosen from public values (so its own event is the one that holds).

    Gaussian: ``F`` is convex with ``E F <= sum_k w_k E N_k`` (l2: ``||M_k||_F``; l1 and abs:
    ``sqrt(2/pi) sum_rows ||M_k,i||``; ``M_k = J_k diag(sigma)``) and Lipschitz constant at most
    ``min(sum_k a_k ||M_k||_2, ||a|| ||[M_1; M_2; ...]||_2)`` (Cauchy-Schwarz), ``a_k = w_k
    sqrt(rows_k)`` for l1 and ``w_k`` otherwise: ``B = E F + Lip sqrt(2 ln(1/beta))``.
    Laplace: the triangle inequality ``F <= sum_j c_j |g_j|``, ``c_j = sigma_j sum_k w_k
    N_k(J_k,j)`` (:func:`_exp_sum_bound`), or the sum of the terms' own bounds
    (:func:`noise_norm`) at ``beta / #terms`` each.
    """
    sigma = np.asarray(sigma, dtype=float)
    if noise == "laplace":
        c = np.zeros(sigma.size)
        for w, norm, J in parts:
            A = abs(J) if norm in ("l1", "abs") else None
            cols = (np.asarray(A.sum(axis=0)).ravel() if A is not None else
                    np.sqrt(np.asarray(J.multiply(J).sum(axis=0)).ravel()))
            c += w * cols
        per_term = sum(w * noise_norm(J, sigma, beta / len(parts), "l2" if n == "l2" else "l1",
                                      noise) for w, n, J in parts)
        return float(min(_exp_sum_bound(c * sigma, beta), per_term))
    mean, crude, a2, Ms = 0.0, 0.0, 0.0, []
    for w, norm, J in parts:
        M = sp.csr_matrix(J @ sp.diags(sigma))
        Ms.append(M)
        if norm == "l2":
            mean += w * math.sqrt(float(M.multiply(M).sum()))
            a = w
        else:
            rows = np.sqrt(np.asarray(M.multiply(M).sum(axis=1)).ravel())
            mean += w * math.sqrt(2.0 / math.pi) * float(rows.sum())
            a = w * (math.sqrt(M.shape[0]) if norm == "l1" else 1.0)
        crude += a * _spectral_bound(M)
        a2 += a * a
    joint = math.sqrt(a2) * _spectral_bound(sp.csr_matrix(sp.vstack(Ms)))
    return mean + min(crude, joint) * math.sqrt(2.0 * math.log(1.0 / beta))


def _design_at(model: FitModel, term: FitTerm, primal: dict[str, Any],
               noisy_y: tuple[np.ndarray, ...]) -> tuple[np.ndarray, float]:
    """``(R, ||x^||)``: ``dr/dx`` of a bilinear term at the released point and data, over the
    term's variables, and the norm of those variables' released values."""
    with _at_point(model, primal, noisy_y):
        g = term.residual.grad
        R = np.hstack([np.asarray(g[model.x_copies[n]].todense()).T for n in term.x_names])
        xs = np.concatenate([np.ravel(model.x_copies[n].value, order="F")
                             for n in term.x_names])
    return R, float(np.linalg.norm(xs))


def _box_diameter(model: FitModel, names: tuple[str, ...]) -> float:
    """``||hi - lo||`` of the box of the named variables over the user's (public) constraints:
    two exact solves per entry (at most 50 entries; ``inf`` beyond, or when unbounded)."""
    if names in model.cache:
        return model.cache[names]
    model.cache[names] = _box_diameter_solve(model, names)
    return model.cache[names]


def _box_diameter_solve(model: FitModel, names: tuple[str, ...]) -> float:
    vs = [model.x_copies[n] for n in names]
    size = sum(int(v.size) for v in vs)
    if size > 50 or not model.constraints:
        return math.inf
    # one parametrised program (compiled once: DPP), re-solved for +-e_j: min and max of x_j
    c = cp.Parameter(size)
    prob = cp.Problem(cp.Minimize(c @ cp.hstack([cp.vec(v, order="F") for v in vs])),
                      list(model.constraints))
    total = 0.0
    try:
        for j in range(size):
            ends = []
            for sign in (1.0, -1.0):
                c.value = sign * np.eye(size)[j]
                prob.solve(solver=cp.CLARABEL)
                if prob.status != cp.OPTIMAL:
                    return math.inf
                ends.append(sign * float(prob.value))
            total += (ends[1] - ends[0] + 2e-8 * (1.0 + abs(ends[0]) + abs(ends[1]))) ** 2
    finally:
        for v in model.x_copies.values():
            v.value = None
    return math.sqrt(total)


def _residual(model: FitModel, term: FitTerm, primal: dict[str, Any],
              noisy_y: tuple[np.ndarray, ...]) -> float:
    """``||r(x^)||`` of a square term: its residual at the released point and data."""
    with _at_point(model, primal, noisy_y):
        r = term.residual.value
    return math.inf if r is None else float(np.linalg.norm(np.asarray(r, dtype=float)))
