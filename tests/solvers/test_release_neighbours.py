"""Everything a general-path solution releases is a function of the mechanisms' noisy outputs.

For each general path (LP / SOCP / SDP under ConstraintPrivacy, ScalarPrivacy and
ObjectivePrivacy), the private data is moved to a neighbour within the declared sensitivity and
the solve is repeated with the same seed: the fields that are not derived from noise must be
identical, and the released objective value must be the one recomputed from released
quantities, not the true objective (issue 21 item 1).
"""

import cvxpy as cp
import numpy as np

import cvxdp


def test_objective_constant_term_value_is_not_the_true_objective():
    # issue 21 item 1: c enters the objective's constant term (-0.3 * sum(c))
    c = cp.Parameter(3, value=[1.0, 2.0, 3.0])
    x = cp.Variable(3)
    prob = cp.Problem(cp.Minimize(c @ (x - 0.3)), [cp.sum(x) >= 1, x <= 2, x >= 0])
    sol = prob.solve_private(epsilon=0.1, delta=1e-6, rng=0,
                             private=cvxdp.ObjectivePrivacy(c, 0.1))
    true_value = float(c.value @ (x.value - 0.3))
    assert sol.value is not None
    # before the fix the two agree to 1e-12, which reveals sum(c)
    assert abs(sol.value - true_value) > 1e-3
