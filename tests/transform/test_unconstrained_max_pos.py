"""Models with no constraints whose objective uses ``pos`` / ``maximum`` / ``max`` (quantile
regression, hinge-type fits, minimax) compile and are answered: CVXPY decides whether SCS
applies before canonicalising, reads such a model as having no cones and no constraints, and
refused to compile it for SCS ("The solver SCS cannot solve this problem")."""

import cvxpy as cp
import numpy as np
import pytest

import cvxdp


def _objectives(r):
    return {"quantile": cp.sum(0.3 * cp.pos(r) + 0.7 * cp.pos(-r)),
            "max": cp.max(r) - cp.min(r),
            "maximum": cp.sum(cp.maximum(r, -r))}


@pytest.mark.parametrize("kind", ["quantile", "max", "maximum"])
def test_unconstrained_pos_and_max_models_are_answered_and_certified(kind):
    rng = np.random.default_rng(0)
    A = rng.normal(size=(20, 3))
    y = cp.Parameter(20, name="y", value=rng.normal(size=20))
    x = cp.Variable(3)
    prob = cp.Problem(cp.Minimize(_objectives(y - A @ x)[kind]))
    exact = cp.Problem(prob.objective).solve()
    sol = prob.solve_private(epsilon=1e6, delta=1e-6, rng=0,
                             private=cvxdp.ScalarPrivacy(y, sensitivity=0.01))
    assert sol.status == "optimal_inaccurate"
    true = float(prob.objective.value)   # the user's objective at the released x, TRUE y
    assert true - exact <= sol.certificate.gap_bound + 1e-9
    assert sol.certificate.relative_gap_bound <= 1e-2
