"""Private mean and covariance when the user has public bounds (``private_gaussian(bounds=...)``).

With a public box ``[lo, hi]`` or ball ``{x : ||x - c|| <= R}`` there is no range to find: every
record is clipped into the bounds (record by record, never refused), and the whole budget goes to

* the covariance of the pair differences of the clipped records by CoinPress rounds
  (:func:`cvxdp.estimation.gaussian_steps.coinpress_covariance`) started from the public upper
  bound the bounds give (``diag(w_j^2)`` for a box of widths w, ``4 R^2 I`` for a ball), so
  the bounds' width costs rounds, not accuracy; when the schedule cannot tighten by
  ``ONE_SHOT_GAIN`` (small n, a public test), one release of the second moment about the
  bounds' centre instead, with the Gaussian mechanism for its Frobenius sensitivity
  ``sqrt(2) R^2 / n`` (``||y y^T - y' y'^T||_F^2 = ||y||^4 + ||y'||^4 - 2 (y.y')^2 <= 2 R^4``),
  minus the released mean's outer product, projected onto the PSD cone;
* the mean of the clipped records (:mod:`cvxdp.estimation.bounded_mean`): one K-norm (pure DP,
  K the box or ball of possible changes) or Gaussian release at the bounds, or, when the
  coarse covariance rounds show the bounds are wide in standard deviations, a coarse release
  at the bounds then a release clipped to a whitened ball around it (CoinPress mean rounds);
  the route and the split of the rest of the budget are decided from released values
  (:func:`_covariance_then_mean`).

The releases see the same records, so they compose sequentially: Gaussian-DP composition when
all are Gaussian (Dong, Roth & Su 2022, Cor. 3.3), pure + Gaussian-DP otherwise (basic
composition, Dwork & Roth 2014, Thm 3.16); the accountant checks the total.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from cvxdp.arguments import check_box
from cvxdp.citations import GDP_COMPOSITION, GDP_GAUSSIAN
from cvxdp.dask_backend import is_dask
from cvxdp.dask_backend.gaussians import clip_into_bounds, pair_moment
from cvxdp.errors import PrivacySpecError, UnsupportedProblemError
from cvxdp.estimation.bounded_mean import (
    MEAN_SHARE,
    ball_route,
    box_route,
    family_par,
    knorm_noise,
    mean_plan,
    release_mean,
    scale_share,
)
from cvxdp.estimation.bounded_mean import mean_share as _mean_share
from cvxdp.estimation.bounded_mean import one_shot_share as _one_shot_share
from cvxdp.estimation.gaussian_steps import (
    SampleRequirement,
    coarse_schedule,
    coinpress_covariance,
    required_n,
    solve_block_size,
)
from cvxdp.privacy.accountant import PrivacyRecord
from cvxdp.privacy.budgets import PureDP
from cvxdp.privacy.clipping import clip_rows_l2, clip_to_box
from cvxdp.privacy.gdp import gdp_mu
from cvxdp.privacy.mechanisms import gaussian_record

__all__ = ["Box", "Ball", "as_bounds", "bounded_release", "bounded_error", "MEAN_SHARE"]

KNORM_REFERENCE = ("Hardt & Talwar 2010, 'On the geometry of differential privacy', Thm 4.3 "
                   "(K-norm mechanism, K = the replace-one sensitivity set of the clipped mean)")
GAUSS_REFERENCE = f"{GDP_GAUSSIAN}, mu = D / sigma; {GDP_COMPOSITION}"
# the one-release plan and its sampler (kept under their former names for callers)
_mean_plan, _knorm_noise = mean_plan, knorm_noise
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
        b = Box(*check_box("bounds", bounds, d, error=UnsupportedProblemError,
                           hint=", or {'centre': c, 'radius': R} for a ball"))
    if isinstance(b, Box):
        if b.lo.shape != (d,) or not (np.isfinite(b.lo).all() and np.isfinite(b.hi).all()
                                       and (b.hi > b.lo).all()):
            raise UnsupportedProblemError(f"a box needs finite lo < hi of length d={d}.")
    elif b.centre.shape != (d,) or not (np.isfinite(b.centre).all() and math.isfinite(b.radius)
                                        and b.radius > 0):
        raise UnsupportedProblemError(f"a ball needs a finite centre of length d={d} and a "
                                      "finite radius > 0.")
    return b


def _cov_mu(mech: str, share: float, epsilon: float, delta: float) -> float:
    if mech == "knorm":
        return gdp_mu(epsilon=(1 - share) * epsilon, delta=delta)
    return math.sqrt(1 - share) * gdp_mu(epsilon=epsilon, delta=delta)


def _records(released: list[tuple[str, float, float]], b: Box | Ball) -> list[PrivacyRecord]:
    out = []
    for i, (mech, par, sens) in enumerate(released):
        if mech == "knorm":
            out.append(PrivacyRecord("knorm_mean", PureDP(par), KNORM_REFERENCE,
                                     params={"epsilon": par, "round": i, "sensitivity": sens,
                                             "bounds": type(b).__name__.lower()}))
        else:
            out.append(gaussian_record(sigma=par, sensitivity=sens, mechanism="clipped_mean",
                                       reference=GAUSS_REFERENCE, round=i))
    return out


def bounded_release(x: np.ndarray, b: Box | Ball, *, epsilon: float, delta: float,
                    rng: np.random.Generator, estimate: str = "both",
                    mean_share: float | None = None, beta: float = 0.1
                    ) -> tuple[np.ndarray, np.ndarray | None, list[PrivacyRecord], dict, int]:
    """Clipped mean and covariance with the whole (epsilon, delta) budget (see module doc).

    Parameters
    ----------
    x : (n, d) array, already in the public domain (finite).
    b : Box or Ball (public).
    estimate : {"both", "mean"}
        ``"mean"`` spends everything on the mean and releases no covariance.
    mean_share : float, optional
        Share of the budget for the mean when ``estimate="both"``; default
        :func:`cvxdp.estimation.bounded_mean.mean_share` (public values only).

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
    if estimate == "mean":
        share = 1.0
    else:
        share = _mean_share(b, n, epsilon, delta) if mean_share is None else mean_share
    if is_dask(x):  # chunk-wise on the workers; the reductions below reach the client only
        xc, clipped = clip_into_bounds(x, b)
    else:
        xc, clipped = b.clip(x)
    c = b.centre
    mech, par, e2 = mean_plan(b, n, epsilon, delta, share)
    info = {"bounds": type(b).__name__.lower(), "mean_mechanism": mech,
            "mean_noise_rms": math.sqrt(e2 / d), "mean_share": share, "mean_route": "box"}
    if estimate == "mean":
        mean, recs = _mean_only(xc, b, n, epsilon, delta, beta, rng, info)
        return mean, None, recs, info, clipped
    h = n // 2
    rho = 0.5 * _cov_mu(mech, share, epsilon, delta) ** 2
    rounds, log_gain, frac = coarse_schedule(h, d, rho)
    if log_gain >= math.log(ONE_SHOT_GAIN):
        mean, cov, recs = _covariance_then_mean(xc, b, n, mech, share, frac * rho, rounds,
                                                epsilon, delta, beta, rng, info)
        sigma_c = info["covariance_noise_scale"]
    else:  # too few samples to tighten: one shot on the second moment about the centre
        # (public regime: the covariance is one coarse release whose noise grows with R^2, so
        # the mean takes the share with half the Laplace baseline's noise variance)
        if mean_share is None:
            share = _one_shot_share(b, n, epsilon, delta)
            mech, par, e2 = mean_plan(b, n, epsilon, delta, share)
            rho = 0.5 * _cov_mu(mech, share, epsilon, delta) ** 2
            info.update(mean_mechanism=mech, mean_noise_rms=math.sqrt(e2 / d), mean_share=share)
        mean, rel = release_mean(xc, b, n, mech, par, {"route": "box"}, rng)
        y = xc - c
        sens_c = math.sqrt(2.0) * b.radius**2 / n
        sigma_c = sens_c / math.sqrt(2.0 * rho)
        g = rng.standard_normal((d, d))
        m2 = np.asarray(y.T @ y) / n + sigma_c * 0.5 * (g + g.T)
        crecs = [gaussian_record(sigma=sigma_c, sensitivity=sens_c, mechanism="clipped_moment",
                                 reference=GAUSS_REFERENCE + "; Frobenius sensitivity sqrt(2) "
                                 "R^2 / n of the second moment about the public centre")]
        ym = mean - c
        cov = m2 - np.outer(ym, ym)
        lam, vec = np.linalg.eigh(0.5 * (cov + cov.T))
        cov = (vec * np.maximum(lam, 0.0)) @ vec.T  # PSD projection (post-processing)
        info["covariance_one_shot"] = True
        recs = _records(rel, b) + crecs
    info["covariance_noise_scale"] = sigma_c
    return mean, cov, recs, info, clipped


