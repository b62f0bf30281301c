"""Models with public exponential cones (``log``, ``entr``, ``kl_div``, ``log_det``, ...) beside
private linear, cone or objective data: the private steps see the symmetric part, the exact
solves add the cones, the certificate covers the user's model."""

from __future__ import annotations

import math

import cvxpy as cp
import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg  # noqa: F401 - sp.linalg.norm

import cvxdp
from cvxdp.errors import UnsupportedProblemError
from cvxdp.transform import to_scp
from cvxdp.transform.exact import solve_exact
from cvxdp.transform.parameters import parameter_columns
from cvxdp.transform.parametric import entry_map, program_data
from cvxdp.transform.reference import cone_violations, exp_cone_violations


def _entropy_model(seed: int = 1):
    """Maximum entropy under private usage caps (CVXPY's entropy-maximisation example with a
    private constraint matrix)."""
    rng = np.random.default_rng(seed)
    A = cp.Parameter((5, 10), name="A", value=rng.uniform(0, 1, (5, 10)))
    x = cp.Variable(10, name="x")
    prob = cp.Problem(cp.Maximize(cp.sum(cp.entr(x))), [A @ x <= 0.6, cp.sum(x) == 1])
    return prob, A, x


def _true_relative_gap(prob: cp.Problem, optimum: float) -> float:
    """(f(x) - OPT) / max(1, |OPT|) in the minimised sense, with the TRUE parameter values at
    the released variables."""
    sign = -1.0 if isinstance(prob.objective, cp.Maximize) else 1.0
    return sign * (float(prob.objective.expr.value) - optimum) / max(1.0, abs(optimum))


def _optimum(prob: cp.Problem) -> float:
    ref = cp.Problem(prob.objective, prob.constraints)
    ref.solve(solver=cp.CLARABEL)
    return float(ref.value)


@pytest.mark.parametrize("solver", ["CLARABEL", "SCS"])
def test_exact_solve_with_the_cones_kept_apart_matches_cvxpy(solver):
    prob, _, _ = _entropy_model()
    scp = to_scp(prob)
    assert scp.exp_tail.cones == 10 and scp.exp_tail.A.shape == (30, scp.n)
    res = solve_exact(scp, solver=solver)
    opt = _optimum(prob)
    assert scp.sign * res.value == pytest.approx(opt, rel=1e-5)
    assert cone_violations(scp, res.x).max() <= 1e-5


def test_exp_cone_violation_of_known_triples():
    s = np.array([0, 1, 1,            # v exp(u / v) = 1 = w: on the cone
                  0, 1, 0.5,          # 1 - 0.5
                  1, 1, 2,            # e - 2
                  -1, 0, 2,           # the face {u <= 0, v = 0, w >= 0}
                  1, 0, 1,            # u > 0 at v = 0: off by u
                  0, -1, 1,           # v < 0: off by -v
                  800, 1, 0], float)  # overflow: inf
    out = exp_cone_violations(s)
    assert out[:6] == pytest.approx([0.0, 0.5, math.e - 2, 0.0, 1.0, 1.0])
    assert out[6] == math.inf


def test_private_rows_beside_entropy_are_certified_at_large_epsilon():
    prob, A, x = _entropy_model()
    opt = _optimum(prob)
    sol = prob.solve_private(epsilon=1e6, delta=1e-6, rng=0,
                             private=cvxdp.ConstraintPrivacy(A, sensitivity=1e-3))
    assert sol.status == "optimal_inaccurate"
    assert sol.info["mechanism"] == "perturbation"
    assert sol.certificate.relative_gap_bound <= 1e-2
    gap = _true_relative_gap(prob, opt)
    assert -1e-7 <= gap <= sol.certificate.relative_gap_bound
    # feasible for the TRUE caps (perturbation's point) and inside entr's domain
    assert np.max(A.value @ x.value - 0.6) <= 1e-7 and np.min(x.value) >= -1e-9


def test_certificate_holds_on_every_seed_at_small_epsilon():
    prob, A, x = _entropy_model()
    opt = _optimum(prob)
    for seed in range(8):
        sol = prob.solve_private(epsilon=1.0, delta=1e-6, rng=seed,
                                 private=cvxdp.ConstraintPrivacy(A, sensitivity=1e-3))
        cert = sol.certificate
        assert _true_relative_gap(prob, opt) <= cert.relative_gap_bound + 1e-7
        assert np.max(A.value @ x.value - 0.6) <= cert.violation_bound + 1e-7
        assert sol.status in ("optimal_inaccurate", "user_limit")
        if sol.status == "optimal_inaccurate":
            assert cert.relative_gap_bound <= 1e-2


