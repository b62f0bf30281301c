"""The certificate of a private covering answer, from released quantities and public data only.

The released point is ``X = c P_bar`` (``P_bar`` the dense MWU's average, ``c`` the private
trace).  Its objective is ``c`` exactly (unit-trace ``P_bar``; public).  Two noisy statistics,
charged to the budget (``CERT_FRACTION``: a third to the count, two to the dual pair; basic
composition splits epsilon, zCDP splits rho), bound the rest:

1. **Rows left short.**  ``N = #{i : c <A_i, P_bar> < 1 - VIOLATION_TOL}`` has sensitivity 1
   under add/remove of a row; ``N~ = N + Laplace(1 / eps_count)``.  On the event ``N <= N~ + t``
   (one-sided Laplace tail, probability ``1 - beta/3``) at most ``floor(N~ + t)`` rows are short;
   when that is at most ``ceil(s) - 1`` (the rows the dense MWU may leave out), every other row
   is covered to ``1 - VIOLATION_TOL``.  Otherwise the bound is 1 (coverage is never negative
   on the public domain).
2. **A lower bound on OPT (weak duality).**  For any ``y >= 0`` on the rows,
   ``y / lambda_max(sum_i y_i A_i)`` is feasible for the dual ``max 1'y s.t. sum_i y_i A_i <= e``
   (``lambda_max`` in the algebra: the largest eigenvalue, the largest entry for the LP,
   ``a_0 + ||a_bar||`` for the spin factor), so ``OPT >= mu / lambda`` with ``mu = 1'y``.  We
   take ``y`` the mean of the played distributions over the second half of the rounds (the
   first half starts from uniform weights, far from the equilibrium).  Given the released
   history, a neighbour's played distributions differ on shared actions by the projection's
   cap only (Lemma B.6): ``mu`` moves by at most ``1/s`` (within ``[0, 1/s]``) and ``lambda``
   by at most ``1/s`` (the change is ``sum_shared (y'_f - y_f) A_f + y'_{f'} A_{f'}``, between
   ``-I/s`` and ``I/s`` because every ``0 <= A_f <= I`` and the shared mass lost equals
   ``y'_{f'} <= 1/s``), so the pair has l1 sensitivity ``2/s``: ``Laplace(2 / (s eps_dual))``
   on each coordinate is ``eps_dual``-DP.  On the two one-sided tail events
   (``1 - beta/3`` each), ``OPT >= (mu~ - t) / (lambda~ + t)``.

Together, with probability ``1 - beta``: relative gap ``<= (c - OPT_lower) / max(1, OPT_lower)``
and violation ``<= VIOLATION_TOL`` on all but ``ceil(s) - 1`` rows.  The bounds speak of the rows
as the mechanism sees them, projected into the public domain (``project_rows``): for a row with
entries in ``[0, 1]`` (LP) or ``0 <= A <= I`` (SDP) that is the TRUE row.

References
----------
Song, Xue & Zhang (2025), Lemma B.6 (dense projections of neighbours), Thm B.7; Dwork, McSherry,
Nissim & Smith 2006 (Laplace mechanism); Boyd & Vandenberghe 2004, Sec. 5.2 (weak duality).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from cvxdp.privacy.laplace import laplace_record
from cvxdp.solution import Certificate
from cvxdp.solvers.covering.covering_private import covering_coverage

__all__ = ["VIOLATION_TOL", "CERTIFICATE_BOUND", "algebra_lambda_max",
           "release_certificate_statistics", "covering_certificate"]

#: shortfall below which a row counts as covered in the released count (float round-off of
#: ``c <A_i, P_bar>`` at the private trace's grid point)
VIOLATION_TOL = 1e-9
#: the certificate's construction (docs/covering.md, "Certificate")
CERTIFICATE_BOUND = ("noisy count of the rows the released point leaves short, and weak duality "
                     "at the dense MWU's mean distribution released with Laplace noise "
                     "(docs/covering.md, 'Certificate'; Song, Xue & Zhang 2025, Lemma B.6)")


def algebra_lambda_max(kind: str, data: np.ndarray, y: np.ndarray) -> float:
    """Largest eigenvalue of ``sum_i y_i A_i`` in the algebra of the covering program."""
    if kind == "sdp":
        return float(np.linalg.eigvalsh(np.tensordot(y, data, axes=1))[-1])
    if kind == "soc":
        v = y @ data
        return float(v[0] + np.linalg.norm(v[1:]))
    return float(np.max(y @ data))


def release_certificate_statistics(kind: str, data: np.ndarray, P: np.ndarray, trace: float,
                                   y_average: np.ndarray, sched: Any,
                                   rng: np.random.Generator, accountant: Any
                                   ) -> dict[str, float]:
    """Release the certificate's noisy statistics (module doc), spent from ``accountant``.

    Returns the released numbers only: ``short_noisy``, ``mu_noisy``, ``lambda_noisy`` and the
    Laplace scales ``scale_count``, ``scale_dual``.
    """
    m = data.shape[0]
    eps_count, eps_dual = sched.eps_count, sched.eps_dual
    short = int(np.sum(trace * covering_coverage(kind, data, P) < 1.0 - VIOLATION_TOL))
    l1 = 2.0 / sched.s
    rec_c = laplace_record(scale=1.0 / eps_count, l1_sensitivity=1.0,
                           mechanism="laplace (covering certificate: rows left short)")
    rec_d = laplace_record(scale=l1 / eps_dual, l1_sensitivity=l1,
                           mechanism="laplace (covering certificate: dual pair)")
    accountant.spend(rec_c)
    accountant.spend(rec_d)
    y = y_average[:m]  # the dummy actions carry no matrix
    mu, lam = float(y.sum()), algebra_lambda_max(kind, data, y)
    noise = rng.laplace(0.0, 1.0, size=3)
    return {"short_noisy": short + noise[0] / eps_count,
            "mu_noisy": mu + noise[1] * l1 / eps_dual,
            "lambda_noisy": lam + noise[2] * l1 / eps_dual,
            "scale_count": 1.0 / eps_count, "scale_dual": l1 / eps_dual}


def covering_certificate(stats: dict[str, float], trace: float, s: float, beta: float
                         ) -> Certificate:
    """The certificate (normalised units: objective ``1'x`` / ``tr X``, rows ``>= 1``) from the
    released statistics (module doc); valid with probability ``1 - beta``."""
    log_tail = math.log(3.0 / (2.0 * beta))  # one-sided Laplace tail at beta/3: P = e^{-t}/2
    excluded = max(math.ceil(s) - 1, 0)
    short_upper = stats["short_noisy"] + stats["scale_count"] * log_tail
    violation = VIOLATION_TOL if math.floor(short_upper) <= excluded else 1.0
    t = stats["scale_dual"] * log_tail
    mu_lo, lam_hi = stats["mu_noisy"] - t, stats["lambda_noisy"] + t
    opt_lower = mu_lo / lam_hi if mu_lo > 0 and lam_hi > 0 else 0.0  # OPT >= 0 on the cone
    return Certificate.from_bounds(
        objective_upper=float(trace), optimum_lower=float(opt_lower), violation_bound=violation,
        equality_violation_bound=None, probability=1.0 - float(beta), excluded_rows=excluded,
        how=CERTIFICATE_BOUND)
