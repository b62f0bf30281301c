"""The robust counterpart of a cone program with noisy data, as a cone program.

Built by :func:`counterpart` from the noisy data ``(A~, b~)``, the public structure of
:class:`cvxdp.solvers.perturbation.RobustPlan` and the noise bounds; the rules and their proofs
are in :mod:`cvxdp.solvers.perturbation`.  Everything here is post-processing of the noisy
release and of public structure.

References
----------
Ben-Tal, El Ghaoui & Nemirovski, Robust Optimization, 2009, Ch. 1-2 (robust counterparts of
uncertain conic rows); Recht, Fazel & Parrilo, SIAM Review 2010, Prop. 2.1 (semidefinite
representation of the nuclear norm).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp

from cvxdp.solvers.perturbation.plan import psd_diagonal_rows
from cvxdp.transform.scp import ConeDims, SymmetricConeProgram

if TYPE_CHECKING:  # pragma: no cover
    from cvxdp.solvers.perturbation.plan import RobustPlan

__all__ = ["counterpart"]


def counterpart(scp: SymmetricConeProgram, A_t: sp.spmatrix, b_t: np.ndarray,
                plan: RobustPlan, scale: np.ndarray, nuclear: np.ndarray | None = None,
                scale_op: np.ndarray | None = None,
                band_tau: dict[int, float] | None = None,
                band_lin: sp.csr_matrix | None = None) -> SymmetricConeProgram:
    """The tightened cone program over ``(x, t, tau, w)`` (see the module doc).

    ``scale[u] = B_u sigma_u``: the unit's tightening is ``tau_u = scale_u ||E_u [x; 1]||``.
    Units with the same map ``E_u`` (a class of ``plan``) share one SOC block ``(t_c, s_c E_c
    [x; 1])`` with ``s_c`` the class's largest ``scale_u``, and ``tau_u = (scale_u / s_c)
    t_c`` -- the same feasible set in ``x`` as one block per unit, with one block per class
    (one for all the rows of ``A @ x <= b`` with a private ``A``).  Orthant row: ``s~_i -
    tau_u >= 0``.  Equality row: ``-T_u <= s~_i <= T_u`` with the constant ``T_u =
    band_tau[u] >= max_x scale_u ||E_u [x; 1]||`` over the public domain (two orthant rows;
    the zero cone loses the row), or ``T_u + band_lin_u' x`` with ``band_lin`` (``(N, n)``,
    already scaled) where a coordinate has a public bound on one side only (the band stays
    linear, so convex).  PSD block: ``S~ - tau_u I >> 0``.  SOC block ``(t, u_Q,
    u_P)`` whose rows ``P`` (and maybe ``t``) are private: ``(t~ - [t private] tau_u, u~_Q,
    w_u)`` and ``(w_u - tau_u, u~_P)`` in SOC -- since ``||u_P|| <= ||u~_P|| + tau_u <= w_u``
    and ``|d_t| <= tau_u``, the true block is in the cone.  Keeping the shift inside the norm
    (not on ``t``) keeps epigraph forms such as ``quad_over_lin`` (rotated cones, whose margin
    along ``t`` is bounded) feasible.  A unit in ``nuclear`` (an orthant row ``<C, M(x)>``)
    has its own ``tau_u >= scale_op_u ||M_1||_* + scale_u ||M(x) - M_1||_F`` with ``M_1``
    free, through ``[[W1, M_1], [M_1', W2]] >> 0``, ``||M_1||_* <= (tr W1 + tr W2) / 2`` (the
    nuclear norm's semidefinite representation; Recht, Fazel & Parrilo 2010, Prop. 2.1).
    """
    d, n, m, N = scp.dims, scp.n, scp.m, plan.N
    kinds = plan.unit_kind
    scale = np.asarray(scale, dtype=float)
    nuc = np.zeros(N, dtype=bool) if nuclear is None else np.asarray(nuclear, dtype=bool)
    zero_u = np.flatnonzero(kinds == "zero")
    # the classes the non-equality, non-nuclear units use: one t_c column each
    uses_t = (kinds != "zero") & ~nuc
    used = np.unique(plan.unit_class[uses_t])
    col_of_class = -np.ones(plan.C, dtype=np.int64)
    col_of_class[used] = n + np.arange(used.size)
    s_c = np.zeros(plan.C)
    np.maximum.at(s_c, plan.unit_class[uses_t], scale[uses_t])
    coef = np.zeros(N)  # tau_u = coef_u * (column of unit u)
    tcol = -np.ones(N, dtype=np.int64)
    cls = plan.unit_class
    pos = uses_t & (s_c[cls] > 0)
    coef[pos] = scale[pos] / s_c[cls[pos]]
    tcol[uses_t] = col_of_class[cls[uses_t]]
    nuc_u = np.flatnonzero(nuc)
    nv = n + used.size
    tcol[nuc_u] = nv + np.arange(nuc_u.size)
    coef[nuc_u] = 1.0
    nv += nuc_u.size
    # SOC units with private rows besides the head: a w_u column and an extra block
    soc_u = np.flatnonzero(kinds == "soc")
    is_p = np.zeros(m, dtype=bool)
    hits_soc = _gather_rows(plan.hit_ptr, plan.hit_idx, soc_u)
    is_p[hits_soc] = True
    is_p[plan.first_row[soc_u]] = False
    p_count = np.bincount(_owner(plan.row_ptr, soc_u), weights=is_p[
        _gather_rows(plan.row_ptr, plan.row_idx, soc_u)], minlength=soc_u.size) \
        if soc_u.size else np.zeros(0)
    w_u = soc_u[p_count > 0]
    wcol = -np.ones(N, dtype=np.int64)
    wcol[w_u] = nv + np.arange(w_u.size)
    nv += w_u.size
    w_start = {}
    for u in nuc_u:  # W1, W2 (lower triangles), M_1 (r c), rho_u
        r, c = plan.matrix[u]
        w_start[int(u)] = nv
        nv += r * (r + 1) // 2 + c * (c + 1) // 2 + r * c + 1
    # shifts of the noisy rows by tau_u: orthant rows, SOC heads (when private), PSD diagonals
    sr, sc, sv = [], [], []
    orth = np.flatnonzero(kinds == "nonneg")
    sr.append(plan.first_row[orth])
    sc.append(tcol[orth])
    sv.append(coef[orth])
    heads = soc_u[plan.head_private[soc_u]]
    sr.append(plan.first_row[heads])
    sc.append(tcol[heads])
    sv.append(coef[heads])
    drow, downer = psd_diagonal_rows(plan, np.flatnonzero(kinds == "psd"))
    sr.append(drow)
    sc.append(tcol[downer])
    sv.append(coef[downer])
    S = sp.csr_matrix((np.concatenate(sv), (np.concatenate(sr), np.concatenate(sc))),
                      shape=(m, nv))
    A2 = sp.csr_matrix(sp.hstack([sp.csr_matrix(A_t), sp.csr_matrix((m, nv - n))],
                                 format="csr") + S)
    b2 = np.asarray(b_t, dtype=float)
    # zero cone: the public equality rows; private ones become bands in the orthant
    zrows = plan.first_row[zero_u]
    zero_keep = np.setdiff1d(np.arange(d.zero), zrows)
    T = np.array([band_tau[int(u)] for u in zero_u]) if zero_u.size else np.zeros(0)
    nonneg = np.arange(d.zero, d.zero + d.nonneg)
    nuc_blocks = [_nuclear_block(plan, int(u), float(scale[u]), float(scale_op[u]), n, nv,
                                 w_start[int(u)], int(tcol[u])) for u in nuc_u]
    nuc_rows = [blk[0] for blk in nuc_blocks]
    # |s~_i(x)| <= T_u + l_u' x: rows b~ + T - (A~ - l_u') x >= 0 and T - b~ - (-A~ - l_u') x
    L = sp.csr_matrix((zero_u.size, nv)) if band_lin is None else \
        sp.hstack([sp.csr_matrix(band_lin)[zero_u], sp.csr_matrix((zero_u.size, nv - n))],
                  format="csr")
    A_parts = [A2[zero_keep], A2[nonneg], A2[zrows] - L, -A2[zrows] - L, *nuc_rows]
    b_parts = [b2[zero_keep], b2[nonneg], b2[zrows] + T, T - b2[zrows], np.zeros(len(nuc_rows))]
    # SOC blocks, with private rows P moved to the extra block (w_u - tau_u, u~_P)
    soc_A, soc_b, soc_dims = _soc_section(plan, A2, b2, d, is_p, w_u, wcol, tcol, coef, nv)
    # one block (t_c, s_c E_c [x; 1]) per class
    cls_A, cls_b, cls_dims = _class_blocks(plan, used, s_c, col_of_class, n, nv)
    A_parts += [soc_A, cls_A]
    b_parts += [soc_b, cls_b]
    extra_psd, extra_dims = [], []
    for u, (_, soc_An, soc_bn, psd_A, psd_b) in zip(nuc_u, nuc_blocks, strict=True):
        A_parts.append(soc_An)
        b_parts.append(soc_bn)
        soc_dims.append(soc_An.shape[0])
        extra_psd.append((psd_A, psd_b))
        extra_dims.append(sum(plan.matrix[u]))
    psd_rows = np.arange(d.zero + d.nonneg + sum(d.soc), m)
    A_parts += [A2[psd_rows], *[a for a, _ in extra_psd]]
    b_parts += [b2[psd_rows], *[b for _, b in extra_psd]]
    dims2 = ConeDims(zero=zero_keep.size, nonneg=d.nonneg + 2 * zero_u.size + nuc_u.size,
                     soc=(*soc_dims, *cls_dims), psd=(*d.psd, *extra_dims))
    A_out = sp.vstack([p for p in A_parts if p.shape[0]], format="csc")
    c2 = np.concatenate([scp.c, np.zeros(nv - n)])
    return SymmetricConeProgram(A=A_out, b=np.concatenate(b_parts), c=c2, offset=scp.offset,
                                dims=dims2, cone=None, sign=scp.sign, exp_tail=scp.exp_tail)


def _owner(ptr: np.ndarray, which: np.ndarray) -> np.ndarray:
    """Position in ``which`` of every element of the segments ``which`` (in that order)."""
    return np.repeat(np.arange(which.size), np.diff(ptr)[which])


def _gather_rows(ptr: np.ndarray, idx: np.ndarray, which: np.ndarray) -> np.ndarray:
    lens = np.diff(ptr)[which]
    if lens.sum() == 0:
        return np.zeros(0, dtype=np.int64)
    base = np.repeat(ptr[which] - np.concatenate([[0], np.cumsum(lens)[:-1]]), lens)
    return idx[base + np.arange(int(lens.sum()))]


def _soc_section(plan: RobustPlan, A2: sp.csr_matrix, b2: np.ndarray, d: ConeDims,
                 is_p: np.ndarray, w_u: np.ndarray, wcol: np.ndarray, tcol: np.ndarray,
                 coef: np.ndarray, nv: int) -> tuple[sp.csr_matrix, np.ndarray, list[int]]:
    """The SOC rows: every original block (its private non-head rows replaced by ``w_u``),
    then the blocks ``(w_u - tau_u, u~_P)``; ordered by a sort, not a loop."""
    r0 = d.zero + d.nonneg
    sizes = np.asarray(d.soc, dtype=np.int64)
    nb = sizes.size
    if nb == 0:
        return sp.csr_matrix((0, nv)), np.zeros(0), []
    rows = np.arange(r0, r0 + int(sizes.sum()))
    block = np.repeat(np.arange(nb), sizes)
    starts = r0 + np.concatenate([[0], np.cumsum(sizes)[:-1]])
    unit_of_block = -np.ones(nb, dtype=np.int64)
    first = plan.first_row[w_u]
    unit_of_block[np.searchsorted(starts, first)] = w_u
    extra_of_block = -np.ones(nb, dtype=np.int64)
    extra_of_block[np.searchsorted(starts, first)] = np.arange(w_u.size)
    moved = is_p[rows]
    group = np.where(moved, nb + extra_of_block[block], block)
    key = rows.astype(float)
    wb = np.searchsorted(starts, first)  # the blocks that get a w_u row
    # the w_u row closing its main block (s = w_u) and the head (s = w_u - tau_u) of the
    # extra block
    main_w = sp.csr_matrix((-np.ones(w_u.size), (np.arange(w_u.size), wcol[w_u])),
                           shape=(w_u.size, nv))
    ext_h = sp.csr_matrix((np.concatenate([-np.ones(w_u.size), coef[w_u]]),
                           (np.tile(np.arange(w_u.size), 2),
                            np.concatenate([wcol[w_u], tcol[w_u]]))), shape=(w_u.size, nv))
    groups = np.concatenate([group, wb, nb + np.arange(w_u.size)])
    keys = np.concatenate([key, np.full(w_u.size, np.inf), np.full(w_u.size, -np.inf)])
    order = np.lexsort((keys, groups))
    Y = sp.vstack([A2[rows], main_w, ext_h], format="csr")[order]
    yb = np.concatenate([b2[rows], np.zeros(2 * w_u.size)])[order]
    dims = np.bincount(groups, minlength=nb + w_u.size)
    del unit_of_block
    return Y, yb, [int(q) for q in dims if q > 0]


def _class_blocks(plan: RobustPlan, used: np.ndarray, s_c: np.ndarray,
                  col_of_class: np.ndarray, n: int, nv: int
                  ) -> tuple[sp.csr_matrix, np.ndarray, list[int]]:
    """Rows of the blocks ``(t_c, s_c E_c [x; 1])`` in SOC, one per used class."""
    if used.size == 0:
        return sp.csr_matrix((0, nv)), np.zeros(0), []
    reps = plan.class_rep[used]
    lens = np.diff(plan.E_ptr)[reps]
    src = _gather_rows(plan.E_ptr, np.arange(plan.E_all.shape[0]), reps)
    E = sp.csr_matrix(plan.E_all[src])
    off = np.concatenate([[0], np.cumsum(lens + 1)[:-1]])
    body_row = np.repeat(off + 1, lens) + (np.arange(src.size)
                                          - np.repeat(np.cumsum(lens) - lens, lens))
    total = int((lens + 1).sum())
    scl = np.repeat(s_c[used], lens)
    Ex = sp.csr_matrix(E[:, :n]).tocoo()
    rows = np.concatenate([off, body_row[Ex.row]])
    cols = np.concatenate([col_of_class[used], Ex.col])
    vals = np.concatenate([-np.ones(used.size), -scl[Ex.row] * Ex.data])
    A = sp.csr_matrix((vals, (rows, cols)), shape=(total, nv))
    b = np.zeros(total)
    b[body_row] = scl * np.asarray(E[:, n].toarray()).ravel()
    return A, b, [int(q) for q in lens + 1]


def _nuclear_block(plan: RobustPlan, u: int, scale: float, scale_op: float, n: int, nv: int,
                   start: int, tau_col: int) -> tuple[sp.csr_matrix, sp.csr_matrix, np.ndarray,
                                        sp.csr_matrix, np.ndarray]:
    """Rows of ``tau_u - scale_op (tr W1 + tr W2) / 2 - rho_u >= 0``, of the SOC block
    ``(rho_u, scale (M(x) - M_1))`` and of the PSD block ``svec [[W1, M_1], [M_1', W2]]``.

    ``M[a, b] = E_u[a + r b] [x; 1]`` (the coefficient of ``C[a, b]``, Fortran order), ``M_1``
    in the same order; the PSD block is in SCS's svec (lower triangle by columns, off-diagonal
    times sqrt 2).
    """
    r, c = plan.matrix[u]
    R = r + c
    E = sp.csr_matrix(plan.E_all[plan.E_ptr[u]:plan.E_ptr[u + 1]])
    idx1, idx2 = {}, {}
    k = start
    for j in range(r):
        for i in range(j, r):
            idx1[i, j] = k
            k += 1
    for j in range(c):
        for i in range(j, c):
            idx2[i, j] = k
            k += 1
    m1 = np.arange(k, k + r * c)
    rho_col = k + r * c
    diag = [idx1[i, i] for i in range(r)] + [idx2[i, i] for i in range(c)]
    tau_row = sp.csr_matrix(([-1.0] + [scale_op / 2] * R + [1.0],
                             ([0] * (R + 2), [tau_col] + diag + [rho_col])), shape=(1, nv))
    # (rho_u, scale (E [x; 1] - m1)) in SOC
    head = sp.csr_matrix(([-1.0], ([0], [rho_col])), shape=(1, nv))
    body = sp.hstack([-scale * E[:, :n], sp.csr_matrix((E.shape[0], nv - n))], format="lil")
    for a in range(E.shape[0]):
        body[a, m1[a]] = scale
    soc_A = sp.vstack([head, body.tocsr()], format="csr")
    soc_b = np.concatenate([[0.0], scale * np.asarray(E[:, n].toarray()).ravel()])
    rows, cols, vals = [], [], []
    pos = 0
    sq2 = math.sqrt(2.0)
    for j in range(R):
        for i in range(j, R):
            coef = 1.0 if i == j else sq2
            if i < r:
                var = idx1[i, j]
            elif j >= r:
                var = idx2[i - r, j - r]
            else:  # Y[i, j] = M_1[j, i - r]
                var = m1[j + r * (i - r)]
            rows.append(pos), cols.append(var), vals.append(-coef)
            pos += 1
    psd = sp.csr_matrix((vals, (rows, cols)), shape=(pos, nv))
    return tau_row, soc_A, soc_b, psd, np.zeros(pos)