def _mean_only(xc: Any, b: Box | Ball, n: int, epsilon: float, delta: float, beta: float,
               rng: np.random.Generator, info: dict) -> tuple[np.ndarray, list[PrivacyRecord]]:
    """``estimate="mean"``: coarse CoinPress rounds on :func:`scale_share` of the budget find
    the scale (their bound is never released), then the mean by the route with less expected
    Mahalanobis noise under that bound, with the rest.  When the share is 0 or the public
    schedule cannot tighten by ``ONE_SHOT_GAIN``, the whole budget goes to one release at the
    bounds."""
    d = len(b.centre)
    c = scale_share(b, n, epsilon, delta)
    h = n // 2
    if c > 0:
        s = 1.0 - c
        mech, par, e2 = mean_plan(b, n, epsilon, delta, s)
        rho_c = 0.5 * _cov_mu(mech, s, epsilon, delta) ** 2
        rounds, log_gain, frac = coarse_schedule(h, d, rho_c / 0.5)
        if log_gain >= math.log(ONE_SHOT_GAIN):
            z = (xc[:h] - xc[h: 2 * h]) / math.sqrt(2.0)
            upper = np.diag((b.hi - b.lo) ** 2) if isinstance(b, Box) else \
                4.0 * b.radius**2 * np.eye(d)
            coarse, recs_c, _ = coinpress_covariance(z, upper, rho=rho_c, iterations=rounds,
                                                     beta=beta, rng=rng, moment=pair_moment(z),
                                                     final=False)
            box = box_route(b, n, mech, par, coarse)
            ball = ball_route(b, n, mech, par, coarse, beta)
            route = ball if ball is not None and ball["maha2"] < box["maha2"] else box
            mean, rel = release_mean(xc, b, n, mech, par, route, rng)
            info.update(mean_mechanism=mech, mean_share=s, mean_route=route["route"],
                        mean_noise_rms=math.sqrt(e2 / d), scale_rounds=rounds)
            return mean, _records(rel, b) + recs_c
    mech, par, _ = mean_plan(b, n, epsilon, delta, 1.0)
    mean, rel = release_mean(xc, b, n, mech, par, {"route": "box"}, rng)
    return mean, _records(rel, b)


