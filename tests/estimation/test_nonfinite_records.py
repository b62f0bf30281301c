"""Private estimation paths map records outside the public domain into it; they never refuse them.

A refusal that depends on the private values (``X contains NaN``) is a deterministic function of
the data and leaks one bit: whether some record is not finite.  Every private path of
``cvxdp.estimation`` maps such a record into the public domain inside the mechanism, record by
record (a row with a NaN / inf entry becomes the zero row; the Gaussian learner also clips entries
beyond its public ``ENTRY_BOUND``; the row-bounded mechanisms clip long rows to ``row_bound``), so
the release equals the release on the mapped data with the same seed.  The number of mapped
records is private and is released only as an opt-in noisy count charged to the budget.  The
exact (non-private) solves still refuse non-finite data (issue 21 item 4).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from cvxdp.errors import PrivacySpecError, UnsupportedProblemError
from cvxdp.estimation.gaussians import GaussianSampleWarning, gaussian_mle, private_gaussian
from cvxdp.estimation.random_projection import (
    clip_rows,
    random_projection,
    relative_random_projection,
)
from cvxdp.estimation.regression import least_squares
from cvxdp.estimation.wrapper import EuclideanSpace, private_wrapper

BAD = ((5, 0, np.nan), (17, 1, np.inf), (30, 0, -np.inf))


def _spoil(x: np.ndarray, bad=BAD) -> tuple[np.ndarray, np.ndarray]:
    """(data with non-finite entries, the same data with those rows set to zero)."""
    spoiled, zeroed = x.copy(), x.copy()
    for i, j, v in bad:
        spoiled[i, j] = v
        zeroed[i] = 0.0
    return spoiled, zeroed


def _gaussian_sample(n=20_000, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, 2)) * [1.0, 3.0] + [5.0, -2.0]


def _learn(x, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GaussianSampleWarning)
        warnings.simplefilter("error", RuntimeWarning)  # no warning may depend on the values
        return private_gaussian(x, epsilon=1.0, delta=1e-6, **kw)


# ----------------------------------------------------------------------- Gaussian learner

def test_private_gaussian_maps_nonfinite_records_to_the_zero_row():
    """Before: UnsupportedProblemError('X contains NaN or inf'), a one-bit leak."""
    spoiled, zeroed = _spoil(_gaussian_sample())
    sol = _learn(spoiled, rng=3)
    ref = _learn(zeroed, rng=3)
    assert np.allclose(sol.mean, ref.mean, rtol=1e-12, atol=0)
    assert np.allclose(sol.covariance, ref.covariance, rtol=1e-12, atol=1e-300)
    assert sol.status == ref.status
    # three zero rows among 20,000 barely move the estimate (true mean (5, -2), var (1, 9))
    assert np.allclose(sol.mean, [5.0, -2.0], atol=0.15)
    assert np.allclose(np.diag(sol.covariance), [1.0, 9.0], rtol=0.25)


def test_private_gaussian_clips_entries_that_would_overflow():
    """Finite records at +-1.7e308 make pair differences overflow.  Before: ValueError 'array must
    not contain infs or NaNs' (RuntimeWarning 'overflow' under -W error), i.e. a refusal that
    depends on the values; after: entries are clipped to the public ENTRY_BOUND."""
    from cvxdp.estimation.gaussians import ENTRY_BOUND

    x = _gaussian_sample()
    x[:40:2], x[1:40:2] = 1.7e308, -1.7e308
    sol = _learn(x, rng=4)
    ref = _learn(np.clip(x, -ENTRY_BOUND, ENTRY_BOUND), rng=4)
    assert np.isfinite(sol.mean).all() and np.isfinite(sol.covariance).all()
    assert np.allclose(sol.mean, ref.mean, rtol=1e-12, atol=0)
    assert np.allclose(sol.covariance, ref.covariance, rtol=1e-12, atol=1e-300)


def test_private_gaussian_noisy_count_is_opt_in_and_charged():
    """count_clipped= releases the number of mapped records as count + Laplace, never exactly,
    and the total budget stays (epsilon, delta)."""
    spoiled, _ = _spoil(_gaussian_sample())
    plain = _learn(spoiled, rng=5)
    assert "clipped_rows_noisy" not in plain.info
    assert [r.mechanism for r in plain.privacy.records] == ["parallel_composition"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GaussianSampleWarning)
        sol = private_gaussian(spoiled, epsilon=20.0, delta=1e-6, rng=5, count_clipped=0.5)
    noisy = sol.info["clipped_rows_noisy"]
    assert sol.info["laplace_scale_count"] == pytest.approx(1 / 10.0)
    assert abs(noisy - 3) < 1.0 and noisy != 3  # Laplace(0.1): noise present, count 3
    mechs = {r.mechanism: r for r in sol.privacy.records}
    assert mechs["laplace"].budget.epsilon == pytest.approx(10.0)
    assert mechs["parallel_composition"].budget.epsilon <= 10.0 * (1 + 1e-12)
    assert 10.0 < sol.privacy.epsilon <= 20.0 * (1 + 1e-9) and sol.privacy.delta == 1e-6
    with pytest.raises(PrivacySpecError, match="count_clipped"):
        private_gaussian(spoiled, epsilon=1.0, delta=1e-6, count_clipped=2.0)


def test_gaussian_mle_builds_on_nonfinite_data_private_runs_exact_refuses():
    spoiled, zeroed = _spoil(_gaussian_sample())
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        prob = gaussian_mle(spoiled)  # the builder reads the shape only
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GaussianSampleWarning)
        sol = prob.solve_private(epsilon=1.0, delta=1e-6, rng=6)
        ref = gaussian_mle(zeroed).solve_private(epsilon=1.0, delta=1e-6, rng=6)
    assert np.allclose(sol.mean, ref.mean, rtol=1e-12, atol=0)
    assert sol.value == pytest.approx(ref.value, rel=1e-9)
    with pytest.raises(UnsupportedProblemError, match="exact"):
        prob.solve()
    with pytest.raises(UnsupportedProblemError, match="reference"):
        prob.solve_private(epsilon=1.0, delta=1e-6, rng=6, reference=True)


# -------------------------------------------------------------- row-bounded mechanisms (RP, LS)

def test_clip_rows_maps_a_nonfinite_row_to_the_zero_row():
    """Before: PrivacySpecError('data contains NaN or inf')."""
    out = clip_rows(np.array([[np.nan, 1.0], [3.0, 4.0], [np.inf, 0.0], [0.3, 0.4]]), 1.0)
    assert np.allclose(out, [[0, 0], [0.6, 0.8], [0, 0], [0.3, 0.4]], rtol=1e-15, atol=0)


def test_random_projection_runs_on_nonfinite_rows():
    x = np.random.default_rng(7).uniform(-0.5, 0.5, (500, 3))
    spoiled, zeroed = _spoil(x)
    kw = dict(epsilon=1.0, delta=1e-6, r=20, row_bound=1.0)
    sk, rec = random_projection(spoiled, rng=8, **kw)
    sk0, rec0 = random_projection(zeroed, rng=8, **kw)
    assert np.allclose(sk, sk0, rtol=1e-12, atol=1e-12) and rec == rec0
    rel, _ = relative_random_projection(spoiled, rng=8, **kw)
    rel0, _ = relative_random_projection(zeroed, rng=8, **kw)
    assert np.allclose(rel, rel0, rtol=1e-12, atol=1e-12)


def _regression_data(n=5000, seed=9):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, (n, 3)) / 2
    return x, x @ [1.0, -0.5, 0.25] + 0.01 * rng.standard_normal(n)


@pytest.mark.parametrize("mechanism", ["ssp", "rp"])
def test_least_squares_private_maps_nonfinite_rows_to_the_zero_row(mechanism):
    """Before: UnsupportedProblemError('X or y contains NaN or inf') at build time."""
    x, y = _regression_data()
    sx, zx = _spoil(x)
    sy, zy = y.copy(), y.copy()
    sy[40], zx[40] = np.nan, 0.0   # a NaN in y alone zeroes the whole row (x, y)
    zy[[i for i, _, _ in BAD] + [40]] = 0.0  # so does a non-finite x
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        prob = least_squares(sx, sy, row_bound=1.0)
        sol = prob.solve_private(epsilon=1.0, delta=1e-6, rng=10, mechanism=mechanism)
    ref = least_squares(zx, zy, row_bound=1.0).solve_private(epsilon=1.0, delta=1e-6, rng=10,
                                                             mechanism=mechanism)
    assert np.allclose(sol.coef, ref.coef, rtol=1e-9, atol=1e-12)
    assert sol.value == pytest.approx(ref.value, rel=1e-9)
    assert np.allclose(sol.coef, [1.0, -0.5, 0.25], atol=0.25)


def test_least_squares_exact_solves_refuse_nonfinite_data():
    x, y = _regression_data(200)
    sx, _ = _spoil(x)
    prob = least_squares(sx, y, row_bound=1.0)
    for call in (prob.solve, lambda: prob.solve(method="ols"),
                 lambda: prob.solve_private(epsilon=1.0, delta=1e-6, reference=True)):
        with pytest.raises(UnsupportedProblemError, match="NaN or inf"):
            call()


@pytest.mark.parametrize("budget, key", [({"epsilon": 20.0, "delta": 1e-6}, "laplace_scale_count"),
                                         ({"rho": 100.0}, "sigma_count")])
def test_least_squares_noisy_count_is_opt_in_and_charged(budget, key):
    """Rows mapped into the domain: 3 non-finite + 2 above row_bound = 5, released with noise."""
    x, y = _regression_data()
    sx, _ = _spoil(x)
    sx[50], sx[51] = [3.0, 0.0, 0.0], [0.0, 0.0, -2.0]
    prob = least_squares(sx, y, row_bound=2.0)  # every other row has norm < 1.3
    plain = prob.solve_private(rng=11, **budget)
    assert "clipped_rows_noisy" not in plain.info and len(plain.privacy.records) == 1
    sol = prob.solve_private(rng=11, count_clipped=0.5, **budget)
    noisy = sol.info["clipped_rows_noisy"]
    assert sol.info[key] == pytest.approx(0.1)
    assert abs(noisy - 5) < 1.0 and noisy != 5
    assert len(sol.privacy.records) == 2
    if "rho" in budget:
        assert sol.privacy.rho == pytest.approx(100.0)
    else:
        assert sol.privacy.epsilon == pytest.approx(20.0) and sol.privacy.delta == 1e-6


# ---------------------------------------------------------------------------- generic wrapper

def test_private_wrapper_maps_nonfinite_records_to_zero():
    """Before: UnsupportedProblemError('X must be a finite array ...')."""
    x = np.random.default_rng(12).normal(size=(2000, 2)) * 0.1 + [1.0, 2.0]
    spoiled, zeroed = _spoil(x)
    est = private_wrapper(lambda b: b.mean(0), EuclideanSpace(r=1.0), epsilon=1.0, delta=1e-6)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        out = est(spoiled, rng=13)
    ref = est(zeroed, rng=13)
    assert out.passed == ref.passed
    assert np.allclose(out.value, ref.value, rtol=1e-12, atol=0)


def test_private_wrapper_hides_which_block_made_the_estimator_fail():
    """An estimator that raises (or warns) on some block: the exception / warning depends on the
    data and must not leave the mechanism; that block's point agrees with nothing.  Before: the
    exception (here ValueError) propagated, revealing that some record exceeds 100."""
    x = np.random.default_rng(14).normal(size=(584 * 4, 2)) * 0.1 + [1.0, 2.0]  # k = 584 blocks
    x[7] = [1000.0, 0.0]

    def picky(b):
        if np.abs(b).max() > 100:
            raise ValueError("outlier")
        if np.abs(b).max() > 3:  # never on this data: a warning would also be a signal
            warnings.warn("large", RuntimeWarning)
        return b.mean(0)

    est = private_wrapper(picky, EuclideanSpace(r=1.0), epsilon=1.0, delta=1e-6)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = est(x, rng=15)
    # same seed, the outlier replaced by an ordinary record: one block point changes, the mask
    # draw is the same, so the releases differ by mu - mu', at most gamma (Lemma 3.6)
    clean = x.copy()
    clean[7] = [1.0, 2.0]
    ref = est(clean, rng=15)
    assert out.passed and ref.passed
    assert 0 < np.linalg.norm(out.value - ref.value) <= out.gamma
    never = private_wrapper(lambda b: 1 / 0, EuclideanSpace(r=1.0), epsilon=1.0, delta=1e-6)
    bottom = never(x, rng=15)
    assert bottom.value is None and not bottom.passed
    assert bottom.privacy.epsilon == pytest.approx(1.0)


def test_private_wrapper_with_warning_estimator_under_error_filter():
    """Before: a RuntimeWarning raised inside the estimator became an exception under -W error
    only when a block held an extreme record."""
    x = np.random.default_rng(16).normal(size=(2000, 2)) * 0.1 + [1.0, 2.0]
    x[9] = [1e200, 1e200]
    est = private_wrapper(lambda b: np.sqrt((b * b).mean(0)), EuclideanSpace(r=1.0),
                          epsilon=1.0, delta=1e-6)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = est(x, rng=17)
    assert out.passed and np.all(np.isfinite(out.value))


# ------------------------------------------------- the building blocks on extreme block points

def test_spectral_space_within_ignores_nonfinite_and_extreme_points():
    """A block point that is NaN (a failed block) or extreme (entries 1e200 next to 1e-200)
    agrees with nothing, with no exception or warning.  Before: scipy's ValueError ('array must
    not contain infs or NaNs') on the NaN point, RuntimeWarning 'overflow' on the extreme ones."""
    from cvxdp.estimation.wrapper import SpectralPDSpace

    eye = np.eye(2)
    items = np.stack([eye, 1.01 * eye, np.full((2, 2), np.nan), np.diag([1e200, 1e-200]),
                      np.diag([1e-200, 1e200]), 0.99 * eye])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        close = SpectralPDSpace().within(items, 0.5)
    expect = np.zeros((6, 6), dtype=bool)
    expect[np.ix_([0, 1, 5], [0, 1, 5])] = True
    expect[3, 3] = expect[4, 4] = True  # an extreme point still agrees with itself
    assert np.array_equal(close, expect)


def test_private_subspace_survives_a_nonfinite_pair_difference():
    """private_subspace is public API on private z: a NaN row made the block's SVD raise
    LinAlgError ('SVD did not converge'); now that block's projector agrees with nothing."""
    from cvxdp.estimation.wrapper import private_subspace

    z = np.random.default_rng(18).standard_normal((3000, 2)) @ np.array([[1.0, 1.0], [0.0, 0.0]])
    z[4] = np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        u, res = private_subspace(z, epsilon=1.0, delta=1e-6, rng=19)
    assert u is not None and u.shape == (2, 1)
    assert np.allclose(np.abs(u[:, 0]), [2**-0.5, 2**-0.5], atol=1e-6)  # range (1, 1)
