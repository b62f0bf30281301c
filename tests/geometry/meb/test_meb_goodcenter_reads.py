"""GoodCenter reads the data once per round (issue 24): the far count of round t and the sum of
round t+1 share one read, with the same released numbers bit for bit as two separate reads."""

import numpy as np
import pytest

from cvxdp.geometry.meb import goodcenter
from cvxdp.geometry.meb.meb_inputs import Patch


def _two_reads(points, patch, **kw):
    """Alg. 6 with one read per query (the shared read's arithmetic, each query on its own:
    inside_mask's test, sum x - k theta), for comparison."""
    sets = goodcenter._patched(points, patch)
    norms = [np.einsum("ij,ij->i", pts, pts) for pts, _ in sets]
    d = points.shape[1]

    def sum_at(theta, r):
        total = np.zeros(d)
        v, c = -2.0 * theta, r * r - theta @ theta
        for (pts, alive), sq in zip(sets, norms, strict=True):
            def part(lo, hi, pts=pts, alive=alive, sq=sq):
                t = np.einsum("ij,j->i", pts[lo:hi], v)
                t += sq[lo:hi]
                a = alive[lo:hi]
                a &= t <= c
                return np.append(np.einsum("i,ij->j", a.astype(float), pts[lo:hi]),
                                 float(np.count_nonzero(a)))
            both = goodcenter._summed(part, len(pts), d + 1, goodcenter.piece_rows(d))
            total += both[:d] - both[d] * theta
        return total

    def far_at(mu, r):
        total = 0.0
        v, c = -2.0 * mu, 0.25 * r * r - mu @ mu
        for (pts, alive), sq in zip(sets, norms, strict=True):
            def part(lo, hi, pts=pts, alive=alive, sq=sq):
                t = np.einsum("ij,j->i", pts[lo:hi], v)
                t += sq[lo:hi]
                return np.array([float(np.count_nonzero(alive[lo:hi] & (t > c)))])
            total += float(goodcenter._summed(part, len(pts), 1, goodcenter.piece_rows(d))[0])
        return total

    return goodcenter.good_center_loop(points.shape, sum_at, far_at, **kw)


@pytest.mark.parametrize("seed", range(5))
def test_shared_read_releases_the_same_numbers(seed):
    rng = np.random.default_rng(seed)
    n = [3000, 40000, 800, 12000, 2500][seed]
    pts = np.clip(rng.normal(rng.uniform(-2, 2, 3), rng.uniform(0.02, 2.0), (n, 3)), -5, 5)
    patch = None
    if seed % 2:
        rows = np.sort(rng.choice(n, 4, replace=False))
        patch = Patch(rows, np.clip(pts[rows] * 1.2, -5, 5))
    kw = dict(center=np.zeros(3), r_max=9.0, r_min=0.005, rho=float(rng.uniform(0.05, 3.0)),
              beta=1e-3)
    a = goodcenter.good_center(pts, rng=np.random.default_rng(seed), patch=patch, **kw)
    b = _two_reads(pts, patch, rng=np.random.default_rng(seed), **kw)
    assert a.iterations == b.iterations
    np.testing.assert_array_equal(a.center, b.center)   # same pieces, same order: same bits
    assert a.radius == b.radius and a.excluded_bound == b.excluded_bound


def test_one_read_per_round(monkeypatch):
    reads = []
    real = goodcenter._summed

    def counting(part, n, width, piece=goodcenter.PIECE_ROWS):
        reads.append(width)
        return real(part, n, width, piece)

    monkeypatch.setattr(goodcenter, "_summed", counting)
    pts = np.random.default_rng(0).normal(size=(5000, 3))
    res = goodcenter.good_center(pts, center=np.zeros(3), r_max=9.0, r_min=0.005, rho=1.0,
                                 beta=1e-3, rng=np.random.default_rng(0))
    # round 0's sum, then one read per far count (round t's count with round t+1's sum)
    assert len(reads) == res.iterations + 2


@pytest.mark.parametrize("seed", range(6))
def test_all_inside_is_the_kept_test(seed):
    """``GoodCenterResult.all_inside`` (issue 24: lets kept_index skip its check pass) is True
    exactly when every row passes kept_index's own test (``inside_mask`` at r0), and the index
    built with ``all_within`` answers every query as the one built with the check."""
    from cvxdp.geometry.meb.meb_index import inside_mask
    from cvxdp.geometry.meb.meb_private import kept_index

    def inside(p, c, r):
        return inside_mask(p, np.einsum("ij,ij->i", p, p), c, r)

    rng = np.random.default_rng(seed)
    n, d = [3000, 20000, 800, 5000, 2500, 9000][seed], [2, 5, 3, 8, 2, 4][seed]
    pts = np.clip(rng.normal(rng.uniform(-2, 2, d), rng.uniform(0.05, 2.5), (n, d)), -5, 5)
    r_max = 5 * np.sqrt(d)
    gc = goodcenter.good_center(pts, center=np.zeros(d), r_max=r_max, r_min=r_max / 1024,
                                rho=0.5, beta=0.05, rng=np.random.default_rng(seed))
    within = bool(np.all(inside(pts, gc.center, gc.radius)))
    assert gc.all_inside == within
    if within:
        a = kept_index(pts, gc.center, gc.radius, all_within=True)
        b = kept_index(pts, gc.center, gc.radius)
        for r in (0.3 * gc.radius, 0.7 * gc.radius):
            ka, sa = a.outside(gc.center + 0.01, r)
            kb, sb = b.outside(gc.center + 0.01, r)
            assert ka == kb and np.array_equal(sa, sb)


