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
:func:`cvxdp.estimation.gaussian_steps._clip_rows`) and reduced there; the client receives
``d`` or ``d^2`` numbers per reduction and adds the noise from the caller's generator in the
numpy path's order, so with the same seed the release equals the numpy path's up to the order of
additions.  Pairing row ``i`` with row ``h + i`` is done by Dask on the workers (the two halves'
blocks are aligned there; nothing reaches the client).

The range-finding pipeline without ``bounds=`` (random permutation, log-scale histograms,
subsample-and-aggregate subspace and mean steps) is not chunk-wise yet: on a Dask array it is
refused (:func:`refuse_unbounded`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from cvxdp.scale import as_row_blocks, block_sum

__all__ = ["dask_samples", "refuse_unbounded", "map_into_domain", "clip_into_bounds",
           "pair_moment"]


def dask_samples(X: Any) -> Any:
    """``X`` as a float64 Dask array split by rows only (shape checks: public)."""
    from cvxdp.errors import UnsupportedProblemError

    if X.ndim != 2 or X.shape[1] < 1:
        raise UnsupportedProblemError(f"X must be an (n, d) array of samples, got shape "
                                      f"{X.shape}.")
    return as_row_blocks(X)


def refuse_unbounded() -> Exception:
    """The typed error for the unbounded pipeline on a Dask array (decided from arguments)."""
    from cvxdp.errors import UnsupportedProblemError

    return UnsupportedProblemError(
        "on a Dask array private_gaussian runs with public bounds= only (clipped mean and "
        "CoinPress covariance, chunk-wise on the workers); the range-finding pipeline without "
        "bounds (random permutation, histograms, subsample-and-aggregate) needs the samples "
        "in memory.  Pass bounds=(lo, hi) or {'centre': c, 'radius': R}.")


def refuse_reference() -> Exception:
    from cvxdp.errors import UnsupportedProblemError

    return UnsupportedProblemError(
        "reference=True needs the exact empirical estimates of X in memory; on a Dask array "
        "the private release runs without it (chunk-wise, nothing of the data is gathered).")


def _domain_block(block: np.ndarray) -> np.ndarray:
    from cvxdp.estimation.gaussians import public_domain

    return public_domain(block)[0]


def _domain_count(block: np.ndarray) -> np.ndarray:
    from cvxdp.estimation.gaussians import public_domain

    return np.array([float(public_domain(block)[1])])


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
    import math

    from scipy import linalg

    from cvxdp.estimation.gaussian_steps import _clip_rows

    w = linalg.solve_triangular(low, block.T, lower=True).T
    w = _clip_rows(w, math.sqrt(t_clip))
    return (w.T @ w).ravel()


def pair_moment(z: Any) -> Any:
    """For :func:`cvxdp.estimation.gaussian_steps.coinpress_covariance`'s ``moment=``: ``None``
    for a numpy ``z``; for a Dask ``z`` the function ``(L, T) -> w^T w`` computed chunk-wise
    (``w``: the rows of ``z`` whitened by ``L`` and clipped at ``sqrt(T)``, per row as the
    numpy path does)."""
    if not hasattr(z, "chunks"):
        return None
    z = z.rechunk({1: -1})
    d = int(z.shape[1])

    def moment(low: np.ndarray, t_clip: float) -> np.ndarray:
        return block_sum(_moment_block, z, d * d, np.asarray(low), float(t_clip)).reshape(d, d)

    return moment
