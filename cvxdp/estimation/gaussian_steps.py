"""Sample-size bookkeeping of `private_gaussian` (cvxdp.estimation.gaussians): how the permuted
sample is split into blocks (:func:`layout`), what the accuracy bounds ask for
(:func:`required_n`), and the (non-private) empirical comparison of ``reference=True``.

Every function here is a public function of (n, d, budget), except
:func:`empirical_validation`.  The mechanism steps live in
:mod:`cvxdp.estimation.gaussian_mechanisms`; their names stay importable from here.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from cvxdp.errors import PrivacySpecError
from cvxdp.estimation.gaussian_mechanisms import (
    COARSE_GAIN,
    MEAN_COARSE_SHARE,
    MEAN_RADIUS_SLACK,
    chi2_radius2,
    clipped_mean,
    clipped_mean_radii,
    coarse_schedule,
    coinpress_covariance,
    gaussian_steps_rho,
    log_cells,
    log_scale,
    mean_cells,
    robust_covariance_estimator,
    robust_mean_estimator,
    stability_histogram_mode,
    whiten,
)
from cvxdp.estimation.masking import MultiplicativePSDMask, k_min
from cvxdp.estimation.rows import cell_counts
from cvxdp.privacy.budgets import zcdp_from_approx
from cvxdp.privacy.calibration import calibrate_gaussian
from cvxdp.solution import ValidationReport

__all__ = [
    "layout",
    "SampleRequirement",
    "required_n",
    "empirical_validation",
    "solve_block_size",
    # re-exported from gaussian_mechanisms
    "MEAN_COARSE_SHARE",
    "MEAN_RADIUS_SLACK",
    "cell_counts",
    "chi2_radius2",
    "clipped_mean",
    "coarse_schedule",
    "coinpress_covariance",
    "gaussian_steps_rho",
    "log_cells",
    "log_scale",
    "mean_cells",
    "robust_covariance_estimator",
    "robust_mean_estimator",
    "stability_histogram_mode",
    "whiten",
]

# ------------------------------------------------------------------------ sizes and requirements

PRECONDITION_ROUNDS = 2  # rounds of private preconditioning of method="preconditioned"
PRE_GAIN = 1e4  # tightening each preconditioning round must reach for required_n
_FRACTIONS = {"practical": {"covariance": 0.63, "mean": 0.37},
              "preconditioned": {"pre1": 0.12, "pre2": 0.08, "covariance": 0.5, "mean": 0.3},
              "ashtiani-liaw": {"preconditioner": 0.40, "covariance": 0.25, "mean": 0.35},
              "robust": {"preconditioner": 0.5, "mean": 0.5}}


def _scale_need(d: int, epsilon: float, delta: float) -> float:
    """Raw samples for the d log-scale histograms: mode-bin mass >= 1/4 must reach twice the
    threshold ``1 + 2 ln(2 d / delta) d / epsilon`` (pairs, hence the leading 2)."""
    return 2 * 8 * (1 + 2 * d * math.log(2 * d / delta) / epsilon)


SCALE_CAP = 0.4  # largest share of the rest the log-scale histograms get (public)


def layout(n: int, d: int, epsilon: float, delta: float, method: str) -> dict[str, int]:
    """Public block sizes (raw samples) of every step; a function of (n, d, budget) only."""
    k2 = k_min(epsilon / 2, delta / (4 * math.exp(epsilon / 2)))
    sizes = {} if method == "robust" else {"subspace": 2 * k2 * d, "perp_mean": k2}
    rest = n - sum(sizes.values())
    if rest < 40 * d:
        need = sum(sizes.values()) + 40 * d
        raise PrivacySpecError(f"n={n} samples are too few to run the pipeline at d={d}, "
                               f"epsilon={epsilon}, delta={delta}: need at least {need} "
                               "(see required_n for what the accuracy bound needs).")
    if method in ("practical", "preconditioned"):
        # at most SCALE_CAP of the rest: at 0.25 the d histograms returned ⊥ at small n (d = 5,
        # n = 1e4, epsilon = 1: 447 pairs for a threshold of 162 at a mode mass of 0.3)
        sc = min(max(0.05 * rest, 1.5 * _scale_need(d, epsilon, delta)), SCALE_CAP * rest)
        sizes["scale"] = 2 * int(sc / 2)
        rest -= sizes["scale"]
    frac = _FRACTIONS[method]
    for name in list(frac)[:-1]:
        sizes[name] = 2 * int(frac[name] * rest / 2)  # pair-difference steps use even counts
    last = list(frac)[-1]
    sizes[last] = n - sum(sizes.values())
    return sizes


@dataclass(frozen=True)
class SampleRequirement:
    """What the stated bounds need: raw samples per step and in total (all public numbers)."""

    total: float
    steps: dict[str, float]
    alpha: float
    beta: float
    basis: str


def solve_block_size(f: Callable[[float], float], lo: float = 8.0) -> float:
    """Smallest m (to 1%) with f(m) <= 0 for f decreasing in m."""
    hi = lo
    while f(hi) > 0:
        hi *= 2.0
        if hi > 1e30:
            return math.inf
    while hi / lo > 1.01:
        mid = math.sqrt(lo * hi)
        lo, hi = (lo, mid) if f(mid) <= 0 else (mid, hi)
    return math.ceil(hi)


def required_n(d: int, *, epsilon: float, delta: float, alpha: float = 0.2, beta: float = 0.1,
               method: str = "practical", robust: bool = False, contamination: float = 0.05,
               c1: float = 3200.0, bounds: Any = None, scale: float | None = None,
               estimate: str = "both") -> SampleRequirement:
    """Samples each step's accuracy bound needs for error ``alpha`` w.p. 1 - beta.

    ``alpha`` bounds the Mahalanobis error of the mean and the whitened Frobenius error of the
    covariance (so TV <= ~alpha/sqrt 2 by Pinsker).  Faithful methods use the paper's
    formulas with our concrete constants (docs/gaussians.md); C3 = C4 = 1 for the
    unspecified robust constants (optimistic).  Practical: the explicit bounds of this module,
    with the coarse rounds required to tighten by ``COARSE_GAIN`` = 1e6 (condition number times
    the looseness of the histogram bound; not part of the paper's kappa-free bound).

    ``method="bounded"`` (``private_gaussian(bounds=...)``) needs the public ``bounds`` and
    ``scale``, a public guess of the data's smallest standard deviation: the mean's error is in
    the bounds' units, so the Mahalanobis error depends on it
    (:func:`cvxdp.estimation.gaussian_bounded.bounded_requirement`, which
    :func:`cvxdp.estimation.gaussians.required_n` calls for it); the covariance step is the
    practical CoinPress step's requirement.

    References
    ----------
    Ashtiani & Liaw (2022), Thms 4.1, 5.4, 5.5, 6.3, 7.4.
    """
    if method == "bounded":     # gaussian_bounded builds on this module, not back
        raise PrivacySpecError("required_n(method='bounded') is cvxdp.estimation.gaussians."
                               "required_n (or gaussian_bounded.bounded_requirement).")
    eps_i, dl_i = epsilon / 2, delta / (4 * math.exp(epsilon / 2))
    k2 = k_min(eps_i, dl_i)
    steps: dict[str, float] = {}
    if not robust:
        steps["subspace"] = 2 * k2 * d
        steps["perp_mean"] = k2
    rho = gaussian_steps_rho(epsilon, delta)
    mu_mean = math.sqrt(2 * zcdp_from_approx(0.75 * epsilon, 0.5 * delta))  # as clipped_mean
    g1 = calibrate_gaussian(rho=rho / 2, sensitivity=1.0, method="zcdp")  # sigma per unit sens

    def cov_gap(m: float) -> float:
        final = 1.0 - coarse_schedule(int(m), d, rho)[2] if method != "ashtiani-liaw" else 0.5
        sig = g1 * math.sqrt(0.5 / final) * math.sqrt(2) * chi2_radius2(d, int(m), beta) / m
        # E||C_hat - I||_F ~ sqrt(d(d+1)/m), E||noise||_F = sigma sqrt(d(d+1)/2); 1.5x slack
        return 1.5 * (math.sqrt(d * (d + 1) / m) + sig * math.sqrt(d * (d + 1) / 2)) - alpha

    def mean_gap(m: float) -> float:  # the final round of clipped_mean (its public sigma)
        sig = clipped_mean_radii(int(m), d, mu_mean, beta)[3]
        return 1.5 * (math.sqrt(d / m) + sig * math.sqrt(d)) - alpha

    thresh_mean = 1 + 2 * math.log(4 / delta) / (epsilon / 4)
    m_mean = max(solve_block_size(mean_gap), 4 * thresh_mean / 0.8**d)
    if method in ("practical", "preconditioned") and not robust:
        basis = ("practical pipeline: Alg. 2 + log-scale histograms + CoinPress rounds + "
                 "clipped mean")
        steps["scale"] = 1.5 * _scale_need(d, epsilon, delta)
        coarse = solve_block_size(
            lambda m: math.log(COARSE_GAIN) - coarse_schedule(int(m), d, rho)[1])
        steps["covariance"] = 2 * max(solve_block_size(cov_gap), coarse)
        steps["mean"] = m_mean
        if method == "preconditioned":
            basis = (f"preconditioned pipeline: {PRECONDITION_ROUNDS} private preconditioning "
                     "rounds (each the practical covariance step) + "
                     "the practical pipeline on the whitened data; the pre rounds' sizes are "
                     "informative, the bound is the final pipeline's, and the released "
                     "unresolved-direction count says whether preconditioning sufficed")
            pre = solve_block_size(lambda m: math.log(PRE_GAIN)
                           - coarse_schedule(int(m), d, rho, gain=PRE_GAIN)[1])
            for j in range(1, PRECONDITION_ROUNDS + 1):
                steps[f"pre{j}"] = 2 * pre
        frac = _FRACTIONS[method]
    elif not robust:
        basis = f"Ashtiani & Liaw Thms 4.1, 5.4 (C1={c1:g}), 5.5, 5.7"
        eta = 1.0 / (c1 * (math.sqrt(d) + math.sqrt(math.log(4 / beta))))
        k3 = max(math.ceil(800 / MultiplicativePSDMask.gamma(d, eps_i, dl_i, eta)), k2)
        s3 = ((math.sqrt(d) + math.sqrt(2 * math.log(4 * k3 / beta))) / 1.2492e-3) ** 2
        steps["preconditioner"] = 2.0 * k3 * math.ceil(s3)
        steps["covariance"] = 2 * solve_block_size(cov_gap)
        steps["mean"] = m_mean
        frac = _FRACTIONS["ashtiani-liaw"]
    else:
        basis = "Ashtiani & Liaw Thms 6.3, 7.4 / Cor. 7.5 (C3 = C4 = 1, optimistic)"
        a = contamination
        eta4 = a / (c1 * (d + math.sqrt(d * math.log(4 / beta))))
        k4 = max(math.ceil(800 / MultiplicativePSDMask.gamma(d, eps_i, dl_i, eta4)), k2)
        steps["preconditioner"] = 2.0 * k4 * math.ceil(d * d / a**2 * math.log(4 * k4 / beta))
        r5 = 2 * a * math.sqrt(math.log(1 / a))
        eta5 = a / (math.sqrt(d) + math.sqrt(2 * math.log(2 / beta)))
        gam5 = eta5 / calibrate_gaussian(epsilon=eps_i, delta=dl_i, sensitivity=1.0)
        k5 = max(math.ceil(400 * r5 / gam5), k2)
        steps["mean"] = k5 * math.ceil((d + math.log(k5 / beta)) / a**2)
        frac = _FRACTIONS["robust"]
    fixed = sum(v for kk, v in steps.items() if kk in ("subspace", "perp_mean", "scale"))
    # preconditioning rounds (pre1, pre2): not part of the accuracy bound; whether they did
    # their job is read off the final step's released unresolved-direction count (the status)
    total = fixed + max(v / frac[kk] for kk, v in steps.items()
                        if kk in frac and not (kk.startswith("pre") and kk[3:].isdigit()))
    return SampleRequirement(float(total), steps, alpha, beta, basis)


def empirical_validation(x: np.ndarray, mean: np.ndarray | None, cov: np.ndarray | None
                ) -> ValidationReport:
    """Compare with the exact (non-private) empirical mean and covariance (NOT private)."""
    t0 = time.perf_counter()
    mu = x.mean(axis=0)
    sig = np.cov(x, rowvar=False).reshape(x.shape[1], x.shape[1])
    ref_time = time.perf_counter() - t0
    metrics: dict[str, float] = {}
    if mean is not None and cov is not None:
        lam, vec = np.linalg.eigh(sig)
        keep = lam > lam.max() * 1e-12
        wh = vec[:, keep] / np.sqrt(lam[keep])
        dm = (mean - mu) @ wh
        metrics["mahalanobis_mean_error"] = float(np.linalg.norm(dm))
        metrics["rel_frobenius_cov_error"] = float(np.linalg.norm(cov - sig) / np.linalg.norm(sig))
        wc = wh.T @ cov @ wh - np.eye(int(keep.sum()))
        metrics["whitened_frobenius_cov_error"] = float(np.linalg.norm(wc))
        metrics["tv_upper_bound"] = float(min(1.0, 0.5 * math.sqrt(
            metrics["whitened_frobenius_cov_error"] ** 2 + float(dm @ dm))))
    return ValidationReport(reference_time=ref_time, reference_solver="numpy empirical mean/cov",
                            metrics=metrics)
