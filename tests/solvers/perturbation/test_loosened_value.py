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


def _solve_quietly(prob, epsilon, spec):
    """``prob.solve_private`` at ``epsilon`` (delta 1e-6, seed 0) with CVXPY's warnings off."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return prob.solve_private(epsilon=epsilon, delta=1e-6, rng=0, private=spec)


def test_the_loosened_points_value_is_the_users_objective_with_the_released_data():
    rng = np.random.default_rng(124)
    d = cp.Parameter(50, name="d", value=rng.uniform(1, 3, 50))
    x = cp.Variable(50)
    prob = cp.Problem(cp.Minimize(cp.sum_squares(x - d) + cp.norm1(cp.diff(x))),
                      [x >= 0.8 * d, cp.sum(x) <= 100])
    sol = _solve_quietly(prob, 1.0, cvxdp.ScalarPrivacy(d, sensitivity=0.02))
    assert sol.info["point"] == "loosened counterpart"
    d_noisy = sol.info["noisy_parameters"]["d"]
    xv = x.value
    expected = float(np.sum((xv - d_noisy) ** 2) + np.sum(np.abs(np.diff(xv))))
    assert sol.value == pytest.approx(expected, rel=1e-6)
    assert prob.value == pytest.approx(expected, rel=1e-6)


def test_a_loosened_point_outside_the_objectives_domain_is_valued_as_cvxpy_extends_it():
    """Held-out trial 17: the analytic centre ``max sum(log(b - A x))`` with a private ``b`` at
    epsilon 1: the loosened point has ``b~ - A x < 0`` in a row, where the user's objective is
    undefined (``-inf`` in CVXPY's extended-value sense), but ``sol.value`` was 37.8 (the
    canonical hypograph variables; the exact maximum is 13.2) and the validation's objective gap
    ``nan``. A maximised concave objective outside its domain is ``-inf``, a minimised convex
    one ``+inf``; that is what the released value and the validation say."""
    rng = np.random.default_rng(2)
    A = rng.normal(size=(30, 4))
    b = cp.Parameter(30, name="b", value=rng.uniform(1, 2, 30))
    x = cp.Variable(4, name="x")
    prob = cp.Problem(cp.Maximize(cp.sum(cp.log(b - A @ x))))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = prob.solve_private(epsilon=1.0, delta=1e-6, rng=0, reference=True,
                                 private=cvxdp.ScalarPrivacy(b, sensitivity=0.02))
    assert sol.info["point"] == "loosened counterpart"
    b_noisy = sol.info["noisy_parameters"]["b"]
    assert np.min(b_noisy - A @ x.value) < 0          # outside the domain with the release
    assert sol.value == -np.inf and prob.value == -np.inf
    assert np.min(b.value - A @ x.value) < 0          # and with the true data here
    assert sol.validation.objective_gap == np.inf      # worse than the optimum without bound


def test_the_tightened_points_value_is_the_users_objective_with_the_released_data(newsvendor):
    """Held-out trial 18: a newsvendor with private demand scenarios in ``cp.pos`` terms at
    epsilon 10 released ``sol.value`` 351.7 for a point whose objective is 71.2: the value was
    the canonical ``c'x``, whose epigraph variables the tightened counterpart inflates by the
    noise radius. The released value is the user's objective at the released variables with
    the released data (post-processing), whichever counterpart the point solves."""
    S = 20
    prob, D, x = newsvendor(3, 4, S)
    # a cap from the scenarios' mean total demand keeps the point the tightened counterpart's
    # (with D in no constraint its fit terms' point would be released)
    prob = cp.Problem(prob.objective, [*prob.constraints, cp.sum(x) <= cp.sum(D) / S])
    sol = _solve_quietly(prob, 10.0, cvxdp.ScalarPrivacy(D, sensitivity=0.5))
    assert sol.info["point"] == "tightened counterpart"
    D_noisy = sol.info["noisy_parameters"]["D"]
    xv = x.value
    expected = float(np.sum(xv) + (3 * np.sum(np.maximum(D_noisy - xv, 0))
                                   + 0.5 * np.sum(np.maximum(xv - D_noisy, 0))) / S)
    assert sol.value == pytest.approx(expected, rel=1e-6)
