"""DP minimum enclosing ball: privacy calibration, accounting, utility vs the exact SOCP, errors."""

import math
import warnings

import numpy as np
import pytest

from cvxdp.errors import BudgetError, PrivacySpecError, UnsupportedProblemError
from cvxdp.geometry.meb.meb import min_enclosing_ball
from cvxdp.geometry.meb.meb_private import (
    SCHEDULES,
    budget_weights,
    dp_mmeb,
    mmeb_constants,
    radius_grid,
)
from cvxdp.privacy.budgets import zcdp_from_approx

GAMMA = 0.2


@pytest.fixture(scope="module")
def gauss():
    """Seeded spherical Gaussian in [-5, 5]^5 with its exact MEB (solved once)."""
    rng = np.random.default_rng(0)
    pts = np.clip(rng.normal(rng.uniform(-2, 2, 5), 1.0, (20000, 5)), -5, 5)
    prob = min_enclosing_ball(pts)
    prob.solve()
    return prob, prob.ball


class RecordingRNG:
    """Pass-through Generator that records every Gaussian scale drawn (for calibration checks)."""

    def __init__(self, seed):
        self.g = np.random.default_rng(seed)
        self.draws = []

    def normal(self, loc=0.0, scale=1.0, size=None):
        self.draws.append((float(scale), size))
        return self.g.normal(loc, scale, size)


# ----------------------------------------------------------------------------- privacy


@pytest.mark.parametrize("local", [False, True])
@pytest.mark.parametrize("early", [None, 0.75])
def test_dp_mmeb_noise_spends_exactly_rho(local, early):
    """Sum over all queries of sensitivity^2 / (2 sigma^2) equals rho (zCDP of Gaussians)."""
    rng = np.random.default_rng(1)
    n, d = 400, 3
    pts = rng.normal(size=(n, d))
    theta0, r0, rho = np.zeros(d), 4.0, 0.7
    sched = SCHEDULES["practical"].__class__(**{**SCHEDULES["practical"].__dict__,
                                                "early_share": early, "kappa": -1e30})
    rec = RecordingRNG(2)
    # r far below r_opt and a threshold that never halts: all T iterations + final count run.
    run = dp_mmeb(pts, gamma=0.5, r=0.01, theta0=theta0, r0=r0, rho=rho, beta=1e-3,
                  schedule=sched, rng=rec, local=local, trace=True)
    assert run.halted in ("bottom", "final_test") and run.iterations == mmeb_constants(
        sched, 0.5, 1e-3)["T"]
    T = mmeb_constants(sched, 0.5, 1e-3)["T"]
    counts = [s for s, size in rec.draws if size is None]
    sums = [s for s, size in rec.draws if size is not None]
    assert len(counts) == T + 1 and len(sums) == T <= len(run.trace)
    per_user = n if local else 1  # local: the draw is the sum of n reports of sigma each
    rho_counts = sum(per_user / (2 * s**2) for s in counts)
    g = [2 * (sched.keep * r0 + np.linalg.norm(th - theta0)) for th in run.trace[:T]]
    rho_sums = sum(per_user * gt**2 / (2 * s**2) for gt, s in zip(g, sums, strict=True))
    assert rho_counts == pytest.approx(rho / 2, rel=1e-9)
    assert rho_sums == pytest.approx(rho / 2, rel=1e-9)


@pytest.mark.parametrize("local", [False, True])
def test_goodcenter_noise_spends_exactly_rho(local):
    from cvxdp.geometry.meb.goodcenter import good_center, ldp_good_center

    pts = np.full((300, 2), 0.25)  # r_opt = 0: never halts early, all T rounds run
    rec = RecordingRNG(0)
    f = ldp_good_center if local else good_center
    res = f(pts, center=np.zeros(2), r_max=8.0, r_min=0.5, rho=0.4, beta=1e-3, rng=rec)
    T = res.rounds
    assert T == math.ceil(math.log2(8.0 / 0.5)) + 1 and res.iterations == T
    per_user = 300 if local else 1
    sums = [s for s, size in rec.draws if size is not None]
    counts = [s for s, size in rec.draws if size is None]
    r_cur = [8.0 / 2**t for t in range(T)]
    total = sum(per_user * (2 * r) ** 2 / (2 * s**2) for r, s in zip(r_cur, sums, strict=True))
    total += sum(per_user / (2 * s**2) for s in counts)
    assert total == pytest.approx(0.4, rel=1e-9)
    assert sum(r.count * r.budget.rho for r in res.records) == pytest.approx(0.4)


