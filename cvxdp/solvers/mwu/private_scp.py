"""Private symmetric cone programs by noisy-oracle MWU: constraint, scalar and objective privacy.

* :func:`constraint_private_mwu` -- low-sensitivity constraint privacy (paper 002, Alg 1,
  Thms C.7/C.9): exponential-mechanism dual oracle + EJA Gaussian noise on the chosen row.
* :func:`scalar_private_mwu` -- scalar (right-hand side) privacy (Thm C.5): exponential-
  mechanism oracle only.
* :func:`objective_private_solve` -- objective privacy (Thm C.12): perturb ``c`` once, solve the
  perturbed program exactly inside a public ball (convex replacement of the paper's sphere).

Accounting (tighter than the paper, never looser): each round is accounted in zCDP (exponential
mechanism with parameter e: ``e^2/8``; Gaussian step: ``D^2 / (2 sigma^2)``), rounds are added,
and the total is converted once with the CKS bound.  The per-round parameters are solved so that
the total *exactly* meets the user's budget; the paper's advanced-composition noise is reported
beside ours in ``privacy.details``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from cvxdp.citations import (
    EJA_GAUSSIAN,
    SCP_CONSTRAINT_PRIVACY,
    SCP_OBJECTIVE_PRIVACY,
    SCP_SCALAR_PRIVACY,
    ZCDP_GAUSSIAN,
)
from cvxdp.errors import (
    BudgetError,
    InfeasibleProblemError,
    PrivacyGuaranteeError,
    PrivacySpecError,
)
from cvxdp.privacy.accountant import (
    FLOAT_DELTA_SHARE,
    PrivacyAccountant,
    PrivacyReport,
)
from cvxdp.privacy.budgets import ZCDP, ApproxDP, Budget, PureDP, zcdp_from_approx
from cvxdp.privacy.mechanisms import (
    exponential_float_delta,
    exponential_record,
    gaussian_noise,
    gaussian_record,
)
from cvxdp.solvers.mwu.loop import RowGaussianNoise
from cvxdp.solvers.mwu.mwu import MWUResult, scmwu
from cvxdp.solvers.mwu.mwu_form import MWUForm
from cvxdp.solvers.mwu.oracles import exponential_oracle
from cvxdp.solvers.public_part import public_bounds
from cvxdp.status import DEFAULT_ACCURACY
from cvxdp.transform.epigraph import epigraph_bounds
from cvxdp.transform.reference import solve_exact
from cvxdp.transform.scp import ConeDims, SymmetricConeProgram
from cvxdp.transform.sensitivity import objective_tensor, parameter_columns

__all__ = ["Schedule", "row_sensitivities", "plan_schedule", "constraint_private_mwu",
           "scalar_private_mwu", "objective_private_solve", "total_rho", "paper_alpha",
           "iteration_cap", "ROUND_WORK_CAP", "average_excess"]

PRACTICAL_ETA = 0.5  # step size of the practical schedule (T = Lambda / eta)
LAMBDA_MAX = 100.0  # cap on eta * T in the practical schedule
USEFUL_ALPHA = 0.25  # below this (normalised) the proven schedule is used by "auto"
#: multiply-adds one MWU run may spend (about a second compiled on small rows): the
#: wall-clock-free safety cap on T is this over the work of one round (see iteration_cap)
ROUND_WORK_CAP = 2**26
_SAFETY = 1.0 - 1e-10  # spend a hair less than the budget (floating point)
ALG1 = SCP_CONSTRAINT_PRIVACY
THM_C5 = SCP_SCALAR_PRIVACY


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


def row_sensitivities(form: MWUForm) -> RowSens:
    """Sensitivities of the rows of ``form`` from its entrywise bounds ``dG``, ``dh``.

    ``||a_i - a'_i||_2`` is bounded by the l2 norm of the entrywise bounds in phi-coordinates;
    the spectral norm by the largest orthant entry or the l2 norm of a cone block, whichever is
    larger (``||.||_inf <= ||.||_2`` blockwise).  The score ``<a_i, x> - h_i`` on a distribution x
    changes by at most ``||a_i - a'_i||_inf + |h_i - h'_i|`` (Hoelder, paper 002 Lemma C.8).
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
    return RowSens(d2=d2, dinf=dinf, support=dphi, score=score, kmax=kmax)


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


