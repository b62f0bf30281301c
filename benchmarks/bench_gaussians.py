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

Issue 26 additions:

* ``--grid``: default (``method="auto"``, private preconditioning) vs the old default
  (``method="practical"``) over d x condition number x n x seeds (``--dims``, ``--ns``,
  ``--seeds``, ``--conds``, ``--methods``), median and [first, third quartile] of the errors
  and the time; ``--bhs23``: the same rows for ``benchmarks/bhs23.py``;
* ``--peers``: the peer table of issue 26 (d = 5, N(1000, I), 10 seeds): cvxdp without
  bounds, cvxdp with ``bounds=`` (mean only and mean + covariance), and our own
  re-implementations of diffprivlib 0.6's ``mean(axis=0)`` (per coordinate LaplaceTruncated at
  epsilon/d, sensitivity (hi - lo)/n, output clamped to the box) and ``var(axis=0)``
  (per coordinate Laplace at epsilon/d, sensitivity (hi - lo)^2/n, clamped to [0, (hi-lo)^2]),
  and of OpenDP's bounded mean with the vector Laplace (l1 sensitivity d (hi - lo)/n, not
  clamped).  diffprivlib / OpenDP are *not* dependencies: the peers are our code.
  ``benchmarks/bench_gaussian_peers.py`` runs the same table with the real diffprivlib 0.6.6
  and OpenDP 0.16 (benchmark-only installs).

Usage: ``python benchmarks/bench_gaussians.py [--quick] [--plots] [--grid] [--peers]``.
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


def _stats(v: list[float]) -> str:
    """Median [first quartile, third quartile] over the seeds."""
    if not v:
        return "-"
    q1, med, q3 = np.percentile(v, [25, 50, 75])
    return f"{med:.3g} [{q1:.2g}, {q3:.2g}]"


def grid(dims=(4, 10, 20), conds=(1.0, 1e5, 1e10), ns=(50_000, 200_000, 1_000_000),
         seeds=5, eps=1.0, delta=1e-6, methods=("auto", "practical")) -> list[dict]:
    """Default (auto) vs old default (practical): errors and time over the issue-26 grid."""
    rows = []
    for d in dims:
        for n in ns:
            for cond in conds:
                for method in methods:
                    e, t, st = [], [], []
                    for seed in range(seeds):
                        x, mu, sigma = instance(d, n, seed, cond=cond)
                        t0 = time.perf_counter()
                        try:
                            with warnings.catch_warnings():
                                warnings.simplefilter("ignore", GaussianSampleWarning)
                                sol = private_gaussian(x, epsilon=eps, delta=delta,
                                                       rng=seed + 100, method=method)
                        except PrivacySpecError:
                            sol = None
                        t.append(time.perf_counter() - t0)
                        if sol is not None and sol.mean is not None:
                            e.append(errors(sol.mean, sol.covariance, mu, sigma))
                            st.append(sol.status)
                        else:
                            st.append("none")
                    a = np.array(e) if e else np.zeros((0, 3))
                    if method == "auto" and sol is not None:
                        method = f"auto -> {sol.info['method']}"
                    row = {"d": d, "n": n, "cond": cond, "method": method,
                           "maha": _stats(list(a[:, 0])), "rel_frob": _stats(list(a[:, 1])),
                           "white_frob": _stats(list(a[:, 2])), "time_s": _stats(t),
                           "ok_status": sum(s == "optimal_inaccurate" for s in st),
                           "seeds": seeds}
                    rows.append(row)
                    print(" | ".join(str(v) for v in row.values()), flush=True)
    return rows


def bhs_compare(dims=(4, 10), ns=(200_000,), conds=(1.0, 1e10), seeds=1, eps=1.0,
                delta=1e-6) -> list[dict]:
    """Our BHS23 re-implementation (benchmarks/bhs23.py; mean and covariance each at
    (eps, delta), i.e. twice cvxdp's budget) on the grid's instances, same row format."""
    from bhs23 import bhs23

    rows = []
    for d in dims:
        for n in ns:
            for cond in conds:
                e, t, fails = [], [], 0
                for seed in range(seeds):
                    x, mu, sigma = instance(d, n, seed, cond=cond)
                    t0 = time.perf_counter()
                    m, c = bhs23(x, eps, delta, np.random.default_rng(seed + 100))
                    t.append(time.perf_counter() - t0)
                    if m is None or c is None:
                        fails += 1
                    else:
                        e.append(errors(m, c, mu, sigma))
                a = np.array(e) if e else np.zeros((0, 3))
                row = {"d": d, "n": n, "cond": cond, "method": "bhs23 (2 eps)",
                       "maha": _stats(list(a[:, 0])), "rel_frob": _stats(list(a[:, 1])),
                       "white_frob": _stats(list(a[:, 2])), "time_s": _stats(t),
                       "fails": fails, "seeds": seeds}
                rows.append(row)
                print(" | ".join(str(v) for v in row.values()), flush=True)
    return rows


