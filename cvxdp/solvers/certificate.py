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
  lambda_min(S~))``; SOC block ``(t, u)`` ``max(0, ||u~|| - t~ + c t_u)`` (``||u|| <=
  ||u~|| + t_u`` and ``t >= t~ - t_u``; ``c = 2``, or 1 when no private data reach ``t``).
  Public rows are evaluated exactly.
* **Lower bound on the optimum** (:func:`loosened_program`).  On the public rows' box
  ``l <= x <= h``, ``||E_u [x; 1]||^2 <= p_u' x + q_u`` (:class:`UnitReach`: Gershgorin, then
  the secant of ``x_j^2``), so every ``x`` feasible for the TRUE data satisfies ``s~_u(x) +
  scale_u sqrt(p_u' x + q_u) e_u in K_u`` (``e_u``: the cone's identity, ``c`` times on a SOC
  block's first coordinate) and ``|s~_i(x)| <= scale_u sqrt(...)`` on a private equality.
  ``sqrt`` of an affine function is concave, so that set is convex (one rotated cone per unit)
  and contains the true feasible set: the optimum of the public objective over it is a lower
  bound on the true optimum (a unit whose variables the public rows do not bound is dropped:
  still a superset).

The proofs are written out in ``docs/certificates.md``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from cvxdp.transform.scp import ConeDims, SymmetricConeProgram

__all__ = ["unit_reach", "UnitReach", "reached_coordinates", "violation_bounds",
           "loosened_program"]


@dataclass(frozen=True)
class UnitReach:
    """``||E_u [x; 1]||_2^2 <= p_u' x + q_u`` on the public rows' box, per unit (None: no bound).

    ``G = E_u' E_u`` is at most ``diag(d)``, ``d_j = sum_k |G_jk|`` (Gershgorin: ``diag(d) - G``
    is diagonally dominant, hence PSD), and on ``l_j <= x_j <= h_j`` the convex ``x_j^2`` is at
    most its secant ``(l_j + h_j) x_j - l_j h_j``; so ``||E_u [x; 1]||^2 <= sum_j d_j ((l_j +
    h_j) x_j - l_j h_j) + d_n``: ``p_j = d_j (l_j + h_j)``, ``q = d_n - sum_j d_j l_j h_j``.
    ``sqrt(p' x + q)`` is concave, so ``s~_u(x) + scale_u sqrt(p' x + q) e_u in K_u`` is a convex
    set (one rotated second-order cone per unit).
    """

    p: list[np.ndarray | None]
    q: list[float]


def reached_coordinates(maps: list[sp.spmatrix], n: int) -> np.ndarray:
    """The variables some map ``[x; 1] -> ...`` multiplies (nonzero among its first ``n``
    columns): the coordinates a public box is needed for."""
    if not maps:
        return np.zeros(0, dtype=int)
    hit = np.zeros(n, dtype=bool)
    for M in maps:
        hit |= np.asarray(abs(M[:, :n]).sum(axis=0)).ravel() > 0
    return np.flatnonzero(hit)


def unit_reach(plan: object, lo: np.ndarray, hi: np.ndarray) -> UnitReach:
    """The concave bound of :class:`UnitReach` for every unit, on the public box ``[lo, hi]``
    (:func:`cvxdp.solvers.public_part.coordinate_box` over :func:`reached_coordinates`)."""
    n = lo.size
    ps: list[np.ndarray | None] = []
    qs: list[float] = []
    for Eu in plan.E:
        d = np.asarray(abs((Eu.T @ Eu).tocsr()).sum(axis=1)).ravel()
        hit = d[:n] > 0
        if np.any(~np.isfinite(lo[hit])) or np.any(~np.isfinite(hi[hit])):
            ps.append(None)
            qs.append(math.inf)
            continue
        p = np.zeros(n)
        p[hit] = d[:n][hit] * (lo[hit] + hi[hit])
        ps.append(p)
        qs.append(float(d[n] - np.sum(d[:n][hit] * lo[hit] * hi[hit])))
    return UnitReach(ps, qs)


def _soc_factor(plan: object, u: int) -> float:
    """2 when private data reach the SOC block's first coordinate ``t`` (both ``t`` and ``u``
    move), 1 when ``t`` is public (only ``||u||`` moves)."""
    first = int(np.asarray(plan.unit_rows[u])[0])
    return 2.0 if first in set(np.asarray(plan.touched[u]).tolist()) else 1.0


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
                     plan: object, scale: np.ndarray, x: np.ndarray
                     ) -> tuple[float, float | None]:
    """Bounds on the TRUE constraints' violation at ``x`` on the noise event (module doc).

    Returns
    -------
    (violation_bound, equality_violation_bound) : (float, float or None)
        The largest bound over every canonical row and block (public ones evaluated exactly),
        and the largest over the private equality rows (None when there are none).
    """
    xs = np.append(np.asarray(x, dtype=float), 1.0)
    s_t = b_t - sp.csr_matrix(A_t) @ x
    s_pub = scp.b - scp.A @ x
    in_unit = np.zeros(scp.m, dtype=bool)
    worst, worst_eq = 0.0, None
    for u, kind in enumerate(plan.unit_kind):
        rows = np.asarray(plan.unit_rows[u])
        in_unit[rows] = True
        t = float(scale[u] * np.linalg.norm(plan.E[u] @ xs))
        s = s_t[rows]
        if kind == "zero":
            v = abs(float(s[0])) + t
            worst_eq = v if worst_eq is None else max(worst_eq, v)
        elif kind == "nonneg":
            v = max(0.0, t - float(s[0]))
        elif kind == "soc":
            v = max(0.0, float(np.linalg.norm(s[1:])) - float(s[0]) + _soc_factor(plan, u) * t)
        else:  # psd
            r = int(round((math.sqrt(8 * rows.size + 1) - 1) / 2))
            v = max(0.0, t - float(np.linalg.eigvalsh(_smat(s, r))[0]))
        worst = max(worst, v)
    worst = max(worst, _public_violation(scp.dims, s_pub, in_unit))
    return worst, worst_eq


