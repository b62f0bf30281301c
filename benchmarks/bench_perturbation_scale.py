"""Perturbation at scale: where the time of a private solve goes, against the exact solve.

The many-rows LP ``max 1'x  s.t.  A x <= 1, 0 <= x <= 1`` (n = 10, ``A`` uniform on [0, 1]
and private, ``ConstraintPrivacy(A, sensitivity=1e-4)``, epsilon = 1, delta = 1e-6,
``mechanism="perturbation"``) for m = 1e2, 1e3, 1e4 rows.  Columns:

* ``exact``: ``problem.solve(solver=CLARABEL)`` of a fresh copy (CVXPY's compile + solve);
* ``compile``: the CVXPY compile inside the private solve (``Problem.get_problem_data``);
* ``counterpart``: building the tightened and loosened counterparts (noise included);
* ``solve``: the conic solves of the private path (counterpart, loosened counterpart, public
  checks), i.e. Clarabel / SCS time;
* ``private``: wall time of ``solve_private`` (``reference=False``); ``ratio``: private / exact;
* ``compiles``: ``Problem.get_problem_data`` calls in one private solve, on any problem (the
  user's model, and the small CVXPY problems of the public-part checks when they run).

Measured on 2 shared cores (median of 3; before = commit 0843d12, after = this code)::

         m | exact s | private s before | ratio before | private s after | ratio after
       100 |   0.004 |            0.243 |        25.8x |           0.015 |        3.3x
      1000 |   0.012 |            1.687 |        68.3x |           0.040 |        3.3x
     10000 |   0.102 |           33.66  |       176.3x |           0.507 |        4.5x

(before: 23 get_problem_data calls per solve and a counterpart with one SOC block per row;
after: 1 call, and one block for all the rows, whose noise maps are identical.)

Timings are the median of ``--repeat`` runs (2 cores shared: read ratios, not seconds).

Usage::

    python benchmarks/bench_perturbation_scale.py
    python benchmarks/bench_perturbation_scale.py --m 100 1000 --repeat 1
"""

from __future__ import annotations

import argparse
import time
import warnings
from contextlib import contextmanager
from typing import Any

import cvxpy as cp
import numpy as np

import cvxdp
import cvxdp.solvers.auto as mech_mod
import cvxdp.solvers.perturbation as pert_pkg
import cvxdp.transform.reference as ref_mod

try:  # the counterpart's call site (a module of the perturbation package, or the package)
    import cvxdp.solvers.perturbation.solve as pert_solve
except ImportError:  # the single-module layout before the package
    pert_solve = pert_pkg

N = 10


def many_rows_lp(m: int, seed: int = 0) -> tuple[cp.Problem, Any]:
    """``max 1'x s.t. A x <= 1, 0 <= x <= 1`` with a private (m, 10) matrix ``A``."""
    rng = np.random.default_rng(seed)
    A = cp.Parameter((m, N), name="A")
    A.value = rng.uniform(0.0, 1.0, (m, N))
    x = cp.Variable(N, name="x")
    prob = cp.Problem(cp.Maximize(cp.sum(x)), [A @ x <= 1, x >= 0, x <= 1])
    return prob, cvxdp.ConstraintPrivacy(A, sensitivity=1e-4)


class _Timer:
    def __init__(self) -> None:
        self.t = {"compile": 0.0, "counterpart": 0.0, "solve": 0.0}
        self.compiles = 0


@contextmanager
def _instrument(timer: _Timer):
    """Wrap CVXPY's compile, the counterpart builders and the conic solvers with timers."""
    patches = []

    def wrap(owner: Any, name: str, key: str | None, count: bool = False) -> None:
        if not hasattr(owner, name):
            return
        orig = getattr(owner, name)

        def inner(*a: Any, **k: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return orig(*a, **k)
            finally:
                if key is not None:
                    timer.t[key] += time.perf_counter() - t0
                if count:
                    timer.compiles += 1

        patches.append((owner, name, orig))
        setattr(owner, name, inner)

    wrap(cp.Problem, "get_problem_data", "compile", count=True)
    wrap(pert_solve, "counterpart", "counterpart")
    wrap(mech_mod, "loosened_program", "counterpart")
    wrap(ref_mod, "_clarabel", "solve")
    wrap(ref_mod, "_scs", "solve")
    try:
        yield
    finally:
        for owner, name, orig in reversed(patches):
            setattr(owner, name, orig)


def run(m: int, repeat: int) -> dict[str, float]:
    rows = []
    for r in range(repeat):
        prob, spec = many_rows_lp(m)
        fresh = cp.Problem(prob.objective, prob.constraints)
        t0 = time.perf_counter()
        fresh.solve(solver=cp.CLARABEL)
        exact = time.perf_counter() - t0
        timer = _Timer()
        with warnings.catch_warnings(), _instrument(timer):
            warnings.simplefilter("ignore")
            t0 = time.perf_counter()
            sol = cvxdp.solve_private(prob, epsilon=1.0, delta=1e-6, private=spec,
                                      mechanism="perturbation", rng=r)
            private = time.perf_counter() - t0
        gap = (fresh.value - float(np.sum(prob.variables()[0].value))) / max(1, abs(fresh.value))
        rows.append({"exact": exact, **timer.t, "private": private,
                     "ratio": private / exact, "compiles": timer.compiles,
                     "gap": gap, "status": sol.status})
    out = {k: float(np.median([row[k] for row in rows])) for k in rows[0] if k != "status"}
    out["status"] = rows[0]["status"]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--m", type=int, nargs="+", default=[100, 1000, 10000])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    cols = ["m", "exact", "compile", "counterpart", "solve", "private", "ratio", "compiles",
            "gap", "status"]
    print(" | ".join(f"{c:>11}" for c in cols))
    for m in args.m:
        r = run(m, args.repeat)
        vals = [f"{m:>11d}"] + [f"{r[c]:>11.3f}" for c in cols[1:6]] + [
            f"{r['ratio']:>10.1f}x", f"{int(r['compiles']):>11d}", f"{r['gap']:>11.3f}",
            f"{r['status']:>11}"]
        print(" | ".join(vals), flush=True)


if __name__ == "__main__":
    main()
