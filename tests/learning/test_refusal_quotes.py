"""Refusals quote the user's expressions by names and shapes, never an array's values.

Trial 21b, D9: a fairness-constrained logistic regression (Zafar et al. 2017, "Fairness
constraints: mechanisms for fair classification": the covariance of group membership and the
decision) is refused under RowPrivacy, as intended, but the message printed the per-person group
vector, a numpy constant of the model, value by value, and suggested a hinge in the loss, which
cannot express the constraint.
"""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest

import cvxdp


def test_a_fairness_constraint_is_refused_without_its_group_vector():
    rng = np.random.default_rng(0)
    n, d = 500, 5
    X0 = rng.normal(size=(n, d)) / 3
    X0 /= np.maximum(1, np.linalg.norm(X0, axis=1))[:, None]
    z = (rng.random(n) < 0.3).astype(float)  # group membership, one value per person
    X = cp.Parameter((n, d), name="X", value=X0)
    y = cp.Parameter(n, name="y", value=np.sign(X0 @ np.ones(d) + 0.1))
    w = cp.Variable(d, name="w")
    loss = cp.mean(cp.logistic(-cp.multiply(y, X @ w))) + 0.01 * cp.sum_squares(w)
    prob = cp.Problem(cp.Minimize(loss), [cp.abs((z - z.mean()) @ (X @ w)) / n <= 0.01])
    with pytest.raises(cvxdp.CvxdpError) as err:
        prob.solve_private(epsilon=1, delta=1e-6,
                           private=cvxdp.RowPrivacy(X, y, row_bound=1, label_bound=1))
    text = str(err.value)
    assert "0.722" not in text and "-0.278" not in text   # the centred group values
    assert "constant of shape (500,)" in text and "X @ w" in text
    assert "hinge" not in text and "not supported" in text
