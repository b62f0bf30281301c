"""The three row-level mechanisms: calibration against independent formulas, neighbour replay,
budgets, statuses, the released value, clipping."""

from __future__ import annotations

import math
import warnings

import cvxpy as cp
import numpy as np
import pytest
from scipy import stats

import cvxdp
from cvxdp.errors import BudgetError, UnsupportedProblemError
from cvxdp.privacy.calibration import calibrate_gaussian
from cvxdp.privacy.gdp import gdp_sigma
from cvxdp.privacy.objective_perturbation import kst_sigma, objpert_sigma

N, D = 200, 3


def logistic_ridge(Xv, yv, lam=0.01, radius=3.0, neighbours="replace"):
    n = Xv.shape[0]
    X = cp.Parameter(Xv.shape, value=Xv)
    y = cp.Parameter(n, value=yv)
    w = cp.Variable(Xv.shape[1], name="w")
    prob = cp.Problem(cp.Minimize(cp.sum(cp.logistic(-cp.multiply(y, X @ w))) / n
                                  + lam * cp.sum_squares(w)), [cp.norm(w, 2) <= radius])
    return prob, cvxdp.RowPrivacy(X, y, row_bound=1.0, label_bound=1.0, neighbours=neighbours)


@pytest.fixture
def rows():
    rng = np.random.default_rng(3)
    X = rng.uniform(-0.5, 0.5, (N, D))
    y = np.where(X @ np.array([1.0, -2.0, 0.5]) > 0, 1.0, -1.0)
    return X, y


# -- calibration -------------------------------------------------------------------------
@pytest.mark.parametrize("eps", [0.1, 1.0, 10.0])
@pytest.mark.parametrize("delta", [1e-5, 1e-9])
def test_objpert_sigma_solves_the_tail_equation_and_beats_kst(eps, delta):
    sigma = objpert_sigma(epsilon=eps / 2, delta=delta, sensitivity=1.0, k=1)
    q = stats.norm.isf(delta / 2)            # |<b, x>| / sigma > q with probability delta
    t = 1.0 / sigma
    assert q * t + t * t / 2 == pytest.approx(eps / 2, rel=1e-10)
    assert sigma <= kst_sigma(epsilon=eps, delta=delta, zeta=1.0)


def test_objpert_privacy_loss_tail_holds_for_two_row_spans():
    # replace-one: the gradient change lies in a 2-D span; the log-ratio bound
    # (2|<b, g>| + |g|^2) / (2 sigma^2) exceeds eps2 with probability <= delta
    eps2, delta, G = 0.5, 0.01, 1.0
    sigma = objpert_sigma(epsilon=eps2, delta=delta, sensitivity=G, k=2)
    b = np.random.default_rng(0).normal(0.0, sigma, size=(400_000, 2))
    g = G * np.array([np.cos(0.3), np.sin(0.3)])
    loss = (2 * np.abs(b @ g) + G * G) / (2 * sigma * sigma)
    assert np.mean(loss > eps2) <= delta
    # and the chi-square event it is derived from has probability delta exactly
    assert np.mean(np.linalg.norm(b, axis=1) > math.sqrt(stats.chi2.isf(delta, 2)) * sigma) \
        == pytest.approx(delta, rel=0.05)


def test_output_perturbation_sigma_is_the_analytic_gaussian_of_2_zeta_over_mu(rows):
    prob, spec = logistic_ridge(*rows)
    sol = prob.solve_private(epsilon=1.0, delta=1e-6, private=spec, rng=0,
                             mechanism="output", value_share=0.0)
    zeta, mu = 1.0 / N, 2 * 0.01          # logistic: |l'| <= 1/N per row, ||x|| <= 1
    sigma = calibrate_gaussian(epsilon=1.0, delta=1e-6, sensitivity=2 * zeta / mu)
    # with delta > 0 the pure-DP Gamma-norm noise (scale D / epsilon) is planned beside it and
    # the smaller (1 - beta)-quantile of the norm runs (here d = 3)
    d, beta = D, sol.info["beta"]
    gauss = sigma * math.sqrt(stats.chi2.isf(beta, d))
    pure = stats.gamma.isf(beta, d, scale=2 * zeta / mu)
    if sol.info["noise_sigma"] is not None:
        assert sol.info["noise_sigma"] == pytest.approx(sigma) and gauss <= pure
    else:
        assert sol.info["noise_gamma_scale"] == pytest.approx(2 * zeta / mu) and pure < gauss
    assert sol.privacy.epsilon == pytest.approx(1.0, rel=1e-6)


