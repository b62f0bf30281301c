"""The Chernoff bound on a weighted sum of Exp(1) variables (noise_tails.exp_sum_bound): valid
on draws, and computed once per distinct weight to the same bits as term by term."""

from __future__ import annotations

import math

import numpy as np
import pytest

from cvxdp.solvers.perturbation.noise_tails import exp_sum_bound


def _term_by_term(w: np.ndarray, beta: float) -> float:
    w = w[w > 0]
    ts = np.geomspace(1e-6, 1.0 - 1e-9, 400) / float(w.max())
    logs = np.zeros(ts.size)
    for start in range(0, w.size, 4096):
        logs += np.log1p(-np.outer(ts, w[start:start + 4096])).sum(axis=1)
    return float(np.min((math.log(1.0 / beta) - logs) / ts))


@pytest.mark.parametrize("w", [
    np.full(2000, 0.05),                                   # one noise scale over many entries
    np.full(20000, 0.05),                                  # ... whose full blocks repeat
    np.repeat([0.1, 0.7, 0.3], 3000),                      # a few scales, several blocks
    np.r_[np.zeros(5), np.full(5000, 0.3), [2.0]],        # zeros dropped
    np.random.default_rng(0).uniform(0, 1, 300),           # all distinct
])
@pytest.mark.parametrize("beta", [1e-6, 0.05])
def test_the_same_bits_as_term_by_term(w, beta):
    assert exp_sum_bound(w, beta) == _term_by_term(w, beta)


def test_the_bound_holds_on_draws():
    rng = np.random.default_rng(1)
    w = np.repeat([0.2, 1.0], 50)
    bound = exp_sum_bound(w, 0.01)
    draws = rng.exponential(size=(20000, w.size)) @ w
    assert np.mean(draws > bound) <= 0.01
    assert bound <= 2.0 * np.quantile(draws, 0.99)
