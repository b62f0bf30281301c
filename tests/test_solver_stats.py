"""After ``solve_private`` the problem's ``solver_stats`` are CVXPY's, filled from the released
solution (cvxdp/writeback.py): the solver name, the private path's wall time and iteration
count, the mechanism.  Before: ``solve_time=None, num_iters=None, solver_name='CVXDP'``."""

import warnings

import cvxpy as cp
import numpy as np
import pytest

import cvxdp
from cvxdp.writeback import SOLVER_NAME


def _lp():
    rng = np.random.default_rng(0)
    A = cp.Parameter((10, 4), name="A", value=rng.uniform(0, 1, (10, 4)))
    x = cp.Variable(4, nonneg=True)
    prob = cp.Problem(cp.Maximize(cp.sum(x)), [A @ x <= 0.7, cp.sum(x) <= 1])
    return prob, cvxdp.ConstraintPrivacy(A, sensitivity=1e-3)


@pytest.mark.parametrize("mechanism", ["mwu", "perturbation"])
def test_general_model_solver_stats(mechanism):
    prob, spec = _lp()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = prob.solve_private(epsilon=1.0, delta=1e-6, rng=0, mechanism=mechanism,
                                 private=spec)
    st = prob.solver_stats
    assert st.solver_name == SOLVER_NAME == "CVXDP (private)"
    assert st.solve_time == sol.solve_time and st.solve_time > 0
    assert st.num_iters == sol.iterations
    if mechanism == "mwu":
        assert isinstance(st.num_iters, int) and st.num_iters > 0
    assert st.extra_stats["mechanism"] == sol.info.get("mechanism", sol.info.get("method"))


def test_structured_problem_solver_stats():
    rng = np.random.default_rng(0)
    P = rng.uniform(-1, 1, (2000, 2))
    ball = cvxdp.min_enclosing_ball(P)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = ball.solve_private(epsilon=1.0, delta=1e-6, bounds=(-1, 1), rng=0)
    assert ball.solver_stats.solver_name == "CVXDP (private)"
    assert ball.solver_stats.solve_time == sol.solve_time > 0
    assert ball.solver_stats.num_iters == sol.iterations