def test_noisy_gradient_sigma_composes_its_steps_exactly(rows):
    prob, spec = logistic_ridge(*rows)
    sol = prob.solve_private(epsilon=1.0, delta=1e-6, private=spec, rng=0,
                             mechanism="gradient", steps=20, value_share=0.0)
    assert sol.info["noise_sigma"] == pytest.approx(
        gdp_sigma(epsilon=1.0, delta=1e-6, steps=20, sensitivity=2.0 / N))
    assert sol.privacy.epsilon <= 1.0 * (1 + 1e-6)
    assert sol.privacy.mechanisms == {"noisy_gradient_step": 20}


def test_add_remove_halves_the_sensitivity(rows):
    out = {}
    for nb in ("replace", "add_remove"):
        prob, spec = logistic_ridge(*rows, neighbours=nb)
        out[nb] = prob.solve_private(epsilon=1.0, delta=1e-6, private=spec, rng=0,
                                     mechanism="objective").info
    assert out["add_remove"]["noise_sensitivity"] == out["replace"]["noise_sensitivity"] / 2


# -- neighbour replay ---------------------------------------------------------------------
# released quantities: the noisy count, and the value's error bound, a function of the
# released point's norm (its sensitivity is the loss bound at the point's reach)
NOISY_KEYS = {"clipped_rows_noisy", "value_error_bound"}


@pytest.mark.parametrize("mechanism", ["objective", "output", "gradient"])
def test_neighbours_with_one_seed_differ_only_through_the_data(rows, mechanism):
    X, y = rows
    X2, y2 = X.copy(), y.copy()
    X2[0], y2[0] = [40.0, -3.0, 9.0], 5.0           # outside both bounds: clipped, not refused
    sols, thetas = [], []
    for Xv, yv in ((X, y), (X2, y2)):
        prob, spec = logistic_ridge(Xv, yv)
        sol = prob.solve_private(epsilon=1.0, delta=1e-6, private=spec, rng=7,
                                 mechanism=mechanism, steps=10, count_clipped=True)
        sols.append(sol)
        thetas.append(sol.primal["w"])
    a, b = sols
    assert {k: v for k, v in a.info.items() if k not in NOISY_KEYS} == \
        {k: v for k, v in b.info.items() if k not in NOISY_KEYS}
    assert a.status == b.status and repr(a.privacy) == repr(b.privacy)
    gap = np.linalg.norm(thetas[0] - thetas[1])
    zeta, mu = 1.0 / N, 2 * 0.01
    if mechanism == "objective":   # same b: strong convexity Delta + mu bounds the move
        assert 0 < gap <= 2 * zeta / (a.info["Delta"] + mu) + 1e-6
    elif mechanism == "output":    # same noise, non-expansive projection
        assert 0 < gap <= 2 * zeta / mu + 1e-6
    else:
        assert 0 < gap <= 6.0      # both inside the radius-3 ball


# -- budgets ------------------------------------------------------------------------------
def test_pure_dp_paths_and_the_gaussian_only_gradient(rows):
    prob, spec = logistic_ridge(*rows)
    for mech in ("objective", "output"):
        sol = prob.solve_private(epsilon=1.0, private=spec, rng=0, mechanism=mech)
        assert sol.privacy.delta == 0 and sol.privacy.epsilon == pytest.approx(1.0)
        assert sol.info["noise_gamma_scale"] > 0
    with pytest.raises(BudgetError, match="delta > 0 or rho="):
        prob.solve_private(epsilon=1.0, private=spec, mechanism="gradient")


def test_zcdp_budget_skips_objective_perturbation(rows):
    prob, spec = logistic_ridge(*rows)
    sol = prob.solve_private(rho=0.5, private=spec, rng=0)
    assert sol.info["mechanism"] in ("output", "gradient")
    assert "objective" in sol.info["auto"]["not_applicable"]
    assert sol.privacy.rho == pytest.approx(0.5)
    with pytest.raises(BudgetError, match="not zCDP"):
        prob.solve_private(rho=0.5, private=spec, mechanism="objective")


# -- statuses and the released value --------------------------------------------------------
def test_status_promises_only_a_proven_accuracy(rows):
    prob, spec = logistic_ridge(*rows)
    tight = prob.solve_private(epsilon=1.0, delta=1e-6, private=spec, rng=0, accuracy=1e-6)
    assert tight.status == cp.USER_LIMIT and "certified relative gap" in tight.info[
        "status_reason"]
    loose = prob.solve_private(epsilon=1.0, delta=1e-6, private=spec, rng=0, accuracy=100.0)
    assert loose.status == cp.OPTIMAL_INACCURATE and loose.info["excess_risk_bound"] <= 100.0


