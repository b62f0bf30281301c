"""The objective's sign is public, and it bounds the optimum.

``min ||F w||^2`` or ``min sum_squares(x - y)`` cannot have an optimum below 0, whatever the
private data: CVXPY's sign analysis of the objective's expression says so from the model's
structure and the parameters' declared attributes, never from their values.  The certificates
of the general path bounded such an optimum from below by the noise's worst case only (``-5.2``
for a minimum variance of 0.057 at epsilon 10), so a point whose TRUE objective is certified
within 0.007 of 0 was released with ``user_limit``.
"""

from __future__ import annotations

import warnings

import cvxpy as cp
import numpy as np
import pytest

import cvxdp


def _denoise(n: int = 20):
    rng = np.random.default_rng(0)
    y = cp.Parameter(n, name="y", value=rng.uniform(-1, 1, n))
    x = cp.Variable(n, name="x")
    prob = cp.Problem(cp.Minimize(cp.sum_squares(x - y)), [cp.abs(x) <= 2])
    return prob, cvxdp.ScalarPrivacy(y, sensitivity=1e-2)


def _min_variance():
    rng = np.random.default_rng(0)
    F = cp.Parameter((30, 6), name="F", value=rng.uniform(-1, 1, (30, 6)) / np.sqrt(30))
    w = cp.Variable(6, name="w")
    prob = cp.Problem(cp.Minimize(cp.sum_squares(F @ w)), [cp.sum(w) == 1, w >= 0])
    return prob, cvxdp.ConstraintPrivacy(F, sensitivity=1e-2)


def _solve(prob, spec, eps: float, seed: int = 0):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return prob.solve_private(epsilon=eps, delta=1e-6, rng=seed, private=spec,
                                  reference=True)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_nonnegative_objective_bounds_the_optimum_below_by_zero(seed):
    prob, spec = _min_variance()
    sol = _solve(prob, spec, 10.0, seed)
    cert = sol.certificate
    assert cert.optimum_lower >= 0.0
    # still a valid certificate of the TRUE objective (the reference is 0.0569)
    assert cert.optimum_lower <= sol.validation.reference_value
    assert sol.validation.objective_gap <= cert.gap_bound
    assert cert.gap_bound <= cert.objective_upper


def test_a_certificate_within_accuracy_by_the_sign_is_a_success():
    # at epsilon 20 the released point's TRUE objective is certified below 0.01 (its
    # noise's squared norm), while the noise's worst case alone puts the optimum near -0.03
    prob, spec = _denoise()
    sol = _solve(prob, spec, 20.0)
    cert = sol.certificate
    assert cert.objective_upper < 1e-2
    assert cert.optimum_lower == 0.0
    assert cert.relative_gap_bound == pytest.approx(cert.objective_upper)
    assert sol.status == cp.OPTIMAL_INACCURATE
    assert prob.status == cp.OPTIMAL_INACCURATE
    assert sol.status_reason is None and "status_reason" not in sol.info
    assert sol.validation.objective_gap <= cert.gap_bound


def test_maximising_a_nonpositive_objective_uses_the_same_bound():
    prob, spec = _denoise()
    neg = cp.Problem(cp.Maximize(-prob.objective.expr), prob.constraints)
    sol = _solve(neg, spec, 20.0)
    # in the minimised sense the objective is sum_squares(x - y) >= 0 again
    assert sol.certificate.optimum_lower == 0.0
    assert sol.certificate.relative_gap_bound < 1e-2
    assert -sol.validation.objective_gap <= sol.certificate.gap_bound


def test_an_objective_of_unknown_sign_keeps_its_bounds():
    # the private vector's sign is not declared: nothing is assumed about c'x
    rng = np.random.default_rng(3)
    c = cp.Parameter(5, name="c", value=rng.uniform(0.5, 1, 5))
    x = cp.Variable(5, name="x")
    prob = cp.Problem(cp.Minimize(c @ x), [x >= 0, x <= 1, cp.sum(x) >= 1])
    sol = _solve(prob, cvxdp.ObjectivePrivacy(c, sensitivity=1e-2), 10.0)
    assert "sign" not in sol.certificate.how
