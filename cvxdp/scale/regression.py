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
"""

from __future__ import annotations

from typing import Any

import numpy as np

from cvxdp.scale import as_row_blocks, block_sum, require_dask

__all__ = ["stacked_rows", "gram_and_count"]


def stacked_rows(X: Any, y: Any) -> Any:
    """``[X y]`` as one Dask array split by rows only (``y``'s blocks aligned to ``X``'s)."""
    da = require_dask()
    x = as_row_blocks(X if hasattr(X, "chunks") else da.from_array(np.asarray(X)))
    t = y if hasattr(y, "chunks") else da.from_array(np.asarray(y))
    t = as_row_blocks(t, ndim=1).rechunk((x.chunks[0],))
    return da.concatenate([x, t[:, None]], axis=1).rechunk({1: -1})


def _gram_block(block: np.ndarray, bound: float) -> np.ndarray:
    from cvxdp.estimation.random_projection import public_domain_rows

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
