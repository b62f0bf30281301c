"""One private solve compiles the user's model once (the entry point's checks, the mechanism,
the counterpart, the certificate and the reference solve share CVXPY's compile); the parameter
map of cvxdp.transform.parametric is CVXPY's own (apply_parameters); and the counterpart built
with one block per class of identical rows is the explicit robust program."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest
from cvxpy.reductions.chain import Chain

import cvxdp
from cvxdp.solvers import perturbation as pert
from cvxdp.transform import to_scp
from cvxdp.transform.parametric import entry_map, program_data


def _lp(m=40, n=6, seed=0):
    rng = np.random.default_rng(seed)
    A = cp.Parameter((m, n), name="A")
    A.value = rng.uniform(0.0, 1.0, (m, n))
    x = cp.Variable(n, name="x")
    prob = cp.Problem(cp.Maximize(cp.sum(x)), [A @ x <= 1, x >= 0, x <= 1])
    return prob, A, x


@pytest.fixture
def compile_spy(monkeypatch):
    """Counts, per problem object, CVXPY's compiles (Chain.apply of the problem) and
    get_problem_data calls."""
    counts: dict[str, dict[int, int]] = {"compile": {}, "data": {}}
    chain_apply = Chain.apply
    get_data = cp.Problem.get_problem_data

    def spy_apply(self, problem, *a, **k):
        if isinstance(problem, cp.Problem):
            counts["compile"][id(problem)] = counts["compile"].get(id(problem), 0) + 1
        return chain_apply(self, problem, *a, **k)

    def spy_data(self, *a, **k):
        counts["data"][id(self)] = counts["data"].get(id(self), 0) + 1
        return get_data(self, *a, **k)

    monkeypatch.setattr(Chain, "apply", spy_apply)
    monkeypatch.setattr(cp.Problem, "get_problem_data", spy_data)
    return counts


@pytest.mark.parametrize("reference", [False, True])
def test_one_private_solve_compiles_the_users_model_once(compile_spy, reference):
    prob, A, x = _lp()
    sol = cvxdp.solve_private(prob, epsilon=1.0, delta=1e-6, rng=0, reference=reference,
                              private=cvxdp.ConstraintPrivacy(A, sensitivity=1e-3),
                              mechanism="perturbation")
    assert x.value is not None and sol.certificate is not None
    assert compile_spy["compile"].get(id(prob)) == 1
    assert compile_spy["data"].get(id(prob)) == 1
    if reference:
        # the shared compile gives the same optimum as CVXPY's own solve of a copy
        opt = cp.Problem(prob.objective, prob.constraints).solve(solver=cp.CLARABEL)
        assert sol.validation.reference_value == pytest.approx(opt, rel=1e-6)


def test_a_changed_value_is_compiled_again_with_the_new_data(compile_spy):
    # the kept program is keyed on the values: new data are never served from the old one
    prob, A, x = _lp(m=8, n=3)
    spec = cvxdp.ConstraintPrivacy(A, sensitivity=1e-3)
    scp1 = to_scp(prob, private=spec)
    assert to_scp(prob, private=spec) is scp1
    A.value = A.value * 2.0
    scp2 = to_scp(prob, private=spec)
    assert scp2 is not scp1
    fresh = to_scp(cp.Problem(prob.objective, prob.constraints))  # a copy, compiled anew
    np.testing.assert_array_equal(scp2.A.toarray(), fresh.A.toarray())
    assert compile_spy["compile"].get(id(prob)) == 1  # CVXPY's map is reused, data re-applied
    assert to_scp(prob).sensitivity is None  # the same program without the specs


def test_program_data_is_cvxpys_data_and_entry_map_is_its_derivative():
    rng = np.random.default_rng(1)
    A = cp.Parameter((4, 3), name="A")
    A.value = rng.normal(size=(4, 3))
    c = cp.Parameter(3, name="c")
    c.value = rng.normal(size=3)
    x = cp.Variable(3)
    prob = cp.Problem(cp.Minimize(c @ x + cp.norm(A[:2] @ x - 1)), [A @ x <= 1, cp.abs(x) <= 2])
    scp = to_scp(prob, private=cvxdp.ObjectivePrivacy(c, sensitivity=0.1))
    c0, off0, A0, b0 = program_data(scp)
    np.testing.assert_array_equal(A0.toarray(), scp.A.toarray())
    np.testing.assert_array_equal(b0, scp.b)
    np.testing.assert_array_equal(c0, scp.c)
    # moving parameter entries moves the data by exactly the map's coefficients (linearity)
    pp = scp.meta["param_prob"]
    cols = np.concatenate([np.arange(pp.param_id_to_col[p.id],
                                     pp.param_id_to_col[p.id] + p.size) for p in (A, c)])
    emap = entry_map(scp, cols)
    step = rng.normal(size=cols.size)
    A_before = A.value.copy()
    new = {A.id: A.value + step[:12].reshape(4, 3, order="F"), c.id: c.value + step[12:]}
    c1, off1, A1, b1 = program_data(scp, new)
    M = np.zeros((scp.m, scp.n + 1))
    np.add.at(M, (emap.row, emap.col), emap.value * step[emap.entry])
    np.testing.assert_allclose(np.hstack([-(A1 - A0).toarray(), (b1 - b0)[:, None]]), M,
                               atol=1e-12)
    q = np.zeros(scp.n + 1)
    np.add.at(q, emap.obj_col, emap.obj_value * step[emap.obj_entry])
    np.testing.assert_allclose(np.append(c1 - c0, off1 - off0), q, atol=1e-12)
    # the user's parameters are not written
    assert np.array_equal(A.value, A_before)


def test_rows_with_the_same_noise_map_share_one_tightening_block():
    # every row of A @ x <= 1 with a private A has E_u = Delta [I | 0]: one class, one SOC
    # block in the counterpart whatever m is (the per-row version had m blocks)
    prob, A, x = _lp(m=300, n=5)
    spec = cvxdp.ConstraintPrivacy(A, sensitivity=1e-3)
    scp = to_scp(prob, private=spec)
    ent = pert.private_entries(scp, (spec,))
    plan = pert.robust_plan(scp, ent)
    assert plan.N == 300 and plan.C == 1
    prog = pert.counterpart(scp, scp.A, scp.b, plan, np.ones(plan.N))
    assert prog.dims.soc == (6,) and prog.n == 6


def _counterpart_optimum(prob, spec, seed=0):
    """The counterpart's optimum (user's sense) for one noise draw, and the pieces to build
    the same robust program by hand."""
    scp = to_scp(prob, private=spec)
    ent = pert.private_entries(scp, (spec,))
    plan = pert.robust_plan(scp, ent)
    from cvxdp.privacy.budgets import ApproxDP

    npl = pert.noise_plan(ApproxDP(1.0, 1e-6), "gaussian", ent, plan, 1e-3)
    g, _ = pert.draw_noise(npl, plan, ent.K, np.random.default_rng(seed))
    noisy = pert.release_parameters(ent, g, npl.sigma_unit)
    A_t, b_t = pert.noisy_program(scp, noisy)
    scale = npl.B * npl.sigma_unit
    sol = pert._solve_tight(pert.counterpart(scp, A_t, b_t, plan, scale), None)
    return scp.sign * sol.value, noisy, scale


def test_counterpart_of_private_lp_rows_is_the_explicit_robust_lp():
    # a~_i'x + B sigma Delta ||x||_2 <= 1 for every row (Ben-Tal, El Ghaoui & Nemirovski
    # 2009, Ch. 1), written directly in CVXPY: the shared-block counterpart has its optimum
    prob, A, x = _lp(m=60, n=4, seed=2)
    Delta = 1e-2
    value, noisy, scale = _counterpart_optimum(prob, cvxdp.ConstraintPrivacy(A, sensitivity=Delta))
    xr = cp.Variable(4)
    robust = cp.Problem(cp.Maximize(cp.sum(xr)), [noisy[A.id] @ xr + scale[0] * Delta
                                                  * cp.norm(xr) <= 1, xr >= 0, xr <= 1])
    robust.solve(solver=cp.CLARABEL)
    assert np.allclose(scale, scale[0])
    assert value == pytest.approx(robust.value, rel=1e-6)


def test_counterpart_of_a_private_norm_is_the_explicit_robust_socp():
    # ||F x||_2 <= 1 with F (r x n) private: each entry reaches one row of the block, every
    # row alike, so the change G x has ||G x|| <= ||G||_op ||x|| <= ||g|| Delta ||x||: the map
    # is one row's, ||E [x; 1]|| = Delta ||x|| (not the whole map's Delta sqrt(r) ||x||), and
    # the rule ||F~ x|| + tau <= 1 is explicit
    rng = np.random.default_rng(4)
    F = cp.Parameter((5, 3), name="F")
    F.value = rng.normal(size=(5, 3))
    x = cp.Variable(3, name="x")
    c = rng.uniform(0.5, 1.5, 3)
    prob = cp.Problem(cp.Maximize(c @ x), [cp.norm(F @ x) <= 1, cp.abs(x) <= 5])
    Delta = 1e-2
    value, noisy, scale = _counterpart_optimum(prob, cvxdp.ConstraintPrivacy(F, sensitivity=Delta))
    xr = cp.Variable(3)
    robust = cp.Problem(cp.Maximize(c @ xr), [cp.norm(noisy[F.id] @ xr) + scale[0] * Delta
                                              * cp.norm(xr) <= 1,
                                              cp.abs(xr) <= 5])
    robust.solve(solver=cp.CLARABEL)
    assert value == pytest.approx(robust.value, rel=1e-6)
