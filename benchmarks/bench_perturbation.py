"""MWU vs perturbation (Gaussian / truncated) vs auto on LPs, an SOCP and an SDP (issue 23).

For each model, epsilon in {0.1, 1, 10} (delta = 1e-6) and 20 noise seeds (the data fixed):

* ``gap``: the user's objective at the released point with the TRUE data minus the exact optimum,
  signed so that > 0 is worse, over ``max(1, |optimum|)`` (median over the seeds with a point);
* ``viol``: largest violation of the user's constraints with the TRUE data (max over seeds);
* ``feas``: seeds whose released point is feasible for the TRUE data (violation <= 1e-6), out
  of the seeds that released a point; ``none``: seeds with no point (empty counterpart);
* the trivial baseline ``x = 0`` (public, feasible for every model here) and, on the private-b
  LP, the re-implemented Munoz et al. (AISTATS 2021) mechanism (``benchmarks/munoz_rhs_lp.py``).

``--gallery`` also runs the mechanisms over ``benchmarks/gallery.py`` (perturbation: 20 seeds;
MWU: seed 0 in its own process with a time limit; auto: its choice, made from public data).

Usage::

    python benchmarks/bench_perturbation.py                 # the four models
    python benchmarks/bench_perturbation.py --seeds 5 --eps 1
    python benchmarks/bench_perturbation.py --gallery --eps 1
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
from munoz_rhs_lp import munoz_rhs_lp  # noqa: E402

import cvxdp  # noqa: E402

DELTA = 1e-6
TOL = 1e-6
MECHS = {"mwu": {"mechanism": "mwu"},
         "pert-gauss": {"mechanism": "perturbation", "noise": "gaussian"},
         "pert-trunc": {"mechanism": "perturbation", "noise": "truncated"},
         "auto": {"mechanism": "auto"}}


def lp_private_A(seed: int = 0):
    """max c'x s.t. A x <= 1, x >= 0, sum(x) <= 10; A (10x6) private, entries move <= 1e-3."""
    rng = np.random.default_rng(seed)
    A = cp.Parameter((10, 6), name="A")
    A.value = rng.uniform(0.2, 1.0, (10, 6))
    x = cp.Variable(6, name="x")
    c = rng.uniform(0.5, 1.5, 6)
    prob = cp.Problem(cp.Maximize(c @ x), [A @ x <= 1, x >= 0, cp.sum(x) <= 10])
    return prob, cvxdp.ConstraintPrivacy(A, sensitivity=1e-3), None


def lp_private_b(seed: int = 0):
    """max c'x s.t. A x <= b, x >= 0, sum(x) <= 10; b (10) private, entries move <= 1e-2."""
    rng = np.random.default_rng(seed)
    A = rng.uniform(0.2, 1.0, (10, 6))
    b = cp.Parameter(10, name="b")
    b.value = rng.uniform(2.0, 3.0, 10)
    x = cp.Variable(6, name="x")
    c = rng.uniform(0.5, 1.5, 6)
    public = [x >= 0, cp.sum(x) <= 10]
    prob = cp.Problem(cp.Maximize(c @ x), [A @ x <= b, *public])
    return prob, cvxdp.ScalarPrivacy(b, sensitivity=1e-2), (c, A, b, public, x)


def socp_private_F(seed: int = 0):
    """max c'x s.t. ||F x||_2 <= 1, |x| <= 5; F (5x4) private, entries move <= 1e-3."""
    rng = np.random.default_rng(seed)
    F = cp.Parameter((5, 4), name="F")
    F.value = rng.normal(size=(5, 4))
    x = cp.Variable(4, name="x")
    c = rng.normal(size=4)
    prob = cp.Problem(cp.Maximize(c @ x), [cp.norm(F @ x) <= 1, cp.abs(x) <= 5])
    return prob, cvxdp.ConstraintPrivacy(F, sensitivity=1e-3), None


def sdp_private_C(seed: int = 0):
    """max tr(X) s.t. tr(C_i X) <= 1 (i < 4), X >> 0, tr(X) <= 10; C_i (4x4) private (1e-3)."""
    rng = np.random.default_rng(seed)
    Cs = []
    for i in range(4):
        G = rng.normal(size=(4, 4))
        C = cp.Parameter((4, 4), name=f"C{i}")
        C.value = G @ G.T / 4 + np.eye(4)
        Cs.append(C)
    X = cp.Variable((4, 4), symmetric=True, name="X")
    cons = [cp.trace(C @ X) <= 1 for C in Cs] + [X >> 0, cp.trace(X) <= 10]
    prob = cp.Problem(cp.Maximize(cp.trace(X)), cons)
    return prob, cvxdp.ConstraintPrivacy(Cs, sensitivity=1e-3), None


MODELS = {"LP private A": lp_private_A, "LP private b": lp_private_b,
          "SOCP private F": socp_private_F, "SDP private C_i": sdp_private_C}


def _gap(prob: cp.Problem, f_star: float) -> float | None:
    if any(v.value is None for v in prob.variables()):
        return None
    f = float(prob.objective.value)
    sense = 1.0 if isinstance(prob.objective, cp.Minimize) else -1.0
    return sense * (f - f_star) / max(1.0, abs(f_star))


