"""The public schedule of the private covering solver: rounds T, oracle concentration, step size
and the budget split, all functions of public values (the budget, the dimension, ``s``,
``m_max``, ``opt``).

References
----------
Song, Xue & Zhang (2025), Alg. 3, Lemma B.5, Thm B.7, Lemma B.9, Thm B.10.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from cvxdp.argument_values import check_beta, check_number
from cvxdp.errors import NOT_NUMBERS, BudgetError, PrivacyGuaranteeError, PrivacySpecError
from cvxdp.privacy.accountant import FLOAT_DELTA_SHARE
from cvxdp.privacy.budgets import ZCDP, ApproxDP, Budget, PureDP, zcdp_from_approx
from cvxdp.privacy.clipping import COUNT_SHARE, count_share
from cvxdp.privacy.mechanisms import exponential_float_delta
from cvxdp.status import DEFAULT_ACCURACY, DEFAULT_BETA

__all__ = ["CoveringSchedule", "plan_schedule", "kappa_target", "split_count_budget",
           "rounds_bound", "dual_noise_weights", "count_epsilon", "cert_informative",
           "SCALE_FRACTION", "SCALE_GRID", "T_BUDGET_MAX", "SCALE_TILT",
           "CERT_FRACTION", "ETA_BUDGET", "ETA_MAX", "SCALE_RESOLUTION", "SCALE_RANGE",
           "M_DEFAULT"]

#: share of the zCDP budget given to the private scaling (OPT search) when ``opt`` is unknown
SCALE_FRACTION = 0.25
#: share of the budget for the certificate's noisy statistics (practical schedule): the count
#: of rows the released point leaves short and the dual pair (docs/covering.md, "Certificate")
CERT_FRACTION = 0.1
#: smallest size of the public geometric grid of candidate traces for the scaling step
SCALE_GRID = 128
#: relative spacing of that grid: a tenth of the default accuracy (1e-2), so that rounding the
#: trace up to the grid costs at most 0.1% of the objective
SCALE_RESOLUTION = 1e-3
#: the default grid reaches SCALE_RANGE x 2 dim (OPT <= dim only when the identity / all-ones
#: point is feasible; the grid's width costs the mechanism only the log of its size)
SCALE_RANGE = 100.0
#: time limit on the rounds a large budget buys in the practical schedule (``s`` not given);
#: the number itself comes from :func:`rounds_bound` (100,000 rounds of a 200 x 6 LP: ~5 s)
T_BUDGET_MAX = 100_000
#: step of the practical schedule when the budget buys rounds: chosen from {0.5, 1, 2} on seed-1
#: draws of the gallery's covering models, then from {2, 4, 8} on the same draws once the
#: certificate's dual no longer came from the MWU's mean (covering LP 4.4% / 4.0% / 3.7%, set
#: cover and SDP tied); reported on seed 0 (docs/covering.md).  The multiplicative Hedge bound
#: holds for every eta > 0; a large step suits covering losses, which sit near 1/OPT, not near 1
ETA_BUDGET = 8.0
#: largest step accepted by the practical schedule
ETA_MAX = 8.0
#: stand-in for the private number of rows in the rounds rule when no public m_max is given
#: (the rule depends on it through sqrt(log N) only)
M_DEFAULT = 1000
#: public tilt of the scaling step towards cheaper traces: the exponent drops by this much
#: from the bottom to the top of the grid (data-independent, so it costs no privacy)
SCALE_TILT = 4.0
_PAPER_MAX_T = 200_000

@dataclass(frozen=True)
class CoveringSchedule:
    """Public parameters of one private covering run (all data-independent).

    ``s`` density (how many constraints may be violated), ``T`` rounds, ``eta`` step,
    ``eps_round`` the per-round exponential-mechanism parameter, ``kappa`` the concentration of
    the oracle in normalised units (``eps_round * OPT / (2 Delta_Q)``), ``eps_scale`` the
    scaling step's parameter (0 when ``opt`` is given), ``grid`` the candidate traces,
    ``opt_level`` the level used for the paper's losses (``None`` for the practical schedule),
    ``paper_eps_round`` the per-round epsilon of the paper's advanced composition for the same
    total (for comparison), ``n_dummy`` the public dummy actions, ``eps_count`` / ``eps_dual``
    the pure epsilons of the certificate's noisy statistics (0: none), ``composition`` how the
    rounds compose ("basic" or "zcdp"), ``level`` the public OPT level of the rounds rule and
    the tilt.
    """

    kind: str
    dim: int
    schedule: str
    s: float
    T: int
    eta: float
    eps_round: float
    kappa: float
    sensitivity: float
    eps_scale: float
    grid: tuple[float, ...]
    target: float
    opt: float | None
    opt_level: float | None
    width: float
    paper_eps_round: float | None
    n_dummy: int
    oracle: str
    m_max: int | None
    beta: float
    eps_count: float = 0.0
    eps_dual: float = 0.0
    composition: str = "zcdp"
    level: float = 1.0

    @property
    def eps_cert(self) -> float:
        """Pure epsilon of the certificate's two Laplace releases together (0: none)."""
        return self.eps_count + self.eps_dual

    def as_dict(self) -> dict[str, Any]:
        d = {f.name: getattr(self, f.name) for f in fields(self)}  # no deep copy of the grid
        d["eps_cert"] = self.eps_cert
        d["grid"] = (self.grid[0], self.grid[-1], len(self.grid)) if self.grid else ()
        return d


