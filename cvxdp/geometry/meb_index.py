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
  copy, so that evaluating it is one contiguous pass);
* the count and sum of the points of level ``j-1``'s band with ``||x - a_j|| > r + M_j``.

The root (level 0) is every point, with no margin.  While ``||theta - a_j|| <= M_j`` for every
level, the triangle inequality ``||x - a_j|| - ||theta - a_j|| <= ||x - theta|| <=
||x - a_j|| + ||theta - a_j||`` shows that the points a level leaves out of its band are inside
``B(theta, r)`` (``||x - a_j|| < r - M_j``) or outside it (``> r + M_j``, counted in the
aggregate), so ``k`` is the sum of the aggregates plus an exact test of the deepest band.
A level whose anchor drifted too far is dropped and rebuilt from its parent's band at the current
centre; a deeper level is built when the deepest band is large.  A new level's margin ``M``
minimises its per-iteration cost, ``BUILD_COST * step / M`` (a build reads the parent's band once
and lasts about ``M / step`` iterations) plus its band's share of the parent, read off a sample of
the distances the build computes anyway; ``M`` is at least four recent steps and at most half the
parent's margin, the band holds at most half the parent's rows (so the copies of all levels
together stay below ``n`` rows), and a level that would cost more than testing the parent's band
is not built.

Every bound is applied to squared distances with a slack ``tau = 1e-9 S^2`` (``S`` bounds every
norm involved), far above the rounding error of either side, so the side of every point agrees
with the direct test ``||x||^2 - 2<x, theta> > r^2 - ||theta||^2`` used on band points, which is
also the test of the full pass.  The answer is the full pass's up to the rounding of the sum.

Repeated rows are stored once with their multiplicity when the data repeat a lot
(:func:`compress_rows`: grid or categorical data, such as §6's product distribution with at most
``2^d`` distinct points); every pass then weighs each stored row by its multiplicity.

Privacy is unaffected: the index computes the same function of the data as the full pass.  Its
running time, like the algorithm's early halting, depends on the data (timing is not protected;
``docs/privacy.md``).
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

__all__ = ["OutsideIndex", "compress_rows", "outside_full", "sq_dists"]

#: Cost of building a level, per row of its parent, in units of testing one row (measured 1.4-2;
#: §6 run times are flat for values from 1 to 3).
BUILD_COST = 2.0
#: Passes over at least this many rows run as ``CHUNKS`` row chunks on threads.
PARALLEL_ROWS = 1 << 18
CHUNKS = 4
_POOL: tuple[int, ThreadPoolExecutor] | None = None


def sq_dists(points: np.ndarray, center: np.ndarray, chunk: int = 1 << 18) -> np.ndarray:
    """``||p_i - center||^2`` by differences (no cancellation), in row chunks on the thread
    pool (no ``(n, d)`` temporary at 1e8 points; each chunk's result is the same on any pool)."""
    out = np.empty(len(points))

    def part(i: int) -> None:
        diff = points[i:i + chunk] - center
        out[i:i + chunk] = np.einsum("ij,ij->i", diff, diff)

    list(_pool().map(part, range(0, len(points), chunk)))
    return out


