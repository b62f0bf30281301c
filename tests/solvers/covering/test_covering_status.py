"""Status is a promise: the covering answer's certificate comes from released noisy statistics
(the rows the released point leaves short, and a dual pair for a lower bound on OPT), released
only when their noise can meet the accuracy; its status comes from the one rule, status_of.
Lemma B.5's alpha bounds the coverage at OPT's scale, not at the released trace: it is reported,
never used as the certificate's violation."""

import math

import cvxpy as cp
import numpy as np

import cvxdp
from cvxdp.solvers.covering.covering import random_covering_lp


def test_no_certificate_statistics_at_a_small_budget():
    prob = cvxdp.covering_lp(random_covering_lp(1000, 10, rng=0))
    sol = prob.solve_private(epsilon=4.0, delta=1e-6, s=100, rng=1)
    assert sol.status == cp.USER_LIMIT and "not released" in sol.info["status_reason"]
    assert math.isinf(sol.certificate.relative_gap_bound)
    assert math.isinf(sol.certificate.violation_bound)
    assert sol.privacy.details["eps_cert"] == 0.0


def test_alpha_at_opt_scale_is_not_the_certificate():
    # reproducer: at epsilon 50 Lemma B.5's alpha/OPT (0.85 then, 0.66 now) was the certificate's
    # violation bound, but it bounds the coverage of OPT * P_bar, not of the released trace
    prob = cvxdp.covering_lp(random_covering_lp(1000, 10, rng=0))
    sol = prob.solve_private(epsilon=50.0, delta=1e-6, s=100, rng=1, m_max=1000)
    alpha = sol.privacy.details["alpha_rel"]
    assert 0.5 < alpha < 1
    assert sol.status == cp.USER_LIMIT
    cert = sol.certificate
    assert math.isinf(cert.violation_bound) and math.isinf(cert.relative_gap_bound)
    assert cert.excluded_rows == math.ceil(sol.s) - 1
    assert np.isclose(sol.info["alpha_rel"], alpha)


def test_certificate_holds_against_the_exact_solve_at_a_large_budget():
    A = random_covering_lp(300, 6, rng=3)
    prob = cvxdp.covering_lp(A)
    _, opt, _, _ = prob.exact()
    for seed in range(5):
        sol = prob.solve_private(epsilon=1e6, delta=1e-6, rng=seed)
        cert = sol.certificate
        assert sol.privacy.details["eps_cert"] > 0
        assert cert.objective_upper == sol.value
        assert 0 < cert.optimum_lower <= opt                      # weak duality on the noise event
        short = np.sum(A @ sol.point < 1 - cert.violation_bound)
        assert cert.excluded_rows == 0 and short == 0            # s = 1: every row covered
        assert math.isfinite(cert.relative_gap_bound)
        assert sol.status == cvxdp.status.status_of(cert)[0]
