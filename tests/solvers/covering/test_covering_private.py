"""Private covering SDP / LP by dense MWU (paper 002, Sec. 5.1, App. B): utility against the exact
reference, privacy accounting, the paper's schedule, neighbouring-set sensitivity, bad input."""

import math

import cvxpy as cp
import numpy as np
import pytest

import cvxdp
from cvxdp.errors import (
    BudgetError,
    PrivacyGuaranteeError,
    PrivacySpecError,
    UnsupportedProblemError,
)
from cvxdp.privacy.accountant import FLOAT_DELTA_SHARE
from cvxdp.privacy.budgets import ApproxDP, zcdp_from_approx, zcdp_to_epsilon
from cvxdp.solvers.covering import covering_private
from cvxdp.solvers.covering.covering import random_covering_lp, random_covering_sdp
from cvxdp.solvers.covering.covering_private import (
    algebra_lambda_max,
    plan_schedule,
    run_dense_covering,
)
from cvxdp.solvers.covering.dense_mwu import bregman_project_log


@pytest.fixture(scope="module")
def sdp():
    return cvxdp.covering_sdp(random_covering_sdp(400, 4, rng=0))


@pytest.fixture(scope="module")
def lp():
    return cvxdp.covering_lp(random_covering_lp(400, 20, rng=0))


def test_exact_reference_is_a_covering_optimum(sdp):
    X, opt, _, _ = sdp.exact()
    assert np.linalg.eigvalsh(X).min() > -1e-6
    assert sdp.coverage(X).min() >= 1 - 1e-6
    assert np.trace(X) == pytest.approx(opt, rel=1e-6)
    # the problem is a cvxpy problem: SCS agrees with Clarabel
    assert cp.Problem(sdp.objective, sdp.constraints).solve(solver=cp.SCS, eps=1e-7) == \
        pytest.approx(opt, rel=1e-3)
    trivial = 1 / np.min(np.trace(sdp.data, axis1=1, axis2=2) / 4)  # X = c I
    assert trivial > 1.5 * opt  # the instance is not solved by the identity


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_private_sdp_close_to_exact(sdp, seed):
    sol = sdp.solve_private(epsilon=8.0, delta=1e-6, s=30, rng=seed, reference=True)
    v = sol.validation
    # at this budget the certificate's statistics are not released: no success status
    assert sol.status == cp.USER_LIMIT and "not released" in sol.info["status_reason"]
    assert 0.85 <= v.cost_ratio <= 1.4
    assert v.violated <= 2 * sol.s  # about s violated by design (quantile noise: factor 2)
    assert v.frac_covered >= 0.85
    assert np.linalg.eigvalsh(sol.point).min() > -1e-9
    np.testing.assert_allclose(sdp.X.value, sol.point, atol=1e-12)
    assert v.m == 400 and v.s == 30


def test_private_lp_close_to_exact(lp):
    ratios, viol = [], []
    for seed in range(3):
        sol = lp.solve_private(epsilon=8.0, delta=1e-6, s=30, rng=seed, reference=True)
        ratios.append(sol.validation.cost_ratio)
        viol.append(sol.validation.violated)
        assert np.all(sol.point >= 0)
    assert 0.7 <= np.mean(ratios) <= 1.2
    assert max(viol) <= 60


def test_known_opt_skips_the_search_and_meets_most_constraints(sdp):
    _, opt, _, _ = sdp.exact()
    sol = sdp.solve_private(epsilon=8.0, delta=1e-6, s=30, opt=opt, rng=0, reference=True)
    assert sol.value == pytest.approx(opt)
    # at epsilon 8 the certificate's statistics could not meet the accuracy: none released
    assert sol.privacy.mechanisms == {"exponential": sol.iterations}
    assert sol.validation.frac_covered_at_opt >= 0.7


