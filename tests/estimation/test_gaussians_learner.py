"""private_gaussian: utility on unbounded, ill-conditioned Gaussians, rates, privacy report,
bad inputs, and the faithful / robust options of Ashtiani & Liaw (papers/004)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from cvxdp.errors import BudgetError, PrivacySpecError, UnsupportedProblemError
from cvxdp.estimation.gaussian_steps import coinpress_covariance
from cvxdp.estimation.gaussians import GaussianSampleWarning, private_gaussian, required_n
from cvxdp.estimation.wrapper import private_preconditioner


def gaussian(d, n, seed, cond=1e3, mean_norm=1e3, rank=None):
    rng = np.random.default_rng(seed)
    rank = rank or d
    q, _ = np.linalg.qr(rng.standard_normal((d, rank)))
    lam = np.logspace(0, math.log10(cond), rank)
    sigma = (q * lam) @ q.T
    mu = rng.standard_normal(d)
    mu *= mean_norm / np.linalg.norm(mu)
    x = mu + (rng.standard_normal((n, rank)) * np.sqrt(lam)) @ q.T
    return x, mu, sigma


def errors(sol, mu, sigma):
    low = np.linalg.cholesky(sigma)
    maha = np.linalg.norm(np.linalg.solve(low, sol.mean - mu))
    white = np.linalg.solve(low, np.linalg.solve(low, sol.covariance).T)
    rel_f = np.linalg.norm(sol.covariance - sigma) / np.linalg.norm(sigma)
    return maha, rel_f, np.linalg.norm(white - np.eye(len(mu)))


def run(x, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GaussianSampleWarning)
        return private_gaussian(x, **kw)


def test_headline_unbounded_ill_conditioned_d5():
    """||mu|| = 1e3, condition number 1e3, n = 2e5, eps = 1, delta = 1e-6 (digest target)."""
    x, mu, sigma = gaussian(5, 200_000, seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", GaussianSampleWarning)  # n is above required_n
        sol = private_gaussian(x, epsilon=1.0, delta=1e-6, rng=1, reference=True)
    maha, rel_f, white = errors(sol, mu, sigma)
    assert sol.status == "optimal_inaccurate" and sol.rank == 5 and sol.info["accuracy_claim"]
    assert maha <= 0.2 and rel_f <= 0.5 and white <= 0.5
    v = sol.validation
    assert v.mahalanobis_mean_error <= 0.2 and v.rel_frobenius_cov_error <= 0.5
    assert v.tv_upper_bound < 0.2


def _alpha_at(n, d, eps, delta):
    """Smallest alpha whose required_n is <= n (bisection on the public bound)."""
    lo, hi = 1e-3, 2.0
    for _ in range(40):
        mid = math.sqrt(lo * hi)
        lo, hi = (lo, mid) if required_n(d, epsilon=eps, delta=delta, alpha=mid).total <= n \
            else (mid, hi)
    return hi


def test_errors_shrink_with_n_within_the_stated_rate():
    d, eps, delta = 3, 1.0, 1e-6
    ns = (25_000, 100_000, 400_000)
    res = []
    for n in ns:
        errs = np.array([errors(run(gaussian(d, n, seed)[0], epsilon=eps, delta=delta,
                                    rng=seed + 10), *gaussian(d, 10, seed)[1:])
                         for seed in (0, 1)])
        res.append(errs.mean(axis=0))
        alpha = _alpha_at(n, d, eps, delta)
        assert errs[:, 0].max() <= alpha and errs[:, 2].max() <= alpha, (n, errs, alpha)
    res = np.array(res)
    # 16x more samples: the sqrt(d/n) + d^2/(n eps) rate predicts a factor >= 4 gain
    assert res[-1, 0] < res[0, 0] / 2.5
    assert res[-1, 2] < res[0, 2] / 2.5
    assert res[-1, 1] < res[0, 1]


def test_scale_free_no_bounds_needed():
    """Multiplying the data by 1e6 (or 1e-6) changes nothing relative: no bounds are assumed."""
    x, mu, sigma = gaussian(3, 60_000, seed=3)
    base = errors(run(x, epsilon=1.0, delta=1e-6, rng=4), mu, sigma)
    for c in (1e6, 1e-6):
        scaled = errors(run(x * c, epsilon=1.0, delta=1e-6, rng=4), mu * c, sigma * c * c)
        assert np.allclose(scaled, base, rtol=0.05, atol=1e-3)


def test_singular_covariance_recovers_subspace_and_off_range_mean():
    x, mu, sigma = gaussian(5, 150_000, seed=5, rank=3, mean_norm=600.0)
    sol = run(x, epsilon=1.0, delta=1e-6, rng=6)
    assert sol.rank == 3
    u = np.linalg.svd(sigma)[0][:, :3]
    perp = np.eye(5) - u @ u.T
    assert np.linalg.norm(perp @ (sol.mean - mu)) < 1e-3
    assert np.linalg.norm(perp @ sol.covariance) < 1e-4 * np.linalg.norm(sigma)
    assert np.linalg.norm(sol.covariance - sigma) / np.linalg.norm(sigma) < 0.1
    assert "perp_mean" in sol.step_records


def test_degenerate_sigma_zero_returns_the_point_mass():
    """Sigma = 0 (every sample equal): rank 0, covariance 0, mean from the exact-match step."""
    x = np.tile([3.0, -1e3, 7.5], (20_000, 1))
    sol = run(x, epsilon=1.0, delta=1e-6, rng=22, reference=False)
    assert sol.rank == 0 and np.array_equal(sol.covariance, np.zeros((3, 3)))
    assert np.allclose(sol.mean, x[0], atol=1e-9)
    assert "perp_mean" in sol.step_records and "covariance" not in sol.step_records


def test_one_extreme_record_cannot_break_the_release():
    """A single record at 1e300 (its squares overflow) is clipped like any other: finite output
    with the same accuracy (otherwise NaN would reveal it)."""
    x, mu, sigma = gaussian(3, 60_000, seed=18)
    x[123] = 1e300
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        sol = run(x, epsilon=1.0, delta=1e-6, rng=19, reference=False)
    assert np.isfinite(sol.mean).all() and np.isfinite(sol.covariance).all()
    maha, rel_f, _ = errors(sol, mu, sigma)
    assert maha < 0.2 and rel_f < 0.2


def test_privacy_report_and_determinism():
    x, _, _ = gaussian(4, 50_000, seed=7)
    a = run(x, epsilon=0.5, delta=1e-7, rng=8)
    b = run(x, epsilon=0.5, delta=1e-7, rng=8)
    assert np.array_equal(a.mean, b.mean) and np.array_equal(a.covariance, b.covariance)
    p = a.privacy
    assert p.guarantee == "dp" and p.delta == 1e-7
    assert p.epsilon <= 0.5 * (1 + 1e-9)
    assert "replace one" in p.neighbouring and "Ashtiani & Liaw (2022)" in p.theorem
    for eps_s, delta_s in p.details["step_budgets"].values():
        assert eps_s <= 0.5 * (1 + 1e-9) and delta_s <= 1e-7
    assert set(a.step_records) == {"subspace", "scale", "covariance", "mean"}
    refs = " ".join(r.reference for recs in a.step_records.values() for r in recs)
    assert "Lemma 3.6" in refs and "Prop. 3.5" in refs and "CoinPress" in refs


def test_clipped_covariance_sensitivity_matches_record():
    """Replace one row adversarially: ||C - C'||_F <= sqrt(2) T / m, the recorded sensitivity."""
    rng = np.random.default_rng(9)
    z = rng.standard_normal((2000, 3))
    _, recs, info = coinpress_covariance(z, np.eye(3), rho=1.0, iterations=0, beta=0.1,
                                         rng=rng)
    t = info["clip_radius2"]

    def clipped_cov(zz):
        nrm2 = (zz * zz).sum(axis=1)
        w = zz * np.sqrt(np.minimum(1.0, t / nrm2))[:, None]
        return w.T @ w / len(zz)

    worst = 0.0
    for _ in range(200):
        z2 = z.copy()
        i = rng.integers(len(z))
        z2[i] = rng.standard_normal(3) * 1e3
        z[i] = np.cross(z2[i], rng.standard_normal(3))  # orthogonal, both clipped to sqrt(T)
        worst = max(worst, np.linalg.norm(clipped_cov(z) - clipped_cov(z2)))
    assert worst <= recs[0].params["sensitivity"] * (1 + 1e-9)
    assert worst >= 0.99 * recs[0].params["sensitivity"]  # the bound is attained