def _peer_mean(x, lo, hi, eps, rng, clamp):
    n, d = x.shape
    m = np.clip(x, lo, hi).mean(0) + rng.laplace(0.0, d * (hi - lo) / n / eps, size=d)
    return np.clip(m, lo, hi) if clamp else m


def _peer_var(x, lo, hi, eps, rng):
    n, d = x.shape
    v = np.clip(x, lo, hi).var(0) + rng.laplace(0.0, d * (hi - lo) ** 2 / n / eps, size=d)
    return np.clip(v, 0.0, (hi - lo) ** 2)


def peers(seeds=10, d=5) -> list[dict]:
    """Issue 26's peer table, re-run with the current code (median Mahalanobis mean error;
    relative Frobenius covariance error at n = 1e5)."""
    rows = []
    for n, eps in ((10_000, 0.5), (10_000, 1.0), (100_000, 0.5), (100_000, 1.0),
                   (100_000, 4.0)):
        res: dict[str, list] = {}
        for seed in range(seeds):
            x = np.random.default_rng(seed).standard_normal((n, d)) + 1000.0
            g = np.random.default_rng(seed + 500)

            def add(key, val, res=res):
                res.setdefault(key, []).append(val)
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", GaussianSampleWarning)
                    sol = private_gaussian(x, epsilon=eps, delta=1e-6, rng=seed + 100)
                add("cvxdp no bounds", np.nan if sol.mean is None
                    else np.linalg.norm(sol.mean - 1000.0))
                if sol.covariance is not None:
                    add("cov cvxdp no bounds",
                        np.linalg.norm(sol.covariance - np.eye(d)) / math.sqrt(d))
            except PrivacySpecError:
                add("cvxdp no bounds", np.nan)
            for lo, hi in ((950.0, 1050.0), (995.0, 1005.0)):
                box = f"[{lo:g}, {hi:g}]"
                sm = private_gaussian(x, epsilon=eps, delta=1e-6, rng=seed + 200,
                                      bounds=(lo, hi), estimate="mean")
                add(f"cvxdp bounds={box}, mean only", np.linalg.norm(sm.mean - 1000.0))
                sb = private_gaussian(x, epsilon=eps, delta=1e-6, rng=seed + 300,
                                      bounds=(lo, hi))
                add(f"cvxdp bounds={box}, mean+cov", np.linalg.norm(sb.mean - 1000.0))
                add(f"cov cvxdp bounds={box}",
                    np.linalg.norm(sb.covariance - np.eye(d)) / math.sqrt(d))
                add(f"diffprivlib-style {box}",
                    np.linalg.norm(_peer_mean(x, lo, hi, eps, g, True) - 1000.0))
                add(f"cov diffprivlib-style var {box} (diagonal only)",
                    np.linalg.norm(_peer_var(x, lo, hi, eps, g) - 1.0) / math.sqrt(d))
            add("OpenDP-style Laplace [950, 1050]",
                np.linalg.norm(_peer_mean(x, 950.0, 1050.0, eps, g, False) - 1000.0))
        for key, v in res.items():
            ok = [u for u in v if np.isfinite(u)]
            rows.append({"n": n, "epsilon": eps, "method": key,
                         "median": float(np.median(ok)) if ok else math.nan,
                         "released": f"{len(ok)}/{len(v)}"})
            print(n, eps, key, f"{rows[-1]['median']:.3g}", rows[-1]["released"], flush=True)
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
    ap.add_argument("--grid", action="store_true")
    ap.add_argument("--peers", action="store_true")
    ap.add_argument("--bhs23", action="store_true")
    ap.add_argument("--dims", default="4,10,20")
    ap.add_argument("--ns", default="50000,200000,1000000")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--conds", default="1,1e5,1e10")
    ap.add_argument("--methods", default="auto,practical")
    args = ap.parse_args()
    if args.bhs23:
        import sys
        from pathlib import Path

        sys.path.insert(0, str(Path(__file__).parent))
        bhs_compare(dims=tuple(int(v) for v in args.dims.split(",")),
                    ns=tuple(int(float(v)) for v in args.ns.split(",")), seeds=args.seeds,
                    conds=tuple(float(v) for v in args.conds.split(",")))
    elif args.peers:
        peers()
    elif args.grid:
        grid(dims=tuple(int(v) for v in args.dims.split(",")),
             ns=tuple(int(float(v)) for v in args.ns.split(",")), seeds=args.seeds,
             conds=tuple(float(v) for v in args.conds.split(",")),
             methods=tuple(args.methods.split(",")))
    else:
        _print(main(quick=args.quick, plots=args.plots))
