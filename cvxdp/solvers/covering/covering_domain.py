"""The public domain of covering data and the projection of private rows into it.

A covering program's rows must be PSD matrices with eigenvalues in [0, 1] (SDP), vectors in
[0, 1] (LP) or second-order-cone elements with both spectral values in [0, 1] (SOCP).  Rows
outside are projected into the domain inside the mechanism (:func:`project_rows`), never refused
(a refusal would reveal that such a row exists); how many were moved is private and released
only through ``count_clipped=``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from cvxdp.errors import UnsupportedProblemError

__all__ = ["DOMAIN_NOTE", "DOMAIN_TOL", "check_shape", "flat_rows", "project_rows"]

#: rows moved by more than this are counted as projected; smaller moves are float rounding
DOMAIN_TOL = 1e-9
DOMAIN_NOTE = ("the guarantee and the accuracy are stated for the rows projected into the public "
               "domain; they are the user's rows when every row obeys the bound (ask "
               "count_clipped=True for a noisy count of projected rows)")


def _as_float_rows(data: Any) -> np.ndarray:
    """Rows as a float array: scipy.sparse matrices (or a sequence of them, one per row of an
    SDP) are densified; anything numpy cannot read as numbers is a typed refusal (of the input's
    type, a public fact -- no value is shown)."""
    if sp.issparse(data):
        data = data.toarray()
    elif isinstance(data, (list, tuple)) and any(sp.issparse(d) for d in data):
        data = [d.toarray() if sp.issparse(d) else d for d in data]
    try:
        return np.asarray(data, dtype=float)
    except (TypeError, ValueError):
        raise UnsupportedProblemError(
            "the covering rows must be numbers: a numpy array, a scipy.sparse matrix (a list "
            f"of them for an SDP) or nested lists of floats; got a {type(data).__name__} that "
            "numpy cannot read as a float array.") from None


def check_shape(kind: str, data: Any) -> np.ndarray:
    """Check the public structure of the rows (array shape only) and return them as floats.

    The number of rows ``m`` may be 0: it is private under add/remove neighbours.  Nothing
    about the rows' values is checked here -- that would be a data-dependent refusal; values
    outside the public domain are projected into it by :func:`project_rows`.
    """
    A = _as_float_rows(data)
    # messages show the trailing (public) shape only: m counts the private rows
    if kind == "sdp":
        if A.ndim != 3 or A.shape[1] != A.shape[2] or A.shape[1] < 1:
            raise UnsupportedProblemError(
                f"mats must have shape (m, r, r), got shape (m,) + {A.shape[1:]}.")
    elif kind == "soc":
        if A.ndim != 2 or A.shape[1] < 2:
            raise UnsupportedProblemError(
                f"vecs must have shape (m, n >= 2), got shape (m,) + {A.shape[1:]}.")
    elif A.ndim != 2 or A.shape[1] < 1:
        raise UnsupportedProblemError(f"A must have shape (m, n), got shape (m,) + {A.shape[1:]}.")
    return A


def flat_rows(data: np.ndarray) -> np.ndarray:
    """The rows as vectors, ``(m, size of a row)``; also for ``m = 0`` (no rows is a dataset
    like any other under add/remove neighbours), where ``reshape(m, -1)`` fails."""
    return data.reshape(data.shape[0], int(np.prod(data.shape[1:])))


def project_rows(kind: str, data: np.ndarray) -> tuple[np.ndarray, int]:
    """Project every row into the public domain the privacy proof needs.

    * ``"lp"``: entries into ``[0, 1]`` (``nan -> 0``, ``+inf -> 1``, ``-inf -> 0``);
    * ``"sdp"``: ``A_i`` symmetrised, its spectrum clipped into ``[0, 1]`` (the Frobenius
      projection onto ``{0 <= A <= I}``); a row with a non-finite entry becomes 0;
    * ``"soc"``: the spin-factor eigenvalues ``a_0 +- |a_bar|`` clipped into ``[0, 1]`` (the
      Euclidean projection, the Jordan frame being orthogonal); non-finite rows become 0.

    Rows whose computed entries / spectrum lie in ``[0, 1]`` are returned unchanged (bit for
    bit); a row outside only by rounding (an eigenvalue ``-1e-17`` of a rank-deficient ``A_i``)
    is re-assembled from its clipped spectrum and not counted.  The map acts row by
    row, so neighbouring row sets stay neighbouring and the proof's bounds hold for the output.
    Clipping an eigenvalue above 1 down to 1 only *strengthens* the row's constraint on the
    cone (``A_i - P(A_i)`` is in the cone), so a point covering the projected row covers the
    user's row; raising a negative eigenvalue (or entry) to 0 weakens it.

    Returns
    -------
    projected : ndarray
    count : int
        Rows moved by more than :data:`DOMAIN_TOL`.  PRIVATE: release it only through
        :func:`cvxdp.privacy.clipping.noisy_count` (``count_clipped=``).
    """
    m = data.shape[0]
    flat = flat_rows(data)
    finite = np.all(np.isfinite(flat), axis=1)
    with np.errstate(all="ignore"):
        if kind == "lp":
            out = np.clip(np.nan_to_num(data, nan=0.0, posinf=1.0, neginf=0.0), 0.0, 1.0)
            moved = np.any(np.abs(out - data) > DOMAIN_TOL, axis=1)
            return out, int(np.count_nonzero(moved | ~finite))
        out = np.where(finite.reshape((m,) + (1,) * (data.ndim - 1)), data, 0.0)
        if kind == "sdp":
            sym = out / 2 + np.swapaxes(out, 1, 2) / 2
            asym = np.max(np.abs(out - sym), axis=(1, 2), initial=0.0)
            lam, V = np.linalg.eigh(sym)
            low, high = lam[:, 0], lam[:, -1]
            fix = (low < 0) | (high > 1) | (asym > 0)
            if np.any(fix):
                lc = np.clip(lam[fix], 0.0, 1.0)
                out[fix] = np.einsum("mij,mj,mkj->mik", V[fix], lc, V[fix])
        else:
            nb = np.linalg.norm(out[:, 1:], axis=1)
            low, high = out[:, 0] - nb, out[:, 0] + nb
            fix = (low < 0) | (high > 1)
            if np.any(fix):
                l1, l2 = np.clip(high[fix], 0.0, 1.0), np.clip(low[fix], 0.0, 1.0)
                u = out[fix, 1:] / np.where(nb[fix] > 0, nb[fix], 1.0)[:, None]
                out[fix] = np.column_stack([(l1 + l2) / 2, ((l1 - l2) / 2)[:, None] * u])
            asym = np.zeros(m)
        bad = ~np.all(np.isfinite(flat_rows(out)), axis=1)
        out[bad] = 0.0  # overflow in the projection of a huge row: treated as non-finite
        moved = ~finite | bad | (low < -DOMAIN_TOL) | (high > 1 + DOMAIN_TOL) | (asym > DOMAIN_TOL)
    return out, int(np.count_nonzero(moved))
