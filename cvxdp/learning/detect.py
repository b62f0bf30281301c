"""Recognise a row-level learning model in a CVXPY problem (public structure only).

Accepted: ``Minimize`` (or ``Maximize`` of a concave) objective that is a sum of

* loss terms -- ``c * cp.sum(E)``, ``c * cp.mean(E)``, ``c * cp.sum_squares(r)`` (or
  ``cp.norm(r, 2)**2``, ``cp.quad_over_lin(r, k)`` with a public ``k > 0``),
  ``c * cp.norm1(r)`` -- where ``E`` is a sum of elementwise atoms (``square`` of ``r`` or of
  ``pos(r)``, ``huber``,
  ``abs``, ``logistic``, ``maximum`` / ``pos``, ``neg``, or affine) of affine vectors ``r`` in
  ``X @ w`` (optionally ``X @ w + v`` with a scalar intercept Variable ``v``), the labels ``y``,
  ``cp.multiply(y, X @ w)`` and scalar constants;
* public terms that involve neither ``X`` nor ``y`` (the regulariser);

and constraints that involve neither ``X`` nor ``y``.  Anything else is refused by an
:class:`~cvxdp.errors.UnsupportedProblemError` that names the offending term.  Only the
expression tree is read (public); no parameter value is looked at except public scalars.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import cvxpy as cp
import numpy as np
from cvxpy.atoms.affine.add_expr import AddExpression
from cvxpy.atoms.affine.binary_operators import DivExpression, MulExpression, multiply
from cvxpy.atoms.affine.promote import Promote
from cvxpy.atoms.affine.sum import Sum
from cvxpy.atoms.affine.unary_operators import NegExpression
from cvxpy.atoms.elementwise.abs import abs as cp_abs
from cvxpy.atoms.elementwise.huber import huber
from cvxpy.atoms.elementwise.logistic import logistic
from cvxpy.atoms.elementwise.maximum import maximum
from cvxpy.atoms.elementwise.minimum import minimum
from cvxpy.atoms.elementwise.power import Power
from cvxpy.atoms.norm1 import norm1
from cvxpy.atoms.pnorm import Pnorm
from cvxpy.atoms.quad_over_lin import quad_over_lin

from cvxdp.errors import PrivacySpecError, UnsupportedProblemError
from cvxdp.learning.loss import Piece, RowLoss
from cvxdp.specs import RowPrivacy
from cvxdp.transform.support import quoted

__all__ = ["RowModel", "detect"]

_KEYS = ("xw", "v", "y", "yxw", "yv", "1")


class _Refuse(Exception):
    pass


@dataclass
class RowModel:
    """The structure of a row-level model (public).

    Attributes
    ----------
    spec : RowPrivacy
    w : cvxpy.Variable
        The coefficient vector multiplying ``X``.
    v : cvxpy.Variable or None
        Scalar intercept, entering the predictor as ``p = x' w + sign_v * v``.
    loss : RowLoss
        The per-row loss of ``p`` and ``y`` (in the objective's units, coefficients included).
    regulariser : cvxpy.Expression
        The public terms of the objective (minimisation sense).
    mu : float
        A strong-convexity modulus of ``regulariser`` in ``theta = (w, v)`` read from
        ``c * sum_squares(w)`` terms (0 when none, or when ``v`` is not regularised).
    mu_w : float
        The same for ``w`` alone (``mu <= mu_w``; larger when the intercept is not
        regularised).
    constraints : list
    sense : float
        +1 for ``Minimize``, -1 for ``Maximize`` (the user's objective is ``sense *`` ours).
    """

    spec: RowPrivacy
    w: cp.Variable
    v: cp.Variable | None
    sign_v: float
    loss: RowLoss
    regulariser: Any
    mu: float
    constraints: list = field(default_factory=list)
    sense: float = 1.0
    public_terms: list = field(default_factory=list)
    mu_w: float = 0.0

    @property
    def n(self) -> int:
        return int(self.spec.X.shape[0])

    @property
    def dim(self) -> int:
        return int(self.w.size) + (self.v is not None)

    @property
    def feature_bound(self) -> float:
        """Public bound on ``||x~||_2``, ``x~ = (x, 1)`` with an intercept."""
        R = self.spec.row_bound
        return math.sqrt(R * R + 1.0) if self.v is not None else R

    @property
    def label_bound(self) -> float:
        return 0.0 if self.spec.y is None else float(self.spec.label_bound)

    def predictor(self, X: Any) -> cp.Expression:
        p = X @ self.w
        return p + self.sign_v * self.v if self.v is not None else p

    def describe(self) -> str:
        inter = " + intercept" if self.v is not None else ""
        return (f"row-level model: sum over {self.n} rows of a {self.loss.describe()} loss of "
                f"x_i' w{inter}" + (" and y_i" if self.spec.y is not None else "")
                + ", plus a public regulariser and public constraints")


class _Walker:
    def __init__(self, spec: RowPrivacy) -> None:
        self.spec = spec
        self.w: cp.Variable | None = None
        self.v: cp.Variable | None = None
        self.n = int(spec.X.shape[0])

    # -- helpers ------------------------------------------------------------------------------
    def private(self, e: Any) -> bool:
        ids = {self.spec.X.id} | ({self.spec.y.id} if self.spec.y is not None else set())
        return any(p.id in ids for p in e.parameters())

    def scalar(self, e: Any) -> float | None:
        """The value of a public scalar constant (or public scalar Parameter), else None."""
        if isinstance(e, Promote):
            return self.scalar(e.args[0])
        if e.variables() or self.private(e) or e.size != 1:
            return None
        val = e.value
        if val is None:
            raise _Refuse(f"the public parameter in term {_name(e)} has no value; set it")
        return float(np.asarray(val).ravel()[0])

    # -- affine vectors in (xw, v, y, yxw, yv, 1) -------------------------------------------
    def aff(self, e: Any) -> dict[str, float]:
        k = self.scalar(e)
        if k is not None:
            return {"1": k}
        if isinstance(e, Promote):
            return self.aff(e.args[0])
        if isinstance(e, cp.Parameter) and self.spec.y is not None and e.id == self.spec.y.id:
            return {"y": 1.0}
        if isinstance(e, MulExpression) and isinstance(e.args[0], cp.Parameter) \
                and e.args[0].id == self.spec.X.id:
            w = e.args[1]
            if not isinstance(w, cp.Variable) or w.ndim != 1:
                raise _Refuse("X must multiply one vector Variable (X @ w); found X @ "
                              f"{type(w).__name__}")
            if self.w is not None and self.w.id != w.id:
                raise _Refuse("X multiplies two different Variables; use one coefficient "
                              "vector w")
            self.w = w
            return {"xw": 1.0}
        if isinstance(e, cp.Variable):
            if e.size != 1:
                raise _Refuse(f"Variable {e.name()!r} of shape {e.shape} enters the per-row "
                              "loss; only X @ w and a scalar intercept may (write slack "
                              "variables as cp.pos(...) instead)")
            if self.v is not None and self.v.id != e.id:
                raise _Refuse("two scalar Variables enter the loss; one intercept is allowed")
            self.v = e
            return {"v": 1.0}
        if isinstance(e, AddExpression):
            out: dict[str, float] = {}
            for a in e.args:
                for key, val in self.aff(a).items():
                    out[key] = out.get(key, 0.0) + val
            return out
        if isinstance(e, NegExpression):
            return {key: -val for key, val in self.aff(e.args[0]).items()}
        if isinstance(e, (multiply, MulExpression)):
            a, b = e.args
            for s, o in ((a, b), (b, a)):
                k = self.scalar(s)
                if k is not None:
                    return {key: k * val for key, val in self.aff(o).items()}
            for s, o in ((a, b), (b, a)):
                if isinstance(s, cp.Parameter) and self.spec.y is not None \
                        and s.id == self.spec.y.id:
                    inner = self.aff(o)
                    if set(inner) - {"xw", "v"}:
                        raise _Refuse("y multiplies something other than X @ w (+ v)")
                    return {"y" + key: val for key, val in inner.items()}
            raise _Refuse(f"product {_name(e)} is not a scalar times an affine term or "
                          "cp.multiply(y, X @ w)")
        if isinstance(e, DivExpression):
            k = self.scalar(e.args[1])
            if k is None:
                raise _Refuse(f"division {_name(e)} by a non-constant")
            return {key: val / k for key, val in self.aff(e.args[0]).items()}
        if self.private(e):
            raise _Refuse(f"{_name(e)} uses the private data other than through X @ w and y "
                          "elementwise")
        raise _Refuse(f"{_name(e)} is not an affine function of X @ w, y and constants "
                      "(a per-row public vector or another Variable?)")

    def rows_shape(self, e: Any) -> None:
        if e.shape not in ((self.n,), (self.n, 1)):
            raise _Refuse(f"{_name(e)} has shape {e.shape}, not one entry per row ({self.n},)")

    # -- elementwise pieces -------------------------------------------------------------------
    def pieces(self, e: Any, c: float) -> list[tuple[str, float, list[dict], float]]:
        if isinstance(e, AddExpression):
            return [pc for a in e.args for pc in self.pieces(a, c)]
        if isinstance(e, NegExpression):
            return self.pieces(e.args[0], -c)
        if isinstance(e, (multiply, MulExpression, DivExpression)) and not e.is_affine():
            a, b = e.args
            if isinstance(e, DivExpression):
                k = self.scalar(b)
                if k is not None:
                    return self.pieces(a, c / k)
            else:
                for s, o in ((a, b), (b, a)):
                    k = self.scalar(s)
                    if k is not None:
                        return self.pieces(o, c * k)
            raise _Refuse(f"{_name(e)} is not a constant times a per-row loss")
        if e.is_affine():
            return [("lin", c, [self.aff(e)], 1.0)]
        if isinstance(e, Power) and _p(e) == 2:
            return [self.squared(e.args[0], c)]
        if isinstance(e, huber):
            return [("huber", c, [self.aff(e.args[0])], float(np.asarray(e.M.value)))]
        if isinstance(e, cp_abs):
            return [("abs", c, [self.aff(e.args[0])], 1.0)]
        if isinstance(e, logistic):
            return [("logistic", c, [self.aff(e.args[0])], 1.0)]
        if isinstance(e, maximum):
            return [("max", c, [self.aff(a) for a in e.args], 1.0)]
        if isinstance(e, minimum) and c < 0:
            return [("max", -c, [{k: -v for k, v in self.aff(a).items()} for a in e.args], 1.0)]
        raise _Refuse(f"atom {type(e).__name__} is not a per-row loss cvxdp knows (square, "
                      "huber, abs, logistic, maximum/pos, neg, affine)")

    def squared(self, e: Any, c: float) -> tuple[str, float, list[dict], float]:
        """``r^2`` of an affine r, or ``pos(r)^2`` (the squared hinge of one-sided losses)."""
        if isinstance(e, maximum) and len(e.args) == 2:
            for r, z in ((e.args[0], e.args[1]), (e.args[1], e.args[0])):
                if self.scalar(z) == 0.0:
                    return ("sqpos", c, [self.aff(r)], 1.0)
        return ("square", c, [self.aff(e)], 1.0)

    def loss_term(self, e: Any, c: float) -> list:
        if isinstance(e, Sum) and e.axis is None:
            self.rows_shape(e.args[0])
            return self.pieces(e.args[0], c)
        if isinstance(e, quad_over_lin):
            k = self.scalar(e.args[1])   # quad_over_lin(r, k) = sum_squares(r) / k
            if k is not None and k > 0:
                self.rows_shape(e.args[0])
                return [self.squared(e.args[0], c / k)]
        if isinstance(e, Power) and _p(e) == 2 and isinstance(e.args[0], Pnorm) \
                and _p(e.args[0]) == 2:       # norm(r, 2)**2 = sum_squares(r)
            self.rows_shape(e.args[0].args[0])
            return [self.squared(e.args[0].args[0], c)]
        if isinstance(e, norm1) or (isinstance(e, Pnorm) and _p(e) == 1):
            self.rows_shape(e.args[0])
            return [("abs", c, [self.aff(e.args[0])], 1.0)]
        raise _Refuse(f"term {_expression(e)} uses the private data but is not a sum over rows "
                      "of a per-row loss: write it as cp.sum(...), cp.mean(...), "
                      "cp.sum_squares(...) (also cp.norm(r, 2)**2, cp.quad_over_lin(r, c)) or "
                      "cp.norm1(...) of an elementwise loss of X @ w (and y)")

    def terms(self, e: Any, c: float, loss: list, public: list) -> None:
        if isinstance(e, AddExpression):
            for a in e.args:
                self.terms(a, c, loss, public)
            return
        if isinstance(e, NegExpression):
            return self.terms(e.args[0], -c, loss, public)
        if isinstance(e, DivExpression):
            k = self.scalar(e.args[1])
            if k is not None:
                return self.terms(e.args[0], c / k, loss, public)
        if isinstance(e, (multiply, MulExpression)) and e.size == 1:
            for s, o in ((e.args[0], e.args[1]), (e.args[1], e.args[0])):
                k = self.scalar(s)
                if k is not None:
                    return self.terms(o, c * k, loss, public)
        if not self.private(e):
            public.append((c, e))
            return
        loss.extend(self.loss_term(e, c))


def _p(e: Any) -> float:
    p = e.p
    return float(p.value if hasattr(p, "value") else p)


#: longest expression quoted in a message
_QUOTE = 120


def _expression(e: Any) -> str:
    """The user's expression as CVXPY prints it (:func:`cvxdp.transform.support.quoted`:
    Parameter and Variable names, never their values; arrays by their shape), shortened to
    :data:`_QUOTE` characters."""
    return repr(quoted(e, _QUOTE))


def _name(e: Any) -> str:
    """A name for a term that shows no data: its atom and shape (never its values)."""
    return f"{type(e).__name__}{tuple(e.shape)}"


def _shifted(e: Any) -> cp.Variable | None:
    """The variable of ``var``, ``var - b0``, ``b0 - var`` or ``var + b0`` (``b0`` constant):
    a square of it curves like one of ``var`` (a ridge towards a prior mean ``b0``); None for
    anything else."""
    if isinstance(e, cp.Variable):
        return e
    if isinstance(e, AddExpression):
        moving = [a for a in e.args if not a.is_constant()]
        if len(moving) == 1:
            a = moving[0].args[0] if isinstance(moving[0], NegExpression) else moving[0]
            return a if isinstance(a, cp.Variable) else None
    return None


def _strong_convexity(public: list, w: cp.Variable, v: cp.Variable | None
                      ) -> tuple[float, float]:
    """mu of ``c * sum_squares(var)`` / ``c * norm2(var)**2`` terms (2c per variable; ``var``
    may be shifted by a public constant, :func:`_shifted`): that of ``theta = (w, v)`` and
    that of ``w`` alone.  With an intercept, ``mu_w`` also serves as ``R(theta) >= mu_w/2
    ||w||^2`` (the coefficients' bound beside a free intercept), which a shifted square does not
    give: there it counts only unshifted squares (and is at least ``mu``, the curvature of all
    of ``theta``, which the bounds use through ``F``'s strong convexity alone)."""
    mu = {w.id: 0.0} | ({v.id: 0.0} if v is not None else {})
    plain = dict(mu)
    for c, e in public:
        arg = None
        if isinstance(e, quad_over_lin) and e.args[1].is_constant() \
                and np.allclose(e.args[1].value, 1.0):
            arg = e.args[0]
        elif isinstance(e, Power) and _p(e) == 2 and isinstance(e.args[0], Pnorm) \
                and _p(e.args[0]) == 2:
            arg = e.args[0].args[0]
        elif isinstance(e, Power) and _p(e) == 2:
            arg = e.args[0]   # cp.square(v) of a scalar intercept
        var = None if arg is None else _shifted(arg)
        if var is None or (arg is e.args[0] and isinstance(e, Power) and var.size != 1):
            continue
        if var.id in mu and c > 0:
            mu[var.id] += 2 * c
            if arg is var:
                plain[var.id] += 2 * c
    mu_theta = float(min(mu.values()))
    if v is None:
        return mu_theta, float(mu[w.id])
    return mu_theta, max(float(plain[w.id]), mu_theta)


def _check_coefficient_shape(expr: Any, spec: RowPrivacy) -> None:
    """Refuse ``X @ w`` with a 2-D ``w`` (the column-vector convention), naming the fix."""
    stack = [expr]
    while stack:
        e = stack.pop()
        if isinstance(e, MulExpression) and isinstance(e.args[0], cp.Parameter) \
                and e.args[0].id == spec.X.id and isinstance(e.args[1], cp.Variable) \
                and e.args[1].ndim != 1:
            w = e.args[1]
            raise UnsupportedProblemError(
                f"RowPrivacy: X multiplies the Variable {w.name()!r} of shape {w.shape}; the "
                f"coefficients must be a 1-D vector: write w = cp.Variable({spec.X.shape[1]}) "
                f"(not shape {w.shape}) and labels y of shape ({spec.X.shape[0]},), and use "
                "X @ w as it is (no cp.vec / cp.reshape).")
        stack.extend(e.args)


def detect(problem: cp.Problem, spec: RowPrivacy) -> RowModel:
    """The :class:`RowModel` of ``problem`` under ``spec``.

    Raises
    ------
    UnsupportedProblemError
        The model is not a row-level learning model; the message names the term.
    PrivacySpecError
        The spec does not match the model (X not used as X @ w, values missing).
    """
    if not problem.is_dcp():
        raise UnsupportedProblemError("the model is not DCP (convex); cvxdp solves convex "
                                      "models only. Check problem.is_dcp().")
    obj = problem.objective
    used = {p.id for p in obj.parameters()}
    for name, par in (("X", spec.X), ("y", spec.y)):
        if par is not None and par.id not in used:
            raise PrivacySpecError(
                f"RowPrivacy: the objective does not use the spec's {name} (Parameter "
                f"{par.name()!r}); name the model's own Parameters, e.g. RowPrivacy(X, y, ...) "
                f"for a loss of X @ w and y.")
    _check_coefficient_shape(obj.args[0], spec)
    sense = 1.0 if isinstance(obj, cp.Minimize) else -1.0
    walker = _Walker(spec)
    raw: list = []
    public: list = []
    try:
        walker.terms(obj.args[0], sense, raw, public)
    except _Refuse as err:
        raise UnsupportedProblemError(
            f"RowPrivacy: the objective is not a row-level learning model: {err}. Accepted: "
            "sum (or mean) over rows of a convex loss of X @ w (and y) plus public terms; see "
            "docs/learning.md.") from None
    if not raw or walker.w is None:
        raise PrivacySpecError(
            "RowPrivacy: the objective does not use X @ w; the private rows must enter the "
            "objective as a sum over rows of a loss of X @ w (and y).")
    for i, con in enumerate(problem.constraints):
        if walker.private(con):
            raise UnsupportedProblemError(
                f"RowPrivacy: constraint {i} ({quoted(con)}) uses the private X or y; only "
                "the objective may, as a sum over rows of a loss of X @ w (and y). A "
                "constraint on the private rows (a fairness or per-row condition) is not "
                "supported: drop it, or write a per-row requirement as a penalty term of the "
                "loss.")
    signs: set[float] = set()
    pieces: list[Piece] = []
    try:
        for kind, c, args, M in raw:
            vecs = []
            for a in args:
                xw, yxw = a.get("xw", 0.0), a.get("yxw", 0.0)
                for k_w, k_v in (("xw", "v"), ("yxw", "yv")):
                    cw, cv = a.get(k_w, 0.0), a.get(k_v, 0.0)
                    if cv and not cw:
                        raise _Refuse("the intercept enters the loss without X @ w")
                    if cv:
                        if not np.isclose(abs(cv / cw), 1.0):
                            raise _Refuse("the intercept must enter as X @ w + v or X @ w - v")
                        signs.add(float(np.sign(cv / cw)))
                vecs.append(np.array([xw, a.get("y", 0.0), yxw, a.get("1", 0.0)]))
            if kind != "lin" and c <= 0:
                raise _Refuse(f"a {kind} loss enters with a non-positive weight")
            pieces.append(Piece(kind, float(c), tuple(vecs), M=M))
    except _Refuse as err:
        raise UnsupportedProblemError(f"RowPrivacy: {err}.") from None
    v = walker.v
    if len(signs) > 1:
        raise UnsupportedProblemError("RowPrivacy: the intercept enters as X @ w + v in one "
                                      "term and X @ w - v in another; use one predictor.")
    sign_v = signs.pop() if signs else 1.0
    regulariser = sum((c * e for c, e in public), cp.Constant(0.0))
    mu, mu_w = _strong_convexity(public, walker.w, v)
    return RowModel(spec=spec, w=walker.w, v=v, sign_v=sign_v, loss=RowLoss(pieces),
                    regulariser=regulariser, mu=mu, constraints=list(problem.constraints),
                    sense=sense, public_terms=public, mu_w=mu_w)
