"""Benchmark of the DP minimum enclosing ball (``cvxdp.geometry.meb.meb``).

Four tables (``main(quick)`` returns all rows; ``python benchmarks/bench_meb.py [--quick]
[--plots] [--tables sec6 kernel ...]`` prints them):

1. ``sec6``: §6 of the paper (Mahpud & Sheffet 2022) at the paper's own sizes -- Alg. 4
   alone with the experiments' step gamma^2/8, ``r = r_opt`` (non-private, as the authors did),
   ``theta0 = 0``, the three synthetic datasets in [-5, 5]^10, rho in {0.1..0.9} at gamma = 0.2
   and gamma in {0.1..0.5} at rho = 0.3, stopping rules (i) ``||theta^t - theta_opt|| <= gamma
   r_opt``, (ii) too few uncovered, (iii) t > 2500; ``r0 = 4 r_opt`` so that our sum sensitivity
   ``2 (11 r0 + ||theta^t||)`` is at least the paper's ``88 r``.  ``n = 640 n0`` (3e7-2e8 points);
   sizes above ``N_CAP`` run at ``N_CAP`` points with ``rho_run = rho (640 n0 / N_CAP)^2``, which
   keeps ``n / n0 = 640`` and the noise-to-signal ratio of every query, and the time is scaled by
   ``640 n0 / N_CAP`` (marked ``scaled``).  ``r_opt``, ``theta_opt`` come from the exact active-set
   solver.  Time is to the paper's stop ((i), (ii) or (iii), whichever first) and is compared with
   the paper's 15 s (gamma = 0.5) and 2 h (gamma = 0.1).
2. ``kernel``: the same runs with the outside-the-ball index vs a full pass per iteration (same
   seed: identical iterations), at ``n = 4e6``; the index with numpy loops and compiled ones.
3. ``speed``: the full private pipeline (default schedule) vs the exact solvers (whole SOCP through
   CVXPY where it fits, active set everywhere) on the same instance, growing n and d; plus the
   non-private fPTAS.
4. ``utility``: the full pipeline, central and local, radius ratio and uncovered points vs the exact
   ball and vs the proven high-probability bound.
"""

from __future__ import annotations

import argparse
import math
import time
import warnings

import numpy as np

from cvxdp.geometry.meb import meb_kernels
from cvxdp.geometry.meb.meb import exact_meb, fptas_meb, min_enclosing_ball
from cvxdp.geometry.meb.meb_private import SCHEDULES, dp_mmeb, kept_index, mmeb_constants

PAPER_SECONDS = {0.5: 15.0, 0.1: 7200.0}  # §6: "from 15 seconds (gamma=0.5) to 2 hours (0.1)"
N_CAP = 40_000_000                        # 3.2 GB of float64 points at d = 10
DATASETS = ("gaussian", "product", "conditional")


def dataset(name: str, n: int, d: int, rng: np.random.Generator,
            chunk: int = 1 << 20) -> np.ndarray:
    """The §6 synthetic data in [-5, 5]^d, generated in chunks (no large temporaries).

    * ``gaussian``: ``N(v, I_d)``, ``v ~ U[-5, 5]^d``, points outside the box discarded;
    * ``product``: ``x_i = +1`` w.p. ``2^-i`` else ``-1``, the cube shifted by a random integer
      vector in ``{-4..4}^d`` (it stays in the box);
    * ``conditional``: ``N(0, I_d)`` conditioned on no coordinate in ``[0, 0.5]``, shifted to
      ``v ~ U[-5, 5]^d``, points outside the box discarded.

    The coordinates are independent and the box is a product set, so discarding points outside
    it is the same as drawing each coordinate from its own conditional law, which we do by
    rejection per coordinate (no point is thrown away whole).
    """
    v = rng.uniform(-5, 5, d)
    shift = rng.integers(-4, 5, d)
    p = 2.0 ** -np.arange(1, d + 1)
    out = np.empty((n, d))
    for lo in range(0, n, chunk):
        m = min(chunk, n - lo)
        if name == "product":
            out[lo:lo + m] = np.where(rng.random((m, d)) < p, 1.0, -1.0) + shift
            continue
        for j in range(d):
            col = np.empty(m)
            todo = np.arange(m)
            while len(todo):
                z = rng.normal(0.0, 1.0, len(todo))
                ok = np.abs(z + v[j]) <= 5
                if name == "conditional":
                    ok &= (z < 0) | (z > 0.5)
                elif name != "gaussian":
                    raise ValueError(name)
                col[todo[ok]] = z[ok] + v[j]
                todo = todo[~ok]
            out[lo:lo + m, j] = col
    return out


def paper_n0(rho: float, gamma: float, d: int, beta: float = math.exp(-9)) -> float:
    """§6 halting parameter ``n0 = sqrt(RT) (sqrt(d) + sqrt(ln(4RT/beta0))) / sqrt(rho)``."""
    c = mmeb_constants(SCHEDULES["experiment"], gamma, beta)
    RT = c["R"] * c["T"]
    return math.sqrt(RT) * (math.sqrt(d) + math.sqrt(math.log(4 * RT / c["beta0"]))) / math.sqrt(
        rho)


