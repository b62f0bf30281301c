"""ConstraintSetPrivacy on a user's model goes through solve_private to the dense MWU."""

import cvxpy as cp
import numpy as np
import pytest

import cvxdp


def _model(zero_row=False):
    rng = np.random.default_rng(0)
    A = rng.uniform(size=(600, 12)) ** 3
    if zero_row:
        A[5] = 0.0
    x = cp.Variable(12, nonneg=True)
    con = A @ x >= 1
    return cp.Problem(cp.Minimize(cp.sum(x)), [con]), con, A


def test_user_covering_model_is_solved_by_dense_mwu():
    prob, con, A = _model()
    sol = prob.solve_private(epsilon=4.0, delta=1e-6, rng=0, reference=True,
                             private=cvxdp.ConstraintSetPrivacy(con))
    assert sol.privacy.guarantee == "dp" and sol.privacy.epsilon <= 4.0 + 1e-9
    assert "Alg. 3" in sol.privacy.theorem
    v = sol.validation
    x = prob.variables()[0].value
    # all but s constraints met exactly is not promised; most are met at 1 - alpha = 1/2
    frac_half = float(np.mean(A @ x >= 0.5))
    assert frac_half >= 0.95
    assert v.frac_covered_half == pytest.approx(frac_half)  # the path's own metric
    cost_ratio = float(np.sum(x)) / v.reference_value
    assert 0.3 <= cost_ratio <= 3.0 and v.cost_ratio == pytest.approx(cost_ratio)
    # the validation is in the user's terms: sum(x) at the released x, the violation of the
    # one constraint A @ x >= 1 with the true A
    assert v.private_value == pytest.approx(float(np.sum(x)), rel=1e-9)
    assert v.max_violation == pytest.approx(max(0.0, float(np.max(1 - A @ x))), rel=1e-9)
    assert v.violated == int(np.max(1 - A @ x) > v.tolerance)


def test_not_a_covering_model_is_refused():
    x = cp.Variable(3)
    con = np.ones((4, 3)) @ x >= 1
    prob = cp.Problem(cp.Minimize(cp.sum(x)), [con, x <= 5])
    with pytest.raises(cvxdp.UnsupportedProblemError):
        prob.solve_private(epsilon=1.0, delta=1e-6, private=cvxdp.ConstraintSetPrivacy(con))


def test_infeasible_covering_reference_is_a_typed_error():
    prob, con, _ = _model(zero_row=True)
    with pytest.raises(cvxdp.InfeasibleProblemError, match="all zeros"):
        prob.solve_private(epsilon=4.0, delta=1e-6, rng=0, reference=True,
                           private=cvxdp.ConstraintSetPrivacy(con))


def test_covering_options_reach_the_dense_mwu_through_solve_private():
    """The general path's option check rejected the covering options (s=, opt_bounds=,
    count_clipped=) before dispatching ConstraintSetPrivacy: a TypeError for a documented call."""
    prob, con, _ = _model()
    sol = prob.solve_private(epsilon=4.0, delta=1e-6, rng=0, s=20, count_clipped=True,
                             private=cvxdp.ConstraintSetPrivacy(con))
    assert sol.privacy.details["s"] == 20
    assert "clipped_rows_noisy" in sol.info
    b = cp.Parameter(name="b", value=1.0)
    x = cp.Variable(nonneg=True)
    lp = cp.Problem(cp.Maximize(x), [x <= b])
    with pytest.raises(TypeError, match="unknown option"):   # misspelt keyword on the MWU path
        lp.solve_private(epsilon=1.0, delta=1e-6, rng=0, schedul="auto",
                         private=cvxdp.ScalarPrivacy(b, sensitivity=0.1))
