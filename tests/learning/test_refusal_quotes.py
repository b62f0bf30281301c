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


def test_column_vector_labels_are_refused_with_the_whole_fix():
    """Trial 21b, D6: CVXPY's SVM example writes Y (m, 1) and beta (n, 1); RowPrivacy refused
    it naming y's shape only, and the coefficients' shape came as a second refusal after
    the first was fixed."""
    m, d = 50, 5
    X = cp.Parameter((m, d), value=np.zeros((m, d)))
    Y = cp.Parameter((m, 1), value=np.ones((m, 1)))
    with pytest.raises(cvxdp.PrivacySpecError) as err:
        cvxdp.RowPrivacy(X, Y, row_bound=1, label_bound=1)
    text = str(err.value)
    assert f"cp.Parameter({m}" in text and f"cp.Variable({d})" in text
