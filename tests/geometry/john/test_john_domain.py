"""Private JE on data outside the public domain: clipped or enforced, never refused (item 4).

A refusal is a deterministic function of the private data and leaks one bit; the private path
clips rows to ``row_bound``, zeroes non-finite rows, enforces the eigenvalue floor by a public
ridge instead of checking ``sigma_min(A)``, and releases the number of clipped rows only as a
noisy count charged to the budget (``count_clipped=``).
"""

import math

import numpy as np
import pytest

from cvxdp.errors import UnsupportedProblemError
from cvxdp.geometry.john.john import john_ellipsoid
from cvxdp.privacy.calibration import calibrate_gaussian

KW = dict(epsilon=1.0, delta=1e-6, closeness=1e-9, row_bound=1.0, rng=0)


def _polytope(seed, n, d):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n, d)) / math.sqrt(d)
    # strictly inside the unit ball (a row scaled to norm 1 can exceed 1 by one rounding)
    return A * np.minimum(1.0, 0.99 / np.linalg.norm(A, axis=1))[:, None]


def test_sigma_min_above_the_datas_is_enforced_by_a_public_ridge_not_refused():
    A = _polytope(0, 400, 4)
    smin = np.linalg.svd(A, compute_uv=False)[-1]
    declared = 3.0 * smin  # a wrong public bound: the data violate it
    sol = john_ellipsoid(A).solve_private(sigma_min=declared, **KW)
    w_min = 0.1 * 4 / 400
    # the floor the sensitivity proof needs is a ridge computed from public numbers only
    assert sol.info["ridge"] == pytest.approx(w_min * declared**2, rel=1e-12)
    assert sol.info["eig_floor"] == pytest.approx(w_min * declared**2, rel=1e-12)
    assert sol.privacy.guarantee == "dp" and sol.privacy.epsilon == pytest.approx(1.0)


def test_rank_deficient_data_are_not_refused_by_the_private_path():
    rng = np.random.default_rng(1)
    A = np.outer(rng.uniform(-1, 1, 60), [0.6, 0.8])  # rank 1: P is unbounded
    prob = john_ellipsoid(A)  # building the problem reads nothing but the shape
    sol = prob.solve_private(**KW)
    assert sol.status == "user_limit" and np.all(np.isfinite(sol.ellipsoid.matrix))
    with pytest.raises(UnsupportedProblemError, match="full column rank"):
        prob.solve()  # the exact (non-private) reference may refuse


def test_nonfinite_rows_are_zeroed_and_counted_not_refused():
    A = _polytope(2, 300, 3)
    A[[5, 9]] = [[np.nan, 0.1, 0.2], [np.inf, 0.0, 1.0]]
    sol = john_ellipsoid(A).solve_private(count_clipped=True, **{**KW, "epsilon": 50.0})
    assert np.all(np.isfinite(sol.ellipsoid.matrix))
    assert abs(sol.info["clipped_rows_noisy"] - 2) < 3.0  # sigma_count ~ 0.44 at eps = 50


def test_noisy_clipped_count_is_gaussian_share_of_the_gdp_budget():
    A = _polytope(3, 500, 3)
    A[:7] *= 4.0  # 7 rows above row_bound = 1 (norms near 1 before)
    long_rows = int(np.sum(np.linalg.norm(A, axis=1) > 1.0))
    eps, delta = 2.0, 1e-6
    sol = john_ellipsoid(A).solve_private(count_clipped=True, **{**KW, "epsilon": eps})
    mu = 1.0 / calibrate_gaussian(epsilon=eps, delta=delta, sensitivity=1.0)
    rec = sol.privacy.records[0].params
    # shares of mu^2 add up to the whole budget and the count gets the default 10%
    total = (rec["mu_uniform"] ** 2 + rec["mu_iterations"] ** 2 + rec["mu_gram"] ** 2
             + rec["mu_scale"] ** 2 + rec["mu_count"] ** 2)
    assert total == pytest.approx(mu**2, rel=1e-9)
    assert rec["mu_count"] == pytest.approx(mu * math.sqrt(0.1), rel=1e-9)
    assert sol.info["sigma_count"] == pytest.approx(1.0 / rec["mu_count"], rel=1e-9)
    assert sol.privacy.epsilon == pytest.approx(eps, rel=1e-9)
    # the released count is the exact count plus N(0, sigma_count^2): within 4 sigma
    assert abs(sol.info["clipped_rows_noisy"] - long_rows) < 4 * sol.info["sigma_count"]
    # without the opt-in nothing about the count is released
    plain = john_ellipsoid(A).solve_private(**{**KW, "epsilon": eps})
    assert not any("clipped_rows" in k for k in plain.info)
