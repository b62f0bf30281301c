"""Issue 21 item 9, for models that delegate to a structured solver: after a private solve the
user's problem holds the private answer only (status, value, variables), never an exact one."""

import cvxpy as cp
import numpy as np

import cvxdp


def test_least_squares_model_holds_the_released_answer_after_a_private_solve():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (3000, 3))
    y = X @ np.array([1.0, -2.0, 0.5]) + 0.1 * rng.normal(size=3000)
    Xp = cp.Parameter(X.shape, name="X", value=X)
    yp = cp.Parameter(3000, name="y", value=y)
    beta = cp.Variable(3, name="beta")
    prob = cp.Problem(cp.Minimize(cp.sum_squares(Xp @ beta - yp)))
    exact = prob.solve()
    sol = prob.solve_private(epsilon=1.0, delta=1e-6, rng=3, reference=True,
                             private=cvxdp.LeastSquaresPrivacy(Xp, yp, row_bound=3.0))
    assert prob.status == sol.status != cp.OPTIMAL
    assert prob.value == sol.value and prob.value != exact
    np.testing.assert_array_equal(beta.value, sol.coef)


def test_a_failed_private_solve_leaves_no_exact_ellipsoid_or_covering_primal_missing():
    A = np.random.default_rng(0).normal(size=(60, 2))
    prob = cvxdp.john_ellipsoid(A)
    prob.solve()
    assert prob.ellipsoid is not None
    try:
        prob.solve_private(epsilon=-1.0, delta=1e-6)
    except cvxdp.BudgetError:
        pass
    assert prob.ellipsoid is None and prob.value is None
    cov = cvxdp.covering_lp(np.random.default_rng(1).uniform(size=(200, 4)))
    sol = cov.solve_private(epsilon=4.0, delta=1e-6, rng=0)
    (name, value), = sol.primal.items()
    np.testing.assert_array_equal(value, sol.point)
