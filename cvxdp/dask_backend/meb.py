"""The private minimum enclosing ball's statistics on a Dask array (chunk-wise, then reduced).

Every data access of the private pipeline (:func:`cvxdp.geometry.meb.meb_solve.solve_private_meb`)
is one of four sums over rows; here each is a :func:`cvxdp.dask_backend.block_sum` over the row
blocks:

* the number of points clipped into the public box (only for ``count_clipped=``);
* GoodCenter (Alg. 6 / 7): per round the sum of ``x - theta^t`` over ``P^t`` (or of the
  projections, locally), then the count of the far points;
* DP-MMEB (Alg. 4 / 5): per iteration the count and the sum of the kept points outside
  ``B(theta^t, r)``, and the final count outside ``B(theta, (1+gamma) r)``.

Each block is clipped into the public box and translated by the public shift exactly as the
numpy path does it (:func:`cvxdp.geometry.meb.meb_solve.clip_into_box`, then ``- shift``, the box
centre when the box does not contain the origin, else zero:
:func:`cvxdp.geometry.meb.box.working_shift`), and
each row's membership test is the same floating-point expression, so every exact count equals
the numpy path's and every sum differs only by the order of additions.  The noise is drawn on the
client from the same generator in the same order, so with the same seed the released ball equals
the numpy path's up to that reassociation.

The clipped, translated points are not stored: each reduction re-reads the blocks (cheap next to
the distance pass; ``X.persist()`` first keeps them in the workers' memory).  GoodCenter's set
``P^t`` (points within every earlier ball) is recomputed from the public history of centres
and radii in each round rather than stored as an ``n``-long mask (``T <= ~11`` rounds).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from cvxdp.dask_backend import block_sum
from cvxdp.geometry.meb import meb_kernels as kernels
from cvxdp.geometry.meb.box import clip_into_box
from cvxdp.geometry.meb.goodcenter import GoodCenterResult, good_center_loop, ldp_good_center_loop
from cvxdp.geometry.meb.meb_kernels import side_terms

__all__ = ["DaskPoints", "DaskOutsideIndex", "dask_good_center", "dask_ldp_good_center"]


def _prepare(block: np.ndarray, lo: np.ndarray, hi: np.ndarray, centre: np.ndarray) -> np.ndarray:
    """The numpy path's data preparation, on one block: clip into the box, translate.

    A block inside the box (no NaN: a NaN fails both comparisons) is only translated, one pass
    instead of clip_into_box's five; the values are the same (clipping leaves it unchanged)."""
    if np.logical_and(block >= lo, block <= hi).all():
        return block - centre

    p, _ = clip_into_box(block, lo, hi)
    p -= centre
    return p


class DaskPoints:
    """A Dask array of points with the public box it is clipped into and the translation.

    ``x`` holds the user's (raw) points; every reduction clips and translates each block on the
    worker before using it.  ``shape`` is public.
    """

    def __init__(self, x: Any, lo: np.ndarray, hi: np.ndarray, centre: np.ndarray) -> None:
        self.x, self.lo, self.hi, self.centre = x, lo, hi, centre
        self.shape = tuple(int(s) for s in x.shape)

    def __len__(self) -> int:
        return self.shape[0]

    def reduce(self, fn: Any, width: int, *args: Any) -> np.ndarray:
        """``sum over blocks of fn(prepared block, *args)`` (length ``width``)."""
        return block_sum(_apply_prepared, self.x, width, fn, self.lo, self.hi, self.centre,
                         *args)

    def clipped_count(self) -> int:
        """Rows moved into the box (PRIVATE: release only through ``noisy_count``)."""
        return int(block_sum(_clipped_block, self.x, 1, self.lo, self.hi)[0])


def _apply_prepared(block, fn, lo, hi, centre, *args):
    return fn(_prepare(block, lo, hi, centre), *args)


def _clipped_block(block, lo, hi):
    return np.array([clip_into_box(block, lo, hi)[1]], dtype=np.float64)


# --- DP-MMEB: count and sum of the kept points outside B(theta, r) ------------------------------

def _loops(backend: str):
    return kernels._compiled() if backend == "numba" else kernels._NUMPY


def _outside_block(p, theta0, keep_r2, v, c, backend):
    sqn = np.einsum("ij,ij->i", p, p)
    kept = _dist_terms(p, sqn, theta0) <= keep_r2 - theta0 @ theta0   # kept_index's test
    if not kept.all():
        p, sqn = np.ascontiguousarray(p[kept]), sqn[kept]
    k, s = _loops(backend).count_sum(p, sqn, v, c, None)
    return np.concatenate([[float(k)], s])


