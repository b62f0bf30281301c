"""The Gaussian learner's one random permutation of the rows, cut into its public blocks.

:func:`cvxdp.estimation.gaussians.private_gaussian` (no ``bounds=``) permutes the sample once
and cuts it into disjoint blocks of public sizes, one per step (parallel composition over the
blocks: any data-independent split is private; the permutation makes the blocks a uniformly
random partition, so each is a random subsample).  Up to ``TILE`` rows the permutation is
``gen.permutation(n)``.  Above, it is drawn tile by tile, so that on a Dask array nothing the
size of the data (not even the n row indices) is built on the client:

1. on the client, from the caller's generator: one seed per tile of ``TILE`` rows, and how many
   rows of each tile go to each block, ``K[t] ~ multivariate hypergeometric(remaining block
   sizes, rows of tile t)`` (T x B numbers);
2. per tile (on a worker for Dask): a permutation of the tile's rows from its seed, cut into
   ``K[t]`` consecutive pieces; block b is tile 0's piece b, then tile 1's, ...

Sequential hypergeometric draws give every assignment of rows to blocks with the given sizes the
same probability (the blocks are a uniformly random partition, as with one permutation); within
a block the rows are in tile order, each tile's rows in random order.  The numpy and Dask paths
use the same draws, so they release the same estimate.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from cvxdp.dask_backend import is_dask
from cvxdp.dask_backend.gaussians import dask_tiled_blocks

__all__ = ["TILE", "tile_plan", "split_tile", "permuted_blocks"]

#: Rows per tile of the tiled permutation (64 MB of float64 rows at d = 8).
TILE = 1 << 20


def tile_plan(n: int, sizes: list[int], gen: np.random.Generator, tile: int
              ) -> tuple[np.ndarray, np.ndarray]:
    """``(K, seeds)``: ``K[t, b]`` rows of tile t go to block b (the last column takes the rows
    no block uses), ``seeds[t]`` the tile's permutation seed.  Public sizes and the caller's
    generator only."""
    caps = np.array(list(sizes) + [n - sum(sizes)], dtype=np.int64)
    T = math.ceil(n / tile)
    seeds = gen.integers(0, 2**63 - 1, size=T)
    counts = np.empty((T, len(caps)), dtype=np.int64)
    rem = caps.copy()
    for t in range(T):
        m = min(tile, n - t * tile)
        counts[t] = rem if t == T - 1 else gen.multivariate_hypergeometric(rem, m)
        rem = rem - counts[t]
    return counts, seeds


def split_tile(rows: np.ndarray, counts: np.ndarray, seed: int) -> list[np.ndarray]:
    """The tile's rows in the order of its seeded permutation, cut into ``counts`` pieces."""
    perm = np.random.default_rng(int(seed)).permutation(len(rows))
    return np.split(rows[perm], np.cumsum(counts)[:-1])


def permuted_blocks(x: Any, sizes: dict[str, int], gen: np.random.Generator,
                    tile: int | None = None) -> dict[str, Any]:
    """The blocks ``{name: rows}`` of the permuted sample (module doc); a Dask ``x`` gives
    Dask blocks persisted on the workers."""
    tile = TILE if tile is None else int(tile)
    n = int(x.shape[0])
    names = list(sizes)
    if n <= tile:
        xs = x[gen.permutation(n)]
        if is_dask(xs):  # shuffled once by Dask on the workers and kept there for every step
            xs = xs.persist()
        out, start = {}, 0
        for name in names:
            out[name] = xs[start: start + sizes[name]]
            start += sizes[name]
        return out
    counts, seeds = tile_plan(n, [sizes[k] for k in names], gen, tile)
    if is_dask(x):
        return dict(zip(names, dask_tiled_blocks(x, counts, seeds, tile, split_tile),
                        strict=True))
    parts = [split_tile(x[t * tile: (t + 1) * tile], counts[t], seeds[t])
             for t in range(len(seeds))]
    return {name: np.concatenate([p[b] for p in parts]) for b, name in enumerate(names)}
