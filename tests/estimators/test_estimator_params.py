"""Estimator hyper-parameters are checked in ``fit`` (scikit-learn's convention) with typed
cvxdp errors naming the parameter; ``score`` checks X before anything else."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from cvxdp.errors import CvxdpError
from cvxdp.estimators import PrivateEnclosingBall, PrivateGaussian, PrivateLinearRegression


def _data(n=2000, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, 3))
    return X, X @ np.array([1.0, 2.0, 3.0])


def _reg(**kw):
    return PrivateLinearRegression(bounds_X=(-1, 1), bounds_y=(-6, 6), **kw)


CASES = [
    (_reg(random_state="abc"), "random_state"),
    (_reg(random_state=1.5), "random_state"),
    (_reg(random_state=-1), "random_state"),
    (_reg(random_state=True), "random_state"),
    (_reg(fit_intercept="yes"), "fit_intercept"),
    (_reg(fit_intercept=None), "fit_intercept"),
    (_reg(mechanism=1), "mechanism"),
    (_reg(epsilon="1"), "epsilon"),
    (_reg(delta=0.5), "delta"),
    (PrivateLinearRegression(row_bound="2"), "row_bound"),
    (PrivateLinearRegression(row_bound=True), "row_bound"),
    (PrivateLinearRegression(bounds_X=("-1", "1"), bounds_y=(-6, 6)), "bounds_X"),
    (_reg().set_params(bounds_y=(-6, 6, 7)), "bounds_y"),
    (PrivateEnclosingBall(bounds=(-1, 1), random_state=1.5), "random_state"),
    (PrivateEnclosingBall(bounds=(-1, 1), accuracy="0.2"), "accuracy"),
    (PrivateEnclosingBall(bounds=(-1, 1), accuracy=1.5), "accuracy"),
    (PrivateEnclosingBall(bounds=("-1", "1")), "bounds"),
    (PrivateGaussian(bounds=(-5, 5), random_state="abc"), "random_state"),
    (PrivateGaussian(bounds=(-5, 5), estimate="cov"), "estimate"),
    (PrivateGaussian(bounds=(-5, 5), method="fast"), "method"),
    (PrivateGaussian(bounds=(-5, 5), epsilon=np.nan), "epsilon"),
]


@pytest.mark.parametrize(("est", "name"), CASES, ids=lambda v: repr(v)[:60])
def test_bad_hyper_parameter_is_a_typed_error_naming_it(est, name):
    X, y = _data()
    with pytest.raises(CvxdpError) as err:
        est.fit(X, y)
    assert f"{name}=" in str(err.value), str(err.value)


def test_random_state_kinds_that_are_valid_still_fit():
    X, y = _data()
    for rs in (None, 0, np.int64(3), np.random.RandomState(0), np.random.default_rng(0)):
        reg = _reg(random_state=rs).fit(X, y)
        assert np.all(np.isfinite(reg.coef_))


def test_score_checks_the_width_of_X_first():
    """The trial's case: a singular released covariance made score skip validate_data."""
    X = np.random.default_rng(0).uniform(-1, 1, (200, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        g = PrivateGaussian(epsilon=1.0, bounds=(-5, 5), random_state=0).fit(X)
    g.covariance_ = np.diag([0.0, 1.0, 4.0])  # a singular release
    with pytest.raises(ValueError, match="3 features"):
        g.score(X[:, :1])


def test_score_of_a_singular_release_floors_its_eigenvalues():
    """Singular released covariance: the score is the Gaussian log-likelihood with the
    eigenvalues floored at lambda_max / COARSE_GAIN (post-processing), finite, and it still
    ranks a better-fitting mean higher; a non-singular release is scored exactly."""
    X = np.random.default_rng(1).uniform(-1, 1, (500, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        g = PrivateGaussian(epsilon=1.0, bounds=(-5, 5), random_state=0).fit(X)
    lam = np.array([0.0, 1.0, 4.0])
    g.covariance_, g.mean_ = np.diag(lam), np.zeros(3)
    floored = np.maximum(lam, 4.0 / 1e6)
    z = X - g.mean_
    expected = -0.5 * (np.mean(np.sum(z**2 / floored, axis=1)) + np.sum(np.log(floored))
                       + 3 * math.log(2 * math.pi))
    assert g.score(X) == pytest.approx(expected, rel=1e-12)
    worse = PrivateGaussian(epsilon=1.0, bounds=(-5, 5), random_state=0).fit(X)
    worse.covariance_, worse.mean_ = np.diag(lam), np.full(3, 0.5)
    assert worse.score(X) < g.score(X)
    g.covariance_ = np.diag([1e-17, 1.0, 4.0])  # numerically singular: floored too
    assert g.score(X) == pytest.approx(expected, rel=1e-12)
    g.covariance_ = np.diag([0.5, 1.0, 4.0])
    full = -0.5 * (np.mean(np.sum(z**2 / [0.5, 1.0, 4.0], axis=1)) + math.log(2.0)
                   + 3 * math.log(2 * math.pi))
    assert g.score(X) == pytest.approx(full, rel=1e-12)
