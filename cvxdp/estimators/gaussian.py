"""Private mean and covariance as a scikit-learn estimator (:class:`PrivateGaussian`)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from cvxdp.estimation.gaussian_mechanisms import COARSE_GAIN
from cvxdp.estimation.gaussians import private_gaussian
from cvxdp.estimators._base import _PrivateEstimator, check_fitted, check_X

__all__ = ["PrivateGaussian"]


class PrivateGaussian(_PrivateEstimator):
    """Mean and covariance of a sample with (epsilon, delta)-differential privacy.

    Wraps :func:`cvxdp.private_gaussian`: with public ``bounds`` (a box or a ball) the records
    are clipped into them and the whole budget goes to the estimate; without bounds the range is
    found privately (Ashtiani & Liaw's pipeline with practical CoinPress steps), which needs a
    large sample (``cvxdp.estimation.gaussians.required_n``).  Each ``fit`` is one
    (epsilon, delta)-DP release under replace-one neighbours (n public).

    Parameters
    ----------
    epsilon, delta : float
        Budget of one ``fit`` (delta > 0).
    bounds : (lo, hi) or {"centre": c, "radius": R}, optional
        Public box or ball containing the data (``private_gaussian``'s ``bounds=``).
    estimate : {"both", "mean"}
        ``"mean"`` spends the whole budget on the mean (needs ``bounds``; no covariance).
    method : str
        ``private_gaussian``'s ``method`` when there are no bounds (default ``"auto"``).
    random_state : None, int, numpy RandomState or Generator
    accountant : cvxdp.PrivacyAccountant, optional
        Ledger every ``fit`` is charged to (shared by scikit-learn's clones).

    Attributes
    ----------
    mean_ : (n_features,) ndarray or None
        None when a private test of the no-bounds pipeline returned ⊥ (``status_`` says so).
    location_ : alias of ``mean_`` (scikit-learn's covariance estimators' name).
    covariance_ : (n_features, n_features) ndarray or None
        None for ``estimate="mean"`` or ⊥.
    status_ : str
        ``"optimal_inaccurate"`` only when the accuracy bound applies (see
        :func:`cvxdp.private_gaussian`).
    privacy_ : cvxdp.PrivacyReport
    result_ : cvxdp.GaussianSolution

    Examples
    --------
    >>> import numpy as np
    >>> from cvxdp.estimators import PrivateGaussian
    >>> X = np.random.default_rng(0).standard_normal((100_000, 3)) + 10.0
    >>> g = PrivateGaussian(epsilon=1.0, bounds=(0.0, 20.0), random_state=0).fit(X)
    >>> bool(np.allclose(g.mean_, 10.0, atol=0.05) and np.allclose(g.covariance_, np.eye(3),
    ...                                                            atol=0.1))
    True

    The diffprivlib equivalent (per-coordinate means and variances only, pure epsilon-DP, each
    call its own budget; diffprivlib has no covariance estimator)::

        from diffprivlib.tools import mean, var
        mean(X, epsilon=0.5, bounds=(0.0, 20.0), axis=0)
        var(X, epsilon=0.5, bounds=(0.0, 20.0), axis=0)

    References
    ----------
    Ashtiani & Liaw 2022, "Private and polynomial time algorithms for learning Gaussians and
    beyond"; Biswas, Dong, Kamath & Ullman 2020, "CoinPress: practical private mean and
    covariance estimation"; Hardt & Talwar 2010, "On the geometry of differential privacy".
    """

    def __init__(self, *, epsilon: float = 1.0, delta: float = 1e-6, bounds: Any = None,
                 estimate: str = "both", method: str = "auto", random_state: Any = None,
                 accountant: Any = None) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.bounds = bounds
        self.estimate = estimate
        self.method = method
        self.random_state = random_state
        self.accountant = accountant

    def fit(self, X: Any, y: Any = None) -> PrivateGaussian:
        """One private release of the mean (and covariance) of the rows of ``X``; ``y`` is
        ignored."""
        X = check_X(self, X, reset=True, ensure_min_samples=2)
        sol = private_gaussian(X, bounds=self.bounds, estimate=self.estimate, method=self.method,
                               **self._fit_kwargs())
        self.mean_ = None if sol.mean is None else np.asarray(sol.mean, dtype=float)
        self.location_ = self.mean_
        self.covariance_ = None if sol.covariance is None else np.asarray(sol.covariance,
                                                                          dtype=float)
        self.status_ = sol.status
        self.privacy_ = sol.privacy
        self.result_ = sol
        return self

    def _need_covariance(self) -> np.ndarray:
        check_fitted(self, "covariance_")
        if self.covariance_ is None or self.mean_ is None:
            raise ValueError("no covariance was released (estimate='mean' or a private test "
                             "returned ⊥): fit with estimate='both'.")
        return self.covariance_

    def mahalanobis(self, X: Any) -> np.ndarray:
        """Squared Mahalanobis distances of the rows of ``X`` under the released (mean_,
        covariance_) (pseudo-inverse for a singular covariance), as
        :meth:`sklearn.covariance.EmpiricalCovariance.mahalanobis`."""
        cov = self._need_covariance()
        X = check_X(self, X, reset=False)
        z = X - self.mean_
        return np.einsum("ij,jk,ik->i", z, np.linalg.pinv(cov, hermitian=True), z)

    def score(self, X: Any, y: Any = None) -> float:
        """Mean log-likelihood of the rows of ``X`` under ``N(mean_, covariance_)`` (as
        :meth:`sklearn.covariance.EmpiricalCovariance.score`).

        ``X`` is checked first (width, as every method).  A singular released covariance
        (an eigenvalue at most ``lambda_max d`` times the machine epsilon, numpy's rank rule:
        e.g. the private subspace step found a lower-dimensional range) is
        scored with its eigenvalues floored at ``lambda_max / COARSE_GAIN`` (1e6, the
        tightening the practical covariance step resolves), a function of the release only
        (post-processing), so the score is finite and comparable across candidates of a grid
        search instead of ``-inf`` for all of them; docs/estimators.md, "score".
        """
        cov = self._need_covariance()
        X = check_X(self, X, reset=False)
        lam, vec = np.linalg.eigh(cov)
        if lam[-1] <= 0:   # nothing released to scale a floor from
            return -math.inf
        d = cov.shape[0]
        if lam[0] <= lam[-1] * d * np.finfo(float).eps:  # singular (numpy's matrix_rank rule)
            lam = np.maximum(lam, lam[-1] / COARSE_GAIN)
        z = (X - self.mean_) @ vec
        maha = np.sum(z**2 / lam, axis=1)
        return float(-0.5 * (np.mean(maha) + np.sum(np.log(lam)) + d * math.log(2 * math.pi)))
