"""The loosened counterpart when the public constraints give a variable's sign but no box.

``max sum(x) s.t. A' x <= 1, x >= 0`` with a private ``A`` is the packing LP as CVXPY's
examples write it: ``x`` is bounded only through the private rows.  The loosened counterpart
dropped every private row whose variables had no public box, so the lower bound on the optimum
was ``-inf`` even at epsilon 1e6 (certified gap ``inf``, status ``user_limit`` on a point within
1e-6 of the optimum).  With ``x >= 0`` public, ``||E [x; 1]|| <= sum_j ||E e_j|| x_j + ||E
e_n||`` is linear and the loosened set stays convex (certificate.py, ``unit_reach``); any
one-sided bound ``x_j >= l_j`` does too (``|x_j| <= x_j + 2 max(-l_j, 0)``).
"""

from __future__ import annotations

import warnings

import cvxpy as cp
import numpy as np
import pytest

import cvxdp


def _packing(seed: int, stacked: bool = False, robust: bool = False):
    rng = np.random.default_rng(seed)
    x = cp.Variable(5, name="x")
    if robust:
        # a norm in the rows, and a lower bound that is not 0 (the public box of x is then
        # computed by a solver and comes back as -1e-8 where the bound is 0, or -0.5 here)
        A = cp.Parameter((8, 5), name="A", value=rng.uniform(0, 1, (8, 5)))
        prob = cp.Problem(cp.Maximize(cp.sum(x)), [
            A[i] @ x + 0.1 * cp.norm(x, 2) <= 1 for i in range(8)] + [x >= -0.5])
        return prob, [cvxdp.ConstraintPrivacy(A, sensitivity=1e-3)]
    if stacked:
        a = cp.Parameter(5, name="a", value=rng.uniform(0, 1, 5))
        b = cp.Parameter(5, name="b", value=rng.uniform(0, 1, 5))
        prob = cp.Problem(cp.Maximize(cp.sum(x)), [cp.vstack([a, b]) @ x <= 1, x >= 0])
        return prob, [cvxdp.ConstraintPrivacy(a, sensitivity=1e-3),
                      cvxdp.ConstraintPrivacy(b, sensitivity=1e-3)]
    A = cp.Parameter((5, 8), name="A", value=rng.uniform(0, 1, (5, 8)))
    prob = cp.Problem(cp.Maximize(cp.sum(x)), [A.T @ x <= 1, x >= 0])
    return prob, [cvxdp.ConstraintPrivacy(A, sensitivity=1e-3)]


@pytest.mark.parametrize("shape", ["plain", "stacked", "robust"])
@pytest.mark.parametrize("eps", [1e6, 10.0, 1.0])
def test_signed_variables_bound_the_loosened_counterpart(eps, shape):
    for seed in range(3):
        prob, specs = _packing(seed, stacked=shape == "stacked", robust=shape == "robust")
        opt = cp.Problem(prob.objective, prob.constraints).solve(solver=cp.CLARABEL)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sol = prob.solve_private(epsilon=eps, delta=1e-6, rng=seed, private=specs)
        cert = sol.certificate
        assert cert.optimum_lower <= -opt + 1e-9, (eps, seed)       # minimised: -sum(x)
        assert opt - float(prob.objective.value) <= cert.gap_bound + 1e-9
        if eps == 1e6:
            assert cert.relative_gap_bound <= 1e-2 and sol.status == "optimal_inaccurate"
