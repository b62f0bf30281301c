"""The logistic estimator's classes are public; a label dtype that cannot match them is refused.

Trial 21b, D7: string labels with the default ``classes=(0, 1)`` matched no positive label,
so every row was read as the negative class and the fit was silently a one-class model.  The
dtype of ``y`` is the data's schema, the same for every neighbouring dataset, so a refusal
that reads the dtype (never a value) leaks nothing.
"""

from __future__ import annotations

import numpy as np
import pytest

from cvxdp.errors import ArgumentError
from cvxdp.estimators import PrivateLogisticRegression


def _data():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (3000, 3))
    return X, np.where(X[:, 0] > 0, "yes", "no")


def test_string_labels_with_numeric_classes_are_refused_naming_classes():
    X, lab = _data()
    with pytest.raises(ArgumentError, match=r"classes=\('no', 'yes'\)|classes="):
        PrivateLogisticRegression(bounds_X=(-1, 1), random_state=0).fit(X, lab)


def test_numeric_labels_with_string_classes_are_refused():
    X, lab = _data()
    with pytest.raises(ArgumentError, match="classes="):
        PrivateLogisticRegression(bounds_X=(-1, 1), classes=("no", "yes"),
                                  random_state=0).fit(X, (lab == "yes").astype(int))


def test_string_labels_with_their_classes_fit():
    X, lab = _data()
    clf = PrivateLogisticRegression(bounds_X=(-1, 1), classes=("no", "yes"),
                                    random_state=0).fit(X, lab)
    assert clf.score(X, lab) > 0.9
