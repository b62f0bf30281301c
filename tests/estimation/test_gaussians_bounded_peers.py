"""With a public box the private mean is at least as good as the better of diffprivlib's
``tools.mean`` (given the same box) and cvxdp's own estimate without the box."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from cvxdp.estimation.gaussians import GaussianSampleWarning, private_gaussian

SEEDS = range(5)


def _errors(n: int, eps: float, lo: float, hi: float) -> dict[str, list[float]]:
    tools = pytest.importorskip("diffprivlib.tools")
    out: dict[str, list[float]] = {"bounded": [], "unbounded": [], "diffprivlib": []}
    for s in SEEDS:
        x = np.random.default_rng(s).standard_normal((n, 5)) + 1000.0
        b = private_gaussian(x, epsilon=eps, delta=1e-6, bounds=(lo, hi), rng=s + 300)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", GaussianSampleWarning)
            u = private_gaussian(x, epsilon=eps, delta=1e-6, rng=s + 100)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # diffprivlib's own PrivacyLeakWarning etc.
            m = tools.mean(x, epsilon=eps, bounds=(lo, hi), axis=0, random_state=s + 500)
        out["bounded"].append(float(np.linalg.norm(b.mean - 1000.0)))
        out["unbounded"].append(float(np.linalg.norm(u.mean - 1000.0)))
        out["diffprivlib"].append(float(np.linalg.norm(np.asarray(m) - 1000.0)))
    return {k: float(np.median(v)) for k, v in out.items()}


def test_box_mean_no_worse_than_diffprivlib_or_no_box():
    """d = 5, N(1000, I), n = 1e5, epsilon = 1, box [950, 1050], medians over 5 seeds
    (Mahalanobis = Euclidean error against the true mean).  Before the fix: bounded 0.0258,
    diffprivlib 0.0105, no box 0.0153 (the bounded mean spent 35% of epsilon on a K-norm
    release whose noise scales with the box width, 100 standard deviations)."""
    med = _errors(100_000, 1.0, 950.0, 1050.0)
    assert med["bounded"] <= min(med["diffprivlib"], med["unbounded"]), med
