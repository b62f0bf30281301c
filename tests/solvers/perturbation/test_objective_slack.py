"""The private objective's error anywhere on the public box (the loosened counterpart's lower
bound subtracts it): the smaller of the triangle and Gershgorin bounds."""

from __future__ import annotations

import cvxpy as cp
import numpy as np

import cvxdp


def _flow(seed: int = 912):
    """Min-cost flow on a random graph with private demands (an equality right-hand side) and
    private edge costs (the objective), as in trial 11."""
    rng = np.random.default_rng(seed)
    nn, n_edges = 30, 120
    edges = set()
    for i in range(nn):
        edges.add((i, (i + 1) % nn))
        edges.add(((i + 1) % nn, i))
    while len(edges) < n_edges:
        i, j = rng.integers(0, nn, 2)
        if i != j:
            edges.add((int(i), int(j)))
    edges = sorted(edges)
    inc = np.zeros((nn, len(edges)))
    for e, (i, j) in enumerate(edges):
        inc[i, e], inc[j, e] = -1, 1
    dv = rng.uniform(-1, 1, nn)
    d = cp.Parameter(nn, name="d", value=dv - dv.mean())
    cost = cp.Parameter(len(edges), nonneg=True, name="cost",
                        value=rng.uniform(1, 3, len(edges)))
    f = cp.Variable(len(edges))
    prob = cp.Problem(cp.Minimize(cost @ f), [inc @ f == d, f >= 0, f <= 2])
    return prob, [cvxdp.ScalarPrivacy(d, 1e-3), cvxdp.ObjectivePrivacy(cost, 1e-2)]


def test_objective_error_on_the_box_uses_the_euclidean_bound():
    # one private cost per edge: ||E_c [x; 1]|| <= Delta ||x||, whose largest value on the box
    # [0, 2]^120 is Delta 2 sqrt(120); the triangle bound sum_j Delta |x_j| = 240 Delta was
    # sqrt(120) ~ 11 times larger (certified relative gap 211 at epsilon 10)
    prob, spec = _flow()
    ref = cp.Problem(prob.objective, prob.constraints)
    ref.solve(solver=cp.CLARABEL)
    for seed in range(4):
        sol = prob.solve_private(epsilon=10, delta=1e-6, rng=seed, private=spec)
        c = sol.certificate
        assert c.optimum_lower <= ref.value + 1e-7
        assert c.relative_gap_bound < 40, c.relative_gap_bound
