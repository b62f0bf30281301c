"""A second-order bound for objective perturbation from the public terms' curvature.

Objective perturbation (Thm C.12 of Song, Xue & Zhang (2025), "Differential Privacy for
Euclidean Jordan Algebra with Applications to Private Symmetric Cone Programming") releases
``c~ = c + z`` and the minimiser ``x~`` of ``c~'x`` over the public set ``X``; on the event
``||z_S|| <= t`` its own bound is first order, ``2 R t``.  :mod:`cvxdp.solvers.
objective_certificate`'s level search makes it second order at two exact solves per private
coordinate and level, which long private vectors cannot afford.  When the objective's PUBLIC
terms are strongly convex along the private coordinates, one eigenvalue problem does it:

With ``S`` on the user's variables (the noise multiplies no epigraph variable), the noisy
objective is ``F(x) = f(x) + z'x_S`` in the user's terms, ``f`` the true objective.  Its public
terms give ``F(x) >= F(x_e) + d'Q d`` for ``d = x - x_e``, ``x_e`` the exact minimiser of ``F``
over ``X`` (every other term is convex; no differentiability is needed: ``F(x_e + s d) >=
F(x_e)`` for ``s`` in ``(0, 1]`` and the strong convexity of the quadratic lower model give it as
``s -> 0``), with

* ``lam * sum_squares(a)``, ``lam * norm(a, 2)**2``, ``lam * sum(square(a))``: ``Q += lam Y'Y``;
* ``lam * quad_form(a, P)`` (``P`` public, PSD): ``Q += lam Y'P Y``;
* ``lam * sum(exp(a))``: ``Q += (lam / 2) Y' diag(exp(l)) Y``, ``l`` a lower bound on ``a`` over
  the public box (the second derivative of ``exp`` is at least ``exp(l)`` there);

``Y = da/dx`` (public), ``lam > 0`` public.  Public linear equalities ``E x = e`` confine ``d``
to the null space of ``E`` (basis ``N``).  The true objective is ``f = F - z'x_S``, so with
``delta = F(x~) - F(x_e)`` (at most the released solve's optimality margin)::

    f(x~) - OPT <= delta + max_d [z'd_S - d'Q d] + z'(x_e - x~)_S
               <= delta + G / 4 + sqrt(G delta),    G = t^2 / mu,

``mu`` the largest number with ``d'Q d >= mu ||d_S||^2`` for every ``d`` in the null space
(``1 / ||P_S N (N'Q N)^{+1/2}||^2``, ``0`` when a direction without curvature moves ``d_S``):
on the same event ``||z_S|| <= t`` as Thm C.12's bound, so it costs no probability.  Public
structure and constants only; ``inf`` when the pattern does not hold.

References
----------
Strong convexity (Boyd & Vandenberghe 2004, "Convex Optimization", Sec. 9.1.2); the same
construction for fit terms is :mod:`cvxdp.solvers.perturbation.fit_curvature`.
"""

from __future__ import annotations

import math
from typing import Any

import cvxpy as cp
import numpy as np
from cvxpy.atoms.affine.sum import Sum
from cvxpy.atoms.elementwise.exp import exp as cp_exp
from cvxpy.constraints.zero import Equality

from cvxdp.blas_threads import one_blas_thread
from cvxdp.solvers.bound_propagation import propagated_box
from cvxdp.solvers.perturbation.fit_curvature import CURVATURE_MAX, _null_space
from cvxdp.solvers.perturbation.fit_detect import (
    _classify,
    _jacobians,
    _peel,
    _terms,
    attribute_constraints,
    equality_rows,
    fresh_leaves,
)
from cvxdp.solvers.perturbation.fit_term import _entry_columns
from cvxdp.solvers.public_part import coordinate_box

__all__ = ["curvature_gap"]


def curvature_gap(problem: cp.Problem | None, scp: Any, supp: np.ndarray, t: float,
                  delta: float) -> float:
    """The module doc's bound ``delta + G / 4 + sqrt(G delta)`` on the event ``||z_S|| <=
    t``; ``inf`` when the model does not have the pattern (a private coordinate outside the
    user's variables, no public curvature along the private coordinates, more than
    :data:`CURVATURE_MAX` variable entries).  ``delta``: the released solve's optimality
    margin."""
    if problem is None or not math.isfinite(t):
        return math.inf
    leaves = fresh_leaves(problem, ())
    if leaves is None:
        return math.inf
    x_copies, _, by_obj = leaves
    Q, S = _curvature(problem, scp, np.asarray(supp, dtype=int), x_copies, by_obj)
    if Q is None:
        return math.inf
    mu = _modulus(problem, Q, S, x_copies)
    if not mu > 0:
        return math.inf
    G = t * t / mu
    return delta + G / 4.0 + math.sqrt(G * max(delta, 0.0))


def _curvature(problem: cp.Problem, scp: Any, supp: np.ndarray, x_copies: dict,
               by_obj: dict) -> tuple[np.ndarray | None, np.ndarray]:
    """``(Q, S)``: the public terms' curvature over the user's variable entries (the copies'
    ``x_copies`` order, column-major) and the entries the noise reaches; ``(None, .)`` off the
    pattern."""
    xvars = list(problem.variables())
    n = sum(int(v.size) for v in xvars)
    if n > CURVATURE_MAX:
        return None, np.zeros(0, dtype=int)
    cols = _entry_columns(problem, scp, xvars)
    if cols is None:
        return None, np.zeros(0, dtype=int)
    at = -np.ones(scp.n, dtype=np.int64)
    at[cols] = np.arange(cols.size)
    S = at[supp]
    if np.any(S < 0):
        return None, S  # the noise multiplies a variable CVXPY added (an epigraph's)
    expr = problem.objective.expr
    if isinstance(problem.objective, cp.Maximize):
        expr = -expr
    Q = np.zeros((n, n))
    found = False
    for term in _terms(expr):
        if term.parameters():
            continue  # a private (or not substituted) term: convex, no curvature counted
        part = _term_curvature(term, x_copies, by_obj, problem, scp, cols)
        if part is not None:
            Q += part
            found = True
    return (Q if found else None), S


