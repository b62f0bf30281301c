"""A model that the TRUE private data make infeasible (its public part is feasible).

Perturbation's loosened counterpart contains the true feasible set on the noise event
(docs/certificates.md), so when it is empty the model is infeasible for the true data with
probability at least 1 - beta.  Before, the answer was ``solver_error`` with a message telling
the user to raise epsilon or add bounds, at epsilon 1e6.
"""

from __future__ import annotations

import warnings

import cvxpy as cp
import numpy as np
import pytest

import cvxdp


def _halfspaces():
    """min ||w|| s.t. A w >= 1 (20 random rows in 5 dimensions: they surround the origin, so no
    w meets them all), ||w||_inf <= 10 public."""
    rng = np.random.default_rng(28)
    A = cp.Parameter((20, 5), name="A", value=rng.normal(size=(20, 5)) / np.sqrt(5))
    w = cp.Variable(5, name="w")
    prob = cp.Problem(cp.Minimize(cp.norm(w, 2)), [A @ w >= 1, cp.norm(w, "inf") <= 10])
    return prob, A


def test_infeasible_for_the_true_data_says_so_with_its_probability():
    prob, A = _halfspaces()
    assert cp.Problem(prob.objective, prob.constraints).solve() == np.inf  # truly infeasible
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = prob.solve_private(epsilon=1e6, delta=1e-6, rng=0,
                                 private=cvxdp.ConstraintPrivacy(A, sensitivity=1e-3))
    assert sol.status == cp.INFEASIBLE_INACCURATE
    assert prob.status == cp.INFEASIBLE_INACCURATE and prob.value == np.inf
    assert "probability >= 0.999" in sol.status_reason
    assert "raise epsilon" not in sol.status_reason


@pytest.mark.parametrize("eps", [1e6, 10.0])
def test_a_feasible_model_is_never_called_infeasible(eps):
    # the same rows shifted so that w = 0 meets them: a feasible model answers with a point
    prob, A = _halfspaces()
    x = prob.variables()[0]
    feasible = cp.Problem(prob.objective, [A @ x >= -1, cp.norm(x, "inf") <= 10])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = feasible.solve_private(epsilon=eps, delta=1e-6, rng=0,
                                     private=cvxdp.ConstraintPrivacy(A, sensitivity=1e-3))
    assert sol.status in (cp.OPTIMAL_INACCURATE, cp.USER_LIMIT)
