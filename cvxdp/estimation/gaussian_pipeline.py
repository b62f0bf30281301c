"""The step sequences of the unbounded Gaussian learner (Ashtiani & Liaw's §5.1 pipeline).

:func:`standard_steps` runs steps 1-4 (subspace, covariance inside it, whitened mean, mean
orthogonal to it) with the covariance step of the chosen method (``"practical"``,
``"preconditioned"`` or the faithful ``"ashtiani-liaw"``); :func:`robust_steps` runs Cor. 7.5
(Algs 4-5).  Each step sees only its own block of the permuted sample and the earlier released
outputs; :func:`cvxdp.estimation.gaussian_learner.private_gaussian` composes them.

References
----------
Ashtiani & Liaw (2022), §5.1, Algorithms 1-5, Cor. 7.5; Biswas, Dong, Kamath & Ullman 2020
(CoinPress); Brown, Hopkins & Smith 2023 (whitening by a private estimate).
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
from scipy import linalg

from cvxdp.dask_backend import is_dask
from cvxdp.dask_backend.gaussians import dask_populous_mean, dask_subspace, pair_moment
from cvxdp.estimation.gaussian_steps import (
    clipped_mean,
    coarse_schedule,
    coinpress_covariance,
    gaussian_steps_rho,
    log_scale,
    robust_covariance_estimator,
    robust_mean_estimator,
    whiten,
)
from cvxdp.estimation.masking import PAPER, k_min, populous_mean
from cvxdp.estimation.wrapper import EuclideanSpace, private_preconditioner, private_subspace
from cvxdp.privacy.accountant import PrivacyRecord
from cvxdp.privacy.budgets import ApproxDP
from cvxdp.privacy.calibration import calibrate_gaussian

__all__ = ["GaussianSampleWarning", "pairs", "standard_steps", "robust_steps"]


class GaussianSampleWarning(UserWarning):
    """n is below what the stated sample-complexity bound asks for."""


def pairs(x: np.ndarray) -> np.ndarray:
    """Differences of the two halves' rows, scaled to the covariance: ``(x_i - x_(h+i)) /
    sqrt 2`` has mean 0 and the covariance of the sample."""
    h = len(x) // 2
    return (x[:h] - x[h: 2 * h]) / math.sqrt(2.0)


def standard_steps(blocks: dict[str, np.ndarray], epsilon: float, delta: float, beta: float,
                    iterations: int | None, tol: float, c1: float, method: str,
                    gen: np.random.Generator, steps: dict, info: dict) -> tuple:
    """Steps 1-4 of §5.1; returns (U, mean, covariance), None entries on ⊥."""
    d = blocks["subspace"].shape[1]
    if is_dask(blocks["subspace"]):  # Alg. 1's statistics on a worker, the noise here
        u, res = dask_subspace(pairs(blocks["subspace"]), epsilon=epsilon, delta=delta,
                               tol=tol, rng=gen)
    else:
        u, res = private_subspace(pairs(blocks["subspace"]), epsilon=epsilon, delta=delta,
                                  tol=tol, rng=gen)
    steps["subspace"] = (res.record,)
    if u is None:
        info["bottom_step"] = "subspace"
        return None, None, None
    r = u.shape[1]
    if r == 0:  # Sigma = 0: every sample equals mu, which step 4 recovers exactly
        cov_r, mean = np.zeros((0, 0)), np.zeros(d)
    else:
        cov_r, mean = _in_subspace(blocks, u, epsilon, delta, beta, iterations, c1, method, gen,
                                   steps, info)
        if mean is None:
            return u, None, None
    if r < d:  # mean orthogonal to range(Sigma): exact match, Alg. 1 with s = 1
        proj = np.eye(d) - u @ u.T
        items = blocks["perp_mean"] @ proj
        tol_perp = _perp_tolerance(res.record.params["sigma"], tol, d, cov_r, mean,
                                   len(items), beta)
        info["perp_tolerance"] = tol_perp
        if is_dask(items):
            res4 = dask_populous_mean(items, tol_perp, epsilon=epsilon, delta=delta, rng=gen)
        else:
            res4 = populous_mean(items, EuclideanSpace(r=tol_perp), epsilon=epsilon,
                                 delta=delta, rng=gen)
        steps["perp_mean"] = (res4.record,)
        if res4.value is None:
            info["bottom_step"] = "perp_mean"
            return u, None, None
        mean = mean + proj @ res4.value
    return u, mean, u @ cov_r @ u.T


def _in_subspace(blocks: dict[str, np.ndarray], u: np.ndarray, epsilon: float, delta: float,
                 beta: float, iterations: int | None, c1: float, method: str,
                 gen: np.random.Generator, steps: dict, info: dict) -> tuple:
    """Steps 2-3: covariance of U^T X, then the mean whitened by it; (None, None) on ⊥."""
    r = u.shape[1]
    rho = gaussian_steps_rho(epsilon, delta)  # the covariance steps are Gaussian mechanisms only
    pre_low = None  # public whitening matrix (a released estimate's Cholesky factor)
    if method in ("practical", "preconditioned"):
        z_scale = pairs(blocks["scale"]) @ u
        scales, recs = log_scale(z_scale, epsilon=epsilon, delta=delta, rng=gen)
        steps["scale"] = tuple(recs)
        if scales is None:
            info["bottom_step"] = "scale"
            return None, None
        upper = 4.0 * r * np.diag(scales**2)
        if method == "preconditioned":
            pre_low, upper = _precondition(blocks, u, upper, rho, beta, gen, steps, info)
        rounds, _, frac = coarse_schedule(len(blocks["covariance"]) // 2, r, rho)
        rounds = rounds if iterations is None else iterations
    else:
        z_pre = pairs(blocks["preconditioner"]) @ u
        pre, par, res3 = private_preconditioner(z_pre, epsilon=epsilon, delta=delta, beta=beta,
                                                c1=c1, rng=gen)
        info["alg3"] = par
        steps["preconditioner"] = _preconditioner_records(res3, par, "Alg. 3", epsilon, delta)
        if pre is None:
            info["bottom_step"] = "preconditioner"
            return None, None
        upper = 1.1 * pre  # Thm 5.4: dist(Sigma, Sigma_hat) <= 1/10, so Sigma <= 1.1 Sigma_hat
        rounds, frac = 0, 0.5
    z_cov = pairs(blocks["covariance"]) @ u
    if pre_low is not None:  # post-processing: whiten by the released preconditioner
        z_cov = whiten(pre_low, z_cov)
    cov_r, recs, cinfo = coinpress_covariance(z_cov, upper, rho=rho, iterations=rounds,
                                              beta=beta, rng=gen, coarse_fraction=frac,
                                              moment=pair_moment(z_cov))
    if pre_low is not None:
        cov_r = pre_low @ cov_r @ pre_low.T
        cov_r = 0.5 * (cov_r + cov_r.T)
    steps["covariance"] = tuple(recs)
    info["covariance"] = cinfo
    if cinfo["unresolved"]:
        warnings.warn(GaussianSampleWarning(
            f"the private covariance is not resolved in {cinfo['unresolved']} of {r} directions "
            "(relative error > 1/2 there; it over-estimates them): more samples are needed."),
            stacklevel=4)
    low = np.linalg.cholesky(cov_r)
    y = whiten(low, blocks["mean"] @ u)
    ym, recs, _ = clipped_mean(y, epsilon=epsilon, delta=delta, beta=beta, rng=gen)
    steps["mean"] = tuple(recs)
    if ym is None:
        info["bottom_step"] = "mean"
        return None, None
    return cov_r, u @ (low @ ym)


def _precondition(blocks: dict[str, np.ndarray], u: np.ndarray, upper: np.ndarray, rho: float,
                  beta: float, gen: np.random.Generator, steps: dict, info: dict
                  ) -> tuple[np.ndarray, np.ndarray]:
    """Private preconditioning: rounds ``pre1, pre2, ...`` of the practical covariance step,
    each on its own block at the full budget (parallel composition), each on the data whitened
    by the previous round's *released* estimate (post-processing, so the whitening matrix is
    public).  Round 1 starts from the log-scale bound ``upper``; later rounds (and the final
    step) from ``4 I`` in the whitened coordinates (a released estimate that resolves a
    direction is within a factor 2 there and over-estimates an unresolved one).  Each round
    tightens by about ``COARSE_GAIN`` (1e6), so the condition number that the final step sees
    shrinks by that factor per round: what makes the errors in the whitened metric independent
    of the condition number up to about ``1e6^(rounds + 1)``.

    Returns (L, upper for the final step) with ``L L^T`` the last released estimate.

    References
    ----------
    Biswas, Dong, Kamath & Ullman 2020 (CoinPress: iterative refinement of a public bound);
    Brown, Hopkins & Smith, COLT 2023 (affine invariance via whitening by a private estimate);
    Ashtiani & Liaw (2022), §5.1 (preconditioner, then the fine step); McSherry 2009, Thm 4.
    """
    r = u.shape[1]
    low = np.eye(r)
    unresolved = []
    for j, name in enumerate(sorted(k for k in blocks if k.startswith("pre")
                                    and k[3:].isdigit())):
        z = whiten(low, pairs(blocks[name]) @ u)
        rounds = coarse_schedule(int(z.shape[0]), r, rho)[0]
        start = upper if j == 0 else 4.0 * np.eye(r)
        c, recs, cinfo = coinpress_covariance(z, start, rho=rho, iterations=rounds, beta=beta,
                                              rng=gen, moment=pair_moment(z))
        steps[name] = tuple(recs)
        unresolved.append(cinfo["unresolved"])
        est = low @ c @ low.T
        low = np.linalg.cholesky(0.5 * (est + est.T))
    info["precondition_unresolved"] = unresolved  # from released values only
    return low, 4.0 * np.eye(r)


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
    spread = 0.0 if r == 0 else math.sqrt(float(np.linalg.eigvalsh(cov_r)[-1])) * (
        math.sqrt(r) + math.sqrt(2.0 * math.log(2.0 * k / beta)))
    return 2.0 * e_p * spread + 1e-12 * (1.0 + float(np.linalg.norm(mean)))


def _preconditioner_records(res: Any, par: dict, alg: str, epsilon: float, delta: float
                            ) -> tuple[PrivacyRecord, ...]:
    """The preconditioner step's ledger entry; when its blocks are too small it releases only
    the bottom symbol, still charged the step's full budget."""
    if res is not None:
        return (res.record,)
    return (PrivacyRecord("populous_mean", ApproxDP(epsilon, delta),
                          f"{PAPER}, {alg} (⊥: blocks too small)", params=par),)


def robust_steps(blocks, epsilon, delta, beta, contamination, c1, gen, steps, info):
    """Cor. 7.5: Alg. 4 (robust covariance) then Alg. 5 (robust mean in whitened coordinates)."""
    d = blocks["mean"].shape[1]
    a = contamination
    eta4 = a / (c1 * (d + math.sqrt(d * math.log(4 / beta))))  # Alg. 4 (Prop. 6.2)
    pre, par, res4 = private_preconditioner(
        pairs(blocks["preconditioner"]), epsilon=epsilon, delta=delta, beta=beta, c1=c1,
        estimator=robust_covariance_estimator(a), eta=eta4, rng=gen)
    info["alg4"] = par
    steps["preconditioner"] = _preconditioner_records(res4, par, "Alg. 4", epsilon, delta)
    if pre is None:
        info["bottom_step"] = "preconditioner"
        return None, None
    low = np.linalg.cholesky(pre)
    y = linalg.solve_triangular(low, blocks["mean"].T, lower=True).T
    eps_i, dl_i = epsilon / 2, delta / (4 * math.exp(epsilon / 2))
    r5 = 2 * a * math.sqrt(math.log(1 / a))  # our fix of the printed radius (C3 = 1)
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
