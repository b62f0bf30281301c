"""Mechanism steps and sample-size bookkeeping of `private_gaussian` (cvxdp.estimation.gaussians).

Every function here is an (epsilon, delta)- or rho-zCDP mechanism on its own block, or a public
function of (n, d, budget).  Split from :mod:`cvxdp.estimation.gaussians` for file size.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import linalg

from cvxdp.errors import PrivacySpecError
from cvxdp.estimation.masking import PAPER, MultiplicativePSDMask, k_min
from cvxdp.estimation.rows import cell_counts, clipped_sum
from cvxdp.estimation.rows import clip_rows as _clip_rows
from cvxdp.privacy.accountant import PrivacyRecord
from cvxdp.privacy.budgets import ApproxDP, zcdp_from_approx
from cvxdp.privacy.calibration import calibrate_gaussian
from cvxdp.privacy.gdp import gdp_mu
from cvxdp.privacy.mechanisms import gaussian_record
from cvxdp.scale.gaussians import dask_cell_counts, dask_clipped_sum, dask_column_counts
from cvxdp.solution import ValidationReport

__all__ = [
    "stability_histogram_mode",
    "log_scale",
    "coarse_schedule",
    "coinpress_covariance",
    "clipped_mean",
    "robust_covariance_estimator",
    "robust_mean_estimator",
    "layout",
    "SampleRequirement",
    "required_n",
    "empirical_validation",
]

HISTOGRAM_REFERENCE = ("Vadhan 2017, 'The Complexity of Differential Privacy', Prop. 3.5; "
                       "Karwa & Vadhan 2018, Lemma 2.3 (stability-based histogram)")
BIN_WIDTH = 4.0  # mean histogram cell width, in whitened units


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

    References
    ----------
    Vadhan 2017, "The Complexity of Differential Privacy", Prop. 3.5; Karwa & Vadhan, ITCS 2018,
    Lemma 2.3.
    """
    keys = np.asarray(keys)
    cells, counts = cell_counts(keys)
    return histogram_mode(cells, counts, flat=keys.ndim == 1, epsilon=epsilon, delta=delta,
                          rng=rng)


def histogram_mode(cells: np.ndarray, counts: np.ndarray, *, flat: bool, epsilon: float,
                   delta: float, rng: np.random.Generator
                   ) -> tuple[np.ndarray | None, PrivacyRecord]:
    """The mechanism of :func:`stability_histogram_mode` on exact counts already reduced
    (:func:`cell_counts`, or its chunk-wise sum on a Dask array,
    :func:`cvxdp.scale.gaussians.dask_cell_counts`): the noise is drawn here, once, in the
    order of the sorted cells, so the release does not depend on where the counts were made."""
    noisy = counts + rng.laplace(0.0, 2.0 / epsilon, size=counts.shape)
    thresh = 1.0 + 2.0 * math.log(2.0 / delta) / epsilon
    rec = PrivacyRecord("stability_histogram", ApproxDP(epsilon, delta), HISTOGRAM_REFERENCE,
                        params={"laplace_scale": 2.0 / epsilon, "threshold": thresh})
    if not (noisy > thresh).any():
        return None, rec
    best = cells[int(np.argmax(np.where(noisy > thresh, noisy, -np.inf)))]
    return (best[0] if flat else best), rec


def chi2_radius2(dim: int, m: int, beta: float) -> float:
    """T with P[max_i ||g_i||^2 > T] <= beta over m standard normals in R^dim (Lemma A.3)."""
    x = math.log(max(m, 1) / beta)
    return dim + 2.0 * math.sqrt(dim * x) + 2.0 * x


def whiten(low: np.ndarray, z: Any) -> Any:
    """``L^{-1} z_i`` for every row (public lower-triangular ``L``); a Dask ``z`` stays lazy and
    is whitened block by block on the workers."""
    if hasattr(z, "chunks"):
        return z.map_blocks(_whiten_block, np.asarray(low), dtype=np.float64)
    return linalg.solve_triangular(low, z.T, lower=True).T


