"""l1 trend filtering on private prices, written as CVXPY's examples write it."""

import cvxpy as cp
import numpy as np
import scipy.sparse


def trend_filtering(n):
    """``(problem, y, y0, D, x)``: ``0.5 ||y - x||^2 + 50 ||D x||_1`` on ``n`` random-walk prices
    ``y0`` held by the Parameter ``y`` (seed 9)."""
    rng = np.random.default_rng(9)
    y0 = 7.1568 + np.cumsum(rng.normal(0, 0.01, n))
    e = np.ones((1, n))
    D = scipy.sparse.diags_array([e, -2 * e, e], offsets=range(3), shape=(n - 2, n))
    y = cp.Parameter(n, name="y", value=y0)
    x = cp.Variable(n)
    prob = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(y - x) + 50 * cp.norm(D @ x, 1)))
    return prob, y, y0, D, x
