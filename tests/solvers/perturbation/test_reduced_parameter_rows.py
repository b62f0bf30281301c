"""A private parameter with CVXPY attributes (``diag=True``, reduced to its free entries) in a
constraint whose canonical rows are the user's own: certified like the plain spelling."""

from __future__ import annotations

import cvxpy as cp
import numpy as np

import cvxdp


def test_diag_parameter_in_an_elementwise_abs_row_is_certified():
    # reproducer (trial 11): abs(W @ x) <= 1 with W = Parameter(diag=True): certified violation
    # inf at every epsilon (user_limit at 1e6, true violation 0), while the same data as a
    # vector with cp.multiply certifies ~1e-12
    rng = np.random.default_rng(930)
    n = 10
    wv = rng.uniform(0.5, 2, n)
    c = rng.normal(size=n)
    out = {}
    for form in ("diag", "vector"):
        x = cp.Variable(n)
        if form == "diag":
            W = cp.Parameter((n, n), diag=True, name="W", value=np.diag(wv))
            expr = W @ x
        else:
            W = cp.Parameter(n, name="W", value=wv)
            expr = cp.multiply(W, x)
        prob = cp.Problem(cp.Minimize(c @ x + cp.sum_squares(x)), [cp.abs(expr) <= 1])
        sol = prob.solve_private(epsilon=1e6, delta=1e-6, rng=0,
                                 private=cvxdp.ConstraintPrivacy(W, 1e-3))
        true_viol = float(np.max(np.abs(wv * x.value)) - 1.0)
        assert true_viol <= sol.certificate.violation_bound + 1e-9
        out[form] = (sol.status, sol.certificate.violation_bound)
    assert out["diag"][0] == out["vector"][0] == "optimal_inaccurate"
    assert out["diag"][1] <= 1e-6