class _Reached(Exception):
    """Stopping rule (i) of §6 (non-private: it uses theta_opt)."""


def _sec6_run(pts: np.ndarray, c_opt: np.ndarray, r_opt: float, rho: float, gamma: float,
              seed: int, full_pass: bool = False) -> dict:
    """One §6 run of Alg. 4 with the paper's stopping rules; wall time to the first of them."""
    d = pts.shape[1]
    sched = SCHEDULES["experiment"]
    t0 = time.perf_counter()
    # The baseline: one full pass per query over the uncompressed rows (no bands).
    index = kept_index(pts, np.zeros(d), sched.keep * 4 * r_opt, compress=not full_pass)
    if full_pass:
        index.min_band = len(index) + 1
    query, seen = index.query, []

    def stop_at_i(theta: np.ndarray, r: float):
        seen.append(float(np.linalg.norm(theta - c_opt)) / r_opt)
        if seen[-1] <= gamma:
            raise _Reached
        return query(theta, r)

    index.query = stop_at_i
    try:
        run = dp_mmeb(pts, gamma=gamma, r=r_opt, theta0=np.zeros(d), r0=4 * r_opt, rho=rho,
                      beta=math.exp(-9), schedule=sched, rng=np.random.default_rng(seed),
                      index=index)
        stop = {"few_uncovered": "(ii)", "final_test": "(iii)", "bottom": "(iii)"}[run.halted]
    except _Reached:
        stop = "(i)"
    secs = time.perf_counter() - t0
    return {"stop": stop, "iterations": len(seen), "dist_at_stop": seen[-1], "seconds": secs,
            "rows_per_iteration": index.work / max(len(seen), 1) / len(pts),
            "curve": np.array(seen),
            "loops": meb_kernels.pick(*pts.shape).name}     # for the data (compression, kept set)


def sec6(quick: bool, plots: bool = False, only: list[tuple[float, float]] | None = None,
         datasets: tuple[str, ...] = DATASETS) -> list[dict]:
    d, beta, cap = 10, math.exp(-9), (200_000 if quick else N_CAP)
    settings = [(0.3, g) for g in (0.1, 0.2, 0.3, 0.4, 0.5)]
    settings += [(r, 0.2) for r in (0.1, 0.5, 0.7, 0.9)]
    if quick:
        settings = [(0.3, 0.1), (0.3, 0.5)]
    if only:
        settings = only
    rows, curves = [], {}
    for k, name in enumerate(DATASETS):
        if name not in datasets:
            continue
        sizes = {s: int(640 * paper_n0(*s, d, beta)) for s in settings}
        data = dataset(name, min(cap, max(sizes.values())), d, np.random.default_rng(k))
        exact: dict[int, tuple[np.ndarray, float]] = {}
        for j, (rho, gamma) in enumerate(settings):
            n_paper = sizes[(rho, gamma)]
            n_run = min(n_paper, cap)
            pts = data[:n_run]                       # a prefix of iid rows is an iid sample
            if n_run not in exact:
                ball = exact_meb(pts)
                exact[n_run] = (ball.center, ball.radius)
            c_opt, r_opt = exact[n_run]
            rho_run = rho * (n_paper / n_run) ** 2
            res = _sec6_run(pts, c_opt, r_opt, rho_run, gamma, 100 + 17 * k + j)
            at_paper = res["seconds"] * n_paper / n_run
            paper = PAPER_SECONDS.get(gamma) if rho == 0.3 else None
            rows.append({"table": "sec6", "dataset": name, "rho": rho, "gamma": gamma,
                         "n_paper": n_paper, "n_run": n_run,
                         "scale": "paper" if n_run == n_paper else "scaled",
                         "stop": res["stop"], "iterations": res["iterations"],
                         "dist_at_stop_over_ropt": res["dist_at_stop"],
                         "rows_per_iteration": res["rows_per_iteration"],
                         "seconds_at_paper_n": at_paper, "paper_seconds": paper,
                         "paper_over_ours": paper / at_paper if paper else None,
                         "loops": res["loops"]})
            print(rows[-1], flush=True)
            curves[(name, rho, gamma)] = res["curve"]
        del data
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


