"""Private least squares' sufficient statistics on Dask arrays (chunk-wise, then reduced).

The ``ssp`` mechanism releases the Gram matrix ``D^T D + W`` of the rows ``(x_i, y_i)`` mapped
into the public domain (:func:`cvxdp.estimation.random_projection.public_domain_rows`: a row
with a NaN / inf entry becomes the zero row, a longer row is clipped to ``row_bound``).  Here each
row block is mapped on its worker by that same function and contributes its own ``D_b^T D_b``;
Dask sums the blocks' matrices on the workers and only the ``(d+1) x (d+1)`` sum reaches the
client, where :func:`cvxdp.estimation.regression.noisy_gram_of` adds the noise.  Mapping acts row
by row and ``D^T D = sum_b D_b^T D_b`` whatever the split, so the released matrix has the same
distribution (and, with the same seed, the same value up to the order of additions) as on the
numpy path, and the sensitivity ``||v v^T||_F = ||v||^2 <= row_bound^2`` is unchanged.

The random projection ``M_RP`` releases ``D^T G + N``: :func:`dask_sketch` computes ``D^T G`` as
``sum_b D_b^T G_b`` with each block's ``G_b`` drawn on its worker from its own stream
(``SeedSequence(entropy, spawn_key=(b,))``, ``entropy`` drawn from the client's generator), so
``G`` has iid ``N(0, 1)`` entries, independent of the data and never released, as Thm 3 needs;
the client adds ``N``.  The sketch has the numpy path's law, not its values (the numpy path draws
``G`` from one stream).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from cvxdp.dask_backend import as_row_blocks, block_sum, require_dask
from cvxdp.estimation.rows import public_domain_rows

__all__ = ["stacked_rows", "gram_and_count", "mapped_count", "dask_sketch"]


def stacked_rows(X: Any, y: Any) -> Any:
    """``[X y]`` as one Dask array split by rows only (``y``'s blocks aligned to ``X``'s)."""
    da = require_dask()
    x = as_row_blocks(X if hasattr(X, "chunks") else da.from_array(np.asarray(X)))
    t = y if hasattr(y, "chunks") else da.from_array(np.asarray(y))
    t = as_row_blocks(t, ndim=1).rechunk((x.chunks[0],))
    return da.concatenate([x, t[:, None]], axis=1).rechunk({1: -1})


def _gram_block(block: np.ndarray, bound: float) -> np.ndarray:

    mapped, count = public_domain_rows(block, bound)
    return np.concatenate([(mapped.T @ mapped).ravel(), [float(count)]])


def gram_and_count(data: Any, row_bound: float) -> tuple[np.ndarray, int]:
    """``(D^T D, rows mapped)`` of the rows of ``data`` mapped into the public domain.

    ``data`` is a Dask array from :func:`stacked_rows`.  The count is PRIVATE: release it only
    through :func:`cvxdp.privacy.clipping.noisy_count`.
    """
    m = int(data.shape[1])
    out = block_sum(_gram_block, data, m * m + 1, float(row_bound))
    gram = out[:-1].reshape(m, m)
    return (gram + gram.T) / 2.0, int(round(out[-1]))


def _count_block(block: np.ndarray, bound: float) -> np.ndarray:

    return np.array([float(public_domain_rows(block, bound)[1])])


def mapped_count(data: Any, row_bound: float) -> int:
    """Rows of ``data`` (a Dask array) changed by the mapping into the public domain.  PRIVATE:
    release it only through :func:`cvxdp.privacy.clipping.noisy_count`."""
    return int(round(block_sum(_count_block, data, 1, float(row_bound))[0]))


def _sketch_block(block: np.ndarray, bound: float, r: int, entropy: list[int],
                  draw_rows: int, index: int) -> np.ndarray:

    mapped = public_domain_rows(block, bound)[0]
    gen = np.random.default_rng(np.random.SeedSequence(entropy, spawn_key=(index,)))
    out = np.zeros((block.shape[1], r))
    for start in range(0, len(mapped), draw_rows):       # G_b in pieces: O(draw_rows r) memory
        part = mapped[start:start + draw_rows]
        out += part.T @ gen.standard_normal((part.shape[0], r))
    return out.ravel()


def dask_sketch(data: Any, row_bound: float, r: int, gen: np.random.Generator, *,
                block: int = 4_000_000) -> np.ndarray:
    """``D^T G`` (``m x r``, no noise) of the rows of ``data`` mapped into the public domain,
    ``G`` iid ``N(0, 1)`` drawn block by block on the workers from streams seeded by 128 bits
    of ``gen``."""
    m = int(data.shape[1])
    entropy = [int(v) for v in gen.integers(0, 2**32, size=4)]
    draw_rows = max(1, block // max(r, 1))
    out = block_sum(_sketch_block, data, m * r, float(row_bound), int(r), entropy, draw_rows,
                    numbered=True)
    return out.reshape(m, r)
