"""The private minimum enclosing ball on a Dask array over a LocalCluster (issue 24).

Same data and seed: the Dask path (chunk-wise counts and sums, reduced on the workers, noise on
the client) releases the numpy path's ball up to the order of additions (rtol 1e-9), including
the clipping of points outside the public box and of non-finite points, and the opt-in noisy
count of clipped points.
"""

import warnings

import numpy as np
import pytest

import cvxdp
from cvxdp.errors import UnsupportedProblemError
from cvxdp.geometry.meb.meb_private import MEBSchedule

#: The "practical" preset capped at 12 iterations per call: each iteration is one reduce
#: round trip (~50 ms on a shared 2-core LocalCluster), so the tests stay fast.
SHORT = MEBSchedule("practical-short", 8.0, 4.0, 100.0, 1, 1.0, 0.75, 12, 1.0)

da = pytest.importorskip("dask.array")


def _data(n=5000, d=3, seed=3):
    X = np.random.default_rng(seed).uniform(-1, 1, (n, d))
    X[7, :3] = [np.nan, 3.0, 1e9]    # clipped: NaN -> box centre, 1e9 -> face
    X[11, 0] = -5.0                  # outside the box
    return X


def _both(X, chunks, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)    # the vacuous-bound warning (local model)
        a = cvxdp.min_enclosing_ball(X).solve_private(**kw)
        Xd = da.from_array(X, chunks=chunks).persist()     # the data live on the workers
        b = cvxdp.min_enclosing_ball(Xd).solve_private(**kw)
    return a, b


@pytest.mark.parametrize("model", ["central", "local"])
def test_dask_meb_releases_the_numpy_ball(dask_client, model):
    X = _data()
    kw = dict(epsilon=2.0, delta=1e-6, bounds=(-2, 2), rng=7, accuracy=0.5, model=model,
              count_clipped=True, schedule=SHORT)
    a, b = _both(X, (1500, 3), **kw)
    assert a.iterations == b.iterations and a.iterations >= 3
    assert a.info["goodcenter_rounds"] == b.info["goodcenter_rounds"]
    assert a.info["search_path"] == b.info["search_path"]
    np.testing.assert_allclose(b.ball.center, a.ball.center, rtol=1e-9, atol=1e-12)
    assert b.ball.radius == pytest.approx(a.ball.radius, rel=1e-9)
    assert b.info["clipped_points_noisy"] == pytest.approx(a.info["clipped_points_noisy"],
                                                           rel=1e-12)
    assert b.privacy.rho == a.privacy.rho and b.privacy.epsilon == a.privacy.epsilon


def test_dask_meb_float32_and_column_chunks(dask_client):
    """float32 storage and blocks split by columns give the same answer as float64 in memory
    (every block is cast to float64 and re-split by rows only)."""
    X = _data(n=3000, d=4).astype(np.float32).astype(np.float64)
    kw = dict(rho=0.5, bounds=(-2, 2), rng=1, accuracy=0.5, schedule=SHORT)
    a = cvxdp.min_enclosing_ball(X).solve_private(**kw)
    b = cvxdp.min_enclosing_ball(
        da.from_array(X.astype(np.float32), chunks=(1000, 2)).persist()).solve_private(**kw)
    np.testing.assert_allclose(b.ball.center, a.ball.center, rtol=1e-9, atol=1e-12)
    assert b.ball.radius == pytest.approx(a.ball.radius, rel=1e-9)


def test_dask_meb_refuses_the_exact_solves(dask_client):
    prob = cvxdp.min_enclosing_ball(da.zeros((100, 2), chunks=50))
    with pytest.raises(UnsupportedProblemError, match="in memory"):
        prob.solve()
    with pytest.raises(UnsupportedProblemError, match="in memory"):
        prob.solve_private(rho=1.0, bounds=(-1, 1), reference=True)
