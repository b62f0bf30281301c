"""Private John ellipsoid: sensitivity bounds, calibration, utility, reproducibility, refusals."""

import math
import re

import numpy as np
import pytest
from scipy.stats import norm

from cvxdp.errors import BudgetError, PrivacyGuaranteeError, PrivacySpecError
from cvxdp.geometry.john.john import john_ellipsoid
from cvxdp.geometry.john.john_iter import gram, leverage_ratios
from cvxdp.geometry.john.john_sensitivity import (
    gram_sensitivity,
    leverage_ratio_sensitivity,
    support_sensitivity,
)
from cvxdp.privacy.calibration import calibrate_gaussian


def _polytope(seed, n, d):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n, d)) / math.sqrt(d)
    return A * np.minimum(1.0, 1.0 / np.linalg.norm(A, axis=1))[:, None]  # rows in the unit ball


def _anisotropic(seed, n, d):
    """Gaussian rows with axis scales geomspace(1, 0.2), in the unit ball (few rows at norm 1,
    so the John ellipsoid is far from a ball)."""
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n, d)) * np.geomspace(1.0, 0.2, d) / 2.5
    return A * np.minimum(1.0, 1.0 / np.linalg.norm(A, axis=1))[:, None]


@pytest.fixture(scope="module")
def prob():
    return john_ellipsoid(_anisotropic(0, 400, 4))


def test_leverage_sensitivity_bound_holds_on_adversarial_neighbours():
    rng = np.random.default_rng(0)
    worst = 0.0
    for t in range(200):
        n, d = 30, 3
        A = _polytope(100 + t, n, d)
        wmin = 0.1 * d / n
        w = np.exp(rng.uniform(np.log(wmin), 0, n))
        j = int(rng.integers(n))
        w[j] = 1.0  # the moving row at the largest allowed weight
        ridge = [0.0, 0.01][t % 2]
        smin = np.linalg.svd(A, compute_uv=False)[-1]
        lam = ridge + wmin * (0.9 * smin) ** 2
        eps0 = rng.uniform(0.05, 0.2) * lam / 2
        _, V = np.linalg.eigh(gram(A, w, ridge))
        step = V[:, 0] if t % 3 else V[:, -1]  # along the weakest / strongest direction
        A2 = A.copy()
        A2[j] = A[j] + eps0 * step
        A2[j] *= min(1.0, 1.0 / np.linalg.norm(A2[j]))
        if np.linalg.svd(A2, compute_uv=False)[-1] < 0.9 * smin:
            continue
        actual = np.linalg.norm(leverage_ratios(A, w, ridge) - leverage_ratios(A2, w, ridge))
        bound = leverage_ratio_sensitivity(n=n, closeness=eps0, row_bound=1.0, weight_floor=wmin,
                                           eig_floor=lam)
        worst = max(worst, actual / bound)
    assert 0 < worst <= 1.0


def test_gram_and_support_sensitivity_bounds_hold():
    rng = np.random.default_rng(1)
    for _ in range(100):
        A = _polytope(int(rng.integers(1e6)), 20, 3)
        v = rng.uniform(0, 1, 20)
        eps0 = 1e-2
        j = int(rng.integers(20))
        A2 = A.copy()
        A2[j] += eps0 * rng.standard_normal(3) / math.sqrt(3)
        A2[j] *= min(1.0, 1.0 / np.linalg.norm(A2[j]))
        eps_true = np.linalg.norm(A2[j] - A[j])
        dq = np.linalg.norm(gram(A, v) - gram(A2, v))
        assert dq <= gram_sensitivity(closeness=eps_true, row_bound=1.0, max_weight=v.max())
        Q = gram(A, np.full(20, 0.2))
        s = [np.sqrt(np.einsum("ij,ji->i", B, np.linalg.solve(Q, B.T))).max() for B in (A, A2)]
        lam = np.linalg.eigvalsh(Q)[0]
        assert abs(s[0] - s[1]) <= support_sensitivity(closeness=eps_true, min_eig=lam) + 1e-12


@pytest.mark.parametrize("eps", [0.3, 1.0, 4.0])
def test_calibration_matches_independent_gdp_formula(prob, eps):
    delta = 1e-6
    sol = prob.solve_private(epsilon=eps, delta=delta, closeness=1e-9, row_bound=1.0, rng=0)
    rep = sol.privacy
    assert rep.guarantee == "dp" and rep.epsilon == pytest.approx(eps, rel=1e-9)
    rec = rep.records[0]
    mu = math.sqrt(rec.params["mu_uniform"] ** 2 + rec.params["mu_iterations"] ** 2
                   + rec.params["mu_gram"] ** 2 + rec.params["mu_scale"] ** 2)
    # Dong-Roth-Su: delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)
    d_gdp = norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * norm.cdf(-eps / mu - mu / 2)
    assert d_gdp == pytest.approx(delta, rel=1e-6)
    # per-step noise re-derived: 5% of mu^2 to the final Q, 7.5% to each of the three scales,
    # the share s0 (>= 5%) derived for the uniform-weights Gram Q0, the rest (72.5% - s0)
    # split equally over the T iterations
    s0 = sol.info["share_uniform"]
    assert 0.05 <= s0 < 0.725
    assert rec.params["mu_uniform"] == pytest.approx(mu * math.sqrt(s0), rel=1e-9)
    assert rec.params["mu_scale"] == pytest.approx(mu * math.sqrt(0.225), rel=1e-9)
    assert rec.params["mu_gram"] == pytest.approx(mu * math.sqrt(0.05), rel=1e-9)
    mu_step = mu * math.sqrt((0.725 - s0) / sol.iterations)
    assert sol.info["sigma_h"] == pytest.approx(sol.info["sensitivity_h"] / mu_step, rel=1e-9)
    assert 1 / calibrate_gaussian(epsilon=eps, delta=delta) == pytest.approx(mu, rel=1e-9)


