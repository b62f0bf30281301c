"""Truncated noise makes the counterpart's promise sure, not the Gaussian tail bounds'.

``noise="truncated"`` draws the noise conditioned on ``{||g_S_u|| <= B_u for all u}``, so the
counterpart holds surely.  A private nonlinear constraint bounded in the user's terms
(``norm1(x - y) <= 1``) is bounded by Gaussian tail events at ``beta``; under the truncated law
those fail with probability at most ``beta`` (the Gaussian correlation inequality, Royen 2014:
the truncation event and each tail event are symmetric convex sets), not 0.  The certificate
said probability 1.
"""

from __future__ import annotations

import warnings

import cvxpy as cp
import numpy as np

import cvxdp


def test_user_terms_bound_keeps_its_beta_under_truncated_noise():
    rng = np.random.default_rng(0)
    y = cp.Parameter(6, name="y", value=rng.uniform(-1, 1, 6))
    x = cp.Variable(6, name="x")
    prob = cp.Problem(cp.Minimize(cp.sum(x)), [cp.norm(x - y, 1) <= 1, cp.abs(x) <= 3])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = prob.solve_private(epsilon=10.0, delta=1e-6, rng=0, mechanism="perturbation",
                                 noise="truncated", beta=1e-3,
                                 private=cvxdp.ScalarPrivacy(y, sensitivity=1e-2))
    assert "user's terms" in sol.certificate.how
    assert sol.certificate.probability == 1.0 - 1e-3
