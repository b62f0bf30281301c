"""Statistical lower bounds on the privacy loss of a mechanism (black-box auditing).

The auditor runs a mechanism many times on two neighbouring inputs, maps each output to a scalar,
and looks for an event S that the outputs on one input hit much more often than on the other.
For any event, (epsilon, delta)-DP implies ``P[M(D) in S] <= e^epsilon P[M(D') in S] + delta``, so

    epsilon >= log((P[M(D) in S] - delta) / P[M(D') in S]).

Both probabilities are replaced by one-sided Clopper--Pearson bounds (lower for the numerator,
upper for the denominator, each at level ``(1 - confidence) / 2``), which makes ``epsilon_lower`` a
lower bound on the true privacy loss with probability at least ``confidence``.  The event is
chosen on a separate *selection* split of the samples and evaluated on the held-out split, so the
selection does not bias the bound (the histogram tester of Gilbert & McMillan 2018, "Property
testing for differential privacy", in its simplest form; also Jagielski et al. 2020).

An audit can only *refute* a privacy claim: ``passed=True`` means "no violation found at these
sample sizes", not a proof.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from cvxdp.privacy.rng import as_generator

__all__ = ["AuditResult", "audit_mechanism", "clopper_pearson", "epsilon_lower_bound"]


@dataclass(frozen=True)
class AuditResult:
    """Outcome of :func:`audit_mechanism`.

    Attributes
    ----------
    epsilon_lower : float
        High-confidence lower bound on the mechanism's epsilon at ``delta`` (0 if nothing found).
    epsilon_claimed, delta : float
    passed : bool
        ``epsilon_lower <= epsilon_claimed``.
    confidence : float
        Probability that ``epsilon_lower`` is a valid lower bound.
    event : str
        The event that gave the bound (e.g. ``"stat > 1.23 (D vs D')"``).
    p_hat, q_hat : float
        Empirical probabilities of the event on the two inputs (held-out split).
    n_samples : int
        Runs per input.
    """

    epsilon_lower: float
    epsilon_claimed: float
    delta: float
    passed: bool
    confidence: float
    event: str
    p_hat: float
    q_hat: float
    n_samples: int

    def __repr__(self) -> str:
        verdict = "passed" if self.passed else "FAILED"
        return (f"AuditResult({verdict}: epsilon_lower={self.epsilon_lower:.4g} vs claimed "
                f"{self.epsilon_claimed:.4g} at delta={self.delta:.3g}, confidence="
                f"{self.confidence}, event={self.event!r}, n={self.n_samples})")


def clopper_pearson(k: np.ndarray, n: int, alpha: float, side: str) -> np.ndarray:
    """One-sided Clopper--Pearson bound on a binomial proportion at level ``alpha``."""
    k = np.asarray(k, dtype=float)
    if side == "lower":
        return np.where(k > 0, stats.beta.ppf(alpha, np.maximum(k, 1e-300), n - k + 1), 0.0)
    return np.where(k < n, stats.beta.ppf(1 - alpha, k + 1, np.maximum(n - k, 1e-300)), 1.0)


def epsilon_lower_bound(kp: np.ndarray, kq: np.ndarray, n: int, delta: float, alpha: float
                        ) -> np.ndarray:
    """``log((p_lower - delta) / q_upper)`` for event counts ``kp`` (on D) and ``kq`` (on D')."""
    p_lo = clopper_pearson(kp, n, alpha / 2, "lower")
    q_hi = clopper_pearson(kq, n, alpha / 2, "upper")
    num = p_lo - delta
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(num > 0, np.log(num / q_hi), 0.0)
    return np.maximum(out, 0.0)


def _to_scalars(outs: np.ndarray, direction: np.ndarray | None) -> np.ndarray:
    if outs.ndim == 1:
        return outs
    return outs @ direction


def _events(train_a: np.ndarray, train_b: np.ndarray, max_thresholds: int
            ) -> list[tuple[str, float]]:
    pooled = np.concatenate([train_a, train_b])
    uniq, counts = np.unique(pooled, return_counts=True)
    events: list[tuple[str, float]] = []
    if uniq.size <= 64 or np.all(pooled == np.round(pooled)):
        # discrete output: singletons of the most frequent values (and tails below)
        events += [("==", v) for v in uniq[np.argsort(counts)[::-1][:64]]]
    qs = np.quantile(pooled, np.linspace(0.0, 1.0, max_thresholds + 2)[1:-1])
    # extreme tails matter most for privacy: add thresholds deep in both tails
    tail = np.sort(pooled)
    for k in (1, 2, 5, 10, 20, 50, 100):
        if k < tail.size:
            qs = np.append(qs, [tail[k], tail[-k - 1]])
    for t in np.unique(qs):
        events += [(">", t), ("<", t)]
    return events


def _hits(x: np.ndarray, op: str, t: float) -> int:
    if op == "==":
        return int(np.count_nonzero(x == t))
    if op == ">":
        return int(np.count_nonzero(x > t))
    return int(np.count_nonzero(x < t))


def audit_mechanism(
    mechanism: Callable[[Any, np.random.Generator], Any],
    data: Any,
    neighbour: Any,
    *,
    epsilon: float,
    delta: float,
    n_samples: int = 20000,
    rng: None | int | np.random.Generator = None,
    statistic: Callable[[Any], float] | None = None,
    confidence: float = 0.95,
    selection_fraction: float = 0.2,
    max_thresholds: int = 60,
) -> AuditResult:
    """Estimate a high-confidence lower bound on a mechanism's epsilon at ``delta``.

    Parameters
    ----------
    mechanism : callable
        ``mechanism(data, rng) -> output`` (scalar, vector, or anything ``statistic`` maps to a
        float).  It must draw all its randomness from ``rng``.
    data, neighbour : any
        Two neighbouring inputs (build worst-case pairs with :mod:`cvxdp.audit.neighbours`).
    epsilon, delta : float
        The claimed guarantee.
    n_samples : int
        Runs per input.
    rng : None, int or Generator
    statistic : callable, optional
        Maps an output to a float.  Default: the output itself for scalars; for vectors, the
        projection on the difference of the two empirical means on the selection split.
    confidence : float
        The returned bound is valid with at least this probability.
    selection_fraction : float
        Share of the runs used to choose the event (the rest estimate it).

    Returns
    -------
    AuditResult

    References
    ----------
    A. C. Gilbert, A. McMillan, "Property Testing for Differential Privacy", Allerton 2018;
    M. Jagielski, J. Ullman, A. Oprea, "Auditing Differentially Private Machine Learning", 2020.
    """
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    if n_samples < 100:
        raise ValueError("n_samples must be >= 100 for a meaningful audit.")
    gen = as_generator(rng)

    def run(x: Any) -> np.ndarray:
        outs = [mechanism(x, gen) for _ in range(n_samples)]
        if statistic is not None:
            return np.array([float(statistic(o)) for o in outs])
        arr = np.asarray(outs, dtype=float)
        return arr.reshape(n_samples, -1) if arr.ndim > 1 else arr

    a, b = run(data), run(neighbour)
    n_sel = int(round(selection_fraction * n_samples))
    n_test = n_samples - n_sel
    direction = None
    if a.ndim > 1:
        direction = a[:n_sel].mean(axis=0) - b[:n_sel].mean(axis=0)
        nrm = np.linalg.norm(direction)
        direction = direction / nrm if nrm > 0 else np.eye(a.shape[1])[0]
    sa, sb = _to_scalars(a, direction), _to_scalars(b, direction)
    alpha = 1 - confidence
    events = _events(sa[:n_sel], sb[:n_sel], max_thresholds)
    best, best_score = None, -np.inf
    for op, t in events:
        ka, kb = _hits(sa[:n_sel], op, t), _hits(sb[:n_sel], op, t)
        for name, kp, kq in (("D vs D'", ka, kb), ("D' vs D", kb, ka)):
            # selection uses a loose level: it only ranks events, the bound comes from held-out runs
            score = float(epsilon_lower_bound(np.array(kp), np.array(kq), n_sel, delta, 0.5))
            if score > best_score:
                best_score, best = score, (op, t, name)
    op, t, name = best
    ka, kb = _hits(sa[n_sel:], op, t), _hits(sb[n_sel:], op, t)
    kp, kq = (ka, kb) if name == "D vs D'" else (kb, ka)
    eps_lo = float(epsilon_lower_bound(np.array(kp), np.array(kq), n_test, delta, alpha))
    return AuditResult(
        epsilon_lower=eps_lo,
        epsilon_claimed=float(epsilon),
        delta=float(delta),
        passed=eps_lo <= epsilon,
        confidence=confidence,
        event=f"stat {op} {t:.6g} ({name})",
        p_hat=kp / n_test,
        q_hat=kq / n_test,
        n_samples=n_samples,
    )
