"""One front door (issue 22 item 5): ``solve_private`` forwards every option of the path it
chooses, refuses an unknown keyword with a TypeError naming the nearest valid one, accepts
CVXPY's ``solver=`` on the general path, and covering models take scipy.sparse data."""

from __future__ import annotations

import re

import cvxpy as cp
import numpy as np
import pytest
import scipy.sparse as sp

import cvxdp


def _small_lp():
    """max 1'x s.t. A x <= 1, 0 <= x <= 1 with a private A (entries move by <= 0.01)."""
    A = cp.Parameter((3, 2), name="A", value=np.array([[0.5, 0.2], [0.1, 0.6], [0.3, 0.3]]))
    x = cp.Variable(2, name="x")
    prob = cp.Problem(cp.Maximize(cp.sum(x)), [A @ x <= 1, x >= 0, x <= 1])
    return prob, cvxdp.ConstraintPrivacy(A, sensitivity=0.01)


def _covering_model():
    rng = np.random.default_rng(0)
    A = cp.Parameter((40, 4), name="A", value=rng.uniform(0, 1, (40, 4)))
    x = cp.Variable(4, nonneg=True, name="x")
    con = A @ x >= 1
    return cp.Problem(cp.Minimize(cp.sum(x)), [con]), cvxdp.ConstraintSetPrivacy(con)


def _suggests(err: pytest.ExceptionInfo, name: str) -> bool:
    return re.search(rf"did you mean '{name}'", str(err.value), re.IGNORECASE) is not None


def test_unknown_keyword_on_the_mwu_path_names_the_nearest_option():
    prob, spec = _small_lp()
    with pytest.raises(TypeError) as err:
        cvxdp.solve_private(prob, epsilon=1.0, delta=1e-6, private=spec, max_iteration=10)
    assert _suggests(err, "max_iterations")
    with pytest.raises(TypeError) as err:
        prob.solve_private(epsilon=1.0, delta=1e-6, private=spec, search_step=3)
    assert _suggests(err, "search_steps")


def test_unknown_keyword_on_the_covering_path_names_the_nearest_option():
    prob, spec = _covering_model()
    with pytest.raises(TypeError) as err:
        prob.solve_private(epsilon=1.0, delta=1e-6, private=spec, opt_bound=(1, 8))
    assert _suggests(err, "opt_bounds")


def test_mwu_only_options_are_not_silently_dropped_on_the_covering_path():
    prob, spec = _covering_model()
    with pytest.raises(TypeError, match="max_iterations"):
        prob.solve_private(epsilon=1.0, delta=1e-6, private=spec, max_iterations=50)


def test_unknown_keyword_on_a_structured_problem_names_the_nearest_option():
    pts = np.random.default_rng(1).uniform(-1, 1, (200, 2))
    meb = cvxdp.min_enclosing_ball(pts)
    with pytest.raises(TypeError) as err:
        cvxdp.solve_private(meb, epsilon=1.0, delta=1e-6, init_shar=0.3)
    assert _suggests(err, "init_share")


def test_unknown_keyword_on_the_least_squares_path_is_not_swallowed():
    rng = np.random.default_rng(0)
    X = cp.Parameter((200, 2), name="X", value=rng.uniform(-0.5, 0.5, (200, 2)))
    y = cp.Parameter(200, name="y", value=rng.uniform(-0.5, 0.5, 200))
    beta = cp.Variable(2, name="beta")
    prob = cp.Problem(cp.Minimize(cp.sum_squares(X @ beta - y)))
    with pytest.raises(TypeError) as err:
        prob.solve_private(epsilon=1.0, delta=1e-6, rng=0, sketch_sise=50,
                           private=cvxdp.LeastSquaresPrivacy(X, y, row_bound=1.0))
    assert _suggests(err, "sketch_size")


def test_options_of_the_covering_path_are_forwarded():
    prob, spec = _covering_model()
    sol = prob.solve_private(epsilon=1.0, delta=1e-6, private=spec, rng=0, T=7)
    assert sol.iterations == 7


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("solver", [cp.SCS, cp.CLARABEL])
def test_solver_keyword_chooses_the_exact_steps_solver(solver):
    prob, spec = _small_lp()
    sol = prob.solve_private(epsilon=1.0, delta=1e-6, private=spec, rng=0, reference=True,
                             solver=solver, max_iterations=50)
    assert sol.validation.reference_solver == solver
    # the exact optimum of this LP is 2 (x = (1, 1): rows 0.7, 0.7, 0.6 <= 1)
    assert abs(sol.validation.reference_value - 2.0) < 1e-3


def test_unknown_solver_name_is_a_typed_error():
    prob, spec = _small_lp()
    with pytest.raises(cvxdp.UnsupportedProblemError, match="solver"):
        prob.solve_private(epsilon=1.0, delta=1e-6, private=spec, solver="NO_SUCH_SOLVER")