def _total_rho(budget: Budget) -> float | None:
    # shaved by 1e-10 (relative) so that float round-off never reports epsilon above the target
    if isinstance(budget, ZCDP):
        return budget.rho * (1 - 1e-10)
    if isinstance(budget, ApproxDP) and budget.delta > 0:
        # a share of delta is kept for the float samplers (FLOAT_DELTA_SHARE)
        return zcdp_from_approx(budget.epsilon,
                                budget.delta * (1 - FLOAT_DELTA_SHARE)) * (1 - 1e-10)
    return None  # pure DP: basic composition


def plan_schedule(
    budget: Budget, *, kind: str, dim: int, s: float | None = None, T: int | None = None,
    eta: float | None = None, opt: float | None = None,
    opt_bounds: tuple[float, float] | None = None, schedule: str = "practical",
    accuracy: float | None = None, m_max: int | None = None, beta: float = DEFAULT_BETA,
    oracle: str = "exact_sampler",
) -> CoveringSchedule:
    """Choose the public parameters from the budget and public sizes only (never from data).

    Practical schedule (default): per-round ``eps'`` the larger of ``sqrt(8 rho_mwu / T)``
    (zCDP of the exponential mechanism, converted once by CKS) and ``eps_mwu / T`` (basic
    composition of the pure rounds, the better one at a large epsilon, where ``rho`` grows only
    like ``epsilon``); sensitivity ``OPT/s``, ``eta = 1/2``.  The oracle concentration
    ``kappa = eps' s / 2`` is aimed at ``kappa* = 2 r`` (SDP: sphere error about
    ``(r-1)/(2 kappa) ~ 1/4``) or ``4 log(2n)`` (LP).  Without ``s`` and ``T`` the budget buys
    rounds: ``T`` minimises :func:`rounds_bound` (the multiplicative Hedge regret plus the
    exponential mechanism's expected shortfall, at ``s = 1``) over the ``T`` whose oracle still
    reaches ``kappa*``, between ``T_min`` (``max(8, r)`` SDP, ``max(20, 2n)`` LP) and the time
    limit ``T_BUDGET_MAX``, with ``eta = ETA_BUDGET`` when ``T > T_min``; ``s`` is then the
    smallest value reaching ``kappa*``.  With ``s`` given: the largest ``T`` keeping
    ``kappa >= 2 kappa*``, within ``[T_min, 10 T_min]``.  ``CERT_FRACTION`` of the budget goes
    to the certificate's statistics when their noise can meet the default accuracy
    (:func:`cert_informative`), else none.  The private trace's grid is geometric with spacing
    ``SCALE_RESOLUTION`` up to ``SCALE_RANGE x 2 dim`` (or the user's ``opt_bounds``).
    Paper schedule: ``T = ceil(36 rho_w^2 log(m_max) / alpha^2)``, ``eta = sqrt(log(m_max)/T)``,
    ``eps' = eps/sqrt(8 T log(1/delta))``, sensitivity ``3 OPT/s``, width
    ``rho_w = max(1, 3 OPT - 1)`` (Alg. 3, Thm B.7, Lemma B.9).

    References
    ----------
    Song, Xue & Zhang (2025), Alg. 3, Lemma B.3, Thm B.7, Lemma B.9; Freund & Schapire (1997),
    Thm 2 (Hedge for any eta > 0); Herbster & Warmuth (2001) (KL projections keep the bound);
    Dwork & Roth (2014), Thm 3.16 (basic composition); Cesar & Rogers (2021) and Canonne,
    Kamath & Steinke (2020) (zCDP of the exponential mechanism, conversion).

    Raises
    ------
    PrivacySpecError, BudgetError, PrivacyGuaranteeError
        Missing public bounds, a budget the schedule cannot use, or an infeasible schedule.
    """
    if schedule not in ("practical", "paper"):
        raise PrivacySpecError(f"schedule must be 'practical' or 'paper', got {schedule!r}.")
    lo, hi = (1.0, 2.0 * dim) if opt_bounds is None else _opt_bounds(opt_bounds)
    if opt is not None:
        check_number("opt", opt, "a finite public number > 0 (the optimum's value)",
                     lambda v: v > 0, error=PrivacySpecError)
    beta = check_beta(beta)
    if m_max is not None and int(m_max) < 1:
        raise PrivacySpecError(f"m_max must be a public integer >= 1, got {m_max!r}.")
    if s is not None:
        check_number("s", s, "a finite number >= 1 (how many constraints may be violated)",
                     lambda v: v >= 1, error=PrivacySpecError)
    if eta is not None:
        check_number("eta", eta, "a finite number > 0 (the MWU step)", lambda v: v > 0,
                     error=PrivacySpecError)
    rho_tot = _total_rho(budget)
    scale = opt is None
    eps_count = eps_dual = 0.0
    composition = "zcdp" if rho_tot is not None else "basic"
    level_pub = hi if opt_bounds is not None else 2.0 * dim  # public OPT level (rounds, tilt)
    fine_hi = hi if opt_bounds is not None else SCALE_RANGE * hi
    fine_size = max(SCALE_GRID,
                    math.ceil(math.log(fine_hi / lo) / math.log1p(SCALE_RESOLUTION)) + 1)
    fd_keep = (budget.delta * FLOAT_DELTA_SHARE
               if isinstance(budget, ApproxDP) and budget.delta > 0 else 0.0)

    def _grid(eps_s: float) -> tuple[int, float]:
        # the fine, wide grid only where it cannot weaken the reported guarantee: its float
        # sampler's delta fits in the share kept for it, or the coarse grid's is vacuous too
        if (exponential_float_delta(candidates=fine_size, epsilon=eps_s) <= fd_keep
                or exponential_float_delta(candidates=SCALE_GRID, epsilon=eps_s) >= 1.0):
            return fine_size, fine_hi
        return SCALE_GRID, hi
    if schedule == "practical":
        if accuracy is not None:
            raise PrivacySpecError(
                "accuracy= sets alpha of schedule='paper' (T = 36 rho^2 log m / alpha^2); the "
                "default schedule is set by s= (how many constraints may fail) and the budget. "
                "Drop accuracy= or pass schedule='paper'.")
        eta_given = eta is not None
        eta = 0.5 if eta is None else float(eta)
        sdim = dim - 1 if kind == "soc" else dim  # sphere of candidates: S^{r-1} / S^{n-2}
        k_star = kappa_target(kind, dim)
        t_min = max(8, sdim) if kind != "lp" else max(20, 2 * dim)
        T_in, s_in, eta_in = T, s, eta
        eps_tot = (budget.epsilon * (1 - 1e-10)
                   if isinstance(budget, (ApproxDP, PureDP)) else None)

        def _float_delta(eps_r: float, eps_s: float, t: float) -> float:
            # the float samplers' delta ((1 + e^eps) x their total variation,
            # exponential_float_delta): the LP's Gumbel rounds and the trace's grid
            fd = t * exponential_float_delta(candidates=dim, epsilon=eps_r) if kind == "lp" \
                else 0.0
            if scale:
                fd += exponential_float_delta(candidates=_grid(eps_s)[0], epsilon=eps_s)
            return min(fd, 1.0)
        # the certificate's statistics get CERT_FRACTION of the budget when their noise alone
        # leaves room for the default accuracy (cert_informative); otherwise nothing is spent on
        # them and the rounds keep the whole share
        for cert_share in (CERT_FRACTION, 0.0):
            T, s, eta = T_in, s_in, eta_in
            share = 1.0 - (SCALE_FRACTION if scale else 0.0) - cert_share
            # per-round epsilon of the exponential mechanism at T rounds, by each composition the
            # budget allows: basic composition of pure-DP rounds (total epsilon; Dwork & Roth 2014,
            # Thm 3.16) and zCDP (eps'^2/8 per round, Cesar & Rogers 2021) converted by CKS 2020

            def per_round(t: float, share: float = share) -> tuple[float, str]:
                e_tot = eps_tot
                best = (e_tot * share / t, "basic") if e_tot is not None else (0.0, "basic")
                if rho_tot is not None:
                    e_z = math.sqrt(8 * rho_tot * share / t)
                    e_zs = math.sqrt(8 * rho_tot * SCALE_FRACTION)
                    # zCDP when its rounds are more accurate, or when basic's float samplers
                    # would add more delta than zCDP's (beyond the share kept for them): basic
                    # never weakens the reported guarantee
                    if e_tot is None or e_z > best[0] or _float_delta(
                            best[0], e_tot * SCALE_FRACTION, t) > max(
                            _float_delta(e_z, e_zs, t), fd_keep):
                        best = (e_z, "zcdp")
                return best

            if rho_tot is None:
                eps_mwu = eps_tot * share
                t_fit = (eps_mwu * s / (4 * k_star)) if s is not None else 0.0
            else:
                rho_mwu = rho_tot * share
                t_fit = (2 * rho_mwu * s**2 / (2 * k_star) ** 2) if s is not None else 0.0
            budget_rounds = False
            if T is None and s is None:
                # the budget buys rounds: the T minimising the bound of rounds_bound at s = 1,
                # among the T whose oracle still reaches kappa* at s = 1 (T_min at least)
                t_top = t_min
                while t_top < T_BUDGET_MAX and per_round(2 * t_top)[0] / 2 >= k_star:
                    t_top *= 2
                cands = sorted({t_min, *np.unique(np.geomspace(
                    t_min, max(t_min, t_top), 64).astype(int)).tolist()})
                cands = [t for t in cands if t_min <= t <= T_BUDGET_MAX
                         and (t == t_min or per_round(t)[0] / 2 >= k_star)]
                n_rows = (int(m_max) if m_max is not None else M_DEFAULT) + 1
                T = min(cands, key=lambda t: rounds_bound(kind, dim, t, per_round(t)[0],
                                                          level_pub, n_rows))
                budget_rounds = T > t_min
            elif T is None:
                T = int(min(max(t_min, math.floor(t_fit)), 10 * t_min))
            T = int(T)
            if T < 1:
                raise PrivacySpecError(f"T must be >= 1, got {T!r}.")
            if budget_rounds and not eta_given:
                eta = ETA_BUDGET
            eps_round, composition = per_round(T)
            if composition == "basic":
                eps_scale = eps_tot * SCALE_FRACTION if scale else 0.0
                # the count needs no more than count_epsilon; the rest to the dual pair
                e_cert = eps_tot * cert_share
                eps_count = min(e_cert / 3, count_epsilon(beta))
                eps_dual = e_cert - eps_count
            else:
                eps_scale = math.sqrt(8 * rho_tot * SCALE_FRACTION) if scale else 0.0
                # Laplace: eps^2/2-zCDP; up to a third of rho_cert to the count (no more than
                # count_epsilon needs), the rest to the dual pair
                rho_cert = rho_tot * cert_share
                rho_count = min(rho_cert / 3, count_epsilon(beta) ** 2 / 2)
                eps_count = math.sqrt(2 * rho_count)
                eps_dual = math.sqrt(2 * (rho_cert - rho_count))
            if s is None:
                s = math.ceil(2 * k_star / eps_round)
            if cert_share == 0.0 or cert_informative(eps_dual, float(s), level_pub, beta):
                break
        if cert_share == 0.0:
            eps_count = eps_dual = 0.0
        sens_factor, level, width = 1.0, None, 1.0
        eta_cap = ETA_MAX
        paper_eps = (budget.epsilon / math.sqrt(8 * T * math.log(1 / budget.delta))
                     if isinstance(budget, ApproxDP) and budget.delta > 0 else None)
    else:
        if not (isinstance(budget, ApproxDP) and budget.delta > 0):
            raise BudgetError("schedule='paper' uses advanced composition (Lemma 3.13) and needs "
                              "epsilon= and delta= > 0; use the default schedule otherwise.")
        if m_max is None or s is None:
            raise PrivacySpecError(
                "schedule='paper' needs public s= (density) and m_max= (an upper bound on the "
                "number of constraints: T and eta use log m).")
        level = float(opt) if opt is not None else hi
        width = max(1.0, 3.0 * level - 1.0)
        alpha = 0.5 if accuracy is None else float(accuracy)
        if not 0 < alpha <= 3 * width:
            raise PrivacyGuaranteeError(f"accuracy must be in (0, 3 rho_w] = (0, {3*width:g}].")
        logm = math.log(max(int(m_max), 2))
        T = math.ceil(36 * width**2 * logm / alpha**2)
        if T > _PAPER_MAX_T:
            raise PrivacyGuaranteeError(
                f"the paper's schedule needs T = 36 rho^2 log(m)/alpha^2 = {T} rounds (width "
                f"rho = {width:g}, alpha = {alpha:g}); more than {_PAPER_MAX_T}. Raise "
                "accuracy=, lower opt_bounds, or use the default schedule='practical'.")
        eta = math.sqrt(logm / T)
        eps_mwu = budget.epsilon * ((1 - SCALE_FRACTION) if scale else 1.0)
        eps_round = eps_mwu / math.sqrt(8 * T * math.log(1 / budget.delta))
        paper_eps = eps_round
        rest = rho_tot - T * eps_round**2 / 8
        eps_scale = math.sqrt(8 * rest) if scale else 0.0
        sens_factor = 3.0
        eta_cap = 0.5
    s = float(s)
    if not s >= 1:
        raise PrivacySpecError(f"s (constraints that may be violated) must be >= 1, got {s!r}.")
    if not 0 < eta <= eta_cap:
        rule = "Lemma B.3" if eta_cap == 0.5 else "the Hedge bound"
        raise PrivacySpecError(
            f"eta={eta!r} is out of range: eta must be in (0, {eta_cap:g}] ({rule} of this "
            "schedule).")
    if T < 1:
        raise PrivacySpecError(f"T must be >= 1, got {T!r}.")
    sensitivity = sens_factor / s  # in units of OPT
    kappa = eps_round / (2 * sensitivity)
    grid = tuple(np.geomspace(lo, _grid(eps_scale)[1], _grid(eps_scale)[0])) if scale else ()
    return CoveringSchedule(
        kind=kind, dim=int(dim), schedule=schedule, s=s, T=int(T), eta=float(eta),
        eps_round=float(eps_round), kappa=float(kappa), sensitivity=sensitivity,
        eps_scale=float(eps_scale), grid=grid, target=s, opt=None if opt is None else float(opt),
        opt_level=level, width=width, paper_eps_round=paper_eps, n_dummy=int(math.ceil(s)),
        oracle=oracle, m_max=None if m_max is None else int(m_max), beta=float(beta),
        eps_count=float(eps_count), eps_dual=float(eps_dual), composition=composition,
        level=float(level_pub))