def test_no_bound_without_a_bounded_domain_is_user_limit(rows):
    # no constraint and no regulariser: neither W nor W* is finite (an l1 term would bound the
    # minimiser: test_cvxpy_examples_unbounded.py)
    X, y = rows
    Xp, yp = cp.Parameter((N, D), value=X), cp.Parameter(N, value=y)
    w = cp.Variable(D)
    prob = cp.Problem(cp.Minimize(cp.sum(cp.logistic(-cp.multiply(yp, Xp @ w))) / N))
    sol = prob.solve_private(epsilon=1.0, delta=1e-6, rng=0,
                             private=cvxdp.RowPrivacy(Xp, yp, row_bound=1.0, label_bound=1.0))
    assert sol.status == cp.USER_LIMIT and "W = inf" in sol.certificate.how
    assert sol.certificate.gap_bound == math.inf and sol.certificate.violation_bound == 0.0
    status, reason = cvxdp.status.status_of(sol.certificate)
    # the status is status_of's; the reason is its reason followed by the fix for the model
    assert sol.status == status and sol.status_reason.startswith(reason)
    assert sol.status_reason.endswith(f"add a norm-ball or box constraint on {w.name()} (or a "
                                      f"ridge lam * cp.sum_squares({w.name()}) or a penalty "
                                      f"lam * cp.norm1({w.name()})) ({w.name()}: CVXPY's name "
                                      f"of the ({D},) variable without a name; pass name= to "
                                      "cp.Variable)")
    assert "no bound on the sub-optimality" in sol.info["status_reason"]
    assert sol.value is None and "nothing was spent" in sol.info["value_reason"]
    assert sol.privacy.mechanisms == {"objective_perturbation": 1}
    assert prob.status == cp.USER_LIMIT and prob.value is None


@pytest.mark.parametrize("seed", range(5))
def test_ridge_alone_gives_a_proven_bound_that_holds(rows, seed):
    # no constraint, but the ridge bounds the exact minimiser: mu/2 |th*|^2 <= F(0) = log 2
    # (W* = sqrt(2 log 2 / mu)), and the perturbed objective's strong convexity gives
    # F(th^) - F* <= (Delta W* + |b|_beta)^2 / (4 Delta + 2 mu)
    X, y = rows
    Xp, yp = cp.Parameter((N, D), value=X), cp.Parameter(N, value=y)
    w = cp.Variable(D)
    prob = cp.Problem(cp.Minimize(cp.sum(cp.logistic(-cp.multiply(yp, Xp @ w))) / N
                                  + 0.01 * cp.sum_squares(w)))
    sol = prob.solve_private(epsilon=1.0, delta=1e-6, rng=seed, reference=True,
                             private=cvxdp.RowPrivacy(Xp, yp, row_bound=1.0, label_bound=1.0))
    info = sol.info
    mu, W_star = 0.02, math.sqrt(2 * math.log(2) / 0.02)
    b = (info["noise_sigma"] * math.sqrt(stats.chi2.isf(1e-3, D))
         if info["noise_sigma"] is not None
         else stats.gamma.isf(1e-3, D, scale=info["noise_gamma_scale"]))
    base = (info["Delta"] * W_star + b) ** 2 / (4 * info["Delta"] + 2 * mu)
    # plus what the Newton path's certified tolerance can cost: at most 1e-6 of the bound
    assert info["perturbed_solve"] == "projected Newton (certified gap)"
    assert base < info["excess_risk_bound"] <= base * (1 + 1e-6 * (1 + 1e-9))
    assert -1e-6 <= sol.validation.objective_gap <= info["excess_risk_bound"]
    # bound 1.2 > 1e-2; the mechanism ran on the minimiser's public ball ||w|| <= W*, which
    # bounds the loss there, so the value is released too
    assert sol.status == cp.USER_LIMIT and info["domain_bound_W"] == pytest.approx(W_star)
    assert "public ball" in info["domain_ball"] and sol.value is not None


def test_value_is_released_noisily_and_held_by_the_problem(rows):
    prob, spec = logistic_ridge(*rows)
    sol = prob.solve_private(epsilon=1.0, delta=1e-6, private=spec, rng=0, reference=True,
                             mechanism="objective")
    assert prob.value == sol.value and sol.value != pytest.approx(
        sol.validation.metrics["private_objective_on_true_data"], abs=1e-9)
    assert set(sol.privacy.mechanisms) == {"objective_perturbation", "laplace"}
    none = prob.solve_private(epsilon=1.0, delta=1e-6, private=spec, rng=0, value_share=0.0,
                              mechanism="objective")
    assert none.value is None and set(none.privacy.mechanisms) == {"objective_perturbation"}


