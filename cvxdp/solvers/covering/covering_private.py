"""The private covering solver: schedule, private oracles, dense-MWU run and private scaling.

Shared by :mod:`cvxdp.solvers.covering.covering` (builders ``covering_sdp`` / ``covering_lp`` and
user models with ``ConstraintSetPrivacy``).  Everything here works in *trace-normalised* units: the
oracle returns a unit-trace candidate ``P = v v'`` (SDP) or ``P = e_j`` (LP) and the coverage of
constraint ``i`` is ``cov_i(P) = <A_i, P> in [0, 1]`` (``A_i`` PSD, ``||A_i|| <= 1``, resp. entries
in ``[0, 1]``).  A solution with trace ``g`` is ``X = g P``.

Privacy argument (neighbours add or remove one whole constraint; Song et al. 2025, Def B.1):

1. The loss of constraint ``i`` depends only on ``A_i`` and the released candidate, so, given the
   same released history, two neighbouring runs have identical weights on all shared constraints
   (and on the public dummy actions, see below); Thm B.7's argument.
2. Projections: if ``F'`` is ``F`` plus one action ``f'``, then ``Gamma_s F'_f <= Gamma_s F_f``
   for every shared ``f`` (adding mass lowers the cap constant ``c``), and the shared mass lost is
   exactly ``y'_{f'} <= 1/s``.  Hence (Lemma B.6) ``||y - y'||_1 <= 2/s`` and, because every
   coverage lies in ``[0, 1]``, the score ``<sum_i y_i A_i, P>`` moves by
   ``sum_shared (y_f - y'_f) cov_f - y'_{f'} cov_{f'}`` which lies in ``[-1/s, 1/s]``: the score
   sensitivity is ``OPT/s`` for ``X = OPT P`` -- a third of the paper's ``3 OPT/s`` (Lemma B.9
   adds the two bounds instead of noting they have opposite signs).  ``schedule="paper"`` keeps
   ``3 OPT/s``.
3. Each round is the exponential mechanism (finite for the LP and the net; the continuous Bingham
   limit on the sphere for the SDP, :mod:`cvxdp.solvers.covering.bingham`): ``eps'``-DP and
   ``eps'^2/8``-zCDP.  The ``T`` rounds and the scaling step compose in zCDP and are converted
   once to ``(eps, delta)`` with the CKS bound (tighter than the paper's advanced composition,
   whose ``eps'`` is reported beside).
4. Public dummy actions: ``ceil(s)`` actions with loss 1 and no matrix are always in the universe,
   so the ``1/s``-dense set is never empty whatever the (private) number of constraints ``m``.
5. OPT is unknown: the run's average ``P_bar`` is released, so the trace ``c`` is
   chosen afterwards by a private quantile (exponential mechanism over a public geometric grid of
   ``opt_bounds``, score ``-|#{i : c <A_i, P_bar> < 1} - k|`` minus a public tilt towards cheaper
   traces, sensitivity 1; ``SCALE_FRACTION`` of the zCDP budget).  The dense-MWU
   dynamics at any fixed OPT are those of the normalised losses ``cov_i`` up to the step size
   (the loss of Alg. 3 is a positive affine function of ``cov_i`` with the same slope for all i),
   so one run serves every OPT.  With ``opt=`` (public) the scaling step is skipped.

6. The certificate (:mod:`cvxdp.solvers.covering.covering_certificate`): two noisy
   statistics of the released point, see docs/covering.md, "Status and certificate".

References
----------
Song, Xue & Zhang (2025): Alg. 3, Lemma B.5, Lemma B.6, Thm B.7, Lemma B.9,
Thm B.10, Lemma B.12, Thm B.13.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from cvxdp.argument_values import check_number
from cvxdp.errors import PrivacySpecError
from cvxdp.privacy.mechanisms import exponential_mechanism, gumbel_argmax
from cvxdp.solvers.covering.bingham import (
    net_exponential_sample,
    sample_bingham,
    sample_vmf,
    sphere_net,
    sphere_oracle_error,
    vmf_oracle_error,
)
from cvxdp.solvers.covering.covering_certificate import (  # noqa: F401  (re-exported)
    CERTIFICATE_BOUND,
    VIOLATION_TOL,
    algebra_lambda_max,
    covering_certificate,
    release_certificate_statistics,
)
from cvxdp.solvers.covering.covering_domain import flat_rows
from cvxdp.solvers.covering.covering_schedule import (
    SCALE_FRACTION,
    SCALE_GRID,
    SCALE_TILT,
    T_BUDGET_MAX,
    CoveringSchedule,
    kappa_target,
    plan_schedule,
    split_count_budget,
)
from cvxdp.solvers.covering.dense_mwu import DenseMWU, DenseMWUResult, _project_log, scp_dense_mwu

__all__ = ["CoveringSchedule", "plan_schedule", "run_dense_covering", "private_scale",
           "theorem_alpha", "shrink_weight", "shrink_towards_identity", "split_count_budget",
           "covering_coverage", "COUNT_NOTE", "VIOLATION_TOL", "CERTIFICATE_BOUND",
           "algebra_lambda_max", "release_certificate_statistics", "covering_certificate",
           # re-exported from covering_schedule (the public schedule)
           "kappa_target", "SCALE_FRACTION", "SCALE_GRID", "SCALE_TILT", "T_BUDGET_MAX"]

#: default share of the budget for the opt-in noisy count of projected rows
COUNT_NOTE = "covering rows projected into the public domain (clipped)"


def shrink_weight(sched: CoveringSchedule, shrink: float | str = "auto") -> float:
    """Public weight ``lambda`` of the identity in ``(1 - lambda) P_bar + lambda e/r``.

    ``"auto"``: ``max(0, 1 - 2 kappa/kappa*)`` -- computed from the public schedule only.  When
    the per-round oracle is too noisy to find directions (``kappa`` below ``kappa*/2``), the
    average of ``T`` nearly uniform rank-one draws is a *noisier* estimate of the identity than
    the identity itself; shrinking is post-processing, so privacy is unchanged.  (Measured in
    ``benchmarks/bench_covering.py``: never worse than no shrinking at kappa >= kappa*/2, up to
    15% cheaper below; ``1 - kappa/kappa*`` was mixed.)
    ``schedule="paper"`` uses 0 unless a number is given.
    """
    if shrink == "auto":
        if sched.schedule == "paper":
            return 0.0
        return float(max(0.0, 1.0 - 2.0 * sched.kappa / kappa_target(sched.kind, sched.dim)))
    return check_number("shrink", shrink, "'auto' or a number in [0, 1]",
                        lambda v: 0.0 <= v <= 1.0, error=PrivacySpecError)


def shrink_towards_identity(kind: str, P: np.ndarray, lam: float) -> np.ndarray:
    """``(1 - lam) P + lam e / Tr(e)``: the unit-trace identity of the algebra."""
    if lam == 0:
        return P
    if kind == "sdp":
        e = np.eye(P.shape[0]) / P.shape[0]
    elif kind == "soc":
        e = np.zeros_like(P)
        e[0] = 0.5
    else:
        e = np.full_like(P, 1.0 / P.size)
    return (1 - lam) * P + lam * e


def covering_coverage(kind: str, data: np.ndarray, P: np.ndarray) -> np.ndarray:
    """``cov_i = <A_i, P>`` for every constraint (vectorised)."""
    return _coverage(kind, data, P)


def _coverage(kind: str, data: np.ndarray, P: np.ndarray) -> np.ndarray:
    """``cov_i = <A_i, P>`` for every constraint (vectorised)."""
    if kind == "sdp":  # <A_i, P> as one matrix-vector product over the flattened rows
        return flat_rows(data) @ P.ravel()
    if kind == "soc":  # spin factor: <a, x> = tr(a o x) = 2 a'x
        return 2.0 * (data @ P)
    return data @ P


def run_dense_covering(kind: str, data: np.ndarray, sched: CoveringSchedule,
                       rng: np.random.Generator, *, keep_history: bool = False,
                       average_from: int | None = None) -> Any:
    """Alg. 3 with the private oracle on a covering program, in trace-normalised units.

    ``data`` is ``(m, r, r)`` PSD matrices with ``||A_i|| <= 1`` (SDP) or ``(m, n)`` entries in
    ``[0, 1]`` (LP).  Returns the :class:`cvxdp.solvers.covering.dense_mwu.DenseMWUResult` whose
    ``average`` is the unit-trace ``P_bar`` (released).

    References
    ----------
    Song, Xue & Zhang (2025), Alg. 3, Lemma B.9 (SDP oracle), Hsu et al. 2014 (LP oracle).
    """
    m = data.shape[0]
    nd = sched.n_dummy
    kappa = sched.kappa
    flat = flat_rows(data)  # SDP rows as vectors: sum_i y_i A_i and <A_i, P> by matmul
    dummies = np.ones(nd)
    net = None
    if kind == "sdp" and sched.oracle == "net":
        net, _ = sphere_net(data.shape[1], 4096 if data.shape[1] == 3 else 720)

    def oracle(y: np.ndarray, gen: np.random.Generator) -> np.ndarray:
        yr = y[:m]  # dummy actions carry no matrix
        if kind == "sdp":
            M = (yr @ flat).reshape(data.shape[1:])
            if net is not None:
                v = net_exponential_sample(M, kappa, net, rng=gen)
            else:
                v = sample_bingham(M, kappa, rng=gen)
            return np.outer(v, v)
        if kind == "soc":  # score <M, (1, u)/2> = M_0 + M_bar'u: von Mises-Fisher in u
            Mv = yr @ data
            g = Mv[1:]
            u = sample_vmf(g, kappa * float(np.linalg.norm(g)), rng=gen)
            return np.concatenate([[0.5], u / 2.0])
        logits = kappa * (yr @ data)
        P = np.zeros(data.shape[1])
        P[gumbel_argmax(logits, gen)] = 1.0
        return P

    if sched.opt_level is None:
        def losses(P: np.ndarray) -> np.ndarray:
            return np.concatenate([np.clip(_coverage(kind, data, P), 0.0, 1.0), dummies])
    else:
        g, w = sched.opt_level, sched.width

        def losses(P: np.ndarray) -> np.ndarray:
            cov = np.clip(_coverage(kind, data, P), 0.0, 1.0)
            return np.concatenate([(g * cov - 1.0) / (2 * w) + 0.5, np.ones(nd)])

    if kind == "lp" and not keep_history:
        return _lp_loop(data, sched, rng, average_from)
    return scp_dense_mwu(oracle, losses, m + nd, s=sched.s, T=sched.T, eta=sched.eta, rng=rng,
                         keep_history=keep_history, average_from=average_from)


#: rounds whose Gumbel draws are made at once in :func:`_lp_loop` (memory ``LP_CHUNK x n``)
LP_CHUNK = 256


def _lp_loop(data: np.ndarray, sched: CoveringSchedule, rng: np.random.Generator,
             average_from: int | None) -> DenseMWUResult:
    """:func:`scp_dense_mwu` with the LP oracle of :func:`run_dense_covering`, the same numbers
    for the same ``rng`` (tested) at a fraction of the Python work per round.

    The oracle plays one column ``j`` (the exponential mechanism's choice, Hsu et al. 2014), so
    ``P`` is the unit vector ``e_j``, each row's coverage is ``A[i, j]`` and the round's loss
    vector is one of ``n`` fixed vectors, tabulated once (and checked to lie in ``[0, 1]``
    once, which checks every round's).  The Gumbel draws of ``LP_CHUNK`` rounds are made at
    once: the generator fills them in the order the per-round draws would take (the oracle is
    the loop's only use of ``rng``).

    References
    ----------
    Song, Xue & Zhang (2025), Alg. 3 (the loop), Lemma B.3 (losses in ``[0, 1]``).
    """
    m, n = data.shape
    nd = sched.n_dummy
    mwu = DenseMWU(m + nd, sched.s, sched.eta)  # the generic loop's checks of m, s and eta
    lw, s, eta, kappa, T = mwu.log_weights, mwu.s, mwu.eta, sched.kappa, int(sched.T)
    cov = np.clip(data, 0.0, 1.0).T  # row j: every row's coverage by column j
    if sched.opt_level is None:
        table = cov
    else:
        g, w = sched.opt_level, sched.width
        table = (g * cov - 1.0) / (2 * w) + 0.5
    table = np.ascontiguousarray(table)
    if not (table.min(initial=0.0) >= -1e-12 and table.max(initial=1.0) <= 1 + 1e-12):
        raise ValueError("Lemma B.3 needs losses in [0, 1].")
    counts = np.zeros(n)
    y_sum = None
    for start in range(0, T, LP_CHUNK):
        gumbel = rng.gumbel(size=(min(LP_CHUNK, T - start), n))
        for k, noise in enumerate(gumbel):
            y = _project_log(lw, s)
            if average_from is not None and start + k >= average_from:
                y_sum = y.copy() if y_sum is None else y_sum + y
            j = int(np.argmax(kappa * (y[:m] @ data) + noise))
            counts[j] += 1.0
            lw[:m] -= eta * table[j]
            lw[m:] -= eta  # the public dummy actions' loss is 1
            lw -= lw.max()
    out = DenseMWUResult(average=counts / T)
    if y_sum is not None:
        out.y_average = y_sum / (T - int(average_from))
    return out


def private_scale(cov: np.ndarray, sched: CoveringSchedule, rng: np.random.Generator,
                  accountant: Any) -> float:
    """Private trace: grid point ``c`` with ``#{i : c cov_i < 1}`` close to the target ``k``.

    Exponential mechanism with score ``-| #{i : c cov_i < 1} - k | - w log(c / lo)``
    (sensitivity 1 under add/remove of one constraint; the tilt ``w log(c/lo)`` is public) over
    the public geometric grid (relative spacing ``SCALE_RESOLUTION``), spent from
    ``accountant``.  The target is ``k = ceil(s) - 1``, the rows the certificate may leave out
    (all rows at ``s = 1``).  The tilt's slope is ``w = max(1 / (2 log(hi/lo)), 2 SCALE_TILT /
    (eps_scale log(L/lo)))`` with ``L`` the public OPT level: at a small budget the second term
    keeps ``exp(eps tilt/2)`` falling by ``e^SCALE_TILT`` over ``[lo, L]`` (without it the flat
    plateau ``N(c) = 0`` above the largest need draws most of the mass); at a large budget the
    first keeps the whole tilt below half a row, so that the score's maximiser is the cheapest
    ``c`` leaving at most ``k`` rows short, and the mechanism concentrates on it as epsilon
    grows (the tilt's share of the score no longer vanishes with ``1/epsilon``).

    References
    ----------
    McSherry & Talwar 2007 (private search for OPT).
    """
    grid = np.asarray(sched.grid)
    need = np.sort(np.where(cov > 0, 1.0 / np.maximum(cov, 1e-300), np.inf))
    # rows with need_i > c (1 + 1e-12): short at trace c
    short = need.size - np.searchsorted(need, grid * (1 + 1e-12), side="right")
    span = math.log(grid[-1] / grid[0])
    ref = math.log(max(sched.level, grid[0] * (1 + 1e-9)) / grid[0])
    w = max(1.0 / (2.0 * span), 2.0 * SCALE_TILT / (sched.eps_scale * min(ref, span)))
    tilt = w * np.log(grid / grid[0])
    scores = -np.abs(short - (math.ceil(sched.s) - 1)) - tilt
    j, _ = exponential_mechanism(scores, epsilon=sched.eps_scale, sensitivity=1.0, rng=rng,
                                 accountant=accountant)
    return float(grid[j])


def theorem_alpha(sched: CoveringSchedule, m_bound: int) -> dict[str, float]:
    """Accuracy guaranteed by Lemma B.5 for this run, relative to OPT (w.p. ``1 - beta``).

    With the oracle error ``alpha_o`` per round (probability ``1 - beta/T`` each; sphere volume
    bound :func:`cvxdp.solvers.covering.bingham.sphere_oracle_error` for the SDP, Lemma 3.12
    ``log(n T/beta)/kappa`` for the LP), the regret of Lemma B.3 over ``N = m + ceil(s)``
    actions gives: all but fewer than ``s`` constraints satisfy
    ``<A_i, OPT P_bar> >= 1 - alpha`` with ``alpha/OPT = alpha_o + (eta + log N/(eta T))
    * (2 rho_w / OPT)`` (practical schedule: ``2 rho_w/OPT`` replaced by 1, its losses being the
    coverages themselves).  The paper's Thm B.10 form is returned as ``alpha_paper`` where it
    applies.
    """
    T, eta, kappa = sched.T, sched.eta, sched.kappa
    b_round = sched.beta / T
    if sched.kind == "sdp":
        if sched.oracle == "net":
            pts, gamma = sphere_net(sched.dim, 4096 if sched.dim == 3 else 720)
            a_o = min(1.0, gamma**2 + math.log(len(pts) / b_round) / kappa)
        else:
            a_o = sphere_oracle_error(kappa, sched.dim, b_round)
    elif sched.kind == "soc":
        a_o = min(1.0, vmf_oracle_error(kappa, sched.dim - 1, b_round))
    else:
        a_o = min(1.0, math.log(sched.dim / b_round) / kappa)
    N = m_bound + sched.n_dummy
    # Lemma B.3 (additive, eta <= 1/2) and the multiplicative Hedge bound for any eta > 0
    # (Freund & Schapire 1997, Thm 2, with L_p <= T): the smaller one holds
    mult = (eta / -math.expm1(-eta) - 1.0) + math.log(N) / (-math.expm1(-eta) * T)
    regret = min(eta + math.log(N) / (eta * T), mult) if eta <= 0.5 else mult
    factor = 1.0 if sched.opt_level is None else 2 * sched.width / sched.opt_level
    out = {"alpha_oracle_rel": a_o, "alpha_regret_rel": regret * factor,
           "alpha_rel": a_o + regret * factor}
    return out