def test_private_equality_right_hand_side_beside_kl_div():
    # maximum entropy with private moments (A p == b, b private): a band for the equality
    rng = np.random.default_rng(65)
    Am = rng.uniform(-1, 1, (2, 8))
    b = cp.Parameter(2, name="b", value=Am @ rng.dirichlet(np.ones(8)))
    p = cp.Variable(8)
    prob = cp.Problem(cp.Minimize(cp.sum(cp.kl_div(p, np.full(8, 1 / 8)))),
                      [Am @ p == b, cp.sum(p) == 1])
    opt = _optimum(prob)
    sol = prob.solve_private(epsilon=1e6, delta=1e-6, rng=0,
                             private=cvxdp.ScalarPrivacy(b, sensitivity=0.01))
    assert sol.status == "optimal_inaccurate"
    assert abs(_true_relative_gap(prob, opt)) <= 1e-2
    assert np.max(np.abs(Am @ p.value - b.value)) <= sol.certificate.violation_bound <= 1e-2
    sol = prob.solve_private(epsilon=1.0, delta=1e-6, rng=0,
                             private=cvxdp.ScalarPrivacy(b, sensitivity=0.01))
    assert np.max(np.abs(Am @ p.value - b.value)) <= sol.certificate.violation_bound
    assert np.min(p.value) >= -1e-9  # kl_div's domain: the public cones hold


def test_objective_privacy_beside_log_det():
    # sparse inverse covariance (CVXPY's example) with the sample covariance private
    rng = np.random.default_rng(5)
    Z = rng.normal(size=(400, 4))
    S = cp.Parameter((4, 4), symmetric=True, name="S", value=Z.T @ Z / 400)
    Theta = cp.Variable((4, 4), PSD=True)
    prob = cp.Problem(cp.Maximize(cp.log_det(Theta) - cp.trace(S @ Theta)
                                  - 0.1 * cp.sum(cp.abs(Theta))))
    opt = _optimum(prob)
    sol = prob.solve_private(epsilon=1e6, delta=1e-6, rng=0,
                             private=cvxdp.ObjectivePrivacy(S, sensitivity=1e-3))
    assert sol.info["mechanism"] == "perturbation"
    assert abs(_true_relative_gap(prob, opt)) <= 1e-2
    assert _true_relative_gap(prob, opt) <= sol.certificate.relative_gap_bound + 1e-7


def test_mwu_refuses_and_auto_says_why_it_runs_perturbation():
    prob, A, _ = _entropy_model()
    spec = cvxdp.ConstraintPrivacy(A, sensitivity=1e-3)
    with pytest.raises(UnsupportedProblemError, match=r"entr.*exponential cone.*"
                                                      r"mechanism='perturbation'"):
        prob.solve_private(epsilon=1.0, delta=1e-6, rng=0, mechanism="mwu", private=spec)
    sol = prob.solve_private(epsilon=1.0, delta=1e-6, rng=0, private=spec)
    assert sol.info["mechanism"] == "perturbation"
    assert "exponential cones" in sol.info["auto"]["rule"]


def test_infeasible_exponential_part_is_decided_before_any_budget():
    # log(x) >= 2 needs x >= e^2 > 1: the public part is infeasible, whatever A holds
    x = cp.Variable(3)
    A = cp.Parameter((2, 3), name="A", value=np.ones((2, 3)))
    prob = cp.Problem(cp.Minimize(cp.sum(x)), [cp.log(x) >= 2, x <= 1, A @ x <= 5])
    sol = prob.solve_private(epsilon=1.0, delta=1e-6, rng=0,
                             private=cvxdp.ConstraintPrivacy(A, sensitivity=0.01))
    assert sol.status == "infeasible"
    assert "no privacy budget was spent" in sol.status_reason


def _water_filling(seed: int = 0):
    """CVXPY's water-filling example with private noise levels (``log(alpha + x)``: the private
    data sit in the cones' last coordinate and are lifted to orthant rows)."""
    rng = np.random.default_rng(seed)
    alpha = cp.Parameter(8, name="alpha", nonneg=True, value=rng.uniform(0.1, 1.0, 8))
    x = cp.Variable(8, name="x")
    prob = cp.Problem(cp.Maximize(cp.sum(cp.log(alpha + x))), [x >= 0, cp.sum(x) == 1])
    return prob, alpha, x


