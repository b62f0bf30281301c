"""The public box of the private MEB: clipping points into it and the working translation.

Shared by the numpy path (:mod:`cvxdp.geometry.meb.meb_solve`) and the Dask blocks
(:mod:`cvxdp.dask_backend.meb`); it imports nothing that dispatches to Dask, so
``cvxdp.dask_backend.meb`` depends on this package without an import circle.
"""

from __future__ import annotations

import numpy as np

from cvxdp.privacy.clipping import clip_to_box

__all__ = ["clip_into_box", "working_shift"]


def clip_into_box(points: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, int]:
    """Project every point onto the public box ``[lo, hi]``; return ``(copy, count moved)``.

    A NaN coordinate becomes the box centre's coordinate, an infinite one the nearest face; each
    point is mapped on its own, so replace-one neighbours stay replace-one neighbours and every
    sensitivity computed from the box holds.  ``count`` (points outside the box or with a NaN)
    is PRIVATE: release it only through :func:`cvxdp.privacy.clipping.noisy_count`.
    """
    nan = np.isnan(points)
    if nan.any():
        points = np.where(nan, (lo + hi) / 2, points)
    clipped, _ = clip_to_box(points, lo, hi)
    moved = np.any(nan, axis=1) | np.any((points < lo) | (points > hi), axis=1)
    return clipped, int(np.count_nonzero(moved))


def working_shift(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """The public translation of :func:`~cvxdp.geometry.meb.meb_inputs.working_points`: the box
    centre when the box does not contain the origin, else zero."""
    centre = (lo + hi) / 2
    return np.zeros_like(centre) if np.all(np.abs(centre) <= (hi - lo) / 2) else centre
