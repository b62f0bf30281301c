"""Refusals of common RowPrivacy mistakes name the fix: a column-vector w, and labels left out
of the spec."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest

import cvxdp
from cvxdp.errors import PrivacySpecError, UnsupportedProblemError

N, D = 60, 4


def _data():
    rng = np.random.default_rng(0)
    X = cp.Parameter((N, D), value=rng.normal(size=(N, D)) / 2)
    y = cp.Parameter(N, value=np.sign(rng.normal(size=N)))
    return X, y


@pytest.mark.parametrize("wrap", [lambda e: cp.vec(e, order="F"), lambda e: e])
def test_a_column_vector_w_is_refused_with_the_1d_fix(wrap):
    X, y = _data()
    wc = cp.Variable((D, 1))
    loss = cp.sum(cp.logistic(-cp.multiply(y, wrap(X @ wc)))) / N
    prob = cp.Problem(cp.Minimize(loss), [cp.norm(wc, 2) <= 3])
    with pytest.raises(UnsupportedProblemError) as err:
        prob.solve_private(epsilon=1, delta=1e-6, rng=0,
                           private=cvxdp.RowPrivacy(X, y, row_bound=2, label_bound=1))
    assert f"w = cp.Variable({D})" in str(err.value) and "(4, 1)" in str(err.value)


def test_labels_left_out_of_the_spec_name_the_parameter_and_rowprivacy_with_y():
    X, y = _data()
    w = cp.Variable(D)
    prob = cp.Problem(cp.Minimize(cp.sum(cp.logistic(-cp.multiply(y, X @ w))) / N),
                      [cp.norm(w, 2) <= 3])
    spec = cvxdp.RowPrivacy(X, row_bound=2)
    with pytest.raises(PrivacySpecError) as err:
        prob.solve_private(epsilon=1, delta=1e-6, private=spec, rng=0)
    msg = str(err.value)
    assert f"RowPrivacy(X, {y.name()}, row_bound=" in msg and "label_bound=" in msg, msg
    assert "ObjectivePrivacy" not in msg
    (reason,) = cvxdp.explain(prob, spec)
    assert reason == msg
    # with the labels in the spec the model is accepted
    assert cvxdp.explain(prob, cvxdp.RowPrivacy(X, y, row_bound=2, label_bound=1)) == []


def test_least_squares_through_rowprivacy_points_to_the_sufficient_statistics_path():
    rng = np.random.default_rng(0)
    A = np.clip(rng.normal(size=(N, D)), -3, 3)
    X, y = cp.Parameter((N, D), value=A), cp.Parameter(N, value=A @ np.ones(D) / 4)
    w, b = cp.Variable(D), cp.Variable()
    prob = cp.Problem(cp.Minimize(cp.sum_squares(X @ w + b - y) / N),
                      [cp.norm(w, 2) <= 5, cp.abs(b) <= 3])
    sol = prob.solve_private(epsilon=1, delta=1e-6, rng=0,
                             private=cvxdp.RowPrivacy(X, y, row_bound=6, label_bound=3))
    assert sol.status == cp.USER_LIMIT
    assert "cvxdp.least_squares" in sol.status_reason
    assert "PrivateLinearRegression" in sol.status_reason
    # a logistic model gets no such pointer
    lab = cp.Parameter(N, value=np.sign(A @ np.ones(D)))
    logi = cp.Problem(cp.Minimize(cp.sum(cp.logistic(-cp.multiply(lab, X @ w))) / N),
                      [cp.norm(w, 2) <= 5])
    sol = logi.solve_private(epsilon=1, delta=1e-6, rng=0,
                             private=cvxdp.RowPrivacy(X, lab, row_bound=6, label_bound=1))
    assert "least_squares" not in sol.status_reason


def test_an_undeclared_feature_matrix_suggests_rowprivacy():
    # trial 24's D4: CVXPY's logistic regression with only the labels declared; the refusal
    # listed Objective / Constraint / ScalarPrivacy for X (the first is refused again, DPP)
    # but not RowPrivacy(X, y, ...), the spec this model is written for
    r = np.random.default_rng(0)
    n, d = 200, 5
    X = cp.Parameter((n, d), name="X", value=r.standard_normal((n, d)) / 3)
    y = cp.Parameter(n, name="y", value=np.sign(r.standard_normal(n)))
    beta = cp.Variable(d)
    prob = cp.Problem(cp.Minimize(cp.sum(cp.logistic(-cp.multiply(y, X @ beta))) / n),
                      [cp.norm(beta) <= 5])
    with pytest.raises(PrivacySpecError) as err:
        prob.solve_private(epsilon=1.0, delta=1e-6,
                           private=cvxdp.ScalarPrivacy(y, sensitivity=2.0))
    assert "cvxdp.RowPrivacy(X, y, row_bound=" in str(err.value)
    # a vector parameter beside a variable is not a feature matrix: no row hint
    c = cp.Parameter(d, name="c", value=np.ones(d))
    prob2 = cp.Problem(cp.Minimize(c @ beta), [cp.norm(beta) <= 5])
    with pytest.raises(PrivacySpecError) as err2:
        prob2.solve_private(epsilon=1.0, delta=1e-6, private=[])
    assert "RowPrivacy" not in str(err2.value)
