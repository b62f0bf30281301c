"""Audits of cvxdp's built-in mechanisms (what ``cvxdp audit`` runs).

Each case audits a mechanism at its claimed (epsilon, delta) on a worst-case neighbouring pair,
and a deliberately broken twin (noise divided by 4, or epsilon multiplied by 4) that the audit must
catch.  The table this prints is evidence, not proof: see :mod:`cvxdp.audit.auditor`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from cvxdp.audit.auditor import AuditResult, audit_mechanism
from cvxdp.privacy import calibrate_gaussian, exponential_mechanism

__all__ = ["AuditCase", "builtin_cases", "run_builtin_audits"]


@dataclass(frozen=True)
class AuditCase:
    name: str
    mechanism: Callable[[Any, np.random.Generator], Any]
    data: Any
    neighbour: Any
    epsilon: float
    delta: float
    broken: bool  # True for the deliberately under-noised twin (must FAIL the audit)


def _gaussian(eps: float, delta: float, div: float) -> Callable:
    sigma = calibrate_gaussian(epsilon=eps, delta=delta) / div
    return lambda x, g: x + g.normal(0.0, sigma, size=np.shape(x))


def _exponential(eps: float) -> Callable:
    return lambda s, g: exponential_mechanism(s, epsilon=eps, sensitivity=1.0, rng=g)[0]


def _eja_gaussian(eps: float, delta: float, div: float) -> Callable | None:
    try:
        from cvxdp.jordan import SymmetricMatrices, gaussian_mechanism
    except ImportError:  # pragma: no cover - jordan layer not installed
        return None
    J = SymmetricMatrices(3)

    def mech(x: np.ndarray, g: np.random.Generator) -> np.ndarray:
        if div == 1:
            return gaussian_mechanism(x, J, sensitivity=1.0, norm="inf", epsilon=eps,
                                      delta=delta, rng=g)[0]
        # broken twin: the same noise shape with sigma / div
        sigma = calibrate_gaussian(epsilon=eps, delta=delta, sensitivity=np.sqrt(J.rank)) / div
        return x + sigma * J.random_normal(g)

    return mech


def builtin_cases(epsilon: float = 1.0, delta: float = 1e-5) -> list[AuditCase]:
    k = 1000
    s, s2 = np.zeros(k), np.full(k, -1.0)
    s2[0] = 1.0
    cases = [
        AuditCase("gaussian (analytic)", _gaussian(epsilon, delta, 1), 0.0, 1.0, epsilon, delta,
                  False),
        AuditCase("gaussian, sigma/4", _gaussian(epsilon, delta, 4), 0.0, 1.0, epsilon, delta,
                  True),
        AuditCase("exponential", _exponential(epsilon), s, s2, epsilon, 0.0, False),
        AuditCase("exponential, eps*4", _exponential(4 * epsilon), s, s2, epsilon, 0.0, True),
    ]
    eja = _eja_gaussian(epsilon, delta, 1)
    if eja is not None:
        from cvxdp.jordan import SymmetricMatrices

        J = SymmetricMatrices(3)
        x = np.zeros(J.dim)
        # neighbour: spectral-norm distance 1 with maximal Frobenius distance sqrt(3): the identity
        y = J.identity()
        cases += [
            AuditCase("EJA gaussian S^3 (l-inf)", eja, x, y, epsilon, delta, False),
            AuditCase("EJA gaussian S^3, sigma/4", _eja_gaussian(epsilon, delta, 4), x, y,
                      epsilon, delta, True),
        ]
    return cases


def run_builtin_audits(*, n_samples: int = 20000, rng: int = 0, epsilon: float = 1.0,
                       delta: float = 1e-5) -> list[tuple[AuditCase, AuditResult]]:
    out = []
    for i, case in enumerate(builtin_cases(epsilon, delta)):
        res = audit_mechanism(case.mechanism, case.data, case.neighbour, epsilon=case.epsilon,
                              delta=case.delta, n_samples=n_samples, rng=rng + i)
        out.append((case, res))
    return out
