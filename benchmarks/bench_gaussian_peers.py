"""Issue 26's peer table with the real peers: diffprivlib and OpenDP (benchmark-only).

d = 5, X ~ N(1000 * 1, I), delta = 1e-6 for cvxdp (the peers are pure epsilon-DP), 10 seeds.
Mean: median [IQR] of the Mahalanobis (here Euclidean) error against the TRUE mean, and, to
see what each mechanism adds beyond the sampling error every estimator shares (the same data per
seed for every column), the error against the SAMPLE mean: mean +- standard error over seeds.
Covariance: relative Frobenius error against the true covariance I (diffprivlib's ``var``
estimates the diagonal only, an easier task).

* diffprivlib 0.6.6 ``tools.mean(x, epsilon, bounds=(lo, hi), axis=0)`` (epsilon / d per
  coordinate, LaplaceTruncated, clamped) and ``tools.var(..., axis=0)``;
* OpenDP 0.16 ``make_mean`` on a sized, bounded vector domain chained with ``then_laplace``, one
  per coordinate at epsilon / d (basic composition), the scale found by
  ``binary_search_param`` at ``d_in = 2`` (replace one = symmetric distance 2 with n public).

diffprivlib and opendp are NOT dependencies of cvxdp:
``pip install diffprivlib 'scikit-learn<1.9' opendp`` (the OpenDP column is left out when
opendp is not installed).

Usage: ``python benchmarks/bench_gaussian_peers.py [--seeds 10]``.
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import warnings

import numpy as np

from cvxdp.errors import PrivacySpecError
from cvxdp.estimation.gaussians import GaussianSampleWarning, private_gaussian

HAVE_OPENDP = importlib.util.find_spec("opendp") is not None
SETTINGS = ((10_000, 0.5), (10_000, 1.0), (100_000, 0.5), (100_000, 1.0), (100_000, 4.0))
BOXES = ((950.0, 1050.0), (995.0, 1005.0))


def diffprivlib_mean_var(x, lo, hi, eps, seed):
    from diffprivlib.tools import mean, var

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = mean(x, epsilon=eps, bounds=(lo, hi), axis=0, random_state=seed)
        v = var(x, epsilon=eps, bounds=(lo, hi), axis=0, random_state=seed + 1)
    return np.asarray(m), np.asarray(v)


def opendp_mean(x, lo, hi, eps):
    import opendp.prelude as dp

    dp.enable_features("contrib")
    n, d = x.shape
    t = dp.t.make_mean(dp.vector_domain(dp.atom_domain(bounds=(lo, hi), nan=False), size=n),
                       dp.symmetric_distance())
    scale = dp.binary_search_param(lambda s: t >> dp.m.then_laplace(scale=s), d_in=2,
                                   d_out=eps / d)
    meas = t >> dp.m.then_laplace(scale=scale)
    xc = np.clip(x, lo, hi)
    return np.array([meas(list(map(float, xc[:, j]))) for j in range(d)])


def _fmt(v):
    ok = [u for u in v if np.isfinite(u)]
    if not ok:
        return "-"
    q1, med, q3 = np.percentile(ok, [25, 50, 75])
    rel = "" if len(ok) == len(v) else f" ({len(ok)}/{len(v)} released)"
    return f"{med:.3g} [{q1:.2g}, {q3:.2g}]{rel}"


def run(seeds: int = 10, d: int = 5) -> dict:
    res: dict = {}
    for n, eps in SETTINGS:
        for seed in range(seeds):
            x = np.random.default_rng(seed).standard_normal((n, d)) + 1000.0
            xbar = x.mean(axis=0)

            def add(key, val, n=n, eps=eps):
                res.setdefault((n, eps), {}).setdefault(key, []).append(float(val))

            def add_mean(label, est, xbar=xbar):
                add("mean|" + label, np.linalg.norm(est - 1e3))
                add("noise|" + label, np.linalg.norm(est - xbar))

            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", GaussianSampleWarning)
                    sol = private_gaussian(x, epsilon=eps, delta=1e-6, rng=seed + 100)
                bad = sol.mean is None
                add_mean("cvxdp, no bounds", np.full(d, np.nan) if bad else sol.mean)
                add("cov|cvxdp, no bounds", np.nan if bad else
                    np.linalg.norm(sol.covariance - np.eye(d)) / math.sqrt(d))
                add("status|cvxdp, no bounds", sol.status == "optimal_inaccurate")
            except PrivacySpecError:
                add_mean("cvxdp, no bounds", np.full(d, np.nan))
                add("cov|cvxdp, no bounds", np.nan)
            for lo, hi in BOXES:
                box = f"[{lo:g}, {hi:g}]"
                sm = private_gaussian(x, epsilon=eps, delta=1e-6, rng=seed + 200,
                                      bounds=(lo, hi), estimate="mean")
                add_mean(f"cvxdp bounds={box}, mean only", sm.mean)
                sb = private_gaussian(x, epsilon=eps, delta=1e-6, rng=seed + 300,
                                      bounds=(lo, hi))
                add_mean(f"cvxdp bounds={box}, mean+cov", sb.mean)
                add(f"cov|cvxdp bounds={box}",
                    np.linalg.norm(sb.covariance - np.eye(d)) / math.sqrt(d))
                m, v = diffprivlib_mean_var(x, lo, hi, eps, seed + 500)
                add_mean(f"diffprivlib {box}", m)
                add(f"cov|diffprivlib var {box} (diagonal only)",
                    np.linalg.norm(v - 1.0) / math.sqrt(d))
                if HAVE_OPENDP:
                    add_mean(f"OpenDP Laplace {box}", opendp_mean(x, lo, hi, eps))
            print(n, eps, seed, flush=True)
    return res


def _fmt_mean(v):
    ok = np.array([u for u in v if np.isfinite(u)])
    if ok.size < 2:
        return "-"
    return f"{ok.mean():.3g} ± {ok.std(ddof=1) / math.sqrt(ok.size):.1g}"


def table(res: dict, kind: str) -> str:
    keys = [k for k in next(iter(res.values())) if k.startswith(kind + "|")]
    lines = ["| n, ε | " + " | ".join(k.split("|", 1)[1] for k in keys) + " |",
             "|---|" + "---|" * len(keys)]
    fmt = _fmt_mean if kind == "noise" else _fmt
    for (n, eps), row in res.items():
        lines.append(f"| {n:.0e}, {eps:g} | " + " | ".join(fmt(row[k]) for k in keys) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=10)
    a = ap.parse_args()
    out = run(a.seeds)
    print(table(out, "mean"))
    print()
    print(table(out, "noise"))
    print()
    print(table(out, "cov"))
    for (n, eps), row in out.items():
        st = row.get("status|cvxdp, no bounds", [])
        print(f"n={n:.0e} eps={eps:g}: no-bounds success status {int(sum(st))}/{len(st)}")