def average_excess(T: np.ndarray, beta: float) -> np.ndarray:
    """``1 + d`` with ``P[(1/T) sum_t E_t >= 1 + d] <= beta`` for ``E_t`` each dominated by a
    standard exponential given the past: the Chernoff bound ``exp(-T (d - ln(1 + d)))`` and
    ``d - ln(1 + d) >= d^2 / (2 (1 + d))`` give ``d = v + sqrt(v^2 + 2 v)``, ``v = ln(1/beta)/T``.
    """
    v = math.log(1.0 / beta) / T
    return 1.0 + v + np.sqrt(v * v + 2.0 * v)


def _bound(setting: str, T: np.ndarray, f: np.ndarray, *, rho: float | None, eps_pure: float,
           sens: RowSens, m: int, r: int, beta: float, eta: np.ndarray | None = None):
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
    if eta is None:
        eta = np.minimum(1.0, np.sqrt(lr / T))
    reg = eta + lr / (eta * T)
    lm = math.log(max(m, 1))
    if setting == "scalar":
        e0 = np.sqrt(8.0 * rho / T) if rho is not None else eps_pure / T
        e0 = e0 * np.ones_like(f)
        eo = 2.0 * sens.score / e0 * (lm + average_excess(T, beta))
        return reg + eo, eo, np.zeros_like(eo), e0, np.zeros_like(eo), eta <= 1
    rr = rho / T
    e0 = np.sqrt(8.0 * f * rr)
    c = 1.0 / np.sqrt(2.0 * (1.0 - f) * rr)
    eo = 2.0 * sens.score / e0 * (lm + average_excess(T, beta / 3.0))
    sigma = c * float(np.max(sens.d2))
    ez = sigma * (math.sqrt(max(sens.kmax, 1)) + np.sqrt(2.0 * np.log(3.0 * T / beta)))
    noise_avg = 2.0 * sigma * np.sqrt(2.0 * math.log(3.0 / beta) / T)
    alpha = (1.0 + ez) * reg + noise_avg + eo
    return alpha, eo, ez, e0, c, eta <= 1


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
                  accuracy: float | None, beta: float, schedule: str, max_iterations: int
                  ) -> Schedule:
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
    alpha, eo, ez, e0, c, valid = _bound(setting, T, f, rho=rho, eps_pure=eps_pure, sens=sens,
                                         m=m, r=r, beta=beta, eta=eta)
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
                    loss_scale=1.0 / (1.0 + float(ez[i])))