def rounds_bound(kind: str, dim: int, T: int, eps_round: float, level: float,
                 n_actions: int) -> float:
    """The relative accuracy bound the practical schedule minimises over ``T`` (s = 1).

    With the multiplicative Hedge bound (losses in ``[0, 1]``, any ``eta > 0``, comparator any
    ``1/s``-dense distribution; Freund & Schapire 1997, Thm 2, which the KL projection of the
    dense MWU preserves, Herbster & Warmuth 2001) and an oracle whose expected shortfall is
    ``c_o / kappa`` (the exponential mechanism's entropy bound: ``log n`` for ``n`` candidates,
    ``d/2`` on the sphere ``S^d``), the coverage of the worst rows by ``P_bar`` is within a
    relative ``sqrt(2 L log N / T) + L c_o / kappa`` of the optimum's ``1/L`` at the best step
    (``L`` the OPT level, ``N`` the actions).  ``kappa = eps' / 2`` at ``s = 1`` falls with
    ``T`` (the budget is split over the rounds), the regret term rises with fewer rounds: the
    rule takes the ``T`` where their sum is least.
    """
    c_o = math.log(dim) if kind == "lp" else max(1.0, (dim - 1 if kind == "soc" else dim) / 2)
    kappa = eps_round / 2.0
    return math.sqrt(2 * level * math.log(max(n_actions, 2)) / T) + level * c_o / kappa


