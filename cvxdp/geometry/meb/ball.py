"""The answers of the minimum-enclosing-ball problem: :class:`Ball` and :class:`MEBPrivateSolution`.

Shared by the exact methods (:mod:`cvxdp.geometry.meb.exact`), the private pipeline
(:mod:`cvxdp.geometry.meb.meb_solve`) and the problem class (:mod:`cvxdp.geometry.meb.meb`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cvxdp.geometry.meb.meb_index import sq_dists
from cvxdp.solution import PrivateSolution

__all__ = ["Ball", "MEBPrivateSolution"]


@dataclass(frozen=True)
class Ball:
    """A Euclidean ball ``B(center, radius)``."""

    center: np.ndarray
    radius: float

    def contains(self, points: np.ndarray, *, tol: float = 1e-9) -> np.ndarray:
        """Boolean mask of the rows of ``points`` inside the ball (relative tolerance ``tol``).

        Distances are ``sqrt(sq_dists(points, center))``: the same arithmetic that gives an exact
        ball its covering radius (:func:`exact_meb`), so a ball built from these points' largest
        distance covers every one of them at ``tol=0`` by construction (``sqrt`` is correctly
        rounded, hence monotone).  ``np.linalg.norm`` rounds differently and left 1 point in
        ~10 outside its own exact ball.
        """
        p = np.atleast_2d(np.asarray(points, dtype=float))
        dist = np.sqrt(sq_dists(p, np.asarray(self.center, dtype=float)))
        return dist <= self.radius * (1 + tol) + tol

    def uncovered(self, points: np.ndarray, *, tol: float = 1e-9) -> int:
        """Number of rows of ``points`` outside the ball."""
        return int((~self.contains(points, tol=tol)).sum())


@dataclass(repr=False)
class MEBPrivateSolution(PrivateSolution):
    """A private minimum-enclosing-ball answer: :class:`PrivateSolution` plus ``ball``."""

    ball: Ball | None = None
