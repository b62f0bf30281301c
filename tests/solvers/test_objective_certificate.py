"""The second-order bound of objective perturbation (solvers/objective_certificate.py): it holds
where the first-order one of Thm C.12 holds, it is never larger, and it falls like the noise
squared where the released objective is strongly convex."""

import warnings

import cvxpy as cp
import numpy as np
import pytest
import scipy.sparse as sp

import cvxdp
from cvxdp.solvers.objective_certificate import sharp_objective_gap
from cvxdp.transform.exact import solve_exact
from cvxdp.transform.scp import ConeDims, SymmetricConeProgram


def _box_qp(g, R=2.0):
    """min g'x + ||x||^2 over -1 <= x <= 1 and ||x|| <= R, variables (x1, x2, u), u >= ||x||^2
    as the rotated cone ||(2 x, u - 1)|| <= u + 1."""
    A_box = sp.csr_matrix(np.array([[1, 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0]], float))
    b_box = np.ones(4)
    A_rot = sp.csr_matrix(np.array([[0, 0, -1], [-2, 0, 0], [0, -2, 0], [0, 0, -1]], float))
    b_rot = np.array([1.0, 0, 0, -1.0])
    A_ball = sp.csr_matrix(np.array([[0, 0, 0], [-1, 0, 0], [0, -1, 0]], float))
    b_ball = np.array([R, 0, 0])
    return SymmetricConeProgram(
        A=sp.vstack([A_box, A_rot, A_ball], format="csc"),
        b=np.concatenate([b_box, b_rot, b_ball]), c=np.array([g[0], g[1], 1.0]), offset=0.0,
        dims=ConeDims(zero=0, nonneg=4, soc=(4, 3), psd=()), cone=None)


@pytest.mark.parametrize("t", [0.05, 0.3, 1.0])
def test_the_bound_is_above_the_worst_case_it_bounds_on_a_grid(t):
    # phi(x) = t ||x - x~|| - c~'(x - x~), at u = ||x||^2 (its smallest value for each x):
    # its largest value over a fine grid of the set is a lower estimate of max phi, which the
    # bound must not undercut; and the bound is at most Thm C.12's 2 R t
    g = np.array([0.3, -0.5])
    prog = _box_qp(g)
    x = solve_exact(prog).x
    bound = sharp_objective_gap(prog, prog.c, x, np.array([0, 1]), 2.0, t)
    grid = np.linspace(-1, 1, 201)
    X1, X2 = np.meshgrid(grid, grid)
    pts = np.stack([X1.ravel(), X2.ravel()], axis=1)
    delta = pts @ g + np.sum(pts**2, axis=1) - (x[:2] @ g + x[:2] @ x[:2])
    phi = t * np.linalg.norm(pts - x[:2], axis=1) - delta
    assert phi.max() <= bound + 1e-9
    assert bound <= 2 * 2.0 * t
    # strongly convex (mu = 1): the worst case is second order, here t^2 / 4 at most in the
    # interior, and the bound is within a small factor of the grid's
    assert bound <= 4 * max(phi.max(), t**2 / 4) + 1e-6


def _portfolio(seed=0, n=8):
    rng = np.random.default_rng(seed)
    F = rng.standard_normal((n, 3)) * 0.3
    Sigma = F @ F.T + 0.05 * np.eye(n)
    mu = cp.Parameter(n, name="mu", value=rng.uniform(-0.1, 0.3, n))
    w = cp.Variable(n, name="w")
    prob = cp.Problem(cp.Maximize(mu @ w - cp.quad_form(w, Sigma)), [cp.sum(w) == 1, w >= 0])
    return prob, mu


def test_the_certificate_holds_on_seeded_runs_and_beats_the_first_order_bound():
    prob, mu = _portfolio()
    opt = cp.Problem(prob.objective, prob.constraints).solve(solver=cp.CLARABEL)
    spec = cvxdp.ObjectivePrivacy(mu, sensitivity=8e-3)
    ratios = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for seed in range(10):
            sol = prob.solve_private(epsilon=10.0, delta=1e-6, rng=seed, private=spec)
            true_gap = opt - float(prob.objective.value)  # a maximisation
            cert = sol.certificate
            assert true_gap <= cert.gap_bound + 1e-7
            # the first-order bounds missed 1e-2 (the chord's l1 growth bound 0.046, below the
            # level search's 0.04-0.06 on 8 of 10 seeds), so a second-order bound ran
            assert "gap_bound_curvature" in sol.info or "gap_bound_sharp" in sol.info
            assert cert.gap_bound < sol.info["gap_bound_holder_inf"]
            ratios.append(cert.gap_bound / sol.info["alpha_guaranteed"])
    assert max(ratios) < 0.2  # measured 0.07-0.1


def test_the_bound_falls_like_the_noise_squared():
    prob, mu = _portfolio(seed=1)
    spec = cvxdp.ObjectivePrivacy(mu, sensitivity=8e-3)
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for eps in (3.0, 30.0):
            sol = prob.solve_private(epsilon=eps, delta=1e-6, rng=0, private=spec,
                                     accuracy=1e-6)  # compute it at both budgets
            out[eps] = (sol.certificate.gap_bound, sol.info["alpha_guaranteed"])
    first = out[30.0][1] / out[3.0][1]   # the noise's ratio (0.147: the analytic Gaussian)
    sharp = out[30.0][0] / out[3.0][0]
    assert 0.05 < first < 0.3
    assert sharp < 2 * first**2  # second order (measured 0.023 against first**2 = 0.022)
