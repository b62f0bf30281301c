"""Exact passes over the rows of an MEB point set: squared norms, side tests, distances, the
count and sum of the points outside a ball, and repeated rows stored once; large passes run as
fixed row chunks on a per-process thread pool (the chunks depend on the data's size only, so
every result is the same whatever the number of threads).

:class:`~cvxdp.geometry.meb.meb_index.OutsideIndex` answers the outside-the-ball query with
these passes while touching only the points near the sphere; the row loops are those of
:mod:`~cvxdp.geometry.meb.meb_kernels` (numpy, or compiled by numba).
"""

from __future__ import annotations

import math
import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from cvxdp.geometry.meb import meb_kernels as kernels

__all__ = ["compress_rows", "count_sum_since", "inside_mask", "keeps_anchor_cache", "map_pieces",
           "map_rows", "norm2", "outside_full", "row_chunks", "slack", "sq_dists", "sq_norms",
           "stored_rows", "thread_pool"]

#: Passes over at least this many rows run as ``CHUNKS`` row chunks on threads.
PARALLEL_ROWS = 1 << 18
CHUNKS = 4
#: A band of at least this many rows is processed piece by piece on the thread pool (pieces are
#: fixed by the data, so this changes only the speed, never a result).
POOL_ROWS = 1 << 15
_POOL: tuple[int, ThreadPoolExecutor] | None = None


def keeps_anchor_cache(n: int, d: int) -> bool:
    """Whether an index over ``n`` rows of ``d`` coordinates keeps the anchor cache ("Anchor
    cache"): with the numpy loops, when its ``n`` floats are at most 1/16 of the rows' memory
    (``d >= 16``) or at most 64 MiB (:func:`~cvxdp.geometry.meb.meb_kernels.anchor_cache_fits`;
    1e6 x 5 private MEB 115 -> 98 ms)."""
    return kernels.pick(n, d).name == "numpy" and kernels.anchor_cache_fits(n, d)


def norm2(x: np.ndarray) -> float:
    """``np.linalg.norm`` of a 1-D float64 vector, computed as it does (``sqrt(x.dot(x))``: the
    same number) without its dispatch, which cost ~2 us on each of ~5,000 calls per solve."""
    return math.sqrt(float(x.dot(x)))


def stored_rows(points: np.ndarray) -> np.ndarray:
    """The rows every pass reads: ``points`` itself when it is C-contiguous float64 or float32
    (float32 storage: half the memory; every product and sum is taken in float64, exactly
    what float64 storage of the same numbers gives), else a C-contiguous float64 copy."""
    if points.dtype == np.float32 and points.flags.c_contiguous:
        return points
    return np.ascontiguousarray(points, dtype=float)


def sq_norms(points: np.ndarray) -> np.ndarray:
    """``einsum("ij,ij->i", points, points)`` (in float64, for float32 rows too) in the fixed
    row chunks of :func:`map_rows` on the thread pool: each row's value is the same einsum of
    the same row (the same number), read in parallel (~11 ms -> ~6 ms at 1e6 x 20)."""
    out = np.empty(len(points))

    def part(lo: int, hi: int) -> None:
        np.einsum("ij,ij->i", points[lo:hi], points[lo:hi], dtype=np.float64, out=out[lo:hi])

    map_rows(part, len(points))
    return out


def inside_mask(points: np.ndarray, sqn: np.ndarray, center: np.ndarray,
                radius: float) -> np.ndarray:
    """``||x||^2 + <x, -2 c> <= radius^2 - ||c||^2`` for every row (``sqn``: the rows' squared
    norms): the complement of :func:`outside_full`'s test, in its fixed row chunks on the
    thread pool.  GoodCenter's masks and the kept set (``meb_private.kept_index``; the Dask
    path's blocks) use this one test, so a row GoodCenter found inside is kept."""
    center = np.asarray(center, dtype=float)
    v, c = -2.0 * center, radius * radius - center @ center
    out = np.empty(len(points), dtype=bool)

    def part(lo: int, hi: int) -> None:
        np.less_equal(kernels.side_terms(points[lo:hi], sqn[lo:hi], v), c, out=out[lo:hi])

    map_rows(part, len(points))
    return out


def slack(scale: float) -> float:
    """``tau = 1e-9 S^2``: the margin every bound on squared distances keeps, for norms up to
    ``S = scale``; far above the rounding of any way of computing ``||x - theta||^2``."""
    return 1e-9 * scale * scale


def sq_dists(points: np.ndarray, center: np.ndarray, chunk: int = 1 << 12) -> np.ndarray:
    """``||p_i - center||^2`` by differences (no cancellation), in row chunks on the thread
    pool (no ``(n, d)`` temporary at 1e8 points; each chunk's result is the same on any pool)."""
    out = np.empty(len(points))

    def part(lo: int, hi: int) -> None:
        for i in range(lo, hi, chunk):
            j = min(i + chunk, hi)
            diff = points[i:j] - center
            out[i:j] = np.einsum("ij,ij->i", diff, diff)

    map_rows(part, len(points))
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
    # Rows with distinct projections are distinct: when the projections already have too many
    # distinct values, so have the rows (the same decision as np.unique(sub, axis=0) below,
    # ~0.3 ms instead of ~4 ms on 8,192 rows of 20).
    keys = sub @ np.random.default_rng(1).standard_normal(sub.shape[1])
    if len(np.unique(keys)) > max_distinct * len(sub):
        return points, None
    dictionary = np.unique(sub, axis=0)
    if len(dictionary) > max_distinct * len(sub):
        return points, None
    g = np.random.default_rng(0).standard_normal(points.shape[1])
    loops = kernels.pick(n, points.shape[1])
    dkeys = loops.keys(dictionary, g)
    order = np.argsort(dkeys)
    dictionary, dkeys = dictionary[order], dkeys[order]
    if np.any(np.diff(dkeys) == 0):      # two dictionary rows share a key: not worth untangling
        return points, None
    block = 1 << 18
    # Per block: look every row up by its key, then check every coordinate of the match.
    parts = list(thread_pool().map(
        lambda lo: loops.match(points[lo:lo + block], g, dkeys, dictionary), range(0, n, block)))
    rest = sum(len(p[1]) for p in parts)
    if rest > n // 4:
        return points, None
    w = np.sum([p[0] for p in parts], axis=0)
    keep = w > 0
    rows, w = dictionary[keep], w[keep]
    if rest:
        unmatched = np.concatenate([p[1] + lo for p, lo in zip(parts, range(0, n, block),
                                                               strict=True)])
        left, w_left = points[unmatched], np.ones(rest, dtype=w.dtype)
        if rest <= 1 << 18:          # rare rows the sample missed may still repeat
            left, w_left = np.unique(left, axis=0, return_counts=True)
        rows = np.concatenate([rows, left])
        w = np.concatenate([w, w_left])
    return rows, w.astype(np.int64)