def test_privacy_report_matches_independent_zcdp_accounting(sdp):
    sol = sdp.solve_private(epsilon=1.0, delta=1e-6, s=50, rng=0)
    rep = sol.privacy
    assert rep.guarantee == "dp" and rep.delta == 1e-6
    assert rep.epsilon <= 1.0 + 1e-9
    T, e_r, e_q = sol.iterations, rep.details["eps_round"], rep.details["eps_scale"]
    e_c, e_d = rep.details["eps_count"], rep.details["eps_dual"]
    # exponential mechanism: eps^2/8-zCDP per call; the certificate's two Laplace releases
    # (none at this budget): eps^2/2 each
    rho = T * e_r**2 / 8 + e_q**2 / 8 + e_c**2 / 2 + e_d**2 / 2
    # planned at delta (1 - FLOAT_DELTA_SHARE): the rest of delta is kept for the float sampler
    kept = 1e-6 * (1 - FLOAT_DELTA_SHARE)
    assert rho == pytest.approx(zcdp_from_approx(1.0, kept), rel=1e-6)
    assert zcdp_to_epsilon(rho, kept) == pytest.approx(1.0, rel=1e-6)
    assert rep.details.get("float_delta", 0.0) <= 1e-6 * FLOAT_DELTA_SHARE
    assert rep.mechanisms == {"exponential": T + 1}
    # the paper's advanced composition would give a much smaller per-round epsilon
    assert rep.details["paper_eps_round"] == pytest.approx(1.0 / math.sqrt(8 * T * math.log(1e6)))
    assert e_r > 3 * rep.details["paper_eps_round"]
    assert "add/remove one whole covering constraint" in rep.neighbouring


def test_pure_and_zcdp_budgets(lp):
    sol = lp.solve_private(epsilon=2.0, s=30, rng=0)
    d = sol.privacy.details
    # pure epsilon for the ideal sampler; numpy's float Gumbel sampler adds its (tiny) delta
    assert sol.privacy.delta == pytest.approx(d["float_delta"]) and d["float_delta"] < 1e-10
    assert d["T"] * d["eps_round"] + d["eps_scale"] + d["eps_cert"] == pytest.approx(2.0)
    sol = lp.solve_private(rho=0.5, s=30, rng=0)
    assert sol.privacy.rho == pytest.approx(0.5)


def test_same_seed_same_answer(sdp):
    a = sdp.solve_private(epsilon=2.0, delta=1e-6, s=40, rng=7).point
    b = sdp.solve_private(epsilon=2.0, delta=1e-6, s=40, rng=7).point
    np.testing.assert_array_equal(a, b)


def test_default_s_is_data_independent(sdp):
    s1 = sdp.solve_private(epsilon=1.0, delta=1e-6, rng=0).s
    s2 = cvxdp.covering_sdp(random_covering_sdp(50, 4, rng=1)).solve_private(
        epsilon=1.0, delta=1e-6, rng=0).s
    assert s1 == s2 > 1


def test_paper_schedule_constants(sdp):
    sol = sdp.solve_private(epsilon=1.0, delta=1e-6, s=30, m_max=1000, opt=2.0,
                            accuracy=12.0, schedule="paper", rng=0)
    d = sol.privacy.details
    width = max(1.0, 3 * 2.0 - 1)  # rho = 3 OPT - 1 (Lemma B.9)
    T = math.ceil(36 * width**2 * math.log(1000) / 12.0**2)
    assert d["T"] == T and d["eta"] == pytest.approx(math.sqrt(math.log(1000) / T))
    assert d["eps_round"] == pytest.approx(1.0 / math.sqrt(8 * T * math.log(1e6)))
    assert d["sensitivity"] == pytest.approx(3 / 30)  # Lemma B.9: 3 OPT / s
    assert sol.privacy.epsilon <= 1.0
    assert "alpha_rel" in d
    with pytest.raises(PrivacyGuaranteeError, match="rounds"):
        sdp.solve_private(epsilon=1.0, delta=1e-6, s=30, m_max=1000, accuracy=0.05,
                          schedule="paper")
    with pytest.raises(PrivacySpecError, match="m_max"):
        sdp.solve_private(epsilon=1.0, delta=1e-6, s=30, schedule="paper")
    with pytest.raises(BudgetError, match="delta"):
        sdp.solve_private(epsilon=1.0, s=30, m_max=10, schedule="paper")


def test_net_oracle_reference_path():
    prob = cvxdp.covering_sdp(random_covering_sdp(200, 2, rng=3))
    a = prob.solve_private(epsilon=8.0, delta=1e-6, s=20, oracle="net", rng=0, reference=True)
    b = prob.solve_private(epsilon=8.0, delta=1e-6, s=20, rng=0, reference=True)
    assert abs(a.validation.cost_ratio - b.validation.cost_ratio) < 0.35
    with pytest.raises(PrivacySpecError, match="small-r"):
        cvxdp.covering_sdp(random_covering_sdp(20, 5, rng=0)).solve_private(
            epsilon=1.0, delta=1e-6, oracle="net")