def _public_violation(dims: ConeDims, s: np.ndarray, in_unit: np.ndarray) -> float:
    """Largest violation of the rows and blocks with no private data (exact: public data)."""
    worst = 0.0
    r0 = 0
    for _ in range(dims.zero):
        if not in_unit[r0]:
            worst = max(worst, abs(float(s[r0])))
        r0 += 1
    for _ in range(dims.nonneg):
        if not in_unit[r0]:
            worst = max(worst, -float(s[r0]))
        r0 += 1
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

    Variables ``(x, w)``, one ``w_u`` per private unit with ``w_u^2 <= (p_u' x + q_u) / nu_u``
    (:class:`UnitReach`; a rotated cone ``||(2 w_u, v - 1)|| <= v + 1``; ``nu_u`` the largest
    magnitude of ``p_u, q_u``, so the cone is well scaled); the noisy rows relaxed by
    ``scale_u sqrt(nu_u) w_u`` along the cone's identity (``c`` times on a SOC
    block's first coordinate), a private equality as the band ``|s~_i| <= scale_u w_u``; a unit
    without a bound is dropped.  The objective is the public ``c' x + offset``.
    """
    d = scp.dims
    n, m, N = scp.n, scp.m, plan.N
    nv = n + N
    A = sp.hstack([sp.csr_matrix(A_t).astype(float), sp.csr_matrix((m, N))], format="lil")
    b = np.asarray(b_t, dtype=float).copy()
    unit_of = -np.ones(m, dtype=int)
    for u, rows in enumerate(plan.unit_rows):
        unit_of[np.asarray(rows)] = u
    bounded = np.array([reach.p[u] is not None for u in range(N)], dtype=bool)
    # w_u stands for sqrt((p_u'x + q_u) / nu_u) with nu_u the data's largest magnitude, so the
    # cone's data are O(1) at every budget; the rows take k_u = scale_u sqrt(nu_u) w_u
    nu = np.array([max(float(np.max(np.abs(reach.p[u]), initial=0.0)), abs(reach.q[u]), 1e-300)
                   if bounded[u] else 1.0 for u in range(N)])
    k = scale * np.sqrt(nu)
    zero_keep, band_rows = [], []
    for i in range(d.zero):
        u = unit_of[i]
        if u < 0:
            zero_keep.append(i)
        elif bounded[u]:  # s~_i + k w >= 0 and -s~_i + k w >= 0
            plus = A[i].toarray().ravel()
            plus[n + u] = -k[u]
            minus = -A[i].toarray().ravel()
            minus[n + u] = -k[u]
            band_rows += [(plus, b[i]), (minus, -b[i])]
    r0 = d.zero
    for i in range(r0, r0 + d.nonneg):
        u = unit_of[i]
        if u >= 0:
            if bounded[u]:
                A[i, n + u] = -k[u]
            else:
                A[i] = 0.0
                b[i] = 1.0
    r0 += d.nonneg
    for q in d.soc:
        u = unit_of[r0]
        if u >= 0:
            if bounded[u]:
                A[r0, n + u] = -_soc_factor(plan, u) * k[u]
            else:
                A[r0:r0 + q] = 0.0
                b[r0:r0 + q] = 0.0
                b[r0] = 1.0
        r0 += q
    for r in d.psd:
        size = r * (r + 1) // 2
        u = unit_of[r0]
        ident = _svec_identity(r)
        if u >= 0:
            if bounded[u]:
                for j in np.flatnonzero(ident):
                    A[r0 + j, n + u] = -k[u]
            else:
                A[r0:r0 + size] = 0.0
                b[r0:r0 + size] = ident
        r0 += size
    A = A.tocsr()
    # w_u >= 0 and w_u^2 <= v_u: rows [v + 1; 2 w; v - 1] in SOC(3), v = (p'x + q) / nu_u
    w_rows, w_b, cones = [], [], []
    for u in np.flatnonzero(bounded):
        p = np.concatenate([reach.p[u] / nu[u], np.zeros(N)])
        ew = np.zeros(nv)
        ew[n + u] = 1.0
        q = reach.q[u] / nu[u]
        w_rows += [-p, -2.0 * ew, -p]
        w_b += [q + 1.0, 0.0, q - 1.0]
        cones.append(3)
    rest = np.arange(d.zero, m)
    nonneg_rows = rest[:d.nonneg]
    cone_rows = rest[d.nonneg:]
    n_soc = int(sum(d.soc))
    parts_A = [A[zero_keep], *_pins(np.flatnonzero(~bounded), n, nv),
               sp.csr_matrix(np.array([r for r, _ in band_rows]).reshape(-1, nv)),
               A[nonneg_rows], A[cone_rows[:n_soc]],
               sp.csr_matrix(np.array(w_rows).reshape(-1, nv)), A[cone_rows[n_soc:]]]
    parts_b = [b[zero_keep], np.zeros(int((~bounded).sum())),
               np.array([v for _, v in band_rows], dtype=float), b[nonneg_rows],
               b[cone_rows[:n_soc]], np.array(w_b, dtype=float), b[cone_rows[n_soc:]]]
    dims = ConeDims(zero=len(zero_keep) + int((~bounded).sum()),
                    nonneg=d.nonneg + len(band_rows), soc=(*d.soc, *cones), psd=d.psd)
    return SymmetricConeProgram(
        A=sp.vstack([p for p in parts_A if p.shape[0]], format="csc"),
        b=np.concatenate(parts_b), c=np.concatenate([scp.c, np.zeros(N)]), offset=scp.offset,
        dims=dims, cone=None, sign=scp.sign)


def _pins(units: np.ndarray, n: int, nv: int) -> list[sp.csr_matrix]:
    """Rows ``w_u = 0`` (zero cone) for the units that are dropped."""
    if units.size == 0:
        return []
    return [sp.csr_matrix((np.ones(units.size), (np.arange(units.size), n + units)),
                          shape=(units.size, nv))]


def _svec_identity(r: int) -> np.ndarray:
    """svec of the r x r identity (column-major lower triangle: 1 on the diagonal)."""
    i, j = np.tril_indices(r)
    order = np.lexsort((i, j))
    return (i[order] == j[order]).astype(float)
