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

__all__ = ["propagated_box", "PROPAGATION_ROUNDS"]

#: rounds of :func:`propagated_box` (each one sparse pass over the linear rows)
PROPAGATION_ROUNDS = 20


def propagated_box(A: sp.spmatrix, b: np.ndarray, dims: Any, keep: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray]:
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
    """
    n_lin = dims.zero + dims.nonneg
    keep = np.asarray(keep, dtype=bool)[:n_lin]
    rows = np.flatnonzero(keep)
    R = sp.csr_matrix(sp.csr_matrix(A)[rows])
    bb = np.asarray(b, dtype=float)[rows]
    eq = rows < dims.zero
    # equalities in both directions: a'x <= b and -a'x <= -b
    R = sp.csr_matrix(sp.vstack([R, -R[eq]]))
    bb = np.concatenate([bb, -bb[eq]])
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
