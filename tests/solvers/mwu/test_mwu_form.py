"""The MWU form of a cone program: consistency with the canonical rows, trace bounds, refusals."""

import cvxpy as cp
import numpy as np
import pytest

import cvxdp
from cvxdp.errors import InfeasibleProblemError, UnsupportedProblemError
from cvxdp.solvers.mwu.mwu_form import build_mwu_form
from cvxdp.transform import to_scp


def _mixed_problem(rng):
    """LP rows + an SOC + a PSD variable + free variables, all public."""
    X = cp.Variable((3, 3), PSD=True)
    x = cp.Variable(4, nonneg=True)
    y = cp.Variable(2)
    A = rng.uniform(0, 1, (5, 4))
    cons = [A @ x <= 2.0, cp.sum(x) <= 3, cp.trace(X) <= 2, X[0, 1] >= -0.3,
            cp.norm(y) <= x[0], y[0] >= -1, y[1] <= 1]
    return cp.Problem(cp.Minimize(cp.sum(x) + cp.trace(X) + y[1]), cons)


def test_rows_of_the_form_reproduce_the_canonical_residuals():
    rng = np.random.default_rng(0)
    prob = _mixed_problem(rng)
    scp = to_scp(prob)
    form = build_mwu_form(scp.A, scp.b, scp.c, scp.dims)
    alg = form.algebra
    assert alg.psd == (3,)
    z = alg.normalized_exp(rng.normal(size=alg.dim))  # any distribution
    x = form.to_scp_point(z)
    resid = scp.A @ x - scp.b  # = -s
    src = form.info["source_rows"]
    vals = form.R * form.rho * (form.G @ z - form.h)
    ineq = form.kinds == "ineq"
    np.testing.assert_allclose(vals[ineq], resid[src[ineq]], atol=1e-10)
    # objective: c'x == c_z . z * R
    assert scp.c @ x == pytest.approx(form.R * form.c_z @ z)


def test_trace_bound_from_public_constraints_with_free_and_cone_variables():
    y = cp.Variable(2)
    X = cp.Variable((2, 2), PSD=True)
    prob = cp.Problem(cp.Minimize(0), [y >= -1, y <= np.array([2.0, 0.5]), cp.trace(X) <= 3,
                                       X[0, 0] >= 0.1])
    scp = to_scp(prob)
    form = build_mwu_form(scp.A, scp.b, scp.c, scp.dims)
    assert form.info["trace_bound_source"] == "public constraints"
    # y >= -1 makes y a shifted orthant variable y = s - 1 (s >= 0); X stays the PSD variable
    assert form.info["n_free"] == 0 and form.algebra.psd == (2,)
    # max (y_1 + 1) + max (y_2 + 1) + max trace(X) = 3 + 1.5 + 3
    assert form.R == pytest.approx(7.5, rel=2e-6)  # the margins: (1 + 1e-6), bounds outward
    z = form.algebra.identity() / form.algebra.rank
    x = form.to_scp_point(z)
    vals = form.R * form.rho * (form.G @ z - form.h)
    src = form.info["source_rows"]
    ineq = form.kinds == "ineq"
    np.testing.assert_allclose(vals[ineq], (scp.A @ x - scp.b)[src[ineq]], atol=1e-10)


def test_public_equality_on_the_trace_is_used_exactly():
    n = 6
    x = cp.Variable(n, nonneg=True)
    prob = cp.Problem(cp.Minimize(0), [cp.sum(x) == 2.5, x[0] <= 0.3])
    scp = to_scp(prob)
    form = build_mwu_form(scp.A, scp.b, scp.c, scp.dims)
    assert form.R == pytest.approx(2.5)
    assert form.info["w_coord"] is None and form.algebra.dim == n
    assert "eq+" not in set(form.kinds)


def test_user_trace_bound_and_refusal_without_one():
    x = cp.Variable(3)
    prob = cp.Problem(cp.Minimize(0), [x[0] + x[1] <= 1])
    scp = to_scp(prob)
    with pytest.raises(UnsupportedProblemError, match="trace_bound="):
        build_mwu_form(scp.A, scp.b, scp.c, scp.dims)
    form = build_mwu_form(scp.A, scp.b, scp.c, scp.dims, trace_bound=7.0)
    assert form.R == 7.0 and form.info["trace_bound_source"] == "user"
    with pytest.raises(UnsupportedProblemError, match="trace_bound"):
        build_mwu_form(scp.A, scp.b, scp.c, scp.dims, trace_bound=-1.0)


def test_infeasible_public_part_is_refused():
    x = cp.Variable(2, nonneg=True)
    A = cp.Parameter((1, 2), name="A")
    A.value = np.ones((1, 2))
    prob = cp.Problem(cp.Minimize(0), [cp.sum(x) <= 1, x[0] >= 2, A @ x <= 1])
    scp = to_scp(prob, private=cvxdp.ConstraintPrivacy(A, sensitivity=0.1))
    with pytest.raises(InfeasibleProblemError, match="infeasible"):
        build_mwu_form(scp.A, scp.b, scp.c, scp.dims, dA=scp.sensitivity.A)


def test_private_rows_are_excluded_from_the_trace_bound_and_marked():
    rng = np.random.default_rng(2)
    A = cp.Parameter((4, 3), name="A")
    A.value = rng.uniform(0, 1, (4, 3))
    x = cp.Variable(3, nonneg=True)
    prob = cp.Problem(cp.Minimize(0), [A @ x <= 1, cp.sum(x) <= 5])
    scp = to_scp(prob, private=cvxdp.ConstraintPrivacy(A, sensitivity=0.01))
    form = build_mwu_form(scp.A, scp.b, scp.c, scp.dims, dA=scp.sensitivity.A)
    assert form.R == pytest.approx(5.0, rel=2e-6)  # the margins: (1 + 1e-6), bounds outward
    assert form.info["private_rows"] == 4
    # entrywise bounds are divided by the width like the rows
    assert form.dG.max() == pytest.approx(0.01 / form.rho)


@pytest.mark.parametrize("extra", [False, True])
def test_a_public_equality_tr_z_equals_r_is_found_beside_other_equalities(extra):
    # sum(x) == 2 over x >= 0 is tr z = 2: the MWU's normalisation holds it exactly; another
    # equality over the same variables (not a multiple of tr z) and the free variables' rows
    # are passed over on the way
    x = cp.Variable(5, nonneg=True)
    y = cp.Variable(3)
    cons = [cp.sum(x) == 2, y[1:] == y[:-1] + x[:2]]
    if extra:
        cons.append(x[0] + x[1] == 0.5)
    scp = to_scp(cp.Problem(cp.Minimize(np.arange(5.0) @ x + y[0]), cons))
    form = build_mwu_form(scp.A, scp.b, scp.c, scp.dims, check_feasible=False)
    assert form.info["trace_bound_source"] == "exact (public equality tr z = R)"
    assert form.R == pytest.approx(2.0, rel=1e-12)

