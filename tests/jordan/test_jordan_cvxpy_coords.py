"""The stored coordinates are exactly the rows CVXPY's SCS path produces for each cone."""

import cvxpy as cp
import numpy as np
import pytest

from cvxdp.jordan import Orthant, Product, SpinFactor, SymmetricMatrices


def _data(problem):
    data, _, _ = problem.get_problem_data(cp.SCS, solver_opts={"use_quad_obj": False})
    return data


def test_psd_rows_are_scs_svec():
    rng = np.random.default_rng(0)
    for r in (1, 2, 3, 5):
        J = SymmetricMatrices(r)
        M = rng.standard_normal((r, r))
        M = M + M.T
        t = cp.Variable()
        data = _data(cp.Problem(cp.Minimize(t), [M + t * np.eye(r) >> 0]))
        assert data["dims"].psd == [r]
        # s = b - A x with x = t: the constant part is svec(M), the column of t is svec(I)
        np.testing.assert_allclose(data["b"], J.from_matrix(M), atol=1e-12)
        np.testing.assert_allclose(-data["A"].toarray()[:, 0], J.identity(), atol=1e-12)


def test_scs_slack_of_a_solved_sdp_is_svec_of_the_solution():
    """Solve through CVXPY's own SCS chain: SCS's PSD slack rows equal svec(X.value), and the
    SOC slack rows (from the sum_squares epigraph) are a raw (t, x) point of the Lorentz cone."""
    J = SymmetricMatrices(3)
    X = cp.Variable((3, 3), symmetric=True)
    C = np.array([[2.0, 0.5, 0.0], [0.5, 1.0, -0.3], [0.0, -0.3, 1.5]])
    prob = cp.Problem(cp.Minimize(cp.trace(C @ X) + 0.1 * cp.sum_squares(X[0, 1:])),
                      [X >> 0, cp.trace(X) == 1])
    data, chain, inv = prob.get_problem_data(cp.SCS, solver_opts={"use_quad_obj": False})
    raw = chain.solver.solve_via_data(data, warm_start=False, verbose=False,
                                      solver_opts={"eps_abs": 1e-10, "eps_rel": 1e-10})
    prob.unpack_results(raw, chain, inv)
    dims = data["dims"]
    assert dims.psd == [3] and len(dims.soc) == 1
    K = Product([SpinFactor(q) for q in dims.soc] + [SymmetricMatrices(r) for r in dims.psd])
    s = raw["s"][dims.zero + dims.nonneg:]
    soc, psd = K.split(s)
    np.testing.assert_allclose(psd, J.from_matrix(X.value), atol=1e-8)
    assert J.trace(psd) == pytest.approx(1.0, abs=1e-7)
    assert K.is_in_cone(s, tol=1e-7)
    assert K.blocks[0].eigenvalues(soc)[1] >= -1e-7


def test_soc_and_orthant_rows_are_raw():
    x = cp.Variable(2)
    s = cp.Variable()
    a = np.array([3.0, 4.0])
    data = _data(cp.Problem(cp.Minimize(s), [cp.SOC(s + 1, x - a), x >= -2]))
    dims = data["dims"]
    assert dims.nonneg == 2 and dims.soc == [3]
    K = Product([Orthant(dims.nonneg), *(SpinFactor(q) for q in dims.soc)])
    # at the canonical point (x, s) = (0, 0) the slack is b: orthant rows x + 2, SOC (s+1, x-a)
    np.testing.assert_allclose(data["b"], [2.0, 2.0, 1.0, -3.0, -4.0])
    # (t, x) = (1, -3, -4) is outside the cone: eigenvalues 1 +- 5
    np.testing.assert_allclose(K.eigenvalues(data["b"])[2:], [6.0, -4.0])
    assert not K.is_in_cone(data["b"])
