"""Bounds on CVXPY's epigraph variables from bounds on the user's variables.

CVXPY writes ``w_i * norm(x - p_i)`` in an objective as ``w_i t_i`` with the cone constraint
``t_i >= ||x - p_i||``: the epigraph variable ``t_i`` is unbounded above in the feasible set
even when the user's ``x`` lies in a public box, so a bound that a proof needs on ``t_i`` (the
ball of objective perturbation, Thm C.12) cannot come from the constraints alone.  But some
optimal point has ``t_i`` tight -- ``t_i = ||x - p_i||`` -- whenever ``t_i`` occurs in nothing
else: lowering it keeps every constraint and does not raise a DCP objective, in which an
epigraph variable always carries a non-negative coefficient.  So ``t_i <= max over the box of
||x - p_i||`` holds at that optimal point, and interval arithmetic bounds that maximum.

:func:`epigraph_bounds` does this on the canonical program for second-order cone heads
``s_0 = b_0 - A_0 x >= ||(s_1, ..., s_q)||`` whose variable occurs in no other row, when every
other row of the cone is bounded by the box (public rows only: the caller passes the rows whose
data is public).  Everything here reads public structure and public constants only.

Squares and ``quad_over_lin`` (``t >= r^2``) are written as ``(1 + t) >= ||(t - 1, 2 r)||``:
``t`` occurs in the head and in one member row.  With ``s_0 = h + a t`` and ``s_1 = g + a' t``
(``|a'| = a > 0``, nothing else in those two rows) the ``t^2`` terms of ``s_0^2 - s_1^2`` cancel,
so the cone holds iff ``t >= (S^2 - h^2 + g^2) / (2 (a h - a' g))`` (``S`` the norm of the other
rows; the denominator must be positive: then ``s_0 - |s_1|`` is nondecreasing in ``t`` and the
feasible ``t`` are a half-line), tight at some optimal point for the same reason as above.  For
the square ``h = 1, g = -1, a = a' = 1``: ``t >= S^2 / 4 = r^2``.

:func:`exp_hypograph_bounds` is the same argument for the hypographs of CVXPY's exponential
cones (``log``): ``w @ log(u(x))`` in a maximised objective becomes ``w' t`` with
``t_k <= log(u_k(x))``, i.e. the cone ``(s_u, s_v, s_w) = (t_k, 1, u_k(x))``, ``s_v exp(s_u /
s_v) <= s_w``.  ``t_k`` is bounded above by the box but not below; where it occurs in no other
row and its objective coefficient is never positive (a public sign: DCP needs ``w >= 0``), raising
it to the tight value ``s_v log(s_w / s_v)`` keeps every constraint and does not raise the
minimised objective, so some optimal point has ``t_k`` in ``[s_v log(min s_w / s_v),
s_v log(max s_w / s_v)]`` (after its affine map), both ends by interval arithmetic over the box
(the lower one finite where ``min s_w > 0``).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

__all__ = ["epigraph_bounds", "epigraph_members", "exp_hypograph_bounds", "hypograph_cones",
           "hypograph_members", "row_range_bound", "square_cones"]


def row_range_bound(A: sp.csr_matrix, b: np.ndarray, rows: np.ndarray, lo: np.ndarray,
                    hi: np.ndarray) -> np.ndarray:
    """``max |b_k - A_k x|`` over the box ``lo <= x <= hi`` for each row (interval arithmetic;
    ``inf`` when a row involves an unbounded variable)."""
    out = np.empty(rows.size)
    fin = np.isfinite(lo) & np.isfinite(hi)
    mid, half = np.zeros(lo.size), np.full(lo.size, np.inf)
    mid[fin], half[fin] = (lo[fin] + hi[fin]) / 2, (hi[fin] - lo[fin]) / 2
    for t, k in enumerate(rows):
        cols = A.indices[A.indptr[k]:A.indptr[k + 1]]
        vals = A.data[A.indptr[k]:A.indptr[k + 1]]
        nz = vals != 0
        cols, vals = cols[nz], vals[nz]
        if np.any(~np.isfinite(half[cols])):
            out[t] = np.inf
            continue
        out[t] = abs(b[k] - vals @ mid[cols]) + np.abs(vals) @ half[cols]
    return out


def _epigraph_column(A: sp.csr_matrix, Ac: sp.csc_matrix, rows: np.ndarray
                     ) -> tuple[int, int | None] | None:
    """``(j, None)`` when the cone's head row ``rows[0]`` reads one variable ``j`` alone, with a
    negative coefficient (``s_0 = b_0 + a x_j``, ``a > 0``), and ``j`` occurs in no other row;
    ``(j, k)`` when ``j`` also occurs in exactly one member row ``k``, alone there (the square
    form of the module doc); None otherwise.  Structure only (``Ac``: ``A`` by columns;
    ``rows``: the cone's rows, consecutive)."""
    head = int(rows[0])
    if A.indptr[head + 1] - A.indptr[head] != 1 or A.data[A.indptr[head]] >= 0:
        return None
    j = int(A.indices[A.indptr[head]])
    start, end = Ac.indptr[j], Ac.indptr[j + 1]
    if end - start == 1:
        return j, None
    if end - start != 2:
        return None
    a, b = int(Ac.indices[start]), int(Ac.indices[start + 1])
    k = b if a == head else a if b == head else -1
    if not head < k <= int(rows[-1]):  # the other row is one of the cone's members
        return None
    return (j, k) if A.indptr[k + 1] - A.indptr[k] == 1 else None


def epigraph_members(A: sp.csr_matrix, soc: tuple[int, ...], soc_start: int,
                     heads: np.ndarray) -> set[int]:
    """The variables the member rows read of every second-order cone whose head row reads one
    of ``heads``: what :func:`epigraph_bounds` needs bounded to bound those heads.  Structure
    only."""
    need: set[int] = set()
    r0 = soc_start
    for q in soc:
        if np.isin(A.indices[A.indptr[r0]:A.indptr[r0 + 1]], heads).any():
            need.update(int(j) for j in np.unique(A[r0 + 1:r0 + q].indices))
        r0 += q
    return need


def epigraph_bounds(A: sp.spmatrix, b: np.ndarray, soc: tuple[int, ...], soc_start: int,
                    lo: np.ndarray, hi: np.ndarray, public_rows: np.ndarray,
                    rounds: int = 3) -> np.ndarray:
    """Upper bounds on epigraph variables that some optimal point satisfies (module doc).

    Parameters
    ----------
    A, b : canonical data (``A x + s = b``)
    soc : sizes of the second-order cone blocks; ``soc_start`` their first row
    lo, hi : ndarray (n,)
        Known bounds on the variables (``-inf`` / ``inf`` where unknown).
    public_rows : bool ndarray (m,)
        Rows whose data is public (only those enter a bound).
    rounds : int
        Epigraphs of epigraphs (``norm(norm(...))``) are resolved over this many rounds.

    Returns
    -------
    ndarray (n,)
        The new upper bounds (``hi`` where nothing new is known); lower bounds are unchanged.
    """
    A = sp.csr_matrix(A)
    Ac = sp.csc_matrix(A)
    hi = np.asarray(hi, dtype=float).copy()
    lo = np.asarray(lo, dtype=float)
    heads = []
    r0 = soc_start
    for q in soc:
        rows = np.arange(r0, r0 + q)
        r0 += q
        head = rows[0]
        hit = _epigraph_column(A, Ac, rows) if public_rows[rows].all() else None
        if hit is None:
            continue
        j, k = hit
        a = float(-A.data[A.indptr[head]])
        if k is None:  # the variable occurs in this head row only
            heads.append((j, a, float(b[head]), rows[1:], None))
            continue
        # t >= r^2 (module doc): t in the head and in exactly one member row, alone in both
        a1 = float(-A.data[A.indptr[k]])
        h, g = float(b[head]), float(b[k])
        den = 2.0 * (a * h - a1 * g)
        if abs(abs(a1) - a) > 1e-12 * a or den <= 0:
            continue
        heads.append((j, a, h, rows[1:][rows[1:] != k], (g, den)))
    for _ in range(rounds):
        changed = False
        for j, a, b0, rest, square in heads:
            if np.isfinite(hi[j]):
                continue
            r = row_range_bound(A, b, rest, lo, hi)
            if np.all(np.isfinite(r)):
                if square is None:
                    # s_0 = b0 + a t >= ||s_rest||, tight at t = (||s_rest|| - b0) / a
                    top = (float(np.linalg.norm(r)) - b0) / a
                else:
                    # s_0^2 - s_1^2 = S^2, tight at t = (S^2 - h^2 + g^2) / den (module doc)
                    g, den = square
                    top = (float(r @ r) - b0 * b0 + g * g) / den
                hi[j] = max(top, lo[j] if np.isfinite(lo[j]) else -np.inf)
                changed = True
        if not changed:
            break
    return hi


def _row_interval(A: sp.csr_matrix, b: np.ndarray, k: int, lo: np.ndarray, hi: np.ndarray
                  ) -> tuple[float, float]:
    """``[min, max]`` of ``b_k - A_k x`` over the box (interval arithmetic; infinite ends
    where an unbounded variable enters)."""
    cols = A.indices[A.indptr[k]:A.indptr[k + 1]]
    vals = A.data[A.indptr[k]:A.indptr[k + 1]]
    nz = vals != 0
    cols, vals = cols[nz], vals[nz]
    low = b[k] - np.sum(np.where(vals > 0, vals * hi[cols], vals * lo[cols]))
    top = b[k] - np.sum(np.where(vals > 0, vals * lo[cols], vals * hi[cols]))
    return (float(low) if np.isfinite(low) else -np.inf,
            float(top) if np.isfinite(top) else np.inf)


def exp_hypograph_bounds(A: sp.spmatrix, b: np.ndarray, exp_A: sp.spmatrix, exp_b: np.ndarray,
                         lo: np.ndarray, hi: np.ndarray, c_max: np.ndarray,
                         w_ranges: dict[int, tuple[float, float]] | None = None
                         ) -> tuple[np.ndarray, np.ndarray]:
    """Bounds on CVXPY's hypograph variables of exponential cones that some optimal point
    satisfies (module doc).

    Parameters
    ----------
    A, b : the program's cone rows (``A x + s = b``); a hypograph variable must not occur in
        them (nor in any other exponential cone row).
    exp_A, exp_b : the exponential cones' rows, triples ``(u, v, w)``
        (:class:`cvxdp.transform.scp.ExpTail`).
    lo, hi : ndarray (n,)
        Known bounds on the variables.
    c_max : ndarray (n,)
        A public upper bound on each objective coefficient (minimised sense); a variable is
        bounded only where it is ``<= 0``.
    w_ranges : dict, optional
        Cone index ``k`` -> a range of its ``s_w`` over the public constraints (e.g. two exact
        solves: tighter than the box's interval arithmetic on a simplex); intersected with it.

    Returns
    -------
    (lo, hi) : the new bounds (unchanged where nothing new is known).
    """
    A = sp.csc_matrix(A)
    E = sp.csr_matrix(exp_A)
    Ec = sp.csc_matrix(exp_A)
    lo = np.asarray(lo, dtype=float).copy()
    hi = np.asarray(hi, dtype=float).copy()
    for k in range(E.shape[0] // 3):
        u, v, w = 3 * k, 3 * k + 1, 3 * k + 2
        cols = E.indices[E.indptr[u]:E.indptr[u + 1]]
        vals = E.data[E.indptr[u]:E.indptr[u + 1]]
        if cols.size != 1 or vals[0] == 0 or E.indptr[v + 1] > E.indptr[v]:
            continue
        j, a = int(cols[0]), float(vals[0])
        s_v = float(exp_b[v])
        # t alone in its row, nowhere else, its coefficient never positive, and s_u = b_u - a
        # t increasing in t (a < 0): raising t to the tight value is free
        if (a >= 0 or s_v <= 0 or c_max[j] > 0 or A.indptr[j + 1] > A.indptr[j]
                or Ec.indptr[j + 1] - Ec.indptr[j] != 1):
            continue
        w_lo, w_hi = _row_interval(E, np.asarray(exp_b, dtype=float), w, lo, hi)
        if w_ranges is not None and k in w_ranges:
            w_lo, w_hi = max(w_lo, w_ranges[k][0]), min(w_hi, w_ranges[k][1])
        # s_u = b_u + |a| t <= s_v log(s_w / s_v), tight at some optimal point
        b_u = float(exp_b[u])
        if w_lo > 0:
            lo[j] = max(lo[j], (s_v * np.log(w_lo / s_v) - b_u) / -a)
        if np.isfinite(w_hi) and w_hi > 0:
            hi[j] = min(hi[j], (s_v * np.log(w_hi / s_v) - b_u) / -a)
    return lo, hi


def hypograph_cones(exp_A: sp.spmatrix, cols: np.ndarray) -> list[int]:
    """The exponential cones (indices ``k`` of the triples) whose first row reads one of
    ``cols`` (candidates for :func:`exp_hypograph_bounds`)."""
    E = sp.csr_matrix(exp_A)
    return [k for k in range(E.shape[0] // 3)
            if np.isin(E.indices[E.indptr[3 * k]:E.indptr[3 * k + 1]], cols).any()]


def hypograph_members(exp_A: sp.spmatrix, cones: list[int]) -> set[int]:
    """The variables the third row (``w``, the log's argument) of each of ``cones`` reads:
    what :func:`exp_hypograph_bounds` needs bounded to bound those cones' hypograph
    variables.  Structure only."""
    E = sp.csr_matrix(exp_A)
    return {int(j) for k in cones for j in E.indices[E.indptr[3 * k + 2]:E.indptr[3 * k + 3]]}


def square_cones(A: sp.spmatrix, b: np.ndarray, soc: tuple[int, ...], soc_start: int
                 ) -> list[tuple[int, int, int]]:
    """``(head row, member row, column)`` of the second-order cones that hold a square
    ``(h + a t, g + a' t, rest)`` (module doc): ``t`` in exactly those two rows, alone in
    each, with ``h = b_head > 0``, ``a = -A[head, t] > 0``, ``|a'| = a``, ``|g| = h`` and ``a h -
    a' g > 0`` -- so ``s_0^2 - s_1^2 = 2 t (a h - a' g)`` holds whatever the scale ``K`` of
    ``(h K + a t / K, g K + a' t / K)`` (:func:`cvxdp.transform.exact.solve_exact` uses it to
    keep the cone well conditioned).  Public structure and constants only."""
    A = sp.csr_matrix(A)
    Ac = sp.csc_matrix(A)
    out = []
    r0 = soc_start
    for q in soc:
        head, rows = r0, np.arange(r0, r0 + q)
        r0 += q
        hit = _epigraph_column(A, Ac, rows)
        if hit is None or hit[1] is None:
            continue
        j, k = hit
        a, a1 = float(-A.data[A.indptr[head]]), float(-A.data[A.indptr[k]])
        h, g = float(b[head]), float(b[k])
        if (h <= 0 or abs(abs(a1) - a) > 1e-12 * a or abs(abs(g) - h) > 1e-12 * h
                or a * h - a1 * g <= 0):
            continue
        out.append((head, k, j))
    return out
