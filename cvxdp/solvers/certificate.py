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
* **Lower bound on the optimum** (:func:`loosened_program`).  With ``T_u = scale_u U_u``,
  ``U_u >= max ||E_u [x; 1]||`` over the public rows' feasible set (``U_u = inf`` where the
  public rows do not bound the variables that ``E_u`` multiplies), every ``x`` feasible for the
  TRUE data satisfies ``s~_u(x) + T_u e_u in K_u`` (``e_u``: the cone's identity; ``c T_u`` on
  the SOC's first coordinate) and ``|s~_i(x)| <= T_u`` on a private equality.  That set is a
  convex superset of the true feasible set, so the optimum of the public objective over it is a
  lower bound on the true optimum (a unit with ``T_u = inf`` is dropped: still a superset).

The proofs are written out in ``docs/certificates.md``.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp

from cvxdp.solvers.public_part import public_bounds
from cvxdp.transform.scp import ConeDims, SymmetricConeProgram

__all__ = ["unit_reach", "violation_bounds", "loosened_program", "CERTIFICATE_THEOREM"]

CERTIFICATE_THEOREM = (
    "perturbation certificate: the noisy slack test at the released point and the loosened "
    "counterpart's optimum (docs/certificates.md)")


def unit_reach(scp: SymmetricConeProgram, plan: object) -> np.ndarray:
    """``U_u >= max ||E_u [x; 1]||_2`` over the public rows' feasible set, per unit.

    ``sum_j |x_j|_max ||E_u[:, j]|| + ||E_u[:, n]||`` (triangle inequality) with ``|x_j|_max``
    from exact solves of the public rows (``inf`` where they do not bound ``x_j``).  Only the
    variables some ``E_u`` multiplies are bounded, so private right-hand sides need no solve.
    """
    n = scp.n
    E = plan.E
    cols = [np.sqrt(np.asarray(Eu.multiply(Eu).sum(axis=0)).ravel()) for Eu in E]
    if not cols:
        return np.zeros(0)
    need = np.flatnonzero(np.max([c[:n] for c in cols], axis=0) > 0)
    xmax = np.zeros(n)
    if need.size:
        row_private = np.zeros(scp.m, dtype=bool)
        row_private[scp.sensitivity.private_rows()] = True
        eye = np.eye(n)
        lo, hi = public_bounds(scp.A, scp.b, scp.dims, row_private, [eye[j] for j in need],
                               allow_unbounded=True)
        xmax[need] = np.maximum(np.abs(lo), np.abs(hi))
    out = np.empty(len(cols))
    for u, c in enumerate(cols):
        hit = c[:n] > 0
        out[u] = (math.inf if np.any(~np.isfinite(xmax[hit]))
                  else float(c[:n][hit] @ xmax[hit] + c[n]))
    return out


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
                     plan: object, T: np.ndarray) -> SymmetricConeProgram:
    """The convex superset of the true feasible set on the noise event (module doc).

    Same variables and public objective as ``scp``; the noisy data ``(A~, b~)`` relaxed by
    ``T_u`` along each private unit's cone identity, private equality rows as the band
    ``|s~_i| <= T_u`` (two orthant rows), units with ``T_u = inf`` dropped.
    """
    d = scp.dims
    A = sp.csr_matrix(A_t).astype(float).tolil()
    b = np.asarray(b_t, dtype=float).copy()
    unit_of = -np.ones(scp.m, dtype=int)
    for u, rows in enumerate(plan.unit_rows):
        unit_of[np.asarray(rows)] = u
    zero_keep, band_A, band_b = [], [], []
    for i in range(d.zero):
        u = unit_of[i]
        if u < 0:
            zero_keep.append(i)
        elif math.isfinite(T[u]):  # |b~_i - A~_i x| <= T_u
            band_A += [A[i], -A[i]]
            band_b += [b[i] + T[u], T[u] - b[i]]
    r0 = d.zero
    for i in range(r0, r0 + d.nonneg):
        u = unit_of[i]
        if u >= 0:
            if math.isfinite(T[u]):
                b[i] += T[u]
            else:
                A[i] = 0.0
                b[i] = 1.0
    r0 += d.nonneg
    for q in d.soc:
        u = unit_of[r0]
        if u >= 0:
            if math.isfinite(T[u]):
                b[r0] += _soc_factor(plan, u) * T[u]
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
            if math.isfinite(T[u]):
                b[r0:r0 + size] += T[u] * ident
            else:
                A[r0:r0 + size] = 0.0
                b[r0:r0 + size] = ident
        r0 += size
    A = A.tocsr()
    rest = np.arange(d.zero, scp.m)
    parts_A = [A[zero_keep], *[sp.csr_matrix(a) for a in band_A], A[rest[:d.nonneg]],
               A[rest[d.nonneg:]]]
    parts_b = [b[zero_keep], np.asarray(band_b, dtype=float), b[rest[:d.nonneg]],
               b[rest[d.nonneg:]]]
    dims = ConeDims(zero=len(zero_keep), nonneg=d.nonneg + len(band_b), soc=d.soc, psd=d.psd)
    return SymmetricConeProgram(
        A=sp.vstack([p for p in parts_A if p.shape[0]], format="csc"),
        b=np.concatenate(parts_b), c=scp.c, offset=scp.offset, dims=dims, cone=None,
        sign=scp.sign)


def _svec_identity(r: int) -> np.ndarray:
    """svec of the r x r identity (column-major lower triangle: 1 on the diagonal)."""
    i, j = np.tril_indices(r)
    order = np.lexsort((i, j))
    return (i[order] == j[order]).astype(float)
