"""AdaHedge's step for the batched MWU loop (numpy; the compiled kernel does the same).

The step ``eta_t = ln r / Delta_{t-1}``, ``Delta`` the cumulative mixability gap, of de Rooij,
van Erven, Gruenwald & Koolen (2014), "Follow the Leader If You Can, Hedge If You Must", JMLR
15; on spin-factor and PSD blocks with the Golden-Thompson gap of :func:`adaptive_round_general`.
The regret bound both keep, ``S sqrt(T ln r) + 2 S (+ 2 Delta_0)``, is derived in docs/mwu.md.
``d`` is the loop's :class:`cvxdp.solvers.mwu.loop.LoopData`.

References
----------
de Rooij, van Erven, Gruenwald & Koolen (2014); Song, Xue & Zhang (2025), "Differential Privacy
for Euclidean Jordan Algebra with Applications to Private Symmetric Cone Programming", Lemma A.3
(Golden-Thompson on a Euclidean Jordan algebra) and Theorem A.5.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["adaptive_round", "adaptive_round_general", "ada_state", "ADA_DELTA0"]


def round_loss(d: Any, p: int, z: np.ndarray, lv: np.ndarray) -> None:
    """``lv`` = the chosen row ``p``'s loss plus its noise ``z`` (the round's loss vector)."""
    lv[:] = 0.0
    if d.dense:
        lv += d.Yd[p]
    else:
        lo, hi = d.Yptr[p], d.Yptr[p + 1]
        lv[d.Yidx[lo:hi]] += d.Yval[lo:hi]
    if d.noisy:
        lo, hi = d.Nptr[p], d.Nptr[p + 1]
        lv[d.Nidx[lo:hi]] += d.Nval[lo:hi] * z[:hi - lo]


def adaptive_round(d: Any, p: int, x: np.ndarray, z: np.ndarray, y: np.ndarray,
                   lv: np.ndarray, state: np.ndarray, out: np.ndarray) -> None:
    """One AdaHedge round on an orthant algebra: the loss ``lv`` (row ``p`` plus its noise),
    the mixability gap ``delta = <lv, x> - m`` added to ``Delta = state[0]``, ``y += lv``, and
    the next iterate ``exp(-eta (y - min y))`` normalised, ``eta = ln r / Delta`` (the uniform
    distribution on ``argmin y`` while ``Delta = 0``).  ``x`` was played with ``eta`` from the
    previous ``Delta``; the mix loss is ``m = -(1/eta) ln sum_c x_c exp(-eta lv_c)`` (the
    smallest loss on the support of ``x`` when ``eta`` is infinite).  The compiled kernel does
    the same arithmetic in the same order.

    References
    ----------
    de Rooij, van Erven, Gruenwald & Koolen (2014), "Follow the Leader If You Can, Hedge If You
    Must", JMLR 15 (AdaHedge); docs/mwu.md for the bound used.
    """
    round_loss(d, p, z, lv)
    delta = state[0]
    hl = float(np.dot(lv, x))
    if delta > 0.0:
        eta = d.log_r / delta
        mn = lv.min()
        ml = mn - math.log(float(np.dot(x, np.exp(eta * (mn - lv))))) / eta
    else:
        ml = float(lv[x > 0.0].min())
    state[0] = delta + max(hl - ml, 0.0)
    y += lv
    if state[0] > 0.0:
        eta = d.log_r / state[0]
        np.subtract(y.min(), y, out=out)
        out *= eta
        np.exp(out, out=out)
        out /= out.sum()
    else:
        out[:] = y == y.min()
        out /= out.sum()


#: Delta_0 on algebras with cone blocks (Delta_t > 0 keeps eta finite; the regret bound grows by
#: 2 Delta_0, docs/mwu.md); the orthant path plays the leader exactly while Delta = 0
ADA_DELTA0 = 1e-12


def ada_state(d: Any) -> np.ndarray:
    orthant = not len(d.soc_off) and not len(d.psd_off)
    return np.array([0.0 if orthant else ADA_DELTA0])


def adaptive_round_general(d: Any, p: int, x: np.ndarray, z: np.ndarray, y: np.ndarray,
                           lv: np.ndarray, state: np.ndarray, ys: np.ndarray) -> None:
    """One AdaHedge round on a product with spin-factor or PSD blocks, with the gap
    ``delta~ = <lv, x> + (1/eta) ln sum_j p_j exp(-eta mu_j)`` (``mu_j`` the spectrum of the
    loss ``lv``, ``p_j = <q_j, x>`` the iterate's weight on its Jordan frame): Golden-Thompson
    makes it at least the mixability gap, and it keeps Hoeffding's ``eta S^2 / 8`` and ``S``
    bounds, so AdaHedge's regret bound holds with it (docs/mwu.md).  Writes ``ys = eta y``
    (``eta = ln r / Delta``) for the caller's exponential; the compiled kernel does the same.
    """
    round_loss(d, p, z, lv)
    delta = float(state[0])
    eta = d.log_r / delta
    n0 = d.n0
    hl = float(np.dot(lv[:n0], x[:n0]))
    mu, pw = [lv[:n0]], [x[:n0]]
    for o, q in zip(d.soc_off, d.soc_size, strict=True):
        a, xb = lv[o:o + q], x[o:o + q]
        hl += 2.0 * float(np.dot(a, xb))
        nn = math.sqrt(float(np.dot(a[1:], a[1:])))
        dot = float(np.dot(a[1:], xb[1:])) / nn if nn > 0 else 0.0
        mu.append(np.array([a[0] + nn, a[0] - nn]))
        pw.append(np.array([xb[0] + dot, xb[0] - dot]))
    for b, (o, r) in enumerate(zip(d.psd_off, d.psd_r, strict=True)):
        lo, hi = d.psd_ptr[b], d.psd_ptr[b + 1]
        rows, cols, sc = d.psd_rows[lo:hi], d.psd_cols[lo:hi], d.psd_scale[lo:hi]
        sl = slice(int(o), int(o) + int(hi - lo))
        hl += float(np.dot(lv[sl], x[sl]))
        M = np.zeros((r, r))
        XM = np.zeros((r, r))
        M[rows, cols] = lv[sl] / sc
        M[cols, rows] = lv[sl] / sc
        XM[rows, cols] = x[sl] / sc
        XM[cols, rows] = x[sl] / sc
        w, U = np.linalg.eigh(M)
        mu.append(w)
        pw.append(np.einsum("aj,ab,bj->j", U, XM, U))
    muv, pwv = np.concatenate(mu), np.concatenate(pw)
    mn = float(muv.min())
    acc = float(np.dot(pwv, np.exp(eta * (mn - muv))))
    ml = mn - math.log(max(acc, 1e-300)) / eta
    state[0] = delta + max(hl - ml, 0.0)
    y += lv
    np.multiply(d.log_r / state[0], y, out=ys)
