"""Private objective weights with a public sign (``nonneg=True``) on a convex atom.

``wts @ cp.abs(x - 1)`` is DCP because ``wts >= 0``; CVXPY writes it with epigraph variables
``t >= |x - 1|`` weighted by ``wts``.  The released weights ``wts + z`` could be negative, which
made the perturbed program unbounded: at epsilon 1 the solve raised InfeasibleProblemError after
spending the budget.  The noisy coefficients are now projected onto the signs the parameters'
public domains give (post-processing; the projection only moves them towards the truth).
"""

from __future__ import annotations

import warnings

import cvxpy as cp
import numpy as np

import cvxdp


def test_nonneg_weights_of_a_convex_atom_keep_the_program_bounded():
    rng = np.random.default_rng(56)
    wts = cp.Parameter(10, name="wts", value=rng.uniform(0, 1, 10), nonneg=True)
    x = cp.Variable(10, name="x")
    prob = cp.Problem(cp.Minimize(wts @ cp.abs(x - 1) + cp.sum_squares(x)), [cp.sum(x) == 3])
    opt = cp.Problem(prob.objective, prob.constraints).solve(solver=cp.CLARABEL)
    for seed in range(3):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sol = prob.solve_private(epsilon=1.0, delta=1e-6, rng=seed,
                                     private=cvxdp.ObjectivePrivacy(wts, sensitivity=1e-2))
        assert sol.status in ("optimal_inaccurate", "user_limit")
        assert abs(float(np.sum(x.value)) - 3) <= 1e-6
        assert float(prob.objective.value) - opt <= 0.1 * opt   # a useful point


def test_nonneg_weights_beside_a_private_constraint_keep_the_counterpart_bounded():
    # the same weights with a private right-hand side too: perturbation releases both, and the
    # counterpart built from negative weights was unbounded (solver_error at epsilon 1)
    rng = np.random.default_rng(56)
    wts = cp.Parameter(10, name="wts", value=rng.uniform(0, 1, 10), nonneg=True)
    b = cp.Parameter(name="b", value=3.0)
    x = cp.Variable(10, name="x")
    prob = cp.Problem(cp.Minimize(wts @ cp.abs(x - 1) + cp.sum_squares(x)), [cp.sum(x) == b])
    for seed in range(3):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sol = prob.solve_private(epsilon=1.0, delta=1e-6, rng=seed, private=[
                cvxdp.ObjectivePrivacy(wts, sensitivity=1e-2),
                cvxdp.ScalarPrivacy(b, sensitivity=1e-2)])
        assert sol.status in ("optimal_inaccurate", "user_limit"), sol.status_reason
        assert x.value is not None
