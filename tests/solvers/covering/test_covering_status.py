"""Status is a promise (issue 21): the dense MWU's answer is called optimal_inaccurate only when
Lemma B.5's accuracy (all but s rows covered to 1 - alpha OPT, alpha < 1) is computed and
non-vacuous, which needs the public bound m_max on the number of rows."""

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


def test_success_status_with_a_non_vacuous_alpha():
    prob = cvxdp.covering_lp(random_covering_lp(1000, 10, rng=0))
    sol = prob.solve_private(epsilon=50.0, delta=1e-6, s=100, rng=1, m_max=1000)
    alpha = sol.privacy.details["alpha_rel"]
    assert alpha < 1 and sol.status == cp.OPTIMAL_INACCURATE           # measured 0.85
    assert np.isclose(sol.info["alpha_rel"], alpha)