def dual_noise_weights(level: float) -> tuple[float, float]:
    """Laplace scale weights ``(a, b)`` of the certificate's dual pair ``(mu, lambda)``.

    ``b_mu = a/(s eps_dual)``, ``b_lambda = b/(s eps_dual)`` with ``a = 1 + sqrt(L)``, ``b = 1 +
    1/sqrt(L)`` (``L`` the public OPT level): ``1/a + 1/b = 1``, so the pair (each coordinate of
    sensitivity ``1/s``) is ``eps_dual``-DP, and the bound's loss ``t_mu/mu + t_lambda/lambda ~
    t_mu + L t_lambda`` (``mu ~ 1``, ``lambda ~ 1/L``) is least among such scales: ``(1 +
    sqrt L)^2 log(3/(2 beta)) / (s eps_dual)`` (docs/covering.md, "Status and certificate").
    """
    root = math.sqrt(max(float(level), 1.0))
    return 1.0 + root, 1.0 + 1.0 / root


def _opt_bounds(value: Any) -> tuple[float, float]:
    """``opt_bounds=(lo, hi)``: public numbers (not strings or bools) with ``0 < lo < hi``,
    finite; else a PrivacySpecError naming the keyword and the value."""
    try:
        lo, hi = value
        if isinstance(lo, NOT_NUMBERS) or isinstance(hi, NOT_NUMBERS):
            raise TypeError
        lo, hi = float(lo), float(hi)
    except (TypeError, ValueError):
        lo = hi = math.nan
    if not (math.isfinite(lo) and math.isfinite(hi) and 0 < lo < hi):
        raise PrivacySpecError(f"opt_bounds={value!r} is not valid: opt_bounds must be a pair "
                               "(lo, hi) of finite public numbers with 0 < lo < hi (bounds on "
                               "the optimum's value).")
    return lo, hi


