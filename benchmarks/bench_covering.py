"""Benchmark of the private covering SDP / LP (dense MWU; Song, Xue & Zhang 2025, App. B).

For each instance (seeded ``random_covering_sdp`` / ``random_covering_lp``), budget and density
``s`` the private solver (default ``practical`` schedule, ``opt`` unknown, so the trace is chosen
privately) is compared with the exact CVXPY/Clarabel solve on the same data:

* ``frac_cov``: fraction of constraints met (``<A_i, X> >= 1``); ``viol/s``: violated / s;
* ``cost/OPT``: trace of the private answer over OPT;
* ``ident/OPT``: the public baseline ``X = c I`` (``x = c 1``) with the smallest ``c`` leaving at
  most ``s`` constraints violated (non-private: it looks at the data) -- the bar to beat;
* ``nonpriv/OPT``: the same dense MWU with an exact oracle (eps = 1e4), to separate the cost of
  privacy from the MWU's own approximation;
* ``cov@OPT``: fraction met by ``OPT * P_bar`` (the MWU's direction at the right trace);
* ``t_priv``, ``t_exact`` and their ratio (private / exact).

``python benchmarks/bench_covering.py [--quick]`` prints the table (means over seeds).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from cvxdp.solvers.covering.covering import (
    covering_lp,
    covering_sdp,
    random_covering_lp,
    random_covering_sdp,
)


def _identity_baseline(prob, s: int) -> float:
    """Smallest c such that c * I (or c * 1) violates at most s constraints."""
    dim = prob.data.shape[1]
    base = np.eye(dim) if prob.kind == "sdp" else np.ones(dim)
    need = np.sort(1.0 / np.maximum(prob.coverage(base), 1e-300))
    return float(need[-s - 1] if s < need.size else need[0]) * dim


def run_case(kind: str, m: int, dim: int, eps: float, s_frac: float, seeds: int) -> dict:
    data = (random_covering_sdp(m, dim, rng=m + dim) if kind == "sdp"
            else random_covering_lp(m, dim, rng=m + dim))
    prob = covering_sdp(data) if kind == "sdp" else covering_lp(data)
    _, opt, t_exact, _ = prob.exact()
    s = max(1, int(s_frac * m))
    acc = {k: [] for k in ("frac", "viol", "cost", "covopt", "t", "np")}
    for seed in range(seeds):
        t0 = time.perf_counter()
        sol = prob.solve_private(epsilon=eps, delta=1e-6, s=s, rng=seed)
        acc["t"].append(time.perf_counter() - t0)
        cov = prob.coverage(sol.point)
        acc["frac"].append(float(np.mean(cov >= 1 - 1e-9)))
        acc["viol"].append(float(np.sum(cov < 1 - 1e-9)) / s)
        acc["cost"].append(sol.value / opt)
        acc["covopt"].append(float(np.mean(prob.coverage(sol.point * opt / sol.value) >= 1 - 1e-9)))
        nonpriv = prob.solve_private(epsilon=1e4, delta=1e-6, s=s, T=sol.iterations, rng=seed)
        acc["np"].append(nonpriv.value / opt)
    t_priv = float(np.mean(acc["t"]))
    return {
        "problem": f"covering_{kind}", "m": m, "dim": dim, "eps": eps, "delta": 1e-6, "s": s,
        "T": sol.iterations, "frac_cov": float(np.mean(acc["frac"])),
        "viol/s": float(np.mean(acc["viol"])), "cost/OPT": float(np.mean(acc["cost"])),
        "ident/OPT": _identity_baseline(prob, s) / opt,
        "nonpriv/OPT": float(np.mean(acc["np"])), "cov@OPT": float(np.mean(acc["covopt"])),
        "t_priv": t_priv, "t_exact": t_exact, "ratio": t_priv / t_exact,
    }


def main(quick: bool = False) -> list[dict]:
    if quick:
        sdp = [(200, 4), (1000, 10)]
        lp = [(500, 20)]
        epss, fracs, seeds = (1.0, 4.0), (0.1,), 2
    else:
        sdp = [(m, r) for r in (4, 10, 20) for m in (100, 500, 2000)]
        lp = [(500, 20), (2000, 50)]
        epss, fracs, seeds = (0.5, 1.0, 4.0), (0.05, 0.1), 3
    rows = []
    for kind, cases in (("sdp", sdp), ("lp", lp)):
        for m, dim in cases:
            for eps in epss:
                for f in fracs:
                    rows.append(run_case(kind, m, dim, eps, f, seeds))
    return rows


def _print(rows: list[dict]) -> None:
    cols = ["problem", "m", "dim", "eps", "s", "T", "frac_cov", "viol/s", "cost/OPT", "ident/OPT",
            "nonpriv/OPT", "cov@OPT", "t_priv", "t_exact", "ratio"]
    print(" | ".join(cols))
    for r in rows:
        print(" | ".join(f"{r[c]:.3g}" if isinstance(r[c], float) else str(r[c]) for c in cols))


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    _print(main(quick=ap.parse_args().quick))
