"""Private least squares (SSP) on Dask arrays over a LocalCluster (issue 24).

The Gram matrix of the rows mapped into the public domain is a sum of the row blocks' Gram
matrices (reduced on the workers); the noise is added on the client with the same draws, so the
released coefficients equal the numpy path's up to the order of additions (rtol 1e-9).
"""

import numpy as np
import pytest

import cvxdp
from cvxdp.dask_backend.regression import dask_sketch, gram_and_count, stacked_rows
from cvxdp.errors import UnsupportedProblemError

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
    with pytest.raises(UnsupportedProblemError, match="in memory"):
        prob.solve_private(epsilon=1.0, delta=1e-6, mechanism="ls")
    with pytest.raises(UnsupportedProblemError, match="in memory"):
        prob.solve_private(epsilon=1.0, delta=1e-6, reference=True)


def test_dask_sketch_is_the_sum_of_the_blocks_sketches(dask_client):
    """D^T G with G_b drawn per block from SeedSequence(entropy, spawn_key=(b,)): the reduce
    equals the per-block computation done here in numpy (G in pieces of draw_rows rows)."""
    from cvxdp.estimation.random_projection import public_domain_rows

    X, y = _data(n=3000)
    r, bound = 7, 1.0
    data = stacked_rows(da.from_array(X, chunks=1000), da.from_array(y, chunks=1000))
    got = dask_sketch(data, bound, r, np.random.default_rng(5), block=7 * 300)
    entropy = [int(v) for v in np.random.default_rng(5).integers(0, 2**32, size=4)]
    mapped = public_domain_rows(np.column_stack([X, y]), bound)[0]
    want = np.zeros((4, r))
    for b in range(3):
        g = np.random.default_rng(np.random.SeedSequence(entropy, spawn_key=(b,)))
        for lo in range(1000 * b, 1000 * (b + 1), 300):
            part = mapped[lo:min(lo + 300, 1000 * (b + 1))]
            want += part.T @ g.standard_normal((len(part), r))
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def test_dask_rp_release(dask_client):
    """M_RP on Dask: the same privacy record as numpy, and an estimate as good (other G)."""
    X, y = _data()
    kw = dict(epsilon=1.0, delta=1e-6, rng=2, mechanism="rp", sketch_size=300, count_clipped=0.2)
    a = cvxdp.least_squares(X, y, row_bound=1.0).solve_private(**kw)
    b = cvxdp.least_squares(da.from_array(X, chunks=5000), da.from_array(y, chunks=5000),
                            row_bound=1.0).solve_private(**kw)
    assert b.privacy.records[0].params == a.privacy.records[0].params
    assert b.privacy.epsilon == pytest.approx(1.0)
    ok = np.isfinite(X).all(axis=1) & np.isfinite(y) & (np.arange(len(y)) != 4)
    exact = np.linalg.lstsq(X[ok], y[ok], rcond=None)[0]
    err_a, err_b = np.linalg.norm(a.coef - exact), np.linalg.norm(b.coef - exact)
    assert err_b < 0.1 and err_a < 0.1, (err_a, err_b)
    from cvxdp.estimation.random_projection import public_domain_rows

    count = public_domain_rows(np.column_stack([X, y]), 1.0)[1]
    assert abs(b.info["clipped_rows_noisy"] - count) < 5 * b.info["laplace_scale_count"]
