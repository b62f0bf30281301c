"""Status is a promise: the dense MWU's answer carries a certificate (Lemma B.5's alpha bounds the
coverage shortfall of all but s - 1 rows, which needs the public bound m_max on the number of
rows) and its status comes from the one rule, status_of: never a success status on a bound that
does not meet the requested accuracy."""

import math

import cvxpy as cp
import numpy as np

import cvxdp
from cvxdp.solvers.covering.covering import random_covering_lp


def test_no_success_status_without_the_theorem_accuracy():
    prob = cvxdp.covering_lp(random_covering_lp(1000, 10, rng=0))
    sol = prob.solve_private(epsilon=4.0, delta=1e-6, s=100, rng=1)   # no m_max: no alpha
    assert sol.status == cp.USER_LIMIT and "m_max" in sol.info["status_reason"]
    sol = prob.solve_private(epsilon=4.0, delta=1e-6, s=100, rng=1, m_max=1000)
    assert sol.privacy.details["alpha_rel"] > 1                       # measured 1.74: vacuous
    assert sol.status == cp.USER_LIMIT and "vacuous" in sol.info["status_reason"]


def test_a_non_vacuous_alpha_above_the_accuracy_is_not_a_success():
    # reproducer: at epsilon 50 Lemma B.5 gives alpha/OPT = 0.85 -- coverage >= 0.15 of OPT's
    # for all but s - 1 rows -- and the answer was called optimal_inaccurate
    prob = cvxdp.covering_lp(random_covering_lp(1000, 10, rng=0))
    sol = prob.solve_private(epsilon=50.0, delta=1e-6, s=100, rng=1, m_max=1000)
    alpha = sol.privacy.details["alpha_rel"]
    assert 0.5 < alpha < 1                                              # measured 0.85
    assert sol.status == cp.USER_LIMIT
    cert = sol.certificate
    assert cert is not None and np.isclose(cert.violation_bound, alpha)
    assert cert.excluded_rows == math.ceil(sol.s) - 1
    assert math.isinf(cert.relative_gap_bound)       # no theorem bounds the private scale's gap
    assert "0.85" in sol.status_reason and "accuracy 0.01" in sol.status_reason
    assert np.isclose(sol.info["alpha_rel"], alpha)
