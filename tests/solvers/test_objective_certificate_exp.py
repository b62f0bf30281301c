"""Objective perturbation's second-order certificate beside public exponential cones."""

from __future__ import annotations

import cvxpy as cp
import numpy as np

import cvxdp


def test_private_weights_on_log_utilities_are_certified_at_large_epsilon():
    # reproducer (trial 11): Maximize(w @ log(1 + x)) with private weights, 0 <= x <= 2: the
    # hypograph variables have no public lower bound (no ball: R = inf), and a thin level set
    # near the released point failed to solve, which gave up the whole bound (gap inf)
    rng = np.random.default_rng(906)
    n = 30
    wv, price = rng.uniform(0.5, 2, n), rng.uniform(0.5, 1.5, n)
    w = cp.Parameter(n, nonneg=True, name="w", value=wv)
    x = cp.Variable(n, nonneg=True)
    prob = cp.Problem(cp.Maximize(w @ cp.log(1 + x)), [price @ x <= 10, x <= 2])
    ref = cp.Problem(prob.objective, prob.constraints)
    ref.solve(solver=cp.CLARABEL)
    sol = prob.solve_private(epsilon=1e6, delta=1e-6, rng=0,
                             private=cvxdp.ObjectivePrivacy(w, 1e-2))
    gap = (ref.value - float(prob.objective.value)) / max(1.0, abs(ref.value))
    assert sol.status == "optimal_inaccurate"
    assert gap <= sol.certificate.relative_gap_bound + 1e-7
    assert sol.certificate.relative_gap_bound <= 1e-2


def _kelly(seed: int = 323):
    """Kelly gambling (CVXPY's example): ``max pi @ log(R' b)`` over the simplex, the outcome
    probabilities ``pi`` private."""
    rng = np.random.default_rng(seed)
    n, K = 6, 20
    pi = cp.Parameter(K, name="pi", nonneg=True, value=rng.dirichlet(np.ones(K)))
    R = np.vstack([np.ones(K), rng.uniform(0.5, 2.0, (n - 1, K))])
    b = cp.Variable(n, name="b")
    prob = cp.Problem(cp.Maximize(pi @ cp.log(R.T @ b)), [cp.sum(b) == 1, b >= 0])
    return prob, pi


def test_log_hypograph_variables_get_a_ball_from_their_tight_value():
    """Trial 16: Kelly gambling with private ``pi`` at epsilon 10 and 1 said "Thm C.12's
    sub-optimality bound 2 R ||z|| has no R" (relative gap bound inf, true gap 4e-10 / 4.5e-3):
    the hypograph variables ``t_k <= log(R_k' b)`` have no public lower bound. Some optimal
    point has ``t_k`` tight (``pi >= 0``), where ``t_k >= log(min over the simplex of R_k' b)
    = log(min_i R_ik)``: the ball's radius is public."""
    prob, pi = _kelly()
    ref = cp.Problem(prob.objective, prob.constraints)
    ref.solve(solver=cp.CLARABEL)
    bounds = {}
    for eps in (10.0, 1.0):
        sol = prob.solve_private(epsilon=eps, delta=1e-6, rng=0,
                                 private=cvxdp.ObjectivePrivacy(pi, 0.002))
        gap = (ref.value - float(prob.objective.value)) / max(1.0, abs(ref.value))
        assert np.isfinite(sol.certificate.relative_gap_bound), (eps, sol.status_reason)
        assert gap <= sol.certificate.relative_gap_bound + 1e-7
        assert "has no R" not in (sol.status_reason or "")
        bounds[eps] = sol.certificate.relative_gap_bound
    # the ball is the hypograph box: radius sqrt(20) * max |log R_ik| (about 3.1)
    assert bounds[10.0] <= 0.5 and bounds[10.0] < bounds[1.0]
