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
