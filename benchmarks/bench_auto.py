"""Where each general mechanism wins, and what ``mechanism="auto"`` picks there.

Two families from the regime analysis of the MWU (Song, Xue & Zhang 2025, "Differentially
private symmetric cone programming"): its noise does not grow with the number of private rows
``m`` while perturbation's tightening grows like ``sqrt(log m)`` per row and its noise like the
square root of the number of private entries; on SDPs the MWU's violation falls with the order
``r`` while perturbation's PSD tightening ``tau I`` grows with ``r``.

* ``many-rows LP``: ``max c'x  s.t. A x <= 1, 0 <= x <= 1`` with ``n = 10`` and private ``A``
  (``ConstraintPrivacy``, sensitivity 1e-4 per entry), ``m = 1e2 .. 1e4`` rows.
* ``SDP``: ``max tr(C X)  s.t.  X >> 0, tr X <= r, tr(A_i X) <= 1`` (i = 1, 2, 3) with private
  symmetric ``A_i`` (sensitivity 1e-3 per entry), ``r = 5 .. 40``.

Per row: each mechanism's median TRUE relative gap and worst TRUE violation over the seeds, its
median certified relative gap bound and violation bound, its time over the exact solve, and the
mechanism ``auto`` ran with its gap. ``auto/best`` is auto's gap over the better mechanism's
gap, where "better" is the lower ``max(gap, violation)``; the goal is <= 1.1.

Usage::

    python benchmarks/bench_auto.py                 # both families, 3 seeds, epsilon 1
    python benchmarks/bench_auto.py --family lp --m 100 1000 --seeds 2
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from typing import Any

import cvxpy as cp
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from bench_gallery import user_violation  # noqa: E402

import cvxdp  # noqa: E402

DELTA = 1e-6


def many_rows_lp(m: int, n: int = 10, seed: int = 0) -> tuple[cp.Problem, Any]:
    rng = np.random.default_rng(seed)
    A = cp.Parameter((m, n), name="A", value=rng.uniform(0.0, 1.0, (m, n)))
    c = rng.uniform(0.5, 1.5, n)
    x = cp.Variable(n, name="x")
    prob = cp.Problem(cp.Maximize(c @ x), [A @ x <= 1, x >= 0, x <= 1])
    return prob, cvxdp.ConstraintPrivacy(A, sensitivity=1e-4)


def sdp(r: int, k: int = 3, seed: int = 0) -> tuple[cp.Problem, Any]:
    rng = np.random.default_rng(seed)
    G = rng.normal(size=(r, r))
    C = G @ G.T / r
    As = []
    for i in range(k):
        M = rng.normal(size=(r, r)) / np.sqrt(r)
        As.append(cp.Parameter((r, r), symmetric=True, name=f"A{i}",
                               value=(M @ M.T + np.eye(r)) / r))
    X = cp.Variable((r, r), symmetric=True, name="X")
    cons = [X >> 0, cp.trace(X) <= r] + [cp.trace(A @ X) <= 1 for A in As]
    prob = cp.Problem(cp.Maximize(cp.trace(C @ X)), cons)
    return prob, [cvxdp.ConstraintPrivacy(A, sensitivity=1e-3) for A in As]


def _rel_gap(prob: cp.Problem, f_star: float) -> float:
    if any(v.value is None for v in prob.variables()):
        return float("nan")
    sense = 1.0 if isinstance(prob.objective, cp.Minimize) else -1.0
    return sense * (float(prob.objective.value) - f_star) / max(1.0, abs(f_star))


def run(build, mech: str, eps: float, seed: int, f_star: float) -> dict[str, Any]:
    prob, spec = build()
    t0 = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sol = cvxdp.solve_private(prob, epsilon=eps, delta=DELTA, private=spec, rng=seed,
                                      mechanism=mech)
    except cvxdp.CvxdpError as err:
        return {"status": "refused: " + str(err)[:50]}
    out = {"status": sol.status, "time": time.perf_counter() - t0,
           "ran": sol.info.get("mechanism", mech), "gap": _rel_gap(prob, f_star),
           "viol": user_violation(prob)}
    cert = sol.certificate
    out["cgap"] = cert.relative_gap_bound if cert is not None else float("nan")
    out["cviol"] = cert.violation_bound if cert is not None else float("nan")
    auto = sol.info.get("auto")
    if isinstance(auto, dict):
        out["why"] = auto
    return out


def _med(rows: list[dict[str, Any]], key: str, agg=np.median) -> float:
    """``agg`` over the seeds that have ``key``; an infinite certified bound counts as inf
    (only a missing value, nan, is left out)."""
    vals = [r[key] for r in rows if key in r and not np.isnan(r[key])]
    return float(agg(vals)) if vals else float("nan")


def bench(label: str, sizes: list[int], builder, eps: float, seeds: int, out=print) -> None:
    out(f"\n{label}, epsilon={eps:g}, delta={DELTA:g}, {seeds} seeds "
        "(gap, viol: TRUE relative gap / violation; cgap, cviol: certified; t: / exact)")
    head = (f"{'size':>6} | {'pert gap':>8} {'viol':>7} {'cgap':>7} {'t':>5} | "
            f"{'mwu gap':>8} {'viol':>7} {'cgap':>7} {'cviol':>7} {'t':>5} | "
            f"{'auto':>5} {'gap':>8} {'cgap':>7} {'cviol':>7} {'auto/best':>9}")
    out(head)
    out("-" * len(head))
    for size in sizes:
        def build(size=size):
            return builder(size)

        prob, _ = build()
        t0 = time.perf_counter()
        f_star = float(prob.solve(solver=cp.CLARABEL))
        t_exact = time.perf_counter() - t0
        res = {mech: [run(build, mech, eps, s, f_star) for s in range(seeds)]
               for mech in ("perturbation", "mwu", "auto")}
        p, w, a = res["perturbation"], res["mwu"], res["auto"]

        def score(rows):
            return max(_med(rows, "gap"), _med(rows, "viol", np.max))

        best = min(score(p), score(w))
        ran = sorted({r.get("ran", "-") for r in a})
        ratio = score(a) / best if best > 0 else float("nan")
        out(f"{size:>6} | {_med(p, 'gap'):8.3g} {_med(p, 'viol', np.max):7.2g} "
            f"{_med(p, 'cgap'):7.3g} {_med(p, 'time') / t_exact:5.1f} | "
            f"{_med(w, 'gap'):8.3g} {_med(w, 'viol', np.max):7.2g} {_med(w, 'cgap'):7.3g} "
            f"{_med(w, 'cviol'):7.2g} {_med(w, 'time') / t_exact:5.1f} | "
            f"{'/'.join(x[:4] for x in ran):>5} {_med(a, 'gap'):8.3g} {_med(a, 'cgap'):7.3g} "
            f"{_med(a, 'cviol'):7.2g} {ratio:9.2f}")
        for r in a[:1]:
            pred = r.get("why", {}).get("predicted")
            if pred:
                p_, w_ = pred["perturbation"], pred["mwu"]
                out(f"{'':>6}   auto predicted (gap shift, violation; canonical rows): "
                    f"perturbation ({p_.get('gap_shift', float('nan')):.3g}, "
                    f"{p_.get('violation', float('nan')):.3g}), MWU "
                    f"({w_.get('gap_shift') or float('nan'):.3g}, "
                    f"{w_.get('violation') or float('nan'):.3g})")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--family", choices=["lp", "sdp", "both"], default="both")
    ap.add_argument("--m", type=int, nargs="*", default=[100, 1000, 10000])
    ap.add_argument("--r", type=int, nargs="*", default=[5, 10, 20, 40])
    ap.add_argument("--eps", type=float, default=1.0)
    ap.add_argument("--seeds", type=int, default=3)
    args = ap.parse_args(argv)
    if args.family in ("lp", "both"):
        bench("many-rows LP (n=10, private A, sensitivity 1e-4)", args.m, many_rows_lp,
              args.eps, args.seeds)
    if args.family in ("sdp", "both"):
        bench("SDP (3 private A_i, sensitivity 1e-3)", args.r, sdp, args.eps, args.seeds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
