"""Status is a promise: the MWU path says ``optimal_inaccurate`` only when the accuracy bound of
its theorem holds at the settings used (issue 21, items 8/15: no success status without it)."""

import warnings

import cvxpy as cp
import numpy as np
import pytest

import cvxdp
from cvxdp.status import status_of


def _lp():
    rng = np.random.default_rng(0)
    usage = rng.uniform(0, 1, (40, 15))
    A = cp.Parameter((40, 15), name="A", value=usage)
    x = cp.Variable(15, nonneg=True)
    prob = cp.Problem(cp.Maximize(rng.uniform(0, 1, 15) @ x), [A @ x <= 0.7, cp.sum(x) == 1])
    return prob, A


def test_no_success_status_when_the_theorem_bound_does_not_hold():
    prob, A = _lp()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = prob.solve_private(mechanism="mwu", epsilon=1.0, delta=1e-6, rng=7,
                                 private=cvxdp.ConstraintPrivacy(A, sensitivity=1e-3))
    assert sol.privacy.details["theorem_conditions_hold"] is False
    assert sol.info["alpha_guaranteed"] is None
    assert sol.status == cp.USER_LIMIT
    assert "accuracy" in sol.info["status_reason"]
    assert prob.status == cp.USER_LIMIT
    # the status rule: the certificate cannot show accuracy 1e-2 here
    assert status_of(sol.certificate)[0] == cp.USER_LIMIT


def test_success_status_with_the_bound_when_the_theorem_holds():
    prob, A = _lp()
    # width=1: the public bound on the private rows the theorem rests on (entries in [0, 1])
    sol = prob.solve_private(mechanism="mwu", width=1.0,
                             epsilon=1e4, delta=1e-6, rng=7, reference=True, accuracy=0.3,
                             private=cvxdp.ConstraintPrivacy(A, sensitivity=1e-3))
    assert (sol.status, sol.status_reason) == status_of(sol.certificate, 0.3)
    assert sol.status == cp.OPTIMAL_INACCURATE
    alpha = sol.info["alpha_guaranteed"]
    assert alpha is not None and alpha > 0
    # the theorem's promise vs the exact solve (measured: alpha 0.297, gap 0.022, viol 0.021)
    assert sol.validation.max_violation <= alpha
    assert sol.validation.reference_value - sol.value <= alpha
    assert sol.value == pytest.approx(sol.validation.reference_value, abs=0.1)
    # the certificate holds (canonical units; minimised objective -c'x)
    cert = sol.certificate
    assert sol.validation.canonical_max_violation <= cert.violation_bound
    assert sol.validation.reference_value - sol.value <= cert.gap_bound + 1e-7