def run_mechanism(build, mech: str, eps: float, seed: int, f_star: float) -> dict[str, Any]:
    """One private solve; returns gap / violation / status / time (every error caught)."""
    prob, spec, munoz = build()
    t0 = time.perf_counter()
    out: dict[str, Any] = {"seed": seed}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if mech == "trivial":
                for v in prob.variables():
                    v.value = np.zeros(v.shape)
                out["status"] = "public"
            elif mech == "munoz":
                c, A, b, public, x = munoz
                xs, info = munoz_rhs_lp(c, A, b.value, public, x,
                                        sensitivity_l1=b.size * spec.sensitivity,
                                        epsilon=eps, delta=DELTA,
                                        rng=np.random.default_rng(seed))
                out["status"] = info["status"]
                if xs is None:
                    x.value = None
            else:
                sol = cvxdp.solve_private(prob, epsilon=eps, delta=DELTA, private=spec,
                                          rng=seed, **MECHS[mech])
                out["status"] = sol.status
                out["ran"] = sol.info.get("mechanism", mech)
                # private data in an equality: no private release can satisfy it exactly;
                # the promise is the released band 2 T_u (docs/solvers.md)
                out["eq_bound"] = sol.info.get("equality_violation_bound")
    except Exception as err:  # noqa: BLE001 - a failure is a row
        out["status"] = "error:" + type(err).__name__ + ":" + str(err)[:60]
        return out
    out["time"] = time.perf_counter() - t0
    out["gap"] = _gap(prob, f_star)
    out["viol"] = user_violation(prob) if out["gap"] is not None else None
    return out


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    pts = [r for r in rows if r.get("gap") is not None]
    gaps = [r["gap"] for r in pts]
    viol = [r["viol"] for r in pts]
    ran = sorted({r.get("ran", "") for r in rows} - {""})
    ran += sorted({str(r["status"]) for r in rows if str(r["status"]).startswith("error")})
    band = any(r.get("eq_bound") is not None for r in pts)
    if band:
        ran = [x + "+band" if x == "perturbation" else x for x in ran]
    # feasible = the promise holds: violation <= TOL, or within the released equality band
    feas = sum(r["viol"] <= TOL or (r.get("eq_bound") is not None
                                    and r["viol"] <= r["eq_bound"] + TOL) for r in pts)
    return {"n": len(rows), "points": len(pts),
            "gap": float(np.median(gaps)) if gaps else None,
            "viol": float(np.max(viol)) if viol else None,
            "feas": feas, "none": len(rows) - len(pts), "band": band,
            "errors": sum(str(r["status"]).startswith("error") for r in rows),
            "ran": "/".join(ran), "time": float(np.mean([r.get("time", 0) for r in rows]))}


def _fmt(s: dict[str, Any]) -> str:
    if s["points"] == 0:
        return f"{'no point':>8} {'':>8} {'0/0':>6} {s['none']:>4}"
    return (f"{s['gap']:8.3f} {s['viol']:8.1e} {s['feas']:>2}/{s['points']:<3} {s['none']:>4}")


def bench_models(eps_list: list[float], seeds: int, out=print) -> list[dict[str, Any]]:
    rows = []
    out(f"{'model':<16} {'eps':>5} {'mechanism':<11} {'gap':>8} {'viol':>8} {'feas':>6} "
        f"{'none':>4}  ran / s")
    for name, build in MODELS.items():
        ref, _, _ = build()
        f_star = float(ref.solve(solver=cp.CLARABEL))
        mechs = list(MECHS) + (["munoz"] if name == "LP private b" else []) + ["trivial"]
        for eps in eps_list:
            for mech in mechs:
                n = 1 if mech == "trivial" else seeds
                res = [run_mechanism(build, mech, eps, s, f_star) for s in range(n)]
                s = summarise(res)
                s.update(model=name, eps=eps, mechanism=mech)
                rows.append(s)
                out(f"{name:<16} {eps:>5g} {mech:<11} {_fmt(s)}  {s['ran']} "
                    f"{s['time']:.2f}s" + (f" errors={s['errors']}" if s["errors"] else ""))
    return rows


