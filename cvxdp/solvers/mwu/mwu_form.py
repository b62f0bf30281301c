"""From a canonical cone program to the MWU's form ``{z in K : tr z = 1, <a_i, z> <= h_i}``.

The canonical program (``cvxdp.transform``) is ``min c'x  s.t.  A x + s = b, s in K`` with x
free.  The primal MWU of Song, Xue & Zhang 2025 (App. C) needs a *distribution* z in a symmetric
cone and linear inequalities.  :func:`build_mwu_form` gets there in public steps only:

1. **Cone variables as they are.**  A cone block of rows that is public and whose rows each
   have one non-zero in a column not used before (``x_k >= 0``, ``y >= -1``, ``X >> 0``,
   ``norm(y - y0) <= r``, ...) *is* a (shifted) cone variable: those columns are written
   ``x_k = (b_j - s_j) / A_jk`` with ``s`` in the block (SOC/PSD blocks are claimed before
   single orthant rows).  The shift ``b_j / A_jk`` is public; rows with private coefficients
   get the private right-hand side ``b - A shift`` (its sensitivity ``|dA| |shift|`` is added).
2. **Free variables** (the remaining columns) are split ``x = x+ - x-`` into orthant pairs.
3. **Remaining rows**: an orthant row is one inequality; an equality row is two; a second-order
   or PSD block that is not a variable gets its slack ``s_B`` as a cone variable and its rows
   ``A_B x + s_B = b_B`` become two inequalities each.
4. **Trace bound R**: a public bound on ``tr z`` at feasible points, from ``trace_bound=`` or
   computed from the constraints that carry no private data (refused if neither exists); a
   slack coordinate ``w = 1 - tr z / R`` makes the trace exactly 1.
5. **Width** ``rho = max_i ||a_i||_inf`` (spectral norm in the algebra) is divided out so that
   losses satisfy ``||a_i|| <= 1``; rows with private data use the public ``width=`` bound.

Violations of the MWU form are ``R * rho`` times those of the normalised rows, so an accuracy
``alpha`` on the user's rows is ``alpha / (R rho)`` for the MWU.

References
----------
Song, Xue & Zhang (2025), Appendix C (trace normalisation), Def 3.7.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp

from cvxdp.errors import InfeasibleProblemError, UnsupportedProblemError
from cvxdp.solvers.bound_propagation import propagated_box
from cvxdp.solvers.mwu.mwu import BlockAlgebra
from cvxdp.solvers.public_part import (
    BOX_SOLVES_MAX,
    UnitDirections,
    public_bounds,
    public_feasibility,
)

__all__ = ["MWUForm", "build_mwu_form"]


@dataclass
class MWUForm:
    """The MWU form of a cone program (normalised: width 1, distribution variable).

    Attributes
    ----------
    G : csr_matrix (m, k)
        Rows ``a_i / rho`` in dual coordinates over the normalised variable (last coordinate of
        the orthant block is the trace slack ``w``).
    h : ndarray (m,)
        ``h_i / (R rho)``.
    algebra : BlockAlgebra
    dG : csr_matrix (m, k)
        Entrywise bound on ``|G - G'|`` between neighbours (constraint privacy), same scaling.
    dh : ndarray (m,)
        Entrywise bound on ``|h - h'|`` (scalar privacy), same scaling.
    P : csr_matrix (n, k)
        ``x = R * P @ z + shift`` maps the normalised MWU variable back to the cone program.
    R, rho : float
        Trace bound and width.
    kinds : ndarray of str
        What each row is (``"ineq"``, ``"eq+"``, ``"eq-"``, ``"cone+"``, ``"cone-"``, ``"target"``).
    c_z : ndarray (k,)
        Objective in z-coordinates: ``c'x = R c_z . z + c_z_shift``.
    shift : ndarray (n,)
        Public offset of the shifted cone variables.
    info : dict
    """

    G: sp.csr_matrix
    h: np.ndarray
    algebra: BlockAlgebra
    dG: sp.csr_matrix
    dh: np.ndarray
    P: sp.csr_matrix
    R: float
    rho: float
    kinds: np.ndarray
    c_z: np.ndarray
    shift: np.ndarray
    c_z_shift: float = 0.0
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def m(self) -> int:
        return self.G.shape[0]

    def to_scp_point(self, z: np.ndarray) -> np.ndarray:
        """The cone-program point ``x = R P z + shift``."""
        return self.R * (self.P @ z) + self.shift

    @property
    def objective_width(self) -> float:
        """The width the target row is divided by: the objective's spectral norm (``rho``
        when it is not recorded, 1 when both are 0)."""
        return float(self.info.get("objective_width") or self.rho) or 1.0

    def with_target(self, tau: float) -> MWUForm:
        """A copy with one more public row ``c'x <= tau`` (canonical minimisation sense).

        The row is divided by its own width (the objective's spectral norm), not by ``rho``:
        its violation in objective units is ``R * objective_width`` times the normalised one.
        """
        w = self.objective_width
        row = sp.csr_matrix(self.c_z[None, :] / w)
        G = sp.vstack([self.G, row], format="csr")
        h = np.append(self.h, (tau - float(self.c_z_shift)) / (self.R * w))
        dG = sp.vstack([self.dG, sp.csr_matrix((1, self.G.shape[1]))], format="csr")
        return MWUForm(G, h, self.algebra, dG, np.append(self.dh, 0.0), self.P, self.R,
                       self.rho, np.append(self.kinds, "target"), self.c_z, self.shift,
                       self.c_z_shift, dict(self.info))


def _monomial(A: sp.csr_matrix, rows: np.ndarray) -> np.ndarray | None:
    """Column of each row if every row has exactly one stored entry, else None.

    Read from ``A``'s index arrays (``A[rows]`` built a matrix per block: 0.13 s over the 1,200
    size-3 cones of a colour image's total variation)."""
    if np.any(A.indptr[rows + 1] - A.indptr[rows] != 1):
        return None
    return A.indices[A.indptr[rows]].copy()


def build_mwu_form(
    A: sp.spmatrix,
    b: np.ndarray,
    c: np.ndarray,
    dims: Any,
    *,
    dA: sp.spmatrix | None = None,
    db: np.ndarray | None = None,
    trace_bound: float | None = None,
    width: float | None = None,
    check_feasible: bool = True,
    estimate: bool = False,
) -> MWUForm:
    """Build the normalised MWU form of ``min c'x s.t. A x + s = b, s in K`` (see module doc).

    Parameters
    ----------
    A, b, c, dims
        The canonical cone program (``cvxdp.transform.SymmetricConeProgram`` fields).
    dA : sparse, optional
        Entrywise bounds on ``|A - A'|`` between neighbours (constraint privacy).
    db : ndarray, optional
        Entrywise bounds on ``|b - b'|`` (scalar privacy).
    trace_bound : float, optional
        Public bound R on ``tr z`` at feasible points; computed from the public rows if omitted.
    width : float, optional
        Public bound on ``||a_i||_inf`` for rows that carry private data; defaults to
        ``max(1, public width)`` (the paper's normalisation ``lambda(a_i) in [-1, 1]``; privacy
        does not depend on it, only the utility bound does).
    check_feasible : bool
        Decide the feasibility of the public rows with an exact solve (public data only) and
        refuse an infeasible public part.  The trace-bound solves decide it anyway; this adds
        the check when R comes from ``trace_bound=`` or a public equality ``tr z = R`` (which
        need no solve).  ``solve_general`` checks before calling and passes False.
    estimate : bool
        For a prediction only (``mechanism="auto"``): past
        :data:`cvxdp.solvers.public_part.BOX_SOLVES_MAX` free variables, those that bound
        propagation bounds take its box in the trace bound instead of two solves each (a valid
        R, possibly larger than the solved one).

    Returns
    -------
    MWUForm

    Raises
    ------
    UnsupportedProblemError
        No public trace bound can be derived (unbounded public part) and none was given.
    InfeasibleProblemError
        The public part of the model is infeasible.

    References
    ----------
    Song, Xue & Zhang (2025), Appendix C (normalisation to distributions), Algorithm 5
    (width rho).
    """
    A = sp.csr_matrix(A, dtype=float)
    b = np.asarray(b, dtype=float)
    c = np.asarray(c, dtype=float)
    nrows, n = A.shape
    dA = sp.csr_matrix((nrows, n)) if dA is None else sp.csr_matrix(abs(sp.csr_matrix(dA)))
    db = np.zeros(nrows) if db is None else np.abs(np.asarray(db, dtype=float))
    row_private = (np.asarray(dA.sum(axis=1)).ravel() > 0) | (db > 0)
    blocks = dims.blocks()

    claimed = np.full(n, -1)  # column -> z coordinate it is claimed by
    var_rows = np.zeros(nrows, dtype=bool)
    orth_cols: list[int] = []
    orth_rows: list[int] = []
    soc_var, psd_var, soc_slack, psd_slack = [], [], [], []
    # cone blocks first, so that a bound row (X[0, 0] >= 0.1) does not take a column that a
    # PSD / SOC variable block would claim
    blocks = [bl for bl in blocks if bl[0] in ("soc", "psd")] + [
        bl for bl in blocks if bl[0] == "nonneg"]
    for kind, r0, nr, order in blocks:
        if nr == 0:
            continue
        rows = np.arange(r0, r0 + nr)
        if kind == "nonneg":
            cols = A.indices[A.indptr[rows]]
            ok = (np.diff(A.indptr)[rows] == 1) & ~row_private[rows]
            # one membership test per row in a set (the list's took 43 ms over 1,000 rows)
            taken = set(orth_cols)
            for j, col in zip(rows[ok].tolist(), cols[ok].tolist(), strict=True):
                if claimed[col] < 0 and col not in taken:
                    taken.add(col)
                    orth_cols.append(col)
                    orth_rows.append(j)
            continue
        cols = _monomial(A, rows)
        if (cols is not None and not row_private[rows].any()
                and len(set(cols.tolist())) == nr and np.all(claimed[cols] < 0)
                and not set(cols.tolist()) & set(orth_cols)):
            (soc_var if kind == "soc" else psd_var).append((rows, cols, order))
            claimed[cols] = 0
        else:
            (soc_slack if kind == "soc" else psd_slack).append((rows, order))
    orth_cols_a = np.asarray(orth_cols, dtype=int)
    claimed[orth_cols_a] = 0
    free = np.flatnonzero(claimed < 0)
    n_orth = len(orth_cols) + 2 * len(free)
    soc_sizes = [o for _, _, o in soc_var] + [o for _, o in soc_slack]
    psd_sizes = [o for _, _, o in psd_var] + [o for _, o in psd_slack]
    alg = BlockAlgebra(n_orth, tuple(soc_sizes), tuple(psd_sizes))  # without the slack w
    k = alg.dim

    # x = P z
    Pr, Pc, Pv = [], [], []
    var_rows[orth_rows] = True
    if orth_cols:
        Pr += orth_cols
        Pc += list(range(len(orth_cols)))
        Pv += list(-1.0 / A[orth_rows, orth_cols_a].A1)
    off = len(orth_cols)
    Pr += free.tolist() * 2
    Pc += list(range(off, off + 2 * len(free)))
    Pv += [1.0] * len(free) + [-1.0] * len(free)
    var_blocks = soc_var + psd_var
    slack_blocks = soc_slack + psd_slack
    var_offs = list(alg._soc_off[:len(soc_var)]) + list(alg._psd_off[:len(psd_var)])
    slack_offs = list(alg._soc_off[len(soc_var):]) + list(alg._psd_off[len(psd_var):])
    for (rows, cols, _), o in zip(var_blocks, var_offs, strict=True):
        var_rows[rows] = True
        Pr += cols.tolist()
        Pc += list(range(o, o + len(rows)))
        Pv += list(-1.0 / A[rows, cols].A1)
    P = sp.csr_matrix((Pv, (Pr, Pc)), shape=(n, k))
    # x_col = (b_j - s_j) / A_j,col for a claimed column: x = P z + shift
    shift = np.zeros(n)
    if orth_cols:
        shift[orth_cols_a] = b[orth_rows] / A[orth_rows, orth_cols_a].A1
    for rows, cols, _ in var_blocks:
        shift[cols] = b[rows] / A[rows, cols].A1
    b_eff = b - A @ shift
    db_eff = db + abs(dA) @ np.abs(shift)  # private rows: A_j shift moves with A_j

    # constraint rows over z (dual coordinates)
    Az = (A @ P).tocsr()
    dAz = (dA @ abs(P)).tocsr()
    zero_rows = np.arange(dims.zero)
    R_info: dict[str, Any] = {}
    # A public equality "tr z = R" makes the slack coordinate unnecessary: the MWU's own
    # normalisation enforces it exactly (e.g. sum(x) == 1 with x >= 0, trace(X) == 1).
    lin = alg.gram * alg.identity()
    lin[len(orth_cols):len(orth_cols) + 2 * len(free)] = 0.0
    exact_R = None
    # a row equal to kappa * lin (kappa != 0, rtol 1e-12, atol 0) is non-zero wherever lin is,
    # so it stores at least as many entries as lin has non-zeros: rows storing fewer cannot
    # match and are not densified (a 1,200-variable smoother's 800 dynamics rows: 0.12 s)
    # likewise a row with a non-zero where lin is 0 cannot match (|row| <= rtol * 0 there):
    # a dynamics row over free variables (whose lin entries are 0) is not densified either
    lin_nnz = int(np.count_nonzero(lin))
    stored = np.diff(Az.indptr)
    entry_row = np.repeat(np.arange(Az.shape[0]), stored)
    off_lin = np.bincount(entry_row[(Az.data != 0) & (lin[Az.indices] == 0)],
                          minlength=Az.shape[0])
    for j in zero_rows:
        if row_private[j] or lin_nnz == 0 or stored[j] < lin_nnz or off_lin[j] > 0:
            continue
        row = Az[j].toarray().ravel()
        nz = lin != 0
        kappa = row[nz][0] / lin[nz][0] if row[nz][0] != 0 else 0.0
        if (kappa != 0 and np.allclose(row, kappa * lin, rtol=1e-12, atol=0)
                and b_eff[j] / kappa > 0):
            exact_R = float(b_eff[j] / kappa)
            zero_rows = zero_rows[zero_rows != j]
            R_info["trace_bound_source"] = "exact (public equality tr z = R)"
            break
    if exact_R is None:  # add the slack coordinate w as the last orthant coordinate
        alg = BlockAlgebra(n_orth + 1, tuple(soc_sizes), tuple(psd_sizes))
        ins = lambda M: sp.hstack([M[:, :n_orth], sp.csr_matrix((M.shape[0], 1)),  # noqa: E731
                                   M[:, n_orth:]], format="csr")
        P, Az, dAz = ins(P), ins(Az), ins(dAz)
        k = alg.dim
        slack_offs = [o + 1 for o in slack_offs]
    w_coord = n_orth if exact_R is None else None
    ineq_rows = np.array([j for j in range(dims.zero, dims.zero + dims.nonneg)
                          if not var_rows[j]], dtype=int)
    slack_rows = np.concatenate([rows for rows, _ in slack_blocks]) if slack_blocks else \
        np.zeros(0, dtype=int)
    slack_cols = [np.arange(o, o + len(rows))
                  for (rows, _), o in zip(slack_blocks, slack_offs, strict=True)]
    slack_cols_a = np.concatenate(slack_cols) if slack_cols else np.zeros(0, dtype=int)
    S = sp.csr_matrix((np.ones(len(slack_rows)), (np.arange(len(slack_rows)), slack_cols_a)),
                      shape=(len(slack_rows), k))
    eq_rows = np.concatenate([zero_rows, slack_rows]).astype(int)
    E = sp.vstack([Az[zero_rows], Az[slack_rows] + S], format="csr")
    G = sp.vstack([Az[ineq_rows], E, -E], format="csr")
    h = np.concatenate([b_eff[ineq_rows], b_eff[eq_rows], -b_eff[eq_rows]])
    dG = sp.vstack([dAz[ineq_rows], dAz[eq_rows], dAz[eq_rows]], format="csr")
    dh = np.concatenate([db_eff[ineq_rows], db_eff[eq_rows], db_eff[eq_rows]])
    src = np.concatenate([ineq_rows, eq_rows, eq_rows])
    kinds = np.array(["ineq"] * len(ineq_rows) + ["eq+"] * len(eq_rows) + ["eq-"] * len(eq_rows))
    c_z = P.T @ c

    if check_feasible and (exact_R is not None or trace_bound is not None):
        if public_feasibility(A, b, dims, row_private) in ("infeasible",
                                                            "infeasible_inaccurate"):
            raise InfeasibleProblemError(
                "the constraints that carry no private data are infeasible; fix the model "
                "(the private solver needs a feasible public part).")

    # trace bound
    if exact_R is not None:
        R = exact_R
    elif trace_bound is None:
        R = _public_trace_bound(A, b, dims, row_private, P, shift, alg, free, slack_blocks,
                                slack_offs, R_info, estimate)
    else:
        R = float(trace_bound)
        if not (math.isfinite(R) and R > 0):
            raise UnsupportedProblemError(f"trace_bound must be finite and > 0, got {R!r}.")
        R_info["trace_bound_source"] = "user"

    # width (EJA spectral norm of each row element a = g / gram)
    G_el = G.multiply(1.0 / alg.gram[None, :]).tocsr()
    priv = (np.diff(dG.indptr) > 0) | (dh > 0)
    pub_w = _row_widths(G_el[np.flatnonzero(~priv)], alg)
    obj_w = alg.norm_inf(c_z / alg.gram) if np.any(c_z) else 0.0
    if priv.any():
        wp = float(width) if width is not None else max(1.0, pub_w)
        R_info["width_private_rows"] = "user" if width is not None else "assumed"
    else:
        wp = 0.0
    # The objective row is normalised by its own width (with_target): a large objective must
    # not shrink every constraint row (objective x 100 moved the violation of
    # the constraints from 0.012 to 0.55).  Each row's losses stay in [-1, 1] either way, which
    # is all the MWU's regret bound needs (Alg. 1 / Thm C.7: width 1 after normalisation).
    rho = max(pub_w, wp, 1e-12) if (pub_w > 0 or wp > 0) else max(obj_w, 1e-12)
    R_info["objective_width"] = float(obj_w)
    form = MWUForm(
        G=(G / rho).tocsr(), h=h / (R * rho), algebra=alg, dG=(dG / rho).tocsr(),
        dh=dh / (R * rho), P=P, R=R, rho=rho, kinds=kinds, c_z=c_z, shift=shift,
        c_z_shift=float(c @ shift),
        info={"source_rows": src, "w_coord": w_coord, "n_free": int(len(free)),
              "n_cone_vars": int(len(orth_cols) + sum(len(r) for r, _, _ in var_blocks)),
              "private_rows": int(priv.sum()), **R_info},
    )
    return form


def _row_widths(G_el: sp.csr_matrix, alg: BlockAlgebra) -> float:
    """max over rows of the spectral norm of the row elements (blockwise, batched)."""
    if G_el.shape[0] == 0:
        return 0.0
    G_el = sp.csc_matrix(G_el)
    w = float(abs(G_el[:, :alg.nonneg]).max()) if alg.nonneg and G_el.nnz else 0.0
    blocks = [(o, q) for o, q in zip(alg._soc_off, alg.soc, strict=True)] + [
        (o, r * (r + 1) // 2) for o, r in zip(alg._psd_off, alg.psd, strict=True)]
    for o, size in blocks:
        sub = sp.csr_matrix(G_el[:, o:o + size])
        rows = np.flatnonzero(np.diff(sub.indptr))
        for start in range(0, rows.size, 256):
            chunk = sub[rows[start:start + 256]].toarray()
            sub_alg = (BlockAlgebra(0, (size,)) if o in alg._soc_off else
                       BlockAlgebra(0, (), (alg.psd[alg._psd_off.index(o)],)))
            for v in chunk:
                w = max(w, sub_alg.norm_inf(v))
    return w


def _public_trace_bound(A, b, dims, row_private, P, shift, alg, free, slack_blocks,
                        slack_offs, info, estimate: bool = False) -> float:
    """max tr z over the public part: one solve for the cone part, two per free variable
    (with ``estimate``, past ``BOX_SOLVES_MAX`` free variables, bound propagation's box for
    those it bounds: ``|x_j| <= max(-lo_j, hi_j)`` holds on the public set)."""
    lin = alg.gram * alg.identity()  # tr z = lin . z  (dual coordinates)
    w = alg.nonneg - 1
    lin[w] = 0.0
    n_free_coords = 2 * len(free)
    off = alg.nonneg - 1 - n_free_coords
    lin[off:off + n_free_coords] = 0.0
    # claimed cone variables: z_coord = x_col / P[col, coord]
    Pc = sp.coo_matrix(P)
    lin_x = np.zeros(P.shape[0])
    np.add.at(lin_x, Pc.row, lin[Pc.col] / Pc.data)
    const = -float(np.sum(lin[Pc.col] / Pc.data * shift[Pc.row]))
    # slack-block traces are linear in x: tr s_B = lin_B . (b_B - A_B x), all blocks at once
    # (one slice of A: a row-by-row loop took 0.5 s over 2,000 blocks)
    if slack_blocks:
        rows = np.concatenate([np.asarray(r, dtype=np.int64) for r, _ in slack_blocks])
        wts = np.concatenate([lin[o:o + len(r)]
                              for (r, _), o in zip(slack_blocks, slack_offs, strict=True)])
        used, wts = rows[wts != 0], wts[wts != 0]
        if row_private[used].any():
            raise UnsupportedProblemError(
                "cannot bound the trace of a cone constraint that contains private data from "
                "public information; pass trace_bound= (a public bound on the sum of the "
                "absolute values of the variables plus the traces of the cone slacks)."
            )
        const += float(wts @ b[used])
        lin_x -= np.asarray(A[used].T @ wts).ravel()

    free = np.asarray(free, dtype=np.int64)
    prop_part = 0.0
    if estimate and free.size > BOX_SOLVES_MAX:
        p_lo, p_hi = propagated_box(A, b, dims, ~np.asarray(row_private, dtype=bool))
        ok = np.isfinite(p_lo[free]) & np.isfinite(p_hi[free])
        prop_part = float(np.sum(np.maximum(np.abs(p_lo[free[ok]]), np.abs(p_hi[free[ok]]))))
        free = free[~ok]
        info["trace_bound_propagated"] = int(ok.sum())
    lo, hi = public_bounds(A, b, dims, row_private, UnitDirections(A.shape[1], free, first=[lin_x]))
    tr = const + hi[0]
    free_part = prop_part + float(np.sum(np.maximum(np.abs(lo[1:]), np.abs(hi[1:]))))
    info["trace_bound_source"] = "public constraints"
    # solver tolerance margin: the bound must not be below the true maximum
    return float(max(tr + free_part, 1e-12)) * (1 + 1e-6) + 1e-9
