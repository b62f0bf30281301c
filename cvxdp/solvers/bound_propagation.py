"""Bounds on the variables from the public linear rows alone, without a solver.

:func:`propagated_box` is feasibility-based bound tightening over the rows ``a'x <= b`` and
``a'x = b`` of a cone program: a valid outer box of their feasible set (cone blocks left out),
exact on boxes, simplices and row sums.  The public-part solvers use it where two exact solves
per variable would cost too much (:data:`cvxdp.solvers.public_part.BOX_SOLVES_MAX`).

References
----------
Belotti, Cafieri, Lee & Liberti 2012, "On feasibility based bounds tightening" (and the
fixed-point analysis of Belotti 2013).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from cvxdp.transform.scp import ConeDims

__all__ = ["propagated_box", "proven_empty", "soc_starts", "PROPAGATION_ROUNDS"]

#: rounds of :func:`propagated_box` (each one sparse pass over the linear rows)
PROPAGATION_ROUNDS = 20


def propagated_box(A: sp.spmatrix, b: np.ndarray, dims: Any, keep: np.ndarray, *,
                   cones: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """An outer box of the kept rows' feasible set by bound propagation, without a solver.

    Every kept linear row reads ``a'x <= b_r`` (an inequality ``a'x + s = b_r``, ``s >= 0``) or
    ``a'x = b_r`` (both directions).  Given a box, ``a_j x_j <= b_r - sum_{i != j} min(a_i
    lo_i, a_i hi_i)`` holds at every feasible point, which bounds ``x_j`` above (``a_j > 0``)
    or below (``a_j < 0``); the sum excludes ``j`` by counting the infinite terms apart.
    Repeated passes only shrink the box (feasibility-based bound tightening; module doc), and
    every box of every pass
    contains the feasible set of the kept rows (cone blocks are left out: a superset), so it
    is a valid, possibly loose, bound -- exact on boxes, simplices and row sums.  Public data
    only.  Returns ``(lo, hi)`` with ``-inf`` / ``inf`` where nothing bounds a coordinate.

    ``cones=True`` adds the linear rows every kept second-order cone block implies
    (:func:`_soc_rows`): ``t = 1 + y`` of ``sum_squares``' rotated cone is then bounded below.
    """
    n_lin = dims.zero + dims.nonneg
    keep_all = np.asarray(keep, dtype=bool)
    keep = keep_all[:n_lin]
    rows = np.flatnonzero(keep)
    R = sp.csr_matrix(sp.csr_matrix(A)[rows])
    bb = np.asarray(b, dtype=float)[rows]
    eq = rows < dims.zero
    # equalities in both directions: a'x <= b and -a'x <= -b
    R = sp.csr_matrix(sp.vstack([R, -R[eq]]))
    bb = np.concatenate([bb, -bb[eq]])
    if cones and dims.soc:
        C, cb = _soc_rows(sp.csr_matrix(A), np.asarray(b, dtype=float), dims, keep_all)
        R = sp.csr_matrix(sp.vstack([R, C]))
        bb = np.concatenate([bb, cb])
    R.eliminate_zeros()
    n = A.shape[1]
    lo, hi = np.full(n, -np.inf), np.full(n, np.inf)
    if R.nnz == 0:
        return lo, hi
    row_of = np.repeat(np.arange(R.shape[0]), np.diff(R.indptr))
    j, a = R.indices, R.data
    for _ in range(PROPAGATION_ROUNDS):
        with np.errstate(invalid="ignore"):
            term = np.where(a > 0, a * lo[j], a * hi[j])  # min of a_j x_j over the box
        inf = ~np.isfinite(term)
        fin_sum = np.bincount(row_of, weights=np.where(inf, 0.0, term), minlength=R.shape[0])
        n_inf = np.bincount(row_of, weights=inf.astype(float), minlength=R.shape[0])
        ok = (n_inf[row_of] - inf) == 0  # the other terms are all finite
        with np.errstate(invalid="ignore", divide="ignore"):
            bound = (bb[row_of] - (fin_sum[row_of] - np.where(inf, 0.0, term))) / a
        # rounding: push each new bound outward by a relative 1e-12
        bound = bound + np.abs(bound) * 1e-12 * np.sign(a)
        new_hi, new_lo = hi.copy(), lo.copy()
        up, dn = ok & (a > 0), ok & (a < 0)
        np.minimum.at(new_hi, j[up], bound[up])
        np.maximum.at(new_lo, j[dn], bound[dn])
        if np.array_equal(new_hi, hi) and np.array_equal(new_lo, lo):
            break
        lo, hi = new_lo, new_hi
    return lo, hi


def soc_starts(dims: Any) -> np.ndarray:
    """The row of each second-order cone block's head (the blocks follow the linear rows)."""
    sizes = np.asarray(dims.soc, dtype=int)
    return dims.zero + dims.nonneg + np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(int)


