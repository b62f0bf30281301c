"""Private learning of an unrestricted Gaussian: mean and covariance with no a-priori bounds.

:func:`private_gaussian` follows the §5.1 pipeline of Ashtiani & Liaw (one random permutation,
then disjoint index blocks, each step seeing only its block and the earlier *released* outputs):

1. subspace range(Sigma) exactly (Alg. 2, :func:`cvxdp.estimation.wrapper.private_subspace`);
2. covariance inside the subspace;
3. mean inside the subspace in the coordinates whitened by step 2;
4. mean orthogonal to the subspace (Alg. 1 on ``(I - P) x``, an exact-match problem).

Step 2 is where the two methods differ:

* ``method="ashtiani-liaw"`` (faithful): Alg. 3 (covariance up to a constant by the populous mean
  in the spectral space, multiplicative mask) then the Thm 5.5 step.  Its constants need
  ~1e16 samples; below that it returns ⊥ (never a silent estimate) and warns.
* ``method="practical"`` (default): private log-scale histograms per coordinate (Karwa & Vadhan
  style) give a loose upper bound ``A_0 >= Sigma``; then a few CoinPress-style refinements
  (Biswas et al. 2020): whiten by the current bound, clip to the chi-square radius, add
  symmetric Gaussian noise to the clipped covariance, tighten the bound.  The last refinement is
  the §3.6 instantiation of Thm 5.5.  Every clipping radius is a function of public values and
  earlier releases only, so each release is an ordinary Gaussian mechanism.

The module-level privacy argument (both methods): each step is (epsilon, delta)-DP w.r.t. its own
block given the earlier releases; replacing one record changes one block (after the shared random
permutation), so by adaptive parallel composition the whole release is (epsilon, delta)-DP under
replace-one with n public (the paper's Def. 2.5 + Remark 2.6; add/remove is *not* covered).
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import linalg

from cvxdp.errors import BudgetError, PrivacySpecError, UnsupportedProblemError
from cvxdp.estimation.masking import PAPER, MultiplicativePSDMask, k_min, populous_mean
from cvxdp.estimation.wrapper import EuclideanSpace, private_preconditioner, private_subspace
from cvxdp.privacy.accountant import PrivacyAccountant, PrivacyRecord
from cvxdp.privacy.budgets import ApproxDP, zcdp_from_approx
from cvxdp.privacy.calibration import calibrate_gaussian
from cvxdp.privacy.mechanisms import gaussian_record
from cvxdp.privacy.rng import as_generator
from cvxdp.solution import PrivateSolution, ValidationReport

__all__ = [
    "GaussianSolution",
    "SampleRequirement",
    "GaussianSampleWarning",
    "private_gaussian",
    "required_n",
    "stability_histogram_mode",
]

HISTOGRAM_REFERENCE = ("Vadhan 2017, 'The Complexity of Differential Privacy', Prop. 3.5; "
                       "Karwa & Vadhan 2018, Lemma 2.3 (stability-based histogram)")
NEIGHBOURING = "replace one sample (n public); the sample is randomly permuted first"
BIN_WIDTH = 4.0  # mean histogram cell width, in whitened units


class GaussianSampleWarning(UserWarning):
    """n is below what the stated sample-complexity bound asks for."""


# ------------------------------------------------------------------------------------ mechanisms

def stability_histogram_mode(
    keys: np.ndarray, *, epsilon: float, delta: float, rng: np.random.Generator
) -> tuple[np.ndarray | None, PrivacyRecord]:
    """Most populated cell of a histogram over an unbounded set of cells, (epsilon, delta)-DP.

    Only non-empty cells exist; each gets ``Lap(2/epsilon)`` noise and is kept if its noisy count
    exceeds ``1 + 2 ln(2/delta)/epsilon``; the kept cell with the largest noisy count is returned
    (post-processing).  Replace-one moves two counts by one (l1 sensitivity 2); a cell that exists
    on one side only has count 1 and is kept with probability ``delta / 4``.

    Parameters
    ----------
    keys : (m,) or (m, p) integer array
        The cell of each record.

    Returns
    -------
    (cell or None, PrivacyRecord)
    """
    keys = np.asarray(keys)
    keys2 = keys.reshape(len(keys), -1)
    cells, counts = np.unique(keys2, axis=0, return_counts=True)
    noisy = counts + rng.laplace(0.0, 2.0 / epsilon, size=counts.shape)
    thresh = 1.0 + 2.0 * math.log(2.0 / delta) / epsilon
    rec = PrivacyRecord("stability_histogram", ApproxDP(epsilon, delta), HISTOGRAM_REFERENCE,
                        params={"laplace_scale": 2.0 / epsilon, "threshold": thresh})
    if not (noisy > thresh).any():
        return None, rec
    best = cells[int(np.argmax(np.where(noisy > thresh, noisy, -np.inf)))]
    return (best if keys.ndim > 1 else best[0]), rec


def _chi2_radius2(dim: int, m: int, beta: float) -> float:
    """T with P[max_i ||g_i||^2 > T] <= beta over m standard normals in R^dim (Lemma A.3)."""
    x = math.log(max(m, 1) / beta)
    return dim + 2.0 * math.sqrt(dim * x) + 2.0 * x


def _clip_rows(v: np.ndarray, radius: float) -> np.ndarray:
    """Scale each row into the l2 ball of ``radius``.  A row whose norm overflows (or is not
    finite) becomes 0: still a per-record map into the ball, so the sensitivity bound holds and
    one extreme record cannot turn the whole release into NaN."""
    with np.errstate(over="ignore", invalid="ignore"):
        nrm = np.sqrt((v * v).sum(axis=1))
        ok = np.isfinite(nrm)
        scale = np.where(ok, np.minimum(1.0, radius / np.maximum(np.where(ok, nrm, 1.0),
                                                                  1e-300)), 0.0)
        return np.where(ok[:, None], v, 0.0) * scale[:, None]


def _sym_noise(dim: int, sigma: float, rng: np.random.Generator) -> np.ndarray:
    """``sigma (G + G^T)/2``: the Gaussian mechanism for Frobenius sensitivity (digest §3.2)."""
    g = rng.standard_normal((dim, dim))
    return sigma * 0.5 * (g + g.T)


def _noise_norm_bound(dim: int, sigma: float, beta: float) -> float:
    """High-probability bound on ||sigma (G+G^T)/2|| <= sigma ||G|| (Gordon + concentration)."""
    return sigma * (2.0 * math.sqrt(dim) + math.sqrt(2.0 * math.log(2.0 / beta)))


def log_scale(z: np.ndarray, *, epsilon: float, delta: float, rng: np.random.Generator
              ) -> tuple[np.ndarray | None, list[PrivacyRecord]]:
    """Per-coordinate scale ``2^{b_j + 1}`` from private histograms of ``floor(log2 |z_j|)``.

    The d histograms share the block: each runs at (epsilon/d, delta/d) (basic composition).
    """
    m, d = z.shape
    with np.errstate(divide="ignore"):
        lg = np.floor(np.log2(np.abs(z)))
    lg = np.where(np.isfinite(lg), lg, -4096.0).astype(np.int64)
    scales = np.empty(d)
    recs = []
    for j in range(d):  # d histograms (d <= ~50): negligible next to np.unique
        b, rec = stability_histogram_mode(lg[:, j], epsilon=epsilon / d, delta=delta / d, rng=rng)
        recs.append(rec)
        if b is None:
            return None, recs
        scales[j] = 2.0 ** (float(b) + 1.0)
    return scales, recs


COARSE_GAIN = 1e6  # tightening the coarse rounds aim for: (condition number) x (looseness of A_0)


def _coarse_psi(m: int, d: int, rho_round: float) -> float:
    """Noise-plus-sampling level psi of one coarse round (see :func:`coinpress_covariance`)."""
    sigma = math.sqrt(2.0) * _chi2_radius2(d, 1, 0.05) / m / math.sqrt(2.0 * rho_round)
    return sigma * (math.sqrt(2.0 * d) + 1.5) + 2.0 * math.sqrt(d / m)


def coarse_schedule(m: int, d: int, rho: float, gain: float = COARSE_GAIN, max_rounds: int = 30
                    ) -> tuple[int, float]:
    """Number of coarse rounds and the log-tightening they reach (a public function of m, d, rho).

    A round shrinks the ratio ``lambda_min / lambda_max`` of the whitened covariance by about
    ``1 / (2 psi)``; with half of rho split evenly over t rounds, the fewest t reaching
    ``log(gain)`` is used, else the t maximising ``t log(1 / (2 psi_t))``.
    """
    best_t, best = 1, -math.inf
    for t in range(1, max_rounds + 1):
        total = t * math.log(1.0 / (2.0 * _coarse_psi(m, d, 0.5 * rho / t)))
        if total >= math.log(gain):
            return t, total
        if total > best:
            best_t, best = t, total
    return best_t, best


def coinpress_covariance(
    z: np.ndarray, upper: np.ndarray, *, rho: float, iterations: int, beta: float,
    rng: np.random.Generator,
) -> tuple[np.ndarray, list[PrivacyRecord], dict[str, Any]]:
    """Covariance of zero-mean ``z`` given a public (approximate) upper bound ``upper``, rho-zCDP.

    Each round: ``w = L^{-1} z`` with ``L L^T`` the current bound, clip ``||w||^2 <= T``, release
    ``C + sigma (G + G^T)/2`` where ``C = w^T w / m`` has Frobenius sensitivity
    ``sqrt(2) T / m`` under replace-one (``||y y^T - y' y'^T||_F^2 <= 2 T^2``), then tighten the
    bound to ``L (C~ + psi I) L^T`` (psi: the typical noise norm plus sampling error).  Coarse
    rounds clip at the 95% chi-square radius (their bias only slows the tightening); the final
    round clips at the union-bound radius of Lemma A.3 (the Thm 5.5 step, digest §3.6).  Half
    of rho goes to the ``iterations`` coarse rounds, half to the final one.  Privacy holds for any
    ``upper``: only the radii depend on it, and it is public.
    """
    m, d = z.shape
    t_final = _chi2_radius2(d, m, beta)
    t_coarse = _chi2_radius2(d, 1, 0.05)
    shares = [0.5 * rho / iterations] * iterations + [0.5 * rho] if iterations else [rho]
    bound = 0.5 * (upper + upper.T)
    recs, psis = [], []
    for it, rho_i in enumerate(shares):
        last = it == len(shares) - 1
        t_clip = t_final if last else t_coarse
        sens = math.sqrt(2.0) * t_clip / m
        low = np.linalg.cholesky(bound)
        w = linalg.solve_triangular(low, z.T, lower=True).T
        w = _clip_rows(w, math.sqrt(t_clip))
        sigma = sens / math.sqrt(2.0 * rho_i)
        c = w.T @ w / m + _sym_noise(d, sigma, rng)
        recs.append(gaussian_record(sigma=sigma, sensitivity=sens, mechanism="clipped_covariance",
                                    reference="Biswas et al. 2020 (CoinPress) round; " + PAPER
                                    + " Thm 5.5 via digest §3.6; Bun & Steinke 2016 Prop 1.6",
                                    round=it, clip_radius2=t_clip))
        psi = sigma * (math.sqrt(2.0 * d) + 1.5) + 2.0 * math.sqrt(d / m)
        psis.append(psi)
        lam, vec = np.linalg.eigh(0.5 * (c + c.T))
        lam = np.maximum(lam, psi) if last else np.maximum(lam, 0.0) + psi
        inner = (vec * lam) @ vec.T
        bound = low @ inner @ low.T
        bound = 0.5 * (bound + bound.T)
    return bound, recs, {"clip_radius2": t_final, "psi": psis, "rounds": len(shares)}


def clipped_mean(
    y: np.ndarray, *, epsilon: float, delta: float, beta: float, rng: np.random.Generator,
    bin_width: float = BIN_WIDTH,
) -> tuple[np.ndarray | None, list[PrivacyRecord], dict[str, Any]]:
    """Mean of ``y`` (covariance ~ I) without a bound on its location, (epsilon, delta)-DP.

    A randomly shifted grid of cells of width ``bin_width`` and the stability histogram
    (epsilon/4, delta/2) find a coarse centre c; the points are clipped to the ball of radius
    ``R = 1.5 (sqrt d + sqrt(2 ln(2 m / beta))) + 1.5 bin_width sqrt d`` around c and their mean
    is released with Gaussian noise for l2 sensitivity ``2 R / m`` (zCDP calibrated so the two
    parts compose to (epsilon, delta)).  This is the concrete choice for the Karwa-Vadhan step of
    §5.1 (digest §3.7, step 3), with one d-dimensional grid instead of d one-dimensional ones.
    """
    m, d = y.shape
    shift = rng.uniform(0.0, bin_width, size=d)  # public randomness, data independent
    with np.errstate(over="ignore", invalid="ignore"):
        cells = np.floor((y - shift) / bin_width)
    big = 2.0**62  # non-finite / huge coordinates share an extreme cell (per-record map)
    cells = np.clip(np.nan_to_num(cells, nan=big, posinf=big, neginf=-big), -big, big)
    cells = cells.astype(np.int64)
    eps_h, dl_h = epsilon / 4, delta / 2
    cell, rec_h = stability_histogram_mode(cells, epsilon=eps_h, delta=dl_h, rng=rng)
    if cell is None:
        return None, [rec_h], {}
    centre = shift + (cell + 0.5) * bin_width
    radius = 1.5 * (math.sqrt(d) + math.sqrt(2 * math.log(2 * m / beta))) \
        + 1.5 * bin_width * math.sqrt(d)
    clipped = centre + _clip_rows(y - centre, radius)
    sens = 2.0 * radius / m
    rho = zcdp_from_approx(epsilon - eps_h, delta - dl_h)
    sigma = calibrate_gaussian(rho=rho, sensitivity=sens, method="zcdp")
    out = clipped.mean(axis=0) + sigma * rng.standard_normal(d)
    rec_g = gaussian_record(sigma=sigma, sensitivity=sens, mechanism="clipped_mean",
                            reference="Gaussian mechanism on a clipped mean; Bun & Steinke 2016, "
                            "Prop 1.6", radius=radius)
    return out, [rec_h, rec_g], {"radius": radius, "sigma": sigma}


def robust_covariance_estimator(contamination: float) -> Callable[[np.ndarray], np.ndarray]:
    """Non-private trimmed covariance for Alg. 4's A (a heuristic stand-in for the filter of
    Diakonikolas et al. [11]: three rounds dropping the 2 alpha s points of largest Mahalanobis
    norm).  Alg. 4's privacy holds for any A; Thm 6.1's accuracy is *not* inherited."""
    def est(b: np.ndarray) -> np.ndarray:
        keep = b
        for _ in range(3):
            c = keep.T @ keep / len(keep)
            try:
                sc = np.einsum("ij,ij->i", b, np.linalg.solve(c, b.T).T)
            except np.linalg.LinAlgError:
                return c
            keep = b[np.argsort(sc)[: max(len(b) - int(2 * contamination * len(b)), 1)]]
        return keep.T @ keep / len(keep)
    return est


def robust_mean_estimator(contamination: float) -> Callable[[np.ndarray], np.ndarray]:
    """Non-private filtered mean for Alg. 5's A (stand-in for QUE scoring [15]): coordinate-wise
    median, then the mean of the 1 - 2 alpha fraction closest to it."""
    def est(b: np.ndarray) -> np.ndarray:
        med = np.median(b, axis=0)
        dist = ((b - med) ** 2).sum(axis=1)
        return b[np.argsort(dist)[: max(len(b) - int(2 * contamination * len(b)), 1)]].mean(0)
    return est


# ------------------------------------------------------------------------ sizes and requirements

_FRACTIONS = {"practical": {"covariance": 0.63, "mean": 0.37},
              "ashtiani-liaw": {"preconditioner": 0.40, "covariance": 0.25, "mean": 0.35},
              "robust": {"preconditioner": 0.5, "mean": 0.5}}


def _scale_need(d: int, epsilon: float, delta: float) -> float:
    """Raw samples for the d log-scale histograms: mode-bin mass >= 1/4 must reach twice the
    threshold ``1 + 2 ln(2 d / delta) d / epsilon`` (pairs, hence the leading 2)."""
    return 2 * 8 * (1 + 2 * d * math.log(2 * d / delta) / epsilon)


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
    if method == "practical":
        sc = min(max(0.05 * rest, 1.5 * _scale_need(d, epsilon, delta)), 0.25 * rest)
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


def _solve_m(f: Callable[[float], float], lo: float = 8.0) -> float:
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
               c1: float = 3200.0) -> SampleRequirement:
    """Samples each step's accuracy bound needs for error ``alpha`` w.p. 1 - beta.

    ``alpha`` bounds the Mahalanobis error of the mean and the whitened Frobenius error of the
    covariance (so TV <= ~alpha/sqrt 2 by Pinsker, digest §2).  Faithful methods use the paper's
    formulas with the concrete constants of the digest (§3.5, §3.8, §3.9); C3 = C4 = 1 for the
    unspecified robust constants (optimistic).  Practical: the explicit bounds of this module,
    with the coarse rounds required to tighten by ``COARSE_GAIN`` = 1e6 (condition number times
    the looseness of the histogram bound; not part of the paper's kappa-free bound).

    References
    ----------
    Ashtiani & Liaw (004), Thms 4.1, 5.4, 5.5, 6.3, 7.4.
    """
    eps_i, dl_i = epsilon / 2, delta / (4 * math.exp(epsilon / 2))
    k2 = k_min(eps_i, dl_i)
    steps: dict[str, float] = {}
    if not robust:
        steps["subspace"] = 2 * k2 * d
        steps["perp_mean"] = k2
    rho = zcdp_from_approx(epsilon, delta)
    g1 = calibrate_gaussian(rho=rho / 2, sensitivity=1.0, method="zcdp")  # sigma per unit sens

    def cov_gap(m: float) -> float:
        sig = g1 * math.sqrt(2) * _chi2_radius2(d, int(m), beta) / m
        # E||C_hat - I||_F ~ sqrt(d(d+1)/m), E||noise||_F = sigma sqrt(d(d+1)/2); 1.5x slack
        return 1.5 * (math.sqrt(d * (d + 1) / m) + sig * math.sqrt(d * (d + 1) / 2)) - alpha

    def mean_gap(m: float) -> float:
        rad = 1.5 * (math.sqrt(d) + math.sqrt(2 * math.log(2 * m / beta))) \
            + 1.5 * BIN_WIDTH * math.sqrt(d)
        sig = calibrate_gaussian(rho=rho * 0.7, sensitivity=2 * rad / m, method="zcdp")
        return 1.5 * (math.sqrt(d / m) + sig * math.sqrt(d)) - alpha

    thresh_mean = 1 + 2 * math.log(4 / delta) / (epsilon / 4)
    m_mean = max(_solve_m(mean_gap), 4 * thresh_mean / 0.8**d)
    if method == "practical" and not robust:
        basis = ("practical pipeline: Alg. 2 + log-scale histograms + CoinPress rounds + "
                 "clipped mean")
        steps["scale"] = 1.5 * _scale_need(d, epsilon, delta)
        coarse = _solve_m(lambda m: math.log(COARSE_GAIN) - coarse_schedule(int(m), d, rho)[1])
        steps["covariance"] = 2 * max(_solve_m(cov_gap), coarse)
        steps["mean"] = m_mean
        frac = _FRACTIONS["practical"]
    elif not robust:
        basis = f"Ashtiani & Liaw Thms 4.1, 5.4 (C1={c1:g}), 5.5, 5.7"
        eta = 1.0 / (c1 * (math.sqrt(d) + math.sqrt(math.log(4 / beta))))
        k3 = max(math.ceil(800 / MultiplicativePSDMask.gamma(d, eps_i, dl_i, eta)), k2)
        s3 = ((math.sqrt(d) + math.sqrt(2 * math.log(4 * k3 / beta))) / 1.2492e-3) ** 2
        steps["preconditioner"] = 2.0 * k3 * math.ceil(s3)
        steps["covariance"] = 2 * _solve_m(cov_gap)
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
    total = fixed + max(v / frac[kk] for kk, v in steps.items() if kk in frac)
    return SampleRequirement(float(total), steps, alpha, beta, basis)


# ---------------------------------------------------------------------------------- the learner

@dataclass
class GaussianSolution(PrivateSolution):
    """Result of :func:`private_gaussian`.

    Attributes
    ----------
    mean : (d,) ndarray or None
        Private mean (None when a private test returned ⊥).
    covariance : (d, d) ndarray or None
        Private covariance, PSD of rank ``rank``.
    rank : int or None
        Dimension of the privately recovered subspace range(Sigma).
    samples_required : SampleRequirement
        What the accuracy bounds ask for (compare with ``n``).
    """

    mean: np.ndarray | None = None
    covariance: np.ndarray | None = None
    rank: int | None = None
    samples_required: SampleRequirement | None = None
    step_records: dict[str, tuple[PrivacyRecord, ...]] = field(default_factory=dict)


def _check_inputs(x: Any, epsilon: float, delta: float, method: str) -> np.ndarray:
    if method not in ("practical", "ashtiani-liaw"):
        raise UnsupportedProblemError(
            f"method must be 'practical' or 'ashtiani-liaw', got {method!r}.")
    budget = ApproxDP(epsilon, delta)  # validates the range
    if budget.delta <= 0:
        raise BudgetError("private_gaussian needs delta > 0: pure DP is impossible for "
                          "unbounded Gaussians (Ashtiani & Liaw §1); pass e.g. delta=1e-6.")
    arr = np.asarray(x, dtype=float)
    if arr.ndim != 2 or arr.shape[1] < 1:
        raise UnsupportedProblemError(f"X must be an (n, d) array of samples, got shape "
                                      f"{arr.shape}.")
    if not np.isfinite(arr).all():
        raise UnsupportedProblemError("X contains NaN or inf; drop or impute those rows first.")
    return arr


def _pairs(x: np.ndarray) -> np.ndarray:
    h = len(x) // 2
    return (x[:h] - x[h: 2 * h]) / math.sqrt(2.0)


def _validation(x: np.ndarray, mean: np.ndarray | None, cov: np.ndarray | None
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


def private_gaussian(
    X: Any,
    *,
    epsilon: float,
    delta: float,
    rng: None | int | np.random.Generator = None,
    robust: bool = False,
    method: str = "practical",
    contamination: float = 0.05,
    alpha: float = 0.2,
    beta: float = 0.1,
    iterations: int | None = None,
    tol: float = 1e-9,
    c1: float = 3200.0,
    reference: bool = True,
) -> GaussianSolution:
    """(epsilon, delta)-DP mean and covariance of a Gaussian sample, with no bounds asked.

    Parameters
    ----------
    X : (n, d) array
        i.i.d. samples of N(mu, Sigma); mu and Sigma (possibly singular) are unrestricted.
    epsilon, delta : float
        Guarantee of the whole release under replace-one (n public); delta > 0 is required.
    rng : None, int or Generator
    robust : bool
        Use the robust Algs 4-5 (Sigma > 0, a ``contamination`` fraction may be adversarial).
        Only the faithful constants exist for them: they return ⊥ below ``required_n`` (~1e17).
    method : {"practical", "ashtiani-liaw"}
        Covariance step: the practical default or the paper's Alg. 3 (⊥ below ~1e16 samples).
    alpha, beta : float
        Accuracy target and failure probability used for ``samples_required``, the clipping
        radii and the noise-norm bounds (utility only; privacy does not depend on them).
    iterations : int, optional
        Coarse CoinPress rounds of the practical covariance step; default
        :func:`coarse_schedule` (enough for a tightening of 1e6 when n allows).
    tol : float
        Exact-match tolerance of the subspace step (Frobenius distance of block projectors).
        The orthogonal-mean step's tolerance is derived from released values (see
        :func:`_perp_tolerance`).
    c1 : float
        C1 of Lemma 5.2 for the faithful mask (3200: the paper's recipe).
    reference : bool
        Attach a :class:`ValidationReport` against the non-private empirical estimates.

    Returns
    -------
    GaussianSolution
        ``status="optimal_inaccurate"`` with mean/covariance, or ``"solver_error"`` with
        ``info["bottom"] = True`` when a private test returned ⊥.

    Warns
    -----
    GaussianSampleWarning
        When n is below ``required_n(...)``.

    Raises
    ------
    BudgetError, UnsupportedProblemError, PrivacySpecError
        Bad budget; bad X (shape, NaN); n too small to form the blocks.

    References
    ----------
    Ashtiani & Liaw (004), §5.1 (Thms 5.6, 5.7), Algorithms 1-3, Lemma 3.6, Remark 2.6; Algs 4-5
    and Cor. 7.5 for ``robust=True``.  Practical covariance: Biswas, Dong, Kamath, Ullman,
    NeurIPS 2020 (CoinPress); Karwa & Vadhan, ITCS 2018 (private range).
    """
    t0 = time.perf_counter()
    x = _check_inputs(X, epsilon, delta, method)
    n, d = x.shape
    mode = "robust" if robust else method
    sizes = layout(n, d, epsilon, delta, mode)
    req = required_n(d, epsilon=epsilon, delta=delta, alpha=alpha, beta=beta, method=method,
                     robust=robust, contamination=contamination, c1=c1)
    if n < req.total:
        warnings.warn(GaussianSampleWarning(
            f"n={n} is below the {req.total:.3g} samples that {req.basis} need for accuracy "
            f"alpha={alpha}; the release stays ({epsilon}, {delta})-DP but may be ⊥ or "
            "inaccurate."), stacklevel=2)
    gen = as_generator(rng)
    xs = x[gen.permutation(n)]
    blocks, start = {}, 0
    for name, size in sizes.items():
        blocks[name] = xs[start: start + size]
        start += size
    steps: dict[str, tuple[PrivacyRecord, ...]] = {}
    info: dict[str, Any] = {"method": "robust" if robust else method, "block_sizes": sizes}
    mean = cov = u = None
    if robust:
        u = np.eye(d)
        mean, cov = _robust_steps(blocks, epsilon, delta, beta, contamination, c1, gen, steps,
                                  info)
    else:
        u, mean, cov = _standard_steps(blocks, epsilon, delta, beta, iterations, tol, c1,
                                       method, gen, steps, info)
    budgets = [_step_budget(r, delta) for r in steps.values()]
    acct = PrivacyAccountant(ApproxDP(epsilon, delta))
    acct.spend(PrivacyRecord(
        "parallel_composition", ApproxDP(max(b[0] for b in budgets), max(b[1] for b in budgets)),
        "adaptive parallel composition over disjoint blocks after one random permutation "
        f"(McSherry 2009, Thm 4; {PAPER}, Remark 2.6, §5.1)",
        params={"steps": tuple(steps), "block_sizes": tuple(sizes.values())}))
    theorem = (f"{PAPER}, Cor. 7.5 (Algs 4-5)" if robust else
               f"{PAPER}, §5.1 / Thm 5.7" + (" (practical covariance step)"
                                            if method == "practical" else ""))
    report = acct.report(theorem=theorem, neighbouring=NEIGHBOURING,
                         details={"step_budgets": dict(zip(steps, budgets, strict=True)),
                                  **{k: v for k, v in info.items() if k != "block_sizes"}})
    bottom = mean is None or cov is None
    sol = GaussianSolution(
        status="solver_error" if bottom else "optimal_inaccurate", privacy=report,
        solve_time=time.perf_counter() - t0, info={**info, "bottom": bottom},
        mean=None if bottom else mean, covariance=None if bottom else cov,
        rank=None if u is None or bottom else int(u.shape[1]), samples_required=req,
        step_records=steps)
    if reference:
        sol.validation = _validation(x, sol.mean, sol.covariance)
    return sol


def _step_budget(records: tuple[PrivacyRecord, ...], delta: float) -> tuple[float, float]:
    acct = PrivacyAccountant(ApproxDP(1e9, delta))
    for r in records:
        acct.spend(r)
    b = acct.spent()
    return float(b.epsilon), float(getattr(b, "delta", 0.0))


def _standard_steps(blocks, epsilon, delta, beta, iterations, tol, c1, method, gen, steps, info):
    """Steps 1-4 of §5.1; returns (U, mean, covariance), None entries on ⊥."""
    x_sub = blocks["subspace"]
    u, res = private_subspace(_pairs(x_sub), epsilon=epsilon, delta=delta, tol=tol, rng=gen)
    steps["subspace"] = (res.record,)
    if u is None or u.shape[1] == 0:
        info["bottom_step"] = "subspace"
        return None, None, None
    r = u.shape[1]
    # covariance of U^T X inside the subspace
    if method == "practical":
        z_scale = _pairs(blocks["scale"]) @ u
        scales, recs = log_scale(z_scale, epsilon=epsilon, delta=delta, rng=gen)
        steps["scale"] = tuple(recs)
        if scales is None:
            info["bottom_step"] = "scale"
            return u, None, None
        upper = 4.0 * r * np.diag(scales**2)
        rounds = iterations if iterations is not None else coarse_schedule(
            len(blocks["covariance"]) // 2, r, zcdp_from_approx(epsilon, delta))[0]
    else:
        z_pre = _pairs(blocks["preconditioner"]) @ u
        pre, par, res3 = private_preconditioner(z_pre, epsilon=epsilon, delta=delta, beta=beta,
                                                c1=c1, rng=gen)
        info["alg3"] = par
        steps["preconditioner"] = (res3.record,) if res3 is not None else (PrivacyRecord(
            "populous_mean", ApproxDP(epsilon, delta), f"{PAPER}, Alg. 3 (⊥: blocks too small)",
            params=par),)
        if pre is None:
            info["bottom_step"] = "preconditioner"
            return u, None, None
        upper = 1.1 * pre  # Thm 5.4: dist(Sigma, Sigma_hat) <= 1/10, so Sigma <= 1.1 Sigma_hat
        rounds = 0
    z_cov = _pairs(blocks["covariance"]) @ u
    rho = zcdp_from_approx(epsilon, delta)
    cov_r, recs, cinfo = coinpress_covariance(z_cov, upper, rho=rho, iterations=rounds,
                                              beta=beta, rng=gen)
    steps["covariance"] = tuple(recs)
    info["covariance"] = cinfo
    # mean inside the subspace, whitened by the released covariance
    low = np.linalg.cholesky(cov_r)
    y = linalg.solve_triangular(low, (blocks["mean"] @ u).T, lower=True).T
    ym, recs, minfo = clipped_mean(y, epsilon=epsilon, delta=delta, beta=beta, rng=gen)
    steps["mean"] = tuple(recs)
    if ym is None:
        info["bottom_step"] = "mean"
        return u, None, None
    mean = u @ (low @ ym)
    if r < u.shape[0]:  # mean orthogonal to range(Sigma): exact match, Alg. 1 with s = 1
        proj = np.eye(u.shape[0]) - u @ u.T
        items = blocks["perp_mean"] @ proj
        tol_perp = _perp_tolerance(res.record.params["sigma"], tol, u.shape[0], cov_r, mean,
                                   len(items), beta)
        info["perp_tolerance"] = tol_perp
        res4 = populous_mean(items, EuclideanSpace(r=tol_perp), epsilon=epsilon, delta=delta,
                             rng=gen)
        steps["perp_mean"] = (res4.record,)
        if res4.value is None:
            info["bottom_step"] = "perp_mean"
            return u, None, None
        mean = mean + proj @ res4.value
    return u, mean, u @ cov_r @ u.T


def _perp_tolerance(sigma_sub: float, tol: float, d: int, cov_r: np.ndarray, mean: np.ndarray,
                    k: int, beta: float) -> float:
    """Radius within which the points ``(I - P_hat) x`` agree, from released values only.

    The snapped projector is off by ``e_P <= tol + 2 ||E||`` (Davis-Kahan, eigengap 1) with the
    subspace mask's noise ``||E|| <= sigma (2 sqrt d + sqrt(2 ln(2/beta)))``; a point's
    in-range deviation is ``<= sqrt(lambda_max) (sqrt r + sqrt(2 ln(2k/beta)))`` whp, so two
    points differ by at most twice the product; plus float error ~1e-12 ||mu_hat||.
    """
    e_p = tol + 2.0 * sigma_sub * (2.0 * math.sqrt(d) + math.sqrt(2.0 * math.log(2.0 / beta)))
    r = cov_r.shape[0]
    spread = math.sqrt(float(np.linalg.eigvalsh(cov_r)[-1])) * (
        math.sqrt(r) + math.sqrt(2.0 * math.log(2.0 * k / beta)))
    return 2.0 * e_p * spread + 1e-12 * (1.0 + float(np.linalg.norm(mean)))


def _robust_steps(blocks, epsilon, delta, beta, contamination, c1, gen, steps, info):
    """Cor. 7.5: Alg. 4 (robust covariance) then Alg. 5 (robust mean in whitened coordinates)."""
    d = blocks["mean"].shape[1]
    a = contamination
    eta4 = a / (c1 * (d + math.sqrt(d * math.log(4 / beta))))  # Alg. 4 (Prop. 6.2)
    pre, par, res4 = private_preconditioner(
        _pairs(blocks["preconditioner"]), epsilon=epsilon, delta=delta, beta=beta, c1=c1,
        estimator=robust_covariance_estimator(a), eta=eta4, rng=gen)
    info["alg4"] = par
    steps["preconditioner"] = (res4.record,) if res4 is not None else (PrivacyRecord(
        "populous_mean", ApproxDP(epsilon, delta), f"{PAPER}, Alg. 4 (⊥: blocks too small)",
        params=par),)
    if pre is None:
        info["bottom_step"] = "preconditioner"
        return None, None
    low = np.linalg.cholesky(pre)
    y = linalg.solve_triangular(low, blocks["mean"].T, lower=True).T
    eps_i, dl_i = epsilon / 2, delta / (4 * math.exp(epsilon / 2))
    r5 = 2 * a * math.sqrt(math.log(1 / a))  # digest §3.9 fix 1 (C3 = 1)
    eta5 = a / (math.sqrt(d) + math.sqrt(2 * math.log(2 / beta)))
    gam5 = eta5 / calibrate_gaussian(epsilon=eps_i, delta=dl_i, sensitivity=1.0)
    k5 = max(math.ceil(400 * r5 / gam5), k_min(eps_i, dl_i))
    s5 = len(y) // k5
    info["alg5"] = {"k": k5, "block_size": s5, "r": r5, "eta": eta5}
    if s5 < 1:
        steps["mean"] = (PrivacyRecord("populous_mean", ApproxDP(epsilon, delta),
                                       f"{PAPER}, Alg. 5 (⊥: blocks too small)", params={}),)
        info["bottom_step"] = "mean"
        return None, None
    est = robust_mean_estimator(a)
    items = np.stack([est(b) for b in y[: k5 * s5].reshape(k5, s5, d)])
    res5 = populous_mean(items, EuclideanSpace(r=r5), epsilon=epsilon, delta=delta, rng=gen,
                         constant="paper")
    steps["mean"] = (res5.record,)
    if res5.value is None:
        info["bottom_step"] = "mean"
        return None, None
    return low @ res5.value, pre