def count_epsilon(beta: float) -> float:
    """Epsilon the certificate's count of rows left short needs: ``4 log(3/(2 beta))``.

    Its one-sided tail is then ``t = log(3/(2 beta))/eps = 1/4``: a count of ``N`` is certified
    as at most ``N`` unless the noise exceeds ``3/4``, which happens with probability
    ``e^{-3 log(3/(2 beta))}/2``, far below ``beta``.  More budget would not tighten the bound
    (it is an integer); the rest of the certificate's share goes to the dual pair.
    """
    return 4.0 * math.log(3.0 / (2.0 * beta))


def cert_informative(eps_dual: float, s: float, level: float, beta: float) -> bool:
    """True when the dual pair's noise alone can meet the default accuracy.

    The certificate's ``OPT >= (mu~ - t_mu)/(lambda~ + t_lambda)`` loses about ``t_mu/mu +
    t_lambda/lambda`` of ``mu/lambda`` to the noise, with ``mu <= 1`` and ``lambda`` about
    ``1/OPT``; at the public level ``L`` that is ``(1 + sqrt L)^2 log(3/(2 beta)) / (s
    eps_dual)`` with the scales of :func:`dual_noise_weights` (docs/covering.md,
    "Status and certificate").  The statistics are released when this is at most half the
    default accuracy.
    """
    if eps_dual <= 0:
        return False
    a, b = dual_noise_weights(level)
    loss = (a + b * level) / (s * eps_dual) * math.log(3.0 / (2.0 * beta))
    return loss <= DEFAULT_ACCURACY / 2