def _term_curvature(term: Any, x_copies: dict, by_obj: dict, problem: cp.Problem, scp: Any,
                    cols: np.ndarray) -> np.ndarray | None:
    """The curvature matrix of one public term of the module doc's shapes, else None."""
    peeled = _peel(term, signed=True)
    if peeled is None or peeled[0] <= 0:
        return None
    lam, inner = peeled
    # the fit terms' squares: sum_squares, norm(a, 2)**2, sum(square(a)) and quad_form(a, P)
    # with a public PSD P (as ||L' a||^2, P = L L'), all read by fit_detect._classify
    found = _classify(inner)
    if found is not None and found[0] == "square" and found[4] is None:
        Y = _jac(found[3], x_copies, by_obj)
        return None if Y is None else lam * found[1] * (Y.T @ Y)
    exp_arg = None
    if isinstance(inner, Sum) and inner.axis is None and isinstance(inner.args[0], cp_exp):
        exp_arg = inner.args[0].args[0]
    elif isinstance(inner, cp_exp) and inner.size == 1:
        exp_arg = inner.args[0]
    if exp_arg is not None:
        copy = exp_arg.tree_copy(by_obj)
        if not copy.is_affine() or copy.parameters():
            return None
        Y = _jac(exp_arg, x_copies, by_obj)
        if Y is None:
            return None
        low = _lower_on_box(copy, Y, problem, scp, cols)
        w = np.where(np.isfinite(low), np.exp(np.minimum(low, 700.0)), 0.0)
        return (lam / 2.0) * (Y.T @ (w[:, None] * Y))
    return None


def _jac(a: Any, x_copies: dict, by_obj: dict) -> np.ndarray | None:
    """``da/dx`` over every variable entry (dense), for an affine public ``a``, else None."""
    copy = a.tree_copy(by_obj)
    if not copy.is_affine() or copy.parameters():
        return None
    _, _, full = _jacobians(copy, x_copies, ())
    return np.asarray(full.toarray(), dtype=float)


def _lower_on_box(copy: Any, Y: np.ndarray, problem: cp.Problem, scp: Any,
                  cols: np.ndarray) -> np.ndarray:
    """A lower bound on each entry of the affine ``copy`` (on the variables' copies) over the
    public box of the entries it reads (``-inf`` where one is unbounded on the wrong side)."""
    used = np.flatnonzero(np.any(Y != 0, axis=0))
    lo = np.full(Y.shape[1], -np.inf)
    hi = np.full(Y.shape[1], np.inf)
    if used.size:
        # bound propagation first (no solver; exact on boxes), the public solves for the
        # entries it leaves unbounded
        public = np.ones(scp.m, dtype=bool)
        public[scp.sensitivity.private_rows()] = False
        p_lo, p_hi = propagated_box(scp.A, scp.b, scp.dims, public, cones=True)
        lo[used], hi[used] = p_lo[cols[used]], p_hi[cols[used]]
        open_ = used[~(np.isfinite(lo[used]) & np.isfinite(hi[used]))]
        if open_.size:
            b_lo, b_hi = coordinate_box(scp, cols[open_], allow_unbounded=True)
            lo[open_], hi[open_] = b_lo[cols[open_]], b_hi[cols[open_]]
    # the constant part: the expression at x = 0
    leaves = list(copy.variables())
    for v in leaves:
        v.value = np.zeros(v.shape)
    try:
        c0 = np.ravel(np.asarray(copy.value, dtype=float), order="F")
    finally:
        for v in leaves:
            v.value = None
    Yp, Yn = np.maximum(Y, 0.0), np.minimum(Y, 0.0)
    with np.errstate(invalid="ignore"):
        low = c0 + np.where(Yp != 0, Yp * lo, 0.0).sum(axis=1) + \
            np.where(Yn != 0, Yn * hi, 0.0).sum(axis=1)
    return np.where(np.isnan(low), -np.inf, low)


def _modulus(problem: cp.Problem, Q: np.ndarray, S: np.ndarray, x_copies: dict
             ) -> float:
    """``mu`` of the module doc: ``1 / ||P_S N (N'Q N)^{+1/2}||^2`` over the null space of the
    public linear equalities, 0 when a direction without curvature moves the private
    entries."""
    n = Q.shape[0]
    var_only = {id(v): x_copies[v.name()] for v in problem.variables()}
    equalities = tuple(c.tree_copy(var_only) for c in problem.constraints
                       if isinstance(c, Equality) and not c.parameters())
    E = equality_rows(equalities + attribute_constraints(problem, x_copies), x_copies)
    with one_blas_thread():
        N = _null_space(np.asarray(E.todense(), dtype=float)) if E is not None else np.eye(n)
        Qn = N.T @ Q @ N
        w, U = np.linalg.eigh((Qn + Qn.T) / 2.0)
        top = float(w.max(initial=0.0))
        if top <= 0:
            return 0.0
        keep = w > 1e-12 * top
        PN = N[S]
        if np.any(~keep) and np.linalg.norm(PN @ U[:, ~keep]) > 1e-9 * max(
                1.0, np.linalg.norm(PN)):
            return 0.0
        M = PN @ (U[:, keep] / np.sqrt(w[keep]))
        top_m = float(np.linalg.norm(M, 2)) if M.size else 0.0
    return math.inf if top_m == 0 else 1.0 / top_m**2
