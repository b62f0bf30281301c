"""A private parameter in both A and b: the message says how to split it, and the split solves."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest

import cvxdp
from cvxdp.errors import PrivacySpecError


def _model(alpha_row, alpha_cone):
    x = cp.Variable(10, nonneg=True)
    prob = cp.Problem(cp.Maximize(cp.sum(cp.log(alpha_cone + x))), [alpha_row @ x <= 2, x <= 1])
    return prob, x


def test_both_specs_point_to_the_split_not_to_each_other():
    # trial 13: log(alpha + x) with alpha @ x <= 2: ConstraintPrivacy pointed to ScalarPrivacy
    # and ScalarPrivacy to ConstraintPrivacy
    av = np.random.default_rng(1026).uniform(0.5, 1.5, 10)
    alpha = cp.Parameter(10, nonneg=True, name="alpha", value=av)
    prob, _ = _model(alpha, alpha)
    for spec in (cvxdp.ConstraintPrivacy(alpha, 1e-3), cvxdp.ScalarPrivacy(alpha, 1e-3)):
        with pytest.raises(PrivacySpecError, match=r"enters both the constraint matrix A .*"
                                                   r"alpha_b = cp.Parameter"):
            prob.solve_private(epsilon=1, delta=1e-6, rng=0, private=spec)
    # the split the message gives solves, certified at a large epsilon
    alpha_b = cp.Parameter(10, nonneg=True, name="alpha_b", value=av)
    prob, x = _model(alpha, alpha_b)
    sol = prob.solve_private(epsilon=1e6, delta=1e-6, rng=0,
                             private=[cvxdp.ConstraintPrivacy(alpha, 1e-3),
                                      cvxdp.ScalarPrivacy(alpha_b, 1e-3)])
    assert sol.status == "optimal_inaccurate"
