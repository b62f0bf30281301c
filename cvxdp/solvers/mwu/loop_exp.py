"""``x = exp(-y) / tr exp(-y)`` for the batched MWU loop, in numpy (one round's iterate).

The same arithmetic, in the same order, as the compiled block of
:mod:`cvxdp.solvers.mwu.loop_numba`: the exponent is shifted by the smallest eigenvalue of
``y`` over all blocks (orthant entries, ``t - |x|`` of each spin factor, the spectrum of each
PSD block), spin factors use their closed form ``exp = e^{-l+} q+ + e^{-l-} q-``, and a PSD block
of order ``r`` is rebuilt from its svec coordinates, diagonalised by ``eigh`` and recomposed as
``U diag(exp(lam_min - w)) U'``.  Up to :data:`PER_BLOCK_PSD` PSD blocks are done block by block
this way; more go through the algebra's own batched :meth:`BlockAlgebra.normalized_exp`.

References
----------
Song, Xue and Zhang (2025), "Differential Privacy for Euclidean Jordan Algebra with Applications
to Private Symmetric Cone Programming", Definition A.4 (cumulative-loss SCMWU) and Table 1.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from cvxdp.jordan import svec_indices

__all__ = ["numpy_normexp", "psd_layout", "PER_BLOCK_PSD"]

PER_BLOCK_PSD = 8  # PSD blocks handled one by one (the compiled kernel's way); above: batched

NormExp = Callable[[np.ndarray, np.ndarray], None]


def psd_layout(algebra: Any) -> dict[str, np.ndarray]:
    """Offsets, orders and concatenated svec index arrays of the PSD blocks (the loop's
    ``LoopData`` fields ``psd_*``)."""
    rows, cols, scale, ptr = [], [], [], [0]
    for r in algebra.psd:
        rr, cc, sc = svec_indices(r)
        rows.append(rr)
        cols.append(cc)
        scale.append(sc)
        ptr.append(ptr[-1] + len(rr))
    cat = (lambda parts, dt: np.concatenate(parts).astype(dt) if parts  # noqa: E731
           else np.zeros(0, dtype=dt))
    return {"psd_off": np.asarray(algebra._psd_off, dtype=np.int64),
            "psd_r": np.asarray(algebra.psd, dtype=np.int64),
            "psd_ptr": np.asarray(ptr, dtype=np.int64), "psd_rows": cat(rows, np.int64),
            "psd_cols": cat(cols, np.int64), "psd_scale": cat(scale, float)}


def numpy_normexp(d: Any, algebra: Any) -> NormExp:
    """``normexp(y, out)`` writing ``exp(-y) / tr exp(-y)`` into ``out`` for the loop ``d``."""
    if len(d.psd_off) > PER_BLOCK_PSD:
        def batched(y: np.ndarray, out: np.ndarray) -> None:
            out[:] = algebra.normalized_exp(y)
        return batched
    n0 = d.n0
    heads = d.soc_off
    nb = len(heads)
    tails = (np.concatenate([np.arange(o + 1, o + q) for o, q in zip(d.soc_off, d.soc_size,
                                                                       strict=True)])
             if nb else np.zeros(0, dtype=np.int64))
    seg = np.repeat(np.arange(nb), d.soc_size - 1)
    psd = [(int(o), int(r), slice(int(o), int(o) + int(d.psd_ptr[b + 1] - d.psd_ptr[b])),
            d.psd_rows[d.psd_ptr[b]:d.psd_ptr[b + 1]], d.psd_cols[d.psd_ptr[b]:d.psd_ptr[b + 1]],
            d.psd_scale[d.psd_ptr[b]:d.psd_ptr[b + 1]])
           for b, (o, r) in enumerate(zip(d.psd_off, d.psd_r, strict=True))]

    if not nb and not psd:
        def orthant(y: np.ndarray, out: np.ndarray) -> None:
            np.subtract(y[y.argmin()], y, out=out)  # = y.min(), with less overhead
            np.exp(out, out=out)
            out *= 1.0 / out.sum()  # one division, then products (as the compiled kernel)
        return orthant

    def normexp(y: np.ndarray, out: np.ndarray) -> None:
        lam_min = math.inf
        if n0:
            lam_min = y[:n0].min()
        if nb:
            t = y[heads]
            tail = y[tails]
            nrm = np.sqrt(np.bincount(seg, weights=tail * tail, minlength=nb))
            lm = t - nrm
            lp = t + nrm
            lam_min = min(lam_min, lm.min())
        spectra = []
        for _, r, sl, rows, cols, sc in psd:
            M = np.zeros((r, r))
            v = y[sl] / sc
            M[rows, cols] = v
            M[cols, rows] = v
            w, U = np.linalg.eigh(M)
            spectra.append((w, U))
            lam_min = min(lam_min, w[0])
        total = 0.0
        if n0:
            np.subtract(lam_min, y[:n0], out=out[:n0])
            np.exp(out[:n0], out=out[:n0])
            total += out[:n0].sum()
        if nb:
            ep = np.exp(lam_min - lp)
            em = np.exp(lam_min - lm)
            out[heads] = 0.5 * (ep + em)
            safe = np.where(nrm > 0, nrm, 1.0)
            coef = np.where(nrm > 0, 0.5 * (ep - em) / safe, 0.0)
            out[tails] = coef[seg] * tail
            total += (ep + em).sum()
        for (_, _, sl, rows, cols, sc), (w, U) in zip(psd, spectra, strict=True):
            ew = np.exp(lam_min - w)
            E = np.dot(U * ew, U.T)
            out[sl] = E[rows, cols] * sc
            total += ew.sum()
        out *= 1.0 / total
    return normexp