def kernel(quick: bool) -> list[dict]:
    """The index vs one full pass per iteration, same seeds (identical iterations); the index
    with the numpy loops and, when numba is installed, the compiled ones, which the full pass
    then uses too (``speedup``: full pass / index, same loops)."""
    n, d = (100_000 if quick else 4_000_000), 10
    choice = meb_kernels._state.get("choice", "auto")
    compiled = meb_kernels.pick(meb_kernels.FAST_ROWS).name == "numba"
    rows = []
    for k, name in enumerate(DATASETS):
        pts = dataset(name, n, d, np.random.default_rng(50 + k))
        ball = exact_meb(pts)
        for gamma in ((0.1,) if quick else (0.1, 0.2, 0.5)):
            rho = 0.3 * (640 * paper_n0(0.3, gamma, d) / n) ** 2
            runs = {}
            for loops in ("numpy", "numba") if compiled else ("numpy",):
                meb_kernels.set_backend(loops)
                runs[loops] = _sec6_run(pts, ball.center, ball.radius, rho, gamma, 7)
            # The baseline with the fastest loops there are (those of the last run).
            slow = _sec6_run(pts, ball.center, ball.radius, rho, gamma, 7, full_pass=True)
            meb_kernels.set_backend(choice)
            assert all(r["iterations"] == slow["iterations"] for r in runs.values()), runs
            best = runs["numba" if compiled else "numpy"]
            rows.append({"table": "kernel", "dataset": name, "n": n, "gamma": gamma,
                         "iterations": best["iterations"], "full_pass_s": slow["seconds"],
                         "index_numpy_s": runs["numpy"]["seconds"],
                         "index_numba_s": runs["numba"]["seconds"] if compiled else None,
                         "speedup": slow["seconds"] / best["seconds"],
                         "rows_per_iteration": best["rows_per_iteration"],
                         "loops": slow["loops"]})
    return rows


def speed(quick: bool) -> list[dict]:
    sizes = [(10_000, 10), (20_000, 20)] if quick else [
        (10_000, 10), (100_000, 10), (1_000_000, 10), (10_000_000, 10), (30_000, 50),
        (1_000_000, 50)]
    socp_max = 30_000 if quick else 100_000
    rows = []
    for n, d in sizes:
        pts = dataset("gaussian", n, d, np.random.default_rng(n + d))
        prob = min_enclosing_ball(pts)
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sol = prob.solve_private(rho=1.0, accuracy=0.2, bounds=(-5, 5), rng=0)
        t_priv = time.perf_counter() - t0
        t0 = time.perf_counter()
        fb = fptas_meb(pts, 0.2)
        t_fptas = time.perf_counter() - t0
        ref, t_active, _ = prob.exact_ball(method="active-set")
        t_socp = prob.exact_ball(method="socp")[1] if n <= socp_max else None
        rows.append({"table": "speed", "n": n, "d": d, "private_s": t_priv, "fptas_s": t_fptas,
                     "exact_active_set_s": t_active, "exact_socp_s": t_socp,
                     "socp_over_private": t_socp / t_priv if t_socp else None,
                     "active_set_over_private": t_active / t_priv,
                     "radius_ratio": sol.ball.radius / ref.radius,
                     "fptas_ratio": fb.radius / ref.radius,
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
        r_opt = prob.exact_ball()[0].radius
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


TABLES = ("sec6", "kernel", "speed", "utility")


def main(quick: bool = True, plots: bool = False, tables: tuple[str, ...] = TABLES,
         kernels: str = "auto", only: list[tuple[float, float]] | None = None,
         datasets: tuple[str, ...] = DATASETS) -> list[dict]:
    """Run the tables (all four by default); return their rows.  ``kernels``: the index's row
    loops (``meb_kernels.set_backend``); numba is loaded before any timing starts (a one-time
    ~1 s per process, not counted).  ``only``: the ``(rho, gamma)`` settings of ``sec6``."""
    meb_kernels.set_backend(kernels)
    loops = meb_kernels.pick(meb_kernels.FAST_ROWS)
    pts = np.zeros((4, 2))
    loops.count_sum(pts, pts[:, 0], pts[0], 0.0, None)           # load the compiled code
    loops.split(pts, pts[:, 0], pts[0], 0.0, 0.0, 1.0, None, (pts.copy(), pts[:, 0].copy(), None))
    loops.match(pts, pts[0], np.zeros(1), pts[:1])
    print(f"row loops for large data: {loops.name}", flush=True)
    rows = sec6(quick, plots, only, datasets) if "sec6" in tables else []
    return rows + [r for t in TABLES[1:] if t in tables for r in globals()[t](quick)]


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
    ap.add_argument("--tables", nargs="+", choices=TABLES, default=list(TABLES))
    ap.add_argument("--kernels", choices=("auto", "numba", "numpy"), default="auto",
                    help="row loops of the index (numba needs the 'fast' extra)")
    ap.add_argument("--sec6", nargs="+", metavar="RHO:GAMMA",
                    help="only these settings of the sec6 table, e.g. 0.3:0.1 0.3:0.5")
    ap.add_argument("--datasets", nargs="+", choices=DATASETS, default=list(DATASETS),
                    help="only these datasets in the sec6 table (seeds unchanged)")
    args = ap.parse_args()
    only = [tuple(map(float, x.split(":"))) for x in args.sec6] if args.sec6 else None
    _print(main(quick=args.quick, plots=args.plots, tables=tuple(args.tables),
                kernels=args.kernels, only=only, datasets=tuple(args.datasets)))
