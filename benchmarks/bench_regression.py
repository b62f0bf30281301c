"""Private least squares (Lu, Magdon-Ismail, Wei & Zikas 2024): coefficient error and speed against
the exact OLS.

Data: seeded synthetic regressions generated here (no download): x_i uniform in [-1, 1]^d scaled
by 0.8/sqrt(d), y_i = x_i' beta + N(0, 0.1^2) with beta = linspace(-0.5, 0.5, d), d = 5; the public
row bound is l = 1.2 (no row exceeds it, so clipping costs nothing here).

Mechanisms: ``ssp`` (default, noisy Gram matrix, analytic Gaussian), ``rp`` (M_RP sketch + OLS,
paper Thm 3), ``ls`` (M_LS, conjectural), ``als`` (M_ALS, asymptotic) and the baseline
``sheffet`` ([15] as quoted in the paper's Fig. 14: the same sketch as ``als`` with
c2 = sheffet_sigma).  Error = ||beta_hat - beta_OLS|| / ||beta_OLS||, mean (and std) over seeded
trials.  Speed = private wall time / exact OLS wall time (numpy lstsq) and / CVXPY solve.

Usage: ``python benchmarks/bench_regression.py [--quick]``.
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import time

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

from cvxdp.estimation.random_projection import (  # noqa: E402
    clip_rows,
    gaussian_sketch,
    ls_sigma,
    rp_sigma,
    sheffet_sigma,
)
from cvxdp.estimation.regression import least_squares  # noqa: E402
from cvxdp.privacy.calibration import calibrate_gaussian  # noqa: E402

D = 5
BOUND = 1.2


def make_data(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, (n, D)) * 0.8 / np.sqrt(D)
    beta = np.linspace(-0.5, 0.5, D)
    return x, x @ beta + 0.1 * rng.standard_normal(n)


def _sheffet(x: np.ndarray, y: np.ndarray, eps: float, delta: float, r: int, seed: int):
    sigma = sheffet_sigma(epsilon=eps, delta=delta, r=r, row_bound=BOUND)
    s = gaussian_sketch(clip_rows(np.column_stack([x, y]), BOUND), r, sigma,
                        np.random.default_rng(seed))
    return np.linalg.lstsq(s[:D].T, s[D], rcond=None)[0]


def main(quick: bool = False) -> list[dict]:
    sizes = [1000, 10000] if quick else [1000, 10000, 100000]
    eps_grid = [1.0] if quick else [0.5, 1.0, 2.0]
    trials = 2 if quick else 4
    r = 300
    delta = 1e-6
    rows = []
    for n in sizes:
        x, y = make_data(n, seed=n)
        prob = least_squares(x, y, row_bound=BOUND)
        t0 = time.perf_counter()
        exact = np.linalg.lstsq(x, y, rcond=None)[0]
        t_ols = time.perf_counter() - t0
        t0 = time.perf_counter()
        prob.solve()
        t_cvx = time.perf_counter() - t0
        for eps in eps_grid:
            for mech in ("ssp", "rp", "ls", "als", "sheffet"):
                errs, times = [], []
                for seed in range(trials):
                    t0 = time.perf_counter()
                    if mech == "sheffet":
                        coef = _sheffet(x, y, eps, delta, r, seed)
                    else:
                        coef = prob.solve_private(epsilon=eps, delta=delta, rng=seed,
                                                  mechanism=mech, sketch_size=r).coef
                    times.append(time.perf_counter() - t0)
                    errs.append(np.linalg.norm(coef - exact) / np.linalg.norm(exact))
                sigma = {"rp": rp_sigma(epsilon=eps, delta=delta, r=r, row_bound=BOUND),
                         "ls": ls_sigma(epsilon=eps, delta=delta, r=r, d=D, row_bound=BOUND),
                         "sheffet": sheffet_sigma(epsilon=eps, delta=delta, r=r,
                                                  row_bound=BOUND)}
                sigma["als"] = sigma["ls"]
                sigma["ssp"] = calibrate_gaussian(epsilon=eps, delta=delta,
                                                  sensitivity=BOUND**2)
                t = float(np.median(times))
                rows.append({"problem": "least_squares", "n": n, "d": D, "epsilon": eps,
                             "delta": delta, "mechanism": mech, "r": r,
                             "sigma": sigma.get(mech, float("nan")),
                             "rel_error": float(np.mean(errs)),
                             "rel_error_std": float(np.std(errs)),
                             "time_s": t, "ratio_vs_lstsq": t / max(t_ols, 1e-9),
                             "ratio_vs_cvxpy": t / max(t_cvx, 1e-9)})
    return rows


def _print(rows: list[dict]) -> None:
    head = ("n", "epsilon", "mechanism", "sigma", "rel_error", "rel_error_std", "time_s",
            "ratio_vs_lstsq", "ratio_vs_cvxpy")
    print(" | ".join(f"{h:>13}" for h in head))
    for r in rows:
        print(" | ".join(f"{r[h]:>13.4g}" if isinstance(r[h], float) else f"{r[h]!s:>13}"
                         for h in head))


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    _print(main(quick=ap.parse_args().quick))
