"""The Laplace mechanism's record and the tail bound on its noise's norm."""

import math

import numpy as np
import pytest

from cvxdp.errors import BudgetError
from cvxdp.privacy.budgets import ZCDP, ApproxDP, PureDP
from cvxdp.privacy.laplace import laplace_epsilon, laplace_norm_bound, laplace_record


def test_record_states_epsilon_from_l1_sensitivity_and_scale():
    rec = laplace_record(scale=40.0, l1_sensitivity=20.0)
    assert rec.budget.epsilon == pytest.approx(0.5, rel=1e-15)
    assert isinstance(rec.budget, PureDP)
    assert rec.zcdp.rho == pytest.approx(0.125, rel=1e-15)   # eps^2 / 2
    with pytest.raises(BudgetError, match="scale"):
        laplace_record(scale=0.0, l1_sensitivity=1.0)


def test_epsilon_for_each_budget_kind():
    assert laplace_epsilon(PureDP(0.3)) == 0.3
    assert laplace_epsilon(ApproxDP(2.0, 1e-6)) == 2.0
    assert laplace_epsilon(ZCDP(0.08)) == pytest.approx(0.4, rel=1e-15)


@pytest.mark.parametrize("k", [1, 10, 200])
def test_norm_bound_fails_at_most_its_probability(k):
    # fail at e^{-s} = 0.1: the simulated failure rate over 20,000 draws stays below 0.1
    B = float(laplace_norm_bound(k, math.log(10.0)))
    g = np.random.default_rng(k).laplace(0.0, 1.0, (20000, k))
    fail = np.mean(np.linalg.norm(g, axis=1) > B)
    assert fail <= 0.1 + 3 * np.sqrt(0.1 * 0.9 / 20000)   # exact at k = 1: P(|g| > ln 10) = 0.1
    # and it is informative: within 2.5x the simulated 90% quantile
    assert B <= 2.5 * np.quantile(np.linalg.norm(g, axis=1), 0.9)


def test_norm_bound_grows_like_sqrt_2k():
    k = np.array([1e4, 1e6])
    ratio = laplace_norm_bound(k, math.log(1e3)) / np.sqrt(2 * k)
    assert ratio[1] < ratio[0] < 1.3 and ratio[1] < 1.05
    assert laplace_norm_bound(0, 3.0) == 0.0
