"""Private Gaussian learning (cvxdp.estimation.private_gaussian): error vs n and speed.

Compares, on N(mu, Sigma) with ||mu|| = 1e3 and condition number 1e3 (random rotation):

* ``cvxdp``      -- ``private_gaussian`` (practical default; no bounds given);
* ``clipped``    -- the clipped Gaussian mechanism *given the true bounds* (CoinPress-style
                    one-shot baseline: mean clipped to the ball of radius ||mu|| + spread around 0,
                    covariance of pair differences clipped at the chi-square radius times
                    lambda_max; disjoint halves, so (eps, delta) in total like cvxdp);
* ``empirical``  -- the non-private empirical mean and covariance (the exact reference).

Errors: Mahalanobis error of the mean, relative Frobenius and whitened Frobenius error of the
covariance, all against the *true* parameters; time ratio = private time / empirical time.

Usage: ``python benchmarks/bench_gaussians.py [--quick] [--plots]``.
"""

from __future__ import annotations

import argparse
import math
import time
import warnings

import numpy as np

from cvxdp.errors import PrivacySpecError
from cvxdp.estimation.gaussians import GaussianSampleWarning, private_gaussian
from cvxdp.privacy.calibration import calibrate_gaussian


def instance(d: int, n: int, seed: int, cond: float = 1e3, mean_norm: float = 1e3):
    rng = np.random.default_rng(seed)
    q, _ = np.linalg.qr(rng.standard_normal((d, d)))
    lam = np.logspace(0, math.log10(cond), d)
    mu = rng.standard_normal(d)
    mu *= mean_norm / np.linalg.norm(mu)
    x = mu + (rng.standard_normal((n, d)) * np.sqrt(lam)) @ q.T
    return x, mu, (q * lam) @ q.T


def errors(mean, cov, mu, sigma) -> tuple[float, float, float]:
    low = np.linalg.cholesky(sigma)
    maha = float(np.linalg.norm(np.linalg.solve(low, mean - mu)))
    rel_f = float(np.linalg.norm(cov - sigma) / np.linalg.norm(sigma))
    white = np.linalg.solve(low, np.linalg.solve(low, cov).T)
    return maha, rel_f, float(np.linalg.norm(white - np.eye(len(mu))))


