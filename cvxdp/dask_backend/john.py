"""The John ellipsoid's statistics on a Dask array (chunk-wise, then reduced).

Every data access of the John ellipsoid's iterations (:mod:`cvxdp.geometry.john.john_iter`,
:mod:`cvxdp.geometry.john.john_private`) is one of:

* the weighted Gram matrix ``A' W A = sum_b A_b' W_b A_b`` (a ``d x d`` sum over row blocks,
  reduced on the workers; the client receives ``d^2`` numbers);
* the leverage ratios ``h_i = ||L^{-1} a_i||^2`` with ``L L' = A' W A + ridge I``: a row-wise map,
  computed on the workers block by block (``L`` is sent with the task) and kept there;
* the largest support ratio ``max_i a_i' Q^{-1} a_i`` (a max over row blocks);
* the count of rows mapped into the public domain (``count_clipped=``; a sum).

The per-row weights ``w`` (n numbers, functions of released values only: public) live on the
workers as a Dask array with ``A``'s row blocks, persisted after every iteration so that the
task graph does not grow.  The private iteration's noise on ``h`` is one ``N(0, sigma_h^2)`` per
row; it is drawn on the client from the caller's generator, block after block in row order
(the same stream as the numpy path's ``gen.standard_normal(n)``), and sent to the workers: with
the same seed the released weights and ellipsoid equal the numpy path's up to the order of
additions in the Gram matrices.  The client therefore holds ``8 n`` bytes of noise per
iteration (public randomness, never data; ``1/d`` of the data's size).  Above
:data:`CLIENT_NOISE_ROWS` rows that traffic would dominate (8 GB per iteration at ``n = 1e9``):
each block then draws its own noise on its worker from a stream seeded by 128 bits of the
caller's generator and the (iteration, block) numbers, so the noise has the same law (iid
``N(0, sigma_h^2)`` per row, independent of the data) but not the numpy path's values.

Rows are mapped into the public domain (:func:`cvxdp.geometry.john.john_private.public_domain`) on
the workers, block by block, by the same function as the numpy path: mapping is row by row, so
the mapped matrix does not depend on the split.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import linalg

from cvxdp.dask_backend import as_row_blocks, block_sum, require_dask
from cvxdp.errors import UnsupportedProblemError
from cvxdp.geometry.john.core import check_shape, chol, clip_into_domain, iterations_for

#: Above this many rows the iteration's noise is drawn on the workers (same law, other draws):
#: at 1e7 rows the client-drawn noise (80 MB per iteration, shipped inside the task graph) held
#: the client at 3.1 GB peak RSS and tripled the time per iteration (bench_scale.py).
CLIENT_NOISE_ROWS = 1_000_000

__all__ = ["dask_matrix", "map_into_domain", "clipped_rows", "gram", "leverage_ratios",
           "support_ratios", "check_exact", "fixed_point_weights", "private_iterations",
           "uniform_weights"]


def dask_matrix(A: Any) -> Any:
    """``A`` as a float64 Dask array split by rows only; the public shape checks of
    :func:`cvxdp.geometry.john.exact.check_matrix` (2-D, ``n >= d >= 1``)."""
    check_shape(tuple(A.shape))
    return as_row_blocks(A)


def _map_block(block: np.ndarray, row_bound: float) -> np.ndarray:
    return clip_into_domain(block, row_bound)[0]


def _count_block(block: np.ndarray, row_bound: float) -> np.ndarray:
    return np.array([float(clip_into_domain(block, row_bound)[1])])


def map_into_domain(A: Any, row_bound: float) -> Any:
    """The rows of ``A`` mapped into ``{||a|| <= R}`` (lazy, on the workers)."""
    return A.map_blocks(_map_block, float(row_bound), dtype=np.float64)


def clipped_rows(A: Any, row_bound: float) -> int:
    """Rows changed by the mapping.  PRIVATE: release only through ``noisy_count``."""
    return int(round(block_sum(_count_block, A, 1, float(row_bound))[0]))


def _as_weights(A: Any, w: Any) -> Any:
    """``w`` as a Dask column ``(n, 1)`` with ``A``'s row blocks."""
    da = require_dask()
    if not hasattr(w, "chunks"):
        w = da.from_array(np.asarray(w, dtype=np.float64), chunks=(A.chunks[0],))
    elif w.chunks[0] != A.chunks[0]:
        w = w.rechunk((A.chunks[0],))
    return w[:, None]


def _gram_block(block: np.ndarray, wb: np.ndarray) -> np.ndarray:
    return ((block * wb).T @ block).ravel()


def gram(A: Any, w: Any, ridge: float = 0.0) -> np.ndarray:
    """:func:`cvxdp.geometry.john.john_iter.gram` of a Dask ``A``: ``sum_b A_b' W_b A_b`` reduced on
    the workers, then the ridge and the symmetrisation on the client, as the numpy path does."""
    d = int(A.shape[1])
    M = block_sum(_gram_block, A, d * d, _as_weights(A, w)).reshape(d, d)
    if ridge:
        M[np.diag_indices_from(M)] += ridge
    return (M + M.T) / 2


