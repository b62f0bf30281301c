"""The fit-term certificates' public constraints include the variables' own attributes
(``cp.Variable(n, nonneg=True)``): the copies the certificate solves over are fresh variables,
and a ``nonneg`` dropped there left the public box of ``0 <= x <= 2`` unbounded below, so the
bilinear square's first-order share had no ``||x* - x_e||`` bound and the certificate was
``inf`` (trial 14, ``nnls_A_and_b``; docs/certificates.md, "The variables' attributes")."""

from __future__ import annotations

import math

import cvxpy as cp
import numpy as np

import cvxdp
from cvxdp.solvers.perturbation.fit_detect import detect_fit_terms
from cvxdp.solvers.perturbation.fit_term import _box_diameter


def _nnls():
    rng = np.random.default_rng(14)
    m, n = 100, 8
    A0 = rng.uniform(0, 1, (m, n))
    b0 = A0 @ rng.uniform(0, 1, n) + 0.1 * rng.normal(size=m)
    A = cp.Parameter((m, n), name="A", value=A0)
    b = cp.Parameter(m, name="b", value=b0)
    x = cp.Variable(n, nonneg=True)
    prob = cp.Problem(cp.Minimize(cp.sum_squares(A @ x - b)), [x <= 2])
    return prob, A, b, [cvxdp.ConstraintPrivacy(A, sensitivity=0.01),
                        cvxdp.ScalarPrivacy(b, sensitivity=0.02)]


def test_public_box_keeps_the_nonneg_attribute():
    # structure only: the box of x over the copies' constraints is [0, 2]^8, diameter 2 sqrt(8)
    # (it was inf: x >= 0 was lost with the attribute)
    prob, A, b, _ = _nnls()
    model = detect_fit_terms(prob, (A, b))
    assert model is not None
    assert abs(_box_diameter(model, ("x",) if "x" in model.x_copies else
                             tuple(model.x_copies)) - 2 * math.sqrt(8)) <= 1e-6


def test_nnls_private_design_and_target_certified_finitely(exact_value):
    # reproducer: at epsilon 10 and 1 the certified gap was inf (true gaps 1.48 and 123)
    prob, _, _, spec = _nnls()
    opt = exact_value(prob)
    for eps in (10.0, 1.0):
        sol = prob.solve_private(epsilon=eps, delta=1e-6, rng=0, private=spec)
        c = sol.certificate
        assert math.isfinite(c.gap_bound) and math.isfinite(c.objective_upper)
        assert c.optimum_lower <= opt + 1e-7
        assert float(prob.objective.value) <= c.objective_upper + 1e-7
        assert float(prob.objective.value) - opt <= c.gap_bound + 1e-7