def bench_gallery(eps_list: list[float], seeds: int, timeout: float, out=print
                  ) -> list[dict[str, Any]]:
    import bench_gallery as bg
    import gallery

    rows = []
    out(f"{'model':<22} {'eps':>5} {'mechanism':<11} {'gap':>8} {'viol':>8} {'feas':>6} "
        f"{'none':>4}  ran")
    for entry in gallery.models():
        ref, spec, _ = entry.build(0)
        try:
            f_star = float(ref.solve())
        except Exception:  # noqa: BLE001
            continue

        def build(entry=entry):
            p, sp_, _ = entry.build(0)
            return p, sp_, None

        for eps in eps_list:
            res_mwu = bg.run_isolated(entry.name, eps, "mwu", timeout)
            s_mwu = {"n": 1, "points": int(res_mwu.get("gap") is not None),
                     "gap": res_mwu.get("gap"), "viol": res_mwu.get("violation"),
                     "feas": int(res_mwu.get("violation") is not None
                                 and res_mwu["violation"] <= TOL),
                     "none": int(res_mwu.get("gap") is None), "errors": 0,
                     "ran": str(res_mwu.get("outcome")), "time": res_mwu.get("t_private", 0)}
            for mech in ["pert-gauss", "pert-trunc", "auto", "mwu"]:
                if mech == "mwu":
                    s = dict(s_mwu)
                elif mech == "auto":
                    # the default mechanism, over the same seeds (its MWU choices -- the
                    # covering models -- are fast)
                    s = summarise([run_mechanism(build, "auto", eps, k, f_star)
                                   for k in range(seeds)])
                else:
                    s = summarise([run_mechanism(build, mech, eps, k, f_star)
                                   for k in range(seeds)])
                    if s["errors"] and s["points"] == 0:
                        r = run_mechanism(build, mech, eps, 0, f_star)
                        s["ran"] = r["status"]
                s.update(model=entry.name, eps=eps, mechanism=mech)
                rows.append(s)
                out(f"{entry.name:<22} {eps:>5g} {mech:<11} {_fmt(s)}  {s['ran']}")
    return rows


def gallery_summary(rows: list[dict[str, Any]], eps: float = 1.0) -> str:
    """The issue-23 criteria on the gallery rows at ``eps``.

    * feasible pairs: (model, seed) pairs whose released point is feasible for the TRUE data,
      over the pairs that released a point, per perturbation variant;
    * auto vs the better mechanism: per model where some mechanism released a point feasible
      for the true data, the better mechanism is the one with the smaller median gap among the
      feasible ones (MWU, perturbation-gaussian); auto is "within 10%" when its released points
      are feasible and its gap is at most the better gap + 0.1 (gaps are relative to
      ``max(1, |optimum|)``).
    """
    at = [r for r in rows if r["eps"] == eps]
    out = []
    for mech in ("pert-gauss", "pert-trunc"):
        rs = [r for r in at if r["mechanism"] == mech]
        strict = [r for r in rs if not r.get("band")]
        pts = sum(r["points"] for r in strict)
        feas = sum(r["feas"] for r in strict)
        out.append(f"{mech}: feasible for the true data on {feas}/{pts} (model, seed) pairs "
                   f"with a released point ({100 * feas / max(pts, 1):.1f}%); models with a "
                   f"point: {sum(r['points'] > 0 for r in rs)}/{len(rs)}")
        banded = [r for r in rs if r.get("band")]
        if banded:
            bp = sum(r["points"] for r in banded)
            bf = sum(r["feas"] for r in banded)
            out.append(f"  {len(banded)} models with private data in an equality (no private "
                       f"release satisfies it exactly): violation within the released band "
                       f"on {bf}/{bp} pairs")
    models = sorted({r["model"] for r in at})
    ok = total = 0
    for m in models:
        by = {r["mechanism"]: r for r in at if r["model"] == m}
        cands = [by[k] for k in ("mwu", "pert-gauss") if k in by and by[k]["points"]
                 and by[k]["feas"] == by[k]["points"]]
        if not cands:
            continue
        total += 1
        best = min(c["gap"] for c in cands)
        a = by.get("auto")
        if a and a["points"] and a["feas"] == a["points"] and a["gap"] <= best + 0.1:
            ok += 1
    out.append(f"auto within 0.1 of the better feasible mechanism on {ok}/{total} models "
               "where one released feasible points")
    return "\n".join(out)


def parse_table(path: str) -> list[dict[str, Any]]:
    """Rows back from a printed table of this script (for :func:`gallery_summary`)."""
    rows = []
    for line in open(path).read().splitlines()[1:]:
        parts = line.split()
        if len(parts) < 5 or not parts[1].replace(".", "", 1).replace("e", "", 1).isdigit():
            continue  # the criteria printed after the table
        model, eps, mech = parts[0], float(parts[1]), parts[2]
        if parts[3] == "no":
            rows.append({"model": model, "eps": eps, "mechanism": mech, "points": 0, "feas": 0,
                         "gap": None})
            continue
        feas, pts = parts[5].split("/") if "/" in parts[5] else (parts[5], parts[6])
        rows.append({"model": model, "eps": eps, "mechanism": mech, "gap": float(parts[3]),
                     "viol": float(parts[4]), "feas": int(feas), "points": int(pts),
                     "band": "+band" in line})
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--eps", type=float, nargs="+", default=[0.1, 1.0, 10.0])
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--gallery", action="store_true")
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--summarise", metavar="FILE", help="criteria of a saved --gallery table")
    args = ap.parse_args(argv)
    if args.summarise:
        rows = parse_table(args.summarise)
        for e in sorted({r["eps"] for r in rows}):
            print(f"epsilon = {e:g}:\n" + gallery_summary(rows, e))
    elif args.gallery:
        rows = bench_gallery(args.eps, args.seeds, args.timeout)
        for e in args.eps:
            print(f"epsilon = {e:g}:\n" + gallery_summary(rows, e))
    else:
        bench_models(args.eps, args.seeds)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
