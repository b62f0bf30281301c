"""User covering models with ``private=cvxdp.ConstraintSetPrivacy(constraint)``.

A model is accepted when it is a covering program *in that constraint*:

* one variable ``x`` -- a vector that is non-negative (``nonneg=True`` or a constraint
  ``x >= 0``), or a square matrix that is PSD (``PSD=True`` or ``X >> 0``);
* objective ``Minimize(c @ x + const)`` with public ``c > 0`` entrywise (LP), or
  ``Minimize(trace(C @ X) + const)`` with public ``C`` positive definite (SDP);
* the private constraint ``g(x) >= b`` row by row, every row linear in ``x``;
* no other constraints;
* the parameters of the private constraint occur nowhere else (placement check,
  :func:`cvxdp.transform.sensitivity.check_constraint_set_placement`): the objective and the
  change of variables below are public, so nothing released is scaled or shifted by private
  data.

Everything refused above is public structure (the model's form, which parameter occurs where);
nothing is refused because of the values of the private rows.  The model is then the covering
program of :mod:`cvxdp.solvers.covering.covering` after the change of variables ``x~_j = c_j x_j``
(``X~ = C^{1/2} X C^{1/2}``, public) and the row scaling ``a_i / b_i``, which is per row (one
person's data stays in one row), so the neighbouring relation "add/remove one row" is preserved.
A row with ``b_i <= 0`` holds for every ``x`` in the cone once its coefficients are in the
domain, so it is dropped (a per-row map: neighbours stay neighbours).  The normalised rows
should have entries in ``[0, 1]`` (LP) / spectrum in ``[0, 1]`` (SDP), a public domain the user
aims at by scaling the constraint with a public constant; rows outside it are projected into it
inside the mechanism (:func:`cvxdp.solvers.covering.covering_domain.project_rows`), never
refused, and their number is released only as an opt-in noisy count (``count_clipped=``).

References
----------
Song, Xue & Zhang (2025): Def B.1, Sec. B.3, B.4.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import cvxpy as cp
import numpy as np
from cvxpy.constraints import PSD, Inequality, NonNeg, NonPos

from cvxdp.arguments import check_options, option_names
from cvxdp.errors import PrivacySpecError, UnsupportedProblemError
from cvxdp.solution import Certificate
from cvxdp.solvers.covering.covering import CoveringLP, CoveringSDP, CoveringSolution
from cvxdp.specs import ConstraintSetPrivacy
from cvxdp.status import status_of
from cvxdp.transform.sensitivity import check_constraint_set_placement

__all__ = ["solve_covering_private", "extract_covering"]


def _refuse(reason: str) -> UnsupportedProblemError:
    return UnsupportedProblemError(
        "ConstraintSetPrivacy is solved by the private covering solver, and this model is not a "
        f"covering program in the private constraint: {reason}")


def _label(problem: cp.Problem, con: Any) -> str:
    """Name a constraint by position and type, never by its text (which prints its data)."""
    k = next(i for i, c in enumerate(problem.constraints) if c is con)
    return f"constraint {k} of problem.constraints ({type(con).__name__})"


def _expr_of(con: Any, label: str = "the private constraint") -> Any:
    """The expression that must be >= 0 for an Inequality / NonNeg / NonPos constraint."""
    if isinstance(con, Inequality):  # args[0] <= args[1]
        return con.args[1] - con.args[0]
    if isinstance(con, NonNeg):
        return con.args[0]
    if isinstance(con, NonPos):
        return -con.args[0]
    raise _refuse(f"{label} is not an inequality")


def _substitute(expr: Any, var: cp.Variable, param: cp.Parameter) -> Any:
    """A copy of ``expr`` with every occurrence of ``var`` replaced by ``param``."""
    if expr is var:
        return param
    if not expr.args:
        return expr
    return expr.copy([_substitute(a, var, param) for a in expr.args])


def _linear_map(expr: Any, var: cp.Variable, basis: list[np.ndarray]) -> tuple[np.ndarray, ...]:
    """Evaluate ``expr`` at 0 and at each basis point: (offset, columns of the linear part).

    The variable is replaced by a plain parameter in a copy of the expression, so the user's
    variable (and the value a solver left on it) is never touched: restoring it through CVXPY's
    validating setter raised on the slightly indefinite X an interior-point solve can leave.
    """
    point = cp.Parameter(var.shape)
    at = _substitute(expr, var, point)

    def value(v: np.ndarray) -> np.ndarray:
        point.value = v
        return np.atleast_1d(np.asarray(at.value, dtype=float)).ravel()

    g0 = value(np.zeros(var.shape))
    cols = [value(B) - g0 for B in basis]
    return g0, np.column_stack(cols) if cols else np.zeros((g0.size, 0))


def _is_the_variable(expr: Any, var: cp.Variable) -> bool:
    """True when ``expr`` is ``var`` itself, possibly written as ``var - 0`` (``X >> 0``).

    Decided on the expression's public structure: its linear map on the standard basis is the
    identity and its offset is zero (evaluated on a parameter copy, the variable untouched).
    """
    if expr is var:
        return True
    if expr.shape != var.shape or not expr.is_affine() or expr.parameters():
        return False
    n = var.size
    g0, G = _linear_map(expr, var, list(np.eye(n).reshape(n, *var.shape)))
    return bool(np.allclose(g0, 0) and G.shape == (n, n) and np.allclose(G, np.eye(n)))


def _sdp_basis(r: int) -> tuple[list[np.ndarray], list[tuple[int, int]]]:
    """PSD basis points: ``E_jj`` and ``(e_j + e_k)(e_j + e_k)'`` (values must satisfy PSD=)."""
    basis, idx = [], []
    eye = np.eye(r)
    for j in range(r):
        basis.append(np.outer(eye[j], eye[j]))
        idx.append((j, j))
    for j in range(r):
        for k in range(j + 1, r):
            u = eye[j] + eye[k]
            basis.append(np.outer(u, u))
            idx.append((j, k))
    return basis, idx


