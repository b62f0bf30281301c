"""Private linear regression as a scikit-learn estimator (:class:`PrivateLinearRegression`)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from cvxdp.arguments import check_box, check_choice, check_flag
from cvxdp.errors import PrivacySpecError, UnsupportedProblemError
from cvxdp.estimation.regression import least_squares
from cvxdp.estimation.rows import check_bound
from cvxdp.estimators._base import (
    RegressorMixin,
    _PrivateEstimator,
    check_fitted,
    check_X,
    check_X_y,
)

__all__ = ["PrivateLinearRegression"]


class PrivateLinearRegression(RegressorMixin, _PrivateEstimator):
    """Ordinary least squares with (epsilon, delta)-differential privacy.

    Wraps :func:`cvxdp.least_squares` (sufficient-statistics perturbation by default: one
    Gaussian release of the clipped Gram matrix of the rows ``(x_i, 1, y_i)``, then the least
    squares fit on it, post-processing).  Each ``fit`` is one (epsilon, delta)-DP release about
    the rows of ``(X, y)`` under replace-one neighbours (n public).

    Parameters
    ----------
    epsilon, delta : float
        Budget of one ``fit`` (delta > 0: the Gram release is a Gaussian mechanism).
    bounds_X : (lo, hi), optional
        Public box of the features (scalars or arrays of length ``n_features``).  Features
        outside it are clipped into it, record by record (never refused).
    bounds_y : (lo, hi), optional
        Public interval of the target, clipped likewise.  Give both ``bounds_X`` and
        ``bounds_y``, or ``row_bound``.
    row_bound : float, optional
        Public bound on ``||(x_i, y_i)||_2`` (cvxdp's own form); rows above it are scaled down
        onto it.  Ignored when ``bounds_X`` / ``bounds_y`` are given.
    fit_intercept : bool
        Fit an intercept.  With boxes the data are first centred on the boxes' public
        midpoints, and a constant feature ``c`` (the root mean square of the feature
        half-widths, or ``row_bound / sqrt(d + 1)``, so it is on the scale of one feature) is
        appended; ``intercept_ = c theta_c + m_y - coef_ . m_X``.  Centring on public
        midpoints spends nothing (diffprivlib spends part of epsilon on private means).
    mechanism : {"ssp", "rp"}
        :meth:`cvxdp.estimation.regression.LeastSquaresProblem.solve_private`'s mechanism.
    random_state : None, int, numpy RandomState or Generator
        The noise's seed: a fixed int gives the same release on the same data.
    accountant : cvxdp.PrivacyAccountant, optional
        Ledger every ``fit`` is charged to (shared by the clones scikit-learn makes); a fit
        that would overspend is refused before reading the data.

    Attributes
    ----------
    coef_ : (n_features,) ndarray
    intercept_ : float
    status_ : str
        The fit's status (``"optimal_inaccurate"`` only when its certified relative gap meets
        the default accuracy; docs/regression.md).
    privacy_ : cvxdp.PrivacyReport
        The guarantee of the last fit.
    result_ : cvxdp.PrivateSolution
        The solver's full answer (status, info).
    n_features_in_, feature_names_in_ :
        As in scikit-learn (names from a pandas DataFrame).

    Examples
    --------
    >>> import numpy as np
    >>> from cvxdp.estimators import PrivateLinearRegression
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, (50_000, 3)); y = X @ [1.0, -0.5, 0.25] + 2.0
    >>> reg = PrivateLinearRegression(epsilon=1.0, bounds_X=(-1, 1), bounds_y=(0, 4),
    ...                               random_state=0).fit(X, y)
    >>> bool(np.allclose(reg.coef_, [1.0, -0.5, 0.25], atol=0.05))
    True

    The diffprivlib equivalent (pure epsilon-DP, part of epsilon spent on private means for
    the intercept)::

        from diffprivlib.models import LinearRegression
        LinearRegression(epsilon=1.0, bounds_X=(-1, 1), bounds_y=(0, 4),
                         fit_intercept=True, random_state=0).fit(X, y)

    References
    ----------
    Sheffet 2017, "Differentially private ordinary least squares"; Wang 2018, "Revisiting
    differentially private linear regression" (sufficient statistics perturbation); Balle &
    Wang 2018, "Improving the Gaussian mechanism for differential privacy", Thm 8 (analytic
    Gaussian); Lu, Magdon-Ismail, Wei & Zikas, "The normal distributions indistinguishability
    spectrum and its application to privacy-preserving machine learning" (``mechanism="rp"``).
    """

    def __init__(self, *, epsilon: float = 1.0, delta: float = 1e-6, bounds_X: Any = None,
                 bounds_y: Any = None, row_bound: float | None = None, fit_intercept: bool = True,
                 mechanism: str = "ssp", random_state: Any = None, accountant: Any = None) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.bounds_X = bounds_X
        self.bounds_y = bounds_y
        self.row_bound = row_bound
        self.fit_intercept = fit_intercept
        self.mechanism = mechanism
        self.random_state = random_state
        self.accountant = accountant

    def _design(self, X: np.ndarray, y: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray, float, np.ndarray, float, float]:
        """(features, target, row bound, m_X, m_y, c) of the problem handed to the solver;
        public arguments only decide every number but the clipped data."""
        n, d = X.shape
        if self.bounds_X is not None or self.bounds_y is not None:
            if self.bounds_X is None or self.bounds_y is None:
                raise PrivacySpecError("give both bounds_X=(lo, hi) and bounds_y=(lo, hi) (or "
                                       "row_bound= alone): public bounds, never computed from "
                                       "the data.")
            xl, xh = check_box("bounds_X", self.bounds_X, d, error=PrivacySpecError)
            yl, yh = check_box("bounds_y", self.bounds_y, 1, error=PrivacySpecError)
            with np.errstate(invalid="ignore"):  # NaN stays NaN: the solver maps it
                xc, yc = np.clip(X, xl, xh), np.clip(y, yl[0], yh[0])
            if self.fit_intercept:
                mx, my = 0.5 * (xl + xh), float(0.5 * (yl + yh)[0])
                hx, hy = 0.5 * (xh - xl), float(0.5 * (yh - yl)[0])
            else:  # no centring: a shift would be an intercept
                mx, my = np.zeros(d), 0.0
                hx, hy = np.maximum(abs(xl), abs(xh)), float(max(abs(yl[0]), abs(yh[0])))
            bound2 = float(hx @ hx) + hy**2
            c = float(np.sqrt(np.mean(hx**2)))
            xc, yc = xc - mx, yc - my
        elif self.row_bound is not None:
            rb = check_bound(self.row_bound)
            xc, yc, mx, my, bound2, c = X, y, np.zeros(d), 0.0, rb**2, rb / math.sqrt(d + 1)
        else:
            raise PrivacySpecError("PrivateLinearRegression needs public bounds: bounds_X=(lo, "
                                   "hi) and bounds_y=(lo, hi), or row_bound= (a bound on "
                                   "||(x_i, y_i)||); never computed from the data.")
        if self.fit_intercept:
            xc = np.column_stack([xc, np.full(n, c)])
            bound2 += c**2
        return xc, yc, math.sqrt(bound2), mx, my, c

    def fit(self, X: Any, y: Any) -> PrivateLinearRegression:
        """One private release of the coefficients from ``(X, y)`` (n x d, n)."""
        check_choice("mechanism", self.mechanism, ("ssp", "rp"), error=UnsupportedProblemError,
                     hint=" (the proven-DP mechanisms; 'ls' and 'als' are available through "
                     "cvxdp.least_squares with their weaker guarantees stated)")
        check_flag("fit_intercept", self.fit_intercept)
        X, y = check_X_y(self, X, y)
        xa, ya, bound, mx, my, c = self._design(X, y)
        sol = least_squares(xa, ya, row_bound=bound).solve_private(mechanism=self.mechanism,
                                                                   **self._fit_kwargs())
        theta = np.asarray(sol.coef, dtype=float)
        d = X.shape[1]
        self.coef_ = theta[:d].copy()
        self.intercept_ = (float(theta[d] * c + my - self.coef_ @ mx) if self.fit_intercept
                           else 0.0)
        self.status_ = sol.status
        self.privacy_ = sol.privacy
        self.result_ = sol
        return self

    def predict(self, X: Any) -> np.ndarray:
        """``X coef_ + intercept_`` (post-processing of the release)."""
        check_fitted(self, "coef_")
        X = check_X(self, X, reset=False)
        return X @ self.coef_ + self.intercept_
