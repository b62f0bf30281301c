"""The covering answer's certificate: two noisy statistics of the released point, and the bounds
they give (docs/covering.md, "Status and certificate").

1. Rows left short: ``N = #{i : c <A_i, P_bar> < 1 - VIOLATION_TOL}`` (sensitivity 1), released
   with Laplace noise.
2. OPT from below by weak duality: for ``y >= 0`` on the rows, ``y / lambda_max(sum_i y_i A_i)``
   is dual feasible, so ``OPT >= mu / lambda`` with ``mu = 1'y``.  The pair ``(mu, lambda)`` is
   released with Laplace noise; each coordinate moves by at most ``1/s`` between neighbours:

   * ``s > 1``: ``y`` is the dense MWU's mean played distribution over the second half of the
     rounds.  Given the released history a neighbour's distributions differ only through the
     projection's cap (Song, Xue & Zhang 2025, Lemma B.6): ``mu`` moves within ``[0, 1/s]`` and
     ``lambda`` within ``[-1/s, 1/s]``.
   * ``s = 1`` (the cap is vacuous): for ANY ``y >= 0`` with ``sum_i y_i <= 1``, ``mu`` and
     ``lambda`` lie in ``[0, 1]`` (``0 <= A_i <= I`` in the algebra gives ``0 <= sum_i y_i A_i <=
     (sum_i y_i) I``), so each moves by at most ``1 = 1/s`` whatever ``y`` is.  The certificate
     then uses the best ``y``: the optimal dual of the (projected) covering program, normalised
     to a distribution (``lambda = 1/OPT``, ``mu = 1`` when there is a row, 0 otherwise).  The
     MWU's mean distribution is a poor dual at a large step (with ``eta = 2`` its weights follow
     the least covered rows almost greedily and their mean is 2-16% from the optimal dual on the
     gallery, while the primal average is within 1%): that, not the noise, made the bound 20-40x
     the true gap at epsilon 1e6.

   The Laplace scales are weighted towards ``lambda``, which sits near ``1/OPT`` and so costs
   ``OPT`` times more of the bound than ``mu`` (near 1) per unit of noise:
   ``b_mu = a/(s eps_dual)``, ``b_lambda = b/(s eps_dual)`` with ``a = 1 + sqrt(L)``,
   ``b = 1 + 1/sqrt(L)`` (``L`` the public OPT level; ``1/a + 1/b = 1``, so the privacy loss
   ``|d mu|/b_mu + |d lambda|/b_lambda <= (1/s)(1/b_mu + 1/b_lambda) = eps_dual``).  These
   minimise the loss ``t_mu + L t_lambda`` at ``OPT = L`` (Lagrange: ``(1 + sqrt L)^2 / (s
   eps_dual)`` against ``2 (1 + L) / (s eps_dual)`` for equal scales).

References
----------
Song, Xue & Zhang (2025), Lemma B.6, Thm B.7; Dwork, McSherry, Nissim & Smith (2006), the Laplace
mechanism; Boyd & Vandenberghe (2004), Sec. 5.2 (weak duality).
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import cvxpy as cp
import numpy as np
from scipy.optimize import linprog

from cvxdp.privacy.laplace import laplace_record
from cvxdp.solution import Certificate
from cvxdp.solvers.covering.covering_domain import flat_rows
from cvxdp.solvers.covering.covering_schedule import dual_noise_weights

__all__ = [
    "VIOLATION_TOL",
    "CERTIFICATE_BOUND",
    "algebra_lambda_max",
    "optimal_dual",
    "release_certificate_statistics",
    "covering_certificate",
]

#: shortfall below which a row counts as covered in the released count (float round-off of
#: ``c <A_i, P_bar>`` at the private trace's grid point)
VIOLATION_TOL = 1e-9
#: the certificate's construction (docs/covering.md, "Status and certificate")
CERTIFICATE_BOUND = (
    "noisy count of the rows the released point leaves short, and weak duality "
    "at a distribution on the rows (the optimal dual at s = 1, the dense MWU's "
    "mean distribution otherwise) released with Laplace noise "
    "(docs/covering.md, 'Status and certificate'; Song, Xue & Zhang 2025, "
    "Lemma B.6)"
)


def algebra_lambda_max(kind: str, data: np.ndarray, y: np.ndarray) -> float:
    """Largest eigenvalue of ``sum_i y_i A_i`` in the algebra of the covering program."""
    if kind == "sdp":
        return float(np.linalg.eigvalsh(np.tensordot(y, data, axes=1))[-1])
    if kind == "soc":
        v = y @ data
        return float(v[0] + np.linalg.norm(v[1:]))
    return float(np.max(y @ data))


def optimal_dual(kind: str, data: np.ndarray) -> np.ndarray | None:
    """The optimal dual of ``min tr X s.t. <A_i, X> >= 1`` as a distribution on the rows.

    Solves ``max 1'y s.t. sum_i y_i A_i <= I, y >= 0`` (HiGHS for the LP, Clarabel through CVXPY
    for the SDP and the spin factor) and returns ``y / 1'y``, or ``None`` when there is no row or
    the solver gives no finite non-zero ``y`` (an infeasible covering program has an unbounded
    dual).  Only the bound's tightness depends on the solver's accuracy: the certificate
    evaluates ``lambda_max`` of the returned ``y`` itself, and any distribution is dual feasible
    after division by it.
    """
    m = data.shape[0]
    if m == 0:
        return None
    y = None
    with warnings.catch_warnings():  # nothing printed depends on the private rows
        warnings.simplefilter("ignore")
        try:
            if kind == "lp":
                res = linprog(
                    -np.ones(m),
                    A_ub=data.T,
                    b_ub=np.ones(data.shape[1]),
                    bounds=(0, None),
                    method="highs",
                )
                y = res.x if res.status == 0 else None
            else:
                yv = cp.Variable(m, nonneg=True)
                if kind == "sdp":
                    r = data.shape[1]
                    M = cp.reshape(yv @ flat_rows(data), (r, r), order="C")
                    cons = [(M + M.T) / 2 << np.eye(r)]
                else:  # spin factor: lambda_max(v) = v_0 + ||v_bar|| <= 1
                    v = yv @ data
                    cons = [cp.SOC(1 - v[0], v[1:])]
                prob = cp.Problem(cp.Maximize(cp.sum(yv)), cons)
                prob.solve(solver=cp.CLARABEL)
                y = yv.value
        except (cp.SolverError, ValueError, ArithmeticError):
            y = None
    if y is None:
        return None
    y = np.maximum(np.asarray(y, dtype=float), 0.0)
    total = float(y.sum())
    if not (math.isfinite(total) and total > 0):
        return None
    return y / total


def release_certificate_statistics(
    kind: str,
    data: np.ndarray,
    P: np.ndarray,
    trace: float,
    y_average: np.ndarray,
    sched: Any,
    rng: np.random.Generator,
    accountant: Any,
) -> dict[str, float]:
    """Release the certificate's noisy statistics (:func:`covering_certificate`), spent from
    ``accountant``: the count of rows left short (Laplace, ``eps_count``) and the dual pair
    ``(1'y, lambda_max(sum_i y_i A_i))`` (Laplace with the weighted scales of the module
    docstring, ``eps_dual``); ``y`` is the optimal dual at ``s = 1`` and the dense MWU's mean
    distribution ``y_average`` otherwise.

    Returns the released numbers only: ``short_noisy``, ``mu_noisy``, ``lambda_noisy``, the
    Laplace scales ``scale_count``, ``scale_mu``, ``scale_lambda``, and ``dual`` (which ``y``:
    a public choice).
    """
    m = data.shape[0]
    eps_count, eps_dual, s = sched.eps_count, sched.eps_dual, sched.s
    short = int(np.sum(trace * _coverage(kind, data, P) < 1.0 - VIOLATION_TOL))
    a, b = dual_noise_weights(sched.level)
    scale_mu, scale_lam = a / (s * eps_dual), b / (s * eps_dual)
    rec_c = laplace_record(
        scale=1.0 / eps_count,
        l1_sensitivity=1.0,
        mechanism="laplace (covering certificate: rows left short)",
    )
    # (mu / scale_mu, lambda / scale_lambda) has l1 sensitivity (1/s)(1/scale_mu + 1/scale_lam)
    # = eps_dual and gets Laplace(1) per coordinate
    rec_d = laplace_record(
        scale=1.0,
        l1_sensitivity=eps_dual,
        mechanism="laplace (covering certificate: dual pair)",
        scale_mu=scale_mu,
        scale_lambda=scale_lam,
    )
    accountant.spend(rec_c)
    accountant.spend(rec_d)
    exact = s == 1.0
    y = optimal_dual(kind, data) if exact else None
    if y is None:  # s > 1, or no optimal dual: the MWU's mean (dummies carry no matrix)
        y = y_average[:m]
    mu, lam = float(y.sum()), algebra_lambda_max(kind, data, y) if m else 0.0
    noise = rng.laplace(0.0, 1.0, size=3)
    return {
        "short_noisy": short + noise[0] / eps_count,
        "mu_noisy": mu + noise[1] * scale_mu,
        "lambda_noisy": lam + noise[2] * scale_lam,
        "scale_count": 1.0 / eps_count,
        "scale_mu": scale_mu,
        "scale_lambda": scale_lam,
        "dual": "optimal" if exact else "mwu_mean",
    }


def _coverage(kind: str, data: np.ndarray, P: np.ndarray) -> np.ndarray:
    """``cov_i = <A_i, P>`` for every constraint (vectorised)."""
    if kind == "sdp":
        return flat_rows(data) @ P.ravel()
    if kind == "soc":  # spin factor: <a, x> = tr(a o x) = 2 a'x
        return 2.0 * (data @ P)
    return data @ P


def covering_certificate(
    stats: dict[str, float], trace: float, s: float, beta: float
) -> Certificate:
    """The certificate of the released point ``X = c P_bar`` from the released statistics.

    Normalised units (objective ``1'x`` / ``tr X``, rows ``<A_i, X> >= 1``); valid with
    probability ``1 - beta`` (``beta/3`` per one-sided Laplace tail, ``P(Z < -t) = e^{-t/b}/2``).
    The objective is ``c`` exactly (unit-trace ``P_bar``; public).

    1. Rows left short: on ``N <= N~ + t``, if ``floor(N~ + t) <= ceil(s) - 1`` (the rows the
       dense MWU may leave out) every other row is covered to ``1 - VIOLATION_TOL``; otherwise
       the bound is 1 (coverage is never negative on the public domain).
    2. OPT from below: on the two tail events of the dual pair, ``OPT >= (mu~ - t_mu) /
       (lambda~ + t_lambda)`` (weak duality at the released pair's ``y``; module docstring).

    The bounds speak of the rows as the mechanism sees them, projected into the public domain
    (``project_rows``): for rows inside the domain, the TRUE rows.  Derivation and measured
    numbers: docs/covering.md, "Status and certificate".

    References
    ----------
    Song, Xue & Zhang (2025), Lemma B.6, Thm B.7; Dwork, McSherry, Nissim & Smith 2006 (Laplace
    mechanism); Boyd & Vandenberghe 2004, Sec. 5.2 (weak duality).
    """
    log_tail = math.log(3.0 / (2.0 * beta))  # one-sided Laplace tail at beta/3: P = e^{-t}/2
    excluded = max(math.ceil(s) - 1, 0)
    short_upper = stats["short_noisy"] + stats["scale_count"] * log_tail
    violation = VIOLATION_TOL if math.floor(short_upper) <= excluded else 1.0
    mu_lo = stats["mu_noisy"] - stats["scale_mu"] * log_tail
    lam_hi = stats["lambda_noisy"] + stats["scale_lambda"] * log_tail
    opt_lower = mu_lo / lam_hi if mu_lo > 0 and lam_hi > 0 else 0.0  # OPT >= 0 on the cone
    return Certificate.from_bounds(
        objective_upper=float(trace),
        optimum_lower=float(opt_lower),
        violation_bound=violation,
        equality_violation_bound=None,
        probability=1.0 - float(beta),
        excluded_rows=excluded,
        how=CERTIFICATE_BOUND,
    )
