"""Round trips: CVXPY model -> cone program -> exact solve -> from_scp == CVXPY's own solve."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest

from cvxdp.transform import cone_violations, from_scp, solve_exact, to_scp, validate
from cvxdp.transform.exact import svec_to_clarabel


def _lp(rng):
    A = cp.Parameter((6, 4), name="A")
    A.value = rng.uniform(0.1, 1.0, (6, 4))
    x = cp.Variable(4, nonneg=True)
    prob = cp.Problem(cp.Maximize(np.arange(1, 5) @ x + 2.0), [A @ x <= 1, cp.sum(x) <= 3])
    return prob, [x]


def _socp(rng):
    M = rng.normal(size=(5, 3))
    y = rng.normal(size=5)
    x = cp.Variable(3)
    t = cp.Variable()
    prob = cp.Problem(cp.Minimize(t + cp.norm(x, 1)),
                      [cp.norm(M @ x - y) <= t, x >= -1, x[0] == 0.25])
    return prob, [x, t]


def _sdp(rng):
    C = rng.normal(size=(4, 4))
    C = C + C.T
    X = cp.Variable((4, 4), PSD=True)
    # the Frobenius term makes the optimum unique, so variables can be compared
    prob = cp.Problem(cp.Minimize(cp.trace(C @ X) + cp.sum_squares(X)),
                      [cp.trace(X) == 1, X[0, 2] >= 0.1])
    return prob, [X]


def _mixed(rng):
    x = cp.Variable(3, nonneg=True)
    X = cp.Variable((3, 3), symmetric=True)
    F = rng.normal(size=(3, 3))
    F = F + F.T
    prob = cp.Problem(
        cp.Maximize(cp.sum(x) - cp.trace(X) - 0.5 * cp.sum_squares(x)),
        [X >> np.eye(3) * 0.1 + x[0] * 0.1 * F / np.abs(F).max(), cp.norm(x) <= 2,
         cp.trace(X) <= 1.5, X[1, 0] >= 0.05, X[2, 1] <= -0.02, x[1] <= 0.5 + x[2]],
    )
    return prob, [x, X]


@pytest.mark.parametrize("build", [_lp, _socp, _sdp, _mixed], ids=["lp", "socp", "sdp", "mixed"])
@pytest.mark.parametrize("solver", ["CLARABEL", "SCS"])
def test_exact_primal_maps_back_to_cvxpy_solution(build, solver):
    rng = np.random.default_rng(3)
    prob, variables = build(rng)
    scp = to_scp(prob)
    exact = solve_exact(scp, solver=solver)
    assert exact.status == cp.OPTIMAL
    assert cone_violations(scp, exact.x).max() < 1e-6
    value = from_scp(prob, scp, exact.x, status="optimal")
    assert prob.status == cp.OPTIMAL
    assert value == pytest.approx(prob.value)
    mine = [v.value.copy() for v in variables]
    # use_quad_obj=False: the same (SOC) form of quadratic terms; CVXPY 1.5's QP path mis-solves
    # sum_squares of a PSD variable (value -1.537 instead of the optimum -1.592 on _sdp)
    prob.solve(solver=cp.CLARABEL, use_quad_obj=False)
    assert value == pytest.approx(prob.value, abs=1e-6, rel=1e-6)
    # the canonical objective is the user's times sign
    assert scp.sign * exact.value == pytest.approx(prob.value, abs=1e-6, rel=1e-6)
    # variables of a strongly convex program are accurate to ~sqrt(solver tolerance)
    for got, ref in zip(mine, variables, strict=True):
        np.testing.assert_allclose(got, ref.value, atol=2e-4)


def test_default_status_is_optimal_inaccurate_and_maximise_sign():
    prob, (x,) = _lp(np.random.default_rng(0))
    scp = to_scp(prob)
    assert scp.sign == -1.0
    np.testing.assert_allclose(scp.c, -np.arange(1, 5))  # CVXPY minimises -objective
    assert scp.offset == pytest.approx(-2.0)
    point = np.full(scp.n, 0.1)
    value = from_scp(prob, scp, point)
    assert prob.status == cp.OPTIMAL_INACCURATE
    np.testing.assert_allclose(x.value, 0.1)
    assert value == pytest.approx(np.arange(1, 5).sum() * 0.1 + 2.0)


def test_from_scp_can_store_a_released_value():
    prob, (x,) = _lp(np.random.default_rng(0))
    scp = to_scp(prob)
    assert from_scp(prob, scp, np.full(scp.n, 0.1), value=-7.5) == -7.5
    assert prob.value == -7.5 and prob.status == cp.OPTIMAL_INACCURATE
    np.testing.assert_allclose(x.value, 0.1)
    with pytest.raises(ValueError, match="value must be finite"):
        from_scp(prob, scp, np.zeros(scp.n), value=np.nan)


def test_from_scp_rejects_bad_input():
    prob, _ = _lp(np.random.default_rng(0))
    scp = to_scp(prob)
    with pytest.raises(ValueError, match="shape"):
        from_scp(prob, scp, np.zeros(scp.n + 1))
    with pytest.raises(ValueError, match="NaN"):
        from_scp(prob, scp, np.full(scp.n, np.nan))
    with pytest.raises(ValueError, match="status"):
        from_scp(prob, scp, np.zeros(scp.n), status="infeasible")
    other, _ = _lp(np.random.default_rng(0))
    with pytest.raises(ValueError, match="not the problem"):
        from_scp(other, scp, np.zeros(scp.n))


def test_dims_and_data_match_cvxpy():
    prob, _ = _mixed(np.random.default_rng(1))
    scp = to_scp(prob)
    data, _, _ = prob.get_problem_data(cp.SCS, solver_opts={"use_quad_obj": False})
    assert scp.dims.zero == data["dims"].zero and scp.dims.nonneg == data["dims"].nonneg
    assert list(scp.dims.soc) == list(data["dims"].soc)
    assert list(scp.dims.psd) == [3]
    assert scp.dims.rows == scp.m
    np.testing.assert_array_equal(scp.A.toarray(), data["A"].toarray())


def test_validation_report_numbers():
    prob, _ = _lp(np.random.default_rng(0))
    scp = to_scp(prob)
    exact = solve_exact(scp)
    rep = validate(scp, exact.x)
    assert rep.max_violation < 1e-7 and rep.violated == 0
    assert rep.objective_gap == pytest.approx(0.0, abs=1e-7)
    assert rep.reference_solver == "CLARABEL"
    # a point that breaks `sum(x) <= 3` by exactly 1 and is 0.5 short of nonneg on x[0]
    point = np.array([-0.5, 1.5, 1.5, 1.5])
    rep = validate(prob, point)  # a problem is compiled first
    viol = cone_violations(scp, point)
    assert rep.max_violation == pytest.approx(viol.max())
    s = scp.b - scp.A @ point
    np.testing.assert_allclose(viol, np.maximum(0, -s))
    assert rep.violated == int(np.sum(viol > 1e-6))
    assert rep.private_value == pytest.approx(np.arange(1, 5) @ point + 2)
    assert rep.objective_gap == pytest.approx(rep.private_value - rep.reference_value)
    assert rep.suboptimality == pytest.approx(-rep.objective_gap)  # maximisation


def test_cone_violations_soc_and_psd_blocks_against_a_loop():
    x = cp.Variable(4)
    X = cp.Variable((2, 2), symmetric=True)
    Y = cp.Variable((3, 3), symmetric=True)
    Z = cp.Variable((2, 2), symmetric=True)
    prob = cp.Problem(cp.Minimize(0), [cp.norm(x) <= 1, cp.norm(x[:2]) <= x[3], x >= -3,
                                       X >> 0, Y >> 0, Z >> np.eye(2)])
    scp = to_scp(prob)
    assert scp.dims.soc == (5, 3) and scp.dims.psd == (2, 3, 2)
    point = np.random.default_rng(5).normal(size=scp.n) * 3
    viol = cone_violations(scp, point)
    s = scp.b - scp.A @ point
    d = scp.dims
    expect = list(np.maximum(0, -s[:d.nonneg]))
    start = d.nonneg
    for q in d.soc:
        blk = s[start:start + q]
        expect.append(max(0.0, np.linalg.norm(blk[1:]) - blk[0]))
        start += q
    for r in d.psd:
        size = r * (r + 1) // 2
        blk, start = s[start:start + size], start + size
        mat, k = np.zeros((r, r)), 0
        for j in range(r):
            for i in range(j, r):
                mat[i, j] = mat[j, i] = blk[k] / (1.0 if i == j else np.sqrt(2))
                k += 1
        expect.append(max(0.0, -np.linalg.eigvalsh(mat)[0]))
    np.testing.assert_allclose(viol, expect, atol=1e-12)
    assert np.sum(np.asarray(expect[d.nonneg:]) > 0) >= 3  # the blocks are really exercised


def test_svec_permutation_matches_clarabel_order():
    r = 4
    M = np.arange(r * r, dtype=float).reshape(r, r)
    M = M + M.T
    lower = [M[i, j] for j in range(r) for i in range(j, r)]  # SCS: lower, column-major
    upper = [M[i, j] for j in range(r) for i in range(j + 1)]  # Clarabel: upper, column-major
    np.testing.assert_array_equal(np.asarray(lower)[svec_to_clarabel(r)], upper)


def test_exact_reports_infeasible_and_unbounded():
    x = cp.Variable()
    scp = to_scp(cp.Problem(cp.Minimize(x), [x >= 1, x <= 0]))
    assert solve_exact(scp).status == cp.INFEASIBLE
    scp = to_scp(cp.Problem(cp.Minimize(x), [x <= 0]))
    out = solve_exact(scp)
    assert out.status == cp.UNBOUNDED and out.value == -np.inf
    rep = validate(scp, np.zeros(scp.n))
    assert rep.reference_value is None and rep.reference_status == cp.UNBOUNDED


def test_cone_is_the_jordan_product_of_the_non_zero_rows():
    from cvxdp.jordan import Orthant, Product, SpinFactor, SymmetricMatrices

    prob, _ = _mixed(np.random.default_rng(2))
    scp = to_scp(prob)
    d = scp.dims
    assert isinstance(scp.cone, Product)
    kinds = [type(b) for b in scp.cone.blocks]
    assert kinds == [Orthant] + [SpinFactor] * len(d.soc) + [SymmetricMatrices] * len(d.psd)
    assert scp.cone.dim == scp.m - d.zero
    assert scp.cone.rank == d.nonneg + 2 * len(d.soc) + sum(d.psd)
    # the slack of an exact solution lies in the cone, read by the algebra itself
    exact = solve_exact(scp)
    s = (scp.b - scp.A @ exact.x)[d.zero:]
    assert scp.cone.eigenvalues(s).min() > -1e-7
    equality_only = cp.Problem(cp.Minimize(0), [cp.Variable(2) == 1])
    assert to_scp(equality_only).cone is None
