"""The certificate's violation bound is about the user's constraints, as the user measures them.

Held-out trial 16: ``min sum_squares(x - y)`` s.t. ``cp.tv(x) <= 60`` with 500 private prices
``y``. The only constraint is public. At epsilon 1 the released point solved the loosened
counterpart and the certificate said "the certified violation of the true constraints is
9.27e+03": the loosened rows are CVXPY's epigraph of the OBJECTIVE (``t >= ||x - y||``), not a
constraint of the user's. At epsilon 1e6 it said 3.4e-9 while ``tv(x.value) - 60`` is 6.9e-7:
the canonical rows' violations (each at the solver's tolerance) add up in ``tv``'s sum.
"""

from __future__ import annotations

import warnings

import cvxpy as cp
import numpy as np
import pytest

import cvxdp


def _tv_budget(n: int = 500):
    rng = np.random.default_rng(310)
    y0 = 100 + np.cumsum(rng.normal(0, 0.5, n)) + rng.normal(0, 2, n)
    y = cp.Parameter(n, name="y", value=y0)
    x = cp.Variable(n, name="x")
    prob = cp.Problem(cp.Minimize(cp.sum_squares(x - y)), [cp.tv(x) <= 60])
    return prob, y, x


@pytest.mark.parametrize("eps", [1e6, 1.0])
def test_violation_bound_is_the_users_constraints_measured_at_the_released_point(eps):
    prob, y, x = _tv_budget()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = prob.solve_private(epsilon=eps, delta=1e-6, rng=0,
                                 private=cvxdp.ScalarPrivacy(y, sensitivity=1.0))
    measured = max(float(cp.tv(x).value) - 60.0, 0.0)
    v = sol.certificate.violation_bound
    assert measured <= v, (eps, measured, v)
    # the user's only constraint is public and the point meets it to the solver's tolerance
    # (summed over tv's 499 rows: 6e-5 at epsilon 1, where the noisy prices reach 2e3)
    assert v <= 1e-3, (eps, v, sol.status_reason)
    assert "violation" not in (sol.status_reason or "")