def _sdp_matrices(cols: np.ndarray, idx: list[tuple[int, int]], r: int) -> np.ndarray:
    """Rows ``<A_i, X>`` -> symmetric ``A_i`` from evaluations on :func:`_sdp_basis`."""
    m = cols.shape[0]
    A = np.zeros((m, r, r))
    diag = {j: cols[:, t] for t, (j, k) in enumerate(idx) if j == k}
    for t, (j, k) in enumerate(idx):
        if j == k:
            A[:, j, j] = cols[:, t]
        else:  # <A, (e_j+e_k)(e_j+e_k)'> = A_jj + A_kk + 2 A_jk
            A[:, j, k] = A[:, k, j] = (cols[:, t] - diag[j] - diag[k]) / 2
    return A


def extract_covering(problem: cp.Problem, constraint: Any) -> dict[str, Any]:
    """Check the model and return the normalised covering data and the maps back.

    Returns
    -------
    dict with ``kind`` ("lp"/"sdp"), ``data`` (normalised rows), ``var``, ``back`` (callable
    mapping the normalised answer to the user's variable), ``offset`` (objective constant).

    Raises
    ------
    UnsupportedProblemError
        With the reason when the model is not a covering program in ``constraint``.
    """
    if not isinstance(problem.objective, cp.Minimize):
        raise _refuse("the objective must be Minimize(...) (covering programs minimise cost)")
    if not problem.objective.expr.is_affine():
        raise _refuse("the objective must be linear in the variable (c @ x or trace(C @ X))")
    if not any(c is constraint for c in problem.constraints):
        raise PrivacySpecError("ConstraintSetPrivacy: the constraint is not one of "
                               "problem.constraints; pass the constraint object used in the model.")
    check_constraint_set_placement(problem, ConstraintSetPrivacy(constraint))
    vars_ = problem.variables()
    if len(vars_) != 1:
        raise _refuse(f"it has {len(vars_)} variables; a covering program has exactly one "
                      "(x >= 0 or X PSD)")
    var = vars_[0]
    is_sdp = var.ndim == 2 and var.shape[0] == var.shape[1] and var.shape[0] > 1
    others = [c for c in problem.constraints if c is not constraint]
    sign_ok = bool(var.attributes.get("PSD")) if is_sdp else bool(var.attributes.get("nonneg"))
    for con in others:
        if is_sdp and isinstance(con, PSD) and _is_the_variable(con.args[0], var):
            sign_ok = True  # X >> 0 is PSD(X - 0): CVXPY's spelling of the sign constraint
        elif not is_sdp and isinstance(con, (Inequality, NonNeg, NonPos)):
            n = var.size
            expr = _expr_of(con, _label(problem, con))
            g0, G = _linear_map(expr, var, list(np.eye(n).reshape(n, *var.shape)))
            if not (expr.is_affine() and np.allclose(g0, 0) and G.shape == (n, n)
                    and np.allclose(G, np.eye(n))):
                raise _refuse(f"{_label(problem, con)} is not the sign constraint x >= 0; the "
                              "only other constraint allowed is x >= 0")
            sign_ok = True
        else:
            raise _refuse(f"{_label(problem, con)} is neither the private covering constraint "
                          "nor the sign constraint (x >= 0 / X >> 0)")
    if not sign_ok:
        raise _refuse("the variable must be non-negative (nonneg=True or x >= 0) for an LP, or "
                      "PSD (PSD=True or X >> 0) for an SDP")
    if not _expr_of(constraint).is_affine():
        raise _refuse("the private constraint must be affine in the variable")
    if is_sdp:
        r = var.shape[0]
        basis, idx = _sdp_basis(r)
    else:
        if var.ndim > 1 and min(var.shape) > 1:
            raise _refuse("a matrix variable must be square and PSD (SDP) or a vector (LP)")
        basis = list(np.eye(var.size).reshape(var.size, *var.shape))
    f0, F = _linear_map(problem.objective.expr, var, basis)
    g0, G = _linear_map(_expr_of(constraint), var, basis)
    b = -g0
    # b belongs to the private rows: its sign decides no refusal.  A row with b_i <= 0 is met by
    # every x in the cone (coefficients in the domain), so it is dropped, row by row; a NaN b_i
    # gives a NaN row, which the mechanism's projection zeroes.
    keep = ~(b <= 0)
    with np.errstate(all="ignore"):
        rows = G[keep] / b[keep, None]
    if is_sdp:
        C = _sdp_matrices(F, idx, r)[0]
        lam, V = np.linalg.eigh(C)
        if lam.min() <= 0:
            raise _refuse("the objective must be trace(C @ X) with C positive definite")
        Ch = V @ np.diag(lam**-0.5) @ V.T  # C^{-1/2}
        # ||C^{-1/2} A C^{-1/2}|| <= ||A|| / lambda_min(C): a public rescale by kappa keeps the
        # normalised rows in the unit domain (else they would be clipped, changing the model)
        kappa = max(1.0, 1.0 / float(lam.min()))
        with np.errstate(all="ignore"):
            data = Ch @ _sdp_matrices(rows, idx, r) @ Ch / kappa

        def back(Xt: np.ndarray) -> np.ndarray:
            return Ch @ Xt @ Ch / kappa
    else:
        c = F.ravel()
        if np.any(c <= 0):
            raise _refuse("the objective must be c @ x with public c > 0 entrywise")
        # entries a_ij / c_j exceed 1 when a cost is below 1: rescale publicly by kappa so the
        # normalised rows stay in the unit domain (else they would be clipped)
        kappa = max(1.0, float(np.max(1.0 / c)))
        with np.errstate(all="ignore"):
            data = rows / c[None, :] / kappa

        def back(xt: np.ndarray) -> np.ndarray:
            return (xt / (kappa * c)).reshape(var.shape)
    # the normalised program min 1'y s.t. (data) y >= 1 has optimum kappa (OPT - offset)
    return {"kind": "sdp" if is_sdp else "lp", "data": data, "var": var, "back": back,
            "offset": float(f0[0]), "scale": kappa}


