"""Calibrations that depend only on public arguments are computed once (issue 25 item 7).

A repeated call with the same public arguments (epsilon, delta, r, row bound, sensitivity)
must not solve the calibration again: it costs what its arithmetic costs.  The cached values
are the ones the uncached functions return.
"""

from __future__ import annotations

import numpy as np

import cvxdp
import cvxdp.estimation.random_projection as rpm
from cvxdp.privacy import calibration, gdp


def test_a_repeated_random_projection_does_not_recalibrate_sigma(monkeypatch):
    X = np.random.default_rng(0).uniform(-0.5, 0.5, (50, 3))
    calls = []
    real = rpm.rp_delta
    monkeypatch.setattr(rpm, "rp_delta", lambda **kw: calls.append(1) or real(**kw))
    kw = dict(epsilon=0.9, delta=3e-7, r=7, row_bound=1.25)
    _, first = cvxdp.random_projection(X, rng=0, **kw)
    n_first = len(calls)
    _, again = cvxdp.random_projection(X, rng=1, **kw)
    assert n_first > 10 and len(calls) == n_first      # the second call solved nothing
    assert again.params["sigma"] == first.params["sigma"]


def test_cached_calibrations_equal_the_uncached_ones():
    for eps, delta in [(0.3, 1e-6), (1.0, 1e-5), (4.0, 1e-8)]:
        s = calibration.calibrate_gaussian(epsilon=eps, delta=delta, sensitivity=2.0)
        assert s == calibration.calibrate_gaussian.__wrapped__(epsilon=eps, delta=delta,
                                                               sensitivity=2.0)
        assert gdp.gdp_mu(epsilon=eps, delta=delta) == gdp.gdp_mu.__wrapped__(
            epsilon=eps, delta=delta)
        s_bar = rpm.rp_leverage_bound(epsilon=eps, delta=delta, r=5)
        assert s_bar == rpm.rp_leverage_bound.__wrapped__(epsilon=eps, delta=delta, r=5)
    before = calibration.calibrate_gaussian.cache_info().hits
    calibration.calibrate_gaussian(epsilon=0.3, delta=1e-6, sensitivity=2.0)
    assert calibration.calibrate_gaussian.cache_info().hits == before + 1
