"""The MEB index's row loops: numpy and numba give the same counts, sums and bands."""

import importlib.util

import numpy as np
import pytest

from cvxdp.geometry.meb import meb_kernels
from cvxdp.geometry.meb.meb_index import OutsideIndex, outside_full

needs_numba = pytest.mark.skipif(importlib.util.find_spec("numba") is None,
                                 reason="numba not installed (pip install 'cvxdp[fast]')")


def _data(seed, n=30011, d=7, weighted=False):
    rng = np.random.default_rng(seed)
    pts = rng.normal(size=(n, d)) * rng.uniform(0.5, 2.0, d)
    w = rng.integers(1, 50, n).astype(np.int64) if weighted else None
    return pts, np.einsum("ij,ij->i", pts, pts), rng.normal(size=d) * 0.3, w


def test_backend_follows_the_fixture(kernels):
    assert meb_kernels.pick(10).name == kernels


@needs_numba
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("r", [0.5, 3.0, 6.0, 50.0])
def test_count_sum_agrees_across_backends(weighted, r):
    pts, sqn, theta, w = _data(1, weighted=weighted)
    v, c = -2.0 * theta, r * r - theta @ theta
    k_np, s_np = meb_kernels._NUMPY.count_sum(pts, sqn, v, c, w)
    k_nb, s_nb = meb_kernels._compiled().count_sum(pts, sqn, v, c, w)
    # Independent oracle: distances by differences, counted in Python integers.
    out = np.linalg.norm(pts - theta, axis=1) > r
    k_ref = int(out.sum()) if w is None else int(w[out].sum())
    assert k_np == k_nb == k_ref
    ref = (pts[out] if w is None else w[out, None] * pts[out]).sum(axis=0)
    np.testing.assert_allclose(s_np, ref, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(s_nb, ref, rtol=1e-9, atol=1e-9)


@needs_numba
@pytest.mark.parametrize("weighted", [False, True])
def test_split_agrees_across_backends(weighted):
    pts, sqn, a, w = _data(2, weighted=weighted)
    v, aa = -2.0 * a, a @ a
    lo2, hi2 = 2.0**2, 3.0**2
    dist2 = ((pts - a) ** 2).sum(axis=1)
    band = (dist2 >= lo2) & (dist2 <= hi2)
    far = dist2 > hi2
    for loops in (meb_kernels._NUMPY, meb_kernels._compiled()):
        n = len(pts) + 5                                  # buffers larger than needed
        out = (np.full((n, pts.shape[1]), np.nan), np.full(n, np.nan),
               None if w is None else np.full(n, -1, dtype=np.int64))
        k, s, nb = loops.split(pts, sqn, v, aa, lo2, hi2, w, out)
        assert k == (int(far.sum()) if w is None else int(w[far].sum()))
        ref = (pts[far] if w is None else w[far, None] * pts[far]).sum(axis=0)
        np.testing.assert_allclose(s, ref, rtol=1e-9)
        assert nb == band.sum()
        np.testing.assert_array_equal(out[0][:nb], pts[band])       # the band, in row order
        np.testing.assert_array_equal(out[1][:nb], sqn[band])
        if w is not None:
            np.testing.assert_array_equal(out[2][:nb], w[band])


def test_points_exactly_on_the_sphere_are_inside(kernels):
    """Integer lattice points at squared distance exactly r^2 from an integer centre: every
    operation is exact in any order, so both backends count them inside (as the test ``>`` says);
    the oracle is integer arithmetic."""
    g = np.arange(-6, 7)
    pts = np.stack(np.meshgrid(g, g, g, indexing="ij"), -1).reshape(-1, 3).astype(float)
    pts = np.repeat(pts, 200, axis=0)             # above the threaded-pass threshold
    theta = np.array([1.0, -2.0, 0.0])
    ipts = pts.astype(np.int64)
    d2 = ((ipts - theta.astype(np.int64)) ** 2).sum(axis=1)
    for r in (3, 5, 7):
        r2 = r * r
        assert ((d2 == r2).sum()) > 0                 # there are ties
        k, s = outside_full(pts, np.einsum("ij,ij->i", pts, pts), theta, float(r))
        assert k == int((d2 > r2).sum())
        np.testing.assert_array_equal(s, ipts[d2 > r2].sum(axis=0))


def test_auto_uses_numba_only_for_large_data(monkeypatch):
    monkeypatch.setitem(meb_kernels._state, "choice", "auto")
    assert meb_kernels.pick(meb_kernels.FAST_ROWS - 1).name == "numpy"
    big = meb_kernels.pick(meb_kernels.FAST_ROWS).name
    assert big == ("numba" if importlib.util.find_spec("numba") else "numpy")
    # issue 24: where the index keeps its anchor cache the numpy loops (incremental bands,
    # cached anchor values) are the faster ones, at any size
    cache_rows = meb_kernels.ANCHOR_CACHE_BYTES // 8
    assert meb_kernels.pick(10**9, meb_kernels.ANCHOR_CACHE_D).name == "numpy"
    assert meb_kernels.pick(cache_rows, 5).name == "numpy"
    assert meb_kernels.pick(cache_rows + 1, 5).name == big
    assert meb_kernels.pick(10**9, meb_kernels.ANCHOR_CACHE_D - 1).name == big


def test_an_index_keeps_the_loops_it_started_with(monkeypatch):
    """One backend per dataset: the index, its bands and its full pass decide sides alike."""
    pts = np.random.default_rng(3).normal(size=(5000, 3))
    monkeypatch.setitem(meb_kernels._state, "choice", "numpy")
    idx = OutsideIndex(pts)
    assert idx.loops.name == "numpy"
    monkeypatch.setitem(meb_kernels._state, "choice", "auto")
    assert idx.loops.name == "numpy"


def test_bad_backend_names_and_missing_numba_are_clear(monkeypatch):
    with pytest.raises(ValueError, match="'auto', 'numba' or 'numpy'"):
        meb_kernels.set_backend("fortran")
    monkeypatch.setitem(meb_kernels._state, "numba", None)       # as if numba were missing
    with pytest.raises(ImportError, match=r"pip install 'cvxdp\[fast\]'"):
        meb_kernels.set_backend("numba")
    monkeypatch.setitem(meb_kernels._state, "choice", "auto")
    assert meb_kernels.pick(10**9).name == "numpy"             # auto falls back quietly


def test_match_finds_every_row_of_the_dictionary(kernels):
    """compress_rows' lookup: a row equal to a dictionary row always finds it (its key is
    computed by the same loop), and every other row is reported unmatched."""
    rng = np.random.default_rng(5)
    dictionary = np.unique(rng.integers(-3, 4, (300, 6)).astype(float) / 3, axis=0)
    pick = rng.integers(0, len(dictionary), 20000)
    pts = np.concatenate([dictionary[pick], rng.normal(size=(37, 6))])
    loops = meb_kernels.pick(len(pts))
    g = rng.standard_normal(6)
    dkeys = loops.keys(dictionary, g)
    order = np.argsort(dkeys)
    counts, unmatched = loops.match(pts, g, dkeys[order], dictionary[order])
    np.testing.assert_array_equal(counts, np.bincount(np.argsort(order)[pick],
                                                      minlength=len(dictionary)))
    np.testing.assert_array_equal(unmatched, np.arange(20000, 20037))
