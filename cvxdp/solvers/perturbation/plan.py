"""The public structure of perturbation's robust counterpart: units and their noise maps.

A unit is a private equality row, a private inequality row, or a second-order / PSD block
with a private row (:mod:`cvxdp.solvers.perturbation`).  Per unit ``u``, ``E_u`` maps ``[x;
1]`` to the unit's change per unit of noise: row ``(i, k)`` holds ``Delta_k T[i + m j, k]``
over ``j``.  All units' maps are stored stacked in one sparse matrix (``E_all``, rows grouped
by unit, ``E_ptr`` their pointers), so every per-unit quantity is a segment reduction, never a
Python loop over rows.  Units whose maps are identical (every row of ``A @ x <= b`` with a
private ``A`` has ``E_u = Delta [I | 0]``) share a class: the counterpart and the loosened
counterpart bound ``||E_u [x; 1]||`` once per class (an exact reformulation).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from cvxdp.errors import PrivacySpecError
from cvxdp.solvers.perturbation.entries import PrivateEntries
from cvxdp.solvers.public_part import coordinate_box
from cvxdp.transform.canon import variables_at
from cvxdp.transform.parametric import entry_map
from cvxdp.transform.scp import ConeDims, SymmetricConeProgram

__all__ = ["RobustPlan", "robust_plan", "segments", "unit_norms", "one_sided_abs"]


def segments(ptr: np.ndarray) -> np.ndarray:
    """Segment id of every element for the pointer array ``ptr`` (``len(ptr) - 1`` segments)."""
    return np.repeat(np.arange(ptr.size - 1), np.diff(ptr))


def gather(ptr: np.ndarray, which: np.ndarray) -> np.ndarray:
    """Concatenated element indices of the segments ``which`` (in that order)."""
    lens = np.diff(ptr)[which]
    if lens.sum() == 0:
        return np.zeros(0, dtype=np.int64)
    base = np.repeat(ptr[which] - np.concatenate([[0], np.cumsum(lens)[:-1]]), lens)
    return base + np.arange(int(lens.sum()))


@dataclass(frozen=True)
class RobustPlan:
    """Public structure of the robust counterpart (no data values, only the tensor's map).

    Attributes
    ----------
    unit_kind : ndarray of str, shape (N,)
        ``"zero"``, ``"nonneg"``, ``"soc"`` or ``"psd"`` per unit.
    row_ptr, row_idx : ndarray
        Canonical rows of unit ``u``: ``row_idx[row_ptr[u]:row_ptr[u + 1]]``
        (:attr:`unit_rows`).
    support : ndarray of int, shape (N,)
        ``k_u``: number of private entries that reach the unit.
    indicator : scipy.sparse.csr_matrix, shape (N, K)
        1 where entry k reaches unit u (to test ``||g_{S_u}||`` of a draw).
    hit_ptr, hit_idx : ndarray
        Canonical rows of each unit that private entries reach (:attr:`touched`).
    E_all : scipy.sparse.csr_matrix, shape (pairs, n + 1)
        Every unit's ``E_u`` stacked (rows of unit ``u``: ``E_ptr[u]:E_ptr[u + 1]``), so
        ``||E_u [x; 1]||_2 sigma_u`` bounds the unit's change per unit noise norm.
    E_ptr : ndarray, shape (N + 1,)
    matrix : tuple of (r, c) or None
        For an orthant row reached by all entries of one (r, c) matrix parameter, once each
        (``<C, M(x)>`` forms such as ``trace(C @ X) <= b``): the shape, so the spectral bound
        ``|<G, M>| <= ||G||_op ||M(x)||_*`` can replace the Frobenius one; else None.
    band_norm : ndarray, shape (N,)
        Per equality unit: the constant part of a bound on ``||E_u [x; 1]||`` over the public
        domain (0 elsewhere); with :attr:`band_lin`, ``||E_u [x; 1]|| <= band_norm_u +
        band_lin_u' x`` there.
    band_lin : scipy.sparse.csr_matrix, shape (N, n)
        The bound's linear part: nonzero on the coordinates the public constraints bound on one
        side only (``|x_j| <= sgn_j x_j + 2 max(-sgn_j l_j, 0)``).
    unit_class : ndarray of int, shape (N,)
        Units with identical ``E_u`` share a class; ``class_rep[c]`` is a unit of class ``c``.
    class_rep : ndarray of int
    """

    unit_kind: np.ndarray
    row_ptr: np.ndarray
    row_idx: np.ndarray
    support: np.ndarray
    indicator: sp.csr_matrix
    hit_ptr: np.ndarray
    hit_idx: np.ndarray
    E_all: sp.csr_matrix
    E_ptr: np.ndarray
    matrix: tuple[tuple[int, int] | None, ...]
    band_norm: np.ndarray
    unit_class: np.ndarray
    class_rep: np.ndarray
    band_lin: sp.csr_matrix | None = None
    #: ``(N, 2)``: ``(rows, r)`` of a cone unit whose change is ``G v`` with ``G`` a (rows x r)
    #: matrix of distinct noise entries and ``v = E_u [x; 1]`` (:func:`_row_separable_forms`),
    #: so Gaussian noise may bound ``||G||_op`` instead of ``||g_S||``; ``(0, 0)`` elsewhere
    row_shape: np.ndarray | None = None

    @property
    def N(self) -> int:
        return int(self.support.size)

    @property
    def C(self) -> int:
        return int(self.class_rep.size)

    @cached_property
    def unit_rows(self) -> tuple[np.ndarray, ...]:
        return tuple(np.split(self.row_idx, self.row_ptr[1:-1]))

    @cached_property
    def touched(self) -> tuple[np.ndarray, ...]:
        return tuple(np.split(self.hit_idx, self.hit_ptr[1:-1]))

    @cached_property
    def E(self) -> list[sp.csr_matrix]:
        """``E_u`` per unit (slices of :attr:`E_all`; the solvers use the stacked form)."""
        return [self.E_all[self.E_ptr[u]:self.E_ptr[u + 1]] for u in range(self.N)]

    @cached_property
    def first_row(self) -> np.ndarray:
        """The first canonical row of each unit (a SOC block's head ``t``)."""
        return self.row_idx[self.row_ptr[:-1]]

    @cached_property
    def head_private(self) -> np.ndarray:
        """Whether private data reach each unit's first row."""
        first = np.repeat(self.first_row, np.diff(self.hit_ptr))
        hit = np.zeros(self.N, dtype=bool)
        hit[segments(self.hit_ptr)[self.hit_idx == first]] = True
        return hit

    def unit_sum(self) -> sp.csr_matrix:
        """``(N, rows of E_all)``: sums the stacked maps' rows unit by unit (``S @ M`` reduces
        any row-wise quantity of ``E_all`` to one row per unit)."""
        rows = self.E_all.shape[0]
        return sp.csr_matrix((np.ones(rows), (segments(self.E_ptr), np.arange(rows))),
                             shape=(self.N, rows))

    def column_norms(self) -> sp.csr_matrix:
        """``(N, n + 1)``: the Euclidean norm of each column of each ``E_u``."""
        out = sp.csr_matrix(self.unit_sum() @ self.E_all.multiply(self.E_all))
        out.data = np.sqrt(out.data)
        return out


def unit_norms(plan: RobustPlan, xs: np.ndarray) -> np.ndarray:
    """``||E_u [x; 1]||_2`` for every unit (``xs = [x; 1]``)."""
    v = plan.E_all @ xs
    return np.sqrt(np.bincount(segments(plan.E_ptr), weights=v * v, minlength=plan.N))


def _blocks(dims: ConeDims) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(start, size, kind) of every unit-sized block: one per zero / nonneg row (each row of
    those cones is its own unit), one per cone block (:meth:`ConeDims.blocks`)."""
    start, size, kind = [], [], []
    for blk in dims.blocks():
        if blk.kind in ("zero", "nonneg"):
            start.append(blk.start + np.arange(blk.size, dtype=np.int64))
            size.append(np.ones(blk.size, dtype=np.int64))
            kind.append(np.full(blk.size, blk.kind))
        else:
            start.append(np.array([blk.start], dtype=np.int64))
            size.append(np.array([blk.size], dtype=np.int64))
            kind.append(np.array([blk.kind]))
    return (np.concatenate(start), np.concatenate(size),
            np.concatenate(kind).astype(str))


def robust_plan(scp: SymmetricConeProgram, entries: PrivateEntries) -> RobustPlan:
    """Units, supports and coefficient maps of the counterpart (structure only).

    Each private equality row is a unit of kind ``"zero"`` (its band ``|s~_i| <= tau_u``, see
    :mod:`cvxdp.solvers.perturbation`), each private inequality row one of kind ``"nonneg"``,
    each cone block with a private row one of kind ``"soc"`` / ``"psd"``.
    """
    emap = entries.emap if entries.emap is not None else entry_map(scp, entries.columns)
    m, n, K = scp.m, scp.n, entries.K
    i, j, k, val = emap.row, emap.col, emap.entry, emap.value
    start, size, kind = _blocks(scp.dims)
    block_of_row = np.repeat(np.arange(size.size), size)
    hit_rows = np.unique(i)
    tb = np.unique(block_of_row[hit_rows])  # blocks with private data, in row order
    N = tb.size
    unit_of_block = -np.ones(size.size, dtype=np.int64)
    unit_of_block[tb] = np.arange(N)
    unit_of_row = unit_of_block[block_of_row] if m else np.zeros(0, dtype=np.int64)
    kinds = kind[tb] if N else np.zeros(0, dtype=str)
    row_ptr = np.concatenate([[0], np.cumsum(size[tb])]).astype(np.int64)
    row_idx = gather(np.concatenate([start, [m]]), tb) if N else np.zeros(0, np.int64)
    hit_unit = unit_of_row[hit_rows]
    hit_ptr = np.searchsorted(hit_unit, np.arange(N + 1)).astype(np.int64)
    u = unit_of_row[i]
    ind = sp.csr_matrix((np.ones(u.size), (u, k)), shape=(N, K))
    ind.data[:] = 1.0  # duplicates summed by the constructor: back to an indicator
    support = np.diff(ind.indptr).astype(int)
    # one pair per (row, entry): E_u[(i, k), j] = Delta_k T[i + m j, k]; pairs sorted by row,
    # so by unit
    pair_key = i.astype(np.int64) * K + k
    keys, pair = np.unique(pair_key, return_inverse=True)
    pair_unit = unit_of_row[keys // K] if keys.size else np.zeros(0, dtype=np.int64)
    E_all = sp.csr_matrix((val * entries.delta[k], (pair, j)), shape=(keys.size, n + 1))
    E_ptr = np.searchsorted(pair_unit, np.arange(N + 1)).astype(np.int64)
    matrix = _matrix_units(entries, kinds, ind, np.diff(E_ptr))
    E_all, E_ptr, keys, row_shape = _row_separable_forms(E_all, E_ptr, keys, K, n, kinds)
    E_all, E_ptr = _operator_forms(E_all, E_ptr, keys, K, n, kinds)
    cls, rep = _classes(E_all, E_ptr)
    plan = RobustPlan(kinds, row_ptr, row_idx, support, ind, hit_ptr, hit_rows, E_all, E_ptr,
                      matrix, np.zeros(N), cls, rep, row_shape=row_shape)
    band_norm, band_lin = _band_norms(scp, plan)
    return RobustPlan(**{**plan.__dict__, "band_norm": band_norm, "band_lin": band_lin})


def _matrix_units(entries: PrivateEntries, kinds: np.ndarray, ind: sp.csr_matrix,
                  pairs: np.ndarray) -> tuple[tuple[int, int] | None, ...]:
    """The (r, c) shape of the orthant units that are ``<C, M(x)>`` for one matrix parameter
    ``C`` reached once per entry (see :class:`RobustPlan`), None for the others."""
    N = kinds.size
    out: list[tuple[int, int] | None] = [None] * N
    sizes = np.array([int(p.size) for p in entries.params], dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(sizes)])
    cnt = np.diff(ind.indptr)
    cand = np.flatnonzero(np.isin(kinds, ("zero", "nonneg")) & (cnt > 0))
    if cand.size == 0:
        return tuple(out)
    first = ind.indices[ind.indptr[cand]]
    last = ind.indices[ind.indptr[cand + 1] - 1]
    par = np.searchsorted(starts, first, side="right") - 1
    matrix_like = np.array([len(p.shape) == 2 and min(p.shape) > 1 for p in entries.params])
    ok = (matrix_like[par] & (cnt[cand] == sizes[par]) & (pairs[cand] == sizes[par])
          & (first == starts[par]) & (last == starts[par] + sizes[par] - 1))
    for u, pj in zip(cand[ok], par[ok], strict=True):
        shape = entries.params[pj].shape
        out[u] = (int(shape[0]), int(shape[1]))
    return tuple(out)


def _row_separable_forms(E_all: sp.csr_matrix, E_ptr: np.ndarray, keys: np.ndarray, K: int,
                         n: int, kinds: np.ndarray
                         ) -> tuple[sp.csr_matrix, np.ndarray, np.ndarray, np.ndarray]:
    """A cone block whose private entries each reach ONE of its rows, every row alike.

    The block's change is ``J(x) g_S`` with ``J(x)[i, k] = E_(i,k) [x; 1]`` (row ``i`` of the
    block, entry ``k``).  When each entry reaches a single row, ``J J'`` is diagonal, so
    ``||J(x)||_op = max_i ||E_i [x; 1]||`` with ``E_i`` the pairs of row ``i``; when every row's
    ``E_i`` is the same matrix up to the order of its rows (``norm(A @ x - b) <= t`` with a
    private ``A`` and ``b`` of one sensitivity each), that is ``||E_i0 [x; 1]||`` for any
    one row ``i0``, and ``||J(x) g_S|| <= ||E_i0 [x; 1]|| ||g_S||``.  The generic ``||E_u [x;
    1]|| = ||J(x)||_F`` is larger by ``sqrt(rows)`` (22x on a 500-row fit).  Such a unit's map
    becomes ``E_i0``: every consumer (the counterpart, the violation bound, the loosened
    counterpart, ``auto``'s prediction) uses ``||change|| <= scale_u ||E_u [x; 1]||`` only, on
    the same noise event ``||g_S|| <= B_u sigma_u``.  Units whose rows differ keep ``J``'s
    Frobenius map.  Structure and declared sensitivities only (public).

    The change is then also ``G v`` with ``G[i, j]`` the noise of the entry of row ``i`` at
    ``E_i0``'s row ``j`` (distinct entries) and ``v = E_i0 [x; 1]``: Gaussian noise may bound
    ``||G||_op`` (``row_shape``, :func:`cvxdp.solvers.perturbation.noise._bounds`).

    Returns the maps, their pointers, the pairs' keys (``row K + entry``) of the kept rows and
    ``row_shape`` (``(N, 2)``: ``(rows, r)`` of the units changed, 0 elsewhere).
    """
    N = kinds.size
    rows_u = np.diff(E_ptr)
    shape = np.zeros((N, 2), dtype=np.int64)
    x_nnz = np.bincount(segments(E_ptr), weights=np.diff(E_all[:, :n].tocsr().indptr),
                        minlength=N) if N else np.zeros(0)
    cand = np.flatnonzero(np.isin(kinds, ("soc", "psd")) & (rows_u > 1) & (x_nnz > 0))
    if cand.size == 0:
        return E_all, E_ptr, keys, shape
    E_all = sp.csr_matrix(E_all)
    E_all.sort_indices()
    w = np.random.default_rng(54321).uniform(1.0, 2.0, n + 1)  # fixed: a hash, not noise
    finger = E_all @ w
    keep = np.ones(E_all.shape[0], dtype=bool)
    for u in cand:  # cone blocks only (a handful per model)
        lo, hi = int(E_ptr[u]), int(E_ptr[u + 1])
        row, ent = keys[lo:hi] // K, keys[lo:hi] % K
        if np.unique(ent).size != ent.size:
            continue  # an entry reaching two rows: J J' is not diagonal
        starts = np.flatnonzero(np.diff(row, prepend=-1))  # pairs are sorted by row
        if starts.size < 2 or np.unique(np.diff(np.append(starts, hi - lo))).size != 1:
            continue
        size = int(np.diff(np.append(starts, hi - lo))[0])
        order = np.argsort(finger[lo:hi].reshape(-1, size), axis=1, kind="stable")
        idx = lo + np.arange(0, hi - lo, size)[:, None] + order  # each row's pairs, sorted
        ref = E_all[idx[0]]
        if not all((E_all[idx[g]] != ref).nnz == 0 for g in range(1, idx.shape[0])):
            continue
        keep[lo + size:hi] = False  # the first row's pairs stand for the block
        shape[u] = (idx.shape[0], size)
    if keep.all():
        return E_all, E_ptr, keys, shape
    unit = segments(E_ptr)[keep]
    ptr = np.searchsorted(unit, np.arange(N + 1)).astype(np.int64)
    return sp.csr_matrix(E_all[np.flatnonzero(keep)]), ptr, keys[keep], shape


def _operator_forms(E_all: sp.csr_matrix, E_ptr: np.ndarray, keys: np.ndarray, K: int,
                    n: int, kinds: np.ndarray) -> tuple[sp.csr_matrix, np.ndarray]:
    """A cone block whose private data are constants only (a private right-hand side).

    Its change is ``M g_S`` with a constant matrix ``M`` (``M[i, k]``: the coefficient of entry
    ``k`` in row ``i`` of the block, times ``Delta_k``), so ``||M g_S|| <= ||M||_op ||g_S||``;
    the generic ``||E_u [x; 1]|| = ||M||_F`` is larger by up to ``sqrt(rank M)`` (45x on a
    private vector of 2000 prices fitted by ``sum_squares``).  Such a unit's map becomes the
    one row ``[x; 1] -> ||M||_op`` (public: the tensor's coefficients and the declared
    sensitivities); a scalar row's ``M`` is one row, where the two norms agree.
    """
    N = kinds.size
    rows_u = np.diff(E_ptr)
    x_nnz = np.bincount(segments(E_ptr), weights=np.diff(E_all[:, :n].tocsr().indptr),
                        minlength=N) if N else np.zeros(0)
    swap = np.flatnonzero(np.isin(kinds, ("soc", "psd")) & (rows_u > 1) & (x_nnz == 0))
    if swap.size == 0:
        return E_all, E_ptr
    op = np.zeros(swap.size)
    for t, u in enumerate(swap):  # cone blocks only (a handful per model)
        sl = slice(E_ptr[u], E_ptr[u + 1])
        pk = keys[sl]
        vals = np.asarray(E_all[sl][:, n].toarray()).ravel()
        _, r = np.unique(pk // K, return_inverse=True)
        _, c = np.unique(pk % K, return_inverse=True)
        M = sp.csr_matrix((vals, (r, c)))
        if np.all(np.diff(M.indptr) <= 1) and np.all(np.bincount(c) <= 1):
            op[t] = float(np.max(np.abs(vals), initial=0.0))  # a permuted diagonal
        elif M.shape[0] * M.shape[1] <= 4_000_000:
            op[t] = float(np.linalg.norm(M.toarray(), 2))
        else:
            op[t] = float(spla.svds(M, k=1, return_singular_vectors=False)[0]) * (1 + 1e-9)
    keep = np.ones(N, dtype=bool)
    keep[swap] = False
    kept_rows = gather(E_ptr, np.flatnonzero(keep))
    unit_of = np.concatenate([segments(E_ptr)[kept_rows], swap])
    new = sp.csr_matrix((op, (np.arange(swap.size), np.full(swap.size, n))),
                        shape=(swap.size, n + 1))
    order = np.argsort(unit_of, kind="stable")
    E_new = sp.vstack([E_all[kept_rows], new], format="csr")[order]
    ptr = np.searchsorted(unit_of[order], np.arange(N + 1)).astype(np.int64)
    return sp.csr_matrix(E_new), ptr


def _classes(E_all: sp.csr_matrix, E_ptr: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Group units whose ``E_u`` are identical (same rows, columns and values, in order).

    A fingerprint (row count, nonzeros and two random projections of the entries, summed in
    the same order for identical maps) proposes the groups; every member is then compared
    entry by entry with its group's first unit, and a unit that differs is its own class.
    """
    N = E_ptr.size - 1
    if N == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    E = sp.csr_matrix(E_all)
    E.sort_indices()
    rows = np.diff(E_ptr)
    data_ptr = E.indptr[E_ptr]
    nnz = np.diff(data_ptr)
    seg = segments(data_ptr)
    local = np.arange(E.shape[0]) - np.repeat(E_ptr[:-1], rows)
    elem_local = np.repeat(local, np.diff(E.indptr))
    gen = np.random.default_rng(12345)  # fixed: a hash, not noise
    w1 = gen.uniform(1.0, 2.0, E.shape[1])
    w2 = gen.uniform(1.0, 2.0, max(int(rows.max(initial=0)), 1))
    f1 = np.bincount(seg, weights=E.data * w1[E.indices] * w2[elem_local], minlength=N)
    f2 = np.bincount(seg, weights=(E.data + 0.5) * w2[elem_local] + w1[E.indices],
                     minlength=N)
    _, cand = np.unique(np.stack([rows.astype(float), nnz.astype(float), f1, f2], axis=1),
                        axis=0, return_inverse=True)
    cand = np.asarray(cand).ravel()
    first = np.full(cand.max() + 1, N, dtype=np.int64)
    np.minimum.at(first, cand, np.arange(N))
    rep = first[cand]
    # exact check against the representative: row lengths, columns and values
    other = np.flatnonzero(rep != np.arange(N))
    bad = np.zeros(N, dtype=bool)
    if other.size:
        a = gather(data_ptr, other)
        b = gather(data_ptr, rep[other])
        owner = np.repeat(other, nnz[other])
        diff = (E.indices[a] != E.indices[b]) | (E.data[a] != E.data[b])
        bad[owner[diff]] = True
        ra = gather(E_ptr, other)
        rb = gather(E_ptr, rep[other])
        rowner = np.repeat(other, rows[other])
        bad[rowner[np.diff(E.indptr)[ra] != np.diff(E.indptr)[rb]]] = True
    rep[bad] = np.flatnonzero(bad)
    reps, cls = np.unique(rep, return_inverse=True)
    return np.asarray(cls).ravel().astype(np.int64), reps.astype(np.int64)


def one_sided_abs(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(sgn, shift)`` with ``|x_j| <= sgn_j x_j + shift_j`` wherever ``lo_j <= x_j <= hi_j``
    bounds ``x_j`` on one side only: ``x_j >= l_j`` gives ``sgn_j = 1``, ``shift_j = 2 max(-l_j,
    0)``; ``x_j <= h_j`` gives ``-1``, ``2 max(h_j, 0)``.  ``(0, 0)`` where both bounds or
    neither are finite.  (For ``l_j <= x_j < 0``: ``-x_j <= x_j - 2 l_j``.)"""
    lo_f, hi_f = np.isfinite(lo), np.isfinite(hi)
    sgn = np.where(lo_f & ~hi_f, 1.0, np.where(hi_f & ~lo_f, -1.0, 0.0))
    shift = np.zeros(sgn.size)
    shift[sgn > 0] = 2.0 * np.maximum(-lo[sgn > 0], 0.0)
    shift[sgn < 0] = 2.0 * np.maximum(hi[sgn < 0], 0.0)
    return sgn, shift


def _band_norms(scp: SymmetricConeProgram, plan: RobustPlan
                ) -> tuple[np.ndarray, sp.csr_matrix]:
    """A bound ``||E_u [x; 1]||_2 <= T_u + l_u' x`` over the public domain for each equality
    unit (``T_u = 0``, ``l_u = 0`` elsewhere).

    With private right-hand sides only, ``E_u`` has just its constant column and the bound is
    that column's norm.  Private coefficients: by the triangle inequality ``||E_u [x; 1]|| <=
    sum_j ||E_u e_j|| |x_j| + ||E_u e_n||``, with ``|x_j| <= max(|l_j|, |h_j|)`` on a coordinate
    the public constraints bound on both sides (public solves), and ``|x_j| <= sgn_j x_j +
    2 max(-sgn_j b_j, 0)`` on one bounded on one side only (:func:`one_sided_abs`), linear in
    ``x``, so the band ``|s~_u(x)| <= scale_u (T_u + l_u'
    x)`` stays convex (two orthant rows).

    Raises
    ------
    PrivacySpecError
        Private coefficients in an equality multiply a variable the public constraints bound
        on neither side.
    """
    out = np.zeros(plan.N)
    n = scp.n
    zero = np.flatnonzero(plan.unit_kind == "zero")
    if zero.size == 0:
        return out, sp.csr_matrix((plan.N, n))
    norms = sp.csr_matrix(plan.column_norms()[zero])
    if not np.any((norms.indices < n) & (norms.data > 0)):
        # private right-hand sides only: each bound is its constant column's norm (the
        # general formula below gives exactly these numbers, with x's terms 0); read sparse,
        # not as a dense (units x n) array (0.1 s for the 2,000 equality units of a Huber fit)
        out[zero] = norms[:, n].toarray().ravel()
        return out, sp.csr_matrix((plan.N, n))
    cols = norms.toarray()
    need = np.flatnonzero(np.max(cols[:, :n], axis=0) > 0)
    lo, hi = coordinate_box(scp, need, allow_unbounded=True)
    lo_f, hi_f = np.isfinite(lo), np.isfinite(hi)
    free = need[~lo_f[need] & ~hi_f[need]]
    if free.size:
        names = variables_at(scp, free)
        which = ("variable" + ("s " if len(names) > 1 else " ") + ", ".join(
            f"'{v}'" for v in names)) if names else "variables"
        raise PrivacySpecError(
            "mechanism='perturbation': private coefficients enter an equality constraint "
            f"and multiply {which} that the constraints without private data bound on "
            "neither side, so the equality's noise cannot be bounded; add public bounds on "
            f"{'them' if names else 'those variables'} (one side is enough, e.g. x >= 0, or "
            "x <= 10, cp.norm(x) <= R) or use mechanism='mwu'.")
    both = lo_f & hi_f
    sgn, shift = one_sided_abs(lo, hi)
    xmax = np.where(both, np.maximum(np.abs(lo), np.abs(hi)), 0.0)
    out[zero] = cols[:, :n] @ (xmax + shift) + cols[:, n]
    lin = sp.csr_matrix((plan.N, n))
    if np.any(sgn[need] != 0):
        rows = sp.csr_matrix(cols[:, :n] * sgn)
        lin = sp.csr_matrix(sp.csr_matrix((np.ones(zero.size), (zero, np.arange(zero.size))),
                                          shape=(plan.N, zero.size)) @ rows)
    return out, lin


def _psd_order(size: np.ndarray) -> np.ndarray:
    """Matrix order r of PSD blocks with ``r (r + 1) / 2`` rows."""
    return np.round((np.sqrt(8 * np.asarray(size, dtype=float) + 1) - 1) / 2).astype(np.int64)


def psd_diagonal_rows(plan: RobustPlan, units: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(row, unit) of the diagonal rows (SCS svec) of the PSD units ``units``."""
    if units.size == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    r = _psd_order(np.diff(plan.row_ptr)[units])
    owner = np.repeat(units, r)
    jj = np.arange(int(r.sum())) - np.repeat(np.cumsum(r) - r, r)
    rr = np.repeat(r, r)
    off = jj * rr - jj * (jj - 1) // 2  # svec index of (j, j), lower triangle by columns
    return plan.row_idx[plan.row_ptr[owner] + off], owner