def _whiten_block(block: np.ndarray, low: np.ndarray) -> np.ndarray:
    return linalg.solve_triangular(low, block.T, lower=True).T


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

    References
    ----------
    Karwa & Vadhan, ITCS 2018 (private range of a Gaussian via a log-scale histogram);
    Dwork & Roth 2014, Thm 3.16 (basic composition).
    """
    m, d = z.shape
    if hasattr(z, "chunks"):  # a Dask array: the d histograms' counts reduced on the workers
        hists = dask_column_counts(z, log_cells)
    else:
        lg = log_cells(z)
        hists = (cell_counts(lg[:, j]) for j in range(d))  # made as the loop reaches them
    scales = np.empty(d)
    recs = []
    for j, (cells, counts) in enumerate(hists):  # d histograms (d <= ~50)
        b, rec = histogram_mode(cells, counts, flat=True, epsilon=epsilon / d, delta=delta / d,
                                rng=rng)
        recs.append(rec)
        if b is None:
            return None, recs
        scales[j] = 2.0 ** (float(b) + 1.0)
    return scales, recs


def log_cells(z: np.ndarray) -> np.ndarray:
    """``floor(log2 |z|)`` entry by entry (int64; 0 and non-finite entries: -4096), the cells of
    :func:`log_scale`'s histograms.  A per-record map."""
    with np.errstate(divide="ignore", invalid="ignore"):
        lg = np.floor(np.log2(np.abs(z)))
    return np.where(np.isfinite(lg), lg, -4096.0).astype(np.int64)


COARSE_GAIN = 1e6  # tightening the coarse rounds aim for: (condition number) x (looseness of A_0)


def gaussian_steps_rho(epsilon: float, delta: float) -> float:
    """rho to split over a step made only of Gaussian mechanisms so that it is (epsilon, delta)-DP.

    Such a step composes exactly in Gaussian DP (mu = sqrt(sum (D_k/sigma_k)^2), Dong, Roth & Su
    2022, Cor. 3.3), and splitting ``rho = mu^2 / 2`` by shares is the same as splitting mu^2;
    ``mu = gdp_mu(epsilon, delta)`` is exact, 15% more rho than the zCDP + CKS route at (1, 1e-6).
    The accountant verifies the composed records against the target.
    """
    return 0.5 * gdp_mu(epsilon=epsilon, delta=delta) ** 2


def _coarse_psi(m: int, d: int, rho_round: float) -> float:
    """Noise-plus-sampling level psi of one coarse round (see :func:`coinpress_covariance`)."""
    sigma = math.sqrt(2.0) * chi2_radius2(d, 1, 0.05) / m / math.sqrt(2.0 * rho_round)
    return sigma * (math.sqrt(2.0 * d) + 1.5) + 2.0 * math.sqrt(d / m)


def coarse_schedule(m: int, d: int, rho: float, gain: float = COARSE_GAIN, max_rounds: int = 30,
                    fractions: tuple[float, ...] = (0.5,)) -> tuple[int, float, float]:
    """Coarse rounds, the log-tightening they reach, and the share of rho they get.

    A round shrinks the ratio ``lambda_min / lambda_max`` of the whitened covariance by about
    ``1 / (2 psi)``.  For the coarse share ``f`` (the first of ``fractions`` that works), f rho is
    split evenly over t rounds and the fewest t reaching ``log(gain)`` is used; otherwise the last
    share and the t maximising ``t log(1 / (2 psi_t))``.  A public function of (m, d, rho).
    (Measured: shifting budget to the coarse rounds when the model says the gain is out of reach,
    ``fractions=(0.5, 0.65, 0.8)``, helps only where the result is unusable anyway and costs
    1.5-2.5x in the moderately under-sampled range, so the default keeps f = 1/2.)
    """
    for frac in fractions:
        best_t, best = 1, -math.inf
        for t in range(1, max_rounds + 1):
            total = t * math.log(1.0 / (2.0 * _coarse_psi(m, d, frac * rho / t)))
            if total >= math.log(gain):
                return t, total, frac
            if total > best:
                best_t, best = t, total
    return best_t, best, fractions[-1]