def _practical_schedule(setting: str, sens: RowSens, rho: float | None, eps_pure: float,
                        r: int, max_iterations: int, alpha_min: float) -> Schedule:
    """Schedule for instances too small for the theorem's bound (it is >= 1 for every T).

    The cumulative loss ``eta * sum_t (a_p + z_t)`` has a per-coordinate noise-to-signal level
    ``nu = (Delta_score + D_2) / sqrt(rho_total)`` that does not depend on T (zCDP splits the
    budget as 1/T per round and the noise adds up as sqrt(T)); the iterate's "inverse
    temperature" ``Lambda = eta T`` should stay below ``1 / nu``.  We take
    ``Lambda = clip(1/nu, 1, 100)``, ``T = clip(Lambda / 2, 3, max_iterations)`` and
    ``eta = Lambda / T`` (a calibration measured on seeded LPs, see docs/solvers.md).  Privacy is
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
                    alpha=alpha_min, valid=False, oracle_error=math.nan, noise_bound=math.nan)


def paper_alpha(setting: str, *, sens: RowSens, m: int, r: int, k: int, epsilon: float,
                delta: float, beta: float) -> float:
    """The paper's accuracy for the budget: fixed point of digest §5 / §6 (normalised units).

    Constraint (Thm C.9, constants as printed with the digest's corrections):
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


def _noise_fn(sens: RowSens, sigma_unit: float, phi_scale: np.ndarray) -> RowGaussianNoise:
    """Gaussian noise on the chosen row's private coordinates (in dual coordinates).

    Draws ``nu ~ N(0, (sigma_unit * D2_p)^2)`` in phi-coordinates on the support of row p and maps
    it to dual coordinates (``g = phi_scale * nu``): the EJA Gaussian mechanism of paper 002
    Lemma 4.2 restricted to the coordinates that can differ between neighbours
    (:class:`cvxdp.solvers.mwu.loop.RowGaussianNoise`, which the batched loop draws a block of
    rounds at a time).
    """
    return RowGaussianNoise(support=sens.support, d2=sens.d2, sigma_unit=float(sigma_unit),
                            phi_scale=phi_scale)


def _details(setting: str, sch: Schedule, sens: RowSens, form: MWUForm, budget: Budget,
             rho: float | None, beta: float) -> dict[str, Any]:
    scale = form.R * form.rho
    out: dict[str, Any] = {
        "setting": setting, "T": sch.T, "eta": sch.eta, "beta": beta,
        "rho_total": rho, "rho_per_round": None if rho is None else rho / sch.T,
        "oracle_share": sch.split, "epsilon_oracle": sch.epsilon_oracle,
        "score_sensitivity": sens.score * scale,
        "sigma": sch.sigma_unit * float(np.max(sens.d2)) * form.rho if sch.sigma_unit else 0.0,
        "l2_sensitivity": float(np.max(sens.d2)) * form.rho if sens.d2.size else 0.0,
        "trace_bound": form.R, "width": form.rho, "rank": form.algebra.rank,
        "dim": form.algebra.dim, "constraints": form.m,
    }
    if isinstance(budget, ApproxDP) and budget.delta > 0:
        e, d, T = budget.epsilon, budget.delta, sch.T
        if setting == "constraint":
            ep = e / (4.0 * math.sqrt(T * math.log(1.0 / d)))
            sp_ = (float(np.max(sens.dinf)) * form.rho
                   * math.sqrt(2 * form.algebra.rank * math.log(1.25 * T / d)) / ep)
            out.update(paper_epsilon_prime=ep, paper_sigma=sp_,
                       sigma_ratio_paper_over_cvxdp=sp_ / out["sigma"] if out["sigma"] else None)
        else:
            ep = e / math.sqrt(8.0 * T * math.log(1.0 / d))
            out.update(paper_epsilon_prime=ep)
        out["oracle_epsilon_ratio_cvxdp_over_paper"] = sch.epsilon_oracle / ep
    return out


def _run(setting: str, form: MWUForm, budget: Budget, *, accuracy: float | None, beta: float,
         schedule: str, max_iterations: int, rng: np.random.Generator, verbose: bool,
         accountant: PrivacyAccountant) -> tuple[MWUResult, dict[str, Any]]:
    sens = row_sensitivities(form)
    if setting == "constraint" and not np.any(sens.d2 > 0):
        setting_eff = "scalar" if sens.score > 0 else "none"
    else:
        setting_eff = setting
    if sens.score <= 0:
        raise BudgetError("no constraint row carries private data; nothing to protect -- "
                          "check the privacy spec (or solve the model without privacy).")
    # the schedule aims at the requested accuracy, or at the one the status is judged against
    # (the paper's schedule sets T from accuracy= itself and refuses to run without it)
    target = DEFAULT_ACCURACY if accuracy is None and schedule != "paper" else accuracy
    acc_n = None if target is None else target / (form.R * form.rho)
    cap = iteration_cap(form)
    sch = plan_schedule(setting_eff, form, sens, budget, accuracy=acc_n, beta=beta,
                        schedule=schedule, max_iterations=min(int(max_iterations), cap))
    rho = total_rho(budget)
    accountant.spend(exponential_record(
        epsilon=sch.epsilon_oracle, count=sch.T, sensitivity=sens.score * form.R * form.rho,
        candidates=int(form.G.shape[0]),
        float_delta=exponential_float_delta(candidates=int(form.G.shape[0]),
                                            epsilon=sch.epsilon_oracle)))
    noise = None
    if setting_eff == "constraint":
        accountant.spend(gaussian_record(sigma=sch.sigma_unit, sensitivity=1.0, count=sch.T,
                                         mechanism="eja_gaussian",
                                         reference=EJA_GAUSSIAN + "; Cor 4.4; "
                                                   + ZCDP_GAUSSIAN,
                                         note="sigma per unit of each row's l2 sensitivity"))
        noise = _noise_fn(sens, sch.sigma_unit, form.algebra.phi_scale)
    oracle = exponential_oracle(epsilon=sch.epsilon_oracle, sensitivity=sens.score)
    res = scmwu(form.G, form.h, form.algebra, eta=sch.eta, iterations=sch.T, oracle=oracle,
                rng=rng, loss_scale=sch.loss_scale if setting_eff == "constraint" else 1.0,
                noise=noise,
                verbose=verbose)
    det = _details(setting_eff, sch, sens, form, budget, rho, beta)
    det["iteration_cap"] = cap
    det["backend"] = res.info.get("backend")
    scale = form.R * form.rho
    det["alpha_guaranteed"] = sch.alpha * scale if sch.valid else None
    det["alpha_bound_at_schedule"] = sch.alpha * scale
    det["theorem_conditions_hold"] = sch.valid
    if isinstance(budget, ApproxDP) and budget.delta > 0:
        det["alpha_paper"] = paper_alpha(setting_eff, sens=sens, m=form.m,
                                         r=form.algebra.rank, k=form.algebra.dim,
                                         epsilon=budget.epsilon, delta=budget.delta,
                                         beta=beta) * scale
    return res, det


def constraint_private_mwu(form: MWUForm, budget: Budget, **kw: Any
                           ) -> tuple[MWUResult, dict[str, Any]]:
    """Low-sensitivity constraint-private MWU (paper 002, Alg 1).

    Each round: the exponential mechanism picks an approximately most violated row (scores
    ``<a_i, x^t> - h_i``, sensitivity ``max_i ||a_i - a'_i||_inf``, Lemma C.8), the chosen row
    is released with EJA Gaussian noise (sensitivity ``||a_p - a'_p||_2``, Lemma 4.2), and the
    loss ``(a_p + z)/2`` enters the cumulative-loss SCMWU.  Privacy: Thm C.7 with zCDP accounting
    (see module doc).  Utility: Thm C.9, restated for general (T, eta, noise):
    ``max_i <a_i, x> - h_i <= (1 + E_z) (eta + ln r / (eta T)) + N + E_o`` (``N`` and ``E_o``
    the noise's and the oracle's errors averaged over the rounds, :func:`_bound`), the loss being
    ``(a_p + z) / (1 + E_z)`` (the paper's ``1/2`` is the case ``E_z = 1``: the halving only
    keeps ``||loss||_inf <= 1`` under noise of norm ``E_z``, Thm C.9 proof step 4).

    References
    ----------
    Song, Xue & Zhang (2025), "Differential Privacy for Euclidean Jordan Algebra with
    Applications to Private Symmetric Cone Programming":
    Algorithm 1, Theorems C.7 and C.9, Lemma C.8, Lemma 4.2.
    """
    return _run("constraint", form, budget, **kw)


def scalar_private_mwu(form: MWUForm, budget: Budget, **kw: Any
                       ) -> tuple[MWUResult, dict[str, Any]]:
    """Scalar-private MWU (paper 002, Thm C.5): only the exponential-mechanism oracle touches b.

    Utility (Thm C.2 with the oracle error of Lemma C.4 averaged over the rounds, see
    :func:`_bound`): ``eta + ln r/(eta T) + E_o``.

    References
    ----------
    Song, Xue & Zhang (2025), "Differential Privacy for Euclidean Jordan Algebra with
    Applications to Private Symmetric Cone Programming":
    Algorithm 5, Theorem C.2, Lemma C.4, Theorem C.5.
    """
    return _run("scalar", form, budget, **kw)


THM_C12 = SCP_OBJECTIVE_PRIVACY


def objective_private_solve(scp: Any, sb: Any, budget: Budget, *, rng: np.random.Generator,
                            beta: float, norm_bound: float | None, neighbouring: str
                            ) -> tuple[np.ndarray, PrivacyReport, dict[str, Any]]:
    """Objective privacy: release ``c~ = c + z`` once, then solve exactly (post-processing).

    The canonical objective ``c`` lives on the cone program's variables ``x in R^n`` (the
    orthant algebra with the identity isometry), so the EJA Gaussian mechanism is the vector
    Gaussian on the coordinates of ``c`` that can change (l2 sensitivity ``||dc||_2``), calibrated
    exactly (analytic Gaussian for (epsilon, delta), ``D / sqrt(2 rho)`` for zCDP).  The perturbed
    program ``min c~'x  s.t. A x + s = b, s in K, ||x_S||_2 <= R`` uses the convex ball of a
    public radius R instead of the paper's unit sphere (which is not convex), and only on the
    coordinates ``S`` the noise touches (``z`` is supported on ``S``): the proof of Thm C.12
    only needs ``c'x~ - c'x* = z'(x* - x~) + (c~'x~ - c~'x*) <= ||z|| (||x*_S|| + ||x~_S||)``
    with the original optimum inside the ball, so with probability ``1 - beta`` the answer is
    exactly feasible and its objective is within ``2 R ||z||_2 <= 2 R sigma (sqrt(k) +
    sqrt(2 ln(1/beta)))`` of the optimum (``k`` = number of private coordinates).  R is
    ``norm_bound`` or computed from the (public) constraints.  CVXPY's epigraph variables (of
    ``quad_form``, ``sum_squares``, norms) are not in ``S``, so they need no bound.  When the
    public constraints do not bound ``x_S`` (and no ``norm_bound`` is given) the perturbed
    program is solved without the ball -- still private (post-processing) and exactly feasible
    -- but no sub-optimality bound holds: ``alpha_guaranteed`` is None.

    References
    ----------
    Song, Xue & Zhang (2025), "Differential Privacy for Euclidean Jordan Algebra with
    Applications to Private Symmetric Cone Programming":
    Definition C.11, Theorem C.12, Corollary 4.4.
    """
    if isinstance(budget, PureDP):
        raise BudgetError("objective privacy uses the Gaussian mechanism and needs delta > 0 "
                          "(or rho=); pass epsilon= and delta=.")
    dc = np.abs(np.asarray(sb.c, dtype=float))
    supp = np.flatnonzero(dc > 0)
    if supp.size == 0:
        raise PrivacySpecError("the private parameter does not enter the objective's "
                               "coefficients; nothing to protect with ObjectivePrivacy.")
    n = scp.n
    R: float | None
    if norm_bound is None:
        # only the coordinates the noise touches need a bound (see the docstring); CVXPY's
        # epigraph variables (of quad_form, sum_squares, norms) carry no private coefficient
        R, src = _private_coordinate_radius(scp, supp)
    else:
        R, src = float(norm_bound), "user"
    # The objective's constant term moves with c when the private parameter sits in it
    # (``c @ (x - 0.3)``).  The released value must come from released quantities only: take the
    # offset as a public linear function of the noisy c when the model makes it one, else noise
    # it jointly with c (one more coordinate of the Gaussian mechanism).
    w_off = _offset_from_c(scp, sb) if sb.offset > 0 else None
    noise_offset = sb.offset > 0 and w_off is None
    d_off = float(sb.offset) if noise_offset else 0.0
    D2 = float(np.sqrt(np.sum(dc**2) + d_off**2))
    # the one Gaussian calibration and record (privacy.mechanisms.gaussian_noise): the exact
    # analytic Gaussian for (epsilon, delta) (Balle & Wang 2018), D / sqrt(2 rho) for zCDP
    sigma, rec = gaussian_noise(budget, sensitivity=D2, mechanism="eja_gaussian",
                                reference=THM_C12)
    eps, dl = (None, None) if isinstance(budget, ZCDP) else (budget.epsilon, budget.delta)
    c_noisy = np.asarray(scp.c, dtype=float).copy()
    z = rng.normal(0.0, sigma, size=supp.size + int(noise_offset))
    c_noisy[supp] += z[:supp.size]
    if sb.offset == 0:  # public constant term
        offset_noisy, offset_source = float(scp.offset), "public"
    elif noise_offset:
        offset_noisy, offset_source = float(scp.offset) + float(z[-1]), "noised"
    else:  # offset = w . c + public constant, hence offset + w . z is a function of c~
        offset_noisy = float(scp.offset) + float(w_off[supp] @ z[:supp.size])
        offset_source = "derived from the noisy c"
    # append the SOC block (R, x_S) after the existing SOC blocks (SCS order)
    d = scp.dims
    if R is not None:
        at = d.zero + d.nonneg + sum(d.soc)
        sel = sp.csr_matrix((np.ones(supp.size), (np.arange(supp.size), supp)),
                            shape=(supp.size, n))
        ball_A = sp.vstack([sp.csr_matrix((1, n)), -sel])
        A2 = sp.vstack([scp.A[:at], ball_A, scp.A[at:]], format="csc")
        b2 = np.concatenate([scp.b[:at], [R], np.zeros(supp.size), scp.b[at:]])
        dims2 = ConeDims(zero=d.zero, nonneg=d.nonneg, soc=(*d.soc, supp.size + 1), psd=d.psd)
    else:
        A2, b2, dims2 = scp.A, scp.b, d
    sol = solve_exact(SymmetricConeProgram(A=A2, b=b2, c=c_noisy, offset=offset_noisy,
                                           dims=dims2, cone=None, sign=scp.sign))
    if sol.x is None:
        hint = ("that norm_bound= contains a solution" if R is not None else
                "that the variables the private objective multiplies are bounded by public "
                "constraints (or pass norm_bound=, a public bound on their Euclidean norm)")
        raise InfeasibleProblemError(
            f"the perturbed program is {sol.status} (the constraints are public here, and the "
            f"noisy objective is released, so this is public): check that the model is "
            f"feasible and {hint}.")
    k = supp.size
    alpha = (None if R is None else
             2 * R * sigma * (math.sqrt(k) + math.sqrt(2 * math.log(1 / beta))))
    details: dict[str, Any] = {"setting": "objective", "sigma": sigma, "l2_sensitivity": D2,
                               "noised_coordinates": int(k) + int(noise_offset),
                               "offset_source": offset_source, "norm_bound": R,
                               "norm_bound_source": src, "alpha_guaranteed": alpha,
                               "beta": beta}
    if eps is not None and R is not None:
        r = n
        sig_p = float(dc.max()) * math.sqrt(2 * r * math.log(1.25 / dl)) / eps
        details.update(paper_sigma=sig_p, sigma_ratio_paper_over_cvxdp=sig_p / sigma,
                       alpha_paper=2 * R * sig_p * (math.sqrt(n) + math.sqrt(
                           2 * math.log(1 / beta))))
    report = PrivacyReport(guarantee="dp", epsilon=eps, delta=dl, rho=rec.zcdp.rho,
                           neighbouring=neighbouring, theorem=THM_C12, records=(rec,),
                           details=details)
    value = scp.sign * float(c_noisy @ sol.x + offset_noisy)
    info = {"method": "objective_perturbation", "setting": "objective",
            "alpha_guaranteed": alpha, "value": value,
            "noisy_objective": {"c": c_noisy, "offset": offset_noisy,
                                "offset_source": offset_source}}
    return np.asarray(sol.x), report, info


def _private_coordinate_radius(scp: Any, supp: np.ndarray) -> tuple[float | None, str]:
    """Public bound R on ``||x_S||_2`` at some optimal point, and where it came from.

    Per-coordinate bounds over the (public) constraints; a coordinate they leave unbounded
    that is an epigraph variable (``w_i * norm(x - p_i)``: ``t_i >= ||x - p_i||``) is bounded
    by the largest value its cone's rows take over the other variables' bounds
    (:func:`cvxdp.transform.epigraph.epigraph_bounds`: some optimal point has ``t_i`` tight).
    """
    n = scp.n
    eye = np.eye(n)
    no_private = np.zeros(scp.m, dtype=bool)
    lo, hi = np.full(n, -np.inf), np.full(n, np.inf)
    l_s, h_s = public_bounds(scp.A, scp.b, scp.dims, no_private, [eye[j] for j in supp],
                             allow_unbounded=True)
    lo[supp], hi[supp] = l_s, h_s
    src = "constraints"
    if not (np.all(np.isfinite(lo[supp])) and np.all(np.isfinite(hi[supp]))):
        # bound the variables the unbounded epigraph cones read, then the epigraph variables
        d = scp.dims
        soc_start = d.zero + d.nonneg
        A = sp.csr_matrix(scp.A)
        need = set()
        r0 = soc_start
        for q in d.soc:
            head_cols = A.indices[A.indptr[r0]:A.indptr[r0 + 1]]
            if np.isin(head_cols, supp[~np.isfinite(hi[supp])]).any():
                rest = A[r0 + 1:r0 + q]
                need.update(int(j) for j in np.unique(rest.indices))
            r0 += q
        need -= set(int(j) for j in supp)
        need_idx = np.array(sorted(need), dtype=int)
        if need_idx.size:
            l_n, h_n = public_bounds(scp.A, scp.b, scp.dims, no_private,
                                     [eye[j] for j in need_idx], allow_unbounded=True)
            lo[need_idx], hi[need_idx] = l_n, h_n
        hi = epigraph_bounds(scp.A, scp.b, d.soc, soc_start, lo, hi,
                             np.ones(scp.m, dtype=bool))
        src = "constraints and epigraph bounds"
    big = np.maximum(np.abs(lo[supp]), np.abs(hi[supp]))
    if not np.all(np.isfinite(big)):
        return None, "none (the public constraints do not bound the private coordinates)"
    return float(np.sqrt(np.sum(big**2))) * (1 + 1e-9), src


def _offset_from_c(scp: Any, sb: Any) -> np.ndarray | None:
    """``w`` with ``offset = w . c + (public)`` for every value of the private parameters, or None.

    CVXPY's objective tensor gives ``c = T_c theta + ...`` and ``offset = t_o . theta + ...`` on
    the private parameters' entries ``theta``; when ``t_o = T_c' w`` the constant term is a
    public linear function of ``c`` (e.g. ``c @ (x - 0.3)``: ``offset = -0.3 sum(c)``).  The
    tensors hold the model's structure and public constants only, so the test is public.
    """
    pp = scp.meta.get("param_prob")
    if pp is None:
        return None
    cols = np.concatenate([parameter_columns(pp, p, "ObjectivePrivacy")
                           for spec in sb.specs for p in spec.params])
    Tq = sp.csr_matrix(objective_tensor(pp))
    n = scp.n
    if n * cols.size > 4_000_000:  # too large for a dense solve: noise the offset instead
        return None
    Tc = Tq[:n][:, cols].toarray()
    to = Tq[n][:, cols].toarray().ravel()
    w, *_ = np.linalg.lstsq(Tc.T, to, rcond=None)
    if np.max(np.abs(Tc.T @ w - to)) > 1e-9 * max(1.0, float(np.max(np.abs(to)))):
        return None
    return w
