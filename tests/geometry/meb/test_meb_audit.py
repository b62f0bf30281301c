"""Empirical privacy audit of DP-MMEB and GoodCenter on replace-one neighbours (+ broken twins)."""

import numpy as np
import pytest

from cvxdp.audit.auditor import audit_mechanism
from cvxdp.geometry.meb.goodcenter import good_center
from cvxdp.geometry.meb.meb_private import MEBSchedule, dp_mmeb
from cvxdp.privacy.budgets import zcdp_from_approx

EPS, DELTA = 1.0, 1e-5
RHO = zcdp_from_approx(EPS, DELTA)
# A short schedule (T = 12, kappa = 0: rarely halts) keeps the audit fast; privacy does not
# depend on T or kappa.
TINY = MEBSchedule("tiny", 8.0, 0.5, 100.0, 1, 0.0, None, None, 1.0)


class ShrunkRNG:
    """A deliberately broken noise source: every Gaussian is ``factor`` times too small."""

    def __init__(self, gen, factor):
        self.gen, self.factor = gen, factor

    def normal(self, loc=0.0, scale=1.0, size=None):
        return self.gen.normal(loc, scale * self.factor, size)


def _data():
    rng = np.random.default_rng(0)
    pts = rng.uniform(-0.3, 0.3, (20, 2))
    nb = pts.copy()
    nb[0] = [1.0, 0.0]          # replace one point by a point on the kept boundary
    return pts, nb


def _mmeb(factor):
    def mech(P, gen):
        g = gen if factor == 1.0 else ShrunkRNG(gen, factor)
        run = dp_mmeb(P, gamma=0.5, r=0.3, theta0=np.zeros(2), r0=1.0,
                      rho=RHO, beta=1e-3, schedule=TINY, rng=g)
        return run.theta if run.theta is not None else np.array([50.0, 50.0])
    return mech


def _goodcenter(factor):
    def mech(P, gen):
        g = gen if factor == 1.0 else ShrunkRNG(gen, factor)
        res = good_center(P, center=np.zeros(2), r_max=2.0, r_min=0.25, rho=RHO, beta=1e-3,
                          rng=g)
        return np.append(res.center, res.radius)
    return mech


@pytest.mark.parametrize("make", [_mmeb, _goodcenter])
def test_audit_passes_and_catches_under_noised_twin(make):
    pts, nb = _data()
    ok = audit_mechanism(make(1.0), pts, nb, epsilon=EPS, delta=DELTA, n_samples=3000, rng=1)
    assert ok.passed, ok
    broken = audit_mechanism(make(1e-3), pts, nb, epsilon=EPS, delta=DELTA, n_samples=3000,
                             rng=1)
    assert not broken.passed and broken.epsilon_lower > EPS, broken
