"""Power of the auditor with its default settings (issue 21 item 10): a Gaussian mechanism run
with half its calibrated sigma, and an exponential mechanism run at 1.5x its claimed epsilon, must
both be caught by ``audit_mechanism`` called with nothing but the claim."""

import numpy as np
import pytest

from cvxdp.audit import audit_mechanism
from cvxdp.privacy import calibrate_gaussian, exponential_mechanism

EPS, DELTA = 1.0, 1e-5


@pytest.mark.parametrize("seed", range(5))
def test_gaussian_with_half_sigma_is_caught_by_default(seed):
    # true epsilon at delta = 1e-5 is 2.15 (analytic Gaussian, Balle & Wang 2018) against claim 1
    sigma = calibrate_gaussian(epsilon=EPS, delta=DELTA) / 2
    res = audit_mechanism(lambda x, g: x + g.normal(0.0, sigma), 0.0, 1.0, epsilon=EPS,
                          delta=DELTA, rng=seed)
    assert not res.passed, res
    assert res.epsilon_lower > 1.1 * EPS, res


@pytest.mark.slow  # 2 x 300,000 draws of a 1000-candidate exponential mechanism (~17 s)
def test_exponential_mechanism_at_one_and_a_half_epsilon_is_caught_by_default():
    # every score moves by the sensitivity: P'[0] / P[0] = 1000 e^1.5 / (e^1.5 + 999), log 1.497
    k = 1000
    s, s2 = np.zeros(k), np.full(k, -1.0)
    s2[0] = 1.0

    def mech(scores, g):
        return exponential_mechanism(scores, epsilon=1.5 * EPS, sensitivity=1.0, rng=g)[0]

    res = audit_mechanism(mech, s, s2, epsilon=EPS, delta=0.0, rng=0)
    assert not res.passed, res
    assert res.epsilon_lower > 1.05 * EPS, res
