"""Exact "points outside ``B(theta, r)``" queries for a slowly moving centre.

Every iteration of MMEB and DP-MMEB (Alg. 2, 4 and 5 of the DP-MEB paper) needs, for a fixed
radius ``r`` and the current centre ``theta``, the count
``k = |{x : ||x - theta|| > r}|`` and the sum of those points.  A full pass costs ``O(n d)``
per iteration, yet ``theta`` moves by a small step (``gamma^2/8`` of the mean displacement in §6)
and only the points near the sphere can change side.  :class:`OutsideIndex` answers the *same*
query exactly while touching only those points.

Levels
------
Level ``j`` has an anchor ``a_j`` (a past centre), a margin ``M_j`` and holds

* its *band*: the points of level ``j-1``'s band with ``| ||x - a_j|| - r | <= M_j`` (a compact
  copy, so that evaluating it is a contiguous pass; kept as the same fixed pieces as the data,
  see below);
* the count and sum of the points of level ``j-1``'s band with ``||x - a_j|| > r + M_j``.

The root (level 0) is every point, with no margin.  While ``||theta - a_j|| <= M_j`` for every
level, the triangle inequality ``||x - a_j|| - ||theta - a_j|| <= ||x - theta|| <=
||x - a_j|| + ||theta - a_j||`` shows that the points a level leaves out of its band are inside
``B(theta, r)`` (``||x - a_j|| < r - M_j``) or outside it (``> r + M_j``, counted in the
aggregate), so ``k`` is the sum of the aggregates plus an exact test of the deepest band.
A level whose anchor drifted too far is dropped and rebuilt from its parent's band at the current
centre; a deeper level is built when the deepest band is large.  A new level's margin ``M``
minimises its per-iteration cost, ``BUILD_COST * step / M`` (a build reads the parent's band once
and lasts about ``M / step`` iterations) plus its band's share of the parent, read off the
distances of a strided sample of 8,192 parent rows; ``M`` is at least four recent steps and at
most half the parent's margin, the band holds at most half the parent's rows (so the copies of
all levels together stay below ``n`` rows; each depth's buffers, reused at every rebuild, have
at most 1/4 spare), and a level that would cost more than testing the parent's band is not
built (the margin's choice and the split of the parent's band:
:mod:`~cvxdp.geometry.meb.meb_levels`).

Every bound is applied to squared distances with a slack ``tau = 1e-9 S^2`` (``S`` bounds every
norm involved), far above the rounding error of either side, so the side of every point agrees
with the direct test ``||x||^2 - 2<x, theta> > r^2 - ||theta||^2`` used on band points, which is
also the test of the full pass.  The answer is the full pass's up to the rounding of the sum
(see "Incremental evaluation").

Data of at least ``PARALLEL_ROWS`` rows are split into ``CHUNKS`` fixed pieces; piece ``i`` of a
band holds rows of piece ``i`` of its parent, so the pieces (and the order of every sum) depend
on the data only, and the pieces of a large band run on a thread pool.  The row loops are those
of :mod:`~cvxdp.geometry.meb.meb_kernels` (numpy, or compiled by numba), one choice per index.

Anchor cache
------------
DP-MMEB's binary search (Alg. 3) restarts every call at the same ``theta0``, so each call's
first query builds a level from the root anchored at ``theta0``, at a new radius.  The numpy
loops' first step of that build, ``t = ||x||^2 + <x, -2 a> + ||a||^2`` for every point, does not
depend on the radius: the index keeps the values of its first root build (``n`` floats, only
when :func:`keeps_anchor_cache`) and a later root build at the same anchor (bitwise) splits on
them instead of reading the rows again (about 7 ms of each call's ~20 ms build at
1e6 x 20).  The same operations on the same numbers: the same levels and answers bit for bit.

Incremental evaluation
----------------------
With the numpy loops the deepest band is tested at every query (one matrix-vector product over
its rows), but its count and sum are not summed afresh: each piece keeps the outside mask, count
and sum of its previous query and adds the rows that moved outside, minus those that moved
inside (between two queries the centre moves one step, so few rows change side).  This skips a
second read of every band row per query (~110 -> ~55 us per query at 1e6 x 20).  A
band under ``POOL_ROWS`` rows is kept as one piece (one call per query instead of ``CHUNKS``).
Sides are decided by the full pass's test, so counts are the full pass's exactly; sums differ
from a fresh sum only in the order of additions.

Repeated rows are stored once with their multiplicity when the data repeat a lot
(:func:`compress_rows`: grid or categorical data, such as §6's product distribution with at most
``2^d`` distinct points); every pass then weighs each stored row by its multiplicity.

Sums are of the coordinates as given: their rounding grows with ``||x||``, so callers translate
the data by a public centre first (the private pipeline uses the public box centre;
``meb_private``, "Floating point").

Privacy is unaffected: the index computes the same function of the data as the full pass.  Its
running time, like the algorithm's early halting, depends on the data (timing is not protected;
``docs/privacy.md``).
"""