def test_clipping_maps_rows_into_the_domain_without_refusing(rows):
    X, y = rows
    X2 = X.copy()
    X2[2] = [30.0, 40.0, 0.0]      # (CVXPY refuses NaN / inf in a Parameter value itself)
    clipped = X2.copy()
    clipped[2] = [0.6, 0.8, 0.0]
    outs = []
    for Xv in (X2, clipped):
        prob, spec = logistic_ridge(Xv, y)
        outs.append(prob.solve_private(epsilon=1.0, delta=1e-6, private=spec, rng=5,
                                       value_share=0.0).primal["w"])
    np.testing.assert_allclose(outs[0], outs[1], atol=1e-4)   # same noise, same rows


def test_bad_options_are_rejected(rows):
    prob, spec = logistic_ridge(*rows)
    with pytest.raises(UnsupportedProblemError, match="mechanism must be one of"):
        prob.solve_private(epsilon=1.0, delta=1e-6, private=spec, mechanism="sgd")
    with pytest.raises(BudgetError, match="value_share"):
        prob.solve_private(epsilon=1.0, delta=1e-6, private=spec, value_share=0.9)
    with pytest.raises(TypeError, match="did you mean 'steps'"):
        prob.solve_private(epsilon=1.0, delta=1e-6, private=spec, stepz=3)
    # steps='5', 0 and 2.5 ran (the count of noisy gradient steps, read by int() or not at all)
    for steps in ("5", 0, 2.5, True):
        with pytest.raises(cvxdp.CvxdpError, match=rf"steps={steps!r} is out of range"):
            prob.solve_private(epsilon=1.0, delta=1e-6, private=spec, steps=steps)
    with pytest.raises(BudgetError, match=r"value_share='0\.1' is not a number"):
        prob.solve_private(epsilon=1.0, delta=1e-6, private=spec, value_share="0.1")


def test_auxiliary_variables_are_completed_by_a_public_solve(rows):
    X, y = rows
    Xp, yp = cp.Parameter((N, D), value=X), cp.Parameter(N, value=y)
    w, t = cp.Variable(D, name="w"), cp.Variable(D, name="t")   # lasso in epigraph form
    prob = cp.Problem(cp.Minimize(cp.sum(cp.logistic(-cp.multiply(yp, Xp @ w))) / N
                                  + 0.01 * cp.sum(t)), [-t <= w, w <= t, cp.norm(w, 2) <= 3])
    sol = prob.solve_private(epsilon=1.0, delta=1e-6, rng=0, mechanism="objective",
                             private=cvxdp.RowPrivacy(Xp, yp, row_bound=1.0, label_bound=1.0),
                             accuracy=10.0)
    np.testing.assert_allclose(sol.primal["t"], np.abs(sol.primal["w"]), atol=1e-6)
    np.testing.assert_allclose(t.value, sol.primal["t"])
    assert sol.status == cp.OPTIMAL_INACCURATE and sol.value is not None
    assert sol.info["excess_risk_bound"] <= 10.0


def test_clipped_count_counts_each_row_once(rows):
    # the released count has sensitivity 1: a row outside both bounds must count once
    from cvxdp.learning.detect import detect
    from cvxdp.learning.solve import _clip

    X, y = rows
    X2, y2 = X.copy(), y.copy()
    X2[0], y2[0] = [3.0, 0.0, 0.0], 4.0      # outside the row bound and the label bound
    y2[1] = -2.0                             # label only
    prob, spec = logistic_ridge(X2, y2)
    assert _clip(detect(prob, spec))[2] == 2


def test_no_solver_warning_leaves_the_private_part():
    # a warning from a solve on the private rows would depend on them; with this seed the
    # perturbed solve ends 'optimal_inaccurate' (CVXPY 1.9 / Clarabel), which CVXPY warns about
    X = cp.Parameter((6, 1), value=np.ones((6, 1)))
    y = cp.Parameter(6, value=np.ones(6))
    w = cp.Variable(1)
    prob = cp.Problem(cp.Minimize(cp.sum(cp.logistic(-cp.multiply(y, X @ w)))
                                  + 0.5 * cp.sum_squares(w)), [cp.abs(w) <= 2])
    spec = cvxdp.RowPrivacy(X, y, row_bound=1.0, label_bound=1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        prob.solve_private(epsilon=1.0, delta=1e-3, private=spec, rng=244,
                           mechanism="objective", value_share=0.0)
