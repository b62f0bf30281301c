"""The SCMWU loop at its arithmetic cost: random draws batched ahead, one numpy call per step.

:func:`cvxdp.solvers.mwu.mwu.scmwu` runs here when its oracle is an
:class:`~cvxdp.solvers.mwu.oracles.ExponentialOracle` or
:class:`~cvxdp.solvers.mwu.oracles.ExactOracle` and its noise a :class:`RowGaussianNoise`
(the objects :mod:`cvxdp.solvers.mwu.private_scp` builds).  The rounds are run in blocks of
``B``; before each block the block's random numbers are drawn at once:

* ``B`` uniforms, ``rng.random(B)``: round ``t`` samples the exponential mechanism over the
  ``m`` rows by inversion from ``u_t`` (the first ``j`` with ``C_j > u_t C_m``, ``C`` the
  running sums of ``exp(l - max l)``, ``l = scale (G x - h)``): exactly the mechanism's law
  (McSherry & Talwar 2007), within :func:`~cvxdp.privacy.inversion_sampler.inversion_tv` of it
  in floating point; the MWU's record states that distance's delta
  (:func:`~cvxdp.privacy.inversion_sampler.inversion_float_delta`; the module has the proof);
* ``B x k_max`` standard normals, ``rng.standard_normal(size=(B, k_max))``: round ``t`` uses
  the first ``|supp(a_p)|`` of row ``t``, scaled by ``sigma_unit * D2_p`` (numpy's
  ``normal(0, s)`` is ``s`` times the same standard normal); the rest are discarded.

So every round makes one exponential-mechanism call over the ``m`` rows and one Gaussian draw
on the chosen row's private coordinates, with the same parameters as the one-round-at-a-time
loop (whose oracle samples by the same inversion): the privacy records (``count = T`` of each)
are unchanged; only the order in which the generator's stream is consumed differs.

Inside a block, the numpy backend makes about fifteen numpy calls per round (mat-vec, logits,
exp and cumulative sum of the mechanism, search, loss row, noise, exponential, normalisation),
with no Python objects built; the compiled backend (:mod:`cvxdp.solvers.mwu.loop_numba`,
orthant, second-order-cone and PSD blocks, optional ``numba`` extra) runs the whole block in
machine code on the same draws.  Both compute the same numbers up to the last bits (their
exps, and the dot products of small dense scores), see ``tests/solvers/mwu/test_mwu_loop.py``.

References
----------
Song, Xue and Zhang (2025), "Differential Privacy for Euclidean Jordan Algebra with Applications
to Private Symmetric Cone Programming": Algorithm 4 (SCMWU), Algorithm 5 (dual oracle),
Algorithm 1 (noisy losses), Lemma C.4 / C.8 (exponential-mechanism oracle), Lemma 4.2 (EJA
Gaussian mechanism).
McSherry & Talwar (2007), "Mechanism Design via Differential Privacy", FOCS (the exponential
mechanism).
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import islice
from typing import Any

import numpy as np
import scipy.sparse as sp

from cvxdp.progress import progress_bar
from cvxdp.solvers.mwu.loop_adaptive import ada_state, adaptive_round, adaptive_round_general
from cvxdp.solvers.mwu.loop_exp import PER_BLOCK_PSD, numpy_normexp, psd_layout
from cvxdp.solvers.mwu.loop_numba import compiled_block

__all__ = ["RowGaussianNoise", "LoopData", "prepare_loop", "run_numpy", "run_loop",
           "numba_available", "BLOCK_DRAWS"]

BLOCK_DRAWS = 1 << 19  # random numbers and iterates held per block (4 MiB of float64 each)
DENSE_ENTRIES = 1 << 22  # rows stored dense (BLAS mat-vec) up to this many entries ...
DENSE_FILL = 0.25  # ... when at least this share is non-zero (or the matrix is small)
SMALL_ENTRIES = 1 << 15
# Up to this many entries the compiled kernel computes the scores by its own column-order loop
# (on G transposed, vectorised over the rows) instead of a BLAS call: measured on 20 x 10 .. 1000
# x 15, the call's fixed cost dominates below about 2,000 entries (40 x 15: 0.11 vs 0.22 us).
LOOP_GEMV = 1 << 11


@dataclass(frozen=True)
class RowGaussianNoise:
    """Gaussian noise on the chosen row's private coordinates, in dual coordinates.

    Calling it draws ``nu ~ N(0, (sigma_unit * d2[p])^2)`` on the coordinates ``support[p]``
    (phi-coordinates) and maps it to dual coordinates (``g = phi_scale * nu``): the EJA
    Gaussian mechanism restricted to the coordinates that can differ between neighbours.  The
    batched loop draws the same normals a block at a time.

    Attributes
    ----------
    support : scipy.sparse.csr_matrix (m, k)
        Where each row can change (its pattern is what is used).
    d2 : ndarray (m,)
        l2 sensitivity of each row (phi-coordinates).
    sigma_unit : float
        Gaussian standard deviation per unit of l2 sensitivity.
    phi_scale : ndarray (k,)
        The isometry's scale per coordinate (sqrt 2 on spin factors, 1 elsewhere).
    """

    support: sp.csr_matrix
    d2: np.ndarray
    sigma_unit: float
    phi_scale: np.ndarray

    def __call__(self, p: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        S = self.support
        idx = S.indices[S.indptr[p]:S.indptr[p + 1]]
        if idx.size == 0:
            return idx, np.zeros(0)
        return idx, rng.normal(0.0, self.sigma_unit * self.d2[p], size=idx.size) * \
            self.phi_scale[idx]


@dataclass
class LoopData:
    """Everything the loop reads, precomputed once (public structure and the private rows).

    ``Gs`` holds ``scale * G`` (dense when small or filled, else CSR arrays), ``hs`` is
    ``scale * h``; ``Y*`` the loss rows in the exponent's coordinates (``step * g / gram``);
    ``N*`` the noise weights ``step * sigma_unit * d2_p * phi_scale / gram`` on each row's
    private support (CSR arrays), ``kmax`` the largest support.
    """

    m: int
    k: int
    dense: bool
    Gd: np.ndarray            # (m, k) scale * G when dense, else (0, 0)
    Gt: np.ndarray            # (k, m) its transpose when dense and small (LOOP_GEMV), else (0, 0)
    Gptr: np.ndarray
    Gidx: np.ndarray
    Gval: np.ndarray          # CSR of scale * G when sparse
    G_csr: Any                # scipy CSR of scale * G (numpy backend, sparse)
    hs: np.ndarray
    Yd: np.ndarray            # (m, k) dense loss rows, or (0, 0)
    Yptr: np.ndarray
    Yidx: np.ndarray
    Yval: np.ndarray
    noisy: bool
    Nptr: np.ndarray
    Nidx: np.ndarray
    Nval: np.ndarray
    Nstart: np.ndarray        # first index of a row's support when contiguous, else -1
    kmax: int
    gumbel: bool              # the exponential mechanism (sampled by inversion), else argmax
    x0: np.ndarray
    n0: int                   # orthant block size
    soc_off: np.ndarray
    soc_size: np.ndarray
    has_psd: bool
    psd_off: np.ndarray       # PSD blocks: offset, order, start of their svec index arrays
    psd_r: np.ndarray
    psd_ptr: np.ndarray
    psd_rows: np.ndarray      # svec coordinate -> (row, col) of the block, and its scale
    psd_cols: np.ndarray
    psd_scale: np.ndarray
    ada: bool = False         # AdaHedge step (orthant algebras only; see adaptive_round)
    log_r: float = 0.0        # ln of the rank (AdaHedge's eta = ln r / Delta)


def _use_dense(m: int, k: int, nnz: int) -> bool:
    size = m * k
    return size <= SMALL_ENTRIES or (size <= DENSE_ENTRIES and nnz >= DENSE_FILL * size)


def prepare_loop(G: sp.csr_matrix, h: np.ndarray, algebra: Any, *, step: float, scale: float,
                 gumbel: bool, noise: RowGaussianNoise | None,
                 adaptive: bool = False) -> LoopData:
    """Precompute the loop's arrays (see :class:`LoopData`); ``scale`` multiplies the scores
    (the exponential mechanism's ``epsilon / (2 Delta)``, 1 for the exact oracle); ``gumbel``
    selects the exponential mechanism (sampled by inversion, see the module doc) over the argmax;
    ``adaptive`` runs AdaHedge's step (:func:`adaptive_round`, :func:`adaptive_round_general`)."""
    G = sp.csr_matrix(G, dtype=float)
    G.sort_indices()
    m, k = G.shape
    inv_gram = 1.0 / algebra.gram
    dense = _use_dense(m, k, G.nnz)
    Gs = (G * scale).tocsr()
    Yc = sp.csr_matrix(G.multiply(step * inv_gram[None, :]))
    Yc.sort_indices()
    empty2 = np.zeros((0, 0))
    if dense:
        Gd, Yd = np.ascontiguousarray(Gs.toarray()), np.ascontiguousarray(Yc.toarray())
    else:
        Gd, Yd = empty2, empty2
    if noise is not None:
        S = sp.csr_matrix(noise.support, dtype=float, copy=True)
        S.sort_indices()
        S.data[:] = 1.0
        w = step * noise.sigma_unit * noise.phi_scale * inv_gram
        Nc = sp.csr_matrix((np.repeat(noise.d2, np.diff(S.indptr)) * w[S.indices] *
                            S.data, S.indices, S.indptr), shape=S.shape)
        Nptr, Nidx, Nval = Nc.indptr.astype(np.int64), Nc.indices.astype(np.int64), Nc.data
        lens = np.diff(Nptr)
        kmax = int(lens.max()) if m else 0
        first = Nidx[np.minimum(Nptr[:-1], max(len(Nidx) - 1, 0))] if len(Nidx) else \
            np.zeros(m, dtype=np.int64)
        last = Nidx[np.maximum(Nptr[1:] - 1, 0)] if len(Nidx) else np.zeros(m, dtype=np.int64)
        Nstart = np.where((lens > 0) & (last - first == lens - 1), first, -1).astype(np.int64)
    else:
        Nptr = np.zeros(m + 1, dtype=np.int64)
        Nidx, Nval = np.zeros(0, dtype=np.int64), np.zeros(0)
        Nstart, kmax = np.full(m, -1, dtype=np.int64), 0
    return LoopData(
        m=m, k=k, dense=dense, Gd=Gd,
        Gt=np.ascontiguousarray(Gd.T) if dense and m * k <= LOOP_GEMV else empty2,
        Gptr=Gs.indptr.astype(np.int64), Gidx=Gs.indices.astype(np.int64), Gval=Gs.data, G_csr=Gs,
        hs=np.asarray(h, dtype=float) * scale, Yd=Yd, Yptr=Yc.indptr.astype(np.int64),
        Yidx=Yc.indices.astype(np.int64), Yval=Yc.data, noisy=noise is not None and kmax > 0,
        Nptr=Nptr, Nidx=Nidx, Nval=Nval, Nstart=Nstart, kmax=kmax, gumbel=gumbel,
        x0=algebra.identity() / algebra.rank, n0=int(algebra.nonneg),
        soc_off=np.asarray(algebra._soc_off, dtype=np.int64),
        soc_size=np.asarray(algebra.soc, dtype=np.int64), has_psd=bool(algebra.psd),
        **psd_layout(algebra), ada=bool(adaptive), log_r=math.log(max(algebra.rank, 2)))


def block_size(d: LoopData, iterations: int) -> int:
    """Rounds per block: the block's draws and iterates fit in :data:`BLOCK_DRAWS` numbers."""
    per_round = (1 if d.gumbel else 0) + (d.kmax if d.noisy else 0) + d.k
    return int(max(1, min(iterations, 4096, BLOCK_DRAWS // max(per_round, 1))))


def block_starts(T: int, B: int, verbose: bool) -> Iterator[int]:
    """The first round of each block; with ``verbose`` a progress bar over the T rounds
    (:func:`cvxdp.progress.progress_bar`) advanced once per block, after the block has run."""
    if not verbose:
        yield from range(0, T, B)
        return
    bar = iter(progress_bar(range(T), desc="SCMWU", verbose=True))
    for t0 in range(0, T, B):
        yield t0
        deque(islice(bar, min(B, T - t0)), maxlen=0)
    next(bar, None)  # let the bar print its last line and close


def draw_block(d: LoopData, nb: int, rng: np.random.Generator,
               buffers: tuple[np.ndarray, np.ndarray] | None = None
               ) -> tuple[np.ndarray, np.ndarray]:
    """The block's draws: one uniform per round (``nb``; the exponential mechanism's inversion)
    and standard normals (``nb x kmax``), one generator call each, uniforms first.  With
    ``buffers`` (``(B,)`` and ``(B, kmax)`` arrays, ``B >= nb``) they are drawn into them: the
    same numbers, without fresh memory every block."""
    if buffers is None:
        buffers = (np.empty(nb), np.empty((nb, d.kmax)))
    U = buffers[0][:nb] if d.gumbel else np.zeros(0)
    Z = buffers[1][:nb] if d.noisy else np.zeros((nb, 0))
    if d.gumbel:
        rng.random(out=U)
    if d.noisy:
        rng.standard_normal(out=Z)
    return U, Z


def _draw_buffers(d: LoopData, B: int) -> tuple[np.ndarray, np.ndarray]:
    return np.empty(B if d.gumbel else 0), np.empty((B, d.kmax) if d.noisy else (0, 0))


def _buffers(d: LoopData, T: int) -> tuple[int, np.ndarray, np.ndarray, np.ndarray,
                                           np.ndarray, np.ndarray, np.ndarray]:
    """The block size and the loop's state: cumulative loss ``y``, ``sum_t x^t``, the chosen
    counts, the block's iterates ``X`` (row 0: the current one), scores ``s``, picks ``P``."""
    B = block_size(d, T)
    X = np.empty((B + 1, d.k))
    X[0] = d.x0
    return (B, np.zeros(d.k), np.zeros(d.k), np.zeros(d.m, dtype=np.int64), X,
            np.empty(d.m), np.empty(B, dtype=np.int64))


Checkpoint = Callable[[int, int, np.ndarray, float], bool]


def run_numpy(d: LoopData, iterations: int, rng: np.random.Generator, algebra: Any, *,
              verbose: bool = False, checkpoint: Checkpoint | None = None
              ) -> tuple[np.ndarray, np.ndarray, int, float, np.ndarray]:
    """Run up to ``iterations`` rounds with numpy; returns ``(sum_t x^t, chosen counts, rounds
    run, AdaHedge's Delta, y)``, ``y`` the cumulative loss in the exponent's coordinates (the
    chosen rows and their noise, ``step / gram`` times the dual coordinates).  After each block
    ``checkpoint(rounds so far, T, sum_t x^t, Delta)`` may end the run."""
    T = int(iterations)
    m = d.m
    normexp = numpy_normexp(d, algebra)
    B, y, xsum, chosen, X, s, P = _buffers(d, T)
    bufs = _draw_buffers(d, B)
    Gd, Gc, Yd, Yptr, Yidx, Yval = d.Gd, d.G_csr, d.Yd, d.Yptr, d.Yidx, d.Yval
    Nptr, Nidx, Nval, Nstart = d.Nptr, d.Nidx, d.Nval, d.Nstart
    dense, noisy, hs, mech = d.dense, d.noisy, d.hs, d.gumbel
    state = ada_state(d)  # AdaHedge's cumulative mixability gap Delta
    lv = np.zeros(d.k)
    ys = np.zeros(d.k)
    orthant = not len(d.soc_off) and not len(d.psd_off)
    # per-row scalars as Python ints (numpy scalar indexing costs more than the arithmetic)
    nlo, nhi, nst = Nptr[:-1].tolist(), Nptr[1:].tolist(), Nstart.tolist()
    ada = d.ada
    for t0 in block_starts(T, B, verbose):
        nb = min(B, T - t0)
        U, Z = draw_block(d, nb, rng, bufs)
        Ul = U.tolist()
        for j in range(nb):
            x = X[j]
            if dense:
                np.dot(Gd, x, out=s)
            else:
                s = Gc @ x
            s -= hs  # the logits scale * (G x - h)
            p = s.argmax()
            if mech:  # exponential mechanism by inversion (exponential_inversion's arithmetic)
                s -= s[p]
                np.exp(s, out=s)
                np.add.accumulate(s, out=s)  # = np.cumsum (sequential), with less overhead
                p = s.searchsorted(Ul[j] * s[-1], "right")  # inversion_index
            P[j] = p
            if ada and orthant:
                adaptive_round(d, p, x, Z[j], y, lv, state, X[j + 1])
                continue
            if ada:
                adaptive_round_general(d, p, x, Z[j], y, lv, state, ys)
                normexp(ys, X[j + 1])
                continue
            if dense:
                y += Yd[p]
            else:
                lo, hi = Yptr[p], Yptr[p + 1]
                y[Yidx[lo:hi]] += Yval[lo:hi]
            if noisy:
                lo, hi = nlo[p], nhi[p]
                if hi > lo:
                    v = Nval[lo:hi] * Z[j, :hi - lo]
                    c = nst[p]
                    if c >= 0:
                        y[c:c + hi - lo] += v
                    else:
                        y[Nidx[lo:hi]] += v
            normexp(y, X[j + 1])
        xsum += X[:nb].sum(axis=0)
        chosen += np.bincount(P[:nb], minlength=m)
        X[0] = X[nb]
        if checkpoint is not None and t0 + nb < T and checkpoint(t0 + nb, T, xsum, float(state[0])):
            return xsum, chosen, t0 + nb, float(state[0]), y
    return xsum, chosen, T, float(state[0]), y


def run_numba(d: LoopData, iterations: int, rng: np.random.Generator, *,
              verbose: bool = False, checkpoint: Checkpoint | None = None
              ) -> tuple[np.ndarray, np.ndarray, int, float, np.ndarray]:
    """:func:`run_numpy` with each block run by the compiled kernel (same draws, same order).

    The kernel keeps two iterates (the current one and the next) and adds ``sum_t x^t`` and the
    chosen counts itself, instead of writing a block of iterates for numpy to sum."""
    block = compiled_block()
    T = int(iterations)
    B = block_size(d, T)
    X = np.empty((2, d.k))
    X[0] = d.x0
    y, xsum, chosen, s = np.zeros(d.k), np.zeros(d.k), np.zeros(d.m, dtype=np.int64), np.empty(d.m)
    bufs = _draw_buffers(d, B)
    state = ada_state(d)
    lv = np.zeros(d.k)
    ys = np.zeros(d.k)
    for t0 in block_starts(T, B, verbose):
        nb = min(B, T - t0)
        U, Z = draw_block(d, nb, rng, bufs)
        block(nb, X, y, chosen, xsum, d.gumbel, d.hs, U, Z, d.dense, d.Gd, d.Gt, d.Gptr, d.Gidx,
              d.Gval, d.Yd, d.Yptr, d.Yidx, d.Yval, d.noisy, d.Nptr, d.Nidx, d.Nval, d.Nstart,
              d.n0, d.soc_off, d.soc_size, d.psd_off, d.psd_r, d.psd_ptr, d.psd_rows,
              d.psd_cols, d.psd_scale, s, d.ada, d.log_r, state, lv, ys)
        if checkpoint is not None and t0 + nb < T and checkpoint(t0 + nb, T, xsum, float(state[0])):
            return xsum, chosen, t0 + nb, float(state[0]), y
    return xsum, chosen, T, float(state[0]), y


def numba_available() -> bool:
    """True when the optional ``numba`` extra can be imported."""
    try:
        import numba  # noqa: F401  (optional extra: pip install 'cvxdp[fast]')
    except ImportError:
        return False
    return True


def choose_backend(backend: str, d: LoopData, iterations: int) -> str:
    """``"numba"`` or ``"numpy"`` for ``backend`` in ``("auto", "numba", "numpy")``.

    ``auto`` compiles when numba is installed and the loop is long enough to repay numba's
    import and cached-kernel load (0.3-0.6 s once per process; the first compilation after
    installing, about 6 s, is cached on disk): at least 50,000 rounds, or more than ``2e7``
    multiply-adds over the run (mat-vec, plus ``9 r^3 + 2^12`` per PSD block and round).  More
    than :data:`~cvxdp.solvers.mwu.loop_exp.PER_BLOCK_PSD` PSD blocks stay in numpy (batched
    ``eigh``).
    """
    if backend not in ("auto", "numba", "numpy"):
        raise ValueError(f"backend must be 'auto', 'numba' or 'numpy', got {backend!r}.")
    if backend == "numpy" or len(d.psd_off) > PER_BLOCK_PSD:
        return "numpy"
    if backend == "numba":
        return "numba"
    per_round = (d.m * d.k if d.dense else len(d.Gval) + d.m) + int(
        np.sum(9 * d.psd_r**3 + 2**12))
    work = iterations * per_round
    return "numba" if (iterations >= 50000 or work > 2e7) and numba_available() else "numpy"


def run_loop(d: LoopData, iterations: int, rng: np.random.Generator, algebra: Any, *,
             backend: str = "auto", verbose: bool = False,
             checkpoint: Checkpoint | None = None
             ) -> tuple[np.ndarray, np.ndarray, str, int, float, np.ndarray]:
    """Run the loop on the chosen backend: ``(sum_t x^t, chosen counts, backend used, rounds
    run, AdaHedge's Delta, cumulative loss y)`` (see :func:`run_numpy`); ``checkpoint`` may end
    it early."""
    used = choose_backend(backend, d, iterations)
    if used == "numba":
        out = run_numba(d, iterations, rng, verbose=verbose, checkpoint=checkpoint)
    else:
        out = run_numpy(d, iterations, rng, algebra, verbose=verbose, checkpoint=checkpoint)
    xsum, chosen, done, delta, y = out
    return xsum, chosen, used, done, delta, y
