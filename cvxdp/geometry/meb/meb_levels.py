"""The levels of the outside-the-ball index: choosing a new level's margin, and splitting its
parent's band into the new band and the count and sum of the points it leaves outside.

:class:`~cvxdp.geometry.meb.meb_index.OutsideIndex` keeps a stack of :class:`Level` objects
(its module docstring, "Levels", states the invariant and why the answers are exact).  A new
level's margin ``M`` minimises its per-iteration cost, ``BUILD_COST * step / M`` (a build reads
the parent's band once and lasts about ``M / step`` iterations) plus its band's share of the
parent, read off the distances of a strided sample of 8,192 parent rows (:func:`choose_margin`);
:func:`split_level` then splits every piece of the parent's band with the row loops of
:mod:`~cvxdp.geometry.meb.meb_kernels` into buffers reused at every rebuild
(:class:`BandBuffers`).  The bounds are applied to squared distances with the slack of
:func:`~cvxdp.geometry.meb.meb_rows.slack`, so every point's side is the full pass's.

References
----------
Mahpud & Sheffet (2022), "A Differentially Private Linear-Time fPTAS for the Minimum Enclosing
Ball Problem", Algorithm 2 (line 4: ``U <- P minus B(theta^t, r)``), the set whose
count and sum the levels give.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cvxdp.geometry.meb import meb_kernels as kernels
from cvxdp.geometry.meb import meb_rows  # POOL_ROWS read at call time (tests lower it)
from cvxdp.geometry.meb.meb_rows import map_pieces, slack

__all__ = ["BAND_MIN_ROWS", "BAND_SHARE", "BUILD_COST", "BandBuffers", "Level",
           "choose_margin", "split_level"]

#: Cost of building a level, per row of its parent, in units of testing one row (measured 1.4-2;
#: §6 run times are flat for values from 1 to 3).
BUILD_COST = 2.0
#: A band holds at most this share of the points (and half its parent's rows): the copies of
#: all levels together stay below ``2 BAND_SHARE n`` rows, with 1/4 spare in their buffers.
BAND_SHARE = 1.0 / 32
#: ... or at most this many rows, whichever is larger (small data have no memory problem).
BAND_MIN_ROWS = 1 << 12


@dataclass
class Level:
    """One level of the index: an anchor (a past centre), a margin, its band and the count and
    sum of the points its band and every shallower band leave outside the ball."""

    anchor: np.ndarray
    margin: float
    # The band as row pieces (pts, sqn, w), processed in parallel: the root's are the fixed
    # chunks of the data, and a level's piece i is drawn from its parent's piece i, so the
    # pieces and every sum's order depend on the data only.  w: multiplicities (None: all 1).
    pieces: list[tuple[np.ndarray, np.ndarray, np.ndarray | None]]
    count: int                 # outside points left out of this and every shallower band
    total: np.ndarray          # their sum
    # Per piece, the last evaluation (numpy loops): (outside mask, count, sum) of the piece's
    # rows outside the ball at the last query, which the next query updates by the rows that
    # changed side ("Incremental evaluation" in meb_index's module docstring).
    state: list | None = None

    def __len__(self) -> int:
        return sum(len(p[1]) for p in self.pieces)


class BandBuffers:
    """Row buffers of the bands, one set per ``(depth, piece)``.

    A band is rebuilt many times; reusing its memory avoids writing to fresh pages each time.
    Only the level being built at ``depth`` uses them (the one it replaces is gone).

    Parameters
    ----------
    d : int
        Coordinates per row.
    dtype : numpy dtype
        The stored rows' dtype (float64, or float32 storage).
    """

    def __init__(self, d: int, dtype: np.dtype) -> None:
        self._d, self._dtype = d, dtype
        self._held: dict[tuple[int, int], tuple] = {}     # (depth, piece) -> buffers

    def __getitem__(self, key: tuple[int, int]) -> tuple:
        return self._held[key]

    def get(self, depth: int, piece: int, size: int, weighted: bool) -> tuple:
        """Buffers of at least ``size`` rows for piece ``piece`` of the band at ``depth`` (the
        caller's ``size`` has its spare already)."""
        buf = self._held.get((depth, piece))
        if buf is None or len(buf[1]) < size:
            self._held.pop((depth, piece), None)    # free the short one first
            cap = size
            buf = (np.empty((cap, self._d), dtype=self._dtype), np.empty(cap),
                   np.empty(cap, dtype=np.int64) if weighted else None)
            self._held[depth, piece] = buf
        return buf


def choose_margin(parent: Level, a: np.ndarray, r: float, step: float, n: int
                  ) -> tuple[float, float] | None:
    """``(margin, share)`` of a level anchored at ``a`` under ``parent``, or ``None`` if no
    margin would pay.

    The margin ``M`` minimises the per-iteration cost of the child, ``BUILD_COST m s / M``
    (a build reads the parent's ``m`` rows and lasts about ``M / s`` iterations at the recent
    step ``s``) plus its band size, read off a sample of the distances; ``M`` is at least four
    steps and at most half the parent's margin.  Before any step is seen, the band is about
    1/8 of the parent's.  ``share`` is the band's share of the parent, from the sample; ``n``
    is the number of points of the index.
    """
    v, aa = -2.0 * a, a @ a
    stride = max(1, len(parent) // 8192)
    d2 = np.concatenate([np.einsum("ij,j->i", pts[::stride], v) + sqn[::stride] + aa
                         for pts, sqn, _ in parent.pieces])
    dev = np.sort(np.abs(np.sqrt(np.maximum(d2, 0.0)) - r))
    frac = np.arange(1, len(dev) + 1) / len(dev)           # band share at margin dev[i]
    lo, hi = 4.0 * step, min(parent.margin / 2, 2.0 * r)
    # A band holds at most half of its parent's rows and BAND_SHARE of the points, so all
    # bands together copy at most 2 BAND_SHARE n rows (the 1.5x memory limit).
    cap = min(0.5, max(BAND_SHARE * n, BAND_MIN_ROWS) / max(len(parent), 1))
    ok = (dev >= lo) & (dev <= hi) & (dev > 0) & (frac <= cap)
    if not ok.any():
        return None
    if step > 0:
        cost = np.where(ok, BUILD_COST * step / np.where(ok, dev, 1.0) + frac, np.inf)
        i = int(np.argmin(cost))
        if cost[i] >= 1.0:          # evaluating the parent's band is no dearer
            return None
    else:
        i = int(np.flatnonzero(ok)[np.argmin(np.abs(frac[ok] - 0.125))])
    return float(dev[i]), float(frac[i])


def split_level(parent: Level, a: np.ndarray, r: float, margin: float, share: float, *,
                norm: float, depth: int, loops: kernels.Loops, buffers: BandBuffers,
                cache: list | None) -> Level:
    """The level anchored at ``a`` with ``margin`` under ``parent``: its band (the parent's
    rows with ``| ||x - a|| - r | <= margin``, up to the slack) in ``buffers``, and the count
    and sum of the parent's rows beyond ``r + margin`` added to the parent's.

    ``norm`` bounds the rows' norms (for the slack), ``depth`` is the new level's depth,
    ``loops`` the index's row loops, ``share`` the band's expected share of the parent (sizes
    the buffers); ``cache``: the anchor cache's per-piece values ``||x - a||^2`` of the root
    (filled here on first use), or ``None``.
    """
    v, aa = -2.0 * a, a @ a
    scale = norm + float(np.linalg.norm(a)) + r + margin
    tau = slack(scale)
    hi2 = (r + margin) ** 2 + tau
    lo2 = (r - margin) ** 2 - tau if r > margin else -np.inf

    def split_piece(i: int, buf: tuple) -> tuple[int, np.ndarray, int]:
        pts, sqn, w = parent.pieces[i]
        if cache is None:
            return loops.split(pts, sqn, v, aa, lo2, hi2, w, buf)
        if cache[i] is None:
            cache[i] = kernels.anchor_values_np(pts, sqn, v, aa)
        rows, rsqn, rw = buf
        k, s, nb = kernels.split_given_np(cache[i], pts, sqn, lo2, hi2,
                                          kernels._NO_W if w is None else w, rows, rsqn,
                                          kernels._NO_W if rw is None else rw)
        return int(k), s, int(nb)

    def split(i: int) -> tuple[int, np.ndarray, int]:
        sqn, w = parent.pieces[i][1:]
        guess = int(1.25 * share * len(sqn)) + 1024     # buffers sized by the sample
        out = split_piece(i, buffers.get(depth, i, min(guess, len(sqn)), w is not None))
        if out[2] > len(buffers[depth, i][1]):    # short: grow, split again
            grow = min(out[2] + out[2] // 4 + 1, len(sqn))
            out = split_piece(i, buffers.get(depth, i, grow, w is not None))
        return out

    parts = map_pieces(split, parent)
    n_far, far_sum = parent.count, parent.total.copy()
    pieces = []
    for i, (k, s, nb) in enumerate(parts):
        n_far += k
        far_sum += s
        rows, sqn, w = buffers[depth, i]
        pieces.append((rows[:nb], sqn[:nb], None if w is None else w[:nb]))
    m = sum(len(p[1]) for p in pieces)
    if len(pieces) > 1 and m < meb_rows.POOL_ROWS:
        # A small band runs on one thread: one piece (rows in piece order, so the order
        # still depends on the data only) costs one call per query instead of CHUNKS.
        weighted = pieces[0][2] is not None
        rows, sqn, w = buffers.get(depth, -1, m + m // 4, weighted)
        np.concatenate([p[0] for p in pieces], out=rows[:m])
        np.concatenate([p[1] for p in pieces], out=sqn[:m])
        if weighted:
            np.concatenate([p[2] for p in pieces], out=w[:m])
        pieces = [(rows[:m], sqn[:m], None if w is None else w[:m])]
    return Level(a, margin, pieces, n_far, far_sum)
