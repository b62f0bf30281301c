"""private_gaussian(X, bounds=...) on a Dask array over a LocalCluster (issue 24).

Same data and seed: the clipped mean, the CoinPress rounds (each round's whitened, clipped
second moment of the pair differences reduced on the workers) or the one-shot second moment,
and the opt-in noisy count equal the numpy path's up to the order of additions (rtol 1e-9),
with non-finite and out-of-bounds records.  Without bounds (issue 24 item 1 for
private_gaussian(X)): the seeded row permutation is applied by Dask on the workers and every
step's statistic is reduced there, so the practical and preconditioned pipelines release the
numpy path's numbers up to the order of additions; the robust and Ashtiani-Liaw methods are
refused on Dask.
"""

import numpy as np
import pytest

import cvxdp
from cvxdp.errors import UnsupportedProblemError

da = pytest.importorskip("dask.array")


def _data(n, d=3, seed=1):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) @ np.diag(np.linspace(0.5, 1.5, d)) + 1.0
    X[4, 1] = np.nan           # mapped to the zero row
    X[8] = 40.0                # clipped into the bounds
    return X


@pytest.mark.parametrize("n, bounds, one_shot", [
    (400, (-4.0, 6.0), True),
    (20000, {"centre": 1.0, "radius": 8.0}, False),
])
def test_dask_bounded_gaussian_releases_the_numpy_estimate(dask_client, n, bounds, one_shot):
    X = _data(n)
    kw = dict(epsilon=1.0, delta=1e-6, bounds=bounds, rng=3, count_clipped=True)
    a = cvxdp.private_gaussian(X, **kw)
    b = cvxdp.private_gaussian(da.from_array(X, chunks=(n // 3 + 1, 2)).persist(), **kw)
    assert a.info.get("covariance_one_shot", False) is one_shot
    np.testing.assert_allclose(b.mean, a.mean, rtol=1e-9)
    np.testing.assert_allclose(b.covariance, a.covariance, rtol=1e-9, atol=1e-12)
    assert b.info["clipped_rows_noisy"] == pytest.approx(a.info["clipped_rows_noisy"],
                                                         rel=1e-12)
    assert b.status == a.status and b.privacy.epsilon == a.privacy.epsilon
    if not one_shot:   # and a useful estimate: the true mean is 1 in every coordinate
        assert np.abs(b.mean - 1.0).max() < 0.1


def test_dask_bounded_gaussian_mean_only(dask_client):
    X = _data(3000)
    kw = dict(epsilon=1.0, delta=1e-6, bounds=(-4.0, 6.0), rng=5, estimate="mean")
    a = cvxdp.private_gaussian(X, **kw)
    b = cvxdp.private_gaussian(da.from_array(X, chunks=700), **kw)
    assert b.covariance is None
    np.testing.assert_allclose(b.mean, a.mean, rtol=1e-9)


@pytest.mark.filterwarnings("ignore::cvxdp.estimation.gaussians.GaussianSampleWarning")
@pytest.mark.parametrize("method", ["auto", "preconditioned"])
def test_dask_unbounded_gaussian_releases_the_numpy_estimate(dask_client, method):
    n = 20000
    X = _data(n)
    X[:, 2] = 0.3 * X[:, 0] + 2.0       # rank 2: the orthogonal-mean step runs too
    X[4, 1] = np.nan
    kw = dict(epsilon=1.0, delta=1e-6, rng=7, count_clipped=True, method=method)
    a = cvxdp.private_gaussian(X, **kw)
    b = cvxdp.private_gaussian(da.from_array(X, chunks=(3001, 3)).persist(), **kw)
    assert a.mean is not None and a.rank == 2
    assert a.info["method"] == ("practical" if method == "auto" else method)
    np.testing.assert_allclose(b.mean, a.mean, rtol=1e-8)
    np.testing.assert_allclose(b.covariance, a.covariance, rtol=1e-8, atol=1e-10)
    assert b.rank == a.rank and b.status == a.status
    assert b.info["block_sizes"] == a.info["block_sizes"]
    assert b.info["clipped_rows_noisy"] == pytest.approx(a.info["clipped_rows_noisy"],
                                                         rel=1e-12)
    assert b.privacy.epsilon == a.privacy.epsilon
    assert np.abs(b.mean - [1.0, 1.0, 2.3]).max() < 0.2   # and a useful estimate


def test_dask_gaussian_refuses_what_needs_memory(dask_client):
    Xd = da.from_array(_data(500), chunks=200)
    for kw in ({"robust": True}, {"method": "ashtiani-liaw"}):
        with pytest.raises(UnsupportedProblemError, match="Dask"):
            cvxdp.private_gaussian(Xd, epsilon=1.0, delta=1e-6, **kw)
    with pytest.raises(UnsupportedProblemError, match="in memory"):
        cvxdp.private_gaussian(Xd, epsilon=1.0, delta=1e-6, bounds=(-4, 6), reference=True)


def test_chunk_histograms_sum_to_the_numpy_histogram_with_an_empty_chunk():
    """The per-chunk cell counts merged (as on the workers) are the numpy path's histogram,
    cells in the same order, also when a chunk has no rows (a slice can make one)."""
    from cvxdp.dask_backend.gaussians import _chunk_counts, _merge_counts
    from cvxdp.estimation.gaussian_steps import cell_counts, log_cells, mean_cells

    a = np.random.default_rng(0).standard_normal((60, 3)) * [1.0, 10.0, 1e3]
    a[5, 1] = np.nan
    chunks = [a[:25], a[25:25], a[25:]]
    cols = _merge_counts(*[_chunk_counts(c, log_cells, (), True) for c in chunks])
    for j, (cells, counts) in enumerate(cols):
        ref = cell_counts(log_cells(a)[:, j])
        np.testing.assert_array_equal(cells, ref[0])
        np.testing.assert_array_equal(counts, ref[1])
    args = (np.array([0.3, 1.0, 2.0]), 4.0)
    cells, counts = _merge_counts(*[_chunk_counts(c, mean_cells, args, False)
                                    for c in chunks])[0]
    ref = cell_counts(mean_cells(a, *args))
    np.testing.assert_array_equal(cells, ref[0])
    np.testing.assert_array_equal(counts, ref[1])
