"""Directions a cone program's set is unbounded in, proven from its structure (no solve).

A bound solve ``max d'x`` over ``{x : b - A x in K}`` on a direction the set does not bound is
the costliest kind: Clarabel stops such maxima at "almost solved" (a square ``t >= ||w||^2``
lets ``w`` grow without a recession ray in ``w``: the set's recession cone is ``{w = 0, t >=
0}``), and telling that apart from a large finite maximum takes a retry on rescaled squares and
a capped solve (:func:`cvxdp.solvers.public_part.bound_solve`): four or five solves per side.
Many such directions are unbounded for a reason visible in the sparsity pattern and the signs
of ``A``: every row the direction moves against can be restored by raising a variable that
only ever loosens the rows it occurs in (CVXPY's epigraph variables: ``t >= ||r||``, ``t >=
r^2``, ``u >= 1 - y x'w`` with ``u`` in the objective only).

:func:`raisable_columns` finds those variables: column ``t`` every entry of which is

* in an orthant row with a negative coefficient (raising ``t`` raises the slack ``b_k - A_k
  x``, without bound),
* in the head row of a second-order cone, with a negative coefficient, ``t`` occurring in no
  other row of that cone (the head's slack grows without bound while its members stay), or
* in a square's two rows (:func:`cvxdp.transform.epigraph.square_cones`: the cone holds iff
  ``t`` is at least a finite function of its other rows, so raising ``t`` keeps and restores
  it).

:func:`unbounded_maxima` then proves ``sup d'x = +inf`` for a direction ``d`` when every block
``x + s d`` (``s > 0``) moves against is one of those rows, restored by a raisable column
outside ``d``'s support: an orthant row ``k`` is moved against unless every term ``A_kj d_j``
(``j`` in the support) is ``<= 0``, a second-order cone whenever it reads the support other
than a raisable column that ``d`` raises (which only loosens it), and a
zero row, a PSD block or an exponential cone that reads the support is not restored (no proof).

Proof.  Let ``x0`` be in the set.  For ``s > 0`` put ``x(s) = x0 + s d + sum_t lam_t e_t`` over
the raisable columns ``t`` outside the support, ``lam_t >= 0``.  Rows that read neither the
support nor a raised column keep ``x0``'s slack.  A raised column only loosens the rows it
occurs in (the three kinds above).  An orthant row that ``s d`` does not move against keeps a
slack at least ``x0``'s; one it does holds a raisable column with a negative coefficient whose
increase restores any deficit; a second-order cone it moves holds a raisable head (or square)
that restores it for every value of its members.  Finitely many rows, so large enough
``lam_t`` make ``x(s)`` feasible for every ``s``, and ``d'x(s) = d'x0 + s ||d||^2`` (``d_t =
0`` on the raised columns) is unbounded.  The set must be non-empty: the caller holds a point
of it.  Structure and signs only: exact, no tolerance.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from cvxdp.transform.epigraph import square_cones

__all__ = ["UnboundedProof", "raisable_columns", "unbounded_maxima"]

# row kinds
_ZERO, _NONNEG, _HEAD, _MEMBER, _PSD = range(5)


class _Layout:
    """Row kinds, second-order cone of each row, the entries (explicit zeros dropped) and the
    raisable columns of a program."""

    def __init__(self, prog: Any) -> None:
        d = prog.dims
        A = sp.csr_matrix(prog.A, copy=True)
        A.eliminate_zeros()
        self.A, self.Ac = A, sp.csc_matrix(A)
        m, n = A.shape
        self.kind = np.full(m, _PSD, dtype=np.int8)
        self.kind[:d.zero] = _ZERO
        self.kind[d.zero:d.zero + d.nonneg] = _NONNEG
        self.cone = np.full(m, -1, dtype=np.int64)
        r0 = d.zero + d.nonneg
        soc_start = r0
        for i, q in enumerate(d.soc):
            self.kind[r0:r0 + q] = _MEMBER
            if q:
                self.kind[r0] = _HEAD
            self.cone[r0:r0 + q] = i
            r0 += q
        self.in_tail = np.zeros(n, dtype=bool)
        tail = getattr(prog, "exp_tail", None)
        if tail is not None and tail.A.shape[0]:
            cols = sp.csc_matrix(tail.A).indptr
            self.in_tail[:cols.size - 1] = np.diff(cols) > 0
        coo = A.tocoo()
        r, c, v = coo.row, coo.col, coo.data
        kind = self.kind[r]
        good = ((kind == _NONNEG) | (kind == _HEAD)) & (v < 0)
        # a square's member row is good for its own column: looked up only when some column
        # has no other bad entry (square_cones reads every cone)
        member_only = np.zeros(n, dtype=bool)
        member_only[c[~good & (kind == _MEMBER)]] = True
        member_only[c[~good & (kind != _MEMBER)]] = False
        if member_only.any():
            square_member = np.zeros(m, dtype=bool)
            for _, k, _ in square_cones(A, prog.b, d.soc, soc_start):
                square_member[k] = True
            good |= (kind == _MEMBER) & square_member[r]
        bad = np.zeros(n, dtype=bool)
        bad[c[~good]] = True
        self.raisable = ~bad & ~self.in_tail
        #: raisable columns each row reads; the head row of each second-order cone
        self.row_raisable = np.bincount(r[self.raisable[c]], minlength=m).astype(np.int64)
        self.head = np.cumsum(np.r_[soc_start, d.soc[:-1]]).astype(np.int64) if d.soc \
            else np.zeros(0, dtype=np.int64)
        self.unit = self._units(r, c, v, kind, n)

    def _units(self, r: np.ndarray, c: np.ndarray, v: np.ndarray, kind: np.ndarray,
               n: int) -> np.ndarray:
        """Bool ``(2, n)``: :func:`_restorable` for ``+e_j`` (row 0) and ``-e_j`` (row 1) of
        every column at once, entry by entry: a zero or PSD row fails both; an orthant row
        fails the side its coefficient's sign moves against when no raisable column but ``j``
        is in it; a second-order cone fails when its head holds no raisable column but ``j``,
        except for ``+e_j`` with ``j`` raisable (raising it only loosens the cone; a raisable
        ``j`` in a cone is in its head)."""
        rais = self.raisable[c]
        others = self.row_raisable[r] - rais
        in_cone = (kind == _HEAD) | (kind == _MEMBER)
        head = np.zeros(r.size, dtype=np.int64)
        head[in_cone] = self.head[self.cone[r[in_cone]]]
        head_others = self.row_raisable[head] - rais
        never = (kind == _ZERO) | (kind == _PSD)
        plus = never | ((kind == _NONNEG) & (v > 0) & (others <= 0)) \
            | (in_cone & ~rais & (head_others <= 0))
        minus = never | ((kind == _NONNEG) & (v < 0) & (others <= 0)) \
            | (in_cone & (head_others <= 0))
        ok = np.ones((2, n), dtype=bool)
        ok[0, c[plus]] = False
        ok[1, c[minus]] = False
        ok[:, self.in_tail] = False
        return ok


def raisable_columns(prog: Any) -> np.ndarray:
    """Bool ``(n,)``: the columns whose every entry loosens its row when the column grows
    (module doc); structure and signs only."""
    return _Layout(prog).raisable


class UnboundedProof:
    """The module doc's proof for one program, its structure read once: :meth:`proven` for a
    direction, :meth:`unit` for ``+-e_j`` (a table lookup)."""

    def __init__(self, prog: Any) -> None:
        self._lay = _Layout(prog)

    def unit(self, j: int, sign: float) -> bool:
        """``sup sign x_j = +inf`` proven (given a point of the set)."""
        return bool(self._lay.unit[0 if sign > 0 else 1, j])

    def proven(self, d: np.ndarray) -> bool:
        """``sup d'x = +inf`` proven (given a point of the set)."""
        d = np.asarray(d, dtype=float)
        D = np.flatnonzero(d)
        if D.size == 0 or self._lay.in_tail[D].any():
            return False
        if D.size == 1:
            return self.unit(int(D[0]), float(d[D[0]]))
        return _restorable(self._lay, d, D)


