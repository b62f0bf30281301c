"""A non-finite label is one person's private value: fit must not refuse it.

docs/estimators.md: non-finite records are mapped into the public domain, never refused (a
refusal would leak whether some record is NaN).  scikit-learn's ``check_X_y`` refuses a
non-finite ``y`` whatever ``ensure_all_finite`` says (trial 21b, D1): the label is checked by
the estimators themselves, shape and length only.
"""

from __future__ import annotations

import numpy as np
import pytest

from cvxdp.estimators import PrivateLinearRegression, PrivateLogisticRegression


def _data():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (2000, 3))
    y = X @ [1.0, -0.5, 0.25] + 2.0
    return X, y, (X[:, 0] > 0).astype(float)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_a_nonfinite_target_is_clipped_not_refused(bad):
    X, y, _ = _data()
    t = y.copy()
    t[0] = bad
    reg = PrivateLinearRegression(bounds_X=(-1, 1), bounds_y=(0, 4), random_state=0).fit(X, t)
    ref = PrivateLinearRegression(bounds_X=(-1, 1), bounds_y=(0, 4), random_state=0).fit(X, y)
    # one record of 2000 moved within the public box: the same noise, nearly the same fit
    assert np.allclose(reg.coef_, ref.coef_, atol=0.05)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_a_nonfinite_label_is_not_refused(bad):
    X, _, lab = _data()
    t = lab.copy()
    t[0] = bad
    clf = PrivateLogisticRegression(bounds_X=(-1, 1), random_state=0).fit(X, t)
    ref = PrivateLogisticRegression(bounds_X=(-1, 1), random_state=0).fit(X, lab)
    assert np.mean(clf.predict(X) == ref.predict(X)) > 0.95


def test_the_shape_of_y_is_still_checked():
    X, y, _ = _data()
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        PrivateLinearRegression(bounds_X=(-1, 1), bounds_y=(0, 4)).fit(X, y[:-1])
    with pytest.raises(ValueError, match="1d array"):
        PrivateLinearRegression(bounds_X=(-1, 1), bounds_y=(0, 4)).fit(X, np.c_[y, y])
