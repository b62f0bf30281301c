"""Speed of the EJA adapters (cvxdp.jordan) against their physical floor.

* ``SymmetricMatrices(r)``: ``exp``, ``normalized_exp``, ``eigh`` (compact frame) and
  ``spectral_decomposition`` (full svec frame, ``r x r(r+1)/2`` floats) as a ratio to one
  ``numpy.linalg.eigh`` of the same matrix (target <= 1.5x for the spectral functions).
* ``Product`` of 1e5 equal second-order cones: ``normalized_exp``, ``eigenvalues``, ``product``,
  ``project`` as a ratio to one vectorised pass ``numpy.linalg.norm(xbar, axis=1)`` over the same
  data, and the speed-up over a Python loop over the cones (measured on 2000 cones and scaled).
* A mixed SCS-like cone (orthant x SOCs x PSDs): ``normalized_exp`` vs the sum of the eighs.
* The EJA Gaussian mechanism on ``S^r`` (no decomposition needed) vs one eigh.

Times are the best of a few repeats (the machine is shared).  Usage:
``python benchmarks/bench_jordan.py [--quick]``.
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import time
from collections.abc import Callable

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

from cvxdp.jordan import (  # noqa: E402
    Orthant,
    Product,
    SpinFactor,
    SymmetricMatrices,
    gaussian_mechanism,
)


def _best(fn: Callable[[], object], repeats: int = 3) -> float:
    best = np.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return float(best)


def _pair(fn: Callable[[], object], floor: Callable[[], object], repeats: int = 7
          ) -> tuple[float, float]:
    """Best times of ``fn`` and ``floor``, interleaved so both see the same machine load."""
    a, b = np.inf, np.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        t1 = time.perf_counter()
        floor()
        t2 = time.perf_counter()
        a, b = min(a, t1 - t0), min(b, t2 - t1)
    return float(a), float(b)


def _psd_rows(sizes: list[int], full_frame_max: int) -> list[dict]:
    rows = []
    rng = np.random.default_rng(0)
    for r in sizes:
        J = SymmetricMatrices(r)
        x = J.random_normal(rng)
        M = J.to_matrix(x)
        def eigh_floor() -> object:
            return np.linalg.eigh(M.copy())  # noqa: B023
        ops: dict[str, Callable[[], object]] = {
            "exp": lambda: J.exp(x),  # noqa: B023
            "normalized_exp": lambda: J.normalized_exp(x),  # noqa: B023
            "eigh (compact frame)": lambda: J.eigh(x),  # noqa: B023
            "gaussian_mechanism": lambda: gaussian_mechanism(  # noqa: B023
                x, J, sensitivity=1.0, norm="linf", epsilon=1.0, delta=1e-6, rng=0),  # noqa: B023
        }
        if r <= full_frame_max:
            ops["spectral_decomposition (full frame)"] = lambda: J.spectral_decomposition(x)  # noqa: B023
        for name, fn in ops.items():
            t, t_eigh = _pair(fn, eigh_floor, 3 if "full" in name else 7)
            rows.append({"problem": f"S^r {name}", "size": r, "time_s": t,
                         "floor": "eigh", "floor_s": t_eigh, "ratio": t / t_eigh})
    return rows


def _soc_rows(n_cones: int, sizes: list[int]) -> list[dict]:
    rows = []
    rng = np.random.default_rng(1)
    for q in sizes:
        t_build = _best(lambda: Product([SpinFactor(q)] * n_cones), 1)  # noqa: B023
        P = Product([SpinFactor(q)] * n_cones)
        x, y = P.random_normal(rng), P.random_normal(rng)
        xb = x.reshape(n_cones, q)[:, 1:]
        def floor() -> object:
            return np.linalg.norm(xb, axis=1)  # noqa: B023
        J = SpinFactor(q)
        blocks = x.reshape(n_cones, q)
        n_loop = min(2000, n_cones)
        t_loop = _best(lambda: [J.normalized_exp(b) for b in blocks[:n_loop]], 1)  # noqa: B023
        t_loop *= n_cones / n_loop
        ops = {"normalized_exp": lambda: P.normalized_exp(x),  # noqa: B023
               "eigenvalues": lambda: P.eigenvalues(x),  # noqa: B023
               "product": lambda: P.product(x, y),  # noqa: B023
               "project": lambda: P.project(x)}  # noqa: B023
        for name, fn in ops.items():
            t, t_floor = _pair(fn, floor)
            row = {"problem": f"{n_cones} x SOC({q}) {name}", "size": n_cones * q, "time_s": t,
                   "floor": "norm(xbar)", "floor_s": t_floor, "ratio": t / t_floor}
            if name == "normalized_exp":
                row["python_loop_s"] = t_loop
                row["speedup_vs_loop"] = t_loop / t
            rows.append(row)
        rows.append({"problem": f"{n_cones} x SOC({q}) build Product", "size": n_cones * q,
                     "time_s": t_build})
    return rows


def _mixed_rows(quick: bool) -> list[dict]:
    n_soc, n_psd, r = (1000, 5, 20) if quick else (10000, 20, 30)
    P = Product([Orthant(1000)] + [SpinFactor(5)] * n_soc + [SymmetricMatrices(r)] * n_psd)
    rng = np.random.default_rng(2)
    x = P.random_normal(rng)
    Ms = SymmetricMatrices(r).to_matrix(x[P.offsets[-n_psd - 1]:].reshape(n_psd, -1))
    socs = x[1000:1000 + 5 * n_soc].reshape(n_soc, 5)[:, 1:]

    def floor() -> object:  # one batched eigh of the PSD blocks + one norm pass over the SOCs
        return np.linalg.eigh(Ms), np.linalg.norm(socs, axis=1)

    t, t_eigh = _pair(lambda: P.normalized_exp(x), floor)
    return [{"problem": f"R^1000 x {n_soc} SOC(5) x {n_psd} S^{r} normalized_exp",
             "size": P.dim, "time_s": t, "floor": "eigh(PSD) + norm(SOC)", "floor_s": t_eigh,
             "ratio": t / t_eigh}]


def main(quick: bool = False) -> list[dict]:
    sizes = [50, 100, 200] if quick else [50, 100, 200, 300, 500]
    rows = _psd_rows(sizes, full_frame_max=200 if quick else 300)
    rows += _soc_rows(20000 if quick else 100000, [3] if quick else [3, 10])
    rows += _mixed_rows(quick)
    return rows


def _print(rows: list[dict]) -> None:
    cols = ["problem", "size", "time_s", "floor", "floor_s", "ratio", "speedup_vs_loop"]
    print(" | ".join(cols))
    for r in rows:
        cells = []
        for c in cols:
            v = r.get(c, "")
            cells.append(f"{v:.4g}" if isinstance(v, float) else str(v))
        print(" | ".join(cells))


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    _print(main(quick=ap.parse_args().quick))