def _replay_projections(kind, data, extra, sched, iterates):
    """Projections of the run on D and on D + {extra}, given the same released iterates."""
    full = np.concatenate([data, extra[None]])
    out = []
    for d in (data, full):
        lw = np.zeros(d.shape[0] + sched.n_dummy)
        ys = []
        for P in iterates:
            ys.append(bregman_project_log(lw, sched.s))
            cov = np.einsum("mij,ij->m", d, P) if kind == "sdp" else d @ P
            lw = lw - sched.eta * np.concatenate([np.clip(cov, 0, 1), np.ones(sched.n_dummy)])
        out.append(ys)
    return out


@pytest.mark.parametrize("extra_kind", ["aligned", "zero", "random"])
def test_score_sensitivity_on_neighbouring_constraint_sets(extra_kind):
    """Seeded check of the proof: ||y - y'||_1 <= 2/s and sup_v |v'(M - M')v| <= 1/s (OPT = 1)."""
    rng = np.random.default_rng(5)
    data = random_covering_sdp(60, 3, rng=rng)
    sched = plan_schedule(ApproxDP(4.0, 1e-6), kind="sdp", dim=3, s=7, T=25)
    res = run_dense_covering("sdp", data, sched, rng, keep_history=True)
    M0 = np.tensordot(res.distributions[-1][:60], data, axes=1)
    top = np.linalg.eigh(M0)[1][:, -1]
    extra = {"aligned": np.outer(top, top), "zero": np.zeros((3, 3)),
             "random": random_covering_sdp(1, 3, rng=9)[0]}[extra_kind]
    ys, ys2 = _replay_projections("sdp", data, extra, sched, res.iterates)
    np.testing.assert_allclose(ys[-1], res.distributions[-1], atol=1e-12)  # replay is faithful
    full = np.concatenate([data, extra[None]])
    worst = 0.0
    for y, y2 in zip(ys, ys2, strict=True):
        assert np.abs(y[:60] - y2[:60]).sum() + np.abs(y[60:] - y2[61:]).sum() + y2[60] \
            <= 2 / sched.s + 1e-12
        D = np.tensordot(y[:60], data, axes=1) - np.tensordot(y2[:61], full, axes=1)
        worst = max(worst, np.abs(np.linalg.eigvalsh(D)).max())
    assert worst <= 1 / sched.s + 1e-12
    assert worst > 0.05 / sched.s  # the check is not vacuous


@pytest.mark.parametrize("kind,s", [("sdp", 7.0), ("sdp", 1.0), ("lp", 1.0), ("lp", 4.0)])
def test_certificate_dual_pair_sensitivity_on_neighbouring_constraint_sets(kind, s):
    """Seeded check of the certificate's proof: given the same released iterates, the mean
    played distribution's row mass moves within [0, 1/s] and lambda_max(sum y_i A_i) within
    [-1/s, 1/s] when one row is added (an aligned, a zero and a random row)."""
    rng = np.random.default_rng(11)
    if kind == "sdp":
        data = random_covering_sdp(40, 3, rng=rng)
    else:
        data = random_covering_lp(40, 5, rng=rng)
    sched = plan_schedule(ApproxDP(50.0, 1e-6), kind=kind, dim=data.shape[1], s=s, T=30)
    res = run_dense_covering(kind, data, sched, rng, keep_history=True, average_from=15)
    y_half = np.mean(res.distributions[15:], axis=0)
    np.testing.assert_allclose(res.y_average, y_half, atol=1e-12)  # the suffix mean
    if kind == "sdp":
        top = np.linalg.eigh(np.tensordot(y_half[:40], data, axes=1))[1][:, -1]
        extras = [np.outer(top, top), np.zeros((3, 3)), random_covering_sdp(1, 3, rng=9)[0]]
    else:
        extras = [np.eye(5)[int(np.argmax(y_half[:40] @ data))], np.zeros(5),
                  random_covering_lp(1, 5, rng=9)[0]]
    worst = 0.0
    for extra in extras:
        ys, ys2 = _replay_projections(kind, data, extra, sched, res.iterates)
        y, y2 = np.mean(ys[15:], axis=0), np.mean(ys2[15:], axis=0)
        full = np.concatenate([data, extra[None]])
        d_mu = y2[:41].sum() - y[:40].sum()
        d_lam = algebra_lambda_max(kind, full, y2[:41]) - algebra_lambda_max(kind, data, y[:40])
        assert -1e-12 <= d_mu <= 1 / s + 1e-12
        assert abs(d_lam) <= 1 / s + 1e-12
        worst = max(worst, abs(d_lam), d_mu)
    assert worst > 0.01 / s  # the check is not vacuous