def _lev_block(block: np.ndarray, L: np.ndarray) -> np.ndarray:
    Y = linalg.solve_triangular(L, block.T, lower=True, check_finite=False)
    return np.einsum("ij,ij->j", Y, Y)


def leverage_ratios(A: Any, w: Any, ridge: float = 0.0) -> Any:
    """:func:`cvxdp.geometry.john.john_iter.leverage_ratios` of a Dask ``A``: one reduce for the
    Gram matrix, then a lazy row-wise map (a Dask array of ``n`` ratios with ``A``'s row blocks)."""
    L = chol(gram(A, w, ridge))
    return A.map_blocks(_lev_block, L, drop_axis=1, dtype=np.float64)


def _support_block(block: np.ndarray, Q: np.ndarray) -> np.ndarray:
    Y = np.linalg.solve(Q, block.T)
    return np.einsum("ij,ji->i", block, Y)


def support_ratios(Q: np.ndarray, A: Any) -> Any:
    """``a_i' Q^{-1} a_i`` for every row of a Dask ``A`` (lazy, row blocks of ``A``); its
    ``max()`` is a max-reduction on the workers."""
    return A.map_blocks(_support_block, np.asarray(Q, dtype=float), drop_axis=1,
                        dtype=np.float64)


def _finite_block(block: np.ndarray) -> np.ndarray:
    return np.array([float(np.count_nonzero(~np.isfinite(block)))])


def check_exact(A: Any) -> None:
    """:func:`cvxdp.geometry.john.exact.check_exact` on a Dask ``A`` (exact, NOT private methods):
    non-finite entries counted by a reduce; the rank from the reduced ``A'A`` (``d x d``)."""
    if block_sum(_finite_block, A, 1)[0] > 0:
        raise UnsupportedProblemError("A contains NaN or inf; clean the data first.")
    d = int(A.shape[1])
    M = gram(A, np.ones(int(A.shape[0])))
    if np.linalg.matrix_rank(M, hermitian=True) < d:
        raise UnsupportedProblemError(
            f"A must have full column rank d={d}, otherwise the polytope "
            "{x : |A x| <= 1} is unbounded and has no John ellipsoid; drop redundant columns.")


def uniform_weights(A: Any) -> Any:
    """The uniform weights ``d/n`` as a Dask array with ``A``'s row blocks, built on the
    workers (nothing of size ``n`` is made on the client)."""
    da = require_dask()
    n, d = (int(s) for s in A.shape)
    return da.full((n,), d / n, chunks=(A.chunks[0],), dtype=np.float64)


def fixed_point_weights(A: Any, accuracy: float = 0.01, iterations: int | None = None
                        ) -> tuple[Any, int]:
    """:func:`cvxdp.geometry.john.john_iter.fixed_point_weights` on a Dask ``A``: per iteration one
    Gram reduce and a row-wise map; ``w`` and the running sum persisted on the workers."""
    n, d = (int(s) for s in A.shape)
    T = iterations if iterations is not None else iterations_for(n, d, accuracy)
    w = uniform_weights(A).persist()
    total = None
    for _ in range(T):
        total = (w if total is None else total + w).persist()
        w = (w * leverage_ratios(A, w)).persist()
    return (total / T).persist(), T


def _noise_block(wb: np.ndarray, sigma: float, entropy: list[int], iteration: int,
                 block_id: tuple[int, ...] | None = None) -> np.ndarray:
    """``N(0, sigma^2)`` per row of this block, from the stream (entropy, iteration, block)."""
    assert block_id is not None
    gen = np.random.default_rng(np.random.SeedSequence(entropy,
                                                       spawn_key=(iteration, block_id[0])))
    return sigma * gen.standard_normal(len(wb))


def private_iterations(A: Any, T: int, ridge: float, sigma_h: float, w_min: float,
                       gen: np.random.Generator, *, release: Any) -> Any:
    """The private iteration of :func:`cvxdp.geometry.john.john_private.private_john` (step 4) on a
    Dask ``A``: returns ``u = mean(w_1..w_T)`` (a persisted Dask array).

    Per iteration the exact ratios ``h(w_k)`` are computed on the workers; the noise, one
    ``N(0, sigma_h^2)`` per row, is drawn here from ``gen`` in row order (the numpy path's draws)
    and added on the workers; ``w_{k+1} = clip(w_k max(htilde, 0), [w_min, 1])`` is
    post-processing of the released ``htilde``.  ``release``: the caller's
    :func:`~cvxdp.geometry.john.john_private.released`, through which every noisy output passes.
    """
    da = require_dask()
    n = int(A.shape[0])
    w = uniform_weights(A).persist()
    total = None
    on_workers = n > CLIENT_NOISE_ROWS
    entropy = [int(v) for v in gen.integers(0, 2**32, size=4)] if on_workers else None
    for it in range(T):
        total = (w if total is None else total + w).persist()
        if on_workers:
            noise = da.map_blocks(_noise_block, w, float(sigma_h), entropy, it,
                                  dtype=np.float64)
        else:
            noise = da.from_array(sigma_h * gen.standard_normal(n), chunks=(A.chunks[0],))
        h_noisy = release(leverage_ratios(A, w, ridge) + noise)
        w = da.clip(w * da.maximum(h_noisy, 0.0), w_min, 1.0).persist()
    return (total / T).persist()

