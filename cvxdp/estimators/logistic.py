"""Private binary logistic regression as a scikit-learn classifier
(:class:`PrivateLogisticRegression`)."""

from __future__ import annotations

import math
from typing import Any

import cvxpy as cp
import numpy as np

from cvxdp.arguments import check_box, check_choice, check_flag, check_number
from cvxdp.errors import ArgumentError, PrivacySpecError, UnsupportedProblemError
from cvxdp.estimators._base import (
    ClassifierMixin,
    _PrivateEstimator,
    check_fitted,
    check_X,
    check_X_y,
)
from cvxdp.learning.solve import MECHANISMS
from cvxdp.specs import RowPrivacy

__all__ = ["PrivateLogisticRegression"]


class PrivateLogisticRegression(ClassifierMixin, _PrivateEstimator):
    """L2-regularised binary logistic regression with (epsilon, delta)-differential privacy.

    ``fit`` writes scikit-learn's model as a CVXPY problem over the rows ``(x_i, y_i)``,

        ``minimise  (1/n) sum_i log(1 + exp(-y_i (x_i' w + b))) + ||(w, b / c)||^2 / (2 C n)``,

    (scikit-learn's ``C`` per row) over the ball ``||(w, b / c)|| <= sqrt(2 C n log 2)``
    (the minimiser's: ``F(w*) <= F(0) = log 2``, so the ball changes no answer and gives the
    mechanisms a public bound), declares the rows private with :class:`cvxdp.RowPrivacy`
    and solves it with the learning path (objective perturbation, output perturbation or
    noisy gradient descent, ``mechanism=``; docs/learning.md).  Each ``fit`` is one
    (epsilon, delta)-DP release about the rows under replace-one neighbours (n public).  The
    intercept is the weight of a constant feature ``c`` appended to the public-centred features
    (LIBLINEAR's ``intercept_scaling``), so it is regularised with the rest and the objective is
    strongly convex, which objective perturbation needs.

    Parameters
    ----------
    epsilon, delta : float
        Budget of one ``fit``.
    bounds_X : (lo, hi), optional
        Public box of the features (scalars or arrays of length ``n_features``); features are
        centred on its midpoint and rows are bounded by its half-widths.  Values outside are
        clipped into it (never refused).
    data_norm : float, optional
        Public bound on ``||x_i||_2`` (diffprivlib's name); longer rows are scaled down onto it.
        Give ``bounds_X`` or ``data_norm``.
    C : float
        Inverse regularisation strength, as in scikit-learn (larger: less regularisation).
    fit_intercept : bool
    classes : pair
        The two class labels, public (default ``(0, 1)``): ``y == classes[1]`` is the positive
        class and every other label the negative one.  They are never read from ``y`` (the set
        of labels present is private).
    mechanism : {"auto", "objective", "output", "gradient"}
        The learning path's mechanism (``"auto"``: the one with the best proven bound; the
        model states the minimiser's public ball ``||(w, theta_b)|| <= sqrt(2 C n log 2)``,
        which every mechanism may use).
    random_state : None, int, numpy RandomState or Generator
    accountant : cvxdp.PrivacyAccountant, optional
        Ledger every ``fit`` is charged to (shared by scikit-learn's clones).

    Attributes
    ----------
    coef_ : (1, n_features) ndarray
    intercept_ : (1,) ndarray
    classes_ : (2,) ndarray
    status_ : str
        The fit's status (``"optimal_inaccurate"`` only when the certified gap of the objective
        meets the default accuracy; docs/learning.md).
    privacy_ : cvxdp.PrivacyReport
    result_ : cvxdp.PrivateSolution
    n_features_in_, feature_names_in_ :
        As in scikit-learn.

    Examples
    --------
    >>> import numpy as np
    >>> from cvxdp.estimators import PrivateLogisticRegression
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, (20_000, 3)); y = (X @ [2.0, -1.0, 0.5] > 0).astype(int)
    >>> clf = PrivateLogisticRegression(epsilon=1.0, bounds_X=(-1, 1), random_state=0).fit(X, y)
    >>> clf.score(X, y) > 0.9
    True

    The diffprivlib equivalent (pure epsilon-DP objective perturbation, labels from ``y``)::

        from diffprivlib.models import LogisticRegression
        LogisticRegression(epsilon=1.0, data_norm=np.sqrt(3), random_state=0).fit(X, y)

    References
    ----------
    Chaudhuri, Monteleoni & Sarwate 2011, "Differentially private empirical risk minimization"
    (JMLR); Kifer, Smith & Thakurta 2012, "Private convex empirical risk minimization and
    high-dimensional regression" (COLT).
    """

    def __init__(self, *, epsilon: float = 1.0, delta: float = 1e-6, bounds_X: Any = None,
                 data_norm: float | None = None, C: float = 1.0, fit_intercept: bool = True,
                 classes: Any = (0, 1), mechanism: str = "auto", random_state: Any = None,
                 accountant: Any = None) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.bounds_X = bounds_X
        self.data_norm = data_norm
        self.C = C
        self.fit_intercept = fit_intercept
        self.classes = classes
        self.mechanism = mechanism
        self.random_state = random_state
        self.accountant = accountant

    def _design(self, X: np.ndarray) -> tuple[np.ndarray, float, np.ndarray, float]:
        """(features handed to the solver, their row bound, the centre, the constant feature);
        every number but the clipped data comes from the public arguments."""
        n, d = X.shape
        if self.bounds_X is not None:
            lo, hi = check_box("bounds_X", self.bounds_X, d, error=PrivacySpecError)
            with np.errstate(invalid="ignore"):  # NaN stays NaN: the solver maps it
                xc = np.clip(X, lo, hi)
            mid, half = (0.5 * (lo + hi), 0.5 * (hi - lo)) if self.fit_intercept else (
                np.zeros(d), np.maximum(abs(lo), abs(hi)))
            xc = xc - mid
            bound2, c = float(half @ half), float(np.sqrt(np.mean(half**2)))
        elif self.data_norm is not None:
            rb = check_number("data_norm", self.data_norm, "a finite public number > 0 (the "
                              "largest l2 norm a row may have; longer rows are clipped)",
                              lambda v: v > 0, error=PrivacySpecError)
            xc, mid, bound2, c = X, np.zeros(d), rb**2, rb / math.sqrt(d + 1)
        else:
            raise PrivacySpecError("PrivateLogisticRegression needs a public bound on the "
                                   "features: bounds_X=(lo, hi) or data_norm= (a bound on "
                                   "||x_i||); never computed from the data.")
        if self.fit_intercept:
            xc = np.column_stack([xc, np.full(n, c)])
            bound2 += c**2
        return xc, math.sqrt(bound2), mid, c

    def _check(self) -> None:
        check_choice("mechanism", self.mechanism, MECHANISMS, error=UnsupportedProblemError)
        check_flag("fit_intercept", self.fit_intercept)
        check_number("C", self.C, "a finite number > 0 (the inverse regularisation "
                     "strength, as in scikit-learn)", lambda v: v > 0)
        classes = np.asarray(self.classes, dtype=object).ravel()
        if classes.size != 2 or classes[0] == classes[1]:
            raise ArgumentError(f"classes={self.classes!r}: give the two class labels, e.g. "
                                "classes=(0, 1) or (-1, 1) (public: never read from y).")

    def _check_label_kind(self, y: np.ndarray) -> None:
        """Refuse labels whose dtype can never equal the classes (strings against numbers, or
        numbers against strings): every row would be read as the negative class.  Reads the
        dtype only, the data's schema (the same for every neighbouring dataset), never a
        label."""
        text = [isinstance(c, (str, bytes, np.str_, np.bytes_)) for c in self.classes]
        if y.dtype.kind in "USa" and not any(text):
            raise ArgumentError(
                f"y holds text labels (dtype {y.dtype}) but classes={tuple(self.classes)!r} "
                "are numbers, so no row would be read as positive: pass the two labels, e.g. "
                "classes=('no', 'yes') (negative first; public, never read from y).")
        if y.dtype.kind in "biuf" and all(text):
            raise ArgumentError(
                f"y holds numbers (dtype {y.dtype}) but classes={tuple(self.classes)!r} are "
                "text, so no row would be read as positive: pass numeric labels, e.g. "
                "classes=(0, 1).")

    def fit(self, X: Any, y: Any) -> PrivateLogisticRegression:
        """One private release of the coefficients from ``(X, y)`` (n x d, n labels)."""
        self._check()
        X, y = check_X_y(self, X, y, y_numeric=False)
        self._check_label_kind(np.asarray(y))
        xa, bound, mid, c = self._design(X)
        n, k = xa.shape
        labels = np.where(np.asarray(y, dtype=object) == self.classes[1], 1.0, -1.0)
        Xp = cp.Parameter((n, k), name="X", value=np.nan_to_num(xa))
        yp = cp.Parameter(n, name="y", value=labels)
        w = cp.Variable(k, name="w")
        loss = cp.sum(cp.logistic(-cp.multiply(yp, Xp @ w))) / n
        # the minimiser's public ball: F(w*) <= F(0) = log 2 and F >= ||w||^2 / (2 C n), so
        # ||w*|| <= sqrt(2 C n log 2); stating it changes no minimiser and gives the learning
        # path the bounded domain its bounds and noisy gradient descent use
        radius = math.sqrt(2.0 * float(self.C) * n * math.log(2.0))
        problem = cp.Problem(cp.Minimize(loss + cp.sum_squares(w) / (2.0 * float(self.C) * n)),
                             [cp.norm(w, 2) <= radius])
        spec = RowPrivacy(Xp, yp, row_bound=bound, label_bound=1.0)
        sol = problem.solve_private(private=spec, mechanism=self.mechanism, **self._fit_kwargs())
        theta = np.asarray(w.value if w.value is not None else np.zeros(k), dtype=float)
        d = X.shape[1]
        self.coef_ = theta[:d].reshape(1, d).copy()
        b = float(theta[d] * c - theta[:d] @ mid) if self.fit_intercept else 0.0
        self.intercept_ = np.array([b])
        self.classes_ = np.asarray(self.classes)
        self.status_ = sol.status
        self.privacy_ = sol.privacy
        self.result_ = sol
        return self

    def decision_function(self, X: Any) -> np.ndarray:
        """``X coef_' + intercept_``: positive for ``classes_[1]`` (post-processing)."""
        check_fitted(self, "coef_")
        X = check_X(self, X, reset=False)
        return X @ self.coef_[0] + self.intercept_[0]

    def predict_proba(self, X: Any) -> np.ndarray:
        """``[1 - p, p]`` with ``p = 1 / (1 + exp(-decision_function(X)))``."""
        p = 0.5 * (1.0 + np.tanh(0.5 * self.decision_function(X)))  # the logistic, stably
        return np.column_stack([1.0 - p, p])

    def predict(self, X: Any) -> np.ndarray:
        """``classes_[1]`` where the decision function is positive, else ``classes_[0]``."""
        return np.where(self.decision_function(X) > 0, self.classes_[1], self.classes_[0])
