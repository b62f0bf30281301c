"""Calibration of perturbation's noise and the norm bounds of its noise event.

The rules and their proofs are in :mod:`cvxdp.solvers.perturbation` (Gaussian: analytic
calibration for the ``sqrt(K)`` l2 sensitivity of the scaled release; truncated: the
conditioning lemma; the bounds ``B_u``: Gaussian concentration and a union bound).

References
----------
Balle & Wang, "Improving the Gaussian mechanism for differential privacy", ICML 2018, Thm 8;
Bun & Steinke, "Concentrated differential privacy", TCC 2016, Prop. 1.6; Boucheron, Lugosi &
Massart, Concentration Inequalities, 2013, Thm 5.6; Davidson & Szarek, "Local operator theory,
random matrices and Banach spaces", 2001, Thm II.13; Benvenuti, Bialy, Dennis & Hale,
"Differentially private linear programming: reduced sub-optimality and guaranteed constraint
satisfaction", 2025.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from scipy.special import chdtri

from cvxdp.errors import BudgetError
from cvxdp.privacy.accountant import PrivacyRecord
from cvxdp.privacy.budgets import ZCDP, ApproxDP, Budget
from cvxdp.privacy.calibration import calibrate_gaussian
from cvxdp.privacy.laplace import laplace_epsilon, laplace_norm_bound, laplace_record
from cvxdp.privacy.mechanisms import gaussian_noise

if TYPE_CHECKING:  # pragma: no cover
    from cvxdp.solvers.perturbation.entries import PrivateEntries
    from cvxdp.solvers.perturbation.plan import RobustPlan

__all__ = ["NoisePlan", "noise_plan", "draw_noise", "choose_noise", "NOISES",
           "TRUNCATION_REFERENCE", "PERTURBATION_THEOREM", "gaussian_norm_bound",
           "symmetric_gaussian_op_bound"]

PERTURBATION_THEOREM = (
    "input perturbation + robust counterpart (post-processing, Dwork & Roth 2014 Prop 2.1); "
    "Gaussian: Balle & Wang 2018 Thm 8 / Bun & Steinke 2016 Prop 1.6; Laplace: Dwork, "
    "McSherry, Nissim & Smith 2006 Thm 1; truncated: conditioning "
    "lemma in cvxdp/solvers/perturbation/__init__.py (Benvenuti, Bialy, Dennis & Hale 2025)")
TRUNCATION_REFERENCE = ("Gaussian conditioned on a data-independent event of probability >= 1-q: "
                        "(eps, (delta_G + e^eps q)/(1-q))-DP "
                        "(cvxdp/solvers/perturbation/__init__.py)")
_MAX_DRAWS = 10_000
#: the noise families of input perturbation ("auto": :func:`choose_noise`)
NOISES = ("auto", "gaussian", "laplace", "truncated")


@dataclass(frozen=True)
class NoisePlan:
    """Calibrated noise: ``sigma_u`` per unit of declared sensitivity, bounds ``B_u``, record."""

    noise: str
    sigma_unit: float
    B: np.ndarray
    q: float | None
    record: PrivacyRecord
    beta: float | None
    nuclear: np.ndarray | None = None  # units that also use ||G||_op (see _bounds)
    B_op: np.ndarray | None = None      # bound on ||G||_op of those units (inf elsewhere)

    def norm_bound(self, k: int, log_inv_fail: float) -> float:
        """A bound on ``||g_S||_2`` for ``|S| = k`` failing w.p. ``<= exp(-log_inv_fail)``."""
        if self.noise == "laplace":
            return float(laplace_norm_bound(k, log_inv_fail))
        return float(gaussian_norm_bound(k, log_inv_fail))


def symmetric_gaussian_op_bound(n: int, log_inv_fail: float) -> float:
    """A bound on ``||Z||_op`` failing with probability at most ``exp(-log_inv_fail)``, for a
    symmetric ``n x n`` ``Z`` whose ``K = n (n + 1) / 2`` distinct entries ``g`` are i.i.d.
    standard normal (one draw per distinct entry, mirrored): the smaller of two valid bounds,
    chosen from ``n`` and the level only.

    * Frobenius: ``||Z||_op <= ||Z||_F <= sqrt(2) ||g||_2`` and :func:`gaussian_norm_bound`.
    * Spectral: ``E lambda_max(Z) <= 2 sqrt(n)``.  With ``X_u = u'Z u`` over unit ``u``,
      ``E (X_u - X_v)^2 = sum_i (u_i^2 - v_i^2)^2 + 2 sum_{i != j} (u_i u_j - v_i v_j)^2 <= 2
      ||uu' - vv'||_F^2 = 4 (1 - c^2) <= 8 (1 - c) = E (Y_u - Y_v)^2`` for ``Y_u = 2 g'u``
      (``c = u'v``), so by Sudakov-Fernique ``E sup X <= E sup Y = 2 E ||g_n|| <= 2 sqrt(n)``
      (the argument for the Gaussian orthogonal ensemble: Davidson & Szarek 2001, "Local
      operator theory, random matrices and Banach spaces", Sec. II; Vershynin 2018,
      "High-Dimensional Probability", Sec. 7.2-7.3).  ``lambda_max`` is ``sqrt(2)``-Lipschitz
      in ``g`` (through ``||Z||_F``), so Gaussian concentration (Boucheron, Lugosi & Massart
      2013, Thm 5.6) and a union over ``+-Z`` give ``||Z||_op <= 2 sqrt(n) + 2 sqrt(s + ln 2)``
      with ``s = log_inv_fail``.

    At ``exp(-s) = 1e-3``: ``n = 5`` 8.7 (Frobenius; spectral 10.0), ``n = 10`` 11.8 (13.7),
    ``n = 30`` 16.5 (33.6), ``n = 60`` 21.0 (63.6); the Monte Carlo 0.999-quantiles are 6.1,
    7.9, 12.5 and 16.9 (4,000 draws each).
    """
    k = n * (n + 1) // 2
    frobenius = math.sqrt(2.0) * float(gaussian_norm_bound(k, log_inv_fail))
    spectral = 2.0 * math.sqrt(n) + 2.0 * math.sqrt(float(log_inv_fail) + math.log(2.0))
    return min(frobenius, spectral)


def gaussian_norm_bound(k: np.ndarray | int, log_inv_fail: float) -> np.ndarray:
    """A bound ``B`` with ``P(||g||_2 > B) <= exp(-log_inv_fail)`` for ``g`` of ``k`` i.i.d.
    standard normal entries: the exact quantile, ``||g||_2^2`` being chi-square with ``k``
    degrees of freedom, ``B = sqrt(F^-1_{chi2_k}(1 - exp(-log_inv_fail)))``.

    It is never above the concentration bound ``sqrt(k) + sqrt(2 log_inv_fail)`` (``E ||g|| <=
    sqrt k`` and the norm is 1-Lipschitz; Boucheron, Lugosi & Massart 2013, Thm 5.6), which
    is also valid, and which is used where the failure probability underflows a double
    (``log_inv_fail > 700``, e.g. truncated noise at epsilon 1e6): the smaller of two valid
    bounds fails with probability at most ``exp(-log_inv_fail)``.  At ``exp(-log_inv_fail) =
    1e-3`` the exact quantile is 3.29 against 4.72 for ``k = 1``, 4.30 against 5.72 for ``k =
    4`` and 12.2 against 13.7 for ``k = 100``.
    """
    k = np.asarray(k, dtype=float)
    s = float(log_inv_fail)
    conc = np.sqrt(k) + math.sqrt(2.0 * s)
    if s > 700.0:
        return conc * (k > 0)
    exact = np.sqrt(chdtri(np.maximum(k, 1.0), math.exp(-s)))
    return np.minimum(exact, conc) * (k > 0)


def _bounds(plan: RobustPlan, log_inv_fail: float, family: str = "gaussian"
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Norm bounds holding together with failure probability ``exp(-log_inv_fail)``.

    Every unit: ``B_u`` (:func:`gaussian_norm_bound`, the chi-square quantile at failure
    ``exp(-t^2 / 2)``) bounds ``||g_{S_u}||_2``.  A unit that is ``<C, M(x)>``
    with ``C`` an (r, c) parameter and ``sqrt r + sqrt c < sqrt(r c)`` (decided from shapes
    only) also gets ``B_op = sqrt(r) + sqrt(c) + t`` on ``||G||_op`` (``E ||G||_op <= sqrt r +
    sqrt c``, Davidson & Szarek 2001 Thm II.13; the norm is 1-Lipschitz in the entries, so the
    same ``e^{-t^2/2}`` tail); the counterpart then bounds ``|<G, M>| <= B_op ||M_1||_* + B_u
    ||M - M_1||_F`` with ``M_1`` free, never worse than either bound alone.  ``t = sqrt(2 (ln
    events + log_inv_fail))`` with one event per bound (union bound).

    A unit whose change is ``G v`` with ``G`` a (rows x r) matrix of distinct entries
    (``plan.row_shape``: a cone block whose private entries reach one row each, every row
    alike) bounds ``||G||_op <= sqrt(rows) + sqrt(r) + t`` instead (the same tail) when that is
    smaller: ``B_u`` is then that bound, and ``||G v|| <= B_u ||v||`` is all its consumers use.
    Only for ``family="gaussian"``: truncated noise conditions its draws on ``||g_{S_u}|| <=
    B_u`` (``family="truncated"`` keeps the chi-square bound).

    ``family="laplace"`` (i.i.d. standard Laplace ``g``): ``B_u`` is
    :func:`cvxdp.privacy.laplace.laplace_norm_bound` at failure ``exp(-log_inv_fail) / N`` per
    unit, and no unit uses the operator-norm bound (Davidson & Szarek's is Gaussian).

    Returns
    -------
    B, B_op, nuclear : ndarray (N,), ndarray (N,) (inf where unused), bool ndarray (N,)
    """
    if family == "laplace":
        B = laplace_norm_bound(plan.support, math.log(max(plan.N, 1)) + log_inv_fail)
        return B, np.full(plan.N, np.inf), np.zeros(plan.N, dtype=bool)
    nuc = np.array([shape is not None and math.sqrt(shape[0]) + math.sqrt(shape[1])
                    < math.sqrt(shape[0] * shape[1]) for shape in plan.matrix], dtype=bool)
    nuc = nuc if nuc.size == plan.N else np.zeros(plan.N, dtype=bool)
    events = max(plan.N + int(nuc.sum()), 1)
    t = math.sqrt(2 * (math.log(events) + log_inv_fail))
    B = gaussian_norm_bound(plan.support, t * t / 2.0)
    shape = plan.row_shape
    if family == "gaussian" and shape is not None and shape.shape[0] == plan.N:
        row_op = np.sqrt(shape[:, 0]) + np.sqrt(shape[:, 1]) + t
        B = np.where(shape[:, 0] > 0, np.minimum(B, row_op), B)
    B_op = np.full(plan.N, np.inf)
    for u in np.flatnonzero(nuc):
        B_op[u] = math.sqrt(plan.matrix[u][0]) + math.sqrt(plan.matrix[u][1]) + t
    return B, B_op, nuc


def noise_plan(budget: Budget, noise: str, entries: PrivateEntries, plan: RobustPlan,
               beta: float) -> NoisePlan:
    """Calibrate the noise for ``budget`` and the norm bounds ``B_u`` (see the module doc).

    Raises
    ------
    BudgetError
        Pure-DP budget (both families need delta > 0), or zCDP with ``noise="truncated"``.
    """
    D = math.sqrt(entries.K)  # l2 sensitivity of theta / Delta
    if noise == "laplace":
        # theta / Delta moves by at most 1 per entry: l1 sensitivity K; a zCDP budget rho is
        # met by epsilon = sqrt(2 rho) (epsilon-DP implies epsilon^2 / 2-zCDP)
        eps = laplace_epsilon(budget)
        scale = entries.K / eps
        rec = laplace_record(scale=scale, l1_sensitivity=float(entries.K),
                             mechanism="input_laplace",
                             note="scale per unit of declared per-entry sensitivity")
        B, B_op, nuc = _bounds(plan, math.log(1 / beta), "laplace")
        return NoisePlan(noise, scale, B, None, rec, beta, nuc, B_op)
    if isinstance(budget, ZCDP) and noise == "truncated":
        raise BudgetError(
            "noise='truncated' gives (epsilon, delta)-DP only (its support moves with the "
            "data, so it has no zCDP bound); pass epsilon= and delta=, or noise='gaussian'.")
    refusal = (f"noise={noise!r} needs delta > 0 (or rho=); under a pure-DP budget "
               "perturbation runs with noise='laplace' (or pass epsilon= and delta=).")
    if noise == "gaussian" or isinstance(budget, ZCDP):
        # the one Gaussian calibration (privacy.mechanisms.gaussian_noise)
        sigma, rec = gaussian_noise(budget, sensitivity=D, mechanism="input_gaussian",
                                    refusal=refusal,
                                    note="sigma per unit of declared per-entry sensitivity")
        B, B_op, nuc = _bounds(plan, math.log(1 / beta))
        return NoisePlan(noise, sigma, B, None, rec, beta, nuc, B_op)
    if not isinstance(budget, ApproxDP) or budget.delta <= 0:
        raise BudgetError(refusal)
    eps, delta = budget.epsilon, budget.delta
    if noise != "truncated":
        raise ValueError(f"noise must be one of {NOISES}, got {noise!r}.")
    d_g = delta / 2
    sigma = calibrate_gaussian(epsilon=eps, delta=d_g, sensitivity=D)
    # q = (delta - d_g) / (e^eps + delta) in log space (e^eps overflows for eps > 709), made
    # smaller by a factor e^-1e-9 so that rounding cannot push the total above delta
    e_neg = math.exp(-eps)  # underflows to 0 harmlessly
    log_q = math.log(delta - d_g) - eps - math.log1p(delta * e_neg) - 1e-9
    q = math.exp(log_q)
    e_q = math.exp(log_q + eps) if log_q + eps < 700 else math.inf  # e^eps q <= delta / 2
    total_delta = (d_g + e_q) / (1 - q)
    if not total_delta <= delta:  # pragma: no cover - guarded by the construction above
        raise BudgetError(f"truncated noise: delta {total_delta!r} exceeds {delta!r}.")
    rec = PrivacyRecord("truncated_gaussian", ApproxDP(eps, delta), TRUNCATION_REFERENCE,
                        params={"sigma": sigma, "sensitivity": D, "delta_gaussian": d_g,
                                "truncation_mass": q, "log_truncation_mass": log_q,
                                "delta_total": total_delta})
    B, B_op, nuc = _bounds(plan, -log_q, "truncated")
    return NoisePlan(noise, sigma, B, q, rec, None, nuc, B_op)


def choose_noise(budget: Budget, entries: PrivateEntries, plan: RobustPlan, beta: float,
                 objective_support: int = 0,
                 fit_gap: Callable[[str, float], float] | None = None) -> tuple[str, dict]:
    """``noise="auto"``: the family whose tightenings are smaller, from public numbers only.

    Every tightening and every certificate bound of the counterpart scales with ``B_u
    sigma_u`` (a high-probability bound on the norm of unit ``u``'s noise, in units of the
    declared sensitivities), so the rule compares ``max_u B_u sigma_u`` of the two families at
    the same ``beta``, over the constraint units and the private objective's support
    (``objective_support`` entries); the smaller wins, the Gaussian on a tie.  A pure-DP budget
    takes the Laplace (the only family it allows).  A model with the fit-term pattern
    (``fit_gap`` given: ``fit_gap(family, sigma_unit)`` is the fit certificate's predicted gap,
    :func:`cvxdp.solvers.perturbation.fit_term.predicted_gap`) is released at the noisy
    objective's minimiser and certified by the fit terms' noise norms, not by the units'
    tightenings: the family with the smaller predicted fit gap wins when both are positive.
    Derivation and numbers: docs/solvers.md, "Which noise".

    Returns
    -------
    (family, why) : ("gaussian" | "laplace", dict with both bounds and the rule)
    """
    if not isinstance(budget, ZCDP) and not (isinstance(budget, ApproxDP) and budget.delta > 0):
        return "laplace", {"rule": "pure-DP budget: the Laplace is the family it allows"}
    log_b = math.log(1 / beta)
    width, sigmas = {}, {}
    for family in ("gaussian", "laplace"):
        npl = noise_plan(budget, family, entries, plan, beta)
        sigmas[family] = npl.sigma_unit
        worst = float(np.max(npl.B, initial=0.0))
        if objective_support:
            worst = max(worst, npl.norm_bound(objective_support, log_b))
        width[family] = worst * npl.sigma_unit
    why = {"rule": "smaller high-probability noise norm max_u B_u sigma_u",
           "gaussian": width["gaussian"], "laplace": width["laplace"]}
    if fit_gap is not None:
        fit = {f: float(fit_gap(f, sig)) for f, sig in sigmas.items()}
        if all(0.0 < v < math.inf for v in fit.values()):
            family = "laplace" if fit["laplace"] < fit["gaussian"] else "gaussian"
            return family, {"rule": "smaller predicted fit-term gap (the fit terms' noise "
                                    "norms at beta)", "gaussian": fit["gaussian"],
                            "laplace": fit["laplace"], "units": why}
    family = "laplace" if width["laplace"] < width["gaussian"] else "gaussian"
    return family, why


def draw_noise(npl: NoisePlan, plan: RobustPlan, K: int, rng: np.random.Generator
               ) -> tuple[np.ndarray, int]:
    """Standard normal ``g`` (K,), conditioned on ``E`` for truncated noise; (g, draws)."""
    for draw in range(1, _MAX_DRAWS + 1):
        g = rng.laplace(0.0, 1.0, K) if npl.noise == "laplace" else rng.standard_normal(K)
        if npl.noise != "truncated" or plan.N == 0:
            return g, draw
        ok = bool(np.all(np.sqrt(plan.indicator @ (g * g)) <= npl.B))
        nuc = npl.nuclear if npl.nuclear is not None else np.zeros(plan.N, dtype=bool)
        for u in np.flatnonzero(nuc):
            ks = plan.indicator.indices[plan.indicator.indptr[u]:plan.indicator.indptr[u + 1]]
            G = g[np.sort(ks)].reshape(plan.matrix[u], order="F")
            ok = ok and bool(np.linalg.norm(G, 2) <= npl.B_op[u])
        if ok:
            return g, draw
    # P(not E) <= q <= 1/2, so this happens with probability <= 2^-10000
    raise RuntimeError("truncated noise: rejection sampling did not accept")  # pragma: no cover
