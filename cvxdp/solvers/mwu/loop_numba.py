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
Only the exponentials' last bits (numpy's vectorised ``exp`` against the kernel's own,
:func:`_exp_nonpositive`, and libm's on cone blocks), the order of the trace's sum and the LAPACK
build differ, so the two backends agree to about 1e-15 relative per round, and choose the same
rows unless a uniform falls within about 1e-16 of a cell's edge.

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

__all__ = ["compiled_block", "compiled_exp", "EXP_FLOOR"]


def _block(nb, X, y, chosen, xsum, mech, hs, unif, Z, dense, Gd, Gt, Gptr, Gidx, Gval, Yd, Yptr,
           Yidx, Yval, noisy, Nptr, Nidx, Nval, Nstart, n0, soc_off, soc_size, psd_off, psd_r,
           psd_ptr, psd_rows, psd_cols, psd_scale, s, ada, log_r, state, lv,
           ys):  # pragma: no cover - compiled
    m = s.shape[0]
    k = y.shape[0]
    nsoc = soc_off.shape[0]
    npsd = psd_off.shape[0]
    nrm = np.empty(nsoc)
    bits = np.empty(max(m, n0), dtype=np.int64)  # _exp_nonpositive's powers of two
    scale = bits.view(np.float64)
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
        x = X[j & 1]  # the iterate; the next goes into the other row
        for c in range(k):
            xsum[c] += x[c]
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
            for i in range(m):
                s[i] -= best
            _exp_nonpositive(s, m, bits, scale)
            acc = 0.0
            for i in range(m):
                acc += s[i]
                s[i] = acc
            target = unif[j] * acc
            p = 0
            for i in range(m):
                p += s[i] <= target
            p = min(p, m - 1)  # never binds (fl(u C) < C); the index below is unchecked
        chosen[p] += 1
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
            out = X[(j + 1) & 1]
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
                c0 = Nstart[p]
                if c0 >= 0:  # a contiguous support: no index array (vectorised)
                    for q in range(lo, Nptr[p + 1]):
                        y[c0 + q - lo] += Nval[q] * Z[j, q - lo]
                else:
                    for q in range(lo, Nptr[p + 1]):
                        y[Nidx[q]] += Nval[q] * Z[j, q - lo]
            yy = y
        # x = exp(-y) / tr exp(-y), shifted by the smallest eigenvalue
        out = X[(j + 1) & 1]
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
            out[c] = lam_min - yy[c]
        _exp_nonpositive(out, n0, bits, scale)
        for c in range(n0):
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
        inv = 1.0 / total  # one division, then products (loop_exp does the same)
        for c in range(k):
            out[c] *= inv
    if nb & 1:  # the last iterate into row 0, where the next block starts
        for c in range(k):
            X[0, c] = X[1, c]


_LOG2E = 1.4426950408889634
_LN2_HI = 6.93147180369123816490e-01  # ln 2 in 32 bits (low 21 bits zero): k * _LN2_HI exact
_LN2_LO = 1.90821492927058770002e-10  # ln 2 - _LN2_HI, rounded
_C = tuple(1.0 / math.factorial(i) for i in range(14))
EXP_FLOOR = -708.0  # below: 0 (e^-708 < 2^-1021); above, every result is a normal float


def _exp_nonpositive(x, n, bits, scale):  # pragma: no cover - compiled
    """``x[:n] <- exp(x[:n])`` for ``x <= 0``, in two loops the compiler vectorises (``bits``:
    int64 scratch, ``scale``: the same memory viewed as float64).

    ``k = round(x / ln 2)``, ``r = (x - k ln2_hi) - k ln2_lo`` (Cody & Waite 1980), ``e^r`` by
    its Taylor polynomial of degree 13 in Horner form, times ``2^k`` built from its exponent
    bits; ``x < EXP_FLOOR`` gives 0.  Error, for ``EXP_FLOOR <= x <= 0`` (``h = 2^-53``):
    ``k ln2_hi`` is exact (``|k| <= 1022`` has 10 bits) and so is ``x - k ln2_hi`` (Sterbenz),
    so ``r`` is within ``0.36 h`` of ``x - k ln 2`` (``|r| <= 0.35``); the truncated series
    loses ``|r|^14 / 14! e^|r| < 0.1 h`` relative, the rounded coefficients ``1/i!`` (exact for
    ``i <= 2``) ``< 0.01 h``, and Horner's rounding ``<= 4 h`` relative (the last two steps
    dominate: ``|e_0| <= |r| |e_1| + h |r q_1| + h q_0`` with ``|e_1| <= 1.7 h``, ``q_0 =
    e^r >= 0.7``); the product by ``2^k`` is exact (a normal result).  Total ``<= 4.5 h``
    relative, within :data:`cvxdp.privacy.inversion_sampler.EXP_ERROR_U` (``8 h``); below
    ``EXP_FLOOR`` the absolute error is ``< 2^-1021``.  Measured: ``1.6 h`` on 3e6 points
    (``tests/solvers/mwu/test_mwu_loop.py``).

    References
    ----------
    Cody & Waite (1980), *Software Manual for the Elementary Functions*, Prentice-Hall
    (argument reduction); Higham (2002), *Accuracy and Stability of Numerical Algorithms*,
    2nd ed., Sec. 5.1 (Horner's rule).
    """
    c0, c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11, c12, c13 = _C
    for i in range(n):
        xi = x[i]
        xc = max(xi, EXP_FLOOR)
        kf = math.floor(xc * _LOG2E + 0.5)
        r = (xc - kf * _LN2_HI) - kf * _LN2_LO
        q = c13 * r + c12
        q = q * r + c11
        q = q * r + c10
        q = q * r + c9
        q = q * r + c8
        q = q * r + c7
        q = q * r + c6
        q = q * r + c5
        q = q * r + c4
        q = q * r + c3
        q = q * r + c2
        q = q * r + c1
        q = q * r + c0
        x[i] = q if xi >= EXP_FLOOR else 0.0
        bits[i] = (np.int64(kf) + 1023) << 52  # the float 2^k: scale[i], bits viewed as floats
    for i in range(n):
        x[i] *= scale[i]


@functools.cache
def compiled_block() -> Callable:
    """The numba-compiled :func:`_block` (raises ImportError without numba)."""
    import numba  # optional extra: pip install 'cvxdp[fast]'

    global _exp_nonpositive  # the kernel calls the compiled helper
    _exp_nonpositive = compiled_exp()
    return numba.njit(cache=True, nogil=True)(_block)


@functools.cache
def compiled_exp() -> Callable:
    """The numba-compiled :func:`_exp_nonpositive` (raises ImportError without numba)."""
    import numba  # optional extra: pip install 'cvxdp[fast]'

    return numba.njit(cache=True, nogil=True)(_exp_nonpositive_py)


_exp_nonpositive_py = _exp_nonpositive
