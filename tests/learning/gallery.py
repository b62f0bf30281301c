"""Row-level learning models written the way CVXPY's own examples write them.

Each builder returns ``(problem, spec)`` on seeded synthetic data (rows in the unit ball).
"""

from __future__ import annotations

import cvxpy as cp
import numpy as np

import cvxdp


def data(n: int = 600, d: int = 4, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
    w = rng.normal(size=d)
    y_reg = 0.5 * X @ w + 0.1 * rng.normal(size=n)
    y_cls = np.where(X @ w + 0.2 * rng.normal(size=n) > 0, 1.0, -1.0)
    return X, y_reg, y_cls


def _params(Xv, yv):
    X = cp.Parameter(Xv.shape, name="X", value=Xv)
    y = cp.Parameter(yv.shape, name="y", value=yv)
    return X, y


def least_squares(Xv, y_reg, y_cls):
    X, y = _params(Xv, y_reg)
    w = cp.Variable(Xv.shape[1], name="w")
    prob = cp.Problem(cp.Minimize(cp.sum_squares(X @ w - y) / Xv.shape[0]),
                      [cp.norm(w, 2) <= 2])
    return prob, cvxdp.RowPrivacy(X, y, row_bound=1.0, label_bound=2.0)


def ridge(Xv, y_reg, y_cls):
    X, y = _params(Xv, y_reg)
    w = cp.Variable(Xv.shape[1], name="w")
    n = Xv.shape[0]
    prob = cp.Problem(cp.Minimize(cp.sum_squares(X @ w - y) / n + 0.05 * cp.sum_squares(w)),
                      [cp.norm(w, 2) <= 2])
    return prob, cvxdp.RowPrivacy(X, y, row_bound=1.0, label_bound=2.0)


def lasso(Xv, y_reg, y_cls):
    X, y = _params(Xv, y_reg)
    w = cp.Variable(Xv.shape[1], name="w")
    n = Xv.shape[0]
    prob = cp.Problem(cp.Minimize(cp.sum_squares(X @ w - y) / (2 * n) + 0.01 * cp.norm1(w)),
                      [w >= -1, w <= 1])
    return prob, cvxdp.RowPrivacy(X, y, row_bound=1.0, label_bound=2.0)


def huber_fit(Xv, y_reg, y_cls):
    X, y = _params(Xv, y_reg)
    w = cp.Variable(Xv.shape[1], name="w")
    prob = cp.Problem(cp.Minimize(cp.sum(cp.huber(X @ w - y, 0.5)) / Xv.shape[0]),
                      [cp.norm(w, 2) <= 2])
    return prob, cvxdp.RowPrivacy(X, y, row_bound=1.0, label_bound=2.0)


def svm(Xv, y_reg, y_cls):
    # CVXPY's SVM example: hinge loss with an intercept v and an l1 regulariser
    X, y = _params(Xv, y_cls)
    beta = cp.Variable(Xv.shape[1], name="beta")
    v = cp.Variable(name="v")
    loss = cp.sum(cp.pos(1 - cp.multiply(y, X @ beta - v)))
    reg = cp.norm(beta, 1)
    prob = cp.Problem(cp.Minimize(loss / Xv.shape[0] + 0.01 * reg),
                      [cp.norm(beta, 2) <= 3, cp.abs(v) <= 1])
    return prob, cvxdp.RowPrivacy(X, y, row_bound=1.0, label_bound=1.0)


def logistic(Xv, y_reg, y_cls):
    # CVXPY's logistic regression example: Maximize the log-likelihood with labels in {0, 1}
    X, y = _params(Xv, (y_cls + 1) / 2)
    beta = cp.Variable(Xv.shape[1], name="beta")
    n = Xv.shape[0]
    log_likelihood = cp.sum(cp.multiply(y, X @ beta) - cp.logistic(X @ beta))
    prob = cp.Problem(cp.Maximize(log_likelihood / n - 0.01 * cp.norm(beta, 1)),
                      [cp.norm(beta, 2) <= 3])
    return prob, cvxdp.RowPrivacy(X, y, row_bound=1.0, label_bound=1.0)


def logistic_ridge(Xv, y_reg, y_cls):
    X, y = _params(Xv, y_cls)
    w = cp.Variable(Xv.shape[1], name="w")
    n = Xv.shape[0]
    prob = cp.Problem(cp.Minimize(cp.sum(cp.logistic(-cp.multiply(y, X @ w))) / n
                                  + 0.01 * cp.sum_squares(w)), [cp.norm(w, 2) <= 3])
    return prob, cvxdp.RowPrivacy(X, y, row_bound=1.0, label_bound=1.0)


def quantile(Xv, y_reg, y_cls):
    X, y = _params(Xv, y_reg)
    w = cp.Variable(Xv.shape[1], name="w")
    tau = 0.3
    r = y - X @ w
    prob = cp.Problem(cp.Minimize(cp.sum(cp.maximum(tau * r, (tau - 1) * r)) / Xv.shape[0]),
                      [w >= -2, w <= 2])
    return prob, cvxdp.RowPrivacy(X, y, row_bound=1.0, label_bound=2.0)


def l1_regression(Xv, y_reg, y_cls):
    X, y = _params(Xv, y_reg)
    w = cp.Variable(Xv.shape[1], name="w")
    prob = cp.Problem(cp.Minimize(cp.norm1(X @ w - y) / Xv.shape[0]), [cp.norm(w, 2) <= 2])
    return prob, cvxdp.RowPrivacy(X, y, row_bound=1.0, label_bound=2.0)


def censored(Xv, y_reg, y_cls):
    # one-sided (censored-from-below) fit: only predictions below the observed bound cost
    X, y = _params(Xv, y_reg)
    w = cp.Variable(Xv.shape[1], name="w")
    n = Xv.shape[0]
    prob = cp.Problem(cp.Minimize(cp.sum(cp.pos(y - X @ w)) / n + 0.1 * cp.sum_squares(w)),
                      [cp.norm(w, 2) <= 2, cp.sum(w) >= -1])
    return prob, cvxdp.RowPrivacy(X, y, row_bound=1.0, label_bound=2.0)


def squared_hinge_censored(Xv, y_reg, y_cls):
    # censored regression: exact fit where observed, a squared one-sided penalty where the
    # outcome is only known to exceed y (here: every row, for the test)
    X, y = _params(Xv, y_reg)
    w = cp.Variable(Xv.shape[1], name="w")
    n = Xv.shape[0]
    prob = cp.Problem(cp.Minimize(cp.sum_squares(cp.pos(y - X @ w)) / n
                                  + 0.01 * cp.sum_squares(w)), [cp.norm(w, 2) <= 2])
    return prob, cvxdp.RowPrivacy(X, y, row_bound=1.0, label_bound=2.0)


GALLERY = {f.__name__: f for f in (least_squares, ridge, lasso, huber_fit, svm, logistic,
                                   logistic_ridge, quantile, l1_regression, censored,
                                   squared_hinge_censored)}
