"""The minimum-enclosing-ball builder makes no copy of the user's array (issue 24).

At 1e7 x 10 the builder copied the points (+917 MiB, CVXPY's ``Constant`` snapshots the array
it is given); the private path never needs that copy, the exact SOCP builds it when it runs.
"""

import tracemalloc

import numpy as np

import cvxdp


def test_meb_builder_does_not_copy_a_float64_c_contiguous_array():
    X = np.random.default_rng(0).standard_normal((200_000, 10))
    cvxdp.min_enclosing_ball(X[:3])          # imports happen outside the measurement
    tracemalloc.start()
    try:
        prob = cvxdp.min_enclosing_ball(X)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert prob.points is X
    assert peak < 0.05 * X.nbytes, f"builder allocated {peak / X.nbytes:.2f} x the array"


def test_meb_exact_solve_still_sees_the_constraint():
    pts = np.array([[0.0, 0.0], [2.0, 0.0], [1.0, 1.0]])
    prob = cvxdp.min_enclosing_ball(pts)
    assert len(prob.constraints) == 1
    assert any(v is prob.center for v in prob.variables())
    prob.solve()
    assert abs(prob.ball.radius - 1.0) < 1e-6


def test_meb_private_solve_does_not_build_the_socp_copy():
    """After solve_private on numpy data the problem holds the private answer and nothing of the
    size of the data: holding the answer must not build the SOCP (CVXPY's copy of the points)."""
    X = np.random.default_rng(1).uniform(-1, 1, (200_000, 10))
    kw = dict(rho=1.0, bounds=(-1, 1), rng=0, accuracy=0.5)
    cvxdp.min_enclosing_ball(X[:5000]).solve_private(**kw)     # imports outside the measurement
    prob = cvxdp.min_enclosing_ball(X)
    tracemalloc.start()
    try:
        prob.solve_private(**kw)
        retained, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert retained < 0.05 * X.nbytes, f"the problem retains {retained / X.nbytes:.2f} x the array"
    assert prob.status == "optimal_inaccurate" and prob.center.value is not None
    assert prob.radius.value == prob.ball.radius
