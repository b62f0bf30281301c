"""Audits of cvxdp's built-in mechanisms and solvers (what ``cvxdp audit`` runs).

Each case audits a mechanism at its claimed (epsilon, delta) on a worst-case neighbouring pair,
next to deliberately broken twins that the audit must catch: for the primitives a grossly broken
one (noise divided by 4, or epsilon multiplied by 4) and a subtle one (noise divided by 2, or
epsilon multiplied by 1.5); for every solver an end-to-end case through its public entry point
with a bug planted inside the solver's call (:mod:`cvxdp.audit.solver_cases`).  The audits form
one family: their levels are corrected (Holm by default, or Bonferroni) so that the chance of a
false alarm on any honest mechanism is at most the family-wise level.  The table this prints is
evidence, not proof: see :mod:`cvxdp.audit.auditor`.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from typing import Any

import numpy as np

from cvxdp.audit.auditor import AuditResult, audit_family, audit_mechanism
from cvxdp.audit.learning_cases import learning_cases
from cvxdp.audit.solver_cases import solver_cases
from cvxdp.jordan import SymmetricMatrices, gaussian_mechanism
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
    n_samples: int = 300_000  # runs per input by default (the EJA mechanism is slow: fewer)
    slow: bool = False  # only with run_builtin_audits(slow=True) / cvxdp audit --slow


def _gaussian(eps: float, delta: float, div: float) -> Callable:
    sigma = calibrate_gaussian(epsilon=eps, delta=delta) / div
    return lambda x, g: x + g.normal(0.0, sigma, size=np.shape(x))


def _exponential(eps: float) -> Callable:
    return lambda s, g: exponential_mechanism(s, epsilon=eps, sensitivity=1.0, rng=g)[0]


def _eja_gaussian(eps: float, delta: float, div: float) -> Callable:
    J = SymmetricMatrices(3)

    def mech(x: np.ndarray, g: np.random.Generator) -> np.ndarray:
        if div == 1:
            return gaussian_mechanism(x, J, sensitivity=1.0, norm="inf", epsilon=eps,
                                      delta=delta, rng=g)[0]
        # broken twin: the same noise shape with sigma / div
        sigma = calibrate_gaussian(epsilon=eps, delta=delta, sensitivity=np.sqrt(J.rank)) / div
        return x + sigma * J.random_normal(g)

    return mech


def builtin_cases(epsilon: float = 1.0, delta: float = 1e-5, *, slow: bool = True
                  ) -> list[AuditCase]:
    """The audited mechanisms and solvers, each on a worst-case neighbouring pair, with broken
    twins; ``slow=False`` leaves out the slow cases (``AuditCase.slow``)."""
    k = 1000
    s, s2 = np.zeros(k), np.full(k, -1.0)
    s2[0] = 1.0  # every score moves by the sensitivity 1 (the worst case)
    g = 300_000   # Gaussian: sigma/2 is caught with room at Holm's strictest level
    e = 300_000   # exponential, 1000 candidates (~28 us a run): eps*1.5 shows only on one index
    cases = [
        AuditCase("gaussian (analytic)", _gaussian(epsilon, delta, 1), 0.0, 1.0, epsilon, delta,
                  False, g),
        AuditCase("gaussian, sigma/4", _gaussian(epsilon, delta, 4), 0.0, 1.0, epsilon, delta,
                  True, g),
        AuditCase("gaussian, sigma/2", _gaussian(epsilon, delta, 2), 0.0, 1.0, epsilon, delta,
                  True, g),
        AuditCase("exponential", _exponential(epsilon), s, s2, epsilon, 0.0, False, e),
        AuditCase("exponential, eps*4", _exponential(4 * epsilon), s, s2, epsilon, 0.0, True, e),
        AuditCase("exponential, eps*1.5", _exponential(1.5 * epsilon), s, s2, epsilon, 0.0, True,
                  e),
    ]
    J = SymmetricMatrices(3)
    x = np.zeros(J.dim)
    # neighbour: spectral-norm distance 1 with maximal Frobenius distance sqrt(3): the identity
    y = J.identity()
    cases += [
        AuditCase("EJA gaussian S^3 (l-inf)", _eja_gaussian(epsilon, delta, 1), x, y, epsilon,
                  delta, False, 20_000),
        AuditCase("EJA gaussian S^3, sigma/4", _eja_gaussian(epsilon, delta, 4), x, y,
                  epsilon, delta, True, 20_000),
    ]
    cases += [AuditCase(c.name, c.mechanism, c.data, c.neighbour, c.epsilon, c.delta, c.broken,
                        c.n_samples, c.slow)
              for c in solver_cases(epsilon, delta) + learning_cases(epsilon, delta)]
    return [c for c in cases if slow or not c.slow]


def run_builtin_audits(*, n_samples: int | None = None, rng: int = 0, epsilon: float = 1.0,
                       delta: float = 1e-5, family_level: float = 0.05,
                       correction: str = "holm", names: Sequence[str] | None = None,
                       slow: bool = False, progress: Callable[[str], None] | None = None,
                       jobs: int = 1) -> list[tuple[AuditCase, AuditResult]]:
    """Audit the built-in mechanisms as one family.

    Parameters
    ----------
    n_samples : int, optional
        Runs per input for every case (default: each case's own ``n_samples``).
    rng : int
        Case ``i`` uses seed ``rng + i``.
    epsilon, delta : float
        The claim every case is audited against.
    family_level : float
        Probability of a false alarm on any honest mechanism (family-wise error rate).
    correction : {"holm", "bonferroni"}
        How the family-wise level is split (:func:`cvxdp.audit.audit_family`).
    names : sequence of str, optional
        Audit only these cases (the family is then these cases; slow ones may be named).
    slow : bool
        Also run the slow cases (the solvers' noise-halved twins, 10^5 runs each).
    progress : callable, optional
        Called with a line as each case starts (one process) and ends (``cvxdp audit`` prints
        them to stderr).
    jobs : int
        Processes that run the cases (each case keeps its seed, so the results do not depend
        on ``jobs``).

    Raises
    ------
    ValueError
        For a name that is not a case; the message lists the known names.

    Returns
    -------
    list of (AuditCase, AuditResult)
        Each result at its corrected level (``1 - result.confidence``).
    """
    key = (float(epsilon), float(delta), None if names is None else tuple(names), bool(slow))
    cases = _selected(*key)
    strictest = 1.0 - family_level / max(len(cases), 1)
    say = progress if progress is not None else (lambda line: None)
    m, start = len(cases), time.perf_counter()
    args = [(key, i, n_samples, rng + i, strictest) for i in range(m)]
    raw: list[AuditResult | None] = [None] * m

    def done(i: int, res: AuditResult, seconds: float, k: int) -> None:
        raw[i] = res
        say(f"[{k}/{m}] {cases[i].name}: eps lower bound {res.epsilon_lower:.3g} at level "
            f"{1 - strictest:.2g} ({seconds:.1f} s; {time.perf_counter() - start:.0f} s in all)")

    if jobs <= 1 or m <= 1:
        for i in range(m):
            say(f"[{i + 1}/{m}] {cases[i].name}: 2 x {_runs(cases[i], n_samples)} runs ...")
            done(i, *_audit_case(*args[i]), i + 1)
    else:  # the cases hold closures: each worker rebuilds them and runs one by its index
        say(f"{m} audits on {jobs} processes; a line as each one ends")
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            futures = {pool.submit(_audit_case, *a): a[1] for a in args}
            for k, fut in enumerate(as_completed(futures), start=1):
                done(futures[fut], *fut.result(), k)
    results = audit_family([r for r in raw if r is not None], family_level=family_level,
                           correction=correction)
    return list(zip(cases, results, strict=True))


def _runs(case: AuditCase, n_samples: int | None) -> int:
    return case.n_samples if n_samples is None else n_samples


@functools.lru_cache(maxsize=4)
def _selected(epsilon: float, delta: float, names: tuple[str, ...] | None, slow: bool
              ) -> list[AuditCase]:
    """The cases of one family, in order (built once per process: the solver cases solve
    their exact references when built)."""
    cases = builtin_cases(epsilon, delta, slow=True)
    if names is not None:
        unknown = set(names) - {c.name for c in cases}
        if unknown:
            raise ValueError(f"unknown audit cases {sorted(unknown)}; known: "
                             f"{[c.name for c in cases]}")
        return [c for c in cases if c.name in set(names)]
    return [c for c in cases if slow or not c.slow]


def _audit_case(key: tuple, index: int, n_samples: int | None, seed: int, confidence: float
                ) -> tuple[AuditResult, float]:
    """Audit case ``index`` of the family ``key`` (in this process or a worker)."""
    case = _selected(*key)[index]
    t0 = time.perf_counter()
    res = audit_mechanism(case.mechanism, case.data, case.neighbour, epsilon=case.epsilon,
                          delta=case.delta, n_samples=_runs(case, n_samples), rng=seed,
                          confidence=confidence)
    return res, time.perf_counter() - t0
