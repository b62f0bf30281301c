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

from cvxdp.transform.scp import ConeDims, SymmetricConeProgram

if TYPE_CHECKING:  # pragma: no cover
    from cvxdp.solvers.perturbation import RobustPlan

__all__ = ["counterpart"]


def counterpart(scp: SymmetricConeProgram, A_t: sp.spmatrix, b_t: np.ndarray,
                plan: RobustPlan, scale: np.ndarray, nuclear: np.ndarray | None = None,
                scale_op: np.ndarray | None = None,
                band_tau: dict[int, float] | None = None) -> SymmetricConeProgram:
    """The tightened cone program over ``(x, tau, w)`` (see the module doc).

    ``scale[u] = B_u sigma_u`` multiplies ``E_u``: one SOC block ``(tau_u, scale_u E_u [x; 1])``
    per unit.  Orthant row: ``s~_i - tau_u >= 0``.  Equality row: ``-T_u <= s~_i <= T_u``
    with the constant ``T_u = band_tau[u] >= max_x scale_u ||E_u [x; 1]||`` over the public
    domain (two orthant rows; the zero cone loses the row, and the unit's unused ``tau_u`` is
    pinned to 0 by one zero-cone row instead of an SOC block).  PSD block: ``S~ - tau_u I >> 0``.
    SOC block
    ``(t, u_Q, u_P)`` whose rows ``P`` (and maybe ``t``) are private: ``(t~ - [t private]
    tau_u, u~_Q, w_u)`` and ``(w_u - tau_u, u~_P)`` in SOC -- since ``||u_P|| <= ||u~_P|| +
    tau_u <= w_u`` and ``|d_t| <= tau_u``, the true block is in the cone.  Keeping the shift
    inside the norm (not on ``t``) keeps epigraph forms such as ``quad_over_lin`` (rotated
    cones, whose margin along ``t`` is bounded) feasible.  A unit in ``nuclear`` (an orthant row
    ``<C, M(x)>``) uses ``tau_u >= scale_op_u ||M_1||_* + scale_u ||M(x) - M_1||_F`` with ``M_1``
    free, through ``[[W1, M_1], [M_1', W2]] >> 0``, ``||M_1||_* <= (tr W1 + tr W2) / 2`` (the
    nuclear norm's semidefinite representation; Recht, Fazel & Parrilo 2010, Prop. 2.1).
    """
    d, n, N = scp.dims, scp.n, plan.N
    nuc = np.zeros(N, dtype=bool) if nuclear is None else np.asarray(nuclear, dtype=bool)
    soc_units = [u for u in range(N) if plan.unit_kind[u] == "soc"]
    w_of = {u: j for j, u in enumerate(soc_units)}
    nv = n + N + len(soc_units)
    w_start = {}
    for u in np.flatnonzero(nuc):  # W1, W2 (lower triangles), M_1 (r c), rho_u
        r, c = plan.matrix[u]
        w_start[int(u)] = nv
        nv += r * (r + 1) // 2 + c * (c + 1) // 2 + r * c + 1
    A_t = sp.csr_matrix(A_t)

    def rows_of(idx: np.ndarray, tau: dict[int, float] | None = None) -> sp.csr_matrix:
        M = sp.hstack([A_t[idx], sp.csr_matrix((idx.size, nv - n))], format="lil")
        for r, (col, val) in (tau or {}).items():
            M[r, col] = val
        return M.tocsr()

    def unit_row(col_vals: dict[int, float]) -> sp.csr_matrix:
        cols = list(col_vals)
        return sp.csr_matrix((list(col_vals.values()), ([0] * len(cols), cols)), shape=(1, nv))

    tau_lin = {}
    unit_of_row = {}
    band = []  # (row, unit) of the private equality rows
    for u in range(N):
        for r in plan.unit_rows[u]:
            unit_of_row[int(r)] = u
        if plan.unit_kind[u] == "nonneg":
            tau_lin[int(plan.unit_rows[u][0]) - d.zero] = (n + u, 1.0)
        elif plan.unit_kind[u] == "zero":
            band.append((int(plan.unit_rows[u][0]), u))
    zero_keep = np.setdiff1d(np.arange(d.zero), [r for r, _ in band]).astype(int)
    # an equality unit's tau_u has no use (its band is the constant band_tau[u]): pinned to 0
    # by one zero-cone row instead of its SOC block tau_u >= scale_u ||E_u [x; 1]||
    pin = [unit_row({n + u: 1.0}) for _, u in band]
    nonneg = np.arange(d.zero, d.zero + d.nonneg)
    # an equality row s~_i = 0 with private data becomes the band -tau_u <= s~_i <= tau_u
    # with a constant tau_u: a tau variable could grow to widen the band (it is not optimised)
    band_A = [sp.vstack([rows_of(np.array([r])), -rows_of(np.array([r]))]) for r, _ in band]
    band_b = [np.array([b_t[r] + band_tau[u], band_tau[u] - b_t[r]]) for r, u in band]
    A_parts = [sp.vstack([rows_of(zero_keep), *pin, rows_of(nonneg, tau_lin), *band_A],
                         format="csr")]
    b_parts = [np.concatenate([b_t[zero_keep], np.zeros(len(pin)), b_t[nonneg], *band_b])]
    soc = []
    extra_A, extra_b, extra_soc = [], [], []
    r0 = d.zero + d.nonneg
    for q in d.soc:
        idx = np.arange(r0, r0 + q)
        r0 += q
        u = unit_of_row.get(int(idx[0]))
        if u is None:
            A_parts.append(rows_of(idx))
            b_parts.append(b_t[idx])
            soc.append(q)
            continue
        P = np.setdiff1d(plan.touched[u], idx[:1])
        head_private = bool(np.isin(idx[0], plan.touched[u]))
        head = rows_of(idx[:1], {0: (n + u, 1.0)} if head_private else None)
        Q = np.setdiff1d(idx[1:], P)
        blocks = [head, rows_of(Q)]
        bb = [b_t[idx[:1]], b_t[Q]]
        if P.size:
            col_w = n + N + w_of[u]
            blocks.append(unit_row({col_w: -1.0}))
            bb.append(np.zeros(1))
            extra_A += [unit_row({col_w: -1.0, n + u: 1.0}), rows_of(P)]
            extra_b += [np.zeros(1), b_t[P]]
            extra_soc.append(1 + P.size)
        A_parts += blocks
        b_parts += bb
        soc.append(1 + Q.size + int(P.size > 0))
    nuc_A, nuc_b, nuc_psd = [], [], []
    for u in range(N):  # tau_u >= scale_u ||E_u [x; 1]||
        if plan.unit_kind[u] == "zero":
            continue                    # pinned above
        if nuc[u]:
            A_row, soc_A, soc_b, psd_A, psd_b = _nuclear_block(
                plan, u, float(scale[u]), float(scale_op[u]), n, nv, w_start[u])
            nuc_A.append(A_row)
            extra_A.append(soc_A)
            extra_b.append(soc_b)
            extra_soc.append(soc_A.shape[0])
            nuc_psd += [psd_A]
            nuc_b.append(psd_b)
            continue
        Eu = plan.E[u] * float(scale[u])
        extra_A += [unit_row({n + u: -1.0}), sp.hstack(
            [-Eu[:, :n], sp.csr_matrix((Eu.shape[0], nv - n))], format="csr")]
        extra_b += [np.zeros(1), np.asarray(Eu[:, n].toarray()).ravel()]
        extra_soc.append(1 + Eu.shape[0])
    psd_rows = np.arange(r0, scp.m)
    tau_psd = {}
    for u in range(N):
        if plan.unit_kind[u] == "psd":
            rows = plan.unit_rows[u]
            r = int(round((math.sqrt(8 * rows.size + 1) - 1) / 2))
            diag = np.concatenate([[0], np.cumsum(np.arange(r, 1, -1))])  # svec diagonal
            for k in rows[diag]:
                tau_psd[int(k - r0)] = (n + u, 1.0)
    A2 = sp.vstack([A_parts[0], *nuc_A, *A_parts[1:], *extra_A, rows_of(psd_rows, tau_psd),
                    *nuc_psd], format="csc")
    b2 = np.concatenate([b_parts[0], np.zeros(len(nuc_A)), *b_parts[1:], *extra_b,
                         b_t[psd_rows], *nuc_b])
    dims2 = ConeDims(zero=zero_keep.size + len(pin), nonneg=d.nonneg + 2 * len(band) + len(nuc_A),
                     soc=(*soc, *extra_soc),
                     psd=(*d.psd, *[sum(plan.matrix[u]) for u in np.flatnonzero(nuc)]))
    c2 = np.concatenate([scp.c, np.zeros(nv - n)])
    return SymmetricConeProgram(A=A2, b=b2, c=c2, offset=scp.offset, dims=dims2, cone=None,
                                sign=scp.sign)


def _nuclear_block(plan: RobustPlan, u: int, scale: float, scale_op: float, n: int, nv: int,
                   start: int) -> tuple[sp.csr_matrix, sp.csr_matrix, np.ndarray,
                                        sp.csr_matrix, np.ndarray]:
    """Rows of ``tau_u - scale_op (tr W1 + tr W2) / 2 - rho_u >= 0``, of the SOC block
    ``(rho_u, scale (M(x) - M_1))`` and of the PSD block ``svec [[W1, M_1], [M_1', W2]]``.

    ``M[a, b] = E_u[a + r b] [x; 1]`` (the coefficient of ``C[a, b]``, Fortran order), ``M_1``
    in the same order; the PSD block is in SCS's svec (lower triangle by columns, off-diagonal
    times sqrt 2).
    """
    r, c = plan.matrix[u]
    R = r + c
    E = sp.csr_matrix(plan.E[u])
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
                             ([0] * (R + 2), [n + u] + diag + [rho_col])), shape=(1, nv))
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
