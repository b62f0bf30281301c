"""Row loops of the outside-the-ball index (:mod:`cvxdp.geometry.meb.meb_index`): numpy, or the same
loops compiled by numba when it is installed (``pip install "cvxdp[fast]"``).

Two loops carry every pass of the index, the full pass and the final covering test (methods
of :class:`Loops`; ``keys`` and ``match`` serve
:func:`~cvxdp.geometry.meb.meb_index.compress_rows`):

* ``count_sum`` -- count and sum of the rows with ``||x||^2 + <x, v> > c`` (with
  ``v = -2 theta``, ``c = r^2 - ||theta||^2``: the rows outside ``B(theta, r)``);
* ``split`` -- for a new band anchored at ``a``: count and sum of the rows with
  ``||x||^2 + <x, v> + ||a||^2 > hi2`` (beyond the band), and a copy of the rows in
  ``[lo2, hi2]`` (the band, with their norms and weights) written into buffers of the caller's,
  which it reuses from one band to the next.  The compiled loop writes the band as it reads
  the rows; a separate gather would read the parent a second time (at a band of 10-40% of the
  rows a gather touches nearly every cache line).

numpy evaluates each loop as a matrix-vector product, a comparison and a masked sum (three or
four passes over memory, ~5-11 ns per row of 10 coordinates); the compiled loop reads each row
once (~2-3.5 ns per row; ``docs/meb.md``).  Both are exact in the same sense: a point's side is
decided by the same inequality, evaluated in floating point.  The two backends add the ``d``
products of ``<x, v>`` in different orders, so a point within rounding (about 1e-16 relative) of
the sphere may fall on different sides under the two, and sums differ in the last bits; within
one backend every result is reproducible bit for bit (fixed row chunks).  The index's bounds
carry a slack far above that rounding (``meb_index``), so the index equals the full pass of its
own backend.

Sums add the coordinates as given, so their rounding scales with ``||x||``: the private pipeline
runs them on data translated by the public box centre (``meb_private``, "Floating point").

Which backend runs (:func:`pick`): ``CVXDP_KERNELS=numpy`` or ``=numba`` in the environment, or
:func:`set_backend`; by default numba, when it can be imported, for data of at least
:data:`FAST_ROWS` rows where the index keeps no anchor cache (:func:`anchor_cache_fits`).
Weights ``w`` are int64 multiplicities (:func:`~cvxdp.geometry.meb.meb_index.compress_rows`);
an empty array means all ones.  Every function takes C-contiguous float64 rows.
"""

from __future__ import annotations

import os

import numpy as np

__all__ = ["FAST_ROWS", "Loops", "pick", "set_backend"]

#: ``"auto"`` compiles the loops only for data of at least this many rows: importing numba and
#: loading the compiled loops costs ~1 s per process, which a smaller problem does not win back.
FAST_ROWS = 1 << 20
#: ... and only where the index keeps no anchor cache (``meb_index``, "Anchor cache"): the
#: cache holds ``n`` floats, kept when they are at most 1/16 of the rows' memory (at least
#: ``ANCHOR_CACHE_D`` coordinates) or at most ``ANCHOR_CACHE_BYTES``.  With it, the numpy loops
#: and the index's incremental band evaluation beat the compiled loops, which re-sum every band
#: row at every query (private MEB warm, accuracy 0.2: 2e6 x 20 0.30 s numpy / 0.38 s
#: numba, 2e6 x 5 0.159 / 0.167, 4e6 x 10 0.356 / 0.407); without it the compiled ones win
#: (1e7 x 10: 0.95 numba / 1.32 numpy).
ANCHOR_CACHE_D = 16
ANCHOR_CACHE_BYTES = 64 << 20


def anchor_cache_fits(rows: int, dim: int) -> bool:
    """Whether the index's anchor cache (``rows`` floats) fits the memory rule above."""
    return dim >= ANCHOR_CACHE_D or 8 * rows <= ANCHOR_CACHE_BYTES


_NO_W = np.zeros(0, dtype=np.int64)
_state: dict[str, object] = {}


