"""Relative DP random projection (paper 003, §7, Fig. 12): leverage for X and the report."""

from __future__ import annotations

import numpy as np
import pytest

from cvxdp.estimation.random_projection import (
    clip_rows,
    relative_leverage,
    relative_random_projection,
    rp_leverage_bound,
)
from cvxdp.privacy.ndis import ndis_delta


def _lev(a: np.ndarray, w: np.ndarray) -> float:
    try:
        return float(w @ np.linalg.solve(a.T @ a, w))
    except np.linalg.LinAlgError:
        return 1.0


def _brute(d_mat: np.ndarray) -> float:
    rows = list(d_mat)
    base = [d_mat] + [np.delete(d_mat, i, axis=0) for i in range(len(rows))] + [
        np.vstack([d_mat, u]) for u in rows]
    best = 0.0
    for a in base:
        for i in range(a.shape[0]):
            best = max(best, _lev(a, a[i]))  # remove row i of a
        for u in rows:
            best = max(best, _lev(np.vstack([a, u]), u))  # add u to a
    return best


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_relative_leverage_matches_brute_force(seed):
    d_mat = np.random.default_rng(seed).standard_normal((9, 2))
    assert relative_leverage(d_mat, block=4) == pytest.approx(_brute(d_mat), rel=1e-10)


def test_noise_free_when_leverage_is_small_and_the_relative_claim_holds():
    rng = np.random.default_rng(0)
    data = rng.uniform(-1, 1, (3000, 2)) / 2
    eps, delta, r = 1.0, 1e-4, 10
    sketch, report = relative_random_projection(data, epsilon=eps, delta=delta, r=r,
                                                row_bound=1.0, rng=1)
    assert report.guarantee == "relative_dp" and report.records == ()
    assert "NOT differential privacy" in report.neighbouring
    assert report.details["noise_free"] and report.details["sigma"] == 0.0
    clipped = clip_rows(data, 1.0)
    assert "leverage_X" not in report.details  # exact private quantity: never released
    assert relative_leverage(clipped) <= rp_leverage_bound(epsilon=eps, delta=delta, r=r)
    # the worst pair inside X (remove the highest-leverage row) is (eps, delta)-close, by NDIS
    h = np.einsum("ij,ij->i", clipped @ np.linalg.inv(clipped.T @ clipped), clipped)
    worst = np.delete(clipped, int(np.argmax(h)), axis=0)
    z = np.zeros(2 * r)
    got = ndis_delta(epsilon=eps, mean1=z, cov1=np.kron(np.eye(r), clipped.T @ clipped),
                     mean2=z, cov2=np.kron(np.eye(r), worst.T @ worst), symmetric=True)
    assert got <= delta
    assert sketch.shape == (2, r)


def test_falls_back_to_mrp_when_leverage_is_large():
    data = np.random.default_rng(3).standard_normal((12, 3))
    _, report = relative_random_projection(data, epsilon=1.0, delta=1e-5, r=10, row_bound=1.0,
                                           rng=0)
    assert not report.details["noise_free"] and report.details["sigma"] > 0
    assert report.guarantee == "relative_dp"
