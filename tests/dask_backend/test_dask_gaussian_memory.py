"""The Gaussian learner on a Dask array brings nothing the size of the data to the client.

The one random permutation of the rows is drawn tile by tile (cvxdp.estimation.row_partition):
the client draws the per-tile seeds and block counts, the workers permute their tiles.  The
client's allocations during a call are measured by tracemalloc (numpy reports its buffers to it;
the worker processes are not traced, the LocalCluster's scheduler runs in the client process and
is).  Before: the no-bounds call
allocated 1.17x the array on the client at 4e6 x 8 (x[perm] with the n indices built there).
"""

from __future__ import annotations

import tracemalloc
import warnings

import numpy as np
import pytest

import cvxdp
from cvxdp.estimation import row_partition
from cvxdp.estimation.row_partition import permuted_blocks, tile_plan

da = pytest.importorskip("dask.array")


@pytest.fixture
def small_tiles(monkeypatch):
    monkeypatch.setattr(row_partition, "TILE", 1 << 14)


def _client_peak(fn):
    tracemalloc.start()
    try:
        out = fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return out, peak


def test_tiled_blocks_are_a_uniformly_random_partition():
    """n = 12 rows in tiles of 5, blocks of sizes 4, 3, 2 (3 rows unused), 8000 draws: every row
    lands in block b with probability size_b / n, and two rows share a block with the same
    probability sum s_b (s_b - 1) / (n (n - 1)) whether they are in one tile or in two (a
    uniformly random partition; 5 standard errors)."""
    rng = np.random.default_rng(0)
    x = np.arange(12.0)[:, None]
    sizes = {"a": 4, "b": 3, "c": 2}
    runs = 8000
    where = np.empty((runs, 12), dtype=int)
    for r in range(runs):
        blocks = permuted_blocks(x, sizes, rng, tile=5)
        where[r] = 3
        for k, name in enumerate(sizes):
            assert len(blocks[name]) == sizes[name]
            where[r, blocks[name][:, 0].astype(int)] = k
    for k, s in enumerate(sizes.values()):
        freq = (where == k).mean(0)
        assert np.all(np.abs(freq - s / 12) < 5 * np.sqrt(s / 12 * (1 - s / 12) / runs))
    p_same = sum(s * (s - 1) for s in [4, 3, 2, 3]) / (12 * 11)
    for i, j in [(0, 1), (0, 7), (4, 5), (9, 11)]:  # same tile, two tiles, two, same
        f = (where[:, i] == where[:, j]).mean()
        assert abs(f - p_same) < 5 * np.sqrt(p_same * (1 - p_same) / runs), (i, j, f)


def test_tile_plan_is_public_and_small():
    counts, seeds = tile_plan(10_000_000, [3_000_000, 2_000_000], np.random.default_rng(1),
                              1 << 20)
    assert counts.shape == (10, 3) and seeds.shape == (10,)
    assert counts.sum(0).tolist() == [3_000_000, 2_000_000, 5_000_000]
    assert counts.sum(1).tolist() == [1 << 20] * 9 + [10_000_000 - 9 * (1 << 20)]


@pytest.mark.filterwarnings("ignore::cvxdp.estimation.gaussians.GaussianSampleWarning")
def test_tiled_dask_path_releases_the_numpy_estimate(dask_client, small_tiles):
    """n = 40000 in tiles of 2^14 (3 tiles): the Dask release equals the numpy one."""
    X = np.random.default_rng(3).standard_normal((40_000, 3)) + [1.0, 2.0, 3.0]
    kw = dict(epsilon=1.0, delta=1e-6, rng=7)
    a = cvxdp.private_gaussian(X, **kw)
    b = cvxdp.private_gaussian(da.from_array(X, chunks=(7001, 3)).persist(), **kw)
    assert a.mean is not None
    np.testing.assert_allclose(b.mean, a.mean, rtol=1e-8)
    np.testing.assert_allclose(b.covariance, a.covariance, rtol=1e-8, atol=1e-10)
    assert np.abs(a.mean - [1.0, 2.0, 3.0]).max() < 0.2