def test_water_filling_with_private_noise_levels_is_certified():
    prob, alpha, x = _water_filling()
    assert to_scp(prob, private=cvxdp.ScalarPrivacy(alpha, sensitivity=0.01)).meta[
        "exp_lift"].k == 8
    opt = _optimum(prob)
    sol = prob.solve_private(epsilon=1e6, delta=1e-6, rng=0,
                             private=cvxdp.ScalarPrivacy(alpha, sensitivity=0.01))
    assert sol.status == "optimal_inaccurate" and sol.certificate.relative_gap_bound <= 1e-2
    assert -1e-7 <= _true_relative_gap(prob, opt) <= sol.certificate.relative_gap_bound + 1e-7
    for seed in range(6):
        sol = prob.solve_private(epsilon=1.0, delta=1e-6, rng=seed,
                                 private=cvxdp.ScalarPrivacy(alpha, sensitivity=0.01))
        assert _true_relative_gap(prob, opt) <= sol.certificate.relative_gap_bound + 1e-7
        assert np.min(x.value) >= -1e-7 and abs(np.sum(x.value) - 1) <= 1e-7


def test_private_design_inside_logistic_losses_is_certified():
    # logistic loss with a private design matrix (a cone's first coordinate, with private
    # coefficients on the variables)
    rng = np.random.default_rng(2)
    Xv = rng.normal(size=(60, 3)) / 2
    yv = np.sign(Xv @ np.ones(3) + 0.3 * rng.normal(size=60))
    X = cp.Parameter((60, 3), name="X", value=Xv)
    w = cp.Variable(3)
    prob = cp.Problem(cp.Minimize(cp.sum(cp.logistic(-cp.multiply(yv, X @ w))) / 60),
                      [cp.norm(w, "inf") <= 3])
    opt = _optimum(prob)
    spec = cvxdp.ConstraintPrivacy(X, sensitivity=1e-3)
    sol = prob.solve_private(epsilon=1e6, delta=1e-6, rng=0, private=spec)
    assert sol.status == "optimal_inaccurate"
    assert -1e-7 <= _true_relative_gap(prob, opt) <= sol.certificate.relative_gap_bound + 1e-7
    sol = prob.solve_private(epsilon=1.0, delta=1e-6, rng=0, private=spec)
    assert _true_relative_gap(prob, opt) <= sol.certificate.relative_gap_bound + 1e-7


def test_entry_map_of_a_lifted_program_reproduces_the_noisy_data():
    # the coefficients EntryMap gives each private entry (rows renumbered, signs flipped, the
    # constant column moved past the new variables) are the change of the lifted data
    rng = np.random.default_rng(3)
    X = cp.Parameter((6, 2), name="X", value=rng.normal(size=(6, 2)))
    s = cp.Parameter(6, name="s", value=rng.normal(size=6))
    w = cp.Variable(2)
    prob = cp.Problem(cp.Minimize(cp.sum(cp.logistic(X @ w)) + cp.log_sum_exp(s - X @ w)),
                      [cp.abs(w) <= 1])
    scp = to_scp(prob, private=[cvxdp.ConstraintPrivacy(X, sensitivity=0.1),
                                cvxdp.ScalarPrivacy(s, sensitivity=0.1)])
    assert scp.meta["exp_lift"].k > 0
    pp = scp.meta["param_prob"]
    cols = np.concatenate([parameter_columns(pp, X, "ConstraintPrivacy"),
                           parameter_columns(pp, s, "ScalarPrivacy")])
    emap = entry_map(scp, cols)
    delta = rng.normal(size=cols.size)
    noisy = {X.id: X.value + delta[:12].reshape((6, 2), order="F"), s.id: s.value + delta[12:]}
    _, _, A1, b1 = program_data(scp, noisy)
    _, _, A0, b0 = program_data(scp)
    assert sp.linalg.norm(A0 - scp.A) == 0 and np.all(b0 == scp.b)
    change = sp.csr_matrix((emap.value * delta[emap.entry], (emap.row, emap.col)),
                           shape=(scp.m, scp.n + 1)).toarray()
    expect = np.hstack([-(A1 - A0).toarray(), (b1 - b0)[:, None]])
    assert np.allclose(change, expect, atol=1e-12)