def test_adaptive_weights_put_three_quarters_early():
    w = budget_weights(101, 0.75)
    k = math.ceil(101 / 4)
    assert w.sum() == pytest.approx(1.0) and w[:k].sum() == pytest.approx(0.75)
    assert np.all(w[:k] > w[k:].max())
    assert np.allclose(budget_weights(10, None), 0.1)
    # Only the iterations that can run get materialised; their shares are unchanged.
    for early in (None, 0.75):
        full = budget_weights(101, early)
        np.testing.assert_array_equal(budget_weights(101, early, 30), full[:30])
        assert len(budget_weights(4_000_000, early, 2500)) == 2500


def _worst_calls(lo, hi):
    if lo >= hi:
        return 0
    mid = (lo + hi) // 2
    return 1 + max(_worst_calls(lo, mid), _worst_calls(mid + 1, hi))


@pytest.mark.parametrize("gamma", [0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 0.9])
def test_binary_search_never_exceeds_B_calls(gamma):
    """Alg. 3's budget split rho/B is sound: every success/failure path makes <= B calls."""
    i_max, B = radius_grid(gamma, 6.0)
    assert (1 + gamma) ** i_max >= 6.0 > (1 + gamma) ** (i_max - 1)
    assert _worst_calls(0, i_max) <= B


def test_report_rho_and_ledger_sum_to_budget(gauss):
    prob, _ = gauss
    sol = prob.solve_private(rho=0.8, accuracy=GAMMA, bounds=(-5, 5), rng=0)
    assert sol.privacy.rho == pytest.approx(0.8, rel=1e-9)
    assert sum(r.count * r.budget.rho for r in sol.privacy.records) == pytest.approx(0.8)
    assert sol.privacy.guarantee == "dp" and "replace one point" in sol.privacy.neighbouring
    assert sol.status == "optimal_inaccurate"


def test_epsilon_delta_converted_by_tight_zcdp(gauss):
    prob, _ = gauss
    sol = prob.solve_private(epsilon=2.0, delta=1e-6, accuracy=GAMMA, bounds=(-5, 5), rng=0)
    assert sol.privacy.rho == pytest.approx(zcdp_from_approx(2.0, 1e-6), rel=1e-9)
    assert sol.privacy.epsilon == pytest.approx(2.0, rel=1e-6) and sol.privacy.delta == 1e-6
    # the textbook conversion rho <= eps^2/(5 ln(1/delta))-ish is looser: tight rho is larger
    assert sol.privacy.rho > 2.0**2 / (4 * math.log(1e6))


def test_same_seed_same_ball_different_seed_different(gauss):
    prob, _ = gauss
    a = prob.solve_private(rho=1.0, bounds=(-5, 5), rng=11).ball
    b = prob.solve_private(rho=1.0, bounds=(-5, 5), rng=11).ball
    c = prob.solve_private(rho=1.0, bounds=(-5, 5), rng=12).ball
    assert np.array_equal(a.center, b.center) and a.radius == b.radius
    assert not np.array_equal(a.center, c.center)


# ----------------------------------------------------------------------------- utility


def test_central_utility_vs_exact(gauss):
    prob, exact = gauss
    sol = prob.solve_private(rho=10.0, accuracy=GAMMA, bounds=(-5, 5), rng=3, reference=True)
    v = sol.validation
    assert v.reference_value == pytest.approx(exact.radius, rel=1e-6)
    assert v.radius_ratio <= (1 + GAMMA) ** 2          # Cor. 4.4: (1+g)^2 <= 1 + 3g
    assert v.uncovered == sol.ball.uncovered(prob.points) == v.violated
    assert v.uncovered <= v.uncovered_bound            # Lemma 4.3 + Thm A.2, w.p. 1 - beta
    assert v.uncovered <= 0.02 * len(prob.points)      # measured: ~150 of 20000
    assert v.center_error <= 0.3
    assert v.radius_ratio >= 0.7                       # not a degenerate tiny ball


def test_local_utility_vs_exact(gauss):
    prob, exact = gauss
    sol = prob.solve_private(rho=1e5, accuracy=GAMMA, bounds=(-5, 5), rng=4, model="local")
    ratio = sol.ball.radius / exact.radius
    unc = sol.ball.uncovered(prob.points)
    assert ratio <= (1 + GAMMA) ** 2                   # Cor. 5.3
    assert unc <= sol.info["uncovered_bound"]          # Lemma 5.2 + Thm A.4
    assert unc <= 0.02 * len(prob.points)
    assert "local model" in sol.privacy.neighbouring


def test_uncovered_bound_holds_over_seeds(gauss):
    """The high-probability bound (beta = 1e-3 per run) holds on every one of 5 seeded runs."""
    prob, exact = gauss
    for seed in range(5):
        sol = prob.solve_private(rho=1.0, accuracy=GAMMA, bounds=(-5, 5), rng=100 + seed)
        assert sol.ball.uncovered(prob.points) <= sol.info["uncovered_bound"]
        assert sol.ball.radius <= (1 + GAMMA) ** 2 * exact.radius


