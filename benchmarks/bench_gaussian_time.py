"""Back-to-back timing: cvxdp's default private_gaussian vs the BHS23 re-implementation.

Same process, same instance, interleaved (ours, BHS23, ours) so that the shared machine's load
affects both alike; the ratio is what is reported in docs/gaussians.md (issue 26 "done when":
the default at most a third of BHS23's time at d = 10, n = 2e5, epsilon = 1, delta = 1e-6).

Usage: ``python benchmarks/bench_gaussian_time.py [--dims 4,10] [--conds 1,1e10]``.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

from bench_gaussians import instance  # noqa: E402
from bhs23 import bhs23  # noqa: E402

from cvxdp.estimation.gaussians import GaussianSampleWarning, private_gaussian  # noqa: E402


def main(dims=(4, 10), conds=(1.0, 1e10), n=200_000, seed=0) -> None:
    for d in dims:
        for cond in conds:
            x, _, _ = instance(d, n, seed, cond=cond)
            ts = []
            for who in ("cvxdp", "bhs23", "cvxdp"):
                t0 = time.perf_counter()
                if who == "cvxdp":
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore", GaussianSampleWarning)
                        private_gaussian(x, epsilon=1.0, delta=1e-6, rng=seed + 100)
                else:
                    bhs23(x, 1.0, 1e-6, np.random.default_rng(seed + 100))
                ts.append(time.perf_counter() - t0)
            ours = 0.5 * (ts[0] + ts[2])
            print(f"d={d} kappa={cond:g} n={n}: cvxdp {ts[0]:.2f}/{ts[2]:.2f} s, BHS23 "
                  f"{ts[1]:.1f} s, ratio cvxdp/BHS23 = {ours / ts[1]:.3f}", flush=True)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--dims", default="4,10")
    ap.add_argument("--conds", default="1,1e10")
    a = ap.parse_args()
    main(tuple(int(v) for v in a.dims.split(",")), tuple(float(v) for v in a.conds.split(",")))
