"""Private mean and covariance when the user has public bounds (``private_gaussian(bounds=...)``).

With a public box ``[lo, hi]`` or ball ``{x : ||x - c|| <= R}`` there is no range to find: every
record is clipped into the bounds (record by record, never refused), and the whole budget goes to
the two releases

* the mean of the clipped records, with K-norm noise (pure DP, K the box or ball of possible
  changes) or Gaussian noise (l2 sensitivity), whichever has the smaller expected l2 error at
  the given (d, budget, bounds), a public choice;
* the covariance of the pair differences of the clipped records by CoinPress rounds
  (:func:`cvxdp.estimation.gaussian_steps.coinpress_covariance`) started from the public upper
  bound the bounds give (``diag(w_j^2)`` for a box of widths w, ``4 R^2 I`` for a ball), so
  the bounds' width costs rounds, not accuracy; when the schedule cannot tighten by
  ``ONE_SHOT_GAIN`` (small n, a public test), one release of the second moment about the
  bounds' centre instead, with the Gaussian mechanism for its Frobenius sensitivity
  ``sqrt(2) R^2 / n`` (``||y y^T - y' y'^T||_F^2 = ||y||^4 + ||y'||^4 - 2 (y.y')^2 <= 2 R^4``),
  minus the released mean's outer product, projected onto the PSD cone.

Both releases see the same records, so they compose sequentially: Gaussian-DP composition when
both are Gaussian (Dong, Roth & Su 2022, Cor. 3.3), pure + Gaussian-DP otherwise (basic
composition, Dwork & Roth 2014, Thm 3.16); the accountant checks the total.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from cvxdp.errors import PrivacySpecError, UnsupportedProblemError
from cvxdp.estimation.gaussian_steps import (
    SampleRequirement,
    _solve_m,
    coarse_schedule,
    coinpress_covariance,
    required_n,
)
from cvxdp.privacy.accountant import PrivacyRecord
from cvxdp.privacy.budgets import PureDP
from cvxdp.privacy.clipping import clip_rows_l2, clip_to_box
from cvxdp.privacy.gdp import gdp_mu
from cvxdp.privacy.mechanisms import gaussian_record
from cvxdp.scale import is_dask
from cvxdp.scale.gaussians import pair_moment

__all__ = ["Box", "Ball", "as_bounds", "bounded_release", "bounded_error", "MEAN_SHARE"]

KNORM_REFERENCE = ("Hardt & Talwar 2010, 'On the geometry of differential privacy', Thm 4.3 "
                   "(K-norm mechanism, K = the replace-one sensitivity set of the clipped mean)")
GAUSS_REFERENCE = "Dong, Roth & Su 2022, Cor. 3.3 (Gaussian mechanism, mu = D / sigma)"
#: Share of the budget (of epsilon for a Laplace mean, of mu^2 for a Gaussian one) for the mean.
MEAN_SHARE = 0.35
#: Below this reachable tightening (public, from the CoinPress schedule) the covariance is one
#: clipped second moment instead of CoinPress rounds.
ONE_SHOT_GAIN = 4.0


@dataclass(frozen=True)
class Box:
    """Public box ``lo <= x <= hi`` (coordinate-wise)."""

    lo: np.ndarray
    hi: np.ndarray

    @property
    def centre(self) -> np.ndarray:
        return 0.5 * (self.lo + self.hi)

    @property
    def radius(self) -> float:  # max ||x - centre|| over the box
        return float(np.linalg.norm(0.5 * (self.hi - self.lo)))

    def l1_diameter(self) -> float:
        return float(np.sum(self.hi - self.lo))

    def l2_diameter(self) -> float:
        return 2.0 * self.radius

    def clip(self, x: np.ndarray) -> tuple[np.ndarray, int]:
        return clip_to_box(x, self.lo, self.hi)


@dataclass(frozen=True)
class Ball:
    """Public ball ``||x - centre||_2 <= radius``."""

    centre: np.ndarray
    radius: float

    def l1_diameter(self) -> float:
        return 2.0 * self.radius * math.sqrt(len(self.centre))

    def l2_diameter(self) -> float:
        return 2.0 * self.radius

    def clip(self, x: np.ndarray) -> tuple[np.ndarray, int]:
        y, count = clip_rows_l2(x - self.centre, self.radius)
        return self.centre + y, count


def as_bounds(bounds: Any, d: int) -> Box | Ball:
    """Validate the public ``bounds``: ``(lo, hi)`` (scalars or (d,) arrays) for a box,
    ``{"centre": c, "radius": R}`` (or ``"center"``) for a ball, or a :class:`Box` / :class:`Ball`.
    Public arguments only; raises :class:`UnsupportedProblemError` with the fix."""
    if isinstance(bounds, Box | Ball):
        b = bounds
    elif isinstance(bounds, dict):
        c = bounds.get("centre", bounds.get("center"))
        if c is None or "radius" not in bounds:
            raise UnsupportedProblemError("a ball is given as {'centre': c, 'radius': R}.")
        b = Ball(np.broadcast_to(np.asarray(c, float), (d,)).copy(), float(bounds["radius"]))
    else:
        try:
            lo, hi = bounds
        except (TypeError, ValueError):
            raise UnsupportedProblemError(
                "bounds must be (lo, hi) for a box or {'centre': c, 'radius': R} for a ball, "
                f"got {type(bounds).__name__}.") from None
        b = Box(np.broadcast_to(np.asarray(lo, float), (d,)).copy(),
                np.broadcast_to(np.asarray(hi, float), (d,)).copy())
    if isinstance(b, Box):
        if b.lo.shape != (d,) or not (np.isfinite(b.lo).all() and np.isfinite(b.hi).all()
                                       and (b.hi > b.lo).all()):
            raise UnsupportedProblemError(f"a box needs finite lo < hi of length d={d}.")
    elif b.centre.shape != (d,) or not (np.isfinite(b.centre).all() and math.isfinite(b.radius)
                                        and b.radius > 0):
        raise UnsupportedProblemError(f"a ball needs a finite centre of length d={d} and a "
                                      "finite radius > 0.")
    return b


def _mean_plan(b: Box | Ball, n: int, epsilon: float, delta: float, share: float
               ) -> tuple[str, float, float]:
    """(mechanism, its parameter, expected ||noise||^2) of the mean, a public choice.

    * ``"knorm"``: the K-norm mechanism (Hardt & Talwar 2010, Thm 4.3) at ``share * epsilon``,
      pure DP, with K the set of possible changes of the clipped mean under replace-one: the box
      ``{|z_j| <= (hi_j - lo_j)/n}`` or the ball of radius ``2R/n``.  Noise ``r u`` with
      ``r ~ Gamma(d + 1, 1/eps_m)`` and ``u`` uniform in K, so ``E||noise||^2 =
      (d+1)(d+2)/eps_m^2 E_u||u||^2`` with ``E_u||u||^2 = sum w_j^2 / 3`` (box) or
      ``D^2 d/(d+2)`` (ball).  It beats per-coordinate Laplace at epsilon/d (what
      diffprivlib's ``mean`` does) by ``sqrt(6 d^2 / ((d+1)(d+2)))``, 1.9x at d = 5.
    * ``"gaussian"``: l2 sensitivity the l2 diameter over n, ``mu_m = sqrt(share) mu``;
      ``E||noise||^2 = d sigma^2``.  Wins only at large d (about d >= 50 at epsilon = 1).

    The parameter is eps_m (knorm) or sigma (gaussian).  The covariance then gets
    ``gdp_mu((1 - share) epsilon, delta)`` or ``sqrt(1 - share) mu`` (:func:`bounded_release`).
    """
    d = len(b.centre)
    eps_m = share * epsilon
    if isinstance(b, Box):
        u2 = float(np.sum(((b.hi - b.lo) / n) ** 2)) / 3.0
    else:
        u2 = (2.0 * b.radius / n) ** 2 * d / (d + 2.0)
    e_knorm = (d + 1.0) * (d + 2.0) / eps_m**2 * u2
    mu_m = math.sqrt(share) * gdp_mu(epsilon=epsilon, delta=delta)
    sigma = b.l2_diameter() / n / mu_m
    if e_knorm <= d * sigma**2:
        return "knorm", eps_m, e_knorm
    return "gaussian", sigma, d * sigma**2


def _knorm_noise(b: Box | Ball, n: int, eps_m: float, rng: np.random.Generator) -> np.ndarray:
    """``r u``, ``r ~ Gamma(d+1, 1/eps_m)``, ``u`` uniform in K (Hardt & Talwar 2010, §4)."""
    d = len(b.centre)
    r = rng.gamma(d + 1.0, 1.0 / eps_m)
    if isinstance(b, Box):
        u = rng.uniform(-1.0, 1.0, size=d) * (b.hi - b.lo) / n
    else:
        g = rng.standard_normal(d)
        u = g / np.linalg.norm(g) * rng.uniform() ** (1.0 / d) * (2.0 * b.radius / n)
    return r * u


def _cov_mu(mech: str, share: float, epsilon: float, delta: float) -> float:
    if mech == "knorm":
        return gdp_mu(epsilon=(1 - share) * epsilon, delta=delta)
    return math.sqrt(1 - share) * gdp_mu(epsilon=epsilon, delta=delta)


def bounded_release(x: np.ndarray, b: Box | Ball, *, epsilon: float, delta: float,
                    rng: np.random.Generator, estimate: str = "both",
                    mean_share: float = MEAN_SHARE, beta: float = 0.1
                    ) -> tuple[np.ndarray, np.ndarray | None, list[PrivacyRecord], dict, int]:
    """Clipped mean and covariance with the whole (epsilon, delta) budget (see module doc).

    Parameters
    ----------
    x : (n, d) array, already in the public domain (finite).
    b : Box or Ball (public).
    estimate : {"both", "mean"}
        ``"mean"`` spends everything on the mean and releases no covariance.
    mean_share : float
        Share of the budget for the mean when ``estimate="both"``.

    Returns
    -------
    mean, covariance (None for ``estimate="mean"``), records, info (public), clipped count
    (PRIVATE: released only through a noisy count).

    References
    ----------
    Dwork, McSherry, Nissim & Smith 2006 (Laplace); Dong, Roth & Su 2022, Cor. 3.3 (Gaussian DP
    and its composition); Dwork & Roth 2014, Thm 3.16; Hardt & Talwar 2010, Thm 4.3; Biswas,
    Dong, Kamath & Ullman 2020 (CoinPress, started from the public bound).
    """
    n, d = x.shape
    share = 1.0 if estimate == "mean" else mean_share
    if is_dask(x):  # chunk-wise on the workers; the reductions below reach the client only
        from cvxdp.scale.gaussians import clip_into_bounds
        xc, clipped = clip_into_bounds(x, b)
    else:
        xc, clipped = b.clip(x)
    c = b.centre
    mech, par, e2 = _mean_plan(b, n, epsilon, delta, share)
    y = xc - c
    if mech == "knorm":
        noise = _knorm_noise(b, n, par, rng)
        recs = [PrivacyRecord("knorm_mean", PureDP(par), KNORM_REFERENCE,
                              params={"epsilon": par, "bounds": type(b).__name__.lower()})]
    else:
        noise = par * rng.standard_normal(d)
        recs = [gaussian_record(sigma=par, sensitivity=b.l2_diameter() / n,
                                mechanism="clipped_mean", reference=GAUSS_REFERENCE)]
    ym = np.asarray(y.mean(axis=0)) + noise
    info = {"bounds": type(b).__name__.lower(), "mean_mechanism": mech,
            "mean_noise_rms": math.sqrt(e2 / d), "mean_share": share}
    if estimate == "mean":
        return c + ym, None, recs, info, clipped
    h = n // 2
    rho = 0.5 * _cov_mu(mech, share, epsilon, delta) ** 2
    rounds, log_gain, _ = coarse_schedule(h, d, rho)
    if log_gain >= math.log(ONE_SHOT_GAIN):
        z = (xc[:h] - xc[h: 2 * h]) / math.sqrt(2.0)  # zero mean, covariance Sigma (clipped)
        upper = np.diag((b.hi - b.lo) ** 2) if isinstance(b, Box) else \
            4.0 * b.radius**2 * np.eye(d)
        cov, crecs, cinfo = coinpress_covariance(z, upper, rho=rho, iterations=rounds,
                                                 beta=beta, rng=rng, moment=pair_moment(z))
        info["covariance"] = cinfo
        sigma_c = crecs[-1].params["sigma"]
    else:  # too few samples to tighten: one shot on the second moment about the centre
        sens_c = math.sqrt(2.0) * b.radius**2 / n
        sigma_c = sens_c / math.sqrt(2.0 * rho)
        g = rng.standard_normal((d, d))
        m2 = np.asarray(y.T @ y) / n + sigma_c * 0.5 * (g + g.T)
        crecs = [gaussian_record(sigma=sigma_c, sensitivity=sens_c, mechanism="clipped_moment",
                                 reference=GAUSS_REFERENCE + "; Frobenius sensitivity sqrt(2) "
                                 "R^2 / n of the second moment about the public centre")]
        cov = m2 - np.outer(ym, ym)
        lam, vec = np.linalg.eigh(0.5 * (cov + cov.T))
        cov = (vec * np.maximum(lam, 0.0)) @ vec.T  # PSD projection (post-processing)
        info["covariance_one_shot"] = True
    recs.extend(crecs)
    info["covariance_noise_scale"] = sigma_c
    return c + ym, cov, recs, info, clipped


def bounded_error(n: int, b: Box | Ball, cov: np.ndarray, info: dict) -> tuple[float, float]:
    """Expected (Mahalanobis mean, whitened Frobenius covariance) errors, 1.5 x (sampling +
    noise): ``sqrt(d/n) + s sqrt(tr cov^-1)`` with ``s`` the mean noise's root mean square per
    coordinate, and ``sqrt(d(d+1)/(n/2)) + sigma_f sqrt(d(d+1)/2)`` with ``sigma_f`` the final
    CoinPress round's noise in the coordinates whitened by its (public) bound.  A function of
    public values and of ``cov`` (released or user-given), so post-processing; inf when ``cov``
    is singular or a direction is unresolved."""
    d = len(cov)
    lam = np.linalg.eigvalsh(cov)
    cinfo = info.get("covariance", {})
    if lam[0] <= 0 or cinfo.get("unresolved", 0):
        return math.inf, math.inf
    e_mean = 1.5 * (math.sqrt(d / n) + info["mean_noise_rms"] * math.sqrt(float((1 / lam).sum())))
    sc = info.get("covariance_noise_scale", 0.0)
    if info.get("covariance_one_shot"):  # absolute noise, whitened by cov
        e_cov = 1.5 * (math.sqrt(d * (d + 1) / n)
                       + sc * math.sqrt(0.5 * (float((1 / lam).sum()) ** 2
                                               + float((1 / lam**2).sum()))))
    else:
        e_cov = 1.5 * (math.sqrt(d * (d + 1) / (n / 2)) + sc * math.sqrt(d * (d + 1) / 2))
    return e_mean, e_cov


def bounds_margin_ok(b: Box | Ball, mean: np.ndarray, cov: np.ndarray, z: float = 3.0) -> bool:
    """Whether the released (mean, cov) puts the bounds at least ``z`` standard deviations
    away (per coordinate for a box, ``sqrt(lambda_max) (sqrt d + z)`` for a ball), so clipping
    bias is small.  Post-processing of released values."""
    if isinstance(b, Box):
        sd = np.sqrt(np.maximum(np.diag(cov), 0.0))
        return bool(np.all(mean - z * sd >= b.lo) and np.all(mean + z * sd <= b.hi))
    lmax = float(np.linalg.eigvalsh(cov)[-1])
    return float(np.linalg.norm(mean - b.centre)) + math.sqrt(max(lmax, 0.0)) * (
        math.sqrt(len(mean)) + z) <= b.radius


def bounded_requirement(d: int, *, epsilon: float, delta: float, alpha: float = 0.2,
                        beta: float = 0.1, bounds: Any = None, scale: float | None = None,
                        estimate: str = "both") -> SampleRequirement:
    """:func:`cvxdp.estimation.gaussians.required_n` for ``method="bounded"``: the mean's
    :func:`bounded_required_n`, with the practical CoinPress covariance step's requirement
    (:func:`cvxdp.estimation.gaussian_steps.required_n`) unless only the mean is estimated."""
    if bounds is None or scale is None:
        raise PrivacySpecError("required_n(method='bounded') needs the public bounds= and "
                               "scale= (a guess of the smallest standard deviation).")
    cov_need = 0.0
    if estimate != "mean":
        prac = required_n(d, epsilon=epsilon, delta=delta, alpha=alpha, beta=beta)
        cov_need = prac.steps["covariance"]
    tot = bounded_required_n(d, bounds, epsilon=epsilon, delta=delta, alpha=alpha,
                             scale=scale, estimate=estimate, cov_need=cov_need)
    return SampleRequirement(tot, {"bounded": tot}, alpha, beta,
                             "public bounds: K-norm / Gaussian clipped mean + CoinPress "
                             "covariance from the bounds")


def bounded_required_n(d: int, bounds: Any, *, epsilon: float, delta: float, alpha: float,
                       scale: float, estimate: str = "both", mean_share: float = MEAN_SHARE,
                       cov_need: float = 0.0) -> float:
    """Smallest n (to 1%) at which the mean's :func:`bounded_error` under ``Sigma = scale^2 I``
    is ``<= alpha``; for ``estimate="both"`` at least ``cov_need`` (the CoinPress covariance
    step's requirement, passed by :func:`cvxdp.estimation.gaussian_steps.required_n`).
    ``scale`` is a public guess of the smallest standard deviation of the data (the bounds alone
    do not say it)."""
    b = as_bounds(bounds, d)
    share = 1.0 if estimate == "mean" else mean_share

    def gap(n: float) -> float:
        m = max(int(n), 1)
        e2 = _mean_plan(b, m, epsilon, delta, share)[2]
        return 1.5 * (math.sqrt(d / m) + math.sqrt(e2) / scale) - alpha

    m = _solve_m(gap, lo=2.0)
    return float(max(m, cov_need if estimate != "mean" else 0.0))
