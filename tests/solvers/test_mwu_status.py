"""The status of a general-path solution is a promise (issue 21 items 7 and 15).

* A model whose public part is infeasible is ``infeasible`` before any budget is spent.
* A feasibility-only answer (the objective was not optimised) is never ``optimal`` /
  ``optimal_inaccurate``: it is ``user_limit``, with a warning and an ``info`` entry.
"""

import cvxpy as cp
import numpy as np
import pytest

import cvxdp


def _infeasible_public(equality: bool):
    x = cp.Variable(2, nonneg=True)
    A = cp.Parameter((1, 2), name="A", value=np.ones((1, 2)))
    trace = cp.sum(x) == 1 if equality else cp.sum(x) <= 1
    prob = cp.Problem(cp.Minimize(0), [trace, x[0] >= 2, A @ x <= 1])
    return prob, cvxdp.ConstraintPrivacy(A, sensitivity=0.1)


@pytest.mark.parametrize("how", ["public equality", "trace_bound"])
def test_infeasible_public_part_is_infeasible_and_spends_nothing(how):
    prob, spec = _infeasible_public(equality=how == "public equality")
    kw = {"trace_bound": 5.0} if how == "trace_bound" else {}
    sol = prob.solve_private(epsilon=1.0, delta=1e-6, private=spec, rng=0, **kw)
    assert sol.status == "infeasible"
    assert prob.status == "infeasible" and prob.value == np.inf
    assert all(v.value is None for v in prob.variables())
    assert "infeasible" in sol.info["status_reason"]
    assert sol.privacy.records == () and sol.privacy.epsilon == 0.0
