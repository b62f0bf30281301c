"""Golden-section search over an interval, keeping the best value evaluated.

The certificates search one-dimensional multipliers (the Lagrange multiplier of the MWU's dual
bound, the AM-GM weight of objective perturbation's block bound) where every point gives a
valid bound and the search only makes it tighter.
"""

from __future__ import annotations

import math
from collections.abc import Callable

__all__ = ["golden_min"]

_RATIO = (math.sqrt(5.0) - 1.0) / 2.0


def golden_min(f: Callable[[float], float], lo: float, hi: float, steps: int
               ) -> tuple[float, float]:
    """``(x, f(x))``, the smallest value of ``f`` found by golden-section search on ``[lo,
    hi]`` with ``steps`` narrowings after the first two evaluations (``steps + 2`` in all).

    The interior point kept at each narrowing is the better of the two, so the better of the
    final pair is the best of every evaluation, for any ``f`` (a minimiser when ``f`` is
    unimodal)."""
    a, b = lo, hi
    c, d = b - _RATIO * (b - a), a + _RATIO * (b - a)
    fc, fd = f(c), f(d)
    for _ in range(steps):
        if fc <= fd:
            b, d, fd = d, c, fc
            c = b - _RATIO * (b - a)
            fc = f(c)
        else:
            a, c, fc = c, d, fd
            d = a + _RATIO * (b - a)
            fd = f(d)
    return (c, fc) if fc <= fd else (d, fd)
