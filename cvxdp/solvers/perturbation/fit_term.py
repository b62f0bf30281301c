"""A least-squares fit to private targets: the sharp certificate of perturbation's answer.

The pattern: every private parameter appears only in ONE additive term of a minimised objective,
``lam * sum_squares(a(x, y))`` with ``a`` affine jointly in the variables ``x`` and the private
``y`` (``y`` enters with a public coefficient ``J = da/dy``), everything else public (the other
terms and every constraint).  Kalman smoothing, trend filtering, ridge / non-negative / constrained
least squares with a private response are written this way.

Perturbation releases ``y~ = y + e`` (Gaussian, ``e_j ~ N(0, sigma_j^2)``) and the released point
is ``x^``, the exact minimiser of the noisy objective ``h`` (``y`` replaced by ``y~``) over the
public constraints -- no tightening is needed, since no constraint holds private data.  With
``f`` the true objective, ``r(x) = a(x, y~)`` and ``v = J e``:

* ``f(x) = h(x) - 2 lam v'r(x) + lam ||v||^2`` (expand ``||r(x) - v||^2``);
* ``h(x) >= h(x^) + lam ||r(x) - r(x^)||^2`` for every feasible ``x`` (the quadratic part is
  exact, the rest is convex and ``x^`` minimises ``h``: first-order optimality);
* so, with ``D = r(x*) - r(x^)`` and ``eps_h`` the solver's optimality margin,
  ``f(x^) - f(x*) <= eps_h - lam ||D||^2 + 2 lam v'D <= eps_h + lam ||P v||^2``, ``P`` the
  projection on the range of ``da/dx`` (where ``D`` lies).

On the event ``||P J e|| <= V_P`` (for a matrix ``M``: ``||M e|| <= sqrt(tr S) +
||M diag(sigma)||_2 sqrt(2 ln(1/beta))``, ``S = M diag(sigma^2) M'``; Gaussian concentration of
the ``||M diag(sigma)||_2``-Lipschitz norm, with ``E||M e|| <= sqrt(tr S)``) the sub-optimality
is at most ``eps_h + lam V_P^2``: second order in the noise, where the robust counterpart's
slack test is first order in it.  The objective's bounds follow on the event ``||J e|| <= V``
too: ``f(x^) <= h(x^) + 2 lam V ||r(x^)|| + lam V^2`` and ``f(x*) >= h(x^) - eps_h - 2 lam V
||r(x^)|| - gap`` (the same expansion at ``x^`` and the gap bound); each event is given half of
``beta``.  Every quantity is public or released.

References
----------
The expansion is the textbook analysis of least squares with a perturbed response (e.g. Boyd &
Vandenberghe 2004, "Convex Optimization", Sec. 6.1 and 9.1.2 on strong convexity); the norm's
tail is the Gaussian concentration inequality (Boucheron, Lugosi & Massart 2013,
"Concentration Inequalities", Thm 5.6).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import cvxpy as cp
import numpy as np
import scipy.sparse as sp
from cvxpy.atoms.affine.binary_operators import DivExpression, MulExpression, multiply
from cvxpy.atoms.quad_over_lin import quad_over_lin

__all__ = ["FitTerm", "detect_fit_term", "fit_noise_norm", "fit_bounds"]


@dataclass(frozen=True)
class FitTerm:
    """The fit term ``lam * sum_squares(a)`` of the pattern (module doc), public structure only.

    ``residual`` is a copy of ``a`` whose leaves are fresh variables (``x_copies``, one per user
    variable, by name) and fresh variables for the private parameters (``y_copies``, in the
    order of the noise vector); ``J`` is ``da/dy`` (sparse, ``size(a) x K``) and ``J_range``
    its projection on the range of the variable part (:func:`_range_part`; ``J`` itself when
    that range is not smaller).
    """

    lam: float
    J: sp.csr_matrix
    J_range: sp.csr_matrix
    residual: Any
    x_copies: dict[str, cp.Variable]
    y_copies: tuple[cp.Variable, ...]


def _terms(expr: Any) -> list[Any]:
    """The additive terms of ``expr`` (nested sums flattened)."""
    if isinstance(expr, cp.atoms.affine.add_expr.AddExpression):
        return [t for a in expr.args for t in _terms(a)]
    return [expr]


def _scaled_square(term: Any) -> tuple[float, Any] | None:
    """``(lam, a)`` when ``term`` is ``lam * sum_squares(a)`` with a public scalar ``lam > 0``
    (products and quotients by positive constants peeled), else None."""
    lam = 1.0
    while True:
        if isinstance(term, (multiply, MulExpression)) and len(term.args) == 2:
            const = [a for a in term.args if a.is_constant() and not a.parameters()]
            other = [a for a in term.args if not (a.is_constant() and not a.parameters())]
            if len(const) != 1 or len(other) != 1 or const[0].size != 1:
                return None
            k = float(np.asarray(const[0].value).ravel()[0])
            if not k > 0:
                return None
            lam, term = lam * k, other[0]
        elif isinstance(term, DivExpression):
            den = term.args[1]
            if not (den.is_constant() and not den.parameters() and den.size == 1):
                return None
            k = float(np.asarray(den.value).ravel()[0])
            if not k > 0:
                return None
            lam, term = lam / k, term.args[0]
        else:
            break
    if not isinstance(term, quad_over_lin):
        return None
    den = term.args[1]
    if not (den.is_constant() and not den.parameters()):
        return None
    k = float(np.asarray(den.value).ravel()[0])
    if not k > 0:
        return None
    return lam / k, term.args[0]


def detect_fit_term(problem: cp.Problem, params: tuple[Any, ...]) -> FitTerm | None:
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
    hits = [t for t in _terms(problem.objective.expr) if ids & {p.id for p in t.parameters()}]
    if len(hits) != 1 or {p.id for p in hits[0].parameters()} & ids != ids:
        return None
    found = _scaled_square(hits[0])
    if found is None:
        return None
    lam, a = found
    x_copies = {v.name(): cp.Variable(v.shape) for v in problem.variables()}
    y_copies = tuple(cp.Variable(p.shape) for p in params)
    mapping = {v.id: x_copies[v.name()] for v in problem.variables()}
    mapping.update({p.id: y for p, y in zip(params, y_copies, strict=True)})
    by_obj = {id(leaf): mapping[leaf.id] for leaf in [*problem.variables(), *params]}
    residual = a.tree_copy(by_obj)
    if not residual.is_affine() or {p.id for p in residual.parameters()} & ids:
        return None
    # J = da/dy: the gradient of an affine expression, at any point (zeros here)
    for v in [*x_copies.values(), *y_copies]:
        v.value = np.zeros(v.shape)
    grad = residual.grad
    blocks = []
    for y in y_copies:
        g = grad.get(y)
        if g is None:
            return None
        blocks.append(sp.csr_matrix(g).T)
    xs = [sp.csr_matrix(grad[v]).T for v in x_copies.values() if grad.get(v) is not None]
    for v in [*x_copies.values(), *y_copies]:
        v.value = None
    J = sp.csr_matrix(sp.hstack(blocks))
    return FitTerm(lam=float(lam), J=J, J_range=_range_part(J, xs), residual=residual,
                   x_copies=x_copies, y_copies=y_copies)


#: largest dense size (rows x columns) of the fit's variable part for the range projection
RANGE_DENSE_MAX = 4_000_000


def _range_part(J: sp.csr_matrix, xs: list[sp.csr_matrix]) -> sp.csr_matrix:
    """``Q' J`` with ``Q`` an orthonormal basis of a space containing the range of the fit's
    variable part ``J_x = da/dx``, when ``J_x`` has fewer columns than rows (else ``J``).

    ``D = r(x*) - r(x^) = J_x (x* - x^)`` lies in that range, so only ``P v`` (``P = Q Q'``)
    enters the bound: ``max_D -lam ||D||^2 + 2 lam v'D = lam ||P v||^2`` and ``||P J e|| =
    ||Q' J e||``.  ``Q`` is every left singular vector of ``J_x`` (no rank cut-off, so no
    numerical tolerance can drop a direction of the range)."""
    if not xs:
        return J
    Jx = sp.hstack(xs)
    rows, cols = Jx.shape
    if cols >= rows or rows * cols > RANGE_DENSE_MAX:
        return J
    U = np.linalg.svd(Jx.toarray(), full_matrices=False)[0]
    return sp.csr_matrix(U.T @ J.toarray())


def fit_noise_norm(fit: FitTerm, sigma: np.ndarray, beta: float, noise: str = "gaussian",
                   projected: bool = False) -> float:
    """``V``: ``||J e|| <= V`` with probability ``>= 1 - beta`` (module doc); with
    ``projected``, for ``J_range`` instead of ``J``.

    Gaussian ``e ~ N(0, diag(sigma^2))``: ``sqrt(tr S) + ||J diag(sigma)||_2 sqrt(2 ln(1/beta))``
    with ``||J diag(sigma)||_2`` bounded by ``sqrt(||.||_1 ||.||_inf)``.  Laplace ``e_j = sigma_j
    g_j``, ``g_j`` standard Laplace: the smaller of ``sum_j w_j |g_j|`` (triangle inequality,
    ``w_j = sigma_j ||J_j||``; a weighted sum of independent Exp(1) variables, bounded by its
    Chernoff bound ``min_t (ln(1/beta) - sum_j ln(1 - t w_j)) / t``, ``0 < t < 1/max w``) and
    ``||J diag(sigma)||_2 ||g||_2`` with ``||g||_2`` bounded as commented below.
    """
    sigma = np.asarray(sigma, dtype=float)
    J = fit.J_range if projected else fit.J
    spec = _spectral_bound(sp.csr_matrix(J @ sp.diags(sigma)))
    if noise == "laplace":
        w = np.sqrt(np.asarray(J.multiply(J).sum(axis=0)).ravel()) * sigma
        w = w[w > 0]
        if not w.size:
            return 0.0
        ts = np.geomspace(1e-6, 1.0 - 1e-9, 400) / float(w.max())
        triangle = min((math.log(1.0 / beta) - float(np.sum(np.log1p(-t * w)))) / t
                       for t in ts)
        # ||J e|| <= ||J diag(sigma)||_2 ||g||_2: every |g_j| <= L = ln(2K/beta) (union bound,
        # beta/2), then Bernstein on sum_j min(g_j^2, L^2) (mean <= 2, variance <= E g^4 = 24,
        # range L^2; beta/2).  The smaller of the two bounds is chosen from public values, so
        # its own event is the one that holds.
        K = int(sigma.size)
        L = math.log(2.0 * K / beta)
        lb = math.log(2.0 / beta)
        g2 = 2.0 * K + math.sqrt(2.0 * 24.0 * K * lb) + 2.0 / 3.0 * L**2 * lb
        return float(min(triangle, spec * math.sqrt(g2)))
    M = sp.csr_matrix(J @ sp.diags(sigma))
    trace = float(M.multiply(M).sum())
    return math.sqrt(trace) + spec * math.sqrt(2.0 * math.log(1.0 / beta))


def _spectral_bound(M: sp.csr_matrix) -> float:
    """``||M||_2``: exact (dense SVD, rounded up by 1e-12 relative) when ``M`` is small, else
    ``sqrt(||M||_1 ||M||_inf)`` (Hoelder)."""
    absM = abs(M)
    norm1 = float(np.asarray(absM.sum(axis=0)).max(initial=0.0))
    norm_inf = float(np.asarray(absM.sum(axis=1)).max(initial=0.0))
    holder = math.sqrt(norm1 * norm_inf)
    if M.shape[0] * M.shape[1] <= RANGE_DENSE_MAX and min(M.shape) <= 500:
        return min(holder, float(np.linalg.norm(M.toarray(), 2)) * (1.0 + 1e-12))
    return holder


def fit_bounds(fit: FitTerm, primal: dict[str, Any], noisy_y: tuple[np.ndarray, ...],
               h_value: float, eps_h: float, V: float, V_range: float
               ) -> tuple[float, float, float]:
    """``(upper on f(x^), lower on f(x*), gap bound)`` of the module doc, from the released
    point's variable values ``primal`` (by name), the released ``y~``, the noisy objective's
    value ``h(x^)`` with its optimality margin ``eps_h``, and the bounds ``V`` on ``||J e||``
    and ``V_range`` on its projection ``||J_range e||``."""
    for name, v in fit.x_copies.items():
        v.value = None if primal.get(name) is None else np.asarray(primal[name], dtype=float)
    for y, val in zip(fit.y_copies, noisy_y, strict=True):
        y.value = np.asarray(val, dtype=float)
    r = fit.residual.value
    for v in [*fit.x_copies.values(), *fit.y_copies]:
        v.value = None
    r_norm = float(np.linalg.norm(np.asarray(r, dtype=float)))
    gap = eps_h + fit.lam * V_range**2
    cross = 2.0 * fit.lam * V * r_norm
    return h_value + cross + fit.lam * V**2, h_value - eps_h - cross - gap, gap