class Loops:
    """The loops of one backend (``name``: ``"numba"`` or ``"numpy"``).  Rows are C-contiguous
    float64; ``w`` int64 multiplicities or ``None``."""

    def __init__(self, name: str, count_sum, split, keys, match) -> None:
        self.name, self._count_sum, self._split = name, count_sum, split
        self.keys, self._match = keys, match

    def __repr__(self) -> str:
        return f"Loops({self.name!r})"

    def count_sum(self, pts: np.ndarray, sqn: np.ndarray, v: np.ndarray, c: float,
                  w: np.ndarray | None) -> tuple[int, np.ndarray]:
        """``(k, s)``: number (weighted by ``w``) and sum of the rows with
        ``sqn + pts @ v > c``."""
        k, s = self._count_sum(pts, sqn, v, float(c), _NO_W if w is None else w)
        return int(k), s

    def split(self, pts: np.ndarray, sqn: np.ndarray, v: np.ndarray, aa: float, lo2: float,
              hi2: float, w: np.ndarray | None, out: tuple) -> tuple[int, np.ndarray, int]:
        """``(k, s, nb)`` with ``t = sqn + pts @ v + aa``: number (weighted) and sum of the rows
        with ``t > hi2``; the ``nb`` rows with ``lo2 <= t <= hi2``, in order, are copied to
        ``out = (rows, sqn, w)`` (``w`` may be ``None`` when the input's is).  When
        ``nb > len(out[1])`` the buffers are too short: nothing is guaranteed to be in them, and
        the caller grows them to ``nb`` rows and splits again (``k``, ``s``, ``nb`` are exact
        either way)."""
        rows, rsqn, rw = out
        k, s, nb = self._split(pts, sqn, v, float(aa), float(lo2), float(hi2),
                               _NO_W if w is None else w, rows, rsqn,
                               _NO_W if rw is None else rw)
        return int(k), s, int(nb)

    def match(self, pts: np.ndarray, g: np.ndarray, dkeys: np.ndarray,
              dictionary: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(counts, unmatched)``: each row is looked up by its key ``self.keys(row, g)`` in the
        sorted ``dkeys`` (the keys of ``dictionary``'s rows, computed by the same ``keys``) and
        compared with that dictionary row coordinate by coordinate; ``counts[j]`` rows equal
        dictionary row ``j``; ``unmatched`` are the (int64) indices of the others."""
        counts = np.zeros(len(dkeys), dtype=np.int64)
        unmatched = np.empty(len(pts), dtype=np.int64)
        nu = self._match(pts, g, dkeys, dictionary, counts, unmatched)
        return counts, unmatched[:nu]


def set_backend(name: str) -> None:
    """``"numba"`` (always), ``"numpy"`` (always) or ``"auto"`` (numba, if it can be imported,
    for data of at least :data:`FAST_ROWS` rows).  The environment's ``CVXDP_KERNELS`` sets the
    starting choice.  ``"numba"`` without numba is an ``ImportError`` that says how to get it."""
    if name not in ("auto", "numba", "numpy"):
        raise ValueError(f"CVXDP_KERNELS / set_backend: expected 'auto', 'numba' or 'numpy', "
                         f"got {name!r}")
    if name == "numba":
        try:
            _compiled()
        except ImportError as exc:
            raise ImportError("the numba kernels need numba: pip install 'cvxdp[fast]' "
                              "(or set CVXDP_KERNELS=numpy)") from exc
    _state["choice"] = name


def pick(rows: int, dim: int | None = None) -> Loops:
    """The loops to use for every pass over data of ``rows`` rows of ``dim`` coordinates (one
    choice per dataset, so that an index and the full pass it stands for decide every point's
    side alike).  ``dim=None``: as if the anchor cache did not fit."""
    if "choice" not in _state:
        set_backend(os.environ.get("CVXDP_KERNELS", "auto"))
    choice = _state["choice"]
    if choice == "numba" or (choice == "auto" and rows >= FAST_ROWS and (
            dim is None or not anchor_cache_fits(rows, dim))):
        try:
            return _compiled()
        except ImportError:
            pass
    return _NUMPY


def side_terms(pts, sqn, v, out=None):
    """``t = sqn + pts @ v`` per row, as every numpy test of a row against a ball computes it
    (``einsum`` then ``+= sqn``; in float64, for float32 rows too): with ``v = -2 theta`` the
    row is outside ``B(theta, r)`` when ``t > r^2 - ||theta||^2``.  The full pass, the index's
    bands, GoodCenter, the kept set and the Dask blocks all call this one function, so a row's
    side is the same number wherever it is decided.  ``out``: where to write ``t``."""
    t = np.einsum("ij,j->i", pts, v, out=out)
    t += sqn
    return t


def _count_sum_np(pts, sqn, v, c, w):
    return _masked_count_sum(pts, side_terms(pts, sqn, v) > c, w)


def _split_np(pts, sqn, v, aa, lo2, hi2, w, rows, rsqn, rw):
    return split_given_np(anchor_values_np(pts, sqn, v, aa), pts, sqn, lo2, hi2, w, rows, rsqn,
                          rw)


def anchor_values_np(pts, sqn, v, aa):
    """``t = sqn + pts @ v + aa`` as the numpy ``split`` computes it (the same operations in the
    same order, so the same numbers bit for bit): ``||x - a||^2`` for ``v = -2 a``,
    ``aa = ||a||^2``."""
    t = side_terms(pts, sqn, v)
    t += aa
    return t


def split_given_np(t, pts, sqn, lo2, hi2, w, rows, rsqn, rw):
    """The numpy ``split`` from the values ``t`` of :func:`anchor_values_np` (computed once for
    an anchor the index builds at again: ``meb_index``, "Anchor cache")."""
    far = t > hi2
    k, s = _masked_count_sum(pts, far, w)
    idx = _indices(~far & (t >= lo2))
    nb = len(idx)
    if nb > len(rsqn):          # the buffers are too short: count only (the caller grows them)
        return k, s, nb
    np.take(pts, idx, axis=0, out=rows[:nb])
    np.take(sqn, idx, out=rsqn[:nb])
    if len(w):
        np.take(w, idx, out=rw[:nb])
    return k, s, nb


def _masked_count_sum(pts, mask, w):
    k = int(np.count_nonzero(mask))
    if not k:
        return 0, np.zeros(pts.shape[1])
    weighted = len(w) > 0
    if 6 * k < len(mask):     # a gathered row costs ~5x a streamed one
        idx = _indices(mask)
        rows = np.take(pts, idx, axis=0)
        if not weighted:
            return k, rows.sum(axis=0, dtype=np.float64)
        return int(w[idx].sum()), w[idx].astype(float) @ rows
    if not weighted:
        return k, np.einsum("i,ij->j", mask.astype(float), pts)
    return int(w[mask].sum()), np.einsum("i,ij->j", np.where(mask, w, 0.0), pts)


def _indices(mask):
    idx = np.flatnonzero(mask)
    return idx.astype(np.int32) if len(mask) < 2**31 else idx   # int32 gathers ~5x faster


def _keys_np(pts, g):
    return pts @ g


def _match_np(pts, g, dkeys, dictionary, counts, unmatched):
    pos = np.minimum(np.searchsorted(dkeys, pts @ g), len(dkeys) - 1)
    ok = (pts == dictionary[pos]).all(axis=1)
    counts += np.bincount(pos[ok], minlength=len(dkeys))
    miss = np.flatnonzero(~ok)
    unmatched[:len(miss)] = miss
    return len(miss)


_NUMPY = Loops("numpy", _count_sum_np, _split_np, _keys_np, _match_np)


def _compiled() -> Loops:
    """The loops compiled by numba (``ImportError`` without it).  ``nogil``: the index runs
    them on its own thread pool over fixed row chunks, which keeps sums reproducible and avoids
    numba's threading layers (not all of which are fork- or thread-safe)."""
    if "numba" in _state:
        if _state["numba"] is None:
            raise ImportError("numba is not installed")
        return _state["numba"]
    try:
        import numba  # optional extra (cvxdp[fast]): the compiled kernels
    except ImportError:
        _state["numba"] = None          # do not try again on every pass
        raise

    @numba.njit(nogil=True, cache=True, fastmath=False)
    def count_sum_nb(pts, sqn, v, c, w):
        n, d = pts.shape
        weighted = len(w) > 0
        k = 0
        s = np.zeros(d)
        for i in range(n):
            t = sqn[i]
            for j in range(d):
                t += pts[i, j] * v[j]
            if t > c:
                if weighted:
                    k += w[i]
                    f = float(w[i])
                    for j in range(d):
                        s[j] += f * pts[i, j]
                else:
                    k += 1
                    for j in range(d):
                        s[j] += pts[i, j]
        return k, s

    @numba.njit(nogil=True, cache=True, fastmath=False)
    def split_nb(pts, sqn, v, aa, lo2, hi2, w, rows, rsqn, rw):
        n, d = pts.shape
        weighted = len(w) > 0
        k = 0
        s = np.zeros(d)
        nb = 0
        cap = len(rsqn)         # rows past the buffers' length are counted, not written
        for i in range(n):
            t = sqn[i]
            for j in range(d):
                t += pts[i, j] * v[j]
            t += aa
            if t > hi2:         # count_sum_nb's accumulation, written out on purpose: a jitted
                if weighted:    # helper shared through this closure is not cached on disk
                    k += w[i]
                    f = float(w[i])
                    for j in range(d):
                        s[j] += f * pts[i, j]
                else:
                    k += 1
                    for j in range(d):
                        s[j] += pts[i, j]
            elif t >= lo2:
                if nb < cap:
                    rsqn[nb] = sqn[i]
                    for j in range(d):
                        rows[nb, j] = pts[i, j]
                    if weighted:
                        rw[nb] = w[i]
                nb += 1
        return k, s, nb

    @numba.njit(nogil=True, cache=True, fastmath=False)
    def keys_nb(pts, g):
        n, d = pts.shape
        out = np.empty(n)
        for i in range(n):
            t = 0.0
            for j in range(d):
                t += pts[i, j] * g[j]
            out[i] = t
        return out

    @numba.njit(nogil=True, cache=True, fastmath=False)
    def match_nb(pts, g, dkeys, dictionary, counts, unmatched):
        n, d = pts.shape
        m = len(dkeys)
        nu = 0
        for i in range(n):
            t = 0.0
            for j in range(d):          # the same sum, in the same order, as keys_nb
                t += pts[i, j] * g[j]
            p = min(np.searchsorted(dkeys, t), m - 1)
            same = True
            for j in range(d):
                if pts[i, j] != dictionary[p, j]:
                    same = False
                    break
            if same:
                counts[p] += 1
            else:
                unmatched[nu] = i
                nu += 1
        return nu

    _state["numba"] = Loops("numba", count_sum_nb, split_nb, keys_nb, match_nb)
    return _state["numba"]
