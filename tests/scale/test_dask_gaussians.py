"""private_gaussian(X, bounds=...) on a Dask array over a LocalCluster (issue 24).

Same data and seed: the clipped mean, the CoinPress rounds (each round's whitened, clipped
second moment of the pair differences reduced on the workers) or the one-shot second moment,
and the opt-in noisy count equal the numpy path's up to the order of additions (rtol 1e-9),
with non-finite and out-of-bounds records.  Without bounds the pipeline is refused on Dask.
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


def test_dask_gaussian_refuses_what_needs_memory(dask_client):
    Xd = da.from_array(_data(500), chunks=200)
    with pytest.raises(UnsupportedProblemError, match="bounds="):
        cvxdp.private_gaussian(Xd, epsilon=1.0, delta=1e-6)
    with pytest.raises(UnsupportedProblemError, match="in memory"):
        cvxdp.private_gaussian(Xd, epsilon=1.0, delta=1e-6, bounds=(-4, 6), reference=True)