def coinpress_covariance(
    z: np.ndarray, upper: np.ndarray, *, rho: float, iterations: int, beta: float,
    rng: np.random.Generator, coarse_fraction: float = 0.5,
    moment: Callable[[np.ndarray, float], np.ndarray] | None = None, final: bool = True,
) -> tuple[np.ndarray, list[PrivacyRecord], dict[str, Any]]:
    """Covariance of zero-mean ``z`` given a public (approximate) upper bound ``upper``, rho-zCDP.

    Each round: ``w = L^{-1} z`` with ``L L^T`` the current bound, clip ``||w||^2 <= T``, release
    ``C + sigma (G + G^T)/2`` where ``C = w^T w / m`` has Frobenius sensitivity
    ``sqrt(2) T / m`` under replace-one (``||y y^T - y' y'^T||_F^2 <= 2 T^2``), then tighten the
    bound to ``L (C~ + psi I) L^T`` (psi: the typical noise norm plus sampling error).  Coarse
    rounds clip at the 95% chi-square radius (their bias only slows the tightening); the final
    round clips at the union-bound radius of Lemma A.3 (the Thm 5.5 step, digest §3.6).  A share
    ``coarse_fraction`` of rho is split evenly over the ``iterations`` coarse rounds, the rest goes
    to the final one.  Privacy holds for any
    ``upper``: only the radii depend on it, and it is public.  ``moment(L, T)``, if given,
    computes ``w^T w`` (``z`` whitened by ``L`` and clipped at ``sqrt(T)``) instead, e.g.
    chunk-wise on a Dask array (:mod:`cvxdp.scale.gaussians`); ``z`` is then only read for its
    shape.  ``final=False`` runs the ``iterations`` coarse rounds only, with rho split evenly
    over them, and returns the bound they reach (a later call with ``iterations=0`` from that
    bound runs the final round with its own rho).

    References
    ----------
    Biswas, Dong, Kamath, Ullman, NeurIPS 2020 (CoinPress), covariance algorithm; Ashtiani & Liaw
    (004), Thm 5.5 (final round, concrete form in the digest §3.6); Bun & Steinke 2016, Prop. 1.6.
    """
    m, d = z.shape
    t_final = chi2_radius2(d, m, beta)
    t_coarse = chi2_radius2(d, 1, 0.05)
    cf = coarse_fraction
    if not final:
        shares = [rho / iterations] * iterations
    else:
        shares = [cf * rho / iterations] * iterations + [(1 - cf) * rho] if iterations else [rho]
    bound = 0.5 * (upper + upper.T)
    recs, psis = [], []
    for it, rho_i in enumerate(shares):
        last = final and it == len(shares) - 1
        t_clip = t_final if last else t_coarse
        sens = math.sqrt(2.0) * t_clip / m
        low = np.linalg.cholesky(bound)
        if moment is None:
            w = linalg.solve_triangular(low, z.T, lower=True).T
            w = _clip_rows(w, math.sqrt(t_clip))
            wtw = w.T @ w
        else:
            wtw = moment(low, t_clip)
        sigma = sens / math.sqrt(2.0 * rho_i)
        c = wtw / m + _sym_noise(d, sigma, rng)
        recs.append(gaussian_record(sigma=sigma, sensitivity=sens, mechanism="clipped_covariance",
                                    reference="Biswas et al. 2020 (CoinPress) round; " + PAPER
                                    + " Thm 5.5 via digest §3.6; Bun & Steinke 2016 Prop 1.6",
                                    round=it, clip_radius2=t_clip))
        psi = sigma * (math.sqrt(2.0 * d) + 1.5) + 2.0 * math.sqrt(d / m)
        psis.append(psi)
        lam, vec = np.linalg.eigh(0.5 * (c + c.T))
        # released-value diagnostic: directions whose relative error psi / lambda exceeds 1/2
        unresolved = int(np.count_nonzero(lam < 2.0 * psi))
        lam = np.maximum(lam, psi) if last else np.maximum(lam, 0.0) + psi
        inner = (vec * lam) @ vec.T
        bound = low @ inner @ low.T
        bound = 0.5 * (bound + bound.T)
    return bound, recs, {"clip_radius2": t_final, "psi": psis, "rounds": len(shares),
                         "unresolved": unresolved}


