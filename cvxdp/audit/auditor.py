"""Statistical lower bounds on the privacy loss of a mechanism (black-box auditing).

The auditor runs a mechanism many times on two neighbouring inputs D and D' and looks for an
event S that the outputs on one input hit much more often than on the other.  For any event,
(epsilon, delta)-DP implies ``P[M(D) in S] <= e^epsilon P[M(D') in S] + delta``, so

    epsilon >= log((P[M(D) in S] - delta) / P[M(D') in S]).

Both probabilities are replaced by one-sided Clopper--Pearson bounds (lower for the numerator,
upper for the denominator, each at level ``(1 - confidence) / 2``), which makes ``epsilon_lower``
a lower bound on the true privacy loss with probability at least ``confidence`` (Jagielski et al.
2020; Nasr et al. 2021).

Power comes from choosing S well.  The runs are split in two: on the *selection* split the
auditor fits several likelihood-ratio statistics (:mod:`cvxdp.audit.statistics`), and for each
one every threshold event ``{stat > t}`` / ``{stat < t}`` in both directions (D vs D', D' vs D);
it keeps the one whose lower bound, predicted for the held-out sample size, is largest (an
optimal-threshold hockey-stick estimator).  The bound is then computed once, for that single
event, on the *held-out* split, which the choice never saw: this is the two-phase design of Ding
et al. 2018 (events found on one sample, tested on a fresh one) and of DP-Sniper (Bichsel et al.
2021), and it keeps the Clopper--Pearson bound valid whatever the selection did.

An audit can only *refute* a privacy claim: ``passed=True`` means "no violation found at these
sample sizes", not a proof.  When several mechanisms are audited together, correct for
multiplicity (:func:`cvxdp.audit.bounds.family_levels`; ``cvxdp audit`` uses Holm's procedure).

References
----------
Z. Ding, Y. Wang, G. Wang, D. Zhang, D. Kifer, "Detecting Violations of Differential Privacy",
ACM CCS 2018.
M. Jagielski, J. Ullman, A. Oprea, "Auditing Differentially Private Machine Learning: How Private
is Private SGD?", NeurIPS 2020.
M. Nasr, S. Song, A. Thakurta, N. Papernot, N. Carlini, "Adversary Instantiation: Lower Bounds
for Differentially Private Machine Learning", IEEE S&P 2021.
B. Bichsel, S. Steffen, I. Bogunovic, M. Vechev, "DP-Sniper", IEEE S&P 2021.
A. C. Gilbert, A. McMillan, "Property Testing for Differential Privacy", Allerton 2018.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from cvxdp.audit.bounds import (
    clopper_pearson,
    epsilon_lower_bound,
    epsilon_p_value,
    family_levels,
)
from cvxdp.audit.statistics import Statistic, candidate_statistics
from cvxdp.privacy.rng import as_generator

__all__ = ["AuditResult", "audit_family", "audit_mechanism", "audit_outputs", "clopper_pearson",
           "epsilon_lower_bound"]

DEFAULT_SAMPLES = 300_000
DEFAULT_CONFIDENCE = 0.99  # a mechanism that keeps its claim fails with probability <= 1%
_TAIL_RANKS = 1500  # every distinct value this deep in each tail is a candidate threshold
_GRID = 500         # plus this many quantiles in between
_SHADE = 0.05       # one-sided level of the shading of selection counts
_FIT_SHARE = 0.4    # share of the selection split that fits the statistics


@dataclass(frozen=True)
class AuditResult:
    """Outcome of :func:`audit_mechanism` / :func:`audit_outputs`.

    Attributes
    ----------
    epsilon_lower : float
        Lower bound on the mechanism's epsilon at ``delta``, valid with probability at least
        ``confidence`` (0 if nothing found).
    epsilon_claimed, delta : float
    passed : bool
        ``epsilon_lower <= epsilon_claimed``.
    confidence : float
        Probability that ``epsilon_lower`` is a valid lower bound.
    event : str
        The held-out event that gave the bound (e.g. ``"output > 1.23 (D vs D')"``).
    p_hat, q_hat : float
        Empirical probabilities of the event on the two inputs (held-out split), the first on
        the input that hits it more often.
    n_samples : int
        Runs per input (selection and held-out together).
    p_value : float
        p-value of the claim "(epsilon_claimed, delta)-DP" from the held-out event: the smallest
        ``1 - confidence`` at which the audit would fail (for family-wise corrections).
    n_test : int
        Held-out runs per input.
    counts : tuple of int
        ``(k_p, n_p, k_q, n_q)``: held-out hits and runs on the input that hits the event more
        often, then on the other.
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
    p_value: float = 1.0
    n_test: int = 0
    counts: tuple[int, int, int, int] = (0, 1, 0, 1)

    def at_level(self, alpha: float) -> AuditResult:
        """The same held-out event re-evaluated at level ``alpha`` (confidence ``1 - alpha``).

        Valid because the event was fixed before the held-out runs were counted; used by
        :func:`audit_family` to give each audit its family-wise corrected level.
        """
        kp, n_p, kq, n_q = self.counts
        lo = float(epsilon_lower_bound(np.array(kp), np.array(kq), n_p, self.delta, alpha, n_q))
        return replace(self, epsilon_lower=lo, passed=lo <= self.epsilon_claimed,
                       confidence=1.0 - alpha)

    def __repr__(self) -> str:
        verdict = "passed" if self.passed else "FAILED"
        return (f"AuditResult({verdict}: epsilon_lower={self.epsilon_lower:.4g} vs claimed "
                f"{self.epsilon_claimed:.4g} at delta={self.delta:.3g}, confidence="
                f"{self.confidence}, p={self.p_value:.3g}, event={self.event!r}, "
                f"n={self.n_samples})")


