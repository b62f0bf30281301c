"""The certificate of a row-level model bounds the gap on the rows clipped into the public
domain (the DP model: rows outside it are clipped, never refused); it says so, and a noisy
count of clipped rows that is certainly positive makes the status user_limit."""

from __future__ import annotations

import math

import cvxpy as cp
import numpy as np

import cvxdp

N, D = 4000, 8


def _ridge(row_bound):
    rng = np.random.default_rng(0)
    A = rng.normal(size=(N, D))
    t = A @ np.linspace(-1, 1, D) * 0.4 + 0.2 * rng.normal(size=N)
    X, y = cp.Parameter((N, D), value=A), cp.Parameter(N, value=t)
    w = cp.Variable(D)
    prob = cp.Problem(cp.Minimize(cp.sum_squares(X @ w - y) / N + 0.01 * cp.sum_squares(w)),
                      [cp.norm(w, 2) <= 5])
    clipped = int(np.sum(np.linalg.norm(A, axis=1) > row_bound) + np.sum(np.abs(t) > 3.0))
    return prob, cvxdp.RowPrivacy(X, y, row_bound=row_bound, label_bound=3.0), clipped


def test_the_certificate_says_it_bounds_the_clipped_rows():
    prob, spec, clipped = _ridge(1.0)
    assert clipped > 0.99 * N
    sol = prob.solve_private(epsilon=10, delta=1e-6, private=spec, rng=0, accuracy=0.05)
    assert sol.status == cp.OPTIMAL_INACCURATE          # on the clipped rows, as promised
    for text in (sol.certificate.how, sol.status_reason):
        assert "clipped" in text and "row_bound=1" in text and "label_bound=3" in text, text
        assert "count_clipped=True" in text


def test_a_certain_clipping_count_makes_the_status_user_limit():
    prob, spec, clipped = _ridge(1.0)
    sol = prob.solve_private(epsilon=10, delta=1e-6, private=spec, rng=0, accuracy=0.05,
                             count_clipped=True)
    noisy = sol.info["clipped_rows_noisy"]
    assert abs(noisy - clipped) < 100                    # Laplace of scale 1/(eps share)
    assert sol.status == cp.USER_LIMIT
    assert f"{noisy:.0f}" in sol.status_reason and "raise row_bound" in sol.status_reason
    assert math.isfinite(sol.certificate.gap_bound)     # the clipped rows' bound is kept


def test_no_clipping_leaves_the_status_to_the_bound():
    prob, spec, clipped = _ridge(3 * math.sqrt(D) + 3)
    assert clipped == 0
    sol = prob.solve_private(epsilon=10, delta=1e-6, private=spec, rng=0, accuracy=30.0,
                             count_clipped=True)
    assert sol.status == cp.OPTIMAL_INACCURATE