def kappa_target(kind: str, dim: int) -> float:
    """Oracle concentration the practical schedule aims at (see :func:`plan_schedule`)."""
    return 2.0 * (dim - 1 if kind == "soc" else dim) if kind != "lp" else 4.0 * math.log(2 * dim)


def split_count_budget(budget: Budget, count_clipped: bool | float, schedule: str
                       ) -> tuple[Budget, dict[str, float] | None]:
    """Split the budget between the solver and the opt-in noisy count of projected rows.

    ``count_clipped`` is ``False`` (no count: the solver gets everything), ``True`` (share
    :data:`COUNT_SHARE`) or a share in ``(0, 1)``.  zCDP and ``(eps, delta > 0)`` targets are
    split in rho (the count is a Gaussian, ``rho_count = share * rho``; the solver gets a
    :class:`ZCDP` budget of the rest), pure targets in epsilon (Laplace count).  The shares add
    up to the target, so the composed guarantee stays within it.

    Returns
    -------
    solver_budget : Budget
    count_budget : dict or None
        Keyword ``epsilon=`` or ``rho=`` for :func:`cvxdp.privacy.clipping.noisy_count`.

    Raises
    ------
    PrivacySpecError
        A share outside ``(0, 1)``, or the count with ``schedule="paper"`` (whose constants use
        the whole ``(eps, delta)`` target).
    """
    share = count_share(count_clipped, default=COUNT_SHARE)
    if share == 0.0:
        return budget, None
    if schedule == "paper":
        raise PrivacySpecError("count_clipped= is available with the default "
                               "schedule='practical' (the paper's schedule spends the whole "
                               "(epsilon, delta) target by advanced composition).")
    if isinstance(budget, ZCDP):
        rho = budget.rho
    elif isinstance(budget, ApproxDP) and budget.delta > 0:
        rho = zcdp_from_approx(budget.epsilon, budget.delta)
    else:
        eps = budget.epsilon
        rest = ApproxDP(eps * (1 - share), 0.0) if isinstance(budget, ApproxDP) else PureDP(
            eps * (1 - share))
        return rest, {"epsilon": eps * share}
    return ZCDP(rho * (1 - share)), {"rho": rho * share}
