"""cvxdp's warnings name the user's line and can be imported from ``cvxdp``."""

from __future__ import annotations

import warnings

import cvxpy as cp
import numpy as np

import cvxdp


def test_warning_points_at_the_callers_line():
    rng = np.random.default_rng(0)
    A = cp.Parameter((20, 5), name="A", value=rng.uniform(0, 1, (20, 5)))
    x = cp.Variable(5, nonneg=True)
    prob = cp.Problem(cp.Maximize(cp.sum(x)), [A @ x <= 1, cp.sum(x) <= 2])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        prob.solve_private(epsilon=1.0, delta=1e-6, rng=0, mechanism="mwu",
                           private=cvxdp.ConstraintPrivacy(A, sensitivity=1e-3))
    ours = [w for w in caught if issubclass(w.category, cvxdp.AccuracyNotGuaranteedWarning)]
    assert ours, [str(w.message) for w in caught]
    assert all(w.filename == __file__ for w in ours), [w.filename for w in ours]


def test_warning_classes_are_public():
    for name in ("AccuracyNotGuaranteedWarning", "ObjectiveNotOptimisedWarning",
                 "GaussianSampleWarning", "UnsafePrivacyWarning"):
        assert issubclass(getattr(cvxdp, name), UserWarning)
        assert name in cvxdp.__all__