@pytest.mark.parametrize("seed", range(4))
def test_all_inside_with_patch(seed):
    """With a patch the flag covers the rows GoodCenter reads (all but the patched ones, plus
    their clipped images), and kept_index(..., all_within=True) builds the same index."""
    from cvxdp.geometry.meb.meb_index import inside_mask
    from cvxdp.geometry.meb.meb_private import kept_index

    def inside(p, c, r):
        return inside_mask(p, np.einsum("ij,ij->i", p, p), c, r)

    rng = np.random.default_rng(seed)
    d = 3
    if seed < 2:    # spread over the box: GoodCenter stops at B(0, R_max), which holds all
        pts = rng.uniform(-4.9, 4.9, (4000, d))
        rows = np.sort(rng.choice(4000, 6, replace=False))
        pts[rows, 0] = 5.5                             # just outside the box (-5, 5)^3
    else:
        pts = rng.normal(0, [0.5, 1.0, 1.5, 2.5][seed], (4000, d))
        rows = np.flatnonzero(np.any(np.abs(pts) > 1.5, axis=1))[:6]
        pts[rows] *= 4.0                               # outside the box (-5, 5)^3 mostly
    patch = Patch(rows, np.clip(pts[rows], -5, 5))
    r_max = 5 * np.sqrt(d)
    gc = goodcenter.good_center(pts, center=np.zeros(d), r_max=r_max, r_min=0.01, rho=0.5,
                                beta=0.05, rng=np.random.default_rng(seed), patch=patch)
    live = np.ones(len(pts), dtype=bool)
    live[rows] = False
    within = bool(np.all(inside(pts[live], gc.center, gc.radius))
                  and np.all(inside(patch.clipped, gc.center, gc.radius)))
    assert gc.all_inside == within
    if within:
        a = kept_index(pts, gc.center, gc.radius, patch=patch, all_within=True)
        b = kept_index(pts, gc.center, gc.radius, patch=patch)
        for r in (0.3 * gc.radius, 0.7 * gc.radius):
            ka, sa = a.outside(gc.center + 0.01, r)
            kb, sb = b.outside(gc.center + 0.01, r)
            assert ka == kb and np.array_equal(sa, sb)


@pytest.mark.parametrize("case", ["inside", "patched", "shifted", "copied"])
def test_working_points_squared_norms(case):
    """Issue 24: working_points computes the rows' squared norms in its box-test read; they are
    sq_norms' numbers bit for bit for the rows every reader uses (with a patch, the user's
    rows; with a shift or a clipped copy, the translated rows)."""
    from cvxdp.geometry.meb.meb_index import sq_norms
    from cvxdp.geometry.meb.meb_inputs import working_points

    rng = np.random.default_rng(5)
    pts = rng.uniform(-4, 4, (30000, 7))
    lo, hi = np.full(7, -5.0), np.full(7, 5.0)
    if case == "patched":
        pts[[3, 17000]] = 6.0
    if case == "shifted":
        pts, lo, hi = pts + 100.0, lo + 100.0, hi + 100.0
    if case == "copied":
        pts[::2] = 9.0                      # too many rows outside to patch
    out, count, shift, patch, sqn = working_points(pts, lo, hi)
    assert (patch is not None) == (case == "patched")
    assert (out is pts) == (case in ("inside", "patched"))
    np.testing.assert_array_equal(sqn, sq_norms(out))


@pytest.mark.parametrize("seed", range(3))
def test_anchor_values_seed_the_index_cache(seed):
    """Issue 24: GoodCenter's last test values at its released centre seed the MEB index's
    anchor cache; they are anchor_values_np's numbers bit for bit, the seeded index answers
    every query as an unseeded one bit for bit, and its first root build reads no row for them."""
    from cvxdp.geometry.meb import meb_kernels
    from cvxdp.geometry.meb.meb_index import OutsideIndex, sq_norms
    from cvxdp.geometry.meb.meb_private import kept_index

    rng = np.random.default_rng(seed)
    n, d = [30000, 12000, 50000][seed], 16
    pts = np.clip(rng.normal(rng.uniform(-1, 1, d), 1.0, (n, d)), -5, 5)
    sqn = sq_norms(pts)
    kw = dict(center=np.zeros(d), r_max=5 * np.sqrt(d), r_min=0.01, rho=1.0, beta=1e-3)
    gc = goodcenter.good_center(pts, rng=np.random.default_rng(seed), sqn=sqn,
                                keep_values=True, **kw)
    plain = goodcenter.good_center(pts, rng=np.random.default_rng(seed), sqn=sqn, **kw)
    assert gc.iterations >= 1 and plain.anchor_values is None
    np.testing.assert_array_equal(gc.center, plain.center)      # keeping changes nothing
    a, t = gc.anchor_values
    assert a is gc.center
    expect = meb_kernels.anchor_values_np(pts, sqn, -2.0 * a, a @ a)
    seeded = kept_index(pts, a, gc.radius, sqn=sqn, anchor_values=(a, t.copy()))
    np.testing.assert_array_equal(np.concatenate(seeded._anchor_cache[1]), expect)
    fresh = kept_index(pts, a, gc.radius, sqn=sqn)
    assert isinstance(seeded, OutsideIndex) and fresh._anchor_cache is None
    for r in (0.3 * gc.radius, 0.6 * gc.radius, 0.9 * gc.radius):
        theta = a.copy()
        for _ in range(20):
            ka, sa = seeded.query(theta, r)
            kb, sb = fresh.query(theta, r)
            assert ka == kb and np.array_equal(sa, sb)
            assert seeded.count_outside(theta, 1.2 * r) == fresh.count_outside(theta, 1.2 * r)
            theta = theta + 0.02 * rng.normal(size=d)