def _covariance_then_mean(xc: Any, b: Box | Ball, n: int, mech: str, share: float,
                          rho_coarse: float, rounds: int, epsilon: float, delta: float,
                          beta: float, rng: np.random.Generator, info: dict
                          ) -> tuple[np.ndarray, np.ndarray, list[PrivacyRecord]]:
    """CoinPress covariance from the bounds, then the mean, with the mean's route and the
    split of the rest of the budget decided from released values (adaptive composition).

    1. The coarse CoinPress rounds with ``rho_coarse`` (their share of the covariance budget at
       the box route's mean share ``share``, the largest the mean can take) release a coarse
       bound ``A`` of the covariance.
    2. From ``A`` (post-processing): the ``"box+ball"`` route at ``MEAN_SHARE`` against the
       ``"box"`` route at ``share``, by expected Mahalanobis noise under ``A``
       (:mod:`cvxdp.estimation.bounded_mean`); the mean's share ``s`` is that route's.
    3. The final covariance round gets the rest, ``rho = mu_c(s)^2 / 2 - rho_coarse`` with
       ``mu_c(s)`` the covariance budget at mean share ``s`` (:func:`_cov_mu`), which is
       ``>= rho_coarse`` since ``s <= share``; so whatever the route, the Gaussian steps
       compose (Gaussian-DP) to ``mu_c(s)`` and with the mean's ``s`` the total is the
       caller's (epsilon, delta), as at a fixed split.
    4. The mean by that route, ``"box+ball"`` whitened by the final released covariance.
    """
    d = len(b.centre)
    h = n // 2
    z = (xc[:h] - xc[h: 2 * h]) / math.sqrt(2.0)  # zero mean, covariance Sigma (clipped)
    upper = np.diag((b.hi - b.lo) ** 2) if isinstance(b, Box) else 4.0 * b.radius**2 * np.eye(d)
    moment = pair_moment(z)
    coarse, recs_c, _ = coinpress_covariance(z, upper, rho=rho_coarse, iterations=rounds,
                                             beta=beta, rng=rng, moment=moment, final=False)
    par_box = family_par(b, n, epsilon, delta, mech, share)
    par_ball = family_par(b, n, epsilon, delta, mech, min(MEAN_SHARE, share))
    box = box_route(b, n, mech, par_box, coarse)
    ball = ball_route(b, n, mech, par_ball, coarse, beta)
    use_ball = ball is not None and ball["maha2"] < box["maha2"]
    s, par = (min(MEAN_SHARE, share), par_ball) if use_ball else (share, par_box)
    rho_final = 0.5 * _cov_mu(mech, s, epsilon, delta) ** 2 - rho_coarse
    cov, recs_f, cinfo = coinpress_covariance(z, coarse, rho=rho_final, iterations=0, beta=beta,
                                              rng=rng, moment=moment)
    route = ball_route(b, n, mech, par, cov, beta) if use_ball else None
    if route is None:  # the box route, or a final covariance that cannot whiten: one release
        route = box_route(b, n, mech, par, cov)  # at the bounds with the route's budget
    mean, rel = release_mean(xc, b, n, mech, par, route, rng)
    cinfo["coarse_rounds"] = rounds
    info.update(covariance=cinfo, mean_route=route["route"], mean_share=s,
                mean_noise_maha=math.sqrt(route["maha2"]),
                covariance_noise_scale=recs_f[-1].params["sigma"])
    if route["route"] == "box+ball":
        info["mean_radius"] = route["radius"]
    return mean, cov, _records(rel, b) + recs_c + recs_f


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
    noise = info.get("mean_noise_maha")  # expected Mahalanobis noise under cov, if computed
    if noise is None:
        noise = info["mean_noise_rms"] * math.sqrt(float((1 / lam).sum()))
    e_mean = 1.5 * (math.sqrt(d / n) + noise)
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
                       scale: float, estimate: str = "both", mean_share: float | None = None,
                       cov_need: float = 0.0) -> float:
    """Smallest n (to 1%) at which the mean's :func:`bounded_error` under ``Sigma = scale^2 I``
    is ``<= alpha``; for ``estimate="both"`` at least ``cov_need`` (the CoinPress covariance
    step's requirement, passed by :func:`cvxdp.estimation.gaussian_steps.required_n`).
    ``scale`` is a public guess of the smallest standard deviation of the data (the bounds alone
    do not say it)."""
    b = as_bounds(bounds, d)

    def gap(n: float) -> float:
        m = max(int(n), 1)
        share = 1.0 if estimate == "mean" else (
            _mean_share(b, m, epsilon, delta) if mean_share is None else mean_share)
        e2 = mean_plan(b, m, epsilon, delta, share)[2]
        return 1.5 * (math.sqrt(d / m) + math.sqrt(e2) / scale) - alpha

    m = solve_block_size(gap, lo=2.0)
    return float(max(m, cov_need if estimate != "mean" else 0.0))
