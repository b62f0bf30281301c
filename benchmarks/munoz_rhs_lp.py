"""Re-implementation of the private right-hand-side LP mechanism of Munoz, Syed, Vassilvitskii &
Vitercik, "Private optimization without constraint violations" (AISTATS 2021), for comparison
with ``mechanism="perturbation"`` (issue 23).

Problem: ``max c'x  s.t.  A x <= b(D)`` (plus public constraints), ``A`` and ``c`` public,
``b(D)`` private with l1 sensitivity ``Delta_1 = max ||b(D) - b(D')||_1``.

Mechanism (as we read the paper): add i.i.d. truncated Laplace noise ``eta_i`` with scale
``Delta_1 / epsilon`` and support ``[-s, s]``,

    ``s = (Delta_1 / epsilon) ln(m (e^epsilon - 1) / delta + 1)``,

to every entry of ``b`` and shift it down by ``s``: ``b_bar = b + eta - s 1``.  Since
``eta <= s``, ``b_bar <= b`` entrywise, so the exact solution of ``max c'x  s.t.  A x <= b_bar``
is feasible for the true ``b`` with certainty; the release is ``(epsilon, delta)``-DP (their
theorem; the per-coordinate truncation mass is ``delta / m``).  With cvxdp's declaration (every
entry moves by at most ``Delta``), ``Delta_1 = m Delta``.

This file is a benchmark baseline, not part of the library: its privacy claim is the paper's,
not re-derived here.
"""

from __future__ import annotations

import math
from typing import Any

import cvxpy as cp
import numpy as np

__all__ = ["truncated_laplace", "munoz_rhs_lp"]


def truncated_laplace(scale: float, s: float, size: int, rng: np.random.Generator) -> np.ndarray:
    """i.i.d. Laplace(0, scale) conditioned on ``[-s, s]`` (inverse CDF of the truncated law)."""
    u = rng.uniform(size=size)
    mass = 1.0 - math.exp(-s / scale)  # P(|L| <= s)
    # |eta| has density prop. to exp(-t/scale) on [0, s]; the sign is a fair coin
    t = -scale * np.log1p(-u * mass)
    sign = np.where(rng.uniform(size=size) < 0.5, -1.0, 1.0)
    return sign * t


def munoz_rhs_lp(c: np.ndarray, A: np.ndarray, b: np.ndarray, public: list[Any],
                 x: cp.Variable, *, sensitivity_l1: float, epsilon: float, delta: float,
                 rng: np.random.Generator, maximize: bool = True) -> tuple[np.ndarray | None,
                                                                           dict]:
    """Solve ``max (or min) c'x s.t. A x <= b_bar, public`` with the shifted truncated Laplace b.

    Returns
    -------
    x : ndarray or None (the shifted LP has no point)
    info : dict with ``s`` and ``scale``
    """
    m = b.size
    scale = sensitivity_l1 / epsilon
    s = scale * math.log(m * (math.exp(epsilon) - 1.0) / delta + 1.0)
    b_bar = b + truncated_laplace(scale, s, m, rng) - s
    obj = cp.Maximize(c @ x) if maximize else cp.Minimize(c @ x)
    prob = cp.Problem(obj, [A @ x <= b_bar, *public])
    try:
        prob.solve(solver=cp.CLARABEL)
    except cp.error.SolverError:
        return None, {"s": s, "scale": scale, "status": "solver_error"}
    if prob.status not in ("optimal", "optimal_inaccurate"):
        return None, {"s": s, "scale": scale, "status": prob.status}
    return np.asarray(x.value), {"s": s, "scale": scale, "status": prob.status}
