"""The value released with the loosened counterpart's point is the user's objective there.

Trial 15: a private demand ``d`` fitted with a floor, ``min sum_squares(x - d) + norm1(diff(x))``,
``x >= 0.8 d``, at epsilon 1.  The tightened counterpart is empty and the loosened one's point
is released; its canonical objective reads the epigraph variable of ``sum_squares``, which the
loosened rows let fall below the square, so ``sol.value`` was -1.87 for an objective that cannot
be negative (the true objective there 16.9).  The released value must be the user's objective
at the released variables with the released data (post-processing).
"""

from __future__ import annotations

import warnings

import cvxpy as cp
import numpy as np
import pytest

import cvxdp


def test_the_loosened_points_value_is_the_users_objective_with_the_released_data():
    rng = np.random.default_rng(124)
    d = cp.Parameter(50, name="d", value=rng.uniform(1, 3, 50))
    x = cp.Variable(50)
    prob = cp.Problem(cp.Minimize(cp.sum_squares(x - d) + cp.norm1(cp.diff(x))),
                      [x >= 0.8 * d, cp.sum(x) <= 100])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = prob.solve_private(epsilon=1, delta=1e-6, rng=0,
                                 private=cvxdp.ScalarPrivacy(d, sensitivity=0.02))
    assert sol.info["point"] == "loosened counterpart"
    d_noisy = sol.info["noisy_parameters"]["d"]
    xv = x.value
    expected = float(np.sum((xv - d_noisy) ** 2) + np.sum(np.abs(np.diff(xv))))
    assert sol.value == pytest.approx(expected, rel=1e-6)
    assert prob.value == pytest.approx(expected, rel=1e-6)
