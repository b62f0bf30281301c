"""The bounded Gaussian estimator's statistics on a Dask array (chunk-wise, then reduced).

``private_gaussian(X, bounds=...)`` (:func:`cvxdp.estimation.gaussian_bounded.bounded_release`)
reads its data through

* the count of rows mapped into the public domain and clipped into the bounds (opt-in
  ``count_clipped=``; sums of per-block counts);
* the mean of the clipped records about the bounds' centre (a ``d``-vector sum);
* either the second moment about the centre (a ``d x d`` sum), or, per CoinPress round, the
  second moment ``w^T w`` of the pair differences ``z_i = (x_i - x_{h+i}) / sqrt 2`` whitened
  by the current public bound ``L`` and clipped at ``sqrt(T)`` (a ``d x d`` sum).

Each is computed block by block on the workers with the numpy path's own per-row functions
(:func:`cvxdp.estimation.gaussians.public_domain`, ``Box.clip`` / ``Ball.clip``,
:func:`cvxdp.estimation.rows.clip_rows`) and reduced there; the client receives
``d`` or ``d^2`` numbers per reduction and adds the noise from the caller's generator in the
numpy path's order, so with the same seed the release equals the numpy path's up to the order of
additions.  Pairing row ``i`` with row ``h + i`` is done by Dask on the workers (the two halves'
blocks are aligned there; nothing reaches the client).

Without ``bounds=`` the range-finding pipeline (:func:`cvxdp.estimation.gaussians.private_gaussian`,
methods ``"practical"`` and ``"preconditioned"``) runs here too.  The one random permutation of
the rows (:mod:`cvxdp.estimation.row_partition`, public, data independent) is applied on the
workers: above one tile (``TILE`` rows) it is drawn tile by tile (per-tile seeds and block counts
on the client, each tile's permutation on its worker, :func:`dask_tiled_blocks`), so not even the
n row indices reach the client; up to one tile, ``x[perm]`` with the n indices drawn on the
client (at most ``TILE`` of them).  Every block holds exactly the rows it holds in the numpy
path.  Each
step then reads its block through a reduce: the log-scale and grid histograms' cell counts
(:func:`dask_column_counts`, :func:`dask_cell_counts`), the clipped sums of the mean rounds
(:func:`dask_clipped_sum`), the CoinPress second moments (:func:`pair_moment`).  The
subsample-and-aggregate steps (Alg. 2's block projectors, the orthogonal mean's points) read
``k_min * d`` and ``k_min`` rows, a number independent of n: their Alg. 1 statistics ``(Q, mu)``
are computed in one task on a worker (:func:`dask_populous_mean`) and only they reach the client,
where :func:`cvxdp.estimation.masking.populous_release` adds Alg. 1's noise.  Robust and
Ashtiani-Liaw's Alg. 3 are not chunk-wise (refused: :func:`refuse_unbounded`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import linalg

from cvxdp.dask_backend import as_row_blocks, block_sum
from cvxdp.errors import PrivacySpecError, UnsupportedProblemError
from cvxdp.estimation.masking import k_min, populous_release, populous_statistics
from cvxdp.estimation.rows import cell_counts, clip_rows, clipped_sum, domain_rows
from cvxdp.estimation.wrapper import EuclideanSpace, block_projector

__all__ = ["dask_samples", "refuse_unbounded", "map_into_domain", "clip_into_bounds",
           "dask_tiled_blocks",
           "pair_moment", "dask_cell_counts", "dask_column_counts", "dask_clipped_sum",
           "dask_subspace", "dask_populous_mean"]


def dask_samples(X: Any) -> Any:
    """``X`` as a float64 Dask array split by rows only (shape checks: public)."""
    if X.ndim != 2 or X.shape[1] < 1:
        raise UnsupportedProblemError(f"X must be an (n, d) array of samples, got shape "
                                      f"{X.shape}.")
    return as_row_blocks(X)


def refuse_unbounded(robust: bool) -> Exception:
    """The typed error for the methods that are not chunk-wise (decided from arguments)."""
    what = "robust=True (Algs 4-5)" if robust else "method='ashtiani-liaw' (Alg. 3)"
    return UnsupportedProblemError(
        f"{what} is not available on a Dask array: its non-private block estimators need "
        "each block in memory.  On Dask, private_gaussian runs the default method (auto: "
        "'practical' or 'preconditioned') chunk-wise, or bounds=.")


def refuse_reference() -> Exception:
    return UnsupportedProblemError(
        "reference=True needs the exact empirical estimates of X in memory; on a Dask array "
        "the private release runs without it (chunk-wise, nothing of the data is gathered).")


def _domain_block(block: np.ndarray) -> np.ndarray:
    return domain_rows(block)[0]


def _domain_count(block: np.ndarray) -> np.ndarray:
    return np.array([float(domain_rows(block)[1])])


def map_into_domain(x: Any) -> tuple[Any, int]:
    """:func:`cvxdp.estimation.gaussians.public_domain` of a Dask array: the lazy mapped array
    and the count of changed rows (a reduce; PRIVATE, released only through ``noisy_count``)."""
    count = int(round(block_sum(_domain_count, x, 1)[0]))
    return x.map_blocks(_domain_block, dtype=np.float64), count


def _clip_block(block: np.ndarray, b: Any) -> np.ndarray:
    return b.clip(block)[0]


def _clip_count(block: np.ndarray, b: Any) -> np.ndarray:
    return np.array([float(b.clip(block)[1])])


def clip_into_bounds(x: Any, b: Any) -> tuple[Any, int]:
    """``b.clip(x)`` of a Dask array: the lazy clipped array and the count (PRIVATE)."""
    count = int(round(block_sum(_clip_count, x, 1, b)[0]))
    return x.map_blocks(_clip_block, b, dtype=np.float64), count


def _moment_block(block: np.ndarray, low: np.ndarray, t_clip: float) -> np.ndarray:
    w = linalg.solve_triangular(low, block.T, lower=True).T
    w = clip_rows(w, math.sqrt(t_clip))
    return (w.T @ w).ravel()


def pair_moment(z: Any) -> Any:
    """For :func:`cvxdp.estimation.gaussian_steps.coinpress_covariance`'s ``moment=``: ``None``
    for a numpy ``z``; for a Dask ``z`` the function ``(L, T) -> w^T w`` computed chunk-wise
    (``w``: the rows of ``z`` whitened by ``L`` and clipped at ``sqrt(T)``, per row as the
    numpy path does)."""
    if not hasattr(z, "chunks"):
        return None
    z = z.rechunk({1: -1}).persist()  # read once per round: kept on the workers
    d = int(z.shape[1])

    def moment(low: np.ndarray, t_clip: float) -> np.ndarray:
        return block_sum(_moment_block, z, d * d, np.asarray(low), float(t_clip)).reshape(d, d)

    return moment


# ------------------------------------------------------------ the pipeline without bounds= (Dask)

def dask_tiled_blocks(x: Any, counts: np.ndarray, seeds: np.ndarray, tile: int,
                      split_tile: Any) -> list:
    """:func:`cvxdp.estimation.row_partition.permuted_blocks` above one tile: ``x`` in chunks of
    ``tile`` rows, each split on a worker by its seeded permutation and ``counts[t]``
    (``split_tile``, :func:`cvxdp.estimation.row_partition.split_tile`, passed in so that this
    module does not import that one); block b concatenates the tiles' pieces b.  The client
    holds the ``T x B`` counts and ``T`` seeds only; the blocks (all but the last column's
    unused rows) are persisted on the workers."""
    # optional extra (cvxdp[dask]): this module is imported without it
    import dask
    import dask.array as da  # optional extra (cvxdp[dask])

    x = x.rechunk({0: tile, 1: -1})
    d = int(x.shape[1])
    nb = counts.shape[1] - 1
    pieces = [dask.delayed(split_tile, nout=nb + 1, pure=True)(c, counts[t], int(seeds[t]))
              for t, c in enumerate(x.to_delayed().ravel())]
    blocks = [da.concatenate([da.from_delayed(p[b], shape=(int(counts[t, b]), d),
                                              dtype=x.dtype) for t, p in enumerate(pieces)])
              for b in range(nb)]
    return list(dask.persist(*blocks))


def _chunk_counts(block: np.ndarray, fn: Any, args: tuple, columns: bool) -> list:
    keys = fn(block, *args)
    if columns:
        return [cell_counts(keys[:, j]) for j in range(keys.shape[1])]
    return [cell_counts(keys)]


def _merge_counts(*parts: list) -> list:
    """Sum per-chunk ``(cells, counts)`` histograms; cells sorted as ``np.unique(axis=0)``."""
    out = []
    for j in range(len(parts[0])):
        cells = np.concatenate([p[j][0] for p in parts])
        counts = np.concatenate([p[j][1] for p in parts])
        uniq, inv = np.unique(cells, axis=0, return_inverse=True)
        tot = np.bincount(inv.ravel(), weights=counts, minlength=len(uniq))
        out.append((uniq, np.rint(tot).astype(np.int64)))
    return out


def _counts(x: Any, fn: Any, args: tuple, columns: bool) -> list:
    import dask  # optional extra (cvxdp[dask])

    x = x.rechunk({1: -1})
    level = [dask.delayed(_chunk_counts)(b, fn, args, columns) for b in x.to_delayed().ravel()]
    while len(level) > 1:  # tree reduction on the workers, 8 histograms per task
        level = [dask.delayed(_merge_counts)(*level[i: i + 8]) for i in range(0, len(level), 8)]
    return dask.compute(level[0])[0]


def dask_cell_counts(y: Any, fn: Any, *args: Any) -> tuple[np.ndarray, np.ndarray]:
    """:func:`cvxdp.estimation.rows.cell_counts` of ``fn(y, *args)`` (a per-row map to
    integer cells), chunk-wise: per-chunk counts summed on the workers; the client receives the
    non-empty cells and their exact counts (PRIVATE: only for ``histogram_mode``)."""
    return _merge_counts(_counts(y, fn, args, False))[0]


def dask_column_counts(z: Any, fn: Any, *args: Any) -> list:
    """One ``(cells, counts)`` histogram per column of ``fn(z, *args)``, chunk-wise."""
    return _counts(z, fn, args, True)


def dask_clipped_sum(y: Any, centre: np.ndarray, radius: float) -> np.ndarray:
    """:func:`cvxdp.estimation.rows.clipped_sum` of a Dask ``y`` (a d-vector reduce)."""
    y = y.rechunk({1: -1})
    return block_sum(clipped_sum, y, int(y.shape[1]), np.asarray(centre), float(radius))


def _subspace_statistics(z: np.ndarray, k: int, tol: float) -> tuple:
    d = z.shape[1]
    items = np.stack([block_projector(b) for b in z[: k * d].reshape(k, d, d)])
    return populous_statistics(items, EuclideanSpace(r=tol))


def _point_statistics(items: np.ndarray, tol: float) -> tuple:
    return populous_statistics(items, EuclideanSpace(r=tol))


def dask_subspace(z: Any, *, epsilon: float, delta: float, tol: float,
                  rng: np.random.Generator) -> tuple:
    """:func:`cvxdp.estimation.wrapper.private_subspace` of a Dask ``z``: the ``k`` block
    projectors and Alg. 1's ``(Q, mu)`` are computed in one task on a worker (``k d`` rows,
    independent of n); the release (:func:`cvxdp.estimation.masking.populous_release`) and
    the snap to a projector on the client."""
    import dask  # optional extra (cvxdp[dask])

    m, d = (int(v) for v in z.shape)
    k = k_min(epsilon / 2, delta / (4 * math.exp(epsilon / 2)))
    if m < k * d:
        raise PrivacySpecError(f"the subspace step needs >= {k * d} pair differences "
                               f"(k={k} blocks of d={d}), got {m}.")
    stats = dask.delayed(_subspace_statistics)(z[: k * d].rechunk({1: -1}), k, tol).compute()
    res = populous_release(stats, k, EuclideanSpace(r=tol), np.zeros((d, d)), epsilon=epsilon,
                           delta=delta, rng=rng)
    if res.value is None:
        return None, res
    lam, vec = np.linalg.eigh(0.5 * (res.value + res.value.T))
    return vec[:, lam > 0.5], res


def dask_populous_mean(items: Any, tol: float, *, epsilon: float, delta: float,
                       rng: np.random.Generator) -> Any:
    """``populous_mean(items, EuclideanSpace(r=tol))`` for the rows of a Dask ``items``: Alg. 1's
    statistics in one task on a worker (``k_min`` rows), the release on the client."""
    import dask  # optional extra (cvxdp[dask])

    k, d = (int(v) for v in items.shape)
    stats = dask.delayed(_point_statistics)(items.rechunk({1: -1}), tol).compute()
    return populous_release(stats, k, EuclideanSpace(r=tol), np.zeros(d), epsilon=epsilon,
                            delta=delta, rng=rng)
