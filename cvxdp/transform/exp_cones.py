"""Exponential cones in a model with private data: public rows kept apart, private coordinates
lifted into orthant rows.

CVXPY writes ``log``, ``exp``, ``entr``, ``log_sum_exp``, ``kl_div``, ``logistic``, ... with the
exponential cone ``K = cl{(u, v, w): v > 0, v exp(u / v) <= w}`` (SCS's order), which is not a
symmetric cone.  :func:`exp_apart` keeps those rows out of the symmetric program every private
step works on (``scp.exp_tail``); the exact solves add them back.

``K`` is closed under decreasing ``u`` (``v exp(u / v)`` increases with ``u``) and under
increasing ``w``.  So for affine ``s_u(x)``, ``s_w(x)`` and a new variable ``y``:

    ``(s_u(x), v, w) in K  <=>  exists y: s_u(x) <= y and (y, v, w) in K``
    ``(u, v, s_w(x)) in K  <=>  exists y: y <= s_w(x) and (u, v, y) in K``

(``=>``: take ``y = s_u(x)``; ``<=``: the monotonicity).  A private parameter in a cone's first
or last coordinate (``log_sum_exp(s - x)`` with private scores ``s``, ``log(alpha + x)`` with
private noise levels ``alpha``) is therefore moved into one orthant row ``sign (s(x) - y) ...``
holding the private data -- which perturbation tightens and its certificate loosens like any
other row -- and the cone itself becomes public.  The lifted program has the same optimum and
the same ``x``-feasible set (the projection), so answers, certificates and validation are
unchanged in meaning.  A private ``v`` coordinate (``K`` is not monotone in ``v``) is refused.

:class:`ExpLift` maps CVXPY's data (its rows: symmetric ones, then the cones) to the lifted
program, for :func:`cvxdp.transform.parametric.program_data` (noisy values) and
:func:`cvxdp.transform.parametric.entry_map` (the private entries' coefficients).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import cvxpy as cp
import numpy as np
import scipy.sparse as sp

from cvxdp.declarations import spec_parameters
from cvxdp.errors import UnsupportedProblemError
from cvxdp.transform.scp import ConeDims, ExpTail, SymmetricConeProgram
from cvxdp.transform.support import exp_cone_reason

__all__ = ["ExpLift", "exp_apart"]


@dataclass(frozen=True)
class ExpLift:
    """Where CVXPY's rows go in the lifted program.

    Attributes
    ----------
    n0 : int
        CVXPY's variables (the lifted program appends one per lifted row).
    m_all : int
        CVXPY's rows, exponential cones included.
    cut : int
        CVXPY's symmetric rows (the cones' rows follow).
    split : int
        ``zero + nonneg`` rows: the lifted rows are added at the end of the orthant block.
    rows : ndarray of int
        CVXPY rows (in the cones) whose private data move to an orthant row.
    signs : ndarray of float
        ``-1`` for a cone's first coordinate (``s_u <= y``), ``+1`` for its last (``y <= s_w``):
        the lifted row is ``sign (b_r - A_r x) - sign y >= 0``, i.e. ``A' = sign [A_r, 1]``,
        ``b' = sign b_r`` in ``A x + s = b``.
    """

    n0: int
    m_all: int
    cut: int
    split: int
    rows: np.ndarray
    signs: np.ndarray

    @property
    def k(self) -> int:
        return int(self.rows.size)

    def row_map(self) -> np.ndarray:
        """CVXPY row -> lifted row (``-1``: a public cone row, kept in the tail)."""
        out = np.full(self.m_all, -1, dtype=np.int64)
        sym = np.arange(self.cut)
        out[:self.cut] = np.where(sym < self.split, sym, sym + self.k)
        out[self.rows] = self.split + np.arange(self.k)
        return out

    def row_sign(self) -> np.ndarray:
        """The factor of each CVXPY row's data in its lifted row (1 except lifted rows)."""
        out = np.ones(self.m_all)
        out[self.rows] = self.signs
        return out

    def apply(self, A: Any, b: np.ndarray) -> tuple[sp.csc_matrix, np.ndarray]:
        """The lifted symmetric program's ``(A, b)`` from CVXPY's whole ``(A, b)``."""
        A = sp.csr_matrix(A)
        s = self.signs
        aux = sp.csr_matrix((s, (np.arange(self.k), np.arange(self.k))), shape=(self.k, self.k))
        pad = sp.csr_matrix((self.cut, self.k))
        top, low = A[:self.split], A[self.split:self.cut]
        new = sp.hstack([sp.diags(s) @ A[self.rows], aux], format="csr")
        out = sp.vstack([sp.hstack([top, pad[:self.split]]), new,
                         sp.hstack([low, pad[self.split:]])], format="csc")
        b = np.asarray(b, dtype=float)
        return out, np.concatenate([b[:self.split], s * b[self.rows], b[self.split:self.cut]])

    def bounds(self, A: Any, b: np.ndarray) -> tuple[sp.csc_matrix, np.ndarray]:
        """Entrywise sensitivity bounds on CVXPY's rows -> on the lifted rows (the new
        variables' coefficients are public constants: bound 0)."""
        A = sp.csr_matrix(A)
        pad = sp.csr_matrix((self.cut + self.k, self.k))
        order = np.concatenate([np.arange(self.split), self.rows, np.arange(self.split, self.cut)])
        return (sp.hstack([A[order], pad], format="csc"), np.asarray(b, dtype=float)[order])