def mean_cells(y: np.ndarray, shift: np.ndarray, bin_width: float) -> np.ndarray:
    """The grid cell of each row of ``y`` (int64, (m, d)), :func:`clipped_mean`'s histogram
    keys; non-finite / huge coordinates share an extreme cell.  A per-record map."""
    with np.errstate(over="ignore", invalid="ignore"):
        cells = np.floor((y - shift) / bin_width)
    big = 2.0**62
    cells = np.clip(np.nan_to_num(cells, nan=big, posinf=big, neginf=-big), -big, big)
    return cells.astype(np.int64)


MEAN_COARSE_SHARE = 0.1  # share of the clipped mean's mu^2 spent on its coarse round
MEAN_RADIUS_SLACK = 1.25  # whitened spread allowed for: covariance estimate off by up to 1.56x


def clipped_mean_radii(m: int, d: int, mu_g: float, beta: float,
                       bin_width: float = BIN_WIDTH) -> tuple[float, float, float, float]:
    """Public radii and noise levels of :func:`clipped_mean`'s two Gaussian rounds.

    Returns ``(R0, sigma0, R1, sigma1)``: round 0 clips to ``R0`` around the histogram cell's
    centre (the cell may be a neighbour of the one holding the mean, hence the cell-width term);
    round 1 clips to ``R1`` around round 0's release, with ``R1`` = the spread of m whitened
    samples (Lemma A.3's chi-square radius, times ``MEAN_RADIUS_SLACK``) plus a 1 - beta bound
    on round 0's error (noise norm, Gordon, plus the sampling error of a mean of m).  A function
    of (m, d, mu_g, beta) only; ``mu_g^2 / 2`` is the rounds' total rho, split
    ``MEAN_COARSE_SHARE`` / rest.
    """
    r0 = 1.5 * (math.sqrt(d) + math.sqrt(2 * math.log(2 * m / beta))) \
        + 1.5 * bin_width * math.sqrt(d)
    mu0 = math.sqrt(MEAN_COARSE_SHARE) * mu_g
    mu1 = math.sqrt(1.0 - MEAN_COARSE_SHARE) * mu_g
    s0 = 2.0 * r0 / m / mu0
    err0 = s0 * (math.sqrt(d) + math.sqrt(2 * math.log(4 / beta))) \
        + MEAN_RADIUS_SLACK * math.sqrt(chi2_radius2(d, 1, beta / 2) / m)
    r1 = min(r0, MEAN_RADIUS_SLACK * math.sqrt(chi2_radius2(d, m, beta)) + err0)
    return r0, s0, r1, 2.0 * r1 / m / mu1