def clipped_baseline(x, mu, sigma, eps, delta, rng, beta=0.1):
    """Clipped Gaussian mechanism with the true ||mu|| and lambda_max as its public bounds."""
    n, d = x.shape
    lmax = float(np.linalg.eigvalsh(sigma)[-1])
    xm, xc = x[: n // 2], x[n // 2:]
    spread = math.sqrt(lmax) * (math.sqrt(d) + math.sqrt(2 * math.log(len(xm) / beta)))
    rad = np.linalg.norm(mu) + spread
    nrm = np.linalg.norm(xm, axis=1)
    clipped = xm * np.minimum(1, rad / nrm)[:, None]
    s_m = calibrate_gaussian(epsilon=eps, delta=delta, sensitivity=2 * rad / len(xm))
    mean = clipped.mean(0) + s_m * rng.standard_normal(d)
    h = len(xc) // 2
    z = (xc[:h] - xc[h: 2 * h]) / math.sqrt(2)
    tx = math.log(h / beta)
    t = lmax * (d + 2 * math.sqrt(d * tx) + 2 * tx)
    nz = (z * z).sum(1)
    z = z * np.sqrt(np.minimum(1, t / nz))[:, None]
    s_c = calibrate_gaussian(epsilon=eps, delta=delta, sensitivity=math.sqrt(2) * t / h)
    g = rng.standard_normal((d, d))
    c = z.T @ z / h + s_c * (g + g.T) / 2
    lam, vec = np.linalg.eigh(c)
    return mean, (vec * np.maximum(lam, 0)) @ vec.T


def error_vs_n(quick: bool) -> list[dict]:
    dims = (5,) if quick else (2, 5, 10)
    ns = (50_000, 200_000) if quick else (20_000, 50_000, 200_000, 1_000_000)
    seeds = (0,) if quick else (0, 1, 2)
    rows = []
    for d in dims:
        for n in ns:
            for eps in (0.5, 1.0, 2.0):
                acc = {m: [] for m in ("cvxdp", "clipped", "empirical")}
                times = {m: [] for m in acc}
                bottoms = 0
                for seed in seeds:
                    x, mu, sigma = instance(d, n, seed)
                    t0 = time.perf_counter()
                    emp = (x.mean(0), np.cov(x, rowvar=False))
                    times["empirical"].append(time.perf_counter() - t0)
                    acc["empirical"].append(errors(*emp, mu, sigma))
                    t0 = time.perf_counter()
                    try:
                        with warnings.catch_warnings():
                            warnings.simplefilter("ignore", GaussianSampleWarning)
                            sol = private_gaussian(x, epsilon=eps, delta=1e-6, rng=seed + 100,
                                                   reference=False)
                    except PrivacySpecError:  # n below what the block layout can hold
                        sol = None
                    times["cvxdp"].append(time.perf_counter() - t0)
                    if sol is None or sol.mean is None:
                        bottoms += 1
                    else:
                        acc["cvxdp"].append(errors(sol.mean, sol.covariance, mu, sigma))
                    t0 = time.perf_counter()
                    base = clipped_baseline(x, mu, sigma, eps, 1e-6,
                                            np.random.default_rng(seed + 200))
                    times["clipped"].append(time.perf_counter() - t0)
                    acc["clipped"].append(errors(*base, mu, sigma))
                t_emp = float(np.mean(times["empirical"]))
                for m, errs in acc.items():
                    e = np.array(errs) if errs else np.full((1, 3), np.nan)
                    rows.append({"problem": "gaussian", "d": d, "n": n, "epsilon": eps,
                                 "method": m, "maha_mean": float(np.median(e[:, 0])),
                                 "rel_frob_cov": float(np.median(e[:, 1])),
                                 "white_frob_cov": float(np.median(e[:, 2])),
                                 "bottom": bottoms if m == "cvxdp" else 0,
                                 "time_s": float(np.mean(times[m])),
                                 "time_ratio": float(np.mean(times[m])) / max(t_emp, 1e-9)})
    return rows


def _plot(rows: list[dict]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    d = 5
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.8))
    for key, ax, title in (("maha_mean", axes[0], "mean: Mahalanobis error"),
                           ("white_frob_cov", axes[1], "cov: whitened Frobenius error")):
        for m, style in (("cvxdp", "-o"), ("clipped", "--s"), ("empirical", ":k")):
            for eps in ((0.5, 1.0, 2.0) if m != "empirical" else (1.0,)):
                pts = [(r["n"], r[key]) for r in rows
                       if r["d"] == d and r["method"] == m and r["epsilon"] == eps]
                if pts:
                    lab = m if m == "empirical" else f"{m}, eps={eps}"
                    ax.loglog(*zip(*pts, strict=True), style, label=lab, alpha=0.8)
        ax.set_xlabel("n")
        ax.set_title(f"{title} (d={d}, cond=1e3, |mu|=1e3)", fontsize=10)
    axes[1].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig("docs/gaussians_error_vs_n.png", dpi=90)


def main(quick: bool = True, plots: bool = False) -> list[dict]:
    rows = error_vs_n(quick)
    if plots:
        _plot(rows)
    return rows


def _print(rows: list[dict]) -> None:
    cols = ("d", "n", "epsilon", "method", "maha_mean", "rel_frob_cov", "white_frob_cov",
            "bottom", "time_s", "time_ratio")
    print(" | ".join(cols))
    for r in rows:
        print(" | ".join(f"{r[c]:.3g}" if isinstance(r[c], float) else str(r[c]) for c in cols))


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--plots", action="store_true")
    args = ap.parse_args()
    _print(main(quick=args.quick, plots=args.plots))
