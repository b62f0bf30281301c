"""Objective privacy on a PSD variable: the private coordinates' radius without a solve per entry.

``objective_release._private_coordinate_radius`` bounds each private coordinate over the public
constraints; above ``BOX_SOLVES_MAX`` two-sided solves it takes bound propagation's box and
solved, two conic solves each, every coordinate propagation left open.  On the max-cut SDP
relaxation with 25 nodes (private edge weights, ``diag(X) == 1``) that was the 300 off-diagonal
entries: 600 SDP solves, 168x the exact solve (held-out trial 22a, D2).  A PSD block bounds
its off-diagonal entries by its diagonal ones (``|X_kl| <= sqrt(X_kk X_ll)``, a 2x2 minor),
which propagation bounds here (``X_kk = 1``).
"""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest

import cvxdp
import cvxdp.solvers.mwu.objective_release as objective_release

pytestmark = pytest.mark.filterwarnings("ignore")


def _max_cut(n: int):
    r = np.random.default_rng(0)
    W = np.triu(r.uniform(0, 1, (n, n)) * (r.random((n, n)) < 0.4), 1)
    W = W + W.T
    L = cp.Parameter((n, n), symmetric=True, name="L", value=np.diag(W.sum(1)) - W)
    X = cp.Variable((n, n), PSD=True, name="X")
    prob = cp.Problem(cp.Maximize(cp.trace(L @ X) / 4), [cp.diag(X) == 1])
    return prob, L


def test_max_cut_radius_needs_no_solve_per_entry(monkeypatch):
    n = 25
    prob, L = _max_cut(n)
    solved = []
    inner = objective_release.public_bounds

    def counting(A, b, dims, row_private, directions, **kw):
        solved.append(len(directions))
        return inner(A, b, dims, row_private, directions, **kw)

    monkeypatch.setattr(objective_release, "public_bounds", counting)
    sol = prob.solve_private(epsilon=10.0, delta=1e-6, rng=0,
                             private=cvxdp.ObjectivePrivacy(L, sensitivity=0.02))
    # every entry of the elliptope is in [-1, 1]: R = sqrt(n (n + 1) / 2), as the exact
    # per-entry solves gave
    assert sol.privacy.details["norm_bound"] == pytest.approx(np.sqrt(n * (n + 1) / 2),
                                                               rel=1e-6)
    # the radius no longer solves for the 300 off-diagonal entries (600 solves before); the
    # certificate's own searches stay within their budgets
    assert sum(solved) <= 2 * objective_release.BOX_SOLVES_MAX