def exp_apart(problem: cp.Problem, scp: SymmetricConeProgram, n_exp: int
              ) -> SymmetricConeProgram:
    """``scp`` (CVXPY's rows, symmetric ones first, ``n_exp`` cones last) with the cones kept
    apart in ``exp_tail`` and every cone coordinate holding private data lifted into an orthant
    row (module doc).  Structure only: which rows a private parameter reaches, never its values.

    Raises
    ------
    UnsupportedProblemError
        A private parameter reaches a cone's middle coordinate ``v``.
    """
    cut, m_all, n0 = scp.dims.rows, scp.m, scp.n
    sens = scp.sensitivity
    A = sp.csr_matrix(scp.A)
    private = np.zeros(m_all, dtype=bool)
    if sens is not None:
        private = (np.diff(sp.csr_matrix(sens.A).indptr) > 0) | (np.asarray(sens.b) > 0)
    tail_rows = np.flatnonzero(private[cut:]) + cut
    coord = (tail_rows - cut) % 3
    if np.any(coord == 1):
        ids = frozenset(p.id for spec in (sens.specs if sens is not None else ())
                        for p in spec_parameters(spec))
        raise UnsupportedProblemError("cannot solve this model privately: " + exp_cone_reason(
            problem, n_exp, private=True, private_ids=ids))
    d = scp.dims
    lift = ExpLift(n0=n0, m_all=m_all, cut=cut, split=d.zero + d.nonneg, rows=tail_rows,
                   signs=np.where(coord == 0, -1.0, 1.0))
    k = lift.k
    # the cones' rows, with each lifted coordinate replaced by its new variable (s = y)
    # (the lifted rows' entries dropped and their -1 added in one pass over the entries: a
    # row-by-row assignment cost 0.15 s for 500 cones)
    local = tail_rows - cut
    rows_ = sp.coo_matrix(A[cut:])
    drop = np.zeros(m_all - cut, dtype=bool)
    drop[local] = True
    kept = ~drop[rows_.row]
    tail_A = sp.csr_matrix((np.concatenate([rows_.data[kept], -np.ones(k)]),
                            (np.concatenate([rows_.row[kept], local]),
                             np.concatenate([rows_.col[kept], n0 + np.arange(k)]))),
                           shape=(m_all - cut, n0 + k))
    tail_A.sort_indices()
    tail_b = scp.b[cut:].copy()
    tail_b[local] = 0.0
    tail = ExpTail(A=tail_A, b=tail_b)
    if k == 0:
        if sens is not None:
            sens = dataclasses.replace(sens, A=sp.csc_matrix(sp.csr_matrix(sens.A)[:cut]),
                                       b=np.asarray(sens.b)[:cut])
        return dataclasses.replace(scp, A=sp.csc_matrix(A[:cut]), b=scp.b[:cut].copy(),
                                   exp_tail=tail, sensitivity=sens)
    A2, b2 = lift.apply(A, scp.b)
    if sens is not None:
        sA, sb = lift.bounds(sens.A, sens.b)
        sens = dataclasses.replace(sens, A=sA, b=sb, c=np.concatenate([sens.c, np.zeros(k)]))
    dims = ConeDims(zero=d.zero, nonneg=d.nonneg + k, soc=d.soc, psd=d.psd)
    return dataclasses.replace(
        scp, A=A2, b=b2, c=np.concatenate([scp.c, np.zeros(k)]), dims=dims, exp_tail=tail,
        sensitivity=sens, meta={**scp.meta, "exp_lift": lift})