from __future__ import annotations

import numpy as np

from cvxdp.geometry.meb import meb_kernels as kernels
from cvxdp.geometry.meb.meb_levels import BUILD_COST, BandBuffers, Level, choose_margin, split_level
from cvxdp.geometry.meb.meb_rows import (
    compress_rows,
    count_sum_since,
    inside_mask,
    keeps_anchor_cache,
    map_pieces,
    norm2,
    outside_full,
    row_chunks,
    slack,
    sq_dists,
    sq_norms,
    stored_rows,
    thread_pool,
)

# The row passes live in meb_rows; their names stay importable from here.
__all__ = ["OutsideIndex", "compress_rows", "inside_mask", "outside_full", "slack", "sq_dists",
           "sq_norms", "stored_rows"]


#: The read-share guard: when the index's cost per query (rows of bands evaluated plus
#: BUILD_COST per row read by builds, a moving average over ~GUARD_WINDOW queries, so that a
#: build is spread over the queries it serves) exceeds GUARD_SHARE of the stored rows, a plain
#: pass over the root (one streaming read, nothing written) is cheaper, so the next GUARD_WAIT
#: queries are plain passes; then the index is tried again (the wait doubles, up to 256, while
#: it keeps losing).
GUARD_SHARE, GUARD_WINDOW, GUARD_WAIT = 1.0, 16, 8


