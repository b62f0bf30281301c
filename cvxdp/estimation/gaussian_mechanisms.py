"""The mechanism steps of `private_gaussian` (cvxdp.estimation.gaussians): stability histograms,
the log-scale range, CoinPress covariance rounds, the clipped mean, and the robust block
estimators.

Every function here is an (epsilon, delta)- or rho-zCDP mechanism on its own block (or a public
helper of one); their sample sizes are planned in :mod:`cvxdp.estimation.gaussian_steps`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from scipy import linalg

from cvxdp.citations import ZCDP_GAUSSIAN
from cvxdp.dask_backend.gaussians import dask_cell_counts, dask_clipped_sum, dask_column_counts
from cvxdp.estimation.masking import PAPER
from cvxdp.estimation.rows import cell_counts, clipped_sum
from cvxdp.estimation.rows import clip_rows as _clip_rows
from cvxdp.privacy.accountant import PrivacyRecord
from cvxdp.privacy.budgets import ApproxDP, zcdp_from_approx
from cvxdp.privacy.gdp import gdp_mu
from cvxdp.privacy.mechanisms import gaussian_record

__all__ = [
    "stability_histogram_mode",
    "histogram_mode",
    "chi2_radius2",
    "whiten",
    "log_scale",
    "log_cells",
    "gaussian_steps_rho",
    "coarse_schedule",
    "coinpress_covariance",
    "mean_cells",
    "clipped_mean_radii",
    "clipped_mean",
    "robust_covariance_estimator",
    "robust_mean_estimator",
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
    :func:`cvxdp.dask_backend.gaussians.dask_cell_counts`): the noise is drawn here, once, in the
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
    """``sigma (G + G^T)/2``: the Gaussian mechanism for Frobenius sensitivity."""
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
    round clips at the union-bound radius of Lemma A.3 (the Thm 5.5 step).  A share
    ``coarse_fraction`` of rho is split evenly over the ``iterations`` coarse rounds, the rest goes
    to the final one.  Privacy holds for any
    ``upper``: only the radii depend on it, and it is public.  ``moment(L, T)``, if given,
    computes ``w^T w`` (``z`` whitened by ``L`` and clipped at ``sqrt(T)``) instead, e.g.
    chunk-wise on a Dask array (:mod:`cvxdp.dask_backend.gaussians`); ``z`` is then only read for
    its shape.  ``final=False`` runs the ``iterations`` coarse rounds only, with rho split evenly
    over them, and returns the bound they reach (a later call with ``iterations=0`` from that
    bound runs the final round with its own rho).

    References
    ----------
    Biswas, Dong, Kamath, Ullman, NeurIPS 2020 (CoinPress), covariance algorithm; Ashtiani & Liaw
    (2022), Thm 5.5 (final round); Bun & Steinke 2016, Prop. 1.6.
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
                                    + f", Thm 5.5; {ZCDP_GAUSSIAN}",
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
    noise of round 1).  This is the concrete choice for the Karwa-Vadhan step of §5.1 (its step 3),
    with one d-dimensional grid instead of d one-dimensional ones.

    References
    ----------
    Ashtiani & Liaw (2022), §5.1 step 3; Karwa & Vadhan, ITCS 2018, Thm 1.3; Vadhan 2017,
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
           f"rho-zCDP with rho = (2R/m)^2/(2 sigma^2) ({ZCDP_GAUSSIAN})")
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

