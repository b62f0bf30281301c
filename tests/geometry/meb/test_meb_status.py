"""Status is a promise (issue 21): when the high-probability bound on uncovered points is
vacuous (>= n), the private ball is not called optimal_inaccurate."""

import warnings

import numpy as np

import cvxdp


def test_vacuous_uncovered_bound_gives_no_success_status():
    pts = np.random.default_rng(0).uniform(-1, 1, (200, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = cvxdp.min_enclosing_ball(pts).solve_private(rho=0.5, bounds=(-2, 2), rng=0)
    assert sol.info["uncovered_bound"] >= 200
    assert sol.status == "user_limit" and "vacuous" in sol.info["status_reason"]


def test_non_vacuous_bound_keeps_the_success_status():
    pts = np.random.default_rng(1).uniform(-3, 3, (50000, 2))
    sol = cvxdp.min_enclosing_ball(pts).solve_private(epsilon=1.0, delta=1e-6, bounds=(-10, 10),
                                                      rng=0)
    assert sol.info["uncovered_bound"] < 50000
    assert sol.status == "optimal_inaccurate"