class OutsideIndex:
    """Exact count and sum of the points outside ``B(theta, r)`` for a slowly moving ``theta``.

    Parameters
    ----------
    points : (n, d) array
        The points (not copied; must not change while the index is used).
    min_band : int
        Do not build a deeper level for a band smaller than this (a pass over it is cheap).
    key : hashable, optional
        What selection of points this index holds, for callers that must check it (DP-MMEB's
        kept set, whose radius its sensitivity proof uses).
    compress : bool
        Store repeated rows once with their multiplicity (:func:`compress_rows`; only when the
        data repeat a lot, decided on a sample).  Same answers.
    sqn : (n,) array, optional
        ``einsum("ij,ij->i", points, points)`` if the caller has it already (saves a pass).
    exclude : (rows, sqn), optional
        A few rows of ``points`` (copies, with their squared norms) that the index must leave
        out: every answer subtracts their count and sum outside the ball, tested by the same
        loops (so each row's side is the one the index gives it).  Lets a caller drop a few
        rows without copying all the others (:func:`~cvxdp.geometry.meb.meb_private.kept_index`).
    include : (rows, sqn), optional
        A few more rows (e.g. clipped images of excluded ones) that every answer adds, tested
        by the same loops.
    anchor_values : (a, t), optional
        ``t = einsum("ij,j->i", points, -2 a) + sqn`` for every row (GoodCenter computed them
        at its released centre, the centre every DP-MMEB call starts at): the anchor cache is
        seeded with them (``t`` is taken over and ``||a||^2`` added in place, the numbers
        ``anchor_values_np`` gives), saving the first root build a read.  Used only when the
        cache is kept (:func:`keeps_anchor_cache`) and the rows are stored as given.

    Notes
    -----
    ``query(theta, r)`` returns what :func:`outside_full` returns, touching only points near the
    sphere.  Queries at a new ``r`` start again from the root.  ``work`` counts the point-rows
    read so far (root builds and band evaluations), for benchmarks.  ``len(index)`` is the number
    of points; ``rows``/``weights`` are what is stored (``weights`` is ``None`` unless
    compressed).

    References
    ----------
    Mahpud & Sheffet (2022), Algorithm 2 (line 4: ``U <- P minus B(theta^t, r)``),
    Algorithm 4 (the noisy count and sum over the same set), Algorithm 5 (the same per user).
    """

    def __init__(self, points: np.ndarray, *, min_band: int = 2048, key: object = None,
                 compress: bool = True, sqn: np.ndarray | None = None,
                 exclude: tuple[np.ndarray, np.ndarray] | None = None,
                 include: tuple[np.ndarray, np.ndarray] | None = None,
                 anchor_values: tuple[np.ndarray, np.ndarray] | None = None) -> None:
        self.key = key
        points = stored_rows(points)
        self._exclude = exclude if exclude is not None and len(exclude[1]) else None
        self._include = include if include is not None and len(include[1]) else None
        self._n = (len(points) - (0 if self._exclude is None else len(self._exclude[1]))
                   + (0 if self._include is None else len(self._include[1])))
        self.rows, self.weights = compress_rows(points) if compress else (points, None)
        if sqn is None or self.weights is not None:
            sqn = sq_norms(self.rows)
        self.sqn = sqn
        self.loops = kernels.pick(*self.rows.shape)
        self._root = [(self.rows[lo:hi], self.sqn[lo:hi],
                       None if self.weights is None else self.weights[lo:hi])
                      for lo, hi in row_chunks(len(self.sqn))]
        self._buffers = BandBuffers(self.rows.shape[1], self.rows.dtype)
        self.min_band = int(min_band)
        self._norm = float(np.sqrt(self.sqn.max())) if len(self.sqn) else 0.0
        self._r: float | None = None
        self._levels: list[Level] = []
        self._step = 0.0          # moving average of ||theta^{t+1} - theta^t||
        self._last: np.ndarray | None = None
        self._cooldown = (0, 0)  # (depth, iterations): no new level at >= depth meanwhile
        self._backoff = 4
        self._read = 0.0           # moving average of the rows read per query / stored rows
        self._seen = 0             # queries in that average (since the last guarded stretch)
        self._built = 0            # rows read by builds so far
        self._plain = 0            # queries left to answer by a plain pass (the guard)
        self._guard_wait = GUARD_WAIT
        self.work = 0
        # Anchor cache: the first root build's values ||x - a||^2 (numpy loops, when the
        # memory rule of keeps_anchor_cache allows it).
        self._cache_anchor = keeps_anchor_cache(*self.rows.shape)
        self._anchor_cache: tuple[bytes, list] | None = None
        if anchor_values is not None and self._cache_anchor and self.weights is None:
            a, t = np.asarray(anchor_values[0], dtype=float), anchor_values[1]
            if t.shape == self.sqn.shape:
                t += a @ a
                self._anchor_cache = (a.tobytes(), [t[lo:hi] for lo, hi in
                                                    row_chunks(len(self.sqn))])
        # Excluded and included rows stacked for one test per query (numpy loops, both sets).
        self._few = None
        self._few_last: tuple[bytes, int, np.ndarray] | None = None    # (mask, count, sum)
        if self.loops.name == "numpy" and self._exclude is not None and self._include is not None:
            self._few = (np.concatenate([self._exclude[0], self._include[0]]),
                         np.concatenate([self._exclude[1], self._include[1]]),
                         np.concatenate([np.full(len(self._exclude[1]), -1.0),
                                         np.ones(len(self._include[1]))]))

    def __len__(self) -> int:
        return self._n

    def outside(self, theta: np.ndarray, r: float) -> tuple[int, np.ndarray]:
        """One full pass (no index): what :meth:`query` returns, for one-off radii."""
        theta = np.asarray(theta, dtype=float)
        k, s = outside_full(self.rows, self.sqn, theta, r, self.weights, self.loops)
        return self._excluded(k, s, theta, r)

    def count_outside(self, theta: np.ndarray, r: float) -> int:
        """The count of :meth:`outside` (DP-MMEB's final covering test needs no sum).

        With the anchor cache (``||x - a||^2`` of every stored row at the first root anchor
        ``a``) the rows with ``||x - a||`` beyond ``r + D`` (``D = ||theta - a||``) are outside
        and those within ``r - D`` inside, by the triangle inequality with the index's slack
        (the bounds of ``_build``); only the rows between are tested, by ``outside_full``'s
        test on the gathered rows.  A piece where more than 1/6 of the rows lie between is
        counted by a plain pass (no masked sum).  Every row's side is the full pass's.
        """
        theta = np.asarray(theta, dtype=float)
        v, c = -2.0 * theta, r * r - theta @ theta          # the test of outside_full
        cache = self._anchor_cache
        lo2 = hi2 = None
        if cache is not None and all(t is not None for t in cache[1]):
            a = np.frombuffer(cache[0])
            dist = norm2(theta - a)
            tau = slack(self._norm + norm2(a) + r + dist)
            hi2 = (r + dist) ** 2 + tau
            lo2 = (r - dist) ** 2 - tau if r > dist else -np.inf

        def count(i: int) -> int:
            pts, sqn, w = self._root[i]
            if hi2 is not None:
                t0 = cache[1][i]
                far = t0 > hi2
                near = kernels._indices(~far & (t0 >= lo2))
                if 6 * len(near) <= len(t0):
                    out = kernels.side_terms(np.take(pts, near, axis=0), sqn[near], v) > c
                    if w is None:
                        return int(np.count_nonzero(far)) + int(np.count_nonzero(out))
                    return int(w[far].sum()) + int(w[near][out].sum())
            out = kernels.side_terms(pts, sqn, v) > c
            return int(np.count_nonzero(out)) if w is None else int(w[out].sum())

        if self.loops.name != "numpy":
            k = outside_full(self.rows, self.sqn, theta, r, self.weights, self.loops)[0]
        elif len(self._root) == 1:
            k = count(0)
        else:
            k = sum(thread_pool().map(count, range(len(self._root))))
        return self._excluded(k, np.zeros(self.rows.shape[1]), theta, r)[0]

    def _excluded(self, k: int, s: np.ndarray, theta: np.ndarray, r: float
                  ) -> tuple[int, np.ndarray]:
        """``(k, s)`` minus the excluded rows' count and sum outside ``B(theta, r)``, plus the
        included rows'."""
        v, c = -2.0 * theta, r * r - theta @ theta
        if self._few is not None:
            # numpy loops: one test of both sets' rows (each row's einsum is the same number
            # stacked or not, so each row's side is count_sum's), then one signed sum of the
            # rows outside (-1: excluded, +1: included); no row outside adds nothing.
            # The signed count and sum depend on the set of rows outside only: when it is the
            # last query's (the usual case: the centre moved one step), they are reused.
            rows, sqn, sign = self._few
            key = (kernels.side_terms(rows, sqn, v) > c).tobytes()
            if self._few_last is None or self._few_last[0] != key:
                out = kernels._indices(np.frombuffer(key, dtype=bool))
                sg = sign[out]
                self._few_last = (key, int(sg.sum()), sg @ np.take(rows, out, axis=0))
            return k + self._few_last[1], s + self._few_last[2]
        if self._exclude is not None:
            ke, se = self.loops.count_sum(self._exclude[0], self._exclude[1], v, c, None)
            k, s = k - ke, s - se
        if self._include is not None:
            ki, si = self.loops.count_sum(self._include[0], self._include[1], v, c, None)
            k, s = k + ki, s + si
        return k, s

    def query(self, theta: np.ndarray, r: float) -> tuple[int, np.ndarray]:
        """``(k, sum_{||x - theta|| > r} x)``, exactly as :func:`outside_full` would."""
        theta = np.asarray(theta, dtype=float)
        if r != self._r:
            self._r = r
            d = self.rows.shape[1]
            self._levels = [Level(theta.copy(), np.inf, self._root, 0, np.zeros(d))]
            self._cooldown = (0, 0)
            # A new radius is a new DP-MMEB call, which restarts at theta0: the jump back is
            # not a step of the walk, and counting it made the next call's first ~10 queries
            # full passes (no margin paid at the inflated step; 0.15 s of 0.54 s).
            self._step, self._last = 0.0, None
        if self._last is not None:
            self._step = 0.8 * self._step + 0.2 * norm2(theta - self._last)
        self._last = theta.copy()
        stored = max(len(self.sqn), 1)
        if self._plain > 0:     # the guard: a plain pass (same answer), no levels kept
            self._plain -= 1
            self.work += stored
            k, s = outside_full(self.rows, self.sqn, theta, r, self.weights, self.loops)
            return self._excluded(k, s, theta, r)
        work0, built0 = self.work, self._built
        levels = self._levels
        for j in range(1, len(levels)):
            if norm2(theta - levels[j].anchor) > levels[j].margin:
                del levels[j:]
                break
        self._deepen(theta, r)
        deep = levels[-1]
        self.work += len(deep)
        v, c = -2.0 * theta, r * r - theta @ theta        # the test of outside_full
        k, s = deep.count, deep.total.copy()
        incremental = self.loops.name == "numpy"
        if incremental and deep.state is None:
            deep.state = [None] * len(deep.pieces)

        def count_sum(i: int) -> tuple[int, np.ndarray]:
            pts, sqn, w = deep.pieces[i]
            if incremental:
                return count_sum_since(deep.state, i, pts, sqn, w, v, c)
            return self.loops.count_sum(pts, sqn, v, c, w)

        for kp, sp in map_pieces(count_sum, deep):
            k += kp
            s += sp
        self._seen += 1
        cost = (self.work - work0 + (BUILD_COST - 1.0) * (self._built - built0)) / stored
        self._read += (cost - self._read) / min(self._seen, GUARD_WINDOW)
        if self._seen >= GUARD_WINDOW and self._read > GUARD_SHARE:
            self._plain, self._read, self._seen = self._guard_wait, 0.0, 0   # plain passes
            self._guard_wait = min(2 * self._guard_wait, 256)
            del levels[1:]
        elif self._seen >= GUARD_WINDOW:
            self._guard_wait = GUARD_WAIT
        return self._excluded(k, s, theta, r)

    def _deepen(self, theta: np.ndarray, r: float) -> None:
        """Build deeper levels at ``theta`` while the deepest band is large and shrinks."""
        depth, wait = self._cooldown
        self._cooldown = (depth, wait - 1)
        levels = self._levels
        while len(levels[-1]) > self.min_band:
            parent = levels[-1]
            if 4.0 * self._step > parent.margin / 2 or (len(levels) >= depth and wait > 0):
                return          # a child would not outlive four steps, or failed just now
            child = self._build(parent, theta, r)
            if child is None:
                # No margin pays for its builds here (the sphere runs through dense data, or
                # the centre moves fast).  Retry this depth (not the shallower ones) after 8,
                # 16, 32, ... iterations.
                self._backoff = min(2 * self._backoff, 256)
                self._cooldown = (len(levels), self._backoff)
                return
            self.work += len(parent)
            self._built += len(parent)
            self._backoff = 4
            levels.append(child)

    def _build(self, parent: Level, theta: np.ndarray, r: float) -> Level | None:
        """The level anchored at ``theta`` under ``parent``, or ``None`` if it would not pay
        (:func:`~cvxdp.geometry.meb.meb_levels.choose_margin` picks the margin,
        :func:`~cvxdp.geometry.meb.meb_levels.split_level` splits the parent's band); the
        first root build keeps its values in the anchor cache."""
        a = theta.copy()
        chosen = choose_margin(parent, a, r, self._step, self._n)
        if chosen is None:
            return None
        margin, share = chosen
        cache = None
        if parent.pieces is self._root and self._cache_anchor:
            if self._anchor_cache is None:      # the first root build: keep its values
                self._anchor_cache = (a.tobytes(), [None] * len(parent.pieces))
            if self._anchor_cache[0] == a.tobytes():
                cache = self._anchor_cache[1]
        return split_level(parent, a, r, margin, share, norm=self._norm,
                           depth=len(self._levels), loops=self.loops, buffers=self._buffers,
                           cache=cache)