def solve_covering_private(problem: cp.Problem, constraint: Any, **kwargs: Any
                           ) -> CoveringSolution:
    """Private solve of a user's covering model; neighbours add/remove one row of ``constraint``.

    Parameters
    ----------
    problem : cvxpy.Problem
        A covering program in ``constraint`` (see the module docstring).
    constraint : cvxpy constraint or cvxdp.ConstraintSetPrivacy
    **kwargs
        Passed to :meth:`cvxdp.solvers.covering.CoveringSDP.solve_private` (``epsilon``,
        ``delta``, ``rho``, ``rng``, ``reference``, ``s``, ``opt_bounds`` in the normalised
        units, ...); ``private=`` is ignored.

    Returns
    -------
    CoveringSolution
        ``point`` and the user's variable in the user's units; ``value`` the user's objective.

    Raises
    ------
    UnsupportedProblemError
        The model is not a covering program in the constraint (the message says why).
    PrivacySpecError
        A parameter of the private constraint also occurs in the objective or in another
        constraint (placement check; the message says what to change).

    References
    ----------
    Song, Xue & Zhang (2025), Def B.1, Alg. 3, Thm B.10, Thm B.13.
    """
    constraint = getattr(constraint, "constraint", constraint)
    kwargs.pop("private", None)
    kwargs.pop("verbose", None)
    # checked before any work, with the nearest valid option named
    check_options(kwargs, option_names(CoveringSDP.solve_private)[0] | {"private", "verbose"},
                  "the covering path (ConstraintSetPrivacy)")
    info = extract_covering(problem, constraint)
    inner = CoveringSDP(info["data"]) if info["kind"] == "sdp" else CoveringLP(info["data"])
    sol = inner.solve_private(**kwargs)
    point = info["back"](sol.point)
    info["var"].value = (point + point.T) / 2 if info["kind"] == "sdp" else point
    sol.point = point
    sol.value = float(sol.value) / info["scale"] + info["offset"]
    if sol.validation is not None and sol.validation.reference_value is not None:
        # the normalised program's optimum is kappa times the user's, less the constant term
        gap = sol.validation.objective_gap
        sol.validation = dataclasses.replace(
            sol.validation,
            reference_value=sol.validation.reference_value / info["scale"] + info["offset"],
            objective_gap=None if gap is None else gap / info["scale"])
    sol.primal = {info["var"].name(): point}
    sol.info = {**sol.info, "normalised_problem": info["kind"]}
    cert = sol.certificate
    if cert is not None and math.isfinite(cert.objective_upper):
        # the objective bounds in the user's units (public scale and constant); the rows keep
        # their normalisation a_i(x) / b_i >= 1, so the violation is relative to b_i
        def user(v: float) -> float:
            return v / info["scale"] + info["offset"] if math.isfinite(v) else v

        sol.certificate = Certificate.from_bounds(
            objective_upper=user(cert.objective_upper), optimum_lower=user(cert.optimum_lower),
            violation_bound=cert.violation_bound,
            equality_violation_bound=cert.equality_violation_bound,
            probability=cert.probability, how=cert.how, excluded_rows=cert.excluded_rows)
        sol.set_status(*status_of(sol.certificate, kwargs.get("accuracy")))
    return sol