def test_warns_below_required_n_and_stays_private():
    x, _, _ = gaussian(5, 20_000, seed=10)
    req = required_n(5, epsilon=1.0, delta=1e-6)
    assert req.total > 20_000
    with pytest.warns(GaussianSampleWarning) as rec:
        sol = private_gaussian(x, epsilon=1.0, delta=1e-6, rng=11)
    msgs = [str(w.message) for w in rec]
    assert any("below the" in m for m in msgs)
    assert any("not resolved in" in m for m in msgs)  # released-value diagnostic agrees
    assert sol.privacy.epsilon <= 1.0 + 1e-9
    assert sol.samples_required.total == pytest.approx(req.total)


def test_faithful_method_returns_bottom_and_reports_astronomical_n():
    x, _, _ = gaussian(2, 30_000, seed=12)
    with pytest.warns(GaussianSampleWarning, match="Thms 4.1, 5.4"):
        sol = private_gaussian(x, epsilon=1.0, delta=1e-6, rng=13, method="ashtiani-liaw")
    assert sol.status == "solver_error" and sol.mean is None and sol.covariance is None
    assert sol.info["bottom"] and sol.info["bottom_step"] == "preconditioner"
    assert sol.samples_required.total > 1e16
    assert sol.privacy.epsilon <= 1.0 + 1e-9
    # digest §3.5 table (internal eps = 1, delta = 1e-6, C1 = 3200): k = 5.5e8 at d = 2
    par = private_preconditioner(x[:10], epsilon=2.0, delta=4e-6 * math.e)[1]
    assert par["k"] == pytest.approx(5.5e8, rel=0.01)


