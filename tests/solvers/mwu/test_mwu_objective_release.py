"""Under objective privacy, nothing computed from the private c may be written back."""

import cvxpy as cp
import numpy as np
import pytest

import cvxdp


def test_problem_value_is_the_released_value_not_the_true_objective():
    rng = np.random.default_rng(0)
    c = cp.Parameter(6, name="c", value=rng.uniform(0.5, 1.5, 6))
    x = cp.Variable(6, nonneg=True)
    prob = cp.Problem(cp.Maximize(c @ x), [cp.sum(x) <= 1])
    sol = prob.solve_private(epsilon=0.5, delta=1e-6, rng=3, reference=True,
                             private=cvxdp.ObjectivePrivacy(c, sensitivity=0.05))
    true_value = float(c.value @ x.value)
    assert prob.value == pytest.approx(sol.value)
    assert sol.value != pytest.approx(true_value, rel=1e-9, abs=1e-12)
    # the released point is exactly feasible (post-processing of the noisy c)
    assert x.value.sum() <= 1 + 1e-6 and x.value.min() >= -1e-6
