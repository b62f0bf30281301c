"""John ellipsoid: speed of the private and sketched paths vs the exact conic solve, and utility.

Usage::

    python benchmarks/bench_john.py --quick     # < 1 minute
    python benchmarks/bench_john.py             # full: n up to 1e5, d up to 50 (tens of minutes)

Speed rows: wall time of ``solve_private`` (default preset, epsilon=1, delta=1e-6), of
``solve(method="sketched")`` and of the exact ``solve()`` (Clarabel, SOC+PSD model) on the same
seeded instance.  The exact model has n*d^2 nonzeros; above ``EXACT_MAX_NNZ`` it is not run and the
row reports ``exact_lb_s``: the largest exact time measured on an instance with no larger n and d (a
lower bound if the exact time is monotone in n and d, which every measured row shows), and
d > ``EXACT_MAX_D`` is not run either.

Utility rows: per-dimension volume ratio vs the exact John ellipsoid at eps in {0.1,0.5,1,2,5},
for two closeness values eps0, on a random polytope and on a real data matrix (daily returns of
the GOOG price series bundled with matplotlib, ``mpl-data/sample_data/goog.npz``).
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import math  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

from cvxdp.geometry.john import ellipsoid_from_weights, john_ellipsoid  # noqa: E402

EXACT_MAX_NNZ = 4_000_000
#: the exact solve at n=1000, d=50 did not finish in 29 min (2 shared cores): not run for d > 20
EXACT_MAX_D = 20


def random_polytope(n: int, d: int, seed: int = 0) -> np.ndarray:
    """Gaussian rows / sqrt(d), clipped to the unit ball (so row_bound=1 is a true public bound)."""
    A = np.random.default_rng(seed).standard_normal((n, d)) / math.sqrt(d)
    return A * np.minimum(1.0, 1.0 / np.linalg.norm(A, axis=1))[:, None]


def goog_matrix() -> np.ndarray:
    """Real data: standardised daily log-changes of open/high/low/close/volume, rows clipped."""
    from matplotlib import cbook

    p = cbook.get_sample_data("goog.npz")["price_data"]
    X = np.column_stack([np.diff(np.log(p[c].astype(float)))
                         for c in ("open", "high", "low", "close", "volume")])
    X = (X - X.mean(0)) / X.std(0)
    X /= np.quantile(np.linalg.norm(X, axis=1), 0.99)
    return X * np.minimum(1.0, 1.0 / np.linalg.norm(X, axis=1))[:, None]


def _timed(f, **kw):
    t = time.perf_counter()
    out = f(**kw)
    return out, time.perf_counter() - t


def speed_rows(sizes: list[tuple[int, int]]) -> list[dict]:
    rows: list[dict] = []
    exact_times: dict[tuple[int, int], float] = {}
    for n, d in sizes:
        A = random_polytope(n, d)
        prob = john_ellipsoid(A)
        sol, t_priv = _timed(prob.solve_private, epsilon=1.0, delta=1e-6, closeness=1e-9,
                             row_bound=1.0, rng=0)
        _, t_sk = _timed(prob.solve, method="sketched", accuracy=0.1, rng=0)
        row = {"bench": "john", "problem": "speed", "size": f"n={n},d={d}", "private_s": t_priv,
               "sketched_s": t_sk, "iterations": sol.iterations}
        if n * d * d <= EXACT_MAX_NNZ and d <= EXACT_MAX_D:
            _, t_ex = _timed(prob.solve, solver="CLARABEL")
            exact_times[(n, d)] = t_ex
            row.update(exact_s=t_ex, ratio=t_ex / t_priv, sketched_ratio=t_ex / t_sk)
        else:
            lb = max((t for (m, e), t in exact_times.items() if m <= n and e <= d), default=None)
            if lb is not None:
                row.update(exact_lb_s=lb, ratio_lb=lb / t_priv, sketched_ratio_lb=lb / t_sk)
        rows.append(row)
        print(row, flush=True)
    return rows


def utility_rows(name: str, A: np.ndarray, eps0s: list[float], seeds: int) -> list[dict]:
    n, d = A.shape
    exact = john_ellipsoid(A)
    exact.solve(solver="CLARABEL")
    E = exact.ellipsoid

    def fitted(F):
        return F.scaled(1 / math.sqrt(F.support_ratios(A).max())).volume_ratio(E)

    uniform = fitted(ellipsoid_from_weights(A, np.full(n, d / n)))
    rows = []
    for eps0 in eps0s:
        for eps in (0.1, 0.5, 1.0, 2.0, 5.0):
            r, rin = [], []
            for s in range(seeds):
                sol = exact.solve_private(epsilon=eps, delta=1e-6, closeness=eps0, row_bound=1.0,
                                          rng=s, inscribed=True)
                r.append(fitted(sol.ellipsoid))
                rin.append(sol.ellipsoid.volume_ratio(E))
            rows.append({"bench": "john", "problem": f"utility:{name}", "size": f"n={n},d={d}",
                         "eps0": eps0, "epsilon": eps, "shape_ratio": float(np.mean(r)),
                         "shape_ratio_sd": float(np.std(r)), "inscribed_ratio": float(np.mean(rin)),
                         "uniform_weights_ratio": uniform})
            print(rows[-1], flush=True)
    return rows


def main(quick: bool = False) -> list[dict]:
    if quick:
        sizes = [(1000, 5), (1000, 20), (3000, 10)]
        rows = speed_rows(sizes)
        rows += utility_rows("random", random_polytope(1000, 5, seed=1), [1e-8], 2)
        return rows
    sizes = [(n, d) for n in (1000, 10000, 100000) for d in (5, 20, 50)]
    rows = speed_rows(sizes)
    rows += utility_rows("random", random_polytope(2000, 5, seed=1), [1e-8, 1e-6], 5)
    rows += utility_rows("goog", goog_matrix(), [1e-8, 1e-6], 5)
    return rows


def _print(rows: list[dict]) -> None:
    for r in rows:
        print(" | ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
                         for k, v in r.items()))


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    _print(main(quick=ap.parse_args().quick))
