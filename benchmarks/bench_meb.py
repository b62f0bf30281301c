"""Benchmark of the DP minimum enclosing ball (``cvxdp.geometry.meb``).

Three tables (``main(quick)`` returns all rows; ``python benchmarks/bench_meb.py [--quick]
[--plots]`` prints them):

1. ``sec6``: §6 of the paper (``001_a326031cb50d1cab.txt``) -- Alg. 4 alone with the experiments'
   step gamma^2/8, ``r = r_opt`` (non-private, as the authors did), ``theta0 = 0``, the three
   synthetic datasets in [-5, 5]^10, rho in {0.1..0.9} at gamma = 0.2 and gamma in {0.1..0.5} at
   rho = 0.3, stopping rules (i) ``||theta^t - theta_opt|| <= gamma r_opt``, (ii) too few uncovered,
   (iii) t > 2500; ``r0 = 4 r_opt`` so that our sum sensitivity ``2 (11 r0 + ||theta^t||)`` is at
   least the paper's ``88 r``.  The paper uses n = 640 n0 (up to ~2e8 points).  **Reduced
   scale**: we use ``n = n_run`` points and ``rho_run = rho (640 n0 / n_run)^2``, which keeps
   ``n / n0 = 640`` and the noise-to-signal ratio of every query exactly as at full scale; time
   is extrapolated linearly in n (one pass over the points per iteration) and compared with the
   paper's 15 s (gamma = 0.5) and 2 h (gamma = 0.1).
2. ``speed``: the full private pipeline (default schedule) vs the exact SOCP (CVXPY/Clarabel) on the
   same instance, growing n and d; plus the non-private fPTAS.
3. ``utility``: the full pipeline, central and local, radius ratio and uncovered points vs the exact
   SOCP and vs the proven high-probability bound.
"""

from __future__ import annotations

import argparse
import math
import time
import warnings

import numpy as np

from cvxdp.geometry.meb import fptas_meb, min_enclosing_ball
from cvxdp.geometry.meb_private import SCHEDULES, dp_mmeb, mmeb_constants

PAPER_SECONDS = {0.5: 15.0, 0.1: 7200.0}  # §6: "from 15 seconds (gamma=0.5) to 2 hours (0.1)"


def dataset(name: str, n: int, d: int, rng: np.random.Generator) -> np.ndarray:
    """The §6 synthetic data in [-5, 5]^d (rejection sampling keeps exactly n points)."""
    out: list[np.ndarray] = []
    v = rng.uniform(-3, 3, d)
    shift = rng.integers(-3, 4, d)
    while sum(len(o) for o in out) < n:
        m = 2 * n
        if name == "gaussian":
            x = rng.normal(v, 1.0, (m, d))
        elif name == "product":
            p = 2.0 ** -np.arange(1, d + 1)
            x = np.where(rng.random((m, d)) < p, 1.0, -1.0) + shift
        elif name == "conditional":
            z = rng.normal(0.0, 1.0, (m, d))
            x = z[~np.any((z >= 0) & (z <= 0.5), axis=1)] + v
        else:
            raise ValueError(name)
        out.append(x[np.all(np.abs(x) <= 5, axis=1)])
    return np.vstack(out)[:n]


def paper_n0(rho: float, gamma: float, d: int, beta: float = math.exp(-9)) -> float:
    """§6 halting parameter ``n0 = sqrt(RT) (sqrt(d) + sqrt(ln(4RT/beta0))) / sqrt(rho)``."""
    c = mmeb_constants(SCHEDULES["experiment"], gamma, beta)
    RT = c["R"] * c["T"]
    return math.sqrt(RT) * (math.sqrt(d) + math.sqrt(math.log(4 * RT / c["beta0"]))) / math.sqrt(
        rho)


def sec6(quick: bool, plots: bool = False) -> list[dict]:
    n_run, d, beta = (20_000 if quick else 200_000), 10, math.exp(-9)
    settings = [(r, 0.2) for r in (0.1, 0.3, 0.5, 0.7, 0.9)]
    settings += [(0.3, g) for g in (0.1, 0.2, 0.3, 0.4, 0.5) if g != 0.2]
    if quick:
        settings = [(0.3, 0.2), (0.3, 0.5)]
    rows, curves = [], {}
    sched = SCHEDULES["experiment"]
    for k, name in enumerate(("gaussian", "product", "conditional")):
        pts = dataset(name, n_run, d, np.random.default_rng(k))
        prob = min_enclosing_ball(pts)
        prob.solve()
        c_opt, r_opt = prob.ball.center, prob.ball.radius
        for j, (rho, gamma) in enumerate(settings):
            n_paper = 640 * paper_n0(rho, gamma, d, beta)
            rho_run = rho * (n_paper / n_run) ** 2
            t0 = time.perf_counter()
            run = dp_mmeb(pts, gamma=gamma, r=r_opt, theta0=np.zeros(d),
                          r0=4 * r_opt, rho=rho_run, beta=beta, schedule=sched,
                          rng=np.random.default_rng(100 + 17 * k + j), trace=True)
            secs = time.perf_counter() - t0
            dist = np.array([np.linalg.norm(th - c_opt) for th in run.trace]) / r_opt
            hit = np.flatnonzero(dist <= gamma)
            t_stop = int(hit[0]) if hit.size else len(dist)
            per_it = secs / max(run.iterations, 1)
            extrap = per_it * t_stop * n_paper / n_run
            curves[(name, rho, gamma)] = dist
            rows.append({"table": "sec6", "dataset": name, "rho": rho, "gamma": gamma,
                         "n_paper": int(n_paper), "n_run": n_run,
                         "T_bound": mmeb_constants(sched, gamma, beta)["T"],
                         "iters_to_gamma_ropt": t_stop if hit.size else None,
                         "halted": run.halted, "iterations": run.iterations,
                         "final_dist_over_ropt": float(dist[-1]),
                         "ns_per_point_iter": 1e9 * per_it / n_run,
                         "seconds_run": secs, "seconds_extrapolated_full_n": extrap,
                         "paper_seconds": PAPER_SECONDS.get(gamma) if rho == 0.3 else None})
    if plots:
        _plot(curves)
    return rows