def test_bad_inputs_rejected():
    # only public structure is refused; values outside the domain are projected
    # (test_covering_domain.py)
    with pytest.raises(UnsupportedProblemError, match="shape"):
        cvxdp.covering_sdp(np.ones((3, 2, 4)))
    with pytest.raises(UnsupportedProblemError, match="shape"):
        cvxdp.covering_lp(np.ones(3))
    with pytest.raises(UnsupportedProblemError, match="NaN"):  # the exact reference only
        cvxdp.covering_lp(np.array([[np.nan, 1.0]])).exact()
    prob = cvxdp.covering_lp(random_covering_lp(10, 3, rng=0))
    with pytest.raises(BudgetError):
        prob.solve_private(epsilon=-1.0)
    with pytest.raises(PrivacySpecError, match="opt_bounds"):
        prob.solve_private(epsilon=1.0, opt_bounds=(3.0, 1.0))
    with pytest.raises(PrivacySpecError, match="schedule"):
        prob.solve_private(epsilon=1.0, schedule="fast")
    with pytest.raises(PrivacySpecError, match="accuracy"):
        prob.solve_private(epsilon=1.0, accuracy=0.1)
    with pytest.raises(PrivacySpecError,
                       match=r"s=0\.5 is out of range: s must be a finite number >= 1"):
        prob.solve_private(epsilon=1.0, s=0.5)


def test_dispatcher_and_exact_solve():
    prob = cvxdp.covering_lp(random_covering_lp(50, 5, rng=1))
    sol = cvxdp.solve_private(prob, epsilon=4.0, delta=1e-6, s=5, rng=0)
    assert sol.privacy.epsilon <= 4.0
    assert prob.solve() == pytest.approx(prob.exact()[1], rel=1e-6)


def test_private_spin_factor_covering():
    """Covering SCP over the spin factor (Thm B.13), von Mises-Fisher oracle."""
    from cvxdp.solvers.covering.covering import covering_socp, random_covering_socp

    prob = covering_socp(random_covering_socp(500, 6, rng=0))
    ratios = []
    for seed in range(3):
        sol = prob.solve_private(epsilon=4.0, delta=1e-6, s=50, rng=seed, reference=True)
        x = sol.point
        assert x[0] >= np.linalg.norm(x[1:]) - 1e-12  # in the cone
        assert sol.validation.violated <= 2 * 50
        ratios.append(sol.validation.cost_ratio)
    assert 0.7 <= np.mean(ratios) <= 1.3
    with pytest.raises(UnsupportedProblemError, match="shape"):
        covering_socp(np.ones((4, 1)))


def test_shrink_is_public_post_processing(sdp):
    from cvxdp.solvers.covering.covering_private import kappa_target

    sol = sdp.solve_private(epsilon=1.0, delta=1e-6, s=20, rng=0)
    d = sol.privacy.details
    assert d["shrink"] == pytest.approx(max(0.0, 1 - 2 * d["kappa"] / kappa_target("sdp", 4)))
    assert d["shrink"] > 0  # weak oracle at eps = 1, s = 20
    full = sdp.solve_private(epsilon=1.0, delta=1e-6, s=20, rng=0, shrink=1.0)
    np.testing.assert_allclose(full.point, full.value * np.eye(4) / 4, atol=1e-12)
    assert sdp.solve_private(epsilon=8.0, delta=1e-6, s=100, rng=0).privacy.details["shrink"] == 0
    with pytest.raises(PrivacySpecError, match="shrink"):
        sdp.solve_private(epsilon=1.0, delta=1e-6, s=20, shrink=2.0)


@pytest.mark.parametrize("opt", [None, 3.0])
def test_lp_loop_gives_the_generic_loops_numbers(opt):
    """The LP rounds' own loop (covering_private._lp_loop: tabulated losses, Gumbel draws made
    LP_CHUNK rounds at once) releases exactly what the generic Alg. 3 loop releases for the same
    seed, over more than one chunk, with and without an objective level and the dual average."""
    data = np.random.default_rng(5).uniform(0, 1, (40, 7))
    sched = plan_schedule(ApproxDP(5.0, 1e-6), kind="lp", dim=7, s=3, T=600, opt=opt)
    assert sched.T > covering_private.LP_CHUNK
    fast = run_dense_covering("lp", data, sched, np.random.default_rng(1), average_from=200)
    slow = run_dense_covering("lp", data, sched, np.random.default_rng(1), average_from=200,
                              keep_history=True)  # the generic loop (it keeps the history)
    np.testing.assert_array_equal(fast.average, slow.average)
    np.testing.assert_array_equal(fast.y_average, slow.y_average)
    assert np.count_nonzero(fast.average) > 1  # the run did move between columns
