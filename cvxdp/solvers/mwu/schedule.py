"""The noisy-oracle MWU's schedule: T, eta and each round's budget split, from its theorems.

:func:`plan_schedule` picks the number of rounds, the step and the oracle/Gaussian split of each
round's zCDP from the utility bound of Song, Xue & Zhang (2025), "Differential Privacy for
Euclidean Jordan Algebra with Applications to Private Symmetric Cone Programming" (Thms C.2,
C.5, C.9, restated for any (T, eta) with the oracle's and the noise's errors averaged over the
rounds; docs/mwu.md), under a public size cap (:func:`iteration_cap`); :func:`row_sensitivities`
reads the public per-row sensitivities of the MWU form.  Nothing here reads private data.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from cvxdp.errors import (
    BudgetError,
    PrivacyGuaranteeError,
)
from cvxdp.privacy.accountant import (
    FLOAT_DELTA_SHARE,
)
from cvxdp.privacy.budgets import ZCDP, ApproxDP, Budget, PureDP, zcdp_from_approx
from cvxdp.solvers.mwu.loop_adaptive import ADA_DELTA0
from cvxdp.solvers.mwu.mwu_form import MWUForm

__all__ = ["Schedule", "RowSens", "row_sensitivities", "loss_half_range", "plan_schedule",
           "posterior_alpha",
           "total_rho",
           "paper_alpha", "iteration_cap", "ROUND_WORK_CAP", "average_excess"]

PRACTICAL_ETA = 0.5  # step size of the practical schedule (T = Lambda / eta)
LAMBDA_MAX = 100.0  # cap on eta * T in the practical schedule
USEFUL_ALPHA = 0.25  # below this (normalised) the proven schedule is used by "auto"
#: multiply-adds one MWU run may spend (about a second compiled on small rows): the
#: wall-clock-free safety cap on T is this over the work of one round (see iteration_cap)
ROUND_WORK_CAP = 2**26
_SAFETY = 1.0 - 1e-10  # spend a hair less than the budget (floating point)


def total_rho(budget: Budget) -> float | None:
    """The zCDP budget of ``budget`` (None for pure DP): rho itself, or the largest rho whose
    CKS conversion meets (epsilon, delta) (Canonne, Kamath & Steinke 2020)."""
    if isinstance(budget, ZCDP):
        return budget.rho * _SAFETY
    if isinstance(budget, ApproxDP) and budget.delta > 0:
        # a share of delta is kept for the oracle's float sampler (FLOAT_DELTA_SHARE)
        return zcdp_from_approx(budget.epsilon, budget.delta * (1 - FLOAT_DELTA_SHARE)) * _SAFETY
    return None


@dataclass(frozen=True)
class RowSens:
    """Per-row sensitivities of the normalised MWU form."""

    d2: np.ndarray      # l2 (phi-coordinates) bound on |a_i - a'_i| per row
    dinf: np.ndarray    # spectral-norm bound on |a_i - a'_i| per row
    support: sp.csr_matrix  # where each row can change, in dual coordinates (phi-scaled)
    score: float        # sensitivity of the oracle's scores <a_i, x> - h_i
    kmax: int           # largest support size
    half_range: float = 1.0  # public bound on (lambda_max - lambda_min)(a_i) / 2 over the rows


def row_sensitivities(form: MWUForm) -> RowSens:
    """Sensitivities of the rows of ``form`` from its entrywise bounds ``dG``, ``dh``.

    ``||a_i - a'_i||_2`` is bounded by the l2 norm of the entrywise bounds in phi-coordinates;
    the spectral norm by the largest orthant entry or the l2 norm of a cone block, whichever is
    larger (``||.||_inf <= ||.||_2`` blockwise).  The score ``<a_i, x> - h_i`` on a distribution x
    changes by at most ``||a_i - a'_i||_inf + |h_i - h'_i|`` (Hoelder; Song, Xue & Zhang 2025,
    Lemma C.8).
    """
    alg = form.algebra
    dphi = sp.csr_matrix(form.dG.multiply(1.0 / alg.phi_scale[None, :]))
    d2 = np.sqrt(np.asarray(dphi.multiply(dphi).sum(axis=1)).ravel())
    # block id of every coordinate: each orthant coordinate alone, one id per cone block
    bid = np.arange(alg.dim)
    nb = alg.nonneg
    for o, q in zip(alg._soc_off, alg.soc, strict=True):
        bid[o:o + q] = nb
        nb += 1
    for o, r in zip(alg._psd_off, alg.psd, strict=True):
        bid[o:o + r * (r + 1) // 2] = nb
        nb += 1
    B = sp.csr_matrix((np.ones(alg.dim), (np.arange(alg.dim), bid)), shape=(alg.dim, nb))
    blk = (dphi.multiply(dphi) @ B).tocsr()
    dinf = np.zeros(form.m)
    if blk.nnz:
        dinf = np.sqrt(np.asarray(blk.max(axis=1).todense()).ravel())
    score = float(np.max(dinf + form.dh)) if form.m else 0.0
    kmax = int(np.max(np.diff(dphi.indptr))) if form.m else 0
    return RowSens(d2=d2, dinf=dinf, support=dphi, score=score, kmax=kmax,
                   half_range=loss_half_range(form))


def loss_half_range(form: MWUForm) -> float:
    """Public bound ``s`` on half the spectral range ``(lambda_max - lambda_min)(a_i) / 2`` of
    every row: the loss may be shifted by ``c e`` to ``||a_i - c e||_inf <= s`` (docs/mwu.md).

    A row with private coefficients is only known to have ``||a_i||_inf <= 1`` (the width
    normalisation), so its half-range is bounded by 1; a public row's spectrum is computed (the
    union of its blocks' spectra, an untouched block contributing the eigenvalue 0).  Nothing
    here reads private data.
    """
    alg = form.algebra
    if form.m == 0:
        return 1.0
    priv = np.diff(sp.csr_matrix(form.dG).indptr) > 0
    if priv.all():
        return 1.0
    el = sp.csr_matrix(form.G.multiply(1.0 / alg.gram[None, :]))
    pub = np.flatnonzero(~priv)
    lo = np.full(pub.size, np.inf)
    hi = np.full(pub.size, -np.inf)
    n0 = alg.nonneg
    if n0:
        orth = el[pub][:, :n0].tocsr()
        cnt = np.diff(orth.indptr)
        mx = np.full(pub.size, -np.inf)
        mn = np.full(pub.size, np.inf)
        nz = cnt > 0
        if nz.any():
            mx[nz] = orth[nz].max(axis=1).toarray().ravel()
            mn[nz] = orth[nz].min(axis=1).toarray().ravel()
        # a coordinate the row does not touch is an eigenvalue 0 (max/min above include the
        # implicit zeros of rows with fewer than n0 entries)
        lo, hi = np.minimum(lo, mn), np.maximum(hi, mx)
        full = cnt == n0
        lo[~full] = np.minimum(lo[~full], 0.0)
        hi[~full] = np.maximum(hi[~full], 0.0)
    if alg.soc or alg.psd:
        rest = el[pub][:, n0:].tocsr()
        for j in range(pub.size):
            if rest.indptr[j + 1] == rest.indptr[j]:
                lo[j], hi[j] = min(lo[j], 0.0), max(hi[j], 0.0)
                continue
            row = np.zeros(alg.dim)
            row[n0:] = rest[j].toarray().ravel()
            lam = alg.eigenvalues(row)[n0:]
            lo[j], hi[j] = min(lo[j], float(lam.min())), max(hi[j], float(lam.max()))
    half = float(np.max((hi - lo) / 2.0)) if pub.size else 0.0
    return float(min(1.0, max(half, 1.0 if priv.any() else 0.0, 1e-12)))


@dataclass
class Schedule:
    """Iterations, step size and per-round privacy parameters of one private MWU run."""

    T: int
    eta: float
    split: float          # share of each round's zCDP spent by the oracle (rest: Gaussian)
    epsilon_oracle: float
    sigma_unit: float     # Gaussian sigma per unit of l2 sensitivity (0 without noise)
    alpha: float          # utility bound of the theorem at these settings (normalised units)
    valid: bool           # whether the theorem's conditions hold (else alpha is heuristic)
    oracle_error: float
    noise_bound: float
    loss_scale: float = 0.5  # the loss is loss_scale * (a_p + z): 1 / (1 + noise_bound)
    adaptive: bool = False  # AdaHedge's step instead of eta (orthant algebras)


def average_excess(T: np.ndarray, beta: float) -> np.ndarray:
    """``1 + d`` with ``P[(1/T) sum_t E_t >= 1 + d] <= beta`` for ``E_t`` each dominated by a
    standard exponential given the past: the Chernoff bound ``exp(-T (d - ln(1 + d)))`` and
    ``d - ln(1 + d) >= d^2 / (2 (1 + d))`` give ``d = v + sqrt(v^2 + 2 v)``, ``v = ln(1/beta)/T``.
    """
    v = math.log(1.0 / beta) / T
    return 1.0 + v + np.sqrt(v * v + 2.0 * v)


def _bound(setting: str, T: np.ndarray, f: np.ndarray, *, rho: float | None, eps_pure: float,
           sens: RowSens, m: int, r: int, beta: float, eta: np.ndarray | None = None,
           adaptive: bool = False):
    """Utility bound of the theorems as a function of (T, split) (broadcast arrays).

    The proofs of Thms C.2 / C.9 add the oracle's error and the noise's inner products over the
    rounds and divide by T, so their *averages* are what the bound needs, not their largest
    round (which the paper bounds with a union bound over the T rounds):

    * oracle: the exponential mechanism misses the best score by ``(2 Delta / e0) (ln m + E_t)``
      with ``P[E_t >= u] <= e^-u`` given the past (Dwork & Roth 2014, Thm 3.11), so the average
      miss is at most ``(2 Delta / e0) (ln m + average_excess(T, beta'))``;
    * noise: ``<z_t, x^t - y>`` is, given the past, Gaussian with standard deviation at most
      ``2 sigma`` (``||x^t - y||_2 <= 2`` for two distributions), a martingale difference, so
      its average is at most ``2 sigma sqrt(2 ln(1/beta') / T)`` (Azuma 1967);
    * the loss ``(a_p + z_t) / (1 + E_z)`` keeps ``||loss||_inf <= 1`` (Thm A.5) on the event
      that every ``||z_t||_inf <= E_z`` (union bound over the rounds, as in the paper).

    Constraint privacy: ``alpha = (1 + E_z) reg + 2 sigma sqrt(2 ln(3/beta)/T) + E_o`` with the
    three events at ``beta/3`` each; scalar privacy: ``alpha = reg + E_o`` (one event).
    """
    lr = math.log(max(r, 2))
    if adaptive:
        # AdaHedge on losses in [-1, 1] (range 2): regret <= 2 sqrt(T ln r) + 4 + 2 Delta_0
        # (docs/mwu.md)
        reg = 2.0 * np.sqrt(lr / T) + (4.0 + 2.0 * ADA_DELTA0) / T
        eta = np.zeros_like(reg)  # no step condition
    else:
        if eta is None:
            eta = np.minimum(1.0, np.sqrt(lr / T))
        reg = eta + lr / (eta * T)
    lm = math.log(max(m, 1))
    s = sens.half_range
    if setting == "scalar":
        e0 = np.sqrt(8.0 * rho / T) if rho is not None else eps_pure / T
        e0 = e0 * np.ones_like(f)
        eo = 2.0 * sens.score / e0 * (lm + average_excess(T, beta))
        return s * reg + eo, eo, np.zeros_like(eo), e0, np.zeros_like(eo), eta <= 1
    rr = rho / T
    e0 = np.sqrt(8.0 * f * rr)
    c = 1.0 / np.sqrt(2.0 * (1.0 - f) * rr)
    eo = 2.0 * sens.score / e0 * (lm + average_excess(T, beta / 3.0))
    sigma = c * float(np.max(sens.d2))
    ez = sigma * (math.sqrt(max(sens.kmax, 1)) + np.sqrt(2.0 * np.log(3.0 * T / beta)))
    noise_avg = 2.0 * sigma * np.sqrt(2.0 * math.log(3.0 / beta) / T)
    alpha = (s + ez) * reg + noise_avg + eo
    return alpha, eo, ez, e0, c, eta <= 1


def posterior_alpha(sch: Schedule, sens: RowSens, m: int, t: int, delta: float, step: float,
                    beta: float) -> float:
    """Violation bound (normalised) on the average of the first ``t`` AdaHedge rounds when
    the target is reachable, from the run's released data: ``2 Delta_t / (step t) + N_t +
    E_o,t``, each of the two averaged terms at ``beta / 2`` (docs/mwu.md, "Posterior").

    AdaHedge's regret after ``t`` rounds is at most ``Delta_t + ln r / eta_t <= 2 Delta_t``
    whatever the losses (de Rooij et al. 2014); the loop's losses are ``step (a_p + z)``, so
    Thm C.2's argument gives ``<a_i, x_t> - h_i <= 2 Delta_t / (step t) + N_t + E_o,t`` for
    every row when some feasible ``y`` exists, with the noise average ``N_t`` and the
    oracle's average miss ``E_o,t`` of :func:`_bound`.  ``Delta_t`` is a function of released
    losses and public iterates.
    """
    reg = 2.0 * delta / (step * t)
    e0 = sch.epsilon_oracle
    eo = 0.0 if not math.isfinite(e0) or e0 <= 0 else float(
        2.0 * sens.score / e0 * (math.log(max(m, 1)) + average_excess(np.array(t), beta / 2)))
    sigma = sch.sigma_unit * float(np.max(sens.d2)) if sch.sigma_unit else 0.0
    noise = 2.0 * sigma * math.sqrt(2.0 * math.log(2.0 / beta) / t)
    return reg + noise + eo


def iteration_cap(form: MWUForm) -> int:
    """The public safety cap on T: :data:`ROUND_WORK_CAP` over one round's arithmetic.

    One round reads every stored entry of the rows (the scores ``G x``), draws a Gumbel per row,
    and exponentiates the iterate: ``nnz(G) + m + k`` multiply-adds, plus, per PSD block of
    order ``r``, its eigendecomposition with vectors (about ``9 r^3`` flops for LAPACK's
    ``syevd``; Golub & Van Loan 2013, Matrix Computations) and a fixed ``2^12`` for the call itself.
    The cap depends on the problem's size only (public) and never on time, so a run's T -- and
    with it the privacy records -- is the same on every machine.  It is at least 1,000.
    """
    alg = form.algebra
    work = int(form.G.nnz) + form.m + alg.dim + sum(9 * r**3 + 2**12 for r in alg.psd)
    return int(max(1000, ROUND_WORK_CAP // max(work, 1)))


def plan_schedule(setting: str, form: MWUForm, sens: RowSens, budget: Budget, *,
                  accuracy: float | None, beta: float, schedule: str, max_iterations: int,
                  adaptive: bool = False) -> Schedule:
    """Choose T, eta and the per-round split for ``setting`` ("constraint" or "scalar").

    ``schedule="paper"``: T and eta of Alg 1 (``T = 144 ln r / alpha^2``, ``eta = alpha/12``) or
    of Thm C.5 (``T = 16 ln r / alpha^2``, ``eta = alpha / 4``) for the requested accuracy.
    ``schedule="auto"``: among T <= max_iterations, the smallest T whose proven bound is at most
    the requested accuracy (the theorem's T for that accuracy); else, if the smallest proven
    bound is useful (``<= USEFUL_ALPHA`` normalised), the T minimising it (past it, more rounds
    make the bound worse: each round's share of the budget shrinks and the oracle and Gaussian
    errors grow like ``sqrt(T)``); else (the theorem is vacuous or nearly so for this budget)
    the practical schedule of :func:`_practical_schedule` (reported with ``valid=False``).
    In both, the oracle/Gaussian split of each round's zCDP minimises the bound and the step is
    the regret-optimal ``eta = sqrt(ln r / T)`` (Thm A.5: ``eta + ln r / (eta T)`` is smallest
    there, ``2 sqrt(ln r / T)``; the paper's ``alpha / 12`` is this at its own T up to the
    constant).  ``max_iterations`` is the caller's cap, at most :func:`iteration_cap` (docs/mwu.md).
    ``adaptive`` (auto schedule): the step is AdaHedge's and the regret term its worst case
    ``2 sqrt(ln r / T) + (4 + 2 Delta_0) / T`` (:func:`_bound`).
    """
    rho = total_rho(budget)
    eps_pure = budget.epsilon if isinstance(budget, PureDP) else 0.0
    if setting == "constraint" and rho is None:
        raise BudgetError("constraint privacy adds Gaussian noise and needs delta > 0 (or rho=); "
                          "pass epsilon= and delta=, or rho=.")
    m, r = form.m, form.algebra.rank
    lr = math.log(max(r, 2))
    f = np.linspace(0.02, 0.98, 49)[None, :] if setting == "constraint" else np.ones((1, 1))
    if schedule == "paper":
        if accuracy is None:
            raise PrivacyGuaranteeError(
                "schedule='paper' needs accuracy= (Alg 1 sets T and eta from it).")
        a = accuracy
        T0 = 144.0 * lr / a**2 if setting == "constraint" else 16.0 * lr / a**2
        T = np.array([[float(min(max(math.ceil(T0), 1), max_iterations))]])
        eta = np.array([[a / 12.0 if setting == "constraint" else a / 4.0]])
        eta = np.minimum(eta, 1.0)
    elif schedule == "auto":
        T = np.unique(np.round(np.geomspace(1, max_iterations, 240))).astype(float)[:, None]
        eta = None
    else:
        raise PrivacyGuaranteeError(f"schedule must be 'auto' or 'paper', got {schedule!r}.")
    adaptive = adaptive and schedule == "auto"
    alpha, eo, ez, e0, c, valid = _bound(setting, T, f, rho=rho, eps_pure=eps_pure, sens=sens,
                                         m=m, r=r, beta=beta, eta=eta, adaptive=adaptive)
    alpha, eo, ez = np.broadcast_arrays(alpha, eo, ez)
    valid = np.broadcast_to(valid, alpha.shape)
    Tb = np.broadcast_to(T, alpha.shape)
    etab = np.broadcast_to(np.minimum(1.0, np.sqrt(lr / T)) if eta is None else eta, alpha.shape)
    valid = valid & (alpha < 1.0)  # the theorems need alpha < 1 (normalised); else vacuous
    proven = np.where(valid, alpha, np.inf)
    certified = accuracy is not None and bool(np.any(proven <= accuracy))
    if schedule == "paper":
        i = np.unravel_index(np.argmin(np.where(valid, alpha, alpha + 1e9)),
                             alpha.shape)
    elif certified:  # the smallest T whose proven bound meets the requested accuracy
        score = np.where(proven <= accuracy, Tb + alpha / (1 + alpha.max()), np.inf)
        i = np.unravel_index(np.argmin(score), alpha.shape)
    elif valid.any() and float(proven.min()) <= USEFUL_ALPHA:
        i = np.unravel_index(np.argmin(proven), alpha.shape)
    else:
        return _practical_schedule(setting, sens, rho, eps_pure, r, max_iterations,
                                   float(np.min(alpha)))
    fb = np.broadcast_to(f, alpha.shape)
    e0b = np.broadcast_to(e0, alpha.shape)
    cb = np.broadcast_to(c, alpha.shape)
    return Schedule(T=int(Tb[i]), eta=float(etab[i]), split=float(fb[i]),
                    epsilon_oracle=float(e0b[i]), sigma_unit=float(cb[i]),
                    alpha=float(alpha[i]), valid=bool(valid[i]), oracle_error=float(eo[i]),
                    noise_bound=float(ez[i]),
                    loss_scale=1.0 / (sens.half_range + float(ez[i])), adaptive=adaptive)


def _practical_schedule(setting: str, sens: RowSens, rho: float | None, eps_pure: float,
                        r: int, max_iterations: int, alpha_min: float) -> Schedule:
    """Schedule for instances too small for the theorem's bound (it is >= 1 for every T).

    The cumulative loss ``eta * sum_t (a_p + z_t)`` has a per-coordinate noise-to-signal level
    ``nu = (Delta_score + D_2) / sqrt(rho_total)`` that does not depend on T (zCDP splits the
    budget as 1/T per round and the noise adds up as sqrt(T)); the iterate's "inverse
    temperature" ``Lambda = eta T`` should stay below ``1 / nu``.  We take
    ``Lambda = clip(1/nu, 1, 100)``, ``T = clip(Lambda / 2, 3, max_iterations)`` and
    ``eta = Lambda / T`` (an empirical choice on seeded LPs, not derived: docs/mwu.md).  Privacy is
    unaffected (it never depends on T or eta); only the utility bound is not the theorem's.
    """
    budget_rho = rho if rho is not None else eps_pure**2 / 2
    nu = (sens.score + (float(np.max(sens.d2)) if setting == "constraint" else 0.0)) / \
        math.sqrt(budget_rho)
    lam = float(np.clip(1.0 / max(nu, 1e-12), 1.0, LAMBDA_MAX))
    T = int(np.clip(round(lam / PRACTICAL_ETA), 3, max_iterations))
    f = 0.5 if setting == "constraint" else 1.0
    if setting == "scalar" and rho is None:
        e0, c = eps_pure / T, 0.0
    else:
        e0 = math.sqrt(8.0 * f * rho / T)
        c = 1.0 / math.sqrt(2.0 * (1.0 - f) * rho / T) if setting == "constraint" else 0.0
    return Schedule(T=T, eta=lam / T, split=f, epsilon_oracle=e0, sigma_unit=c,
                    alpha=alpha_min, valid=False, oracle_error=math.nan, noise_bound=math.nan,
                    loss_scale=0.5 if setting == "constraint" else 1.0)


def paper_alpha(setting: str, *, sens: RowSens, m: int, r: int, k: int, epsilon: float,
                delta: float, beta: float) -> float:
    """The paper's accuracy for the budget: fixed point of its utility bound (normalised units).

    Constraint (Thm C.9, constants as printed, with our corrections):
    ``a^2 = max(288 D sqrt(2 r ln r ln(1/d) ln(1.25 T/d)) (sqrt k + sqrt(2 ln(2T/b))) / e,
    576 D sqrt(ln r ln(1/d)) ln(2 T m / b) / e)``, ``T = 144 ln r / a^2``; scalar (Thm C.5):
    ``a^2 = 16 sqrt 8 D sqrt(ln r ln(1/d)) ln(m T / b) / e``, ``T = 16 ln r / a^2``.
    """
    lr, ld = math.log(max(r, 2)), math.log(1.0 / delta)
    D = float(np.max(sens.dinf + 0.0)) if setting == "constraint" else sens.score
    a = 1.0
    for _ in range(200):
        if setting == "constraint":
            T = max(144.0 * lr / a**2, 1.0)  # at least one round
            a2 = max(288 * D * math.sqrt(2 * r * lr * ld * math.log(1.25 * T / delta))
                     * (math.sqrt(k) + math.sqrt(2 * math.log(2 * T / beta))) / epsilon,
                     576 * D * math.sqrt(lr * ld) * math.log(2 * T * m / beta) / epsilon)
        else:
            T = max(16.0 * lr / a**2, 1.0)
            a2 = 16 * math.sqrt(8) * D * math.sqrt(lr * ld) * math.log(m * T / beta) / epsilon
        a = math.sqrt(max(a2, 1e-300))
    return a
