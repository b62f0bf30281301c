"""A private offset inside a sum-type atom of a constraint: the certificate bounds the user's
constraint, not each canonical row.

``norm1(x - y) <= r`` with private ``y`` is ``n`` canonical epigraph rows whose violations ADD
UP in the user's constraint: the certificate bounded each row (1.5 at epsilon 1) while the
released point broke the user's constraint by 8.1.
"""

from __future__ import annotations

import warnings

import cvxpy as cp
import numpy as np
import pytest

import cvxdp


def _l1_ball(seed: int = 34):
    rng = np.random.default_rng(seed)
    y = cp.Parameter(10, name="y", value=rng.normal(size=10))
    x = cp.Variable(10, name="x")
    prob = cp.Problem(cp.Minimize(rng.normal(size=10) @ x), [cp.norm(x - y, 1) <= 2])
    return prob, y


@pytest.mark.parametrize("eps", [1.0, 10.0, 1e6])
def test_user_violation_is_bounded_in_the_users_terms(eps):
    for seed in (34, 35, 36):
        prob, y = _l1_ball(seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sol = prob.solve_private(epsilon=eps, delta=1e-6, rng=seed,
                                     private=cvxdp.ScalarPrivacy(y, sensitivity=0.01))
        true = float(prob.constraints[0].violation())
        assert true <= sol.certificate.violation_bound + 1e-9, (eps, seed)
        if sol.status == "optimal_inaccurate":
            assert true <= 1e-2
