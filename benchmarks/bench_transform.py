"""Cost of the CVXPY -> cone program transform and its sensitivity propagation.

For LPs ``max 1'x s.t. A x <= 1, x >= 0`` with a private Parameter ``A`` (m x n) and SDPs
``min tr(C X) s.t. <F_i, X> <= 1, tr X = 1, X >> 0`` with private ``F`` stacked in one Parameter,
report the time of CVXPY's own compile (``get_problem_data``, first call and cached DPP call),
``to_scp`` (cached compile + dims/cone), sensitivity propagation, the ``from_scp`` map back, and the
exact Clarabel reference solve; ratios are against the exact solve.

Usage: ``python benchmarks/bench_transform.py [--quick]``.
"""

from __future__ import annotations

import pathlib
import sys
import time

import cvxpy as cp
import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

from cvxdp.specs import ConstraintPrivacy  # noqa: E402
from cvxdp.transform import from_scp, solve_exact, to_scp  # noqa: E402


def _timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def _lp(m: int, n: int, rng: np.random.Generator):
    A = cp.Parameter((m, n), name="A", value=rng.uniform(0.1, 1.0, (m, n)))
    x = cp.Variable(n, nonneg=True)
    return cp.Problem(cp.Maximize(cp.sum(x)), [A @ x <= 1]), A


def _sdp(m: int, r: int, rng: np.random.Generator):
    F = cp.Parameter((m, r * r), name="F", value=rng.normal(size=(m, r * r)) / r)
    X = cp.Variable((r, r), PSD=True)
    C = rng.normal(size=(r, r))
    prob = cp.Problem(cp.Minimize(cp.trace((C + C.T) @ X)),
                      [F @ cp.vec(X, order="F") <= 1, cp.trace(X) == 1])
    return prob, F


def main(quick: bool = False) -> list[dict]:
    rng = np.random.default_rng(0)
    cases = [("lp", 100, 30), ("lp", 1000, 200), ("sdp", 50, 10)]
    if not quick:
        cases += [("lp", 3000, 600), ("sdp", 200, 30)]
    rows = []
    for kind, m, n in cases:
        prob, param = (_lp if kind == "lp" else _sdp)(m, n, rng)
        opts = {"use_quad_obj": False}
        _, t_first = _timed(lambda: prob.get_problem_data(cp.SCS, solver_opts=opts))  # noqa: B023
        _, t_cached = _timed(lambda: prob.get_problem_data(cp.SCS, solver_opts=opts))  # noqa: B023
        scp, t_scp = _timed(lambda: to_scp(prob))  # noqa: B023
        spec = ConstraintPrivacy(param, sensitivity=0.01)
        scp, t_sens = _timed(lambda: to_scp(prob, private=spec))  # noqa: B023
        exact, t_exact = _timed(lambda: solve_exact(scp))  # noqa: B023
        _, t_back = _timed(lambda: from_scp(prob, scp, exact.x))  # noqa: B023
        rows.append({
            "problem": kind, "size": f"{m}x{n}", "rows": scp.m, "cols": scp.n,
            "compile_first_s": round(t_first, 4), "compile_cached_s": round(t_cached, 4),
            "to_scp_s": round(t_scp, 4), "to_scp_with_sens_s": round(t_sens, 4),
            "from_scp_s": round(t_back, 4), "exact_s": round(t_exact, 4),
            "transform_vs_exact": round((t_sens + t_back) / t_exact, 3),
            "constraint_inf": round(scp.sensitivity.constraint_inf, 4),
        })
    return rows


if __name__ == "__main__":
    out = main(quick="--quick" in sys.argv)
    cols = list(out[0])
    print(" | ".join(cols))
    for row in out:
        print(" | ".join(str(row[c]) for c in cols))
