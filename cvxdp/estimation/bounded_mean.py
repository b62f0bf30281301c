"""The clipped mean of ``private_gaussian(bounds=...)``: the box alone, or the box then a ball.

A public box (or ball) bounds the sensitivity of the clipped mean by its width over n, so the
noise of one release at the box grows with the box's width in standard deviations.  When a
covariance is released too (``estimate="both"``, released first), the mean has a second option
that uses the box only to start from, like the no-bounds pipeline's CoinPress mean rounds:

* ``"box"``: one release of the mean of the records clipped into the bounds, with the whole
  mean budget (K-norm or Gaussian, :func:`mean_plan`);
* ``"box+ball"``: round 0 releases that same mean with ``MEAN_COARSE_SHARE`` of the mean budget
  (a coarse centre c0); round 1 whitens the clipped records by the released covariance
  ``Sigma^ = L L^T``, clips them to the ball of radius ``R1`` around ``L^{-1} c0`` (``R1`` = the
  spread of n whitened samples, Lemma A.3's chi-square radius times ``MEAN_RADIUS_SLACK``, plus
  a 1 - beta bound on round 0's whitened error; every term public or released) and releases
  their mean with the rest, mapped back by ``L``.

The two options spend different mean budgets (``"box"`` the share of :func:`mean_share`,
``"box+ball"`` ``MEAN_SHARE``; the covariance's final round gets the rest, see
:func:`cvxdp.estimation.gaussian_bounded._covariance_then_mean`).  The choice is made before any
mean release and before the final covariance round, from public values and the coarse
covariance rounds' released bound only (post-processing, adaptive composition), by comparing
the two options' expected squared Mahalanobis noise under that bound (:func:`box_route`,
:func:`ball_route`).  The box wins when it is narrow in standard deviations (its noise ~ width
/ n); the ball wins when the box is wide (its noise ~ R1 / n, R1 ~ 9 at d = 5, n = 1e5,
independent of the box).

The mean's budget share (:func:`mean_share`) is at least the share at which the ``"box"``
release's noise equals that of per-coordinate Laplace at the **full** budget (what a mean-only
tool such as diffprivlib's ``tools.mean`` adds), so asking for the covariance too never makes
the mean noisier than that baseline.

References
----------
Hardt & Talwar 2010, "On the geometry of differential privacy", Thm 4.3 (K-norm mechanism);
Biswas, Dong, Kamath & Ullman 2020, "CoinPress: practical private mean and covariance
estimation" (iterative clipped mean); Dong, Roth & Su 2022, "Gaussian differential privacy",
Cor. 3.3; Dwork & Roth 2014, Thm 3.16 (basic composition).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import linalg, stats

from cvxdp.dask_backend.gaussians import dask_clipped_sum
from cvxdp.estimation.gaussian_steps import (
    MEAN_COARSE_SHARE,
    MEAN_RADIUS_SLACK,
    chi2_radius2,
    whiten,
)
from cvxdp.estimation.rows import clipped_sum
from cvxdp.privacy.gdp import gdp_mu

__all__ = ["mean_plan", "knorm_noise", "mean_share", "one_shot_share", "laplace_share",
           "scale_share",
           "family_par", "box_route", "ball_route", "release_mean", "MEAN_SHARE",
           "MAX_MEAN_SHARE", "SCALE_SHARE"]

#: Smallest share of the budget (of epsilon for a K-norm mean, of mu^2 for a Gaussian one) for
#: the mean when a covariance is released too.
MEAN_SHARE = 0.35
#: Largest: the covariance keeps at least this complement.
MAX_MEAN_SHARE = 0.8
#: ``estimate="mean"``: largest share for the coarse covariance rounds that find the scale (a
#: utility choice; :func:`scale_share` keeps the box route no noisier than per-coordinate
#: Laplace at the full budget whatever it is).
SCALE_SHARE = 0.25


def _is_box(b: Any) -> bool:
    return hasattr(b, "lo")


def _u2(b: Any, n: int) -> float:
    """``E||u||^2`` for u uniform in the replace-one sensitivity set K of the clipped mean."""
    d = len(b.centre)
    if _is_box(b):
        return float(np.sum(((b.hi - b.lo) / n) ** 2)) / 3.0
    return (2.0 * b.radius / n) ** 2 * d / (d + 2.0)


def mean_plan(b: Any, n: int, epsilon: float, delta: float, share: float
              ) -> tuple[str, float, float]:
    """(mechanism, its parameter, expected ||noise||^2) of one mean release at the bounds.

    * ``"knorm"``: the K-norm mechanism (Hardt & Talwar 2010, Thm 4.3) at ``share * epsilon``,
      pure DP, with K the set of possible changes of the clipped mean under replace-one: the box
      ``{|z_j| <= (hi_j - lo_j)/n}`` or the ball of radius ``2R/n``.  Noise ``r u`` with
      ``r ~ Gamma(d + 1, 1/eps_m)`` and ``u`` uniform in K, so ``E||noise||^2 =
      (d+1)(d+2)/eps_m^2 E_u||u||^2`` with ``E_u||u||^2 = sum w_j^2 / 3`` (box) or
      ``D^2 d/(d+2)`` (ball).  It beats per-coordinate Laplace at epsilon/d (what
      diffprivlib's ``mean`` does) by ``sqrt(6 d^2 / ((d+1)(d+2)))``, 1.9x at d = 5.
    * ``"gaussian"``: l2 sensitivity the l2 diameter over n, ``mu_m = sqrt(share) mu``;
      ``E||noise||^2 = d sigma^2``.  Wins only at large d (about d >= 50 at epsilon = 1).

    The parameter is eps_m (knorm) or sigma (gaussian).
    """
    d = len(b.centre)
    eps_m = share * epsilon
    e_knorm = (d + 1.0) * (d + 2.0) / eps_m**2 * _u2(b, n)
    mu_m = math.sqrt(share) * gdp_mu(epsilon=epsilon, delta=delta)
    sigma = b.l2_diameter() / n / mu_m
    if e_knorm <= d * sigma**2:
        return "knorm", eps_m, e_knorm
    return "gaussian", sigma, d * sigma**2


def knorm_noise(b: Any, n: int, eps_m: float, rng: np.random.Generator) -> np.ndarray:
    """``r u``, ``r ~ Gamma(d+1, 1/eps_m)``, ``u`` uniform in K (Hardt & Talwar 2010, §4)."""
    d = len(b.centre)
    r = rng.gamma(d + 1.0, 1.0 / eps_m)
    if _is_box(b):
        u = rng.uniform(-1.0, 1.0, size=d) * (b.hi - b.lo) / n
    else:
        u = _unit_ball(d, rng) * (2.0 * b.radius / n)
    return r * u


def _unit_ball(d: int, rng: np.random.Generator) -> np.ndarray:
    g = rng.standard_normal(d)
    return g / np.linalg.norm(g) * rng.uniform() ** (1.0 / d)


def _laplace_baseline(b: Any, n: int, epsilon: float) -> float:
    """``E||noise||^2`` of per-coordinate Laplace at epsilon/d with sensitivity w_j / n (the
    box's widths, or the enclosing box's ``2R`` for a ball): ``2 d^2 sum w_j^2 / (n eps)^2``."""
    d = len(b.centre)
    w2 = float(np.sum((b.hi - b.lo) ** 2)) if _is_box(b) else d * (2.0 * b.radius) ** 2
    return 2.0 * d**2 * w2 / (n * epsilon) ** 2


def laplace_share(b: Any, n: int, epsilon: float, delta: float,
                  variance_ratio: float = 1.0) -> float:
    """The share at which one release at the bounds (:func:`mean_plan`) has ``variance_ratio``
    times the expected squared noise of per-coordinate Laplace at the full epsilon (see
    :func:`mean_share`); may exceed 1."""
    e_lap = variance_ratio * _laplace_baseline(b, n, epsilon)
    mech, _, e1 = mean_plan(b, n, epsilon, delta, 1.0)
    return math.sqrt(e1 / e_lap) if mech == "knorm" else e1 / e_lap


def mean_share(b: Any, n: int, epsilon: float, delta: float) -> float:
    """The mean's share when a covariance is released too: the smallest share at which one
    release at the bounds (:func:`mean_plan`) has no more expected squared noise than
    per-coordinate Laplace at the full epsilon (what a mean-only tool such as diffprivlib's
    ``tools.mean`` adds), at least ``MEAN_SHARE``, at most ``MAX_MEAN_SHARE``.

    K-norm noise scales as ``1/share^2`` and Gaussian noise as ``1/share``, so with ``E_1`` the
    noise at share 1 and ``E_L`` the Laplace baseline the share is ``sqrt(E_1 / E_L)`` or
    ``E_1 / E_L`` (box, d = 5: ``sqrt((d+1)(d+2)/(6 d^2))`` = 0.53; the ratio is free of n and
    of the widths).  At that share the ``"box"`` route's noise has the baseline's second
    moment, mean and median norm (Monte Carlo, 2e5 draws at d = 5: 14.33 / 13.26 against
    14.31 / 13.23), so against a mean-only tool it is a tie in distribution, and the medians
    of a few seeds fall either side.  Half the variance (share 0.75) wins those medians but
    halves the covariance's budget: d = 5, n = 1e5, box [995, 1005], 10 seeds, relative
    covariance error 0.076 -> 0.136 at epsilon 0.5 (no box: 0.069); not taken.  Public
    values only.
    """
    return float(min(MAX_MEAN_SHARE, max(MEAN_SHARE, laplace_share(b, n, epsilon, delta))))


def one_shot_share(b: Any, n: int, epsilon: float, delta: float) -> float:
    """The mean's share when the covariance is the one-shot second moment (the public
    CoinPress schedule cannot tighten at this n, see
    :func:`cvxdp.estimation.gaussian_bounded.bounded_release`): the share at which one release
    at the bounds has **half** the per-coordinate Laplace baseline's expected squared noise
    (``sqrt(2)`` times :func:`mean_share`'s for K-norm: 0.75 at d = 5), clamped like it.  That
    covariance's noise scales with the bounds' squared radius over n, so it is coarse whatever
    its share (relative error 17-34 with a box 100 standard deviations wide at n = 1e4), while
    at equal noise the mean only ties a mean-only tool (module doc of :func:`mean_share`)."""
    return float(min(MAX_MEAN_SHARE, max(MEAN_SHARE, laplace_share(
        b, n, epsilon, delta, variance_ratio=0.5))))


def scale_share(b: Any, n: int, epsilon: float, delta: float) -> float:
    """``estimate="mean"``: the share spent on coarse CoinPress rounds (never released) whose
    bound lets the mean take the ``"box+ball"`` route: ``SCALE_SHARE``, or less so that the
    ``"box"`` route keeps at least :func:`laplace_share` (0 when that is the whole budget)."""
    return float(max(0.0, min(SCALE_SHARE, 1.0 - laplace_share(b, n, epsilon, delta))))


def _split(mech: str, par: float) -> tuple[float, float]:
    """Round 0 / round 1 parameters within the mean budget: epsilon shares (K-norm) or
    mu^2 shares (Gaussian, so sigma scales by 1/sqrt(share))."""
    f = MEAN_COARSE_SHARE
    if mech == "knorm":
        return f * par, (1.0 - f) * par
    return par / math.sqrt(f), par / math.sqrt(1.0 - f)


def _box_maha(b: Any, n: int, mech: str, par: float, prec: np.ndarray) -> float:
    """Expected ``noise^T P noise`` of one release at the bounds (P = Sigma^^{-1})."""
    d = len(b.centre)
    if mech == "gaussian":
        return par**2 * float(np.trace(prec))
    if _is_box(b):
        eu = float(np.sum(np.diag(prec) * ((b.hi - b.lo) / n) ** 2)) / 3.0
    else:
        eu = (2.0 * b.radius / n) ** 2 * float(np.trace(prec)) / (d + 2.0)
    return (d + 1.0) * (d + 2.0) / par**2 * eu


def _round0_error(b: Any, n: int, mech: str, par0: float, linv_norm: float,
                  linv_d_norm: float, beta: float) -> float:
    """1 - beta/2 bound on round 0's noise in whitened units: ``r_q ||L^{-1} u||`` with
    ``r_q`` the Gamma(d+1, 1/eps0) quantile and ``||L^{-1} u|| <= ||L^{-1} D||_2 sqrt d`` (box,
    D = diag(w)/n) or ``||L^{-1}||_2 2R/n`` (ball); Gaussian: ``sigma0 ||L^{-1}||_2 (sqrt d +
    sqrt(2 ln(4/beta)))`` (Gordon)."""
    d = len(b.centre)
    if mech == "gaussian":
        return par0 * linv_norm * (math.sqrt(d) + math.sqrt(2.0 * math.log(4.0 / beta)))
    r_q = float(stats.gamma.ppf(1.0 - beta / 2.0, d + 1.0, scale=1.0 / par0))
    if _is_box(b):
        return r_q * linv_d_norm * math.sqrt(d)
    return r_q * linv_norm * 2.0 * b.radius / n


def family_par(b: Any, n: int, epsilon: float, delta: float, mech: str, share: float) -> float:
    """The one-release parameter of family ``mech`` at ``share`` of the budget: eps_m (K-norm)
    or sigma at the bounds' l2 sensitivity (Gaussian, ``mu_m = sqrt(share) mu``)."""
    if mech == "knorm":
        return share * epsilon
    return b.l2_diameter() / n / (math.sqrt(share) * gdp_mu(epsilon=epsilon, delta=delta))


def box_route(b: Any, n: int, mech: str, par: float, cov: np.ndarray) -> dict[str, Any]:
    """``"box"``: one release at the bounds; ``maha2`` its expected squared Mahalanobis noise
    under ``cov`` (released, so post-processing)."""
    return {"route": "box", "maha2": _box_maha(b, n, mech, par, _inv(cov))}


def ball_route(b: Any, n: int, mech: str, par: float, cov: np.ndarray, beta: float
               ) -> dict[str, Any] | None:
    """``"box+ball"`` with mean budget ``par`` (module doc): the Cholesky factor of ``cov``,
    the round parameters, ``R1`` and the expected squared Mahalanobis noise of round 1 under
    ``cov``.  None when ``cov`` is singular (it cannot whiten)."""
    d = len(b.centre)
    try:
        low = np.linalg.cholesky(0.5 * (cov + cov.T))
    except np.linalg.LinAlgError:
        return None
    linv = linalg.solve_triangular(low, np.eye(d), lower=True)
    widths = (b.hi - b.lo) / n if _is_box(b) else np.full(d, 2.0 * b.radius / n)
    p0, p1 = _split(mech, par)
    e0 = _round0_error(b, n, mech, p0, float(np.linalg.norm(linv, 2)),
                       float(np.linalg.norm(linv * widths, 2)), beta) \
        + MEAN_RADIUS_SLACK * math.sqrt(chi2_radius2(d, 1, beta / 2.0) / n)
    r1 = MEAN_RADIUS_SLACK * math.sqrt(chi2_radius2(d, n, beta)) + e0
    sens = 2.0 * r1 / n
    if mech == "knorm":  # E||r u||^2 for u uniform in the ball of radius sens: d/(d+2) sens^2
        e_ball = d * (d + 1.0) * sens**2 / p1**2
    else:  # p1 is sigma at the box's sensitivity; rescale to 2 R1 / n
        p1 = p1 * sens / (b.l2_diameter() / n)
        e_ball = d * p1**2
    return {"route": "box+ball", "maha2": e_ball, "low": low, "par0": p0, "par1": p1,
            "radius": r1, "radius0_error": e0}


def _inv(cov: np.ndarray) -> np.ndarray:
    lam, vec = np.linalg.eigh(0.5 * (cov + cov.T))
    return (vec / np.maximum(lam, 1e-300)) @ vec.T


def release_mean(xc: Any, b: Any, n: int, mech: str, par: float, route: dict[str, Any],
                 rng: np.random.Generator) -> tuple[np.ndarray, list[tuple[str, float, float]]]:
    """The mean of the clipped records ``xc`` by ``route`` (:func:`box_route`,
    :func:`ball_route`).
    Returns the mean and, per release, ``(mechanism, parameter, l2 sensitivity)`` for the
    caller's privacy records (K-norm: parameter eps; Gaussian: sigma)."""
    d = len(b.centre)
    c = b.centre
    ybar = np.asarray((xc - c).mean(axis=0))
    sens_box = b.l2_diameter() / n

    def at_box(p: float) -> np.ndarray:
        return knorm_noise(b, n, p, rng) if mech == "knorm" else p * rng.standard_normal(d)

    if route["route"] == "box":
        return c + ybar + at_box(par), [(mech, par, sens_box)]
    p0, p1, r1, low = route["par0"], route["par1"], route["radius"], route["low"]
    c0 = c + ybar + at_box(p0)
    w = whiten(low, xc)  # a Dask xc stays lazy: whitened block by block on the workers
    centre_w = linalg.solve_triangular(low, c0, lower=True)
    if hasattr(w, "chunks"):
        s = dask_clipped_sum(w, centre_w, r1)
    else:
        s = clipped_sum(w, centre_w, r1)
    if mech == "knorm":
        noise = rng.gamma(d + 1.0, 1.0 / p1) * _unit_ball(d, rng) * (2.0 * r1 / n)
    else:
        noise = p1 * rng.standard_normal(d)
    return low @ (s / n + noise), [(mech, p0, sens_box), (mech, p1, 2.0 * r1 / n)]
