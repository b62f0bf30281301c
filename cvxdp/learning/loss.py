"""The per-row loss of a learning model: pieces, their public constants, smoothing, CVXPY form.

A detected model (:mod:`cvxdp.learning.detect`) has the per-row loss

    l(p, y) = sum_k c_k phi_k(u_k),    u_k = a_p p + a_y y + a_yp y p + a_1,

with ``p = x' w (+ s v)`` the linear predictor of one row, ``y`` its label and ``phi_k`` one of
``square``, ``sqpos`` (``max(u, 0)^2``), ``huber(M)``, ``abs``, ``logistic``, ``lin`` (the
identity) or ``max`` (the pointwise maximum of several such affine ``u``).  Every constant a
mechanism needs is computed here from the pieces and the public bounds ``|p| <= P``,
``|y| <= B`` (never from data):

* ``lipschitz(P, B)``: a bound on ``|dl/dp|`` (the gradient of one row in ``w`` is
  ``dl/dp x~``, so its norm is at most this times the row bound);
* ``smoothness(B)``: a bound on ``d^2 l / dp^2`` (infinite for a kink);
* ``value_bound(P, B)``: a bound on ``|l|`` (the sensitivity of the loss sum);
* ``smoothed(h)``: the public smoothing of every kink, ``|t| -> huber(t, h) / (2h)`` and
  ``max(a, b) = (a + b)/2 + |a - b|/2``, with its largest effect on one row's loss
  (``smoothing_error(h)``): ``0 <= l - l_h <= smoothing_error(h)``.

References
----------
Chaudhuri, Monteleoni & Sarwate 2011, "Differentially Private Empirical Risk Minimization",
JMLR 12, Sec. 3.4 (the Huberised hinge: a kink smoothed over a public width h).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import cvxpy as cp
import numpy as np

__all__ = ["Piece", "RowLoss", "KINDS"]

#: index of each coefficient in an affine vector (a_p, a_y, a_yp, a_1)
P, Y, YP, ONE = 0, 1, 2, 3
KINDS = ("square", "sqpos", "huber", "abs", "logistic", "lin", "max")


@dataclass(frozen=True)
class Piece:
    """One term ``coef * phi(u)`` of the per-row loss.

    Attributes
    ----------
    kind : str
        One of :data:`KINDS`; ``"max"`` has two or more affine arguments, the others one.
    coef : float
        ``> 0`` for the convex kinds; any sign for ``"lin"``.
    args : tuple of ndarray (4,)
        Affine vectors ``(a_p, a_y, a_yp, a_1)``.
    M : float
        The Huber threshold (``cvxpy.huber(u, M)``: ``u^2`` for ``|u| <= M``, else
        ``2 M |u| - M^2``).
    """

    kind: str
    coef: float
    args: tuple[np.ndarray, ...]
    M: float = 1.0

    def slope(self, B: float) -> float:
        """max over args of ``sup |du/dp| = |a_p| + |a_yp| B``."""
        return max(abs(a[P]) + abs(a[YP]) * B for a in self.args)

    def u_bound(self, P_: float, B: float) -> float:
        """max over args of ``sup |u|`` for ``|p| <= P_``, ``|y| <= B``."""
        return max(_times(abs(a[P]), P_) + abs(a[Y]) * B + _times(abs(a[YP]) * B, P_)
                   + abs(a[ONE]) for a in self.args)

    def depends_on_p(self) -> bool:
        return self.slope(1.0) > 0


def _times(a: float, b: float) -> float:
    """``a * b`` with ``0 * inf = 0`` (a coefficient that is zero ignores an unbounded p)."""
    return 0.0 if a == 0 else a * b


def _phi(kind: str, u: np.ndarray, M: float) -> np.ndarray:
    if kind == "square":
        return u * u
    if kind == "sqpos":
        return np.maximum(u, 0.0) ** 2
    if kind == "huber":
        a = np.abs(u)
        return np.where(a <= M, u * u, 2 * M * a - M * M)
    if kind == "abs":
        return np.abs(u)
    if kind == "logistic":
        return np.logaddexp(0.0, u)
    return u  # lin


def _dphi(kind: str, u: np.ndarray, M: float) -> np.ndarray:
    if kind == "square":
        return 2 * u
    if kind == "sqpos":
        return 2 * np.maximum(u, 0.0)
    if kind == "huber":
        return 2 * np.clip(u, -M, M)
    if kind == "abs":
        return np.sign(u)
    if kind == "logistic":
        return 0.5 * (1.0 + np.tanh(u / 2.0))  # the sigmoid, without overflow
    return np.ones_like(u)


def _ddphi(kind: str, u: np.ndarray, M: float) -> np.ndarray:
    """``phi''(u)`` of a smooth kind (the generalised one at the kinks of ``sqpos`` and
    ``huber``'s ends: 2 on the closed side)."""
    if kind == "square":
        return np.full_like(u, 2.0)
    if kind == "sqpos":
        return 2.0 * (u >= 0.0)
    if kind == "huber":
        return 2.0 * (np.abs(u) <= M)
    if kind == "logistic":
        s = 0.5 * (1.0 + np.tanh(u / 2.0))
        return s * (1.0 - s)
    return np.zeros_like(u)  # lin


class RowLoss:
    """The per-row loss ``l(p, y) = sum_k c_k phi_k(u_k)`` (module docstring)."""

    def __init__(self, pieces: list[Piece]) -> None:
        self.pieces = [pc for pc in pieces if pc.depends_on_p()]
        #: pieces that do not involve the model (e.g. ``sum_squares(y)``): a constant
        self.constant_pieces = [pc for pc in pieces if not pc.depends_on_p()]

    # -- public constants -------------------------------------------------------------------
    def lipschitz(self, P_: float, B: float) -> float:
        """``sup |dl/dp|`` over ``|p| <= P_``, ``|y| <= B`` (may be inf when P_ is)."""
        total = 0.0
        for pc in self.pieces:
            s = pc.slope(B)
            if pc.kind in ("square", "sqpos"):
                d = 2 * pc.u_bound(P_, B)
            elif pc.kind == "huber":
                d = 2 * min(pc.u_bound(P_, B), pc.M)
            else:  # abs, logistic, lin, max: |phi'| <= 1 (max: its slope is an arg's)
                d = 1.0
            total += abs(pc.coef) * d * s if s > 0 else 0.0
        return total

    def smoothness(self, B: float) -> float:
        """``sup d^2 l / dp^2`` (inf when a piece has a kink that was not smoothed)."""
        total = 0.0
        for pc in self.pieces:
            s = pc.slope(B)
            if pc.kind in ("square", "sqpos", "huber"):
                total += pc.coef * 2 * s * s
            elif pc.kind == "logistic":
                total += pc.coef * s * s / 4
            elif pc.kind in ("abs", "max"):
                return math.inf
            # lin: u is linear in p for a fixed y, no curvature
        return total

    def value_bound(self, P_: float, B: float) -> float:
        """``sup |l(p, y)|`` over the public domain (pieces without p included)."""
        total = 0.0
        for pc in self.pieces + self.constant_pieces:
            U = pc.u_bound(P_, B)
            if pc.kind in ("square", "sqpos"):
                v = U * U
            elif pc.kind == "huber":
                v = U * U if U <= pc.M else 2 * pc.M * U - pc.M**2
            elif pc.kind == "logistic":
                v = float(np.logaddexp(0.0, U)) if math.isfinite(U) else math.inf
            else:
                v = U
            total += abs(pc.coef) * v
        return total

    def nonnegative(self) -> bool:
        """Every piece is >= 0 (squares, Huber, abs, logistic, a max with a 0 argument)."""
        return all(pc.kind in ("square", "sqpos", "huber", "abs", "logistic")
                   or (pc.kind == "max" and any(not np.any(a) for a in pc.args))
                   for pc in self.pieces + self.constant_pieces)

    @property
    def smooth(self) -> bool:
        return math.isfinite(self.smoothness(1.0))

    def kinks(self) -> list[Piece]:
        return [pc for pc in self.pieces if pc.kind in ("abs", "max")]

    def smoothable(self) -> bool:
        """Every kink is ``abs`` or a ``max`` of two affine terms."""
        return all(pc.kind == "abs" or len(pc.args) == 2 for pc in self.kinks())

    def smoothing_error(self, h: float) -> float:
        """Largest ``l - l_h`` of one row: ``h/2`` per unit of ``abs``, ``h/4`` per ``max``."""
        return sum(pc.coef * (h / 2 if pc.kind == "abs" else h / 4) for pc in self.kinks())

    def kink_curvature(self, B: float) -> float:
        """``d^2 l_h / dp^2 <= smoothness of the smooth pieces + kink_curvature / h``."""
        total = 0.0
        for pc in self.kinks():
            if pc.kind == "abs":
                total += pc.coef * pc.slope(B) ** 2
            else:
                d = pc.args[0] - pc.args[1]
                total += pc.coef * (abs(d[P]) + abs(d[YP]) * B) ** 2 / 2
        return total

    def smoothed(self, h: float) -> RowLoss:
        """The loss with every kink replaced by its public smoothing of width ``h``."""
        out: list[Piece] = []
        for pc in self.pieces + self.constant_pieces:
            if pc.kind == "abs":
                # |u| >= huber(u, h) / (2h) >= |u| - h/2; curvature 1/h
                out.append(Piece("huber", pc.coef / (2 * h), pc.args, M=h))
            elif pc.kind == "max" and len(pc.args) == 2:
                a, b = pc.args
                out.append(Piece("lin", pc.coef / 2, (a + b,)))
                out.append(Piece("huber", pc.coef / (4 * h), (a - b,), M=h))
            else:
                out.append(pc)
        return RowLoss(out)

    # -- numbers on data (inside mechanisms only) -------------------------------------------
    def _u(self, a: np.ndarray, p: np.ndarray, y: np.ndarray) -> np.ndarray:
        return a[P] * p + a[Y] * y + a[YP] * y * p + a[ONE]

    def values(self, p: np.ndarray, y: np.ndarray) -> np.ndarray:
        """``l(p_i, y_i)`` for every row (y: zeros when the model has no labels)."""
        out = np.zeros_like(p)
        for pc in self.pieces + self.constant_pieces:
            if pc.kind == "max":
                out += pc.coef * np.max([self._u(a, p, y) for a in pc.args], axis=0)
            else:
                out += pc.coef * _phi(pc.kind, self._u(pc.args[0], p, y), pc.M)
        return out

    def derivative(self, p: np.ndarray, y: np.ndarray) -> np.ndarray:
        """A (sub)derivative ``dl/dp`` at every row (the argmax's slope for ``max``)."""
        out = np.zeros_like(p)
        for pc in self.pieces:
            if pc.kind == "max":
                us = np.array([self._u(a, p, y) for a in pc.args])
                k = np.argmax(us, axis=0)
                slopes = np.array([a[P] + a[YP] * y for a in pc.args])
                out += pc.coef * np.take_along_axis(slopes, k[None], axis=0)[0]
            else:
                a = pc.args[0]
                out += pc.coef * _dphi(pc.kind, self._u(a, p, y), pc.M) * (a[P] + a[YP] * y)
        return out

    def curvature(self, p: np.ndarray, y: np.ndarray) -> np.ndarray:
        """``d^2 l / dp^2`` at every row (a smooth loss: no ``abs`` or ``max`` piece)."""
        out = np.zeros_like(p)
        for pc in self.pieces:
            if pc.kind in ("abs", "max"):
                raise ValueError("curvature of a kink: smooth the loss first")
            a = pc.args[0]
            s = a[P] + a[YP] * y
            out += pc.coef * _ddphi(pc.kind, self._u(a, p, y), pc.M) * s * s
        return out

    # -- the CVXPY expression of sum_i l(p_i, y_i) -----------------------------------------
    def expression(self, p: cp.Expression, y: np.ndarray | None) -> cp.Expression:
        """``sum_i l(p_i, y_i)`` as a CVXPY expression (DCP) of the predictor ``p``."""
        yv = np.zeros(p.shape) if y is None else np.asarray(y, dtype=float)
        yp = cp.multiply(yv, p)
        terms = []
        for pc in self.pieces:
            us = [a[P] * p + a[YP] * yp + (a[Y] * yv + a[ONE]) for a in pc.args]
            if pc.kind == "max":
                terms.append(pc.coef * cp.sum(cp.maximum(*us)))
            elif pc.kind == "square":
                terms.append(pc.coef * cp.sum_squares(us[0]))
            elif pc.kind == "sqpos":
                terms.append(pc.coef * cp.sum_squares(cp.pos(us[0])))
            elif pc.kind == "huber":
                terms.append(pc.coef * cp.sum(cp.huber(us[0], pc.M)))
            elif pc.kind == "abs":
                terms.append(pc.coef * cp.norm1(us[0]))
            elif pc.kind == "logistic":
                terms.append(pc.coef * cp.sum(cp.logistic(us[0])))
            else:
                terms.append(pc.coef * cp.sum(us[0]))
        const = float(np.sum(RowLoss(self.constant_pieces).values(np.zeros(p.shape), yv)))
        return cp.sum(terms) + const if terms else cp.Constant(const)

    def gram_expression(self, Xt: np.ndarray, y: np.ndarray | None, th: cp.Expression
                        ) -> cp.Expression | None:
        """``sum_i l(x~_i' th, y_i)`` through ``X~' X~`` when every piece is a square or linear
        in ``p`` without a ``y p`` term: the same function of ``th`` with d instead of n terms
        (an exact rewriting, e.g. ``||X w - y||^2 = w' X'X w - 2 (X'y)' w + y'y``); None
        otherwise."""
        if any(pc.kind not in ("square", "lin") or pc.args[0][YP] for pc in self.pieces):
            return None
        yv = np.zeros(Xt.shape[0]) if y is None else np.asarray(y, dtype=float)
        gram = Xt.T @ Xt
        quad = 0.0
        lin = np.zeros(Xt.shape[1])
        const = float(np.sum(RowLoss(self.constant_pieces).values(np.zeros(len(yv)), yv)))
        for pc in self.pieces:
            a = pc.args[0]
            r = a[Y] * yv + a[ONE]          # u_i = a_p x~_i' th + r_i
            if pc.kind == "square":
                quad += pc.coef * a[P] ** 2
                lin += pc.coef * 2 * a[P] * (Xt.T @ r)
                const += pc.coef * float(r @ r)
            else:
                lin += pc.coef * a[P] * Xt.sum(axis=0)
                const += pc.coef * float(r.sum())
        expr = lin @ th + const
        if quad:
            expr = expr + quad * cp.quad_form(th, cp.psd_wrap((gram + gram.T) / 2))
        return expr

    def describe(self) -> str:
        names = {"square": "squared", "sqpos": "squared hinge", "huber": "Huber", "abs": "absolute",
                 "logistic": "logistic", "lin": "linear", "max": "piecewise-linear (max)"}
        return " + ".join(sorted({names[pc.kind] for pc in self.pieces})) or "constant"


def scaled(piece: Piece, factor: float) -> Piece:
    """``factor * piece`` (a negative factor is allowed for ``lin`` only)."""
    return replace(piece, coef=piece.coef * factor)