class DaskOutsideIndex:
    """:class:`~cvxdp.geometry.meb.meb_index.OutsideIndex` over a Dask array: the kept points'
    (``||x - theta0|| <= keep_radius``) count and sum outside ``B(theta, r)``, one full
    chunk-wise pass per query.  Same ``key`` as :func:`~cvxdp.geometry.meb.meb_private.kept_index`,
    so :func:`~cvxdp.geometry.meb.meb_private.dp_mmeb` accepts it unchanged."""

    def __init__(self, points: DaskPoints, theta0: np.ndarray, keep_radius: float) -> None:
        self.points = points
        self.theta0 = np.asarray(theta0, dtype=float)
        self.keep_r2 = float(keep_radius) ** 2
        self.key = ("kept", self.theta0.tobytes(), float(keep_radius))
        # the numpy path picks its loops by n (public); the same choice decides every side alike
        self.backend = kernels.pick(*points.shape).name
        self.work = 0
        self.passes = 0

    def __len__(self) -> int:
        return len(self.points)

    def query(self, theta: np.ndarray, r: float) -> tuple[int, np.ndarray]:
        """``(k, sum_{kept, ||x - theta|| > r} x)`` by one chunk-wise pass and a reduce."""
        theta = np.asarray(theta, dtype=float)
        v, c = -2.0 * theta, r * r - theta @ theta          # the test of outside_full
        out = self.points.reduce(_outside_block, 1 + self.points.shape[1], self.theta0,
                                 self.keep_r2, v, c, self.backend)
        self.work += len(self.points)
        self.passes += 1
        return int(round(out[0])), out[1:]

    outside = query

    def count_outside(self, theta: np.ndarray, r: float) -> int:
        """The count of :meth:`query` (DP-MMEB's final covering test)."""
        return self.query(theta, r)[0]


# --- GoodCenter (Alg. 6, central) ---------------------------------------------------------------

def _dist_terms(p, sqn, theta):
    """``||x||^2 + <x, -2 theta>`` per row: ``inside_mask``'s and GoodCenter's left side
    (:func:`~cvxdp.geometry.meb.meb_kernels.side_terms`)."""
    return side_terms(p, sqn, -2.0 * theta)


def _alive(p, sqn, history):
    alive = np.ones(len(p), dtype=bool)
    for theta, r in history:
        alive &= _dist_terms(p, sqn, theta) <= r * r - theta @ theta
    return alive


def _gc_sum_block(p, history):
    sqn = np.einsum("ij,ij->i", p, p)
    a = _alive(p, sqn, history)
    return np.append(np.einsum("i,ij->j", a.astype(float), p), float(np.count_nonzero(a)))


def _gc_far_block(p, history, mu, r):
    sqn = np.einsum("ij,ij->i", p, p)
    far = _alive(p, sqn, history) & (_dist_terms(p, sqn, mu) > 0.25 * r * r - mu @ mu)
    return np.array([float(np.count_nonzero(far))])


def dask_good_center(points: DaskPoints, *, center: np.ndarray, r_max: float, r_min: float,
                     rho: float, beta: float, rng: np.random.Generator) -> GoodCenterResult:
    """:func:`cvxdp.geometry.meb.goodcenter.good_center` on a Dask array: the same arithmetic per
    row, the same noise draws in the same order; two reductions per round.

    References
    ----------
    Mahpud & Sheffet (2022), Appendix A, Algorithm 6, Theorems A.1-A.2.
    """
    d = points.shape[1]
    history: list[tuple[np.ndarray, float]] = []   # the balls so far: each block recomputes

    def sum_at(theta: np.ndarray, r: float) -> np.ndarray:
        history.append((theta, r))
        both = points.reduce(_gc_sum_block, d + 1, list(history))
        return both[:d] - both[d] * theta       # sum (x - theta), as good_center computes it

    def far_at(mu: np.ndarray, r: float) -> float:
        return float(points.reduce(_gc_far_block, 1, list(history), mu, r)[0])

    return good_center_loop(points.shape, sum_at, far_at, center=center, r_max=r_max,
                            r_min=r_min, rho=rho, beta=beta, rng=rng)


# --- GoodCenter (Alg. 7, local) -----------------------------------------------------------------

def _ldp_sum_block(p, theta, r):
    diff = p - theta
    norm = np.sqrt(np.einsum("ij,ij->i", diff, diff))
    scale = np.minimum(1.0, r / np.maximum(norm, 1e-300))
    return (scale[:, None] * diff).sum(axis=0)


def _ldp_far_block(p, mu, r):
    dm = p - mu
    return np.array([float(np.count_nonzero(np.einsum("ij,ij->i", dm, dm) > 0.25 * r * r))])


def dask_ldp_good_center(points: DaskPoints, *, center: np.ndarray, r_max: float, r_min: float,
                         rho: float, beta: float, rng: np.random.Generator) -> GoodCenterResult:
    """:func:`cvxdp.geometry.meb.goodcenter.ldp_good_center` on a Dask array (same draws).

    References
    ----------
    Mahpud & Sheffet (2022), Appendix A.1, Algorithm 7, Theorem A.4.
    """
    d = points.shape[1]

    def sum_at(theta: np.ndarray, r: float) -> np.ndarray:
        return points.reduce(_ldp_sum_block, d, theta, r)

    def far_at(mu: np.ndarray, r: float) -> float:
        return float(points.reduce(_ldp_far_block, 1, mu, r)[0])

    return ldp_good_center_loop(points.shape, sum_at, far_at, center=center, r_max=r_max,
                                r_min=r_min, rho=rho, beta=beta, rng=rng)
