"""A quadratic form of (affine - private target) with a constant matrix, the way a Mahalanobis
fit is written: ``cp.quad_form(x - y, P)`` or ``cp.matrix_frac(x - y, P)`` with private ``y``.

CVXPY 1.9 calls such a model DPP (``problem.is_dpp()`` is True) but, compiling for SCS (a
solver that takes quadratic objectives), checks DPP in its quadratic-objective scope, where
``quad_form(x - y, P)`` with a parameter in ``x - y`` is not DPP; it then substituted ``y``'s
value, and cvxdp refused the model with "the model is not DPP (problem.is_dcp(dpp=True) is
False)", which was false. cvxdp compiles with ``use_quad_obj=False`` (the objective as cones),
so the quadratic-objective scope does not apply."""

import cvxpy as cp
import numpy as np
import pytest

import cvxdp

P = np.array([[2.0, 0.5, 0.0], [0.5, 1.0, 0.0], [0.0, 0.0, 1.0]])


def _models():
    y = cp.Parameter(3, name="y", value=np.array([1.0, -0.5, 2.0]))
    x = cp.Variable(3, name="x")
    A = np.array([[1.0, 0.2, 0.0], [0.0, 1.0, 0.3], [0.1, 0.0, 1.0]])
    return y, {
        "quad_form": cp.Problem(cp.Minimize(cp.quad_form(x - y, P)), [cp.norm(x, 2) <= 1]),
        "matrix_frac": cp.Problem(cp.Minimize(cp.matrix_frac(x - y, P)), [cp.norm(x, 2) <= 1]),
        "quad_form_affine": cp.Problem(cp.Minimize(cp.quad_form(A @ x - y, P) + cp.norm1(x)),
                                       [x >= -1, x <= 1]),
    }


@pytest.mark.parametrize("name", ["quad_form", "matrix_frac", "quad_form_affine"])
def test_a_quadratic_form_of_a_private_residual_is_certified(name):
    y, models = _models()
    prob = models[name]
    sol = prob.solve_private(epsilon=1e6, delta=1e-6, rng=0, reference=True,
                             private=cvxdp.ScalarPrivacy(y, sensitivity=0.01))
    assert sol.status == "optimal_inaccurate", sol.status_reason
    assert sol.certificate.relative_gap_bound <= 1e-2
    assert sol.validation.relative_gap <= 1e-2


@pytest.mark.parametrize("name", ["quad_form", "matrix_frac", "quad_form_affine"])
def test_a_quadratic_form_of_a_private_residual_is_a_fit_term(name):
    """``quad_form(a, P) = ||L' a||^2`` (``P = L L'`` public): a square fit term, whose
    certificate is second order in the noise. Through the generic second-order-cone rows it was
    first order: certified 0.14 / 0.11 / 0.072 at epsilon 10 against true gaps below 1e-3."""
    y, models = _models()
    prob = models[name]
    opt = prob.solve(solver=cp.CLARABEL)
    for seed in range(3):
        sol = prob.solve_private(epsilon=10, delta=1e-6, rng=seed,
                                 private=cvxdp.ScalarPrivacy(y, sensitivity=0.01))
        assert sol.status == "optimal_inaccurate", sol.status_reason
        assert sol.certificate.relative_gap_bound <= 1e-2
        assert prob.objective.value - opt <= sol.certificate.gap_bound
