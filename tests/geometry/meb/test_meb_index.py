"""OutsideIndex answers exactly what one full pass answers, touching far fewer points."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cvxdp.geometry.meb.meb_index import OutsideIndex, outside_full


@pytest.fixture(autouse=True)
def _every_backend(kernels):
    """Every test here runs with the numpy loops and with the compiled ones."""


def _brute(pts, theta, r):
    out = np.linalg.norm(pts - theta, axis=1) > r
    return int(out.sum()), pts[out].sum(axis=0) if out.any() else np.zeros(pts.shape[1])


def _walk(rng, d, steps, step, jump_every=None):
    theta = rng.normal(size=d)
    for t in range(steps):
        theta = theta + step * rng.normal(size=d)
        if jump_every and t % jump_every == jump_every - 1:
            theta = theta + rng.normal(size=d)
        yield theta


@pytest.mark.parametrize("d", [2, 10])
@pytest.mark.parametrize("jump_every", [None, 37])
def test_index_matches_full_pass_on_random_walks(d, jump_every):
    rng = np.random.default_rng(d)
    pts = rng.normal(size=(20000, d)) * rng.uniform(0.5, 2.0, d)
    idx = OutsideIndex(pts, min_band=256)
    sqn = np.einsum("ij,ij->i", pts, pts)
    for r in (2.5, 4.0, 0.7):
        for theta in _walk(rng, d, 150, 0.01, jump_every):
            k, s = idx.query(theta, r)
            k_ref, s_ref = outside_full(pts, sqn, theta, r)
            assert k == k_ref
            np.testing.assert_allclose(s, s_ref, rtol=1e-10, atol=1e-9 * (1 + k))
    assert len(idx._levels) >= 1


def test_full_pass_matches_brute_force_distances():
    rng = np.random.default_rng(3)
    pts = rng.uniform(-3, 3, (5000, 4))
    theta = rng.normal(size=4)
    k, s = outside_full(pts, np.einsum("ij,ij->i", pts, pts), theta, 3.0)
    k_ref, s_ref = _brute(pts, theta, 3.0)
    assert k == k_ref > 0
    np.testing.assert_allclose(s, s_ref, rtol=1e-12)


def test_points_exactly_on_the_sphere_get_the_full_pass_answer():
    """Ties: integer points at distance exactly r from integer centres (no rounding in either)."""
    g = np.arange(-4, 5, dtype=float)
    pts = np.array(np.meshgrid(g, g, g)).reshape(3, -1).T      # 729 lattice points
    pts = np.repeat(pts, 8, axis=0)
    idx = OutsideIndex(pts, min_band=16)
    sqn = np.einsum("ij,ij->i", pts, pts)
    for theta in ([0, 0, 0], [1, 0, 0], [1, 1, 0], [1, 1, 1], [1, 1, 0]):
        theta = np.asarray(theta, dtype=float)
        for r in (3.0, 3.0, 5.0):
            k, s = idx.query(theta, r)
            k_ref, s_ref = outside_full(pts, sqn, theta, r)
            assert k == k_ref
            np.testing.assert_allclose(s, s_ref, atol=1e-9)


def test_far_away_data_and_empty_answers():
    rng = np.random.default_rng(5)
    pts = rng.normal(1000.0, 1.0, (3000, 3))
    idx = OutsideIndex(pts, min_band=64)
    sqn = np.einsum("ij,ij->i", pts, pts)
    for theta in _walk(rng, 3, 60, 0.05):
        for r in (1e-3, 3.0, 1e4):
            th = theta + 1000.0
            k, s = idx.query(th, r)
            k_ref, s_ref = outside_full(pts, sqn, th, r)
            assert k == k_ref
            np.testing.assert_allclose(s, s_ref, rtol=1e-12, atol=1e-6)
    assert idx.query(np.zeros(3), 1e5)[0] == 0


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), r=st.floats(0.05, 5.0), step=st.floats(1e-4, 0.5))
def test_index_property_random_instances(seed, r, step):
    rng = np.random.default_rng(seed)
    pts = rng.standard_t(3, size=(1500, 3))
    idx = OutsideIndex(pts, min_band=32)
    sqn = np.einsum("ij,ij->i", pts, pts)
    for theta in _walk(rng, 3, 40, step):
        k, s = idx.query(theta, r)
        k_ref, s_ref = outside_full(pts, sqn, theta, r)
        assert k == k_ref
        np.testing.assert_allclose(s, s_ref, rtol=1e-9, atol=1e-9 * (1 + np.abs(pts).sum()))


def test_slow_centre_touches_a_small_fraction_of_the_points():
    """The point of the index: a centre that drifts slowly costs much less than full passes."""
    rng = np.random.default_rng(7)
    n, d = 100_000, 10
    pts = rng.normal(size=(n, d))
    idx = OutsideIndex(pts)
    iters = 300
    theta = np.zeros(d)
    for _ in range(iters):
        idx.query(theta, 5.0)
        theta = theta + 0.002 * rng.normal(size=d)
    assert idx.work < 0.05 * n * iters     # measured: ~0.01; a full pass per iteration is 1.0


def test_threaded_chunks_give_the_same_answer(monkeypatch):
    """Large passes run as CHUNKS row chunks on threads; force that on a small instance."""
    from cvxdp.geometry.meb import meb_rows  # the row passes' chunk sizes live there

    monkeypatch.setattr(meb_rows, "PARALLEL_ROWS", 64)
    monkeypatch.setattr(meb_rows, "POOL_ROWS", 64)
    rng = np.random.default_rng(11)
    pts = rng.normal(size=(5003, 4))
    sqn = np.einsum("ij,ij->i", pts, pts)
    idx = OutsideIndex(pts, min_band=100)
    for r in (1.5, 2.5):
        for theta in _walk(rng, 4, 80, 0.01, 23):
            k, s = idx.query(theta, r)
            k_ref, s_ref = _brute(pts, theta, r)
            assert k == k_ref
            np.testing.assert_allclose(s, s_ref, rtol=1e-10, atol=1e-9 * (1 + k))
            assert outside_full(pts, sqn, theta, r)[0] == k_ref
    assert len(idx._levels) > 1         # bands were built through the chunked path


def _child_query(pts, theta, r, expected, queue):
    from cvxdp.geometry.meb import meb_rows

    meb_rows.PARALLEL_ROWS = meb_rows.POOL_ROWS = 64
    queue.put(meb_rows.outside_full(pts, np.einsum("ij,ij->i", pts, pts), theta, r)[0] == expected)


def test_threaded_passes_work_in_a_forked_child(monkeypatch):
    """A process forked after the thread pool started gets a pool of its own (no hang)."""
    import multiprocessing as mp

    from cvxdp.geometry.meb import meb_rows  # the row passes' chunk sizes live there

    monkeypatch.setattr(meb_rows, "PARALLEL_ROWS", 64)
    monkeypatch.setattr(meb_rows, "POOL_ROWS", 64)
    pts = np.random.default_rng(12).normal(size=(4000, 3))
    theta = np.full(3, 0.1)
    expected = _brute(pts, theta, 2.0)[0]
    assert outside_full(pts, np.einsum("ij,ij->i", pts, pts), theta, 2.0)[0] == expected
    ctx = mp.get_context("fork")
    queue = ctx.Queue()
    child = ctx.Process(target=_child_query, args=(pts, theta, 2.0, expected, queue))
    child.start()
    child.join(timeout=60)
    alive = child.is_alive()
    if alive:
        child.kill()
    assert not alive and child.exitcode == 0 and queue.get(timeout=5)


def _grid_data(rng, n, d, extra=0):
    """Points on {-1, 1}^d shifted (the §6 product data), plus ``extra`` continuous rows."""
    p = 2.0 ** -np.arange(1, d + 1)
    pts = np.where(rng.random((n, d)) < p, 1.0, -1.0) + rng.integers(-4, 5, d)
    if extra:
        pts[rng.choice(n, extra, replace=False)] = rng.normal(size=(extra, d))
    return pts


def test_compress_rows_keeps_every_weighted_sum():
    from cvxdp.geometry.meb.meb_index import compress_rows

    rng = np.random.default_rng(21)
    pts = _grid_data(rng, 100_000, 6, extra=300)
    rows, w = compress_rows(pts)
    assert w is not None and len(rows) <= 64 + 300 and w.dtype == np.int64
    assert w.sum() == len(pts) and (w >= 1).all()
    np.testing.assert_allclose(w @ rows, pts.sum(axis=0), rtol=1e-12)
    np.testing.assert_allclose(w @ np.einsum("ij,ij->i", rows, rows),
                               np.einsum("ij,ij->i", pts, pts).sum(), rtol=1e-12)
    # Every stored row is a data row, with the data's own multiplicity.
    uniq, counts = np.unique(pts, axis=0, return_counts=True)
    assert {tuple(r): c for r, c in zip(rows, w, strict=True)} == {
        tuple(r): c for r, c in zip(uniq, counts, strict=True)}


def test_compress_rows_leaves_continuous_or_half_repeated_data_alone():
    from cvxdp.geometry.meb.meb_index import compress_rows

    rng = np.random.default_rng(22)
    pts = rng.normal(size=(100_000, 5))
    assert compress_rows(pts)[1] is None
    # The sample (every 12th row) repeats, the rest does not: matched < 3/4, so no compression.
    pts[:: len(pts) // 8192] = 1.0
    rows, w = compress_rows(pts)
    assert w is None and rows is pts


@pytest.mark.parametrize("threads", [False, True])
def test_compressed_index_matches_the_full_pass_on_grid_data(monkeypatch, threads):
    from cvxdp.geometry.meb import meb_rows  # the row passes' chunk sizes live there

    if threads:
        monkeypatch.setattr(meb_rows, "PARALLEL_ROWS", 64)
        monkeypatch.setattr(meb_rows, "POOL_ROWS", 64)
    rng = np.random.default_rng(23)
    pts = _grid_data(rng, 60_000, 5, extra=500)
    sqn = np.einsum("ij,ij->i", pts, pts)
    idx = OutsideIndex(pts, min_band=8)
    assert idx.weights is not None and len(idx) == len(pts) and len(idx.rows) < 600
    c = pts.mean(axis=0).round()
    # Integer centres and radii^2: many grid points lie exactly on the sphere (ties).
    for r in (np.sqrt(5.0), 2.0, 3.0):
        walk = [c + t for t in _walk(rng, 5, 60, 0.01)]
        for theta in [c, c, c + [1, 0, 0, 0, 0], *walk]:
            k, s = idx.query(theta, r)
            k_ref, s_ref = outside_full(pts, sqn, theta, r)
            assert k == k_ref
            np.testing.assert_allclose(s, s_ref, rtol=1e-10, atol=1e-8)
            assert idx.outside(theta, r)[0] == k_ref
    assert idx.work < 0.05 * len(pts) * 180         # passes over distinct rows only


def test_kept_index_keeps_exactly_the_points_in_the_kept_ball():
    """Alg. 3 line 1: the index holds the points with ||x - theta0|| <= R (integer oracle,
    points exactly on the sphere kept), whether or not every point is kept."""
    from cvxdp.geometry.meb.meb_private import kept_index

    g = np.arange(-5, 6)
    pts = np.stack(np.meshgrid(g, g, g, indexing="ij"), -1).reshape(-1, 3).astype(float)
    pts = np.concatenate([pts, pts[::7] + 0.5])
    theta0 = np.array([1.0, 0.0, -1.0])
    d2 = ((pts - theta0) ** 2).sum(axis=1)
    for radius in (3.0, 5.0, 100.0):
        idx = kept_index(pts, theta0, radius, compress=False)
        assert len(idx) == int((d2 <= radius**2).sum())
        assert (d2 == radius**2).any() or radius == 100.0
        assert sorted(map(tuple, idx.rows)) == sorted(map(tuple, pts[d2 <= radius**2]))


def test_anchor_cache_gives_the_same_answers(monkeypatch):
    """Issue 24: the root builds of DP-MMEB's calls (each restarts at theta0, at a new radius)
    split on the first root build's cached values; every answer equals the uncached index's bit
    for bit, and the cache is really used (keeps_anchor_cache, numpy loops)."""
    from cvxdp.geometry.meb import meb_kernels

    monkeypatch.setitem(meb_kernels._state, "choice", "numpy")
    rng = np.random.default_rng(3)
    pts = rng.normal(size=(40000, 16))
    theta0 = rng.normal(size=16) * 0.05

    def walk(index):
        out = []
        for r in (3.5, 4.6, 4.0, 5.2):          # a new radius restarts at theta0
            theta = theta0.copy()
            for _ in range(30):
                k, s = index.query(theta, r)
                out.append((k, s.tobytes()))
                theta = theta + 0.02 * s / max(k, 1) / np.sqrt(16)
        return out

    cached = OutsideIndex(pts, compress=False)
    assert cached._cache_anchor
    got = walk(cached)
    assert cached._anchor_cache is not None and all(t is not None
                                                    for t in cached._anchor_cache[1])
    monkeypatch.setattr(meb_kernels, "ANCHOR_CACHE_D", 10**9)
    monkeypatch.setattr(meb_kernels, "ANCHOR_CACHE_BYTES", 0)
    plain = OutsideIndex(pts, compress=False)
    assert not plain._cache_anchor
    assert walk(plain) == got
    for r in (3.5, 5.2):
        k, s = outside_full(pts, np.einsum("ij,ij->i", pts, pts), theta0, r)
        k2, s2 = OutsideIndex(pts, compress=False).query(theta0, r)
        assert k == k2
        np.testing.assert_allclose(s2, s, rtol=1e-12, atol=1e-9)


def test_sq_norms_and_the_compress_precheck():
    """Issue 24: the parallel squared norms are einsum's numbers row for row, and the
    projection pre-check of compress_rows makes the decision np.unique makes."""
    from cvxdp.geometry.meb.meb_index import compress_rows, sq_norms

    rng = np.random.default_rng(5)
    pts = rng.normal(size=(300001, 7)) * rng.uniform(0.1, 50, (300001, 1))
    np.testing.assert_array_equal(sq_norms(pts), np.einsum("ij,ij->i", pts, pts))
    assert compress_rows(pts)[1] is None                      # distinct rows: no compression
    grid = rng.integers(0, 3, size=(200000, 6)).astype(float)  # 729 distinct rows
    rows, w = compress_rows(grid)
    assert w is not None and w.sum() == len(grid) and len(rows) <= 729


def test_stacked_exclude_include_same_answers(monkeypatch):
    """Issue 24: with both excluded and included rows (a patch), the numpy loops test them in
    one stacked pass with one signed sum; every count equals the two separate count_sum calls
    and every sum equals theirs up to rounding (the same rows, added in another order)."""
    from cvxdp.geometry.meb import meb_kernels

    monkeypatch.setitem(meb_kernels._state, "choice", "numpy")
    rng = np.random.default_rng(8)
    pts = rng.normal(size=(20000, 5))
    drop = np.sort(rng.choice(20000, 9, replace=False))
    extra = np.clip(pts[drop] * 3, -2, 2)
    sq = np.einsum("ij,ij->i", pts, pts)
    kw = dict(compress=False, exclude=(pts[drop], sq[drop]),
              include=(extra, np.einsum("ij,ij->i", extra, extra)))
    stacked, plain = OutsideIndex(pts, **kw), OutsideIndex(pts, **kw)
    assert stacked._few is not None
    plain._few = None
    hits = 0
    for r in (0.5, 1.5, 2.2, 3.0):
        for _ in range(5):
            theta = rng.normal(size=5) * 0.3
            a, b = stacked.query(theta, r), plain.query(theta, r)
            assert a[0] == b[0]
            np.testing.assert_allclose(a[1], b[1], rtol=1e-12, atol=1e-9)
            a, b = stacked.outside(theta, r), plain.outside(theta, r)
            assert a[0] == b[0]
            np.testing.assert_allclose(a[1], b[1], rtol=1e-12, atol=1e-9)
            hits += int(np.any(np.linalg.norm(extra - theta, axis=1) > r))
    assert hits > 0                      # included rows were really outside some balls
    live = np.ones(20000, dtype=bool)
    live[drop] = False
    ref = np.concatenate([pts[live], extra])
    k, s = stacked.outside(np.zeros(5), 1.5)
    kr, sr = _brute(ref, np.zeros(5), 1.5)
    assert k == kr
    np.testing.assert_allclose(s, sr, atol=1e-9)


@pytest.mark.parametrize("threads", [False, True])
@pytest.mark.parametrize("data", ["gauss", "grid", "patched"])
def test_count_outside_is_the_full_pass_count(monkeypatch, threads, data):
    """Issue 24: DP-MMEB's final covering test counts without summing, by the anchor cache's
    bounds and a test of the rows between them; the count equals the full pass's at every
    centre and radius (near the anchor, far from it, on the sphere's ties of grid data)."""
    from cvxdp.geometry.meb import meb_rows  # the row passes' chunk sizes live there

    if threads:
        monkeypatch.setattr(meb_rows, "PARALLEL_ROWS", 64)
        monkeypatch.setattr(meb_rows, "POOL_ROWS", 64)
    rng = np.random.default_rng(31)
    if data == "grid":
        pts = np.vstack([_grid_data(rng, 60_000, 5, extra=500)] * 4)[:, [0, 1, 2, 3, 4] * 4]
    else:
        pts = rng.normal(size=(40000, 16))
    kw = {}
    if data == "patched":
        drop = np.sort(rng.choice(len(pts), 7, replace=False))
        extra = np.clip(pts[drop] * 3, -2, 2)
        sq = np.einsum("ij,ij->i", pts, pts)
        kw = dict(exclude=(pts[drop], sq[drop]),
                  include=(extra, np.einsum("ij,ij->i", extra, extra)))
    idx = OutsideIndex(pts, min_band=8, **kw)       # bands even over ~600 distinct grid rows
    assert (idx.weights is not None) == (data == "grid")
    theta0 = pts.mean(axis=0).round()
    checked = 0
    for r in (2.5, 4.0, np.sqrt(20.0)):
        theta = theta0.copy()
        for _ in range(15):
            idx.query(theta, r)              # builds the root level (and the anchor cache)
            for rr in (r, 1.2 * r, 0.5 * r):
                for centre in (theta, theta + 0.4, theta0):
                    assert idx.count_outside(centre, rr) == idx.outside(centre, rr)[0]
                    checked += 1
            theta = theta + 0.01 * rng.normal(size=pts.shape[1])
    assert checked == 3 * 15 * 9
    if idx.loops.name == "numpy":
        assert idx._anchor_cache is not None      # the cached path really ran