def test_robust_option_returns_bottom_with_paper_constants():
    x, _, _ = gaussian(3, 40_000, seed=14)
    x[:400] = 1e6  # 1% adversarial rows
    with pytest.warns(GaussianSampleWarning, match="Cor. 7.5"):
        sol = private_gaussian(x, epsilon=1.0, delta=1e-6, rng=15, robust=True,
                               contamination=0.05)
    assert sol.mean is None and sol.info["method"] == "robust"
    assert sol.samples_required.total > 1e15
    assert "Cor. 7.5" in sol.privacy.theorem


@pytest.mark.parametrize("kwargs, err, match", [
    ({"epsilon": 1.0, "delta": 0.0}, BudgetError, "delta > 0"),
    ({"epsilon": -1.0, "delta": 1e-6}, BudgetError, "epsilon"),
    ({"epsilon": 1.0, "delta": 1.5}, BudgetError, "delta"),
    ({"epsilon": 1.0, "delta": 1e-6, "method": "coinpress"}, UnsupportedProblemError, "method"),
])
def test_bad_budgets_and_options_rejected(kwargs, err, match):
    x, _, _ = gaussian(2, 20_000, seed=16)
    with pytest.raises(err, match=match):
        private_gaussian(x, **kwargs)


def test_bad_data_rejected():
    x, _, _ = gaussian(2, 20_000, seed=17)
    bad = x.copy()
    bad[5, 1] = np.nan
    with pytest.raises(UnsupportedProblemError, match="NaN"):  # only the non-private reference
        private_gaussian(bad, epsilon=1.0, delta=1e-6, reference=True)
    with pytest.raises(UnsupportedProblemError, match=r"\(n, d\)"):
        private_gaussian(x[:, 0], epsilon=1.0, delta=1e-6)
    with pytest.raises(PrivacySpecError, match="too few"):
        private_gaussian(x[:1000], epsilon=1.0, delta=1e-6)


def test_gaussian_mle_structured_problem_exact_and_private():
    """The CVXPY model's exact solve is the MLE (precision = S^{-1}); cvxdp.solve_private
    dispatches to private_gaussian and reports the log-likelihood gap."""
    import cvxdp
    from cvxdp.estimation.gaussians import gaussian_mle

    x, mu, sigma = gaussian(2, 60_000, seed=20, cond=30.0, mean_norm=50.0)
    prob = gaussian_mle(x)
    prob.solve(solver="CLARABEL")
    s = np.cov(x, rowvar=False)
    assert np.allclose(prob.precision.value, np.linalg.inv(s), rtol=2e-3, atol=1e-5)
    sol = cvxdp.solve_private(prob, epsilon=1.0, delta=1e-6, rng=21, reference=True)
    assert sol.status == "optimal_inaccurate"
    assert np.allclose(prob.precision.value @ sol.covariance, np.eye(2), atol=1e-8)
    assert 0 <= sol.validation.objective_gap < 0.05
    assert sol.validation.reference_solver == "CLARABEL"
    assert sol.validation.mahalanobis_mean_error < 0.2
    with pytest.raises(BudgetError, match="not rho"):
        prob.solve_private(rho=0.5)
