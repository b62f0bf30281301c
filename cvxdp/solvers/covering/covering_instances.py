"""Seeded covering instances for tests, benchmarks and demos (public synthetic data)."""

from __future__ import annotations

from typing import Any

import numpy as np

from cvxdp.privacy.rng import as_generator

__all__ = ["random_covering_sdp", "random_covering_lp", "random_covering_socp"]


def random_covering_sdp(m: int, r: int, *, rng: Any = None, k: int = 2,
                        spread: float = 0.15) -> np.ndarray:
    """Seeded test instance: ``A_i = U_i U_i'`` (rank ``k``), columns ``N(0, diag(d))`` with
    ``d = 1`` on two coordinates and ``spread`` on the rest, scaled to ``||A_i|| = 1``; the
    optimum concentrates on two directions, so ``X = c I`` is far from optimal."""
    gen = as_generator(rng)
    scales = np.where(np.arange(r) < min(2, r), 1.0, spread)
    U = gen.standard_normal((m, r, k)) * scales[None, :, None]
    A = np.einsum("mik,mjk->mij", U, U)
    return A / np.linalg.norm(A, 2, axis=(1, 2))[:, None, None]


def random_covering_lp(m: int, n: int, *, rng: Any = None, density: float = 0.8) -> np.ndarray:
    """Seeded test instance: sparse ``A`` with entries ``U(0, 1)``, column ``j`` kept with
    probability ``density * (j+1)/n`` (so some columns are much better than others); rows whose
    sum is below 1 are divided by it, so ``x = 1`` is feasible and ``OPT <= n`` (the default
    ``opt_bounds``)."""
    gen = as_generator(rng)
    keep = gen.uniform(size=(m, n)) < density * (np.arange(1, n + 1) / n)[None, :]
    A = gen.uniform(size=(m, n)) * keep
    rows = np.flatnonzero(A.max(axis=1) == 0)
    A[rows, gen.integers(0, n, size=rows.size)] = gen.uniform(0.5, 1.0, size=rows.size)
    return A / np.minimum(1.0, A.sum(axis=1))[:, None]


def random_covering_socp(m: int, n: int, *, rng: Any = None) -> np.ndarray:
    """Seeded test instance: ``a_i = (1, w_i)/2`` with ``|w_i| <= 1``, ``w_i`` clustered around
    a common direction (so the optimum is far from the axis ``x_bar = 0``)."""
    gen = as_generator(rng)
    center = np.zeros(n - 1)
    center[0] = 1.0
    w = center + 0.6 * gen.standard_normal((m, n - 1)) / np.sqrt(n - 1)
    w /= np.maximum(1.0, np.linalg.norm(w, axis=1))[:, None]
    return np.column_stack([np.ones(m), w]) / 2