def _soc_rows(A: sp.csr_matrix, b: np.ndarray, dims: Any, keep: np.ndarray
              ) -> tuple[sp.csr_matrix, np.ndarray]:
    """The linear rows a second-order cone block implies, as ``a'x <= b`` rows.

    The block's slack ``s = b - A x`` lies in ``{s_0 >= ||s_1..||_2}``, so ``s_0 >= |s_i|``
    for every member: ``s_0 - s_i >= 0`` and ``s_0 + s_i >= 0``, i.e. ``(A_0 -+ A_i) x <= b_0
    -+ b_i`` (a polyhedral outer approximation of the cone; blocks with a row not kept are
    left out)."""
    sizes = np.asarray(dims.soc, dtype=int)
    starts = soc_starts(dims)
    ok = np.array([q >= 2 and keep[r0:r0 + q].all() for r0, q in zip(starts, sizes, strict=True)],
                  dtype=bool)
    # one (head, member) pair per member row of each kept block, in one indexing each
    head = np.repeat(starts[ok], sizes[ok] - 1)
    member = np.concatenate([np.arange(r0 + 1, r0 + q) for r0, q in
                             zip(starts[ok], sizes[ok], strict=True)] or [np.zeros(0, dtype=int)])
    if head.size == 0:
        return sp.csr_matrix((0, A.shape[1])), np.zeros(0)
    H, M = A[head], A[member]
    return (sp.csr_matrix(sp.vstack([H - M, H + M])),
            np.concatenate([b[head] - b[member], b[head] + b[member]]))


def proven_empty(prog: Any, slack: float) -> bool:
    """Whether bound propagation proves that no point meets every row of ``prog`` (a
    :class:`~cvxdp.transform.scp.SymmetricConeProgram`) to within ``slack``.

    The rows, each relaxed by ``slack``: the equalities ``|b - a'x| <= slack`` (two
    inequalities), the orthant rows ``a'x <= b + slack``, the linear rows each second-order
    block implies (``|s_i| <= s_0 + slack``: a block violated by at most ``slack``, ``||s_bar||
    - s_0 <= slack``, meets them), a PSD block's diagonal (``s_kk >= -slack``: its smallest
    eigenvalue is at most each diagonal entry) and each exponential cone's ``v, w >= -slack``
    (:func:`cvxdp.transform.reference.exp_cone_violations` counts a triple with ``v`` or ``w``
    below ``-slack`` as violated by more than ``slack``).  Every point within ``slack`` of every
    row meets these linear rows, so it lies in every box of :func:`propagated_box` over them;
    an empty box (some ``lo_j > hi_j``) proves there is none.  Data of ``prog`` only.
    """
    d = prog.dims
    A = sp.csr_matrix(prog.A)
    b = np.asarray(prog.b, dtype=float)
    n = A.shape[1]
    z, lin = d.zero, d.zero + d.nonneg
    parts = [A[:z], -A[:z], A[z:lin]]
    rhs = [b[:z], -b[:z], b[z:lin]]
    if d.soc:
        C, cb = _soc_rows(A, b, d, np.ones(A.shape[0], dtype=bool))
        parts.append(C)
        rhs.append(cb)
    start = lin + int(sum(d.soc))
    for r in d.psd:  # SCS's svec: the diagonal entries of each lower-triangular column
        diag = start + np.concatenate([[0], np.cumsum(np.arange(r, 1, -1))]).astype(int)
        parts.append(A[diag])  # s_kk = b_kk - A_kk x >= -slack
        rhs.append(b[diag])
        start += r * (r + 1) // 2
    if prog.exp_tail is not None and prog.exp_tail.cones:
        tail = prog.exp_tail
        T = tail.rows(n)
        vw = np.flatnonzero(np.arange(T.shape[0]) % 3 != 0)
        parts.append(T[vw])
        rhs.append(np.asarray(tail.b, dtype=float)[vw])
    R = sp.csr_matrix(sp.vstack(parts))
    bb = np.concatenate(rhs) + slack
    if R.shape[0] == 0:
        return False
    dims = ConeDims(nonneg=R.shape[0])
    lo, hi = propagated_box(R, bb, dims, np.ones(R.shape[0], dtype=bool))
    return bool(np.any(lo > hi))
