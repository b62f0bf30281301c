"""Worst-case neighbouring pairs for cvxdp's settings (inputs to :func:`audit_mechanism`)."""

from __future__ import annotations

import numpy as np

__all__ = ["move_constraint", "move_rhs", "remove_point", "add_point", "close_rows"]


def move_constraint(A: np.ndarray, i: int, sensitivity: float) -> np.ndarray:
    """Low-sensitivity constraint privacy: row ``i`` of ``A`` moved by ``sensitivity`` in every
    entry (the extreme point of the l-inf ball, which maximises the change of a score
    ``a_i' x`` for a nonnegative x)."""
    out = np.array(A, dtype=float, copy=True)
    out[i] = out[i] + sensitivity
    return out


def move_rhs(b: np.ndarray, i: int, sensitivity: float) -> np.ndarray:
    """Scalar privacy: entry ``i`` of the right-hand side moved by ``sensitivity``."""
    out = np.array(b, dtype=float, copy=True)
    out[i] += sensitivity
    return out


def remove_point(X: np.ndarray, i: int) -> np.ndarray:
    """Add/remove neighbours: ``X`` without row ``i``."""
    X = np.asarray(X)
    return np.delete(X, i, axis=0)


def add_point(X: np.ndarray, point: np.ndarray) -> np.ndarray:
    """Add/remove neighbours: ``X`` with ``point`` appended (choose it at the domain's corner)."""
    return np.vstack([np.asarray(X), np.asarray(point)[None, :]])


def close_rows(A: np.ndarray, i: int, eps0: float, direction: np.ndarray | None = None
               ) -> np.ndarray:
    """eps0-close neighbours (John ellipsoid): row ``i`` moved by exactly ``eps0`` in l2, along
    ``direction`` (default: along the row itself, which changes its leverage the most)."""
    out = np.array(A, dtype=float, copy=True)
    d = out[i] if direction is None else np.asarray(direction, dtype=float)
    nrm = np.linalg.norm(d)
    d = d / nrm if nrm > 0 else np.eye(out.shape[1])[0]
    out[i] = out[i] + eps0 * d
    return out
