"""Certificates of perturbation's answers: the loosened counterpart and the noisy slack test.

Perturbation releases the private data once, ``(A~, b~) = (A, b) + noise``, and solves a robust
counterpart exactly (:mod:`cvxdp.solvers.perturbation`).  On the noise event ``E`` of that
counterpart (probability ``>= 1 - beta``, or 1 for truncated noise) every private unit ``u``
(a row, or a SOC / PSD block) obeys, for every ``x``,

    ``|| s_u(x) - s~_u(x) || <= scale_u ||E_u [x; 1]||``,   ``s = b - A x``, ``s~ = b~ - A~ x``

(the norm is the block's: absolute value of a row, Euclidean for a SOC block, spectral <=
Frobenius for a PSD block).  Two bounds follow, both post-processing of the release:

* **Violation at the released point** (:func:`violation_bounds`).  The true slack is at most
  ``t_u = scale_u ||E_u [x; 1]||`` away from the noisy one, evaluated at the released ``x``:
  orthant row ``max(0, t_u - s~_i)``; equality row ``|s~_i| + t_u``; PSD block ``max(0, t_u -
  lambda_min(S~))``; SOC block ``(t, u_Q, u_P)`` with private rows ``P``: ``max(0,
  sqrt(||u~_Q||^2 + (||u~_P|| + t_u)^2) - t~ + c t_u)`` (``u_Q = u~_Q`` is public, ``||u_P||
  <= ||u~_P|| + t_u`` and ``t >= t~ - t_u``; ``c = 1`` when private data reach ``t``, else 0):
  the noise stays inside the norm, as in the counterpart.
  Public rows are evaluated exactly.
* **Lower bound on the optimum** (:func:`loosened_program`). On the public rows' box ``l <= x <=
  h``, ``||E_u [x; 1]||^2 <= p_u' x + q_u`` (:class:`UnitReach`: Gershgorin, then the secant of
  ``x_j^2``), so every ``x`` feasible for the TRUE data satisfies ``s~_u(x) + scale_u sqrt(p_u' x +
  q_u) e_u in K_u`` (``e_u``: the cone's identity, ``c`` times on a SOC block's first coordinate)
  and ``|s~_i(x)| <= scale_u sqrt(...)`` on a private equality. ``sqrt`` of an affine function is
  concave, so that set is convex (one rotated cone per class of units with the same map) and
  contains the true feasible set: the optimum of the public objective over it is a lower bound on
  the true optimum (a coordinate bounded on one side only enters linearly, ``||E_u e_j||
  (sgn_j x_j + 2 max(-sgn_j l_j, 0))``; a unit reaching a coordinate bounded on neither side
  is dropped: still a superset).

The proofs are written out in ``docs/certificates.md``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from cvxdp.solvers.perturbation.plan import (
    gather,
    one_sided_abs,
    psd_diagonal_rows,
    unit_norms,
)
from cvxdp.transform.scp import ConeDims, SymmetricConeProgram

__all__ = ["unit_reach", "UnitReach", "reached_coordinates", "violation_bounds",
           "public_violation", "loosened_program"]


@dataclass(frozen=True)
class UnitReach:
    """``||E_u [x; 1]||_2^2 <= p_c' x + q_c`` on the public rows' box, per class ``c`` of units
    with the same map (``bounded[c]`` False: no bound).

    ``G = E_u' E_u`` is at most ``diag(d)``, ``d_j = sum_k |G_jk|`` (Gershgorin: ``diag(d) - G``
    is diagonally dominant, hence PSD), and on ``l_j <= x_j <= h_j`` the convex ``x_j^2`` is at
    most its secant ``(l_j + h_j) x_j - l_j h_j``; so ``||E_u [x; 1]||^2 <= sum_j d_j ((l_j +
    h_j) x_j - l_j h_j) + d_n``: ``p_j = d_j (l_j + h_j)``, ``q = d_n - sum_j d_j l_j h_j``.
    ``sqrt(p' x + q)`` is concave, so ``s~_u(x) + scale_u sqrt(p' x + q) e_u in K_u`` is a convex
    set (one rotated second-order cone per class).

    Attributes
    ----------
    p : scipy.sparse.csr_matrix, shape (C, n)
    q : ndarray, shape (C,)
    bounded : ndarray of bool, shape (C,)
    """

    p: sp.csr_matrix
    q: np.ndarray
    bounded: np.ndarray
    #: ``(C, n)``: ``sgn_j ||E_c e_j||`` on the coordinates with a public bound on one side
    #: only (``x_j >= l_j`` or ``x_j <= h_j``), and ``(C,)`` the constants ``lin0``:
    #: ``||E_u [x; 1]|| <= sqrt(p' x + q) + lin' x + lin0`` (triangle inequality, ``|x_j| <=
    #: sgn_j x_j + 2 max(-sgn_j bound_j, 0)``); None: no such coordinate
    lin: sp.csr_matrix | None = None
    lin0: np.ndarray | None = None


def reached_coordinates(maps: list[sp.spmatrix], n: int) -> np.ndarray:
    """The variables some map ``[x; 1] -> ...`` multiplies (nonzero among its first ``n``
    columns): the coordinates a public box is needed for."""
    hit = np.zeros(n, dtype=bool)
    for M in maps:
        Mx = sp.csr_matrix(M)[:, :n]
        hit[Mx.indices[Mx.data != 0]] = True
    return np.flatnonzero(hit)


def _gershgorin(plan: object) -> tuple[sp.csr_matrix, sp.csr_matrix]:
    """``(C, n + 1)`` twice: ``d_j = sum_k |(E_c' E_c)_jk|`` of each class's representative map,
    and the diagonal ``(E_c' E_c)_jj = ||E_c e_j||^2``."""
    n1 = plan.E_all.shape[1]
    reps = plan.class_rep
    lens = np.diff(plan.E_ptr)[reps]
    src = gather(plan.E_ptr, reps)
    E = sp.csr_matrix(plan.E_all[src]).tocoo()
    owner = np.repeat(np.arange(reps.size), lens)[E.row]
    big = sp.csr_matrix((E.data, (E.row, owner * n1 + E.col)),
                        shape=(src.size, reps.size * n1))
    G = sp.csr_matrix(big.T @ big)
    d = np.asarray(abs(G).sum(axis=1)).ravel()
    nz = np.flatnonzero(d)
    g = G.diagonal()
    gz = np.flatnonzero(g)
    return (sp.csr_matrix((d[nz], (nz // n1, nz % n1)), shape=(reps.size, n1)),
            sp.csr_matrix((g[gz], (gz // n1, gz % n1)), shape=(reps.size, n1)))


def unit_reach(plan: object, lo: np.ndarray, hi: np.ndarray) -> UnitReach:
    """The concave bound of :class:`UnitReach` for every class of units, on the public box
    ``[lo, hi]`` (:func:`cvxdp.solvers.public_part.coordinate_box` over
    :func:`reached_coordinates`).

    A coordinate bounded on one side only (``x_j >= l_j`` or ``x_j <= h_j``) enters linearly
    instead: ``||E_u [x; 1]|| <= ||E_u,B [x_B; 1]|| + sum_{j in S} ||E_u e_j|| |x_j|``
    (triangle inequality), the first term bounded on the box coordinates ``B`` as above
    (Gershgorin over all columns still bounds the sub-matrix's quadratic form), and ``|x_j| <=
    x_j + 2 max(-l_j, 0)`` (or ``-x_j + 2 max(h_j, 0)``) linear: ``sqrt(p' x + q) + lin' x +
    lin0`` is concave, so the loosened set stays convex.  A unit reaching a coordinate bounded
    on neither side is unbounded."""
    n = lo.size
    D, diag = _gershgorin(plan)
    Dx = sp.csr_matrix(D[:, :n])
    dn = np.asarray(D[:, n].toarray()).ravel()
    rows = np.repeat(np.arange(D.shape[0]), np.diff(Dx.indptr))
    cols, dv = Dx.indices, Dx.data
    finite = np.isfinite(lo[cols]) & np.isfinite(hi[cols])
    sgn_j, shift_j = one_sided_abs(lo, hi)
    sgn = sgn_j[cols]
    signed = sgn != 0
    bounded = np.ones(D.shape[0], dtype=bool)
    bounded[rows[~finite & ~signed]] = False
    ok = bounded[rows] & finite
    p = sp.csr_matrix((dv[ok] * (lo[cols[ok]] + hi[cols[ok]]), (rows[ok], cols[ok])),
                      shape=(D.shape[0], n))
    q = dn - np.bincount(rows[ok], weights=dv[ok] * lo[cols[ok]] * hi[cols[ok]],
                         minlength=D.shape[0])
    q[~bounded] = math.inf
    lin = lin0 = None
    use = bounded[rows] & signed
    if use.any():
        norms = np.sqrt(np.asarray(diag[rows[use], cols[use]]).ravel())
        lin = sp.csr_matrix((sgn[use] * norms, (rows[use], cols[use])), shape=(D.shape[0], n))
        lin0 = np.bincount(rows[use], weights=norms * shift_j[cols[use]], minlength=D.shape[0])
    return UnitReach(p, q, bounded, lin, lin0)


def _soc_factor(plan: object) -> np.ndarray:
    """Per unit: 2 when private data reach a SOC block's first coordinate ``t`` (both ``t``
    and ``u`` move), 1 when ``t`` is public (only ``||u||`` moves)."""
    return np.where(plan.head_private, 2.0, 1.0)


def _smat(v: np.ndarray, r: int) -> np.ndarray:
    """SCS's scaled lower-triangular svec (column-wise) back to the symmetric matrix."""
    M = np.zeros((r, r))
    i, j = np.tril_indices(r)
    order = np.lexsort((i, j))  # column-major lower triangle
    i, j = i[order], j[order]
    M[i, j] = v
    off = i != j
    M[i[off], j[off]] /= math.sqrt(2.0)
    return M + np.tril(M, -1).T


def violation_bounds(scp: SymmetricConeProgram, A_t: sp.spmatrix, b_t: np.ndarray,
                     plan: object, scale: np.ndarray, x: np.ndarray,
                     units: np.ndarray | None = None) -> tuple[float, float | None]:
    """Bounds on the TRUE constraints' violation at ``x`` on the noise event (module doc).

    ``units``: a mask over the plan's units; the others are left out of the bound (the
    objective's own epigraph rows, whose error the objective's bound accounts for:
    :mod:`cvxdp.solvers.perturbation.fit_beside`).  Their rows are still never evaluated with
    the true data.

    Returns
    -------
    (violation_bound, equality_violation_bound) : (float, float or None)
        The largest bound over every canonical row and block (public ones evaluated exactly),
        and the largest over the private equality rows (None when there are none).
    """
    x = np.asarray(x, dtype=float)
    t = np.asarray(scale, dtype=float) * unit_norms(plan, np.append(x, 1.0))
    s_t = b_t - sp.csr_matrix(A_t) @ x
    s_pub = scp.b - scp.A @ x
    in_unit = np.zeros(scp.m, dtype=bool)
    in_unit[plan.row_idx] = True
    kinds = plan.unit_kind
    first = plan.first_row
    v = np.zeros(plan.N)
    zero = kinds == "zero"
    v[zero] = np.abs(s_t[first[zero]]) + t[zero]
    orth = kinds == "nonneg"
    v[orth] = np.maximum(0.0, t[orth] - s_t[first[orth]])
    soc = np.flatnonzero(kinds == "soc")
    if soc.size:
        rows = plan.row_idx[gather(plan.row_ptr, soc)]
        owner = np.repeat(np.arange(soc.size), np.diff(plan.row_ptr)[soc])
        tail = rows != first[soc][owner]
        hit = np.zeros(scp.m, dtype=bool)
        hit[plan.hit_idx] = True
        priv = tail & hit[rows]
        pub = tail & ~hit[rows]
        sq_q = np.bincount(owner[pub], weights=s_t[rows[pub]] ** 2, minlength=soc.size)
        sq_p = np.bincount(owner[priv], weights=s_t[rows[priv]] ** 2, minlength=soc.size)
        # the noise stays on the private rows, inside the norm (as in the counterpart)
        v[soc] = np.maximum(0.0, np.hypot(np.sqrt(sq_q), np.sqrt(sq_p) + t[soc])
                            - s_t[first[soc]] + (_soc_factor(plan)[soc] - 1.0) * t[soc])
    for u in np.flatnonzero(kinds == "psd"):  # one eigenvalue problem per PSD block
        rows = plan.row_idx[plan.row_ptr[u]:plan.row_ptr[u + 1]]
        r = int(round((math.sqrt(8 * rows.size + 1) - 1) / 2))
        v[u] = max(0.0, t[u] - float(np.linalg.eigvalsh(_smat(s_t[rows], r))[0]))
    if units is not None:
        v[~np.asarray(units, dtype=bool)] = 0.0
        zero = zero & units
    worst = float(v.max(initial=0.0))
    worst_eq = float(v[zero].max()) if zero.any() else None
    # a user constraint whose canonical form chains a private row and public rows (t >= |a|,
    # t <= c) is violated by at most their sum (docs/certificates.md)
    worst = worst + _public_violation(scp.dims, s_pub, in_unit)
    return worst, worst_eq


def public_violation(scp: SymmetricConeProgram, plan: object, x: np.ndarray) -> float:
    """Largest violation at ``x`` of every row and block that holds no private data (exact:
    public data); the counterpart's units (whole blocks holding private data) are skipped."""
    in_unit = np.zeros(scp.m, dtype=bool)
    in_unit[plan.row_idx] = True
    return _public_violation(scp.dims, scp.b - scp.A @ np.asarray(x, dtype=float), in_unit)


def _public_violation(dims: ConeDims, s: np.ndarray, in_unit: np.ndarray) -> float:
    """Largest violation of the rows and blocks with no private data (exact: public data)."""
    z, nn = dims.zero, dims.nonneg
    worst = 0.0
    pub = ~in_unit
    if z:
        worst = max(worst, float(np.max(np.abs(s[:z][pub[:z]]), initial=0.0)))
    if nn:
        worst = max(worst, float(np.max(-s[z:z + nn][pub[z:z + nn]], initial=0.0)))
    r0 = z + nn
    for q in dims.soc:
        if not in_unit[r0]:
            worst = max(worst, float(np.linalg.norm(s[r0 + 1:r0 + q])) - float(s[r0]))
        r0 += q
    for r in dims.psd:
        size = r * (r + 1) // 2
        if not in_unit[r0]:
            worst = max(worst, -float(np.linalg.eigvalsh(_smat(s[r0:r0 + size], r))[0]))
        r0 += size
    return max(worst, 0.0)


def loosened_program(scp: SymmetricConeProgram, A_t: sp.spmatrix, b_t: np.ndarray,
                     plan: object, scale: np.ndarray, reach: UnitReach
                     ) -> SymmetricConeProgram:
    """The convex superset of the true feasible set on the noise event (module doc).

    Variables ``(x, w)``, one ``w_c`` per bounded class of units with ``w_c^2 <= (p_c' x +
    q_c) / nu_c`` (:class:`UnitReach`; a rotated cone ``||(2 w_c, v - 1)|| <= v + 1``; ``nu_c``
    the largest magnitude of ``p_c, q_c``, so the cone is well scaled); the noisy rows of unit
    ``u`` relaxed by ``scale_u sqrt(nu_c) w_c`` along the cone's identity (``c`` times on a SOC
    block's first coordinate), a private equality as the band ``|s~_i| <= scale_u w_c``; a
    unit without a bound is dropped.  The objective is the public ``c' x + offset``.
    """
    d = scp.dims
    n, m, N = scp.n, scp.m, plan.N
    kinds = plan.unit_kind
    cls = plan.unit_class
    bc = np.flatnonzero(reach.bounded)
    wcol = -np.ones(plan.C, dtype=np.int64)
    wcol[bc] = n + np.arange(bc.size)
    nv = n + bc.size
    absp = abs(reach.p).max(axis=1).toarray().ravel() if reach.p.shape[1] else \
        np.zeros(plan.C)
    nu = np.where(reach.bounded, np.maximum(np.maximum(absp, np.abs(np.where(
        reach.bounded, reach.q, 0.0))), 1e-300), 1.0)
    # w_c stands for sqrt((p_c'x + q_c) / nu_c) with nu_c the data's largest magnitude, so the
    # cone's data are O(1) at every budget; the rows take k_u = scale_u sqrt(nu_c) w_c
    sc = np.asarray(scale, dtype=float)
    k = sc * np.sqrt(nu[cls]) if N else np.zeros(0)
    ub = reach.bounded[cls] if N else np.zeros(0, dtype=bool)
    first = plan.first_row
    # rows of the units without a bound are dropped: zeroed, with a slack the cone contains
    drop = np.zeros(m, dtype=bool)
    drop_units = np.flatnonzero(~ub & (kinds != "zero"))
    drop_rows = plan.row_idx[gather(plan.row_ptr, drop_units)]
    drop[drop_rows] = True
    A0 = sp.diags((~drop).astype(float)) @ sp.csr_matrix(A_t).astype(float)
    b = np.asarray(b_t, dtype=float).copy()
    b[drop_rows] = 0.0
    orth_d = drop_units[kinds[drop_units] == "nonneg"]
    b[first[orth_d]] = 1.0
    soc_d = drop_units[kinds[drop_units] == "soc"]
    b[first[soc_d]] = 1.0
    psd_d = drop_units[kinds[drop_units] == "psd"]
    drow, _ = psd_diagonal_rows(plan, psd_d)
    b[drow] = 1.0
    # relaxation along the cone's identity
    keep = ub & (kinds != "zero")
    orth = np.flatnonzero(keep & (kinds == "nonneg"))
    soc = np.flatnonzero(keep & (kinds == "soc"))
    psd = np.flatnonzero(keep & (kinds == "psd"))
    prow, powner = psd_diagonal_rows(plan, psd)
    rr = np.concatenate([first[orth], first[soc], prow])
    cc = np.concatenate([wcol[cls[orth]], wcol[cls[soc]], wcol[cls[powner]]])
    vv = np.concatenate([-k[orth], -_soc_factor(plan)[soc] * k[soc], -k[powner]])
    A = sp.csr_matrix(sp.hstack([A0, sp.csr_matrix((m, nv - n))], format="csr")
                      + sp.csr_matrix((vv, (rr, cc)), shape=(m, nv)))
    if reach.lin is not None:
        # the one-sided coordinates' linear share of the reach, scale_u (lin_c' x + lin0_c)
        # (no nu), along the same identity direction (unit_reach)
        fac = np.concatenate([sc[orth], _soc_factor(plan)[soc] * sc[soc], sc[powner]])
        own = np.concatenate([cls[orth], cls[soc], cls[powner]])
        L = sp.diags(fac) @ sp.csr_matrix(reach.lin)[own]
        scatter = sp.csr_matrix((np.ones(rr.size), (rr, np.arange(rr.size))),
                                shape=(m, rr.size))
        A = A - sp.hstack([scatter @ L, sp.csr_matrix((m, nv - n))], format="csr")
        np.add.at(b, rr, fac * reach.lin0[own])
    # private equalities: s~_i + k w >= 0 and -s~_i + k w >= 0 (bounded units only)
    zu = np.flatnonzero((kinds == "zero") & ub)
    zr = first[zu]
    kz = sp.csr_matrix((-k[zu], (np.arange(zu.size), wcol[cls[zu]])), shape=(zu.size, nv))
    zshift = np.zeros(zu.size)
    if reach.lin is not None and zu.size:
        Lz = sp.diags(sc[zu]) @ sp.csr_matrix(reach.lin)[cls[zu]]
        kz = kz - sp.hstack([Lz, sp.csr_matrix((zu.size, nv - n))], format="csr")
        zshift = sc[zu] * reach.lin0[cls[zu]]
    band_A = sp.vstack([A[zr] + kz, -A[zr] + kz], format="csr")
    band_b = np.concatenate([b[zr] + zshift, -b[zr] + zshift])
    zero_keep = np.setdiff1d(np.arange(d.zero), first[kinds == "zero"])
    # w_c >= 0 and w_c^2 <= v_c: rows [v + 1; 2 w; v - 1] in SOC(3), v = (p'x + q) / nu_c
    P = sp.csr_matrix(reach.p[bc], copy=True)
    P.data = P.data / np.repeat(nu[bc], np.diff(P.indptr))
    W = sp.csr_matrix((-2.0 * np.ones(bc.size), (np.arange(bc.size), wcol[bc])),
                      shape=(bc.size, nv))
    Px = sp.hstack([-P, sp.csr_matrix((bc.size, nv - n))], format="csr")
    order = np.argsort(np.concatenate([3 * np.arange(bc.size), 3 * np.arange(bc.size) + 1,
                                       3 * np.arange(bc.size) + 2]), kind="stable")
    w_A = sp.vstack([Px, W, Px], format="csr")[order]
    qn = reach.q[bc] / nu[bc]
    w_b = np.concatenate([qn + 1.0, np.zeros(bc.size), qn - 1.0])[order]
    nonneg_rows = np.arange(d.zero, d.zero + d.nonneg)
    n_soc = int(sum(d.soc))
    soc_rows = np.arange(d.zero + d.nonneg, d.zero + d.nonneg + n_soc)
    psd_rows = np.arange(d.zero + d.nonneg + n_soc, m)
    parts_A = [A[zero_keep], band_A, A[nonneg_rows], A[soc_rows], w_A, A[psd_rows]]
    parts_b = [b[zero_keep], band_b, b[nonneg_rows], b[soc_rows], w_b, b[psd_rows]]
    dims = ConeDims(zero=zero_keep.size, nonneg=d.nonneg + 2 * zu.size,
                    soc=(*d.soc, *([3] * bc.size)), psd=d.psd)
    return SymmetricConeProgram(
        A=sp.vstack([p for p in parts_A if p.shape[0]], format="csc"),
        b=np.concatenate(parts_b), c=np.concatenate([scp.c, np.zeros(bc.size)]),
        offset=scp.offset, dims=dims, cone=None, sign=scp.sign, exp_tail=scp.exp_tail)
