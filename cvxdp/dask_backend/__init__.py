"""Chunk-wise statistics on Dask arrays: map over row blocks on the workers, reduce, return.

The private minimum enclosing ball and private least squares read their data only through sums
over rows (counts and sums of the points outside a ball, Gram matrices).  When the data are a
``dask.array.Array`` each such sum is computed block by block on the workers and summed by
Dask's tree reduction; only the ``d``-sized (or ``d x d``) result reaches the client, where the
noise is added.  The privacy analysis is unchanged: a mechanism's output is a function of the
exact sum plus noise, and the exact sum does not depend on how the rows are split into blocks.

Dask is an optional extra (``pip install "cvxdp[dask]"``); this module imports it lazily, so the
core imports and runs without it.  :func:`is_dask` recognises a Dask array without importing
Dask (a Dask array can only exist if Dask is installed).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from cvxdp.errors import UnsupportedProblemError

__all__ = ["is_dask", "as_row_blocks", "block_sum", "require_dask"]


def is_dask(x: Any) -> bool:
    """Whether ``x`` is a ``dask.array.Array`` (checked without importing Dask)."""
    return type(x).__module__.startswith("dask.array") and hasattr(x, "chunks")


def require_dask() -> Any:
    """``dask.array``, or an ImportError that says how to install it."""
    try:
        import dask.array as da  # optional extra (cvxdp[dask])
    except ImportError as exc:  # pragma: no cover - a Dask array implies Dask is installed
        raise ImportError("Dask arrays need the optional extra: pip install 'cvxdp[dask]'"
                          ) from exc
    return da


def as_row_blocks(x: Any, ndim: int = 2) -> Any:
    """``x`` as a float64 Dask array of known shape, split by rows only (one column block).

    Reads the shape only (public).  Unknown row counts (``nan`` chunks, e.g. after a filter) are
    refused: ``n`` is public in every mechanism here and must be known without reading the data.
    """
    da = require_dask()
    if x.ndim != ndim:
        raise UnsupportedProblemError(f"expected a {ndim}-D Dask array, got shape {x.shape}.")
    if any(np.isnan(c) for c in x.chunks[0]):
        raise UnsupportedProblemError(
            "the Dask array has unknown chunk sizes (nan); call x.compute_chunk_sizes() first "
            "(the number of rows is public and must be known).")
    x = x.astype(np.float64) if x.dtype != np.float64 else x
    if ndim == 2 and len(x.chunks[1]) > 1:
        x = x.rechunk({1: -1})
    assert isinstance(x, da.Array)
    return x


def _row_block(fn: Callable[..., np.ndarray], block: np.ndarray, *args: Any) -> np.ndarray:
    return np.asarray(fn(block, *args), dtype=np.float64).reshape(1, -1)


def _row_block_numbered(fn: Callable[..., np.ndarray], block: np.ndarray, *args: Any,
                        block_id: tuple[int, ...] | None = None) -> np.ndarray:
    assert block_id is not None
    return _row_block(fn, block, *args, block_id[0])


def block_sum(fn: Callable[..., np.ndarray], x: Any, width: int, *args: Any,
              numbered: bool = False, op: str = "sum") -> np.ndarray:
    """``sum over the row blocks b of x of fn(b, *args)``: a float64 vector of length ``width``.

    ``fn`` runs on the workers (it must be importable there: a module-level function) and
    returns a length-``width`` vector per block; the per-block vectors are summed by Dask's tree
    reduction on the workers and only the sum is brought to the client.  ``args`` are small
    public values (a centre, a radius), sent with the task.  ``numbered``: also pass the
    block's row-block index as the last argument (``fn(b, *args, i)``), e.g. to seed a
    per-block random stream.  An argument that is itself a Dask array with ``x``'s row blocks
    (e.g. per-row weights ``w[:, None]``) is passed block by block, aligned with ``x``'s.
    ``op="max"``: the coordinate-wise maximum over the blocks instead of the sum.
    """
    da = require_dask()
    nblocks = len(x.chunks[0])
    parts = da.map_blocks(_row_block_numbered if numbered else _row_block, fn, x, *args,
                          dtype=np.float64,
                          chunks=((1,) * nblocks, (width,)))
    red = parts.max(axis=0) if op == "max" else parts.sum(axis=0)
    return np.asarray(red.compute(), dtype=np.float64)
