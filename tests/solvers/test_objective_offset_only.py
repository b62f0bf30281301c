"""ObjectivePrivacy on a parameter that enters only the objective's constant term.

Trial 21a, defect 4: ``ObjectivePrivacy``'s docstring says such a parameter "is still allowed"
(it changes nothing the solver sees), but the solve was refused ("nothing to protect"), naming
no parameter and no fix; declaring it public instead would put its exact value in
``problem.value``.  The point is the public problem's exact minimiser (no noise), and the value
carries the constant through the Gaussian mechanism (Thm C.12's calibration on one coordinate).
"""

from __future__ import annotations

import warnings

import cvxpy as cp
import numpy as np
import pytest

import cvxdp


def _model():
    off = cp.Parameter(name="fixed_cost", value=3.0)  # a private fixed cost
    x = cp.Variable(4, name="x")
    prob = cp.Problem(cp.Minimize(cp.sum_squares(x - 1) + off), [cp.sum(x) <= 2])
    return prob, x, off


def test_a_private_constant_term_is_released_through_the_value_only():
    prob, x, off = _model()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = prob.solve_private(epsilon=1, delta=1e-6, rng=0,
                                 private=cvxdp.ObjectivePrivacy(off, sensitivity=0.01))
    assert np.allclose(x.value, 0.5, atol=1e-6)     # the public minimiser, exactly
    assert sol.certificate.gap_bound <= 1e-8 and sol.status == cp.OPTIMAL_INACCURATE
    sigma = sol.privacy.details["sigma"]
    assert 0 < abs(sol.value - (1.0 + 3.0)) <= 6 * sigma   # 4 * 0.25 + 3, plus the noise
    assert sol.privacy.epsilon == pytest.approx(1.0)