def test_rho_budget(prob):
    sol = prob.solve_private(rho=0.05, closeness=1e-9, row_bound=1.0, rng=0)
    assert sol.privacy.rho == pytest.approx(0.05, rel=1e-9)


def test_utility_small_closeness_close_to_exact(prob):
    sol = prob.solve_private(epsilon=1.0, delta=1e-6, closeness=1e-9, row_bound=1.0, rng=1,
                             reference=True)
    v = sol.validation
    assert v.volume_ratio >= 0.97
    assert v.shape_volume_ratio >= 0.97
    assert sol.info["selected"] == "private"
    # the released weights v (sum d) scaled with the released matrix (E / k: Q k^2, v k^2)
    assert sol.ellipsoid.weights.sum() == pytest.approx(4 / sol.info["scale"] ** 2, rel=1e-9)
    np.testing.assert_allclose(sol.primal["weights"], sol.ellipsoid.weights)


def test_utility_degrades_with_closeness_and_beats_noise_floor(prob):
    ratios = []
    for eps0 in (1e-9, 1e-4):
        r = [prob.solve_private(epsilon=1.0, delta=1e-6, closeness=eps0, row_bound=1.0, rng=s,
                                reference=True).validation.shape_volume_ratio for s in range(4)]
        ratios.append(np.mean(r))
    assert ratios[0] > ratios[1] + 0.005


def test_inscribed_scaling_lies_inside(prob):
    A = prob.data
    sol = prob.solve_private(epsilon=1.0, delta=1e-6, closeness=1e-8, row_bound=1.0, rng=2,
                             inscribed=True, reference=True)
    assert sol.ellipsoid.inscribed_in(A)
    assert 0 < sol.info["scale"] <= 1.2
    assert sol.validation.max_support_ratio <= 1.0
    assert sol.validation.volume_ratio >= 0.95
    assert "mu_scale" in sol.privacy.records[0].params


def test_same_seed_same_output(prob):
    kw = dict(epsilon=1.0, delta=1e-6, closeness=1e-6, row_bound=1.0)
    a = prob.solve_private(rng=5, **kw).ellipsoid.matrix
    assert np.array_equal(a, prob.solve_private(rng=5, **kw).ellipsoid.matrix)
    assert not np.array_equal(a, prob.solve_private(rng=6, **kw).ellipsoid.matrix)


def test_paper_preset_unsafe_refuses_a_violated_theorem_condition_without_private_values(prob):
    with pytest.warns(UserWarning, match="NOT differentially private"):
        with pytest.raises(PrivacyGuaranteeError, match="2 L eps0 < 1") as exc:
            prob.solve_private(epsilon=1.0, delta=1e-6, closeness=1e-2, row_bound=1.0,
                               preset="paper", unsafe_paper_preset=True)
    # L comes from the private singular values: the message prints no number computed from it
    assert re.search(r"\d\.\d\d|\de[-+]|= *\d", str(exc.value)) is None


@pytest.mark.parametrize("kw, err, msg", [
    (dict(epsilon=1.0, delta=1e-6, row_bound=1.0), PrivacySpecError, "closeness"),
    (dict(epsilon=1.0, delta=1e-6, closeness=1e-6), PrivacySpecError, "row_bound"),
    (dict(epsilon=1.0, closeness=1e-6, row_bound=1.0), BudgetError, "delta > 0"),
    (dict(epsilon=1.0, delta=1e-6, closeness=1e-6, row_bound=1.0, sigma_min=-1.0),
     PrivacySpecError, "sigma_min= must be a finite number >= 0"),
    (dict(epsilon=1.0, delta=1e-6, closeness=1e-6, row_bound=1.0, ridge=float("nan")),
     PrivacySpecError, "ridge= must be"),
    (dict(epsilon=1.0, delta=1e-6, closeness=1e-6, row_bound=1.0, count_clipped=0.9),
     PrivacySpecError, "count_clipped must be"),
    (dict(epsilon=1.0, delta=1e-6, closeness=1e-6, row_bound=1.0, preset="fast"),
     PrivacySpecError, "preset"),
    (dict(epsilon=-1.0, delta=1e-6, closeness=1e-6, row_bound=1.0), BudgetError, "epsilon"),
])
def test_bad_arguments_rejected(prob, kw, err, msg):
    with pytest.raises(err, match=msg):
        prob.solve_private(**kw)