def unbounded_maxima(prog: Any, directions: list[np.ndarray]) -> np.ndarray:
    """Bool per direction: ``sup d'x = +inf`` over ``{x : b - A x in K}`` (its exponential
    tail included) is proven from structure (module doc), given that the set is non-empty.
    False means not proven (the direction may still be unbounded)."""
    proof = UnboundedProof(prog)
    return np.array([proof.proven(d) for d in directions], dtype=bool)


def _restorable(lay: _Layout, d: np.ndarray, D: np.ndarray) -> bool:
    """Whether every block ``x + s d`` moves against holds a raisable column outside ``D``."""
    Ac = lay.Ac
    starts, lens = Ac.indptr[D], Ac.indptr[D + 1] - Ac.indptr[D]
    if lens.sum() == 0:
        return True
    # the support's entries (row, value, position in D), read straight off the column arrays
    at = np.repeat(np.arange(D.size), lens)
    idx = np.arange(lens.sum()) - np.repeat(np.cumsum(lens) - lens, lens) + np.repeat(starts,
                                                                                   lens)
    rows, vals = Ac.indices[idx], Ac.data[idx]
    kind = lay.kind[rows]
    if np.any((kind == _ZERO) | (kind == _PSD)):
        return False
    # raisable columns per row, less those in D (raising them is not on offer: d moves them)
    helpers = lay.row_raisable.copy()
    np.subtract.at(helpers, rows, lay.raisable[D][at])
    # orthant rows: moved against unless every term A_kj d_j is <= 0 (no cancellation needed);
    # a raisable column's orthant entries are negative, so one restores the row
    against = rows[(kind == _NONNEG) & (vals * d[D][at] > 0)]
    if np.any(helpers[against] <= 0):
        return False
    # second-order cones read by the support (but for raisable columns it raises, which only
    # loosen them): restored by a raisable column in the head
    moved = ~(lay.raisable[D] & (d[D] > 0))[at] & ((kind == _HEAD) | (kind == _MEMBER))
    heads = lay.head[lay.cone[rows[moved]]]
    return not np.any(helpers[heads] <= 0)
