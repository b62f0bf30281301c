"""Private minimum enclosing ball as a scikit-learn estimator (:class:`PrivateEnclosingBall`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from cvxdp.estimators._base import OutlierMixin, _PrivateEstimator, check_fitted, check_X, need
from cvxdp.geometry.meb.meb import min_enclosing_ball

__all__ = ["PrivateEnclosingBall"]


class PrivateEnclosingBall(OutlierMixin, _PrivateEstimator):
    """A small ball containing most of the points, with (epsilon, delta)-differential privacy.

    Wraps :func:`cvxdp.min_enclosing_ball` (``.solve_private``): GoodCenter for a start, then a
    private binary search over radii with DP-MMEB calls (bicriteria: radius within
    ``(1 + accuracy)^2`` of the optimal one, with a few points possibly left out).  Each ``fit``
    is one (epsilon, delta)-DP release under replace-one neighbours (n public).

    As a scikit-learn outlier detector: ``predict`` is +1 inside the released ball and -1
    outside, ``decision_function(x) = radius_ - ||x - center_||``.

    Parameters
    ----------
    epsilon, delta : float
        Budget of one ``fit`` (delta > 0; converted to zCDP).
    bounds : (lo, hi)
        Required public box of the points (scalars or arrays of length ``n_features``); points
        outside it are clipped into it, never refused.
    accuracy : float
        ``gamma`` in (0, 1) of the bicriteria guarantee; ``status_`` is
        ``"optimal_inaccurate"`` only when the proven bound on points left out is at most
        ``accuracy * n`` (docs/meb.md, "Status").
    random_state : None, int, numpy RandomState or Generator
    accountant : cvxdp.PrivacyAccountant, optional
        Ledger every ``fit`` is charged to (shared by scikit-learn's clones).

    Attributes
    ----------
    center_ : (n_features,) ndarray
    radius_ : float
    offset_ : float
        ``-radius_`` (``decision_function = score_samples - offset_``, scikit-learn's rule).
    status_ : str
    privacy_ : cvxdp.PrivacyReport
    result_ : cvxdp.MEBPrivateSolution

    Examples
    --------
    >>> import numpy as np
    >>> from cvxdp.estimators import PrivateEnclosingBall
    >>> X = np.random.default_rng(0).uniform(-1, 1, (20_000, 2))
    >>> ball = PrivateEnclosingBall(epsilon=1.0, bounds=(-4, 4), random_state=0).fit(X)
    >>> bool(ball.radius_ < 2.0 and np.linalg.norm(ball.center_) < 0.5)
    True

    diffprivlib has no enclosing-ball estimator.  The nearest it offers is a private centre
    with a radius from the public bounds (``diffprivlib.tools.mean(X, epsilon=1.0,
    bounds=(-4, 4), axis=0)``, radius ``||hi - lo|| / 2``), which does not adapt to where the
    points are.

    References
    ----------
    Mahpud & Sheffet 2022, "A differentially private linear-time fPTAS for the minimum
    enclosing ball problem" (Algs 3-6); Nissim, Stemmer & Vadhan 2016, "Locating a small
    cluster privately" (GoodCenter).
    """

    def __init__(self, *, epsilon: float = 1.0, delta: float = 1e-6, bounds: Any = None,
                 accuracy: float = 0.2, random_state: Any = None, accountant: Any = None) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.bounds = bounds
        self.accuracy = accuracy
        self.random_state = random_state
        self.accountant = accountant

    def fit(self, X: Any, y: Any = None) -> PrivateEnclosingBall:
        """One private release of a ball around the rows of ``X``; ``y`` is ignored."""
        X = check_X(self, X, reset=True)
        bounds = need(self.bounds, "bounds", "bounds=(lo, hi), a box the points live in")
        sol = min_enclosing_ball(np.ascontiguousarray(X)).solve_private(
            bounds=bounds, accuracy=self.accuracy, **self._fit_kwargs())
        self.center_ = np.asarray(sol.ball.center, dtype=float).copy()
        self.radius_ = float(sol.ball.radius)
        self.offset_ = -self.radius_
        self.status_ = sol.status
        self.privacy_ = sol.privacy
        self.result_ = sol
        return self

    def score_samples(self, X: Any) -> np.ndarray:
        """``-||x - center_||`` (larger is more inside)."""
        check_fitted(self, "center_")
        X = check_X(self, X, reset=False)
        return -np.linalg.norm(X - self.center_, axis=1)

    def decision_function(self, X: Any) -> np.ndarray:
        """``radius_ - ||x - center_||``: >= 0 inside the released ball."""
        return self.score_samples(X) - self.offset_

    def predict(self, X: Any) -> np.ndarray:
        """+1 for rows inside the released ball, -1 outside."""
        return np.where(self.decision_function(X) >= 0, 1, -1)