def test_more_budget_fewer_uncovered(gauss):
    prob, _ = gauss
    unc = [prob.solve_private(rho=r, bounds=(-5, 5), rng=5).ball.uncovered(prob.points)
           for r in (0.5, 50.0)]
    assert unc[1] < unc[0]


def test_paper_schedule_is_faithful_and_flagged_vacuous(gauss):
    prob, _ = gauss
    with pytest.warns(UserWarning, match="vacuous"):
        sol = prob.solve_private(rho=1.0, accuracy=0.5, bounds=(-5, 5), rng=0,
                                 schedule="paper")
    det = sol.privacy.details
    beta_call = 1e-3 / 2 / radius_grid(0.5, 6.0)[1]
    assert det["T"] == math.ceil(4096 / 0.25 * math.log(484 / 0.25))
    assert det["R"] == math.ceil(math.log(1 / beta_call) / math.log(8 / 7))
    assert det["step"] == pytest.approx(0.25 / 2048)


# ----------------------------------------------------------------------------- errors


def test_bounds_required_and_never_inferred(gauss):
    prob, _ = gauss
    with pytest.raises(PrivacySpecError, match=r"bounds=\(lo, hi\) is required"):
        prob.solve_private(rho=1.0)


@pytest.mark.parametrize("kw, err, match", [
    ({"epsilon": 1.0}, BudgetError, "pure"),
    ({"rho": -1.0}, BudgetError, "rho"),
    ({"rho": 1.0, "epsilon": 1.0}, BudgetError, "not both"),
    ({"rho": 1.0, "model": "shuffle"}, PrivacySpecError, "model"),
    ({"rho": 1.0, "schedule": "fast"}, PrivacySpecError, "schedule"),
    ({"rho": 1.0, "accuracy": 1.5}, PrivacySpecError, "gamma"),
    ({"rho": 1.0, "r_min": 100.0}, PrivacySpecError, "r_min"),
    ({"rho": 1.0, "bounds": (5, -5)}, PrivacySpecError, "lo < hi"),
    ({"rho": 1.0, "count_clipped": 1.5}, PrivacySpecError, "count_clipped"),
    ({"rho": 1.0, "bounds": 5}, PrivacySpecError, "pair"),
    # not numbers / not flags: adaptive='x' ran, init_share='0.5' was a raw TypeError
    ({"rho": 1.0, "adaptive": "x"}, PrivacySpecError, r"adaptive='x'"),
    ({"rho": 1.0, "adaptive": 2}, PrivacySpecError, r"adaptive=2"),
    ({"rho": 1.0, "init_share": "0.5"}, PrivacySpecError, r"init_share='0\.5' is not a number"),
    ({"rho": 1.0, "init_share": 1.0}, PrivacySpecError, r"init_share=1\.0 is out of range"),
    ({"rho": 1.0, "r_min": "0.1"}, PrivacySpecError, r"r_min='0\.1' is not a number"),
])
def test_bad_private_inputs_rejected(gauss, kw, err, match):
    prob, _ = gauss
    kw = {"bounds": (-5, 5), **kw}
    with pytest.raises(err, match=match):
        prob.solve_private(**kw)


def test_api_dispatch_and_nan_rejected():
    import cvxdp.api as api

    rng = np.random.default_rng(0)
    prob = min_enclosing_ball(rng.uniform(-1, 1, (3000, 2)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = api.solve_private(prob, rho=5.0, bounds=(-1, 1), rng=0)
    assert sol.ball is not None and sol.value == sol.ball.radius
    assert np.allclose(prob.center.value, sol.ball.center)
    with pytest.raises(UnsupportedProblemError, match="NaN"):  # the exact path refuses
        min_enclosing_ball(np.array([[np.nan, 0.0]])).solve()


def test_local_at_n_rho_matches_central_at_rho(gauss):
    """Alg. 5's aggregate noise is sqrt(n) x one user's: local rho*n reproduces central rho."""
    prob, _ = gauss
    n = len(prob.points)
    a = prob.solve_private(rho=1.0, bounds=(-5, 5), rng=3)
    b = prob.solve_private(rho=1.0 * n, bounds=(-5, 5), rng=3, model="local")
    assert a.ball.radius == pytest.approx(b.ball.radius, rel=1e-12)
    assert np.allclose(a.ball.center, b.ball.center, atol=1e-9)
    assert a.info["uncovered_bound"] == pytest.approx(b.info["uncovered_bound"], rel=1e-12)