@pytest.mark.parametrize("build,data", [
    (cvxdp.covering_lp, sp.random(60, 5, density=0.5, random_state=0, format="csr")),
    (cvxdp.covering_socp, sp.csr_matrix(np.abs(np.random.default_rng(2).normal(size=(60, 4)))
                                        / 4)),
    (cvxdp.covering_sdp, [sp.identity(3, format="csr") * 0.5] * 30),
])
def test_covering_builders_accept_sparse_rows(build, data):
    prob = build(data)
    sol = prob.solve_private(epsilon=1.0, delta=1e-6, rng=0, T=5)
    assert sol.point is not None and np.all(np.isfinite(sol.point))
    dense = data.toarray() if sp.issparse(data) else np.stack([m.toarray() for m in data])
    assert np.array_equal(prob.data, dense)


def test_covering_builder_refuses_non_numeric_rows_with_a_typed_error():
    with pytest.raises(cvxdp.UnsupportedProblemError):
        cvxdp.covering_lp([["a", "b"], ["c", "d"]])


def test_user_covering_model_with_a_sparse_constant_is_solved():
    A = sp.random(60, 5, density=0.5, random_state=1, format="csr")
    x = cp.Variable(5, nonneg=True, name="x")
    con = A @ x >= 1
    prob = cp.Problem(cp.Minimize(cp.sum(x)), [con])
    sol = prob.solve_private(epsilon=1.0, delta=1e-6, rng=0, T=5,
                             private=cvxdp.ConstraintSetPrivacy(con))
    assert sol.status == "user_limit" and np.all(np.isfinite(x.value))  # no m_max: no alpha


@pytest.mark.parametrize("psd_attr", [False, True])
def test_covering_sdp_model_accepts_the_psd_constraint_written_as_x_succeq_0(psd_attr):
    """``X >> 0`` (CVXPY's spelling) is the sign constraint of a covering SDP, whether X is
    declared symmetric=True or PSD=True (then it is redundant)."""
    rng = np.random.default_rng(3)
    r, m = 3, 40
    mats = []
    for _ in range(m):
        v = rng.standard_normal((r, 2))
        M = v @ v.T
        mats.append(M / np.linalg.eigvalsh(M)[-1])
    A = cp.Parameter((m, r * r), name="A", value=np.stack([M.ravel() for M in mats]))
    X = cp.Variable((r, r), name="X", **({"PSD": True} if psd_attr else {"symmetric": True}))
    con = A @ cp.vec(X, order="C") >= 1
    prob = cp.Problem(cp.Minimize(cp.trace(X)), [con, X >> 0])
    sol = prob.solve_private(epsilon=1.0, delta=1e-6, rng=0, T=5,
                             private=cvxdp.ConstraintSetPrivacy(con))
    assert sol.status == "user_limit"  # a private point; no m_max, so no accuracy is promised
    assert np.linalg.eigvalsh(X.value)[0] >= -1e-9


def test_covering_sdp_model_still_refuses_a_shifted_psd_constraint():
    A = cp.Parameter((10, 4), name="A", value=np.full((10, 4), 0.25))
    X = cp.Variable((2, 2), name="X", symmetric=True)
    con = A @ cp.vec(X, order="C") >= 1
    prob = cp.Problem(cp.Minimize(cp.trace(X)), [con, X >> np.eye(2)])
    with pytest.raises(cvxdp.UnsupportedProblemError, match="sign constraint"):
        prob.solve_private(epsilon=1.0, delta=1e-6, private=cvxdp.ConstraintSetPrivacy(con))


def test_accuracy_is_not_silently_ignored_on_the_least_squares_path():
    rng = np.random.default_rng(0)
    X = cp.Parameter((200, 2), name="X", value=rng.uniform(-0.5, 0.5, (200, 2)))
    y = cp.Parameter(200, name="y", value=rng.uniform(-0.5, 0.5, 200))
    beta = cp.Variable(2, name="beta")
    prob = cp.Problem(cp.Minimize(cp.sum_squares(X @ beta - y)))
    with pytest.raises(TypeError, match="accuracy"):
        prob.solve_private(epsilon=1.0, delta=1e-6, rng=0, accuracy=0.1,
                           private=cvxdp.LeastSquaresPrivacy(X, y, row_bound=1.0))


def test_misspelt_common_keyword_is_answered_with_the_nearest_one():
    prob, spec = _small_lp()
    with pytest.raises(TypeError) as err:
        prob.solve_private(epsilom=1.0, delta=1e-6, private=spec)
    assert _suggests(err, "epsilon")


def test_misspelt_mechanism_value_is_a_typed_error_naming_the_choices():
    """A misspelt mechanism= raised a raw ValueError from deep inside the dispatch."""
    b = cp.Parameter(name="b", value=1.0)
    x = cp.Variable(nonneg=True)
    prob = cp.Problem(cp.Maximize(x), [x <= b])
    with pytest.raises(cvxdp.PrivacySpecError, match="'perturbation'"):
        prob.solve_private(epsilon=1.0, delta=1e-6, rng=0, mechanism="perturbaton",
                           private=cvxdp.ScalarPrivacy(b, sensitivity=0.1))