def outside_full(pts: np.ndarray, sqn: np.ndarray, theta: np.ndarray, r: float,
                 w: np.ndarray | None = None,
                 loops: kernels.Loops | None = None) -> tuple[int, np.ndarray]:
    """One pass: ``(k, sum of the rows of pts outside B(theta, r))``; ``sqn`` = row norms^2.

    ``w`` (integer multiplicities of the rows, see :func:`compress_rows`) counts row ``i`` as
    ``w[i]`` points.  ``loops``: the row loops (:mod:`~cvxdp.geometry.meb.meb_kernels`); by default
    those :func:`~cvxdp.geometry.meb.meb_kernels.pick` chooses for ``len(pts)`` rows."""
    loops = kernels.pick(*pts.shape) if loops is None else loops
    # ||x - theta||^2 > r^2 as ||x||^2 - 2 <x, theta> > r^2 - ||theta||^2, with the -2 folded into
    # the vector (exact: a power of two), so the test is bitwise the textbook one.
    v, c = -2.0 * theta, r * r - theta @ theta
    parts = map_rows(lambda lo, hi: loops.count_sum(
        pts[lo:hi], sqn[lo:hi], v, c, None if w is None else w[lo:hi]), len(sqn))
    k = sum(p[0] for p in parts)
    total = np.zeros(pts.shape[1])
    for p in parts:
        total += p[1]
    return k, total


def row_chunks(m: int) -> list[tuple[int, int]]:
    """The row chunks of a pass over ``m`` rows: one below ``PARALLEL_ROWS``, else ``CHUNKS``
    equal ones.  They depend on ``m`` only, so sums combine in the same order on every machine
    and a seed gives the same output bit for bit."""
    if m < PARALLEL_ROWS:
        return [(0, m)]
    b = [m * i // CHUNKS for i in range(CHUNKS + 1)]
    return [(b[i], b[i + 1]) for i in range(CHUNKS)]


def count_sum_since(state: list, i: int, pts: np.ndarray, sqn: np.ndarray,
                     w: np.ndarray | None, v: np.ndarray, c: float) -> tuple[int, np.ndarray]:
    """The numpy ``count_sum`` of one band piece, updated from its last evaluation.

    Each row's side is decided as :func:`outside_full` decides it (``sqn + pts @ v > c``, the
    same operations).  The count and sum of the rows outside are those of the piece's previous
    query (``state[i]``) plus the rows that moved outside minus those that moved inside: between
    two queries the centre moves by one small step and few rows change side, so this skips the
    masked sum over the whole piece (a second read of every row).  The first query
    on a piece, or one where more than 1/6 of the rows changed side, sums the piece afresh.
    The sum differs from a fresh one only in rounding (additions in another order).
    """
    out = kernels.side_terms(pts, sqn, v) > c
    wts = kernels._NO_W if w is None else w
    last = state[i]
    if last is None:
        k, s = kernels._masked_count_sum(pts, out, wts)
    else:
        was, k, s = last
        moved = kernels._indices(out != was)
        if 6 * len(moved) > len(out):
            k, s = kernels._masked_count_sum(pts, out, wts)
        elif len(moved):
            now = out[moved]
            if w is None:
                k += 2 * int(np.count_nonzero(now)) - len(moved)
                sign = np.where(now, 1.0, -1.0)
            else:
                dw = np.where(now, w[moved], -w[moved])
                k += int(dw.sum())
                sign = dw.astype(float)
            s = s + sign @ np.take(pts, moved, axis=0)
    state[i] = (out, k, s)
    return k, s


def map_rows(fn, m: int) -> list:
    """``[fn(lo, hi) for each chunk]``, on the thread pool when there are several (numpy and
    the compiled loops release the GIL)."""
    chunks = row_chunks(m)
    if len(chunks) == 1:
        return [fn(0, m)]
    return list(thread_pool().map(lambda c: fn(*c), chunks))


def map_pieces(fn, level) -> list:
    """``[fn(i) for each piece i of level]``, on the thread pool if the band is large."""
    if len(level.pieces) == 1 or len(level) < POOL_ROWS:
        return [fn(i) for i in range(len(level.pieces))]
    return list(thread_pool().map(fn, range(len(level.pieces))))


def thread_pool() -> ThreadPoolExecutor:
    global _POOL
    # One pool per process: a child forked after the pool started would inherit a pool whose
    # threads do not exist in it, and its work would never run.
    if _POOL is None or _POOL[0] != os.getpid():
        _POOL = (os.getpid(), ThreadPoolExecutor(max_workers=min(CHUNKS, os.cpu_count() or 1)))
    return _POOL[1]
