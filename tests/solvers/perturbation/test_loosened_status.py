"""The loosened counterpart's point takes its status from its certificate (one status rule)."""

import cvxpy as cp
import numpy as np

import cvxdp


def _masked_capacities():
    """``multiply(mask, x) <= cap``: a row with no variable (mask 0) and a private capacity
    0 empties the tightened counterpart at every epsilon (``0 <= cap~ - tau``)."""
    mask = np.array([1.0, 1.0, 0.0])
    cap = cp.Parameter(3, name="cap", value=np.array([0.4, 0.3, 0.0]))
    x = cp.Variable(3, nonneg=True, name="x")
    prob = cp.Problem(cp.Maximize(cp.sum(x)), [cp.multiply(mask, x) <= cap, cp.sum(x) <= 1])
    return prob, cvxdp.ScalarPrivacy(cap, sensitivity=0.005)


def test_a_certified_loosened_point_is_optimal_inaccurate():
    """Trial 14: at epsilon 1e6 the loosened point was certified within 2e-8 (gap) and 1.6e-7
    (violation) but reported user_limit, a second status rule beside status_of."""
    prob, spec = _masked_capacities()
    sol = prob.solve_private(epsilon=1e6, delta=1e-6, rng=0, reference=True, private=spec)
    assert sol.info["point"].startswith("loosened")
    cert = sol.certificate
    assert cert.relative_gap_bound <= 1e-6 and cert.violation_bound <= 1e-6
    assert sol.status == cp.OPTIMAL_INACCURATE
    assert sol.validation.max_violation <= cert.violation_bound
    assert abs(sol.validation.objective_gap) <= cert.gap_bound + cert.violation_bound


def test_an_uncertified_loosened_point_says_why():
    """At epsilon 10 the certified violation (0.016) exceeds the accuracy: user_limit, and the
    reason names the loosened counterpart and the certified number."""
    prob, spec = _masked_capacities()
    sol = prob.solve_private(epsilon=10, delta=1e-6, rng=0, reference=True, private=spec)
    assert sol.status == cp.USER_LIMIT
    assert sol.certificate.violation_bound > 1e-2
    assert "loosened" in sol.status_reason and "violation" in sol.status_reason
