"""Per-row maps into public domains and exact per-row reductions, shared by the numpy estimators
(:mod:`cvxdp.estimation`) and their Dask implementations (:mod:`cvxdp.dask_backend.gaussians`,
:mod:`cvxdp.dask_backend.regression`).

Nothing here dispatches to Dask, so the Dask modules depend on :mod:`cvxdp.estimation` through this
module (and the mechanisms of ``masking`` / ``wrapper``) without an import circle
(``tests/test_import_cycles.py``).  Each function acts row by row: neighbouring datasets stay
neighbours and every sensitivity computed from the domain holds.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from cvxdp.arguments import check_number
from cvxdp.errors import PrivacySpecError
from cvxdp.privacy.clipping import clip_rows_l2, clip_to_box

__all__ = ["ENTRY_BOUND", "cell_counts", "clip_rows", "clipped_sum", "domain_rows",
           "public_domain_rows"]

#: Public bound on |entry| of a sample; larger entries are clipped to it
#: (:mod:`cvxdp.estimation.gaussians`, "Public domain").
ENTRY_BOUND = 1e100


def check_bound(row_bound: Any) -> float:
    """``row_bound`` as a float: a number (not a string, as epsilon), finite and > 0."""
    return check_number("row_bound", row_bound, "a finite public number > 0 (the largest l2 "
                        "norm any row may have; rows above it are clipped; never take it from "
                        "the data)", lambda v: v > 0, error=PrivacySpecError)


def public_domain_rows(data: Any, row_bound: float) -> tuple[np.ndarray, int]:
    """Map every row of ``data`` into the public domain ``{||row||_2 <= row_bound}``.

    A row with a NaN or inf entry becomes the zero row (the record then adds nothing to
    ``D^T G`` or ``D^T D``); a row longer than ``row_bound`` is scaled to norm ``row_bound``
    (:func:`cvxdp.privacy.clipping.clip_rows_l2`; a norm that overflows, e.g. entries at 1e200,
    is handled without a warning).  Each row is mapped on its own, so add/remove neighbours stay
    add/remove neighbours and the sensitivity ``row_bound`` holds.  Nothing is refused: a refusal
    (or a warning) that depends on the values would reveal that some record is not finite.

    Returns
    -------
    mapped : ndarray (n, d)
        A new array; finite rows within the bound are unchanged bit for bit.
    count : int
        Rows changed.  PRIVATE: release it only through
        :func:`cvxdp.privacy.clipping.noisy_count` (``count_clipped=``).

    Raises
    ------
    PrivacySpecError
        ``data`` is not 2-D or ``row_bound`` is not a finite number > 0 (public properties).
    """
    d = np.asarray(data, dtype=float)
    if d.ndim != 2:
        raise PrivacySpecError(f"data must be a 2-D array (one row per person), got {d.shape}.")
    bound = check_bound(row_bound)
    finite = np.all(np.isfinite(d), axis=1)
    mapped, long_rows = clip_rows_l2(np.where(finite[:, None], d, 0.0), bound)
    return mapped, long_rows + int(np.count_nonzero(~finite))


def domain_rows(x: np.ndarray) -> tuple[np.ndarray, int]:
    """Map every sample into the public domain: finite, entries in ``[-ENTRY_BOUND, ENTRY_BOUND]``.

    A row with a NaN or inf entry becomes the zero row; entries beyond :data:`ENTRY_BOUND` are
    clipped to it (:func:`cvxdp.privacy.clipping.clip_to_box`).  Each row is mapped on its own,
    so replace-one neighbours stay replace-one neighbours; rows already in the domain are
    unchanged bit for bit.

    Returns
    -------
    mapped : ndarray (n, d)
    count : int
        Rows changed.  PRIVATE: released only through ``noisy_count`` (``count_clipped=``).
    """
    finite = np.isfinite(x).all(axis=1)
    mapped, clipped = clip_to_box(np.where(finite[:, None], x, 0.0), -ENTRY_BOUND, ENTRY_BOUND)
    return mapped, clipped + int(np.count_nonzero(~finite))


def cell_counts(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The non-empty cells of ``keys`` (rows of a (c, p) array, sorted as ``np.unique(axis=0)``
    sorts them) and their counts.  PRIVATE (exact counts): only for
    :func:`cvxdp.estimation.gaussian_steps.histogram_mode`."""
    keys = np.asarray(keys)
    width = int(np.prod(keys.shape[1:], dtype=np.int64))  # -1 cannot size an empty array
    return np.unique(keys.reshape(len(keys), width), axis=0, return_counts=True)


def clip_rows(v: np.ndarray, radius: float) -> np.ndarray:
    """Scale each row into the l2 ball of ``radius``.  A row whose norm overflows (or is not
    finite) becomes 0: still a per-record map into the ball, so the sensitivity bound holds and
    one extreme record cannot turn the whole release into NaN."""
    with np.errstate(over="ignore", invalid="ignore"):
        nrm = np.sqrt((v * v).sum(axis=1))
        ok = np.isfinite(nrm)
        scale = np.where(ok, np.minimum(1.0, radius / np.maximum(np.where(ok, nrm, 1.0),
                                                                  1e-300)), 0.0)
        return np.where(ok[:, None], v, 0.0) * scale[:, None]


def clipped_sum(y: np.ndarray, centre: np.ndarray, radius: float) -> np.ndarray:
    """``sum_i (centre + clip(y_i - centre, radius))``: each row moved into the ball of
    ``radius`` around ``centre`` (:func:`clip_rows`), then summed (a d-vector)."""
    return (centre + clip_rows(y - centre, radius)).sum(axis=0)