def _as_rows(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=float)
    return x.reshape(x.shape[0], -1)


def _thresholds(pooled: np.ndarray) -> np.ndarray:
    """Distinct values deep in both tails (where privacy is lost) and a quantile grid, each
    with the midpoint to the next distinct value (a threshold in the middle of a gap between
    the two inputs' outputs keeps its counts on held-out runs that land near the gap's edge)."""
    v = np.unique(pooled)
    m = v.size
    if m <= 2 * _TAIL_RANKS + _GRID:
        idx = np.arange(m)
    else:
        idx = np.unique(np.concatenate([np.arange(_TAIL_RANKS), m - 1 - np.arange(_TAIL_RANKS),
                                        np.linspace(0, m - 1, _GRID).astype(int)]))
    nxt = idx[idx < m - 1]
    with np.errstate(over="ignore", invalid="ignore"):
        mid = v[nxt] + (v[nxt + 1] - v[nxt]) / 2  # no overflow for huge finite values
    return np.unique(np.concatenate([v[idx], mid[np.isfinite(mid)]]))


def _counts_above_below(s: np.ndarray, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    srt = np.sort(s)
    return s.size - np.searchsorted(srt, t, side="right"), np.searchsorted(srt, t, side="left")


def _predicted_bound(kp: np.ndarray, kq: np.ndarray, sel: tuple[int, int],
                     test: tuple[int, int], delta: float, alpha: float) -> np.ndarray:
    """The held-out bound an event would give, predicted from its selection counts.

    The selection frequencies are first shaded against the event (Clopper--Pearson bounds at
    level ``_SHADE`` on the selection split): the best of thousands of events is optimistic,
    most of all deep in a tail where it rests on a handful of hits, and shading prefers events
    whose advantage is reproducible.
    """
    p_sel = clopper_pearson(kp, sel[0], _SHADE, "lower")
    q_sel = clopper_pearson(kq, sel[1], _SHADE, "upper")
    return epsilon_lower_bound(p_sel * test[0], q_sel * test[1], test[0], delta, alpha, test[1])


def _scalar(stat: Statistic, x: np.ndarray) -> np.ndarray:
    s = np.asarray(stat.fn(x), dtype=float)
    return np.where(np.isnan(s), -np.inf, s)


def audit_outputs(
    out_d: Any,
    out_neighbour: Any,
    *,
    epsilon: float,
    delta: float,
    confidence: float = DEFAULT_CONFIDENCE,
    selection_fraction: float = 0.25,
) -> AuditResult:
    """Lower-bound epsilon from outputs already drawn on D and on D'.

    Use this directly when the mechanism can be sampled in bulk (e.g. a vectorised sampler with
    the same distribution): more runs are the cheapest source of power.

    Parameters
    ----------
    out_d, out_neighbour : array_like, shape (n, ...) and (n', ...)
        Independent runs of the mechanism on D and on D' (scalars or arrays per run).
    epsilon, delta : float
        The claimed guarantee.
    confidence : float
        ``epsilon_lower`` is a valid lower bound with at least this probability (a mechanism
        that keeps its claim fails with probability at most ``1 - confidence``).
    selection_fraction : float
        Share of the runs (the first ones) used to choose the statistic and event; the rest
        estimate it.

    Returns
    -------
    AuditResult
    """
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    if not 0 < selection_fraction < 1:
        raise ValueError(f"selection_fraction must be in (0, 1), got {selection_fraction}")
    a, b = _as_rows(out_d), _as_rows(out_neighbour)
    if a.shape[1] != b.shape[1]:
        raise ValueError(f"outputs on D and D' differ in size: {a.shape[1]} vs {b.shape[1]}")
    if min(a.shape[0], b.shape[0]) < 100:
        raise ValueError("n_samples must be >= 100 for a meaningful audit.")
    alpha = 1 - confidence
    sel = (int(round(selection_fraction * a.shape[0])), int(round(selection_fraction * b.shape[0])))
    test = (a.shape[0] - sel[0], b.shape[0] - sel[1])
    a_test, b_test = a[sel[0]:], b[sel[1]:]
    # the statistics are fitted on the first part of the selection split and their thresholds
    # chosen on the rest, so that a statistic's own overfitting (e.g. an outcome that looked
    # rare on D by chance) does not steer the choice of event
    # (a statistic that is not fitted, like the output itself, uses the whole selection split)
    fit = (max(int(_FIT_SHARE * sel[0]), 1), max(int(_FIT_SHARE * sel[1]), 1))
    best: tuple[float, Statistic, str, float, bool] | None = None
    for stat in candidate_statistics(a[: fit[0]], b[: fit[1]]):
        start = fit if stat.fitted else (0, 0)
        sa, sb = _scalar(stat, a[start[0]: sel[0]]), _scalar(stat, b[start[1]: sel[1]])
        n_sel = (sel[0] - start[0], sel[1] - start[1])
        t = _thresholds(np.concatenate([sa, sb]))
        above_a, below_a = _counts_above_below(sa, t)
        above_b, below_b = _counts_above_below(sb, t)
        for op, ka, kb in ((">", above_a, above_b), ("<", below_a, below_b)):
            for forward in (True, False):  # forward: D hits the event more often than D'
                kp, kq = (ka, kb) if forward else (kb, ka)
                sp, sq = (n_sel, test) if forward else (n_sel[::-1], test[::-1])
                score = _predicted_bound(kp, kq, sp, sq, delta, alpha)
                # among equally good thresholds (a gap between the outputs) the middle one
                ties = np.flatnonzero(score >= score.max())
                i = int(ties[ties.size // 2])
                if best is None or score[i] > best[0]:
                    best = (float(score[i]), stat, op, float(t[i]), forward)
    if best is None:  # pragma: no cover - candidate_statistics always returns one statistic
        raise RuntimeError("no candidate statistic for these outputs")
    _, stat, op, thr, forward = best
    sa, sb = _scalar(stat, a_test), _scalar(stat, b_test)
    ka = int(np.count_nonzero(sa > thr if op == ">" else sa < thr))
    kb = int(np.count_nonzero(sb > thr if op == ">" else sb < thr))
    kp, kq, n_p, n_q = (ka, kb, *test) if forward else (kb, ka, *test[::-1])
    order = "D vs D'" if forward else "D' vs D"
    eps_lo = float(epsilon_lower_bound(np.array(kp), np.array(kq), n_p, delta, alpha, n_q))
    return AuditResult(
        epsilon_lower=eps_lo,
        epsilon_claimed=float(epsilon),
        delta=float(delta),
        passed=eps_lo <= epsilon,
        confidence=confidence,
        event=f"{stat.name} {op} {thr:.6g} ({order})",
        p_hat=kp / n_p,
        q_hat=kq / n_q,
        n_samples=int(a.shape[0]),
        p_value=epsilon_p_value(kp, kq, n_p, n_q, delta, epsilon),
        n_test=int(test[0]),
        counts=(kp, int(n_p), kq, int(n_q)),
    )


def audit_mechanism(
    mechanism: Callable[[Any, np.random.Generator], Any],
    data: Any,
    neighbour: Any,
    *,
    epsilon: float,
    delta: float,
    n_samples: int = DEFAULT_SAMPLES,
    rng: None | int | np.random.Generator = None,
    statistic: Callable[[Any], float] | None = None,
    confidence: float = DEFAULT_CONFIDENCE,
    selection_fraction: float = 0.25,
) -> AuditResult:
    """Estimate a high-confidence lower bound on a mechanism's epsilon at ``delta``.

    Parameters
    ----------
    mechanism : callable
        ``mechanism(data, rng) -> output`` (scalar, array, or anything ``statistic`` maps to a
        float).  It must draw all its randomness from ``rng``.
    data, neighbour : any
        Two neighbouring inputs (build worst-case pairs with :mod:`cvxdp.audit.neighbours`).
    epsilon, delta : float
        The claimed guarantee.
    n_samples : int
        Runs per input.  The default 300,000 catches a Gaussian mechanism run at sigma/2 and an
        exponential mechanism (1000 candidates) run at 1.5 epsilon, each in under 30 s of
        sampling; pass fewer for an expensive mechanism, at a loss of power.
    rng : None, int or Generator
    statistic : callable, optional
        Maps an output to a float (a tuned test statistic, e.g. the log-likelihood ratio when
        the output's distribution is known).  Default: the auditor fits its own candidates
        (:mod:`cvxdp.audit.statistics`) on the selection split.
    confidence : float
        The returned bound is valid with at least this probability, so a mechanism that keeps
        its claim fails the audit with probability at most ``1 - confidence`` (default 0.99:
        false alarms at most 1%).
    selection_fraction : float
        Share of the runs used to choose the statistic and event (the rest estimate it).

    Returns
    -------
    AuditResult

    References
    ----------
    Ding et al., "Detecting Violations of Differential Privacy", CCS 2018 (select on one sample,
    test on a fresh one); Jagielski, Ullman & Oprea, NeurIPS 2020 and Nasr et al., IEEE S&P 2021
    (Clopper--Pearson lower bounds on epsilon); Bichsel et al., "DP-Sniper", IEEE S&P 2021
    (thresholded likelihood-ratio estimates as rejection sets).
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
        return np.asarray(outs, dtype=float)

    a, b = run(data), run(neighbour)
    return audit_outputs(a, b, epsilon=epsilon, delta=delta, confidence=confidence,
                         selection_fraction=selection_fraction)


def audit_family(results: Sequence[AuditResult], *, family_level: float = 0.05,
                 correction: str = "holm") -> list[AuditResult]:
    """Re-level several audits so that the chance of *any* false alarm is at most
    ``family_level``.

    Auditing m mechanisms at 95% each raises a false alarm on some honest one with probability
    up to ``1 - 0.95^m``.  Each audit's p-value (:attr:`AuditResult.p_value`) goes through
    Bonferroni (every audit at ``family_level / m``) or Holm's step-down procedure (the j-th
    smallest p-value at ``family_level / (m - j + 1)``, stopping at the first audit that
    passes), and each result is re-evaluated at its level (:meth:`AuditResult.at_level`).

    Parameters
    ----------
    results : sequence of AuditResult
        One audit per mechanism, each on its own runs.  Running them with
        ``confidence = 1 - family_level / m`` makes each event's choice aim at the strictest
        level it may face.
    family_level : float
        Family-wise error rate.
    correction : {"holm", "bonferroni"}

    Returns
    -------
    list of AuditResult
        In the input order; ``confidence`` is ``1 -`` the audit's level.

    References
    ----------
    Holm, "A simple sequentially rejective multiple test procedure", Scand. J. Statist. 1979.
    """
    if not 0 < family_level < 1:
        raise ValueError(f"family_level must be in (0, 1), got {family_level}")
    levels, _ = family_levels([r.p_value for r in results], family_level, correction)
    return [r.at_level(float(lv)) for r, lv in zip(results, levels, strict=True)]
