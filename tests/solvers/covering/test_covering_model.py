"""User covering models with ConstraintSetPrivacy -> the private covering solver; refusals."""

import cvxpy as cp
import numpy as np
import pytest

import cvxdp
from cvxdp.errors import PrivacySpecError, UnsupportedProblemError
from cvxdp.solvers.covering.covering import random_covering_lp, random_covering_sdp
from cvxdp.solvers.covering.covering_model import extract_covering, solve_covering_private


def _lp_model(m=300, n=10):
    A = random_covering_lp(m, n, rng=0) * 0.5
    Ap = cp.Parameter(A.shape, name="A")
    Ap.value = A
    x = cp.Variable(n, name="x")
    c = np.linspace(1, 2, n)
    con = Ap @ x >= 0.5
    return cp.Problem(cp.Minimize(c @ x + 3), [con, x >= 0]), con, A, c, x


def test_lp_model_normalisation_is_exact():
    prob, con, A, c, x = _lp_model()
    info = extract_covering(prob, con)
    assert info["kind"] == "lp" and info["offset"] == pytest.approx(3.0)
    np.testing.assert_allclose(info["data"], A / 0.5 / c[None, :], atol=1e-12)
    np.testing.assert_allclose(info["back"](c), np.ones(10))


def test_lp_model_private_solve_sets_variables():
    prob, con, A, c, x = _lp_model()
    ref = prob.solve()
    sol = solve_covering_private(prob, cvxdp.ConstraintSetPrivacy(con), epsilon=8.0, delta=1e-6,
                                 s=30, opt_bounds=(1, 40), rng=0, reference=True)
    assert sol.value == pytest.approx(c @ x.value + 3)
    assert sol.validation.reference_value == pytest.approx(ref, rel=1e-6)
    assert sol.validation.objective_gap == pytest.approx(sol.value - ref, rel=1e-6, abs=1e-6)
    assert sol.value <= 1.6 * ref
    assert np.mean(A @ x.value >= 0.5 - 1e-9) >= 0.8
    assert "x" in sol.primal


def test_sdp_model_with_weighted_trace():
    M = random_covering_sdp(200, 3, rng=1)
    X = cp.Variable((3, 3), PSD=True)
    con = cp.hstack([cp.trace(M[i] @ X) for i in range(200)]) >= 1
    C = np.diag([1.0, 2.0, 3.0])
    prob = cp.Problem(cp.Minimize(cp.trace(C @ X)), [con])
    ref = prob.solve()
    info = extract_covering(prob, con)
    Ch = np.diag(np.diag(C) ** -0.5)
    np.testing.assert_allclose(info["data"], Ch @ M @ Ch, atol=1e-9)
    sol = solve_covering_private(prob, con, epsilon=8.0, delta=1e-6, s=20, opt_bounds=(1, 20),
                                 rng=0)
    assert sol.value == pytest.approx(np.trace(C @ X.value))
    assert 0.8 * ref <= sol.value <= 2.5 * ref  # measured 1.2-1.8 x OPT over seeds
    assert np.mean(np.einsum("mij,ij->m", M, X.value) >= 1 - 1e-9) >= 0.8


@pytest.mark.parametrize("case,match", [
    ("extra", "only other constraint allowed"),
    ("maximize", "Minimize"),
    ("free", "non-negative"),
    ("cost", "c > 0"),
])
def test_refusals_name_the_reason(case, match):
    A = random_covering_lp(20, 4, rng=0)
    x = cp.Variable(4, nonneg=case != "free")
    con = A @ x >= (-1 if case == "negative_b" else 1)
    cons = [con] + ([x[0] <= 2] if case == "extra" else [])
    obj = cp.Maximize(-cp.sum(x)) if case == "maximize" else cp.Minimize(
        cp.sum(x) - (2 * x[1] if case == "cost" else 0))
    with pytest.raises(UnsupportedProblemError, match=match):
        solve_covering_private(cp.Problem(obj, cons), con, epsilon=1.0, delta=1e-6)


def test_foreign_constraint():
    # rows outside the public domain are projected, not refused: test_covering_domain.py
    A = random_covering_lp(20, 4, rng=0)
    x = cp.Variable(4, nonneg=True)
    con = A @ x >= 0.1
    other = A @ x >= 1
    with pytest.raises(PrivacySpecError, match="not one of"):
        solve_covering_private(cp.Problem(cp.Minimize(cp.sum(x)), [con]), other, epsilon=1.0)


def test_extraction_never_writes_through_the_validating_setter():
    """Issue 21 item 12: ``_linear_map`` restored ``X.value = old`` through CVXPY's validating
    setter, which rejects the slightly indefinite X a solver can leave (a raw ValueError for a
    user who called ``prob.solve()`` first).  The user's variable must be left untouched."""
    M = random_covering_sdp(30, 3, rng=1)
    X = cp.Variable((3, 3), PSD=True)
    con = cp.hstack([cp.trace(M[i] @ X) for i in range(30)]) >= 1
    prob = cp.Problem(cp.Minimize(cp.trace(X)), [con])
    solver_output = np.diag([1.0, 0.5, -1e-5])          # what an interior solver may return
    X.save_value(solver_output)                          # as CVXPY stores a solution
    info = extract_covering(prob, con)
    np.testing.assert_allclose(info["data"], M, atol=1e-12)
    assert X.value is not None and np.array_equal(X.value, solver_output)


def _private_objective_model(m=200, n=6):
    A = cp.Parameter((m, n), name="A", value=random_covering_lp(m, n, rng=0))
    x = cp.Variable(n, nonneg=True, name="x")
    con = A @ x >= 1
    obj = cp.Minimize((1 + cp.sum(A, axis=0) / m) @ x + cp.sum(A) / m)
    return cp.Problem(obj, [con]), con, A


def test_private_rows_in_the_objective_are_refused_like_constraint_privacy():
    """Issue 21 item 14: the private A also in the objective was refused under
    ConstraintPrivacy but accepted under ConstraintSetPrivacy, whose release then carried
    sum(A)/m exactly (value - trace) and rescaled the point by private column sums."""
    prob, con, A = _private_objective_model()
    # under ConstraintPrivacy the same A in the objective is a second placement of entries
    # released once by perturbation; the MWU keeps the paper's settings apart and refuses it
    sol = prob.solve_private(epsilon=4.0, delta=1e-6, rng=0,
                             private=cvxdp.ConstraintPrivacy(A, sensitivity=0.1))
    assert sol.info["mechanism"] == "perturbation" and len(sol.privacy.records) == 1
    with pytest.raises(PrivacySpecError, match="also enter the objective"):
        prob.solve_private(epsilon=4.0, delta=1e-6, rng=0, mechanism="mwu",
                           private=cvxdp.ConstraintPrivacy(A, sensitivity=0.1))
    with pytest.raises(PrivacySpecError, match="ConstraintSetPrivacy.*enters the objective"):
        prob.solve_private(epsilon=4.0, delta=1e-6, rng=0,
                           private=cvxdp.ConstraintSetPrivacy(con))


def test_private_rows_in_another_constraint_are_refused():
    m, n = 50, 4
    A = cp.Parameter((m, n), name="A", value=random_covering_lp(m, n, rng=0))
    x = cp.Variable(n, name="x")
    con = A @ x >= 1
    prob = cp.Problem(cp.Minimize(cp.sum(x)), [con, x >= cp.sum(A, axis=0) / (10 * m)])
    with pytest.raises(PrivacySpecError, match="enters another constraint"):
        prob.solve_private(epsilon=4.0, delta=1e-6, rng=0,
                           private=cvxdp.ConstraintSetPrivacy(con))
