"""Privacy specifications: which data of a CVXPY model is private and how neighbours differ.

One class per setting of Song, Xue & Zhang (2025) (Song, Xue & Zhang (2025)):

=========================  ========================  =============================================
spec                       private data              neighbouring datasets (paper definition)
=========================  ========================  =============================================
``ConstraintPrivacy``      Parameters inside the     every entry of every declared parameter moves
                           constraint matrix A       by at most ``sensitivity`` (all rows at once;
                                                     low-sensitivity constraint privacy, Def C.6)
``ScalarPrivacy``          Parameters in the         every entry moves by at most ``sensitivity``
                           right-hand side b         (``||b - b'||_inf``, Def C.3)
``ObjectivePrivacy``       Parameters in the         every entry moves by at most ``sensitivity``
                           objective c               (Def C.11)
``ConstraintSetPrivacy``   the rows of one           neighbours differ by one whole row of that
                           inequality constraint     constraint (added/removed; high-sensitivity
                                                     constraint privacy, Def B.1)
=========================  ========================  =============================================

The sensitivity is declared *per entry of the parameter* (l-inf over the parameter's entries).
:func:`cvxdp.transform.to_scp` turns it into sound bounds on the change of every entry of the
canonical cone program (A, b, c) -- see :class:`cvxdp.transform.SensitivityBounds` -- and checks
that the parameter occurs only where the setting allows (``PrivacySpecError`` otherwise).

A spec only describes the data; it holds no budget.  Specs are validated when they are built
(types, finite positive sensitivity) and again against the model by ``to_scp``.  That every
parameter of a model is declared private or public is checked by :mod:`cvxdp.declarations`
(``check_declared`` and ``spec_parameters`` stay importable from here).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import cvxpy as cp
import numpy as np
from cvxpy.constraints import Inequality, NonNeg, NonPos

from cvxdp.declarations import check_declared, spec_parameters
from cvxdp.errors import PrivacySpecError, check_positive

__all__ = [
    "ConstraintPrivacy",
    "ScalarPrivacy",
    "ObjectivePrivacy",
    "ConstraintSetPrivacy",
    "RowPrivacy",
    "PrivacySpec",
    "as_spec_tuple",
    "check_declared",
    "spec_parameters",
]


def _as_params(params: Any, cls: str) -> tuple[cp.Parameter, ...]:
    if isinstance(params, cp.Parameter):
        out: tuple[Any, ...] = (params,)
    elif isinstance(params, Iterable) and not isinstance(params, (str, np.ndarray)):
        out = tuple(params)
    else:
        out = (params,)
    if not out:
        raise PrivacySpecError(f"{cls} needs at least one cvxpy.Parameter; got an empty list.")
    for p in out:
        if not isinstance(p, cp.Parameter):
            raise PrivacySpecError(
                f"{cls} takes cvxpy.Parameter objects, got {type(p).__name__}. Put the private "
                "data in a cp.Parameter (p = cp.Parameter(shape, name=...); p.value = data) and "
                "use p in the model."
            )
    return out


def _check_sensitivity(sensitivity: Any, cls: str, names: str) -> float:
    what = (f"{cls}({names}): sensitivity must be one finite number > 0 (the largest change of "
            "any entry of the parameter between neighbours)")
    if isinstance(sensitivity, (list, tuple, np.ndarray)) and np.size(sensitivity) > 1:
        try:
            top = float(np.max(np.asarray(sensitivity, dtype=float)))
        except (TypeError, ValueError):
            top = None
        if top is not None and math.isfinite(top) and top > 0:
            # the sensitivity is a public argument: naming its maximum reads no data
            raise PrivacySpecError(
                f"{what}, got {np.size(sensitivity)} values: per-entry sensitivities are not "
                f"taken; pass their maximum, sensitivity={top:g}, a bound for every entry (or "
                "split the entries into parameters of their own, one spec each).")
    return check_positive(
        sensitivity, PrivacySpecError,
        f"{cls}({names}): sensitivity must be finite and > 0, got {sensitivity!r}. Give the "
        "largest change of any entry of the parameter between neighbouring datasets.",
        type_message=what)


class _ParamSpec:
    """Shared code of the parameter-based specs (a frozen dataclass subclass each)."""

    params: tuple[cp.Parameter, ...]
    sensitivity: float
    #: which canonical data the parameters may enter: subset of {"A", "b", "c"}
    allowed: frozenset[str] = frozenset()
    setting: str = ""

    def _validate(self) -> None:
        cls = type(self).__name__
        params = _as_params(self.params, cls)
        object.__setattr__(self, "params", params)
        object.__setattr__(
            self, "sensitivity", _check_sensitivity(self.sensitivity, cls, self.names)
        )

    @property
    def param(self) -> cp.Parameter:
        """The first (usually the only) private parameter."""
        return self.params[0]

    @property
    def names(self) -> str:
        return ", ".join(repr(p.name()) for p in _as_params(self.params, type(self).__name__))

    def describe(self) -> str:
        """Neighbouring relation in words (for privacy reports)."""
        return (
            f"{self.setting} privacy: every entry of parameter(s) {self.names} may change by at "
            f"most {self.sensitivity:g} between neighbouring datasets"
        )


@dataclass(frozen=True, eq=False)
class ConstraintPrivacy(_ParamSpec):
    """Low-sensitivity constraint privacy (Song, Xue & Zhang 2025, Def C.6, Alg. 1, Thm C.7).

    Parameters
    ----------
    params : cvxpy.Parameter or sequence of Parameter
        Private data entering the constraint matrix ``A`` (coefficients of variables).
    sensitivity : float
        Largest change of any single entry of the parameter(s) between neighbours (> 0).

    Notes
    -----
    Under ``mechanism="mwu"`` the parameters may appear only as coefficients of variables in
    constraints (canonical ``A``), not in right-hand sides or in the objective: Song et al.
    2025's Def C.6 keeps ``b`` and ``c`` shared.  Perturbation (and so the default ``"auto"``)
    releases every entry of the parameter wherever it occurs as a coefficient of variables in
    constraints, and in the objective too when it is such a coefficient as well, with the same
    per-entry sensitivity.  A parameter in a right-hand side (a constant term, e.g. ``b`` in
    ``A @ x <= b`` or ``Y`` in ``cp.norm(X - Y) <= r``) is :class:`ScalarPrivacy`'s: declared
    here, it is refused with that advice.  The derived per-constraint bound in the algebra's
    spectral norm (the paper's ``Delta_inf``) is
    :attr:`cvxdp.transform.SensitivityBounds.constraint_inf`.

    References
    ----------
    Song, Xue & Zhang (2025): Def C.6, Sec. 5.2 (Alg. 1), Thm C.7.
    """

    params: Any
    sensitivity: float
    allowed = frozenset({"A"})
    setting = "constraint"

    def __post_init__(self) -> None:
        self._validate()


@dataclass(frozen=True, eq=False)
class ScalarPrivacy(_ParamSpec):
    """Scalar (right-hand side) privacy: only ``b`` is private (Song et al. 2025, Def C.3, Thm C.5).

    Parameters
    ----------
    params : cvxpy.Parameter or sequence of Parameter
        Private data entering the right-hand sides only (constants of constraints).
    sensitivity : float
        Largest change of any entry between neighbours (> 0); ``||b - b'||_inf`` follows.

    References
    ----------
    Song, Xue & Zhang (2025): Def C.3, Lemma C.4, Thm C.5.
    """

    params: Any
    sensitivity: float
    allowed = frozenset({"b"})
    setting = "scalar"

    def __post_init__(self) -> None:
        self._validate()


@dataclass(frozen=True, eq=False)
class ObjectivePrivacy(_ParamSpec):
    """Objective privacy: only the objective coefficients are private (Song et al. 2025, Def C.11).

    Parameters
    ----------
    params : cvxpy.Parameter or sequence of Parameter
        Private data entering the (linear part of the) objective only.
    sensitivity : float
        Largest change of any entry between neighbours (> 0).

    Notes
    -----
    A parameter that enters only the objective's constant term changes nothing the solver
    sees; it is still allowed (the offset bound is reported in ``SensitivityBounds.offset``).

    References
    ----------
    Song, Xue & Zhang (2025): Def C.11, Thm C.12.
    """

    params: Any
    sensitivity: float
    allowed = frozenset({"c"})
    setting = "objective"

    def __post_init__(self) -> None:
        self._validate()


@dataclass(frozen=True, eq=False)
class ConstraintSetPrivacy:
    """High-sensitivity constraint privacy: neighbours differ by one whole constraint row.

    Parameters
    ----------
    constraint : cvxpy Constraint
        An inequality constraint of the model (e.g. a covering constraint ``A @ x >= 1``); each
        of its scalar rows is one person's constraint, and a neighbouring dataset adds or
        removes one row (Song, Xue & Zhang 2025, Def B.1, implemented symmetrically as add/remove).

    Notes
    -----
    :func:`cvxdp.transform.to_scp` records the canonical rows of this constraint in
    ``SensitivityBounds.rows``; the dense-MWU solvers work on those rows.

    References
    ----------
    Song, Xue & Zhang (2025): Def B.1, Alg. 3, Thm B.7.
    """

    constraint: Any
    setting = "constraint_set"

    def __post_init__(self) -> None:
        if not isinstance(self.constraint, (Inequality, NonNeg, NonPos)):
            raise PrivacySpecError(
                "ConstraintSetPrivacy takes one scalar-row inequality constraint of the model "
                f"(e.g. A @ x >= 1), got {type(self.constraint).__name__}. Equalities, cone "
                "and PSD constraints cannot be split into per-person rows."
            )
        if not all(arg.is_affine() for arg in self.constraint.args):
            # the message names the constraint without printing it: its text would show the
            # private rows when they are numeric constants
            raise PrivacySpecError(
                f"ConstraintSetPrivacy: the private constraint ({self.label}) is not affine <= "
                "affine; only linear (covering-type) inequalities have one canonical row per "
                "person."
            )

    @property
    def params(self) -> tuple[cp.Parameter, ...]:
        return tuple(self.constraint.parameters())

    @property
    def label(self) -> str:
        """A name for the constraint that shows none of its data (type and CVXPY id)."""
        return f"{type(self.constraint).__name__} constraint with cvxpy id {self.constraint.id}"

    def describe(self) -> str:
        return (
            "high-sensitivity constraint privacy: neighbouring datasets differ by adding or "
            f"removing one row of the private constraint ({self.label})"
        )


_NEIGHBOURS = ("replace", "add_remove")


@dataclass(frozen=True, eq=False)
class RowPrivacy:
    """Row-level privacy of a learning model: one person is one row ``(x_i, y_i)``.

    Parameters
    ----------
    X : cvxpy.Parameter, shape (n, d)
        The private feature matrix; the model may use it only through ``X @ w`` (optionally
        ``X @ w + v`` with a scalar intercept Variable ``v``).
    y : cvxpy.Parameter, shape (n,), optional
        The private labels / responses, used elementwise together with ``X @ w``.
    row_bound : float
        Public bound on ``||x_i||_2``; longer rows are scaled down to it (clipped, never refused).
    label_bound : float, optional
        Public bound on ``|y_i|``; required when ``y`` is given; labels outside are clipped.
    neighbours : {"replace", "add_remove"}
        Neighbouring datasets differ by replacing one row (same n) or by adding/removing one.

    Notes
    -----
    The models and mechanisms are described in :mod:`cvxdp.learning` and ``docs/learning.md``.

    References
    ----------
    Chaudhuri, Monteleoni & Sarwate 2011, "Differentially Private Empirical Risk Minimization"
    (JMLR); Kifer, Smith & Thakurta 2012, "Private Convex Empirical Risk Minimization and
    High-dimensional Regression" (COLT).
    """

    X: Any
    y: Any = None
    row_bound: float | None = None
    label_bound: float | None = None
    neighbours: str = "replace"
    setting = "row"

    def __post_init__(self) -> None:
        if not isinstance(self.X, cp.Parameter) or self.X.ndim != 2:
            raise PrivacySpecError(
                "RowPrivacy(X, ...): X must be a 2-D cvxpy.Parameter (one row per person), got "
                f"{type(self.X).__name__}{getattr(self.X, 'shape', '')}. Put the data in "
                "X = cp.Parameter((n, d)) and write the model with X @ w.")
        if self.y is not None and (not isinstance(self.y, cp.Parameter)
                                   or self.y.shape != (self.X.shape[0],)):
            m, d = self.X.shape
            column = (f" CVXPY's examples often write labels as a column ({m}, 1) and the "
                      f"coefficients as ({d}, 1); RowPrivacy takes both as vectors: y = "
                      f"cp.Parameter({m}, value=Y.ravel()) and w = cp.Variable({d}), so that "
                      f"X @ w has shape ({m},)."
                      if getattr(self.y, "shape", None) == (m, 1) else "")
            raise PrivacySpecError(
                f"RowPrivacy(X, y, ...): y must be a cvxpy.Parameter of shape ({m},)"
                f" (one label per row of X), got {type(self.y).__name__}"
                f"{getattr(self.y, 'shape', '')}.{column}")
        if self.row_bound is None:
            raise PrivacySpecError(
                "RowPrivacy needs row_bound=: a public bound on the l2 norm of one row x_i "
                "(e.g. 1.0 after scaling features to the unit ball); longer rows are clipped. "
                "Never compute it from the data.")
        object.__setattr__(self, "row_bound", check_positive(
            self.row_bound, PrivacySpecError,
            f"RowPrivacy: row_bound must be a finite number > 0, got {self.row_bound!r}."))
        if self.y is not None:
            if self.label_bound is None:
                raise PrivacySpecError(
                    "RowPrivacy(X, y, ...) needs label_bound=: a public bound on |y_i| (1 for "
                    "labels in {-1, 1}); labels outside it are clipped.")
            object.__setattr__(self, "label_bound", check_positive(
                self.label_bound, PrivacySpecError,
                f"RowPrivacy: label_bound must be a finite number > 0, got "
                f"{self.label_bound!r}."))
        elif self.label_bound is not None:
            raise PrivacySpecError("RowPrivacy: label_bound= was given without y=; pass the "
                                   "label Parameter as y= or drop label_bound.")
        if self.neighbours not in _NEIGHBOURS:
            raise PrivacySpecError(
                f"RowPrivacy: neighbours must be 'replace' (one row replaced, n public) or "
                f"'add_remove' (one row added or removed), got {self.neighbours!r}.")

    @property
    def params(self) -> tuple[cp.Parameter, ...]:
        return (self.X,) if self.y is None else (self.X, self.y)

    def describe(self) -> str:
        what = "row (x_i, y_i)" if self.y is not None else "row x_i"
        verb = "replace one" if self.neighbours == "replace" else "add or remove one"
        label = "" if self.y is None else f", |y_i| <= {self.label_bound:g}"
        return (f"{verb} {what} with ||x_i||_2 <= {self.row_bound:g}{label} (public bounds; "
                "rows outside are clipped)")


PrivacySpec = ConstraintPrivacy | ScalarPrivacy | ObjectivePrivacy | ConstraintSetPrivacy
_SPEC_TYPES = (ConstraintPrivacy, ScalarPrivacy, ObjectivePrivacy, ConstraintSetPrivacy)


def as_spec_tuple(private: Any) -> tuple[PrivacySpec, ...]:
    """Normalise ``private=`` (None, one spec, or a sequence of specs) to a tuple of specs.

    Raises
    ------
    PrivacySpecError
        If an element is not a cvxdp privacy spec.
    """
    if private is None:
        return ()
    items: Sequence[Any] = (
        (private,) if isinstance(private, _SPEC_TYPES) else tuple(private)
        if isinstance(private, (list, tuple)) else (private,)
    )
    for spec in items:
        if not isinstance(spec, _SPEC_TYPES):
            raise PrivacySpecError(
                f"private= takes cvxdp privacy specs, got {type(spec).__name__}. Use e.g. "
                "cvxdp.ConstraintPrivacy(A, sensitivity=D), cvxdp.ScalarPrivacy(b, "
                "sensitivity=D), cvxdp.ObjectivePrivacy(c, sensitivity=D) (D: how far one "
                "person can move an entry) or "
                "cvxdp.ConstraintSetPrivacy(constraint)."
            )
    return tuple(items)
