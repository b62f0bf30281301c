"""Symmetric-cone multiplicative weights (SCMWU) with a dual oracle: the non-private core.

The MWU form solved here is the feasibility problem

    find  x in K,  tr x = 1,  <a_i, x> <= h_i   (i = 1..m)

over a direct product ``K`` of orthant, spin-factor (second-order cone) and symmetric-matrix
(PSD) blocks.  Elements are stored in the coordinates CVXPY/SCS use for cone rows (raw ``(t, x)``
for a second-order cone, scaled lower-triangular svec for PSD blocks); constraints are given in
*dual coordinates*: a row ``g_i`` with ``<a_i, x> = g_i . x`` (plain dot product), i.e.
``g_i = gram * a_i`` with ``gram = 2`` on spin-factor coordinates and 1 elsewhere (Song, Xue &
Zhang 2025, Def 3.3).  Everything algebraic goes through an algebra object with ``rank``,
``dim``, ``gram``, ``identity()``, ``trace(x)`` and ``normalized_exp(y) = exp(-y) / tr exp(-y)``.

References
----------
Song, Xue & Zhang (2025), Algorithm 4 (SCMWU), Definition A.4, Theorem A.5 (regret),
Algorithm 5 and Theorem C.2 (feasibility with a dual oracle), Algorithm 1 (noisy losses).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp

from cvxdp.jordan import Product, svec_indices
from cvxdp.progress import progress_bar
from cvxdp.solvers.mwu.loop import RowGaussianNoise, prepare_loop, run_loop
from cvxdp.solvers.mwu.oracles import ExactOracle, ExponentialOracle

__all__ = ["BlockAlgebra", "MWUResult", "scmwu"]


def _jordan_product(nonneg: int, soc: tuple[int, ...], psd: tuple[int, ...]) -> Any:
    """The same algebra as a :class:`cvxdp.jordan.Product` (None for an empty cone)."""
    if not (nonneg or soc or psd):
        return None
    return Product.from_cone_dims(nonneg, soc, psd)


class BlockAlgebra:
    """Direct product R^n x L^{q_1} x ... x S^{r_1} x ... in SCS storage coordinates.

    A small self-contained adapter (the project's :mod:`cvxdp.jordan` offers the same algebra);
    it implements exactly what the MWU needs, batched over equal-size PSD blocks.

    Parameters
    ----------
    nonneg : int
        Size of the orthant block.
    soc : sequence of int
        Sizes ``q`` of the spin-factor blocks (stored raw as ``(t, x)``, ``q = 1 + len(x)``).
    psd : sequence of int
        Orders ``r`` of the symmetric-matrix blocks (``r (r + 1) / 2`` svec coordinates each).
    """

    def __init__(self, nonneg: int = 0, soc: tuple[int, ...] = (), psd: tuple[int, ...] = ()):
        self.nonneg = int(nonneg)
        self.soc = tuple(int(q) for q in soc)
        self.psd = tuple(int(r) for r in psd)
        if any(q < 2 for q in self.soc):
            raise ValueError("second-order cone blocks need size >= 2.")
        off = self.nonneg
        self._soc_off = []
        for q in self.soc:
            self._soc_off.append(off)
            off += q
        self._psd_off = []
        for r in self.psd:
            self._psd_off.append(off)
            off += r * (r + 1) // 2
        self.dim = off
        self.rank = self.nonneg + 2 * len(self.soc) + sum(self.psd)
        gram = np.ones(self.dim)
        for o, q in zip(self._soc_off, self.soc, strict=True):
            gram[o:o + q] = 2.0
        self.gram = gram
        self.phi_scale = np.sqrt(gram)  # phi(x) = phi_scale * x (sqrt 2 on spin factors)
        # group equal-order PSD blocks for batched eigh
        self._psd_groups: dict[int, np.ndarray] = {}
        for o, r in zip(self._psd_off, self.psd, strict=True):
            self._psd_groups.setdefault(r, []).append(o)  # type: ignore[arg-type]
        self._svec = {r: svec_indices(r) for r in set(self.psd)}
        self._psd_groups = {r: np.asarray(v) for r, v in self._psd_groups.items()}
        self.blocks = ([("nonneg", self.nonneg)] if self.nonneg else []) + [
            ("soc", q) for q in self.soc] + [("psd", r) for r in self.psd]

    def __repr__(self) -> str:
        return f"BlockAlgebra(nonneg={self.nonneg}, soc={self.soc}, psd={self.psd})"

    @functools.cached_property
    def jordan(self) -> Any:
        """The same algebra as a :class:`cvxdp.jordan.Product` (None for an empty cone), built
        on first use: only the MWU's iterations read it, and building one object per block
        took 0.1 s over the 1,560 cones of a 40 x 40 image's total variation in the MWU form
        that ``mechanism="auto"`` builds for its prediction only."""
        return _jordan_product(self.nonneg, self.soc, self.psd)

    # -- basic operations ------------------------------------------------------------------
    def identity(self) -> np.ndarray:
        e = np.zeros(self.dim)
        e[:self.nonneg] = 1.0
        for o in self._soc_off:
            e[o] = 1.0
        for r, offs in self._psd_groups.items():
            rows, cols, _ = self._svec[r]
            diag = np.flatnonzero(rows == cols)
            for o in offs:
                e[o + diag] = 1.0
        return e

    def trace(self, x: np.ndarray) -> float:
        return float(np.dot(self.identity(), self.gram * x)) if self.dim else 0.0

    def inner(self, a: np.ndarray, x: np.ndarray) -> float:
        return float(np.dot(self.gram * a, x))

    def _smat(self, v: np.ndarray, r: int) -> np.ndarray:
        """Batched svec -> symmetric matrix; ``v`` has shape (B, r(r+1)/2)."""
        rows, cols, scale = self._svec[r]
        M = np.zeros((v.shape[0], r, r))
        M[:, rows, cols] = v / scale
        M[:, cols, rows] = v / scale
        return M

    def _svec_of(self, M: np.ndarray, r: int) -> np.ndarray:
        rows, cols, scale = self._svec[r]
        return M[:, rows, cols] * scale

    def eigenvalues(self, x: np.ndarray) -> np.ndarray:
        """All eigenvalues (orthant entries, ``t +- |x|`` per spin factor, matrix spectra)."""
        out = [x[:self.nonneg]]
        for o, q in zip(self._soc_off, self.soc, strict=True):
            nrm = np.linalg.norm(x[o + 1:o + q])
            out.append(np.array([x[o] + nrm, x[o] - nrm]))
        for r, offs in self._psd_groups.items():
            k = r * (r + 1) // 2
            V = np.stack([x[o:o + k] for o in offs])
            out.append(np.linalg.eigvalsh(self._smat(V, r)).ravel())
        return np.concatenate(out) if out else np.zeros(0)

    def norm_inf(self, x: np.ndarray) -> float:
        """Spectral norm ``max |lambda_i(x)|``."""
        lam = self.eigenvalues(x)
        return float(np.max(np.abs(lam))) if lam.size else 0.0

    def normalized_exp(self, y: np.ndarray) -> np.ndarray:
        """``exp(-y) / tr exp(-y)``, shifted by the global smallest eigenvalue for stability.

        Delegates to :meth:`cvxdp.jordan.Product.normalized_exp` (the project's one
        implementation of the algebra) when available; the code below is the fallback.
        """
        if self.jordan is not None:
            return self.jordan.normalized_exp(y)
        out = np.empty(self.dim)
        parts: list[tuple[str, Any]] = []
        lam_min = math.inf
        if self.nonneg:
            lam_min = min(lam_min, float(np.min(y[:self.nonneg])))
        socs = []
        for o, q in zip(self._soc_off, self.soc, strict=True):
            xb = y[o + 1:o + q]
            nrm = float(np.linalg.norm(xb))
            u = xb / nrm if nrm > 0 else np.zeros(q - 1)
            socs.append((o, q, y[o] + nrm, y[o] - nrm, u))
            lam_min = min(lam_min, y[o] - nrm)
        for r, offs in self._psd_groups.items():
            k = r * (r + 1) // 2
            V = np.stack([y[o:o + k] for o in offs])
            w, U = np.linalg.eigh(self._smat(V, r))
            parts.append((r, offs, w, U))
            lam_min = min(lam_min, float(w.min()))
        total = 0.0
        if self.nonneg:
            v = np.exp(-(y[:self.nonneg] - lam_min))
            out[:self.nonneg] = v
            total += float(v.sum())
        for o, q, lp, lm, u in socs:
            ep, em = math.exp(-(lp - lam_min)), math.exp(-(lm - lam_min))
            # exp = ep q+ + em q-,  q+- = (1, +-u)/2 ; trace(q+-) = 1
            out[o] = 0.5 * (ep + em)
            out[o + 1:o + q] = 0.5 * (ep - em) * u
            total += ep + em
        for r, offs, w, U in parts:
            k = r * (r + 1) // 2
            ew = np.exp(-(w - lam_min))
            M = (U * ew[:, None, :]) @ np.swapaxes(U, 1, 2)
            V = self._svec_of(M, r)
            for i, o in enumerate(offs):
                out[o:o + k] = V[i]
            total += float(ew.sum())
        return out / total


@dataclass
class MWUResult:
    """Output of :func:`scmwu`.

    Attributes
    ----------
    x : ndarray
        The average iterate ``(1/T) sum_t x^t`` (a distribution: in K, trace 1).
    iterations : int
    chosen : ndarray of int
        How often each constraint was returned by the oracle.
    info : dict
        ``backend``, ``step``, AdaHedge's ``delta`` and ``loss_sum``: ``sum_t (a_{p_t} +
        z_t)`` in dual coordinates, the rows the oracle chose plus their noise (released; the
        dual bound of :mod:`cvxdp.solvers.mwu.dual_bound` reads it).
    """

    x: np.ndarray
    iterations: int
    chosen: np.ndarray
    info: dict[str, Any] = field(default_factory=dict)


Oracle = Callable[[np.ndarray, np.random.Generator], int]
Noise = Callable[[int, np.random.Generator], tuple[np.ndarray, np.ndarray]]


def scmwu(
    G: sp.csr_matrix,
    h: np.ndarray,
    algebra: Any,
    *,
    eta: float,
    iterations: int,
    oracle: Oracle,
    rng: np.random.Generator,
    loss_scale: float = 1.0,
    noise: Noise | None = None,
    verbose: bool = False,
    backend: str = "auto",
    adaptive: bool = False,
    checkpoint: Callable[[int, int, np.ndarray, float], bool] | None = None,
) -> MWUResult:
    """Run SCMWU with a dual oracle (Alg 5), optionally with noisy losses (Alg 1).

    Parameters
    ----------
    G : scipy.sparse.csr_matrix, shape (m, k)
        Constraint rows in dual coordinates (``<a_i, x> = G[i] @ x``), already divided by the
        width so that ``||a_i||_inf <= 1``.
    h : ndarray, shape (m,)
        Right-hand sides (same scaling).
    algebra : BlockAlgebra or a :mod:`cvxdp.jordan` algebra with the same methods
    eta : float
        Step size (``0 < eta <= 1`` for Theorem A.5).
    iterations : int
        T.
    oracle : callable ``(scores, rng) -> index``
        The dual oracle on the scores ``G x - h`` (exact argmax or exponential mechanism).
    rng : numpy.random.Generator
    loss_scale : float
        The loss is ``loss_scale * (a_p + z)``: 1 in Alg 5, 1/2 in Alg 1.
    noise : callable ``(p, rng) -> (indices, values)``, optional
        Noise added (in dual coordinates) to the chosen row before it enters the loss (Alg 1,
        line 9-11).  The loss is released; the row itself never is.
    verbose : bool
        Show a progress bar (:func:`cvxdp.progress.progress_bar`: tqdm when installed, plain
        lines otherwise; it stays on screen).
    backend : {"auto", "numba", "numpy", "python"}
        How the rounds run.  With the oracles of :mod:`cvxdp.solvers.mwu.oracles`, the noise
        of :class:`cvxdp.solvers.mwu.loop.RowGaussianNoise` (or none) and a
        :class:`BlockAlgebra`, the random draws are made a block of rounds at a time
        (:mod:`cvxdp.solvers.mwu.loop`) and the block runs in numpy or, with the optional
        ``numba`` extra, compiled (``"auto"`` compiles long runs; both give the same numbers for
        the same generator; algebras with more than 8 PSD blocks stay in numpy).  Any other
        oracle or noise callable, or ``"python"``, runs the round-at-a-time loop below.
    adaptive : bool
        AdaHedge's step ``eta_t = ln r / Delta_{t-1}`` (``Delta`` the cumulative mixability
        gap) instead of the fixed ``eta`` (orthant algebras, batched backends only; ``eta``
        is then ignored: the iterates do not depend on the loss's scale).  Regret at most
        ``S sqrt(T ln r) + 2 S`` for losses of range ``S`` (docs/mwu.md).
    checkpoint : callable ``(t, T, sum_{s<=t} x^s, Delta_t) -> bool``, optional
        Called after each block of rounds (batched backends; ``Delta_t`` AdaHedge's cumulative
        gap, 0 with the fixed step); returning True ends the run there, and the result is the
        average of the ``t`` iterates so far (``info["delta"]``: Delta at the end).

    Returns
    -------
    MWUResult

    References
    ----------
    Song, Xue & Zhang (2025), "Differential Privacy for Euclidean Jordan Algebra with
    Applications to Private Symmetric Cone Programming":
    Algorithm 4 (cumulative-loss SCMWU, Def A.4), Algorithm 5 /
    Theorem C.2, Algorithm 1 (noisy losses, Theorem C.9).
    """
    G = sp.csr_matrix(G)
    m, k = G.shape
    h = np.asarray(h, dtype=float)
    step = float(eta) * float(loss_scale)
    batched = (isinstance(oracle, ExactOracle | ExponentialOracle)
               and (noise is None or isinstance(noise, RowGaussianNoise))
               and isinstance(algebra, BlockAlgebra))
    if (adaptive or checkpoint is not None) and (backend == "python" or not batched):
        raise ValueError("adaptive= and checkpoint= need a batched backend (the oracles of "
                         "cvxdp.solvers.mwu.oracles, RowGaussianNoise, a BlockAlgebra).")
    if backend != "python" and batched:
        d = prepare_loop(G, h, algebra, step=step,
                         scale=oracle.scale if isinstance(oracle, ExponentialOracle) else 1.0,
                         gumbel=isinstance(oracle, ExponentialOracle), noise=noise,
                         adaptive=adaptive)
        xsum, chosen, used, done, delta, y = run_loop(d, int(iterations), rng, algebra,
                                                   backend=backend, verbose=verbose,
                                                   checkpoint=checkpoint)
        T = max(int(done), 1)
        return MWUResult(x=xsum / T, iterations=int(done), chosen=chosen,
                         info={"backend": used, "delta": delta if adaptive else None,
                               "step": step, "loss_sum": y * algebra.gram / step})
    if backend not in ("auto", "python"):
        raise ValueError(f"backend={backend!r} needs the oracles of cvxdp.solvers.mwu.oracles, "
                         "RowGaussianNoise (or no noise) and a BlockAlgebra; use 'python'.")
    indptr, indices, data = G.indptr, G.indices, G.data
    Lg = np.zeros(k)  # cumulative eta * loss, in dual coordinates
    inv_gram = 1.0 / algebra.gram
    x = algebra.identity() / algebra.rank
    xsum = np.zeros(k)
    chosen = np.zeros(m, dtype=np.int64)
    # verbose: tqdm's bar, or a plain line every 10% without tqdm; left on screen.
    rounds: Any = progress_bar(range(int(iterations)), desc="SCMWU", verbose=verbose)
    for _ in rounds:
        xsum += x
        p = oracle(G @ x - h, rng)
        chosen[p] += 1
        lo, hi = indptr[p], indptr[p + 1]
        Lg[indices[lo:hi]] += step * data[lo:hi]
        if noise is not None:
            idx, val = noise(p, rng)
            Lg[idx] += step * val
        x = algebra.normalized_exp(Lg * inv_gram)
    T = max(int(iterations), 1)
    return MWUResult(x=xsum / T, iterations=int(iterations), chosen=chosen,
                     info={"backend": "python", "loss_sum": Lg / step})
