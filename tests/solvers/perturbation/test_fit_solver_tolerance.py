"""The fit terms' lower bound on the noisy minimum follows the tolerance of the solve it reads.

``_fit_release`` took ``h - 1e-8 (1 + |h|)`` as a lower bound on the noisy program's minimum,
which assumes Clarabel met its 1e-10 duality gap (``_solve_tight``).  On a lasso of 1,000
private targets at epsilon 1e6 the 1e-10 solve ends ``optimal_inaccurate``, the solve falls
back to Clarabel's default tolerance (1e-8), whose value is 3.2e-8 above the minimum, and the
certificate claimed a relative gap of 2.3e-10 against a true 8.9e-10 (held-out trial 22a, D1).
"""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest

import cvxdp

pytestmark = pytest.mark.filterwarnings("ignore")


def test_certificate_holds_when_the_tight_solve_falls_back():
    r = np.random.default_rng(0)
    m, n = 1000, 50
    A = r.standard_normal((m, n))
    coef = np.zeros(n)
    coef[:5] = 1
    b = cp.Parameter(m, name="b", value=np.clip(A @ coef / 3 + 0.2 * r.standard_normal(m), -2, 2))
    gamma = cp.Parameter(nonneg=True, name="gamma", value=0.1)
    x = cp.Variable(n)
    prob = cp.Problem(cp.Minimize(cp.sum_squares(A @ x - b) / (2 * m) + gamma * cp.norm1(x)))
    prob.solve(solver="CLARABEL", tol_gap_abs=1e-13, tol_gap_rel=1e-13, tol_feas=1e-13)
    opt = prob.value
    sol = prob.solve_private(epsilon=1e6, delta=1e-6, rng=0, public=[gamma], accuracy=5e-10,
                             private=cvxdp.ScalarPrivacy(b, sensitivity=0.02))
    true_gap = (float(prob.objective.value) - opt) / max(1.0, abs(opt))
    assert sol.certificate.relative_gap_bound >= true_gap
    # the answer is still certified far inside the default accuracy
    assert sol.certificate.relative_gap_bound < 1e-5
