"""Clipping private data into a public domain, and the noisy count of clipped records."""

import math

import numpy as np
import pytest

from cvxdp.errors import BudgetError, PrivacySpecError
from cvxdp.privacy.clipping import clip_rows_l2, clip_to_box, noisy_count


def test_clip_to_box_moves_only_rows_outside_and_counts_them():
    pts = np.array([[0.0, 0.0], [3.0, 0.5], [-0.5, -9.0], [1.0, 1.0]])
    out, count = clip_to_box(pts, -1.0, 1.0)
    assert count == 2
    np.testing.assert_array_equal(out, [[0, 0], [1, 0.5], [-0.5, -1], [1, 1]])
    assert pts[1, 0] == 3.0                                   # input untouched


def test_clip_rows_l2_scales_long_rows_to_the_bound_even_when_the_norm_overflows():
    rows = np.array([[3.0, 4.0], [0.3, 0.4], [1e200, 1e200]])
    with np.errstate(all="raise"):
        out, count = clip_rows_l2(rows, 1.0)
    assert count == 2
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), [1.0, 0.5, 1.0], rtol=1e-12)
    np.testing.assert_allclose(out[0], [0.6, 0.8])
    np.testing.assert_allclose(out[2], [math.sqrt(0.5)] * 2)


def test_noisy_count_laplace_and_gaussian_scales():
    gen = np.random.default_rng(0)
    vals = [noisy_count(5, rng=gen, epsilon=0.5)[0] for _ in range(4000)]
    # Laplace(1/eps): mean 5, mean absolute deviation 1/eps = 2
    assert abs(np.mean(vals) - 5) < 0.15
    assert np.mean(np.abs(np.asarray(vals) - 5)) == pytest.approx(2.0, rel=0.05)
    val, rec = noisy_count(5, rng=1, rho=0.125)
    assert rec.params["sigma"] == pytest.approx(2.0)          # 1/sqrt(2 rho)
    g = [noisy_count(0, rng=gen, rho=0.125)[0] for _ in range(4000)]
    assert np.std(g) == pytest.approx(2.0, rel=0.05)


def test_noisy_count_rejects_bad_budgets():
    with pytest.raises(PrivacySpecError, match="exactly one"):
        noisy_count(1, rng=0)
    with pytest.raises(BudgetError, match="epsilon"):
        noisy_count(1, rng=0, epsilon=-1.0)
    with pytest.raises(BudgetError, match="rho"):
        noisy_count(1, rng=0, rho=float("nan"))


def test_rows_normalised_to_the_bound_are_not_counted_as_clipped():
    rows = np.random.default_rng(0).normal(size=(300, 7))
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)     # norms 1 up to one rounding
    rows[:3] *= 2.0
    out, count = clip_rows_l2(rows, 1.0)
    assert count == 3
    assert np.all(np.linalg.norm(out, axis=1) <= 1.0 + 4 * 2.0 ** -53)