def clipped_mean(
    y: np.ndarray, *, epsilon: float, delta: float, beta: float, rng: np.random.Generator,
    bin_width: float = BIN_WIDTH,
) -> tuple[np.ndarray | None, list[PrivacyRecord], dict[str, Any]]:
    """Mean of ``y`` (covariance ~ I) without a bound on its location, (epsilon, delta)-DP.

    A randomly shifted grid of cells of width ``bin_width`` and the stability histogram
    (epsilon/4, delta/2) find a coarse centre c.  Then two CoinPress mean rounds (Biswas, Dong,
    Kamath & Ullman 2020, Alg. 2): round 0 clips the points to the ball of radius ``R0`` around c
    (the chi-square spread plus 1.5 cell diagonals) and releases their mean with Gaussian noise
    for l2 sensitivity ``2 R0 / m``; round 1 clips to the much smaller ``R1`` around round 0's
    release (the spread of the samples plus a bound on round 0's error, see
    :func:`clipped_mean_radii`; every radius is public) and releases the final mean.  The two
    Gaussian rounds are ``rho0``- and ``rho1``-zCDP (``rho_i = (2 R_i / m)^2 / (2 sigma_i^2)``,
    Bun & Steinke 2016, Prop. 1.6) with ``rho0 + rho1 = zcdp_from_approx(3 epsilon/4,
    delta/2)`` (zCDP composition, ibid. Lemma 2.3, and the conversion of Canonne, Kamath &
    Steinke 2020); with the histogram, basic composition gives (epsilon, delta).  The
    accountant checks the composed records.  Before, one round clipped at ``R0`` (2-3x the
    noise of round 1).  This is the concrete choice for the Karwa-Vadhan step of §5.1 (digest
    §3.7, step 3), with one d-dimensional grid instead of d one-dimensional ones.

    References
    ----------
    Ashtiani & Liaw (004), §5.1 step 3; Karwa & Vadhan, ITCS 2018, Thm 1.3; Vadhan 2017,
    Prop. 3.5; Biswas, Dong, Kamath & Ullman, NeurIPS 2020 (CoinPress mean); Dong, Roth & Su
    2022, Thm 2.7; Bun & Steinke 2016, Prop. 1.6, Lemma 2.3; Dwork & Roth 2014, Thm 3.16.
    """
    m, d = y.shape
    dask = hasattr(y, "chunks")  # a Dask array: counts and sums reduced on the workers
    shift = rng.uniform(0.0, bin_width, size=d)  # public randomness, data independent
    if dask:
        hist = dask_cell_counts(y, mean_cells, shift, bin_width)
    else:
        hist = cell_counts(mean_cells(y, shift, bin_width))
    eps_h, dl_h = epsilon / 4, delta / 2
    cell, rec_h = histogram_mode(*hist, flat=False, epsilon=eps_h, delta=dl_h, rng=rng)
    if cell is None:
        return None, [rec_h], {}
    mu_g = math.sqrt(2.0 * zcdp_from_approx(epsilon - eps_h, delta - dl_h))  # rho = mu^2/2
    r0, s0, r1, s1 = clipped_mean_radii(m, d, mu_g, beta, bin_width)
    ref = ("CoinPress mean round (Biswas et al. 2020); Gaussian mechanism on a clipped mean, "
           "rho-zCDP with rho = (2R/m)^2/(2 sigma^2) (Bun & Steinke 2016, Prop 1.6)")
    centre = shift + (cell + 0.5) * bin_width
    csum = dask_clipped_sum if dask else clipped_sum
    c0 = csum(y, centre, r0) / m + s0 * rng.standard_normal(d)
    rec0 = gaussian_record(sigma=s0, sensitivity=2.0 * r0 / m, mechanism="clipped_mean",
                           reference=ref, radius=r0, round=0)
    out = csum(y, c0, r1) / m + s1 * rng.standard_normal(d)
    rec1 = gaussian_record(sigma=s1, sensitivity=2.0 * r1 / m, mechanism="clipped_mean",
                           reference=ref, radius=r1, round=1)
    return out, [rec_h, rec0, rec1], {"radius": r1, "sigma": s1, "radius0": r0, "sigma0": s0}


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
    covariance (so TV <= ~alpha/sqrt 2 by Pinsker, digest §2).  Faithful methods use the paper's
    formulas with the concrete constants of the digest (§3.5, §3.8, §3.9); C3 = C4 = 1 for the
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
    Ashtiani & Liaw (004), Thms 4.1, 5.4, 5.5, 6.3, 7.4.
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
