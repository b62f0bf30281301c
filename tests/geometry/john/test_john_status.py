"""Status is a promise (issue 21): no theorem bounds the accuracy of the default private John
ellipsoid (ridge-regularised private fixed point, Lemma S; the paper's utility theorem 7.2 needs
the unregularised iteration with sigma <= xi/32), so its answer is not called optimal."""

import numpy as np

import cvxdp


def test_private_john_ellipsoid_does_not_claim_a_success_status():
    A = np.random.default_rng(0).normal(size=(400, 3))
    A /= np.linalg.norm(A, axis=1, keepdims=True)
    sol = cvxdp.john_ellipsoid(A).solve_private(epsilon=1.0, delta=1e-6, closeness=1e-6,
                                                row_bound=1.0, rng=0)
    assert sol.ellipsoid is not None and np.all(np.isfinite(sol.ellipsoid.matrix))
    assert sol.status == "user_limit"
    assert "no accuracy theorem" in sol.info["status_reason"]