def compress_rows(points: np.ndarray, *, sample: int = 8192,
                  max_distinct: float = 0.125) -> tuple[np.ndarray, np.ndarray | None]:
    """Rows with multiplicities: ``(rows, w)`` with ``sum_i w_i f(rows_i) = sum_x f(x)`` for every
    ``f``, or ``(points, None)`` when the data do not repeat much.

    Data on a small grid (categorical or rounded records; the product distribution of §6 has
    at most ``2^d`` distinct points) are compressed to their distinct rows, so every later pass
    costs the number of distinct rows instead of ``n``.  Detection reads a strided sample of
    ``sample`` rows: compression runs only if it holds at most ``max_distinct`` of the sample as
    distinct rows.  The dictionary is the sample's distinct rows; every row is matched to it by
    a random projection and then compared to its match coordinate by coordinate, so the result is
    exact whatever the projection; rows without an exact match are kept as they are (merged
    among themselves when at most 2^18).  Gives up (returns ``(points, None)``) if more than 1/4
    of the rows are unmatched.
    """
    n = len(points)
    if n < 4 * sample:
        return points, None
    sub = points[:: n // sample][:sample]
    dictionary = np.unique(sub, axis=0)
    if len(dictionary) > max_distinct * len(sub):
        return points, None
    g = np.random.default_rng(0).standard_normal(points.shape[1])
    dkeys = dictionary @ g
    order = np.argsort(dkeys)
    dictionary, dkeys = dictionary[order], dkeys[order]
    if np.any(np.diff(dkeys) == 0):      # two dictionary rows share a key: not worth untangling
        return points, None
    pos = np.empty(n, dtype=np.intp)
    matched = np.empty(n, dtype=bool)

    def match(lo: int) -> None:          # look up, then check every coordinate of the match
        hi = min(n, lo + (1 << 18))
        pos[lo:hi] = np.minimum(np.searchsorted(dkeys, points[lo:hi] @ g), len(dkeys) - 1)
        matched[lo:hi] = (points[lo:hi] == dictionary[pos[lo:hi]]).all(axis=1)

    list(_pool().map(match, range(0, n, 1 << 18)))
    rest = n - int(np.count_nonzero(matched))
    if rest > n // 4:
        return points, None
    w = np.bincount(pos[matched], minlength=len(dictionary))
    keep = w > 0
    rows, w = dictionary[keep], w[keep]
    if rest:
        left, w_left = points[~matched], np.ones(rest, dtype=w.dtype)
        if rest <= 1 << 18:          # rare rows the sample missed may still repeat
            left, w_left = np.unique(left, axis=0, return_counts=True)
        rows = np.concatenate([rows, left])
        w = np.concatenate([w, w_left])
    return rows, w.astype(np.int64)


def outside_full(pts: np.ndarray, sqn: np.ndarray, theta: np.ndarray, r: float,
                 w: np.ndarray | None = None) -> tuple[int, np.ndarray]:
    """One pass: ``(k, sum of the rows of pts outside B(theta, r))``; ``sqn`` = row norms^2.

    ``w`` (integer multiplicities of the rows, see :func:`compress_rows`) counts row ``i`` as
    ``w[i]`` points."""
    # ||x - theta||^2 > r^2 as ||x||^2 - 2 <x, theta> > r^2 - ||theta||^2, with the -2 folded into
    # the vector (exact: a power of two), so the test is bitwise the textbook one.
    v, c = -2.0 * theta, r * r - theta @ theta

    def part(lo: int, hi: int) -> tuple[int, np.ndarray | float]:
        t = np.einsum("ij,j->i", pts[lo:hi], v)
        t += sqn[lo:hi]
        return _count_sum(pts[lo:hi], t > c, None if w is None else w[lo:hi])

    parts = _map_rows(part, len(sqn))
    k = sum(p[0] for p in parts)
    total = np.zeros(pts.shape[1])
    for p in parts:
        total += p[1]
    return k, total


def _map_rows(fn, m: int) -> list:
    """``fn(lo, hi)`` over row chunks: one chunk below ``PARALLEL_ROWS``, else ``CHUNKS`` equal
    chunks on a thread pool (numpy releases the GIL).  The chunks depend on ``m`` only, so sums
    combine in the same order on every machine and a seed gives the same output bit for bit."""
    if m < PARALLEL_ROWS:
        return [fn(0, m)]
    b = [m * i // CHUNKS for i in range(CHUNKS + 1)]
    return list(_pool().map(lambda i: fn(b[i], b[i + 1]), range(CHUNKS)))


def _pool() -> ThreadPoolExecutor:
    global _POOL
    # One pool per process: a child forked after the pool started would inherit a pool whose
    # threads do not exist in it, and its work would never run.
    if _POOL is None or _POOL[0] != os.getpid():
        _POOL = (os.getpid(), ThreadPoolExecutor(max_workers=min(CHUNKS, os.cpu_count() or 1)))
    return _POOL[1]


def _count_sum(pts: np.ndarray, mask: np.ndarray,
               w: np.ndarray | None) -> tuple[int, np.ndarray | float]:
    """``(number, sum)`` of the rows of ``pts`` where ``mask``, row ``i`` counted ``w[i]`` times
    (``w`` None: once); ``(0, 0.0)`` when none."""
    k = int(np.count_nonzero(mask))
    if not k:
        return 0, 0.0
    return (k if w is None else int(w[mask].sum())), _masked_sum(pts, mask, k, w)


def _masked_sum(pts: np.ndarray, mask: np.ndarray, k: int,
                w: np.ndarray | None = None) -> np.ndarray:
    """Sum of the ``k`` rows of ``pts`` where ``mask`` (row ``i`` counted ``w[i]`` times):
    gather them when few, else one pass."""
    if 6 * k < len(mask):     # a gathered row costs ~5x a streamed one
        idx = _indices(mask)
        rows = np.take(pts, idx, axis=0)
        return rows.sum(axis=0) if w is None else w[idx].astype(float) @ rows
    return np.einsum("i,ij->j", mask.astype(float) if w is None else np.where(mask, w, 0.0),
                     pts)


def _indices(mask: np.ndarray) -> np.ndarray:
    idx = np.flatnonzero(mask)
    return idx.astype(np.int32) if len(mask) < 2**31 else idx   # int32 gathers ~5x faster


@dataclass
class _Level:
    anchor: np.ndarray
    margin: float
    pts: np.ndarray            # the band (level 0: every point, a view)
    sqn: np.ndarray
    count: int                 # outside points left out of this and every shallower band
    total: np.ndarray          # their sum
    w: np.ndarray | None = None    # multiplicities of the band's rows (None: all 1)


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

    Notes
    -----
    ``query(theta, r)`` returns what :func:`outside_full` returns, touching only points near the
    sphere.  Queries at a new ``r`` start again from the root.  ``work`` counts the point-rows
    read so far (root builds and band evaluations), for benchmarks.  ``len(index)`` is the number
    of points; ``rows``/``weights`` are what is stored (``weights`` is ``None`` unless
    compressed).

    References
    ----------
    ``001_a326031cb50d1cab.txt``, Algorithm 2 (line 4: ``U <- P minus B(theta^t, r)``),
    Algorithm 4 (the noisy count and sum over the same set), Algorithm 5 (the same per user).
    """

    def __init__(self, points: np.ndarray, *, min_band: int = 2048, key: object = None,
                 compress: bool = True) -> None:
        self.key = key
        points = np.ascontiguousarray(points, dtype=float)
        self._n = len(points)
        self.rows, self.weights = compress_rows(points) if compress else (points, None)
        self.sqn = np.einsum("ij,ij->i", self.rows, self.rows)
        self.min_band = int(min_band)
        self._norm = float(np.sqrt(self.sqn.max())) if len(self.sqn) else 0.0
        self._r: float | None = None
        self._levels: list[_Level] = []
        self._step = 0.0          # moving average of ||theta^{t+1} - theta^t||
        self._last: np.ndarray | None = None
        self._cooldown = (0, 0)  # (depth, iterations): no new level at >= depth meanwhile
        self._backoff = 4
        self.work = 0

    def __len__(self) -> int:
        return self._n

    def outside(self, theta: np.ndarray, r: float) -> tuple[int, np.ndarray]:
        """One full pass (no index): what :meth:`query` returns, for one-off radii."""
        return outside_full(self.rows, self.sqn, np.asarray(theta, dtype=float), r, self.weights)

    def query(self, theta: np.ndarray, r: float) -> tuple[int, np.ndarray]:
        """``(k, sum_{||x - theta|| > r} x)``, exactly as :func:`outside_full` would."""
        theta = np.asarray(theta, dtype=float)
        if r != self._r:
            self._r = r
            d = self.rows.shape[1]
            self._levels = [_Level(theta.copy(), np.inf, self.rows, self.sqn, 0, np.zeros(d),
                                   self.weights)]
            self._cooldown = (0, 0)
        if self._last is not None:
            self._step = 0.8 * self._step + 0.2 * float(np.linalg.norm(theta - self._last))
        self._last = theta.copy()
        levels = self._levels
        for j in range(1, len(levels)):
            if np.linalg.norm(theta - levels[j].anchor) > levels[j].margin:
                del levels[j:]
                break
        self._deepen(theta, r)
        deep = levels[-1]
        self.work += len(deep.sqn)
        k, s = outside_full(deep.pts, deep.sqn, theta, r, deep.w)
        return deep.count + k, deep.total + s

    def _deepen(self, theta: np.ndarray, r: float) -> None:
        """Build deeper levels at ``theta`` while the deepest band is large and shrinks."""
        depth, wait = self._cooldown
        self._cooldown = (depth, wait - 1)
        levels = self._levels
        while len(levels[-1].sqn) > self.min_band:
            parent = levels[-1]
            if 4.0 * self._step > parent.margin / 2 or (len(levels) >= depth and wait > 0):
                return          # a child would not outlive four steps, or failed just now
            child = self._build(parent, theta, r)
            self.work += len(parent.sqn)
            if child is None:
                # No margin pays for its builds here (the sphere runs through dense data, or
                # the centre moves fast).  Retry this depth (not the shallower ones) after 8,
                # 16, 32, ... iterations.
                self._backoff = min(2 * self._backoff, 256)
                self._cooldown = (len(levels), self._backoff)
                return
            self._backoff = 4
            levels.append(child)

    def _build(self, parent: _Level, theta: np.ndarray, r: float) -> _Level | None:
        """The level anchored at ``theta`` under ``parent``, or ``None`` if it would not pay.

        The margin ``M`` minimises the per-iteration cost of the child, ``BUILD_COST m s / M``
        (a build reads the parent's ``m`` rows and lasts about ``M / s`` iterations at the recent
        step ``s``) plus its band size, read off a sample of the distances; ``M`` is at least four
        steps and at most half the parent's margin.  Before any step is seen, the band is about
        1/8 of the parent's.
        """
        a = theta.copy()
        m = len(parent.sqn)
        d2 = np.empty(m)
        v, aa = -2.0 * a, a @ a

        def part(lo: int, hi: int) -> None:
            np.einsum("ij,j->i", parent.pts[lo:hi], v, out=d2[lo:hi])
            d2[lo:hi] += parent.sqn[lo:hi]
            d2[lo:hi] += aa

        _map_rows(part, m)
        stride = max(1, m // 8192)
        dev = np.sort(np.abs(np.sqrt(np.maximum(d2[::stride], 0.0)) - r))
        frac = np.arange(1, len(dev) + 1) / len(dev)           # band share at margin dev[i]
        lo, hi = 4.0 * self._step, min(parent.margin / 2, 2.0 * r)
        # A band holds at most half of its parent's rows, so all bands together copy < n rows.
        ok = (dev >= lo) & (dev <= hi) & (dev > 0) & (frac <= 0.5)
        if not ok.any():
            return None
        if self._step > 0:
            cost = np.where(ok, BUILD_COST * self._step / np.where(ok, dev, 1.0) + frac, np.inf)
            i = int(np.argmin(cost))
            if cost[i] >= 1.0:          # evaluating the parent's band is no dearer
                return None
        else:
            i = int(np.flatnonzero(ok)[np.argmin(np.abs(frac[ok] - 0.125))])
        margin = float(dev[i])
        scale = self._norm + float(np.linalg.norm(a)) + r + margin
        tau = 1e-9 * scale * scale
        hi2 = (r + margin) ** 2 + tau
        lo2 = (r - margin) ** 2 - tau if r > margin else -np.inf

        pw = parent.w

        def split(lo: int, hi: int) -> tuple:
            pts, chunk = parent.pts[lo:hi], d2[lo:hi]
            far = chunk > hi2
            band = ~far & (chunk >= lo2)
            n_far, far_sum = _count_sum(pts, far, None if pw is None else pw[lo:hi])
            idx = _indices(band)
            return (n_far, far_sum, np.take(pts, idx, axis=0), parent.sqn[lo:hi][idx],
                    None if pw is None else pw[lo:hi][idx])

        parts = _map_rows(split, m)
        n_far, far_sum = parent.count, parent.total.copy()
        for p in parts:
            n_far += p[0]
            far_sum += p[1]

        def joined(i: int) -> np.ndarray:       # one chunk's array, or the chunks' in order
            return parts[0][i] if len(parts) == 1 else np.concatenate([p[i] for p in parts])

        return _Level(a, margin, joined(2), joined(3), n_far, far_sum,
                      None if pw is None else joined(4))