@pytest.mark.slow
def test_client_allocates_a_small_fraction_of_the_array(dask_client, monkeypatch):
    """1.6e6 x 8 (102 MB) persisted on two workers, tiles of 2e5 rows: during private_gaussian
    (no bounds, and bounds) and least squares the client allocates under 10% of the array
    (tracemalloc; what remains is the in-process scheduler's bookkeeping and the small
    reductions, a few MB whatever n).  Before the tiled permutation the no-bounds call
    allocated 1.17x the array at 4e6 x 8 (x[perm] with the n row indices and Dask's index
    lists on the client); at 4e6 x 8 it is now 0.016x (docs/gaussians.md)."""
    n, d = 1_600_000, 8
    monkeypatch.setattr(row_partition, "TILE", 200_000)
    X = (da.random.RandomState(0).standard_normal((n, d), chunks=(200_000, d)) + 10.0).persist()
    y = X[:, 0] * 0.5
    calls = {
        "gaussian": lambda z, w: cvxdp.private_gaussian(z, epsilon=1.0, delta=1e-6, rng=1),
        "gaussian bounds": lambda z, w: cvxdp.private_gaussian(z, epsilon=1.0, delta=1e-6,
                                                               rng=1, bounds=(0.0, 20.0)),
        "least squares": lambda z, w: cvxdp.least_squares(z / 40, w / 40, row_bound=1.0)
        .solve_private(epsilon=1.0, delta=1e-6, rng=1),
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        peaks = {}
        for k, fn in calls.items():
            fn(X[:400_000], y[:400_000])  # imports and caches outside the measurement
            peaks[k] = _client_peak(lambda fn=fn: fn(X, y))[1] / X.nbytes
    assert max(peaks.values()) < 0.1, peaks


def _status_bytes(key: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key):
                return int(line.split()[1]) * 1024
    raise KeyError(key)


def _client_peak_rss_growth(fn) -> int:
    """Growth of the client process's peak resident set (VmHWM) during ``fn()``: the peak is
    reset first (``/proc/self/clear_refs``, Linux), so it is the call's own peak above the
    resident set it started from."""
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
    before = _status_bytes("VmRSS")
    fn()
    return _status_bytes("VmHWM") - before


_ESTIMATORS = {
    "gaussian": lambda z, w: cvxdp.private_gaussian(z, epsilon=1.0, delta=1e-6, rng=1),
    "gaussian bounds": lambda z, w: cvxdp.private_gaussian(z, epsilon=1.0, delta=1e-6, rng=1,
                                                           bounds=(0.0, 20.0)),
    "least squares": lambda z, w: cvxdp.least_squares(z / 40, w / 40, row_bound=1.0)
    .solve_private(epsilon=1.0, delta=1e-6, rng=1),
    "enclosing ball": lambda z, w: cvxdp.min_enclosing_ball(z).solve_private(
        epsilon=1.0, delta=1e-6, rng=1, bounds=(0.0, 20.0), accuracy=0.5),
    "john ellipsoid": lambda z, w: cvxdp.john_ellipsoid((z - 10.0) / 10.0).solve_private(
        epsilon=1.0, delta=1e-6, rng=1, row_bound=1.0, closeness=1e-4, accuracy=0.9),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", list(_ESTIMATORS))
def test_client_peak_rss_stays_small_for_every_dask_estimator(dask_client, monkeypatch, name):
    """1.6e6 x 8 (102 MB) persisted on two workers (tiles of 2e5 rows): the client's peak RSS
    (VmHWM) grows by under 10% of the array during one call of each Dask estimator.  Measured:
    gaussian 0.047x, with bounds 0.006x, least squares 0.003x, enclosing ball 0.039x, John
    ellipsoid 0.013x (before its uniform weights were built on the workers: 0.49x, the n
    weights made and scaled on the client).  The issue's numbers at 4e6 x 8: gaussian 1.19x,
    enclosing ball 0.15x, least squares 0.02x."""
    import os

    if not os.path.exists("/proc/self/clear_refs"):
        pytest.skip("needs Linux's /proc/self/clear_refs to reset VmHWM")
    n, d = 1_600_000, 8
    monkeypatch.setattr(row_partition, "TILE", 200_000)
    X = (da.random.RandomState(0).standard_normal((n, d), chunks=(200_000, d)) + 10.0).persist()
    y = X[:, 0] * 0.5
    fn = _ESTIMATORS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fn(X[:400_000], y[:400_000])  # imports and caches outside the measurement
        growth = _client_peak_rss_growth(lambda: fn(X, y)) / X.nbytes
    assert growth < 0.1, f"{name}: the client's peak RSS grew by {growth:.3f}x the array"
