"""The default private_gaussian is affine-invariant in accuracy (issue 26 item 1): errors in the
whitened metric do not depend on the condition number."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from cvxdp.estimation.gaussians import GaussianSampleWarning, private_gaussian


def gaussian(d, n, seed, cond, mean_norm=1e3):
    rng = np.random.default_rng(seed)
    q, _ = np.linalg.qr(rng.standard_normal((d, d)))
    lam = np.logspace(0, math.log10(cond), d)
    mu = rng.standard_normal(d)
    mu *= mean_norm / np.linalg.norm(mu)
    return mu + (rng.standard_normal((n, d)) * np.sqrt(lam)) @ q.T, mu, (q * lam) @ q.T


def errors(sol, mu, sigma):
    low = np.linalg.cholesky(sigma)
    maha = np.linalg.norm(np.linalg.solve(low, sol.mean - mu))
    white = np.linalg.solve(low, np.linalg.solve(low, sol.covariance).T)
    return maha, np.linalg.norm(white - np.eye(len(mu)))


def run(x, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GaussianSampleWarning)
        return private_gaussian(x, epsilon=1.0, delta=1e-6, **kw)


def test_default_at_condition_number_1e10_d4():
    """Reproducer: d = 4, n = 2e5, epsilon = 1, condition number 1e10.  The old default's
    whitened Frobenius error is 52.7 here (kappa = 1: 0.029); the default must stay within
    0.1 (Mahalanobis mean error within 0.05) and say optimal_inaccurate."""
    x, mu, sigma = gaussian(4, 200_000, seed=0, cond=1e10)
    sol = run(x, rng=10)
    maha, white = errors(sol, mu, sigma)
    assert white <= 0.1 and maha <= 0.05, (maha, white)
    assert sol.status == "optimal_inaccurate", sol.info["status_reason"]


def test_preconditioning_rounds_are_accounted_by_parallel_composition():
    """The default at n = 2e5, d = 4 resolves to "preconditioned" (public rule), runs two
    preconditioning rounds on their own blocks and stays (1, 1e-6)-DP in total."""
    x, _, _ = gaussian(4, 200_000, seed=2, cond=1e3)
    sol = run(x, rng=3)
    assert sol.info["method"] == "preconditioned"
    assert {"pre1", "pre2", "scale", "covariance", "mean"} <= set(sol.step_records)
    assert set(sol.info["block_sizes"]) >= {"pre1", "pre2"}
    assert sol.privacy.epsilon <= 1.0 + 1e-9 and sol.privacy.delta <= 1e-6
    for name in ("pre1", "pre2", "covariance"):
        eps = sol.privacy.details["step_budgets"][name][0]
        assert eps <= 1.0 + 1e-9


def test_auto_picks_from_public_values_only():
    """Below the preconditioned pipeline's required_n, auto falls back to practical."""
    from cvxdp.estimation.gaussians import auto_method, required_n

    need = required_n(4, epsilon=1.0, delta=1e-6, method="preconditioned").total
    assert auto_method(int(need) + 1, 4, 1.0, 1e-6) == "preconditioned"
    assert auto_method(int(need) - 1, 4, 1.0, 1e-6) == "practical"


@pytest.mark.slow
def test_kappa_invariance_d4_and_d10():
    """Issue 26 'done when': d = 4, n = 2e5: whitened error at kappa = 1e10 within 1.5x of
    kappa = 1 (2-seed means; measured 0.036 vs 0.032); d = 10, n = 2e5: Mahalanobis <= 0.05
    and relative Frobenius <= 0.2 at kappa 1, 1e5, 1e10 (measured <= 0.033 / 0.033)."""
    w = {}
    for cond in (1.0, 1e10):
        w[cond] = np.mean([errors(run(gaussian(4, 200_000, s, cond)[0], rng=s + 10),
                                  *gaussian(4, 10, s, cond)[1:])[1] for s in range(2)])
    assert w[1e10] <= 1.5 * max(w[1.0], 0.03), w
    for cond in (1.0, 1e5, 1e10):
        x, mu, sigma = gaussian(10, 200_000, 0, cond)
        sol = run(x, rng=10)
        maha, _ = errors(sol, mu, sigma)
        rel_f = np.linalg.norm(sol.covariance - sigma) / np.linalg.norm(sigma)
        assert maha <= 0.05 and rel_f <= 0.2, (cond, maha, rel_f)


@pytest.mark.parametrize("block", ["pre1", "pre2", "covariance", "mean"])
def test_preconditioned_held_noise_gives_identical_fields(monkeypatch, block):
    """Every mechanism's output held fixed (the spies of test_release_neighbours), a neighbour
    whose replaced record sits in each preconditioning block (and the final ones): every
    released field is identical, so the whitening matrices reach the output only through the
    released estimates (post-processing)."""
    import importlib.util
    from pathlib import Path

    spec = importlib.util.spec_from_file_location(
        "_release_neighbours", Path(__file__).with_name("test_release_neighbours.py"))
    rn = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(rn)
    from cvxdp.estimation import gaussian_pipeline as gmod  # where the steps call them
    from cvxdp.estimation.gaussian_steps import layout

    x, basis = rn._gauss_data(40_000, 2, 2, seed=2)
    sizes = layout(40_000, 2, 1.0, 1e-6, "preconditioned")
    start = sum(v for k, v in sizes.items() if list(sizes).index(k) < list(sizes).index(block))
    idx = np.random.default_rng(9).permutation(40_000)[start + sizes[block] // 2]
    xn = x.copy()
    xn[idx] = x[idx] + 1e3 * basis[:, 0]
    spies, replay = rn._spy(monkeypatch, gmod, rn.GAUSS_MECHS)
    a = private_gaussian(x, epsilon=1.0, delta=1e-6, rng=9, method="preconditioned")
    replay()
    b = private_gaussian(xn, epsilon=1.0, delta=1e-6, rng=9, method="preconditioned")
    assert a.mean is not None and {"pre1", "pre2"} <= set(a.step_records)
    assert rn._same(rn._fields(a), rn._fields(b))
    assert sum(s.i for s in spies) == sum(len(s.outputs) for s in spies)
