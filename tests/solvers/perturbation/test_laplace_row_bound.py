"""The Laplace release's per-unit noise bound ``B_u`` (``laplace_norm_bound``) is near the
quantile of ``||g_S||_2`` it bounds, so the certificates that scale with it converge at epsilon
1e6 (trial 14: ``lad_private_A``, ``blending_many_rows``; docs/certificates.md, "The Laplace
release's unit bound")."""

from __future__ import annotations

import math

import cvxpy as cp
import numpy as np
import pytest

import cvxdp
from cvxdp.privacy.laplace import laplace_norm_bound


def test_unit_bound_is_near_the_laplace_norm_quantile():
    # reproducer: 10 private entries per row, 400 units at beta = 1e-3 (the LAD below): the
    # bound was 48.1 (Bernstein on sum g_i^2 / sqrt(k) max |g_i|) against a quantile of
    # ||g||_2 of about 16.3 at failure 2.5e-6 (2e6 draws); 21 entries (a blending row): 50.3
    s10 = math.log(400 / 1e-3)
    assert float(laplace_norm_bound(10, s10)) <= 20.0
    assert float(laplace_norm_bound(21, math.log(301 / 1e-3))) <= 22.0
    # and it holds: simulated failure at e^{-s} = 1e-3 (k = 10, 200,000 draws) below 1e-3
    # plus three standard errors
    g = np.random.default_rng(5).laplace(0.0, 1.0, (200_000, 10))
    B = float(laplace_norm_bound(10, math.log(1e3)))
    assert np.mean(np.linalg.norm(g, axis=1) > B) <= 1e-3 + 3 * math.sqrt(1e-3 / 200_000)


def _blending():
    rng = np.random.default_rng(31)
    m, n = 300, 20
    A0 = rng.uniform(0, 1, (m, n))
    b0 = rng.uniform(5, 10, m)
    c = rng.uniform(1, 2, n)
    A = cp.Parameter((m, n), name="A", value=A0)
    b = cp.Parameter(m, name="b", value=b0)
    x = cp.Variable(n, nonneg=True)
    prob = cp.Problem(cp.Maximize(c @ x), [A @ x <= b, cp.sum(x) <= 20])
    return prob, [cvxdp.ConstraintPrivacy(A, sensitivity=0.005),
                  cvxdp.ScalarPrivacy(b, sensitivity=0.1)]


@pytest.mark.parametrize("model, sign", [("lad", 1.0), ("blending", -1.0)])
def test_many_rows_certified_at_epsilon_1e6(exact_value, lad_private_design, model, sign):
    """Reproducers: lad_private_A certified 0.0113 (> 1e-2, user_limit) against a true 6.8e-6,
    the gap the tightening plus the loosening, each 200 rows x B_u = 48; blending_many_rows
    0.0129 against a true 0.0058, every row's B_u = 50.3 Laplace norms of its 21 private
    entries.  ``sign``: the certificate's minimised sense (-1 for Maximize)."""
    prob, spec = lad_private_design() if model == "lad" else _blending()
    opt = exact_value(prob)
    sol = prob.solve_private(epsilon=1e6, delta=1e-6, rng=0, private=spec)
    c = sol.certificate
    assert sol.info["noise"] == "laplace"
    assert c.relative_gap_bound <= 0.006
    assert sol.status == cp.OPTIMAL_INACCURATE
    assert c.optimum_lower <= sign * opt + 1e-7
    assert sign * (float(prob.objective.value) - opt) <= c.gap_bound + 1e-7