def _plot(curves: dict) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    for fig_no, (key, fixed) in enumerate((("gamma", 0.3), ("rho", 0.2)), start=2):
        fig, axes = plt.subplots(1, 3, figsize=(13, 3.6))
        for ax, name in zip(axes, ("gaussian", "conditional", "product"), strict=True):
            for (nm, rho, gamma), dist in curves.items():
                if nm != name or (rho if key == "gamma" else gamma) != fixed:
                    continue
                ax.plot(dist, label=f"{key}={gamma if key == 'gamma' else rho}")
            ax.set_title(name)
            ax.set_xlabel("iteration t")
            ax.set_yscale("log")
        axes[0].set_ylabel("||theta_t - theta_opt|| / r_opt")
        axes[-1].legend()
        fig.tight_layout()
        fig.savefig(f"docs/meb_fig{fig_no}.png", dpi=90)
        plt.close(fig)


def speed(quick: bool) -> list[dict]:
    sizes = [(10_000, 10), (20_000, 20)] if quick else [
        (10_000, 10), (100_000, 10), (1_000_000, 10), (10_000_000, 10), (30_000, 50),
        (1_000_000, 50)]
    exact_max = 30_000 if quick else 100_000
    rows = []
    for n, d in sizes:
        pts = dataset("gaussian", n, d, np.random.default_rng(n + d))
        prob = min_enclosing_ball(pts)
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sol = prob.solve_private(rho=1.0, accuracy=0.2, bounds=(-5, 5), rng=0)
        t_priv = time.perf_counter() - t0
        fb = t_fptas = None
        if n <= 1_000_000:
            t0 = time.perf_counter()
            fb = fptas_meb(pts, 0.2)
            t_fptas = time.perf_counter() - t0
        t_exact = r_opt = None
        if n <= exact_max:
            t0 = time.perf_counter()
            r_opt = prob.solve()
            t_exact = time.perf_counter() - t0
        rows.append({"table": "speed", "n": n, "d": d, "private_s": t_priv, "fptas_s": t_fptas,
                     "exact_socp_s": t_exact,
                     "exact_over_private": t_exact / t_priv if t_exact else None,
                     "radius_ratio": sol.ball.radius / r_opt if r_opt else None,
                     "fptas_ratio": fb.radius / r_opt if (r_opt and fb) else None,
                     "uncovered": sol.ball.uncovered(pts),
                     "uncovered_bound": sol.info["uncovered_bound"]})
    return rows


def utility(quick: bool) -> list[dict]:
    n = 20_000 if quick else 100_000
    rows = []
    grid = [("central", r) for r in (0.1, 0.5, 1.0, 5.0)] + [
        ("local", r) for r in ((1e5,) if quick else (1e4, 1e5, 1e6))]
    names = ("gaussian", "product") if quick else ("gaussian", "product", "conditional")
    for k, name in enumerate(names):
        pts = dataset(name, n, 10, np.random.default_rng(10 + k))
        prob = min_enclosing_ball(pts)
        r_opt = prob.solve()
        for gamma in ((0.2,) if quick else (0.1, 0.2, 0.5)):
            for model, rho in grid:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    sol = prob.solve_private(rho=rho, accuracy=gamma, bounds=(-5, 5), rng=k,
                                             model=model)
                rows.append({"table": "utility", "dataset": name, "n": n, "model": model,
                             "rho": rho, "gamma": gamma,
                             "radius_ratio": sol.ball.radius / r_opt,
                             "paper_radius_factor": (1 + gamma) ** 2,
                             "uncovered": sol.ball.uncovered(pts),
                             "uncovered_bound": sol.info["uncovered_bound"],
                             "seconds": sol.solve_time})
    return rows


def main(quick: bool = True, plots: bool = False) -> list[dict]:
    """Run all three tables; return their rows."""
    return sec6(quick, plots) + speed(quick) + utility(quick)


def _print(rows: list[dict]) -> None:
    for table in dict.fromkeys(r["table"] for r in rows):
        sub = [r for r in rows if r["table"] == table]
        keys = [k for k in sub[0] if k != "table"]
        print(f"\n== {table} ==")
        print(" | ".join(keys))
        for r in sub:
            print(" | ".join(_fmt(r[k]) for k in keys))


def _fmt(v: object) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    return "-" if v is None else str(v)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--plots", action="store_true")
    args = ap.parse_args()
    _print(main(quick=args.quick, plots=args.plots))
