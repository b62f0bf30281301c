"""A public objective's certified upper bound is never below the objective at the released point.

Under constraint privacy the objective is public, so the user's objective at the released
variables is a released number.  The certificate took the cone program's epigraph value
``c'x`` there, which the exact solver's tolerance puts up to ~1e-10 below the user's own
objective (``entr``'s exponential cones): held-out trial 22a found ``objective_upper`` below
the objective at the released point on 9 of 34 models (D6).
"""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest

import cvxdp

pytestmark = pytest.mark.filterwarnings("ignore")


@pytest.mark.parametrize("eps", [1e6, 10.0])
def test_entropy_upper_bound_covers_the_released_objective(eps):
    r = np.random.default_rng(0)
    n, m = 30, 6
    F = r.uniform(0, 1, (m, n))
    x0 = r.dirichlet(np.ones(n))
    g = cp.Parameter(m, name="g", value=F @ x0 + 0.05)
    x = cp.Variable(n)
    prob = cp.Problem(cp.Maximize(cp.sum(cp.entr(x))), [cp.sum(x) == 1, F @ x <= g])
    sol = prob.solve_private(epsilon=eps, delta=1e-6, rng=0,
                             private=cvxdp.ScalarPrivacy(g, sensitivity=0.005))
    at_point = -float(prob.objective.value)   # the minimised form, public data only
    assert sol.certificate.objective_upper >= at_point
    assert sol.value == pytest.approx(-at_point, abs=1e-12)
