"""The one place where ``rng=`` arguments become a :class:`numpy.random.Generator`."""

from __future__ import annotations

import numbers

import numpy as np

__all__ = ["as_generator", "RNGLike"]

RNGLike = "None | int | numpy.random.Generator"


def as_generator(rng: None | int | np.random.Generator = None) -> np.random.Generator:
    """Turn ``rng`` into a :class:`numpy.random.Generator`.

    Parameters
    ----------
    rng : None, int or numpy.random.Generator
        ``None`` seeds a fresh generator from OS entropy (what a deployment should use); an int
        seeds a PCG64 generator deterministically (same seed, same output, bit for bit); a
        Generator is used as is (and advanced by the caller's draws).

    Raises
    ------
    TypeError
        For anything else, including the legacy ``numpy.random.RandomState``.
    """
    if rng is None:
        return np.random.default_rng()
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, numbers.Integral) and not isinstance(rng, bool):
        if rng < 0:
            raise TypeError(f"rng seed must be a non-negative integer, got {rng}.")
        return np.random.default_rng(int(rng))
    raise TypeError(
        f"rng must be None, a non-negative int seed or a numpy.random.Generator, got "
        f"{type(rng).__name__}. Use numpy.random.default_rng(seed) to make one."
    )
