"""The compiled SCMWU block (optional ``numba`` extra): orthant, spin-factor and PSD blocks.

:func:`compiled_block` returns a numba-compiled function that runs one block of rounds of
:func:`cvxdp.solvers.mwu.loop.run_numpy` on the block's pre-drawn random numbers, with the same
arithmetic in the same order: scores ``scale G x`` by the same BLAS call (dense; below
``LOOP_GEMV`` entries a column-order loop, which rounds differently in the last bits) or the same
sequential CSR sum as scipy (sparse), ``- scale h``, then the exponential mechanism by inversion
(``exp(l - max l)``, its sequential running sum and the first sum above ``u_t`` times the total:
:func:`cvxdp.privacy.inversion_sampler.exponential_inversion`; the first maximiser for the exact
oracle), the loss row and the noise added to the exponent ``y``, and ``x = exp(lam_min - y) /
trace`` (:mod:`cvxdp.solvers.mwu.loop_exp`; a PSD block through LAPACK's ``eigh`` as numpy's).
Only the exponential's last bits (numpy's vectorised ``exp`` against libm's), the order of the
trace's sum and the LAPACK build differ, so the two backends agree to about 1e-15 relative per
round, and choose the same rows unless a uniform falls within about 1e-16 of a cell's edge.

The kernel is compiled on first use and cached on disk (``cache=True``): importing this module
does not import numba.

References
----------
Song, Xue and Zhang (2025), "Differential Privacy for Euclidean Jordan Algebra with Applications
to Private Symmetric Cone Programming", Algorithms 1, 4 and 5.
McSherry & Talwar (2007), "Mechanism Design via Differential Privacy", FOCS (the exponential
mechanism).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

import numpy as np

__all__ = ["compiled_block"]


def _block(nb, X, y, P, mech, hs, unif, Z, dense, Gd, Gt, Gptr, Gidx, Gval, Yd, Yptr, Yidx, Yval,
           noisy, Nptr, Nidx, Nval, n0, soc_off, soc_size, psd_off, psd_r, psd_ptr, psd_rows,
           psd_cols, psd_scale, s, ada, log_r, state, lv, ys):  # pragma: no cover - compiled
    m = s.shape[0]
    k = y.shape[0]
    nsoc = soc_off.shape[0]
    npsd = psd_off.shape[0]
    nrm = np.empty(nsoc)
    rsum = 0
    r2sum = 0
    for b in range(npsd):
        rsum += psd_r[b]
        r2sum += psd_r[b] * psd_r[b]
    W = np.empty(rsum)  # the PSD blocks' spectra and eigenvectors, block after block
    V = np.empty(r2sum)
    MU = np.empty(n0 + 2 * nsoc + rsum)  # AdaHedge: the loss's spectrum and its weights
    PW = np.empty(n0 + 2 * nsoc + rsum)
    orthant = nsoc == 0 and npsd == 0
    for j in range(nb):
        x = X[j]
        # logits scale * (G x - h), their maximum and first maximiser
        if Gt.shape[0] > 0:
            # small dense G: column-order loop over G' (vectorised over the rows; no BLAS call)
            for i in range(m):
                s[i] = 0.0
            for c in range(k):
                xc = x[c]
                for i in range(m):
                    s[i] += Gt[c, i] * xc
        elif dense:
            np.dot(Gd, x, s)
        else:
            for i in range(m):
                acc = 0.0
                for q in range(Gptr[i], Gptr[i + 1]):
                    acc += Gval[q] * x[Gidx[q]]
                s[i] = acc
        p = 0
        best = -np.inf
        for i in range(m):
            v = s[i] - hs[i]
            s[i] = v
            if v > best or (i == 0):
                best = v
                p = i
        if mech:
            # exponential mechanism by inversion: running sums of exp(l - max), then the
            # first one above u_t times the total = how many are <= it (the sums never
            # decrease; a branch-free count, vectorised, instead of a mispredicted search)
            acc = 0.0
            for i in range(m):
                acc += math.exp(s[i] - best)
                s[i] = acc
            target = unif[j] * acc
            p = 0
            for i in range(m):
                p += s[i] <= target
        P[j] = p
        if ada and orthant:
            # AdaHedge round (orthant only): loop.adaptive_round, the same order
            for c in range(k):
                lv[c] = 0.0
            if dense:
                for c in range(k):
                    lv[c] += Yd[p, c]
            else:
                for q in range(Yptr[p], Yptr[p + 1]):
                    lv[Yidx[q]] += Yval[q]
            if noisy:
                lo = Nptr[p]
                for q in range(lo, Nptr[p + 1]):
                    lv[Nidx[q]] += Nval[q] * Z[j, q - lo]
            delta = state[0]
            hl = np.dot(lv, x)
            if delta > 0.0:
                eta = log_r / delta
                mn = np.inf
                for c in range(k):
                    if lv[c] < mn:
                        mn = lv[c]
                acc = 0.0
                for c in range(k):
                    acc += x[c] * math.exp(eta * (mn - lv[c]))
                ml = mn - math.log(acc) / eta
            else:
                ml = np.inf
                for c in range(k):
                    if x[c] > 0.0 and lv[c] < ml:
                        ml = lv[c]
            state[0] = delta + max(hl - ml, 0.0)
            ymin = np.inf
            for c in range(k):
                y[c] += lv[c]
                if y[c] < ymin:
                    ymin = y[c]
            out = X[j + 1]
            total = 0.0
            if state[0] > 0.0:
                eta = log_r / state[0]
                for c in range(k):
                    out[c] = math.exp((ymin - y[c]) * eta)
                    total += out[c]
            else:
                for c in range(k):
                    out[c] = 1.0 if y[c] == ymin else 0.0
                    total += out[c]
            for c in range(k):
                out[c] /= total
            continue
        if ada:
            # AdaHedge round on a product with cone blocks: loop.adaptive_round_general
            for c in range(k):
                lv[c] = 0.0
            if dense:
                for c in range(k):
                    lv[c] += Yd[p, c]
            else:
                for q in range(Yptr[p], Yptr[p + 1]):
                    lv[Yidx[q]] += Yval[q]
            if noisy:
                lo = Nptr[p]
                for q in range(lo, Nptr[p + 1]):
                    lv[Nidx[q]] += Nval[q] * Z[j, q - lo]
            delta = state[0]
            eta = log_r / delta
            hl = 0.0
            nmu = 0
            for c in range(n0):
                hl += lv[c] * x[c]
                MU[nmu] = lv[c]
                PW[nmu] = x[c]
                nmu += 1
            for b in range(nsoc):
                o = soc_off[b]
                hl += 2.0 * lv[o] * x[o]
                acc = 0.0
                dot = 0.0
                for c in range(o + 1, o + soc_size[b]):
                    hl += 2.0 * lv[c] * x[c]
                    acc += lv[c] * lv[c]
                    dot += lv[c] * x[c]
                nn = math.sqrt(acc)
                dot = dot / nn if nn > 0 else 0.0
                MU[nmu] = lv[o] + nn
                PW[nmu] = x[o] + dot
                MU[nmu + 1] = lv[o] - nn
                PW[nmu + 1] = x[o] - dot
                nmu += 2
            for b in range(npsd):
                r = psd_r[b]
                o = psd_off[b]
                M = np.zeros((r, r))
                XM = np.zeros((r, r))
                for q in range(psd_ptr[b], psd_ptr[b + 1]):
                    c = o + q - psd_ptr[b]
                    hl += lv[c] * x[c]
                    v = lv[c] / psd_scale[q]
                    M[psd_rows[q], psd_cols[q]] = v
                    M[psd_cols[q], psd_rows[q]] = v
                    u = x[c] / psd_scale[q]
                    XM[psd_rows[q], psd_cols[q]] = u
                    XM[psd_cols[q], psd_rows[q]] = u
                w, U = np.linalg.eigh(M)
                for jj in range(r):
                    acc = 0.0
                    for a in range(r):
                        for bb in range(r):
                            acc += U[a, jj] * XM[a, bb] * U[bb, jj]
                    MU[nmu] = w[jj]
                    PW[nmu] = acc
                    nmu += 1
            mn = np.inf
            for i in range(nmu):
                if MU[i] < mn:
                    mn = MU[i]
            acc = 0.0
            for i in range(nmu):
                acc += PW[i] * math.exp(eta * (mn - MU[i]))
            ml = mn - math.log(max(acc, 1e-300)) / eta
            state[0] = delta + max(hl - ml, 0.0)
            eta = log_r / state[0]
            for c in range(k):
                y[c] += lv[c]
                ys[c] = eta * y[c]
            yy = ys
        else:
            # the chosen row's loss, then its noise, into the exponent
            if dense:
                for c in range(k):
                    y[c] += Yd[p, c]
            else:
                for q in range(Yptr[p], Yptr[p + 1]):
                    y[Yidx[q]] += Yval[q]
            if noisy:
                lo = Nptr[p]
                for q in range(lo, Nptr[p + 1]):
                    y[Nidx[q]] += Nval[q] * Z[j, q - lo]
            yy = y
        # x = exp(-y) / tr exp(-y), shifted by the smallest eigenvalue
        out = X[j + 1]
        lam_min = np.inf
        for c in range(n0):
            if yy[c] < lam_min:
                lam_min = yy[c]
        for b in range(nsoc):
            o = soc_off[b]
            acc = 0.0
            for c in range(o + 1, o + soc_size[b]):
                acc += yy[c] * yy[c]
            nrm[b] = math.sqrt(acc)
            if yy[o] - nrm[b] < lam_min:
                lam_min = yy[o] - nrm[b]
        wo = 0
        vo = 0
        for b in range(npsd):
            r = psd_r[b]
            o = psd_off[b]
            M = np.zeros((r, r))
            for q in range(psd_ptr[b], psd_ptr[b + 1]):
                v = yy[o + q - psd_ptr[b]] / psd_scale[q]
                M[psd_rows[q], psd_cols[q]] = v
                M[psd_cols[q], psd_rows[q]] = v
            w, U = np.linalg.eigh(M)
            if w[0] < lam_min:
                lam_min = w[0]
            W[wo:wo + r] = w
            V[vo:vo + r * r] = U.ravel()
            wo += r
            vo += r * r
        total = 0.0
        for c in range(n0):
            out[c] = math.exp(lam_min - yy[c])
            total += out[c]
        for b in range(nsoc):
            o = soc_off[b]
            ep = math.exp(lam_min - (yy[o] + nrm[b]))
            em = math.exp(lam_min - (yy[o] - nrm[b]))
            out[o] = 0.5 * (ep + em)
            coef = 0.5 * (ep - em) / nrm[b] if nrm[b] > 0 else 0.0
            for c in range(o + 1, o + soc_size[b]):
                out[c] = coef * yy[c]
            total += ep + em
        wo = 0
        vo = 0
        for b in range(npsd):
            r = psd_r[b]
            o = psd_off[b]
            U = V[vo:vo + r * r].reshape((r, r))
            ew = np.exp(lam_min - W[wo:wo + r])
            E = np.dot(U * ew, U.T.copy())
            for q in range(psd_ptr[b], psd_ptr[b + 1]):
                out[o + q - psd_ptr[b]] = E[psd_rows[q], psd_cols[q]] * psd_scale[q]
            for i in range(r):
                total += ew[i]
            wo += r
            vo += r * r
        for c in range(k):
            out[c] /= total


@functools.cache
def compiled_block() -> Callable:
    """The numba-compiled :func:`_block` (raises ImportError without numba)."""
    import numba  # optional extra: pip install 'cvxdp[fast]'

    return numba.njit(cache=True, nogil=True)(_block)
