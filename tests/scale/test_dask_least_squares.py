"""Private least squares (SSP) on Dask arrays over a LocalCluster (issue 24).

The Gram matrix of the rows mapped into the public domain is a sum of the row blocks' Gram
matrices (reduced on the workers); the noise is added on the client with the same draws, so the
released coefficients equal the numpy path's up to the order of additions (rtol 1e-9).
"""

import numpy as np
import pytest

import cvxdp
from cvxdp.errors import UnsupportedProblemError
from cvxdp.scale.regression import gram_and_count, stacked_rows

da = pytest.importorskip("dask.array")


def _data(n=20000, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, d)) / 2
    y = X @ np.linspace(1.0, -0.5, d) + 0.1 * rng.standard_normal(n)
    X[3, 1] = np.nan            # non-finite row -> zero row
    X[4] *= 50                  # long row -> clipped to row_bound
    y[9] = np.inf
    return X, y


@pytest.mark.parametrize("budget", [dict(epsilon=1.0, delta=1e-6), dict(rho=0.5)])
def test_dask_ssp_releases_the_numpy_coefficients(dask_client, budget):
    X, y = _data()
    kw = dict(rng=1, count_clipped=True, **budget)
    a = cvxdp.least_squares(X, y, row_bound=1.0).solve_private(**kw)
    Xd = da.from_array(X, chunks=(3000, 2)).persist()     # blocks split by columns too
    yd = da.from_array(y, chunks=7000).persist()          # misaligned with X's blocks
    b = cvxdp.least_squares(Xd, yd, row_bound=1.0).solve_private(**kw)
    np.testing.assert_allclose(b.coef, a.coef, rtol=1e-9)
    assert b.value == pytest.approx(a.value, rel=1e-9)
    assert b.info["clipped_rows_noisy"] == pytest.approx(a.info["clipped_rows_noisy"], rel=1e-12)
    assert b.privacy.epsilon == a.privacy.epsilon
    # and the estimate is a useful one: within 0.05 of the exact OLS of the finite rows
    ok = np.isfinite(X).all(axis=1) & np.isfinite(y) & (np.arange(len(y)) != 4)
    exact = np.linalg.lstsq(X[ok], y[ok], rcond=None)[0]
    assert np.linalg.norm(b.coef - exact) < 0.05


def test_dask_gram_equals_the_mapped_rows_gram(dask_client):
    """The reduction itself: the Gram matrix and the exact count of mapped rows."""
    from cvxdp.estimation.random_projection import public_domain_rows

    X, y = _data(n=5000)
    mapped, count = public_domain_rows(np.column_stack([X, y]), 1.0)
    gram, got = gram_and_count(stacked_rows(da.from_array(X, chunks=1200),
                                            da.from_array(y, chunks=1200)), 1.0)
    np.testing.assert_allclose(gram, mapped.T @ mapped, rtol=1e-10)
    assert got == count >= 3


def test_dask_least_squares_refuses_what_needs_the_rows(dask_client):
    X, y = _data(n=100)
    prob = cvxdp.least_squares(da.from_array(X, chunks=50), da.from_array(y, chunks=50),
                               row_bound=1.0)
    with pytest.raises(UnsupportedProblemError, match="in memory"):
        prob.solve()
    with pytest.raises(UnsupportedProblemError, match="ssp"):
        prob.solve_private(epsilon=1.0, delta=1e-6, mechanism="rp")
    with pytest.raises(UnsupportedProblemError, match="in memory"):
        prob.solve_private(epsilon=1.0, delta=1e-6, reference=True)
