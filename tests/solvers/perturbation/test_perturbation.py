"""Input perturbation + robust counterpart (mechanism="perturbation"): sensitivity conversion,
noisy data, feasibility for the TRUE data over seeds, status of an empty counterpart, refusals,
and that every released number is a function of the noisy parameter (issue 23)."""

from __future__ import annotations

import math

import cvxpy as cp
import numpy as np
import pytest
from scipy import stats

import cvxdp
from cvxdp.errors import BudgetError, PrivacySpecError
from cvxdp.privacy.budgets import ApproxDP, resolve_budget
from cvxdp.privacy.calibration import calibrate_gaussian
from cvxdp.solvers import perturbation as pert
from cvxdp.status import status_of
from cvxdp.transform import to_scp
from cvxdp.transform.reference import cone_violations


def _lp(m=5, n=3, seed=0, private="A"):
    rng = np.random.default_rng(seed)
    A = cp.Parameter((m, n), name="A")
    A.value = rng.uniform(0.2, 1.0, (m, n))
    b = cp.Parameter(m, name="b")
    b.value = np.ones(m)
    x = cp.Variable(n, name="x")
    prob = cp.Problem(cp.Maximize(cp.sum(x)), [A @ x <= b, x >= 0, cp.sum(x) <= 10])
    return prob, A, b, x


def _certificate_holds(cert, *, value, optimum, violation, tol=1e-6):
    """The certificate's bounds hold for the TRUE numbers: ``value`` (objective at the released
    point) and ``optimum`` in the minimised sense, ``violation`` of the true constraints; ``tol``
    covers the exact reference solve only."""
    slack = tol * (1.0 + abs(optimum))
    assert violation <= cert.violation_bound + tol
    assert value <= cert.objective_upper + slack
    assert optimum >= cert.optimum_lower - slack
    assert value - optimum <= cert.gap_bound + slack


def _parts(prob, specs, budget, noise, beta):
    scp = to_scp(prob, private=specs)
    ent = pert.private_entries(scp, specs)
    plan = pert.robust_plan(scp, ent)
    return scp, ent, plan, pert.noise_plan(budget, noise, ent, plan, beta)


def test_noisy_program_at_the_true_values_is_the_compiled_program():
    # LP, SOC and SDP placements: T [theta; 1] at the true theta is to_scp's (A, b)
    rng = np.random.default_rng(1)
    A = cp.Parameter((4, 3), name="A")
    A.value = rng.normal(size=(4, 3))
    P = cp.Parameter((3, 3), name="P")
    P.value = np.eye(3) + 0.1 * rng.normal(size=(3, 3))
    x = cp.Variable(3)
    X = cp.Variable((3, 3), symmetric=True)
    prob = cp.Problem(cp.Minimize(cp.sum(x) + cp.trace(X)),
                      [A @ x <= 1, cp.norm(A[:2] @ x) <= 2, X >> 0, cp.trace(P @ X) >= 1])
    scp = to_scp(prob, private=cvxdp.ConstraintPrivacy([A, P], sensitivity=0.1))
    A_t, b_t = pert.noisy_program(scp, {})
    assert abs(A_t - scp.A).max() == 0.0
    np.testing.assert_array_equal(b_t, scp.b)
    # a noisy value moves exactly the entries the parameter reaches
    noisy = {A.id: A.value + 1.0}
    A_n, _ = pert.noisy_program(scp, noisy)
    assert abs(A_n - scp.A).max() == pytest.approx(1.0)


def test_per_entry_sensitivity_becomes_the_l2_sensitivity_of_the_release():
    # hand computation: A (3x4) with Delta 0.02 and b (3) with Delta 0.5
    rng = np.random.default_rng(0)
    A = cp.Parameter((3, 4), name="A")
    A.value = rng.uniform(size=(3, 4))
    b = cp.Parameter(3, name="b")
    b.value = np.ones(3)
    x = cp.Variable(4)
    prob = cp.Problem(cp.Maximize(cp.sum(x)), [A @ x <= b, x >= 0, x <= 1])
    specs = (cvxdp.ConstraintPrivacy(A, sensitivity=0.02), cvxdp.ScalarPrivacy(b,
                                                                             sensitivity=0.5))
    budget = ApproxDP(1.0, 1e-6)
    scp, ent, plan, npl = _parts(prob, specs, budget, "gaussian", 1e-3)
    assert ent.K == 15
    assert ent.per_param[0]["l2_sensitivity"] == pytest.approx(0.02 * math.sqrt(12))
    assert ent.per_param[1]["l2_sensitivity"] == pytest.approx(0.5 * math.sqrt(3))
    assert ent.l2_sensitivity == pytest.approx(math.sqrt(12 * 0.02**2 + 3 * 0.5**2))
    # sigma per unit of declared sensitivity: the analytic Gaussian is linear in D
    assert npl.sigma_unit == pytest.approx(
        math.sqrt(15) * calibrate_gaussian(epsilon=1.0, delta=1e-6, sensitivity=1.0), rel=1e-9)
    # units: the 3 private rows of A @ x <= b, each reached by 4 entries of A and 1 of b
    assert plan.N == 3 and list(plan.support) == [5, 5, 5]
    # B_u: the chi-square quantile of ||g_S||^2 (5 entries) at 1e-3 / 3 (union bound over the
    # 3 units), below the concentration bound sqrt(5) + sqrt(2 ln(3 / 1e-3))
    np.testing.assert_allclose(npl.B, math.sqrt(stats.chi2.isf(1e-3 / 3, 5)), rtol=1e-9)
    assert np.all(npl.B < math.sqrt(5) + math.sqrt(2 * math.log(3 / 1e-3)))
    # the drawn noise has standard deviation Delta_p * sigma_unit per parameter
    g = np.random.default_rng(3).standard_normal((4000, 15))
    z = np.array([pert.release_parameters(ent, gi, npl.sigma_unit)[A.id] - A.value
                  for gi in g[:400]])
    assert np.std(z) == pytest.approx(0.02 * npl.sigma_unit, rel=0.05)
    assert A.value is not None and np.all(A.value < 1.0)  # the user's parameter untouched


def _feasible_rate(noise, beta, tighten=True, seeds=200):
    prob, A, b, x = _lp()
    specs = (cvxdp.ConstraintPrivacy(A, sensitivity=0.05),)
    scp, ent, plan, npl = _parts(prob, specs, ApproxDP(2.0, 1e-5), noise, beta)
    if not tighten:  # negative control: the noisy LP solved as it is
        npl = pert.NoisePlan(npl.noise, npl.sigma_unit, 0 * npl.B, npl.q, npl.record, beta)
    ok = solved = 0
    for s in range(seeds):
        gen = np.random.default_rng(s)
        g, _ = pert.draw_noise(npl, plan, ent.K, gen)
        noisy = pert.release_parameters(ent, g, npl.sigma_unit)
        A_t, b_t = pert.noisy_program(scp, noisy)
        cp_ = pert.counterpart(scp, A_t, b_t, plan, npl.B * npl.sigma_unit * (1 if tighten
                                                                             else 0))
        from cvxdp.transform.exact import solve_exact

        sol = solve_exact(cp_)
        if sol.x is None:
            continue
        solved += 1
        ok += cone_violations(scp, sol.x[:scp.n]).max() <= 1e-7
    return ok / max(solved, 1), solved


def test_gaussian_counterpart_is_feasible_for_the_true_data_with_probability_1_minus_beta():
    beta = 0.1
    rate, solved = _feasible_rate("gaussian", beta)
    assert solved >= 150
    assert rate >= 1 - beta - 3 * math.sqrt(beta * (1 - beta) / solved)
    # negative control: without the tightening the noisy LP's optimum is often infeasible
    rate0, _ = _feasible_rate("gaussian", beta, tighten=False, seeds=60)
    assert rate0 < 0.5


def test_truncated_counterpart_is_feasible_for_the_true_data_on_every_seed():
    rate, solved = _feasible_rate("truncated", None)
    assert solved >= 150
    assert rate == 1.0


@pytest.mark.parametrize("noise", ["gaussian", "truncated"])
def test_solve_private_perturbation_on_soc_and_sdp_is_feasible_for_the_true_data(noise):
    rng = np.random.default_rng(2)
    F = cp.Parameter((3, 3), name="F")
    F.value = rng.normal(size=(3, 3))
    x = cp.Variable(3, name="x")
    X = cp.Variable((3, 3), symmetric=True, name="X")
    C = cp.Parameter((3, 3), name="C")
    C.value = np.eye(3) + 0.1 * np.ones((3, 3))
    prob = cp.Problem(cp.Maximize(cp.sum(x) + cp.trace(X)),
                      [cp.norm(F @ x) <= 1, X >> 0, cp.trace(C @ X) <= 1, cp.abs(x) <= 5])
    before = (F.value.copy(), C.value.copy())
    sol = cvxdp.solve_private(prob, epsilon=20.0, delta=1e-6, rng=0, mechanism="perturbation",
                              noise=noise, private=cvxdp.ConstraintPrivacy([F, C], 1e-3))
    assert sol.certificate is not None
    status, reason = status_of(sol.certificate)                  # follows the bound
    assert sol.status == status and sol.status_reason.startswith(reason)
    # X is free publicly (trace(C @ X) <= 1 is private): the reason names it
    assert sol.status_reason.endswith("the private data multiply X, which no public "
                                      "constraint bounds: add public bounds on them")
    xp, Xp = x.value.copy(), X.value.copy()  # the exact solve below overwrites them
    assert np.linalg.norm(F.value @ x.value) <= 1 + 1e-7
    assert np.trace(C.value @ X.value) <= 1 + 1e-7
    assert np.linalg.eigvalsh(X.value).min() >= -1e-7
    np.testing.assert_array_equal(F.value, before[0])  # the user's parameters untouched
    np.testing.assert_array_equal(C.value, before[1])
    exact = cp.Problem(prob.objective, [cp.norm(F.value @ x) <= 1, X >> 0,
                                        cp.trace(C.value @ X) <= 1, cp.abs(x) <= 5]).solve()
    assert 0 < exact - sol.value < 0.5 * abs(exact)  # feasible, hence below the optimum
    # the true relative gap is above 1e-2, so no valid certificate can claim the default
    # accuracy: user_limit is the only honest status
    assert (exact - sol.value) / max(1.0, abs(exact)) > 1e-2 and sol.status == "user_limit"
    true_viol = max(0.0, np.linalg.norm(F.value @ xp) - 1, np.trace(C.value @ Xp) - 1,
                    -np.linalg.eigvalsh(Xp).min(), np.abs(xp).max() - 5)
    _certificate_holds(sol.certificate, value=-sol.value, optimum=-exact, violation=true_viol)
    assert sol.privacy.epsilon == pytest.approx(20.0) and sol.privacy.delta == 1e-6
    assert "noisy slack test" in sol.certificate.how


def test_an_empty_counterpart_releases_the_loosened_point_never_infeasible():
    prob, A, b, x = _lp()
    prob = cp.Problem(prob.objective, [A.value @ x <= b, x >= 0.3])
    sol = cvxdp.solve_private(prob, epsilon=0.05, delta=1e-6, rng=0, mechanism="perturbation",
                              private=cvxdp.ScalarPrivacy(b, sensitivity=0.5))
    assert sol.info["robust_status"] == "infeasible"
    assert sol.status == "user_limit" and prob.status == "user_limit"
    assert "tightened counterpart" in sol.status_reason and x.value is not None
    # the loosened point's violation of the TRUE rows is within its certified bound
    true_viol = max(0.0, float(np.max(A.value @ x.value - b.value)), float(np.max(0.3 - x.value)))
    assert true_viol <= sol.certificate.violation_bound + 1e-9
    assert sol.privacy.epsilon == pytest.approx(0.05)  # the budget was spent


def test_refusals_happen_before_any_budget_is_spent():
    prob, A, b, x = _lp()
    # private coefficients in an equality, multiplying variables nothing public bounds
    eq = cp.Problem(prob.objective, [A @ x == b])
    with pytest.raises(PrivacySpecError, match="equality.*bound on neither side"):
        cvxdp.solve_private(eq, epsilon=1, delta=1e-6, mechanism="perturbation", public=[b],
                            private=cvxdp.ConstraintPrivacy(A, sensitivity=0.01))
    with pytest.raises(BudgetError, match="delta"):
        cvxdp.solve_private(prob, epsilon=1, mechanism="perturbation", noise="gaussian",
                            public=[A], private=cvxdp.ScalarPrivacy(b, sensitivity=0.01))
    with pytest.raises(BudgetError, match="zCDP"):
        cvxdp.solve_private(prob, rho=0.5, mechanism="perturbation", noise="truncated",
                            public=[A], private=cvxdp.ScalarPrivacy(b, sensitivity=0.01))
    with pytest.raises(ValueError, match="mechanism"):
        cvxdp.solve_private(prob, epsilon=1, delta=1e-6, mechanism="perturb",
                            public=[A], private=cvxdp.ScalarPrivacy(b, sensitivity=0.01))


def test_truncated_record_accounts_its_delta_exactly():
    prob, A, b, x = _lp()
    specs = (cvxdp.ScalarPrivacy(b, sensitivity=0.1),)
    eps, delta = 0.7, 1e-6
    _, ent, plan, npl = _parts(prob, specs, ApproxDP(eps, delta), "truncated", None)
    d_g = delta / 2
    assert npl.sigma_unit == pytest.approx(
        calibrate_gaussian(epsilon=eps, delta=d_g, sensitivity=math.sqrt(5)), rel=1e-12)
    q = npl.q
    assert (d_g + math.exp(eps) * q) / (1 - q) == pytest.approx(delta, rel=1e-12)
    # the bound B_u makes P(||g_S|| > B_u for some u) <= q: checked by simulation at a larger q
    B = np.sqrt(plan.support) + math.sqrt(2 * math.log(plan.N / 0.2))
    g = np.random.default_rng(0).standard_normal((20000, ent.K))
    out = np.any(np.sqrt((plan.indicator @ (g * g).T).T) > B, axis=1).mean()
    assert out <= 0.2
    sol = cvxdp.solve_private(prob, epsilon=eps, delta=delta, rng=0, private=specs,
                              public=[A], mechanism="perturbation", noise="truncated")
    assert sol.privacy.epsilon == pytest.approx(eps) and sol.privacy.delta == delta
    assert sol.privacy.records[0].mechanism == "truncated_gaussian"


def test_released_answer_depends_on_the_private_data_only_through_the_noisy_parameter(
        monkeypatch):
    # run on b, then on a neighbour b' (every entry moved by <= Delta) with the SAME released
    # noisy parameter: every released field is the same; reference=True (exact, not private)
    # is the positive control that sees the difference.
    prob, A, b, x = _lp()
    spec = cvxdp.ScalarPrivacy(b, sensitivity=0.02)
    sol1 = cvxdp.solve_private(prob, epsilon=8.0, delta=1e-6, rng=4, private=spec,
                               public=[A], mechanism="perturbation", reference=True)
    released = sol1.info["noisy_parameters"]["b"].copy()
    x1 = x.value.copy()
    b.value = b.value + 0.02 * np.array([1, -1, 1, -1, 1])
    monkeypatch.setattr(pert.solve, "release_parameters", lambda ent, g, s: {b.id: released})
    sol2 = cvxdp.solve_private(prob, epsilon=8.0, delta=1e-6, rng=4, private=spec,
                               public=[A], mechanism="perturbation", reference=True)
    np.testing.assert_allclose(x.value, x1, rtol=1e-12, atol=1e-12)
    assert sol2.value == pytest.approx(sol1.value, rel=1e-12)
    keys = set(sol1.info) - {"noisy_parameters"}
    assert {k: str(sol1.info[k]) for k in keys} == {k: str(sol2.info[k]) for k in keys}
    assert sol1.privacy.epsilon == sol2.privacy.epsilon
    # the certificate and the status are post-processing of the release: the same too
    assert sol1.certificate == sol2.certificate and sol1.certificate is not None
    assert (sol1.status, sol1.status_reason) == (sol2.status, sol2.status_reason)
    assert sol1.validation.max_violation != pytest.approx(sol2.validation.max_violation,
                                                          abs=1e-6) or \
        sol1.validation.reference_value != pytest.approx(sol2.validation.reference_value)


def test_same_seed_same_answer_and_budget_types():
    prob, A, b, x = _lp()
    spec = cvxdp.ConstraintPrivacy(A, sensitivity=0.01)
    v1 = prob.solve(method="private", epsilon=2.0, delta=1e-6, rng=7, private=spec,
                    public=[b], mechanism="perturbation")
    v2 = prob.solve(method="private", epsilon=2.0, delta=1e-6, rng=7, private=spec,
                    public=[b], mechanism="perturbation")
    assert v1 == pytest.approx(v2, rel=1e-12)
    sol = cvxdp.solve_private(prob, rho=0.3, rng=7, private=spec, public=[b],
                              mechanism="perturbation")
    assert sol.privacy.rho == pytest.approx(0.3, rel=1e-9)
    assert resolve_budget(rho=0.3).rho == 0.3


@pytest.mark.parametrize("noise", ["gaussian", "truncated"])
def test_private_data_inside_an_epigraph_cone_keeps_the_counterpart_feasible(noise):
    # sum_squares(A x - b) with b private compiles to a rotated cone whose margin along the
    # epigraph variable is bounded: the shift must stay inside the norm (else: infeasible at
    # epsilon = 1, as before the fix of the SOC rows).  The private data sit only in the fit
    # term, so the released point is the noisy objective's minimiser (fit_term.py) and the
    # certificate's upper bound is >= the TRUE objective at it.
    rng = np.random.default_rng(0)
    A = rng.uniform(size=(12, 4))
    b = cp.Parameter(12, name="b")
    b.value = A @ rng.uniform(0, 1, 4) + 0.1 * rng.normal(size=12)
    x = cp.Variable(4, name="x")
    prob = cp.Problem(cp.Minimize(cp.sum_squares(A @ x - b)), [x >= 0, x <= 2])
    sol = cvxdp.solve_private(prob, epsilon=1.0, delta=1e-6, rng=0, mechanism="perturbation",
                              noise=noise, private=cvxdp.ScalarPrivacy(b, sensitivity=1e-2))
    assert sol.certificate is not None
    assert (sol.status, sol.status_reason) == status_of(sol.certificate)  # follows the bound
    true_obj = float(np.sum((A @ x.value - b.value) ** 2))
    assert sol.certificate.objective_upper >= true_obj - 1e-7
    exact = cp.Problem(cp.Minimize(cp.sum_squares(A @ x - b.value)), [x >= 0, x <= 2]).solve()
    assert true_obj - exact < 0.5
    # the epigraph cone is the only constraint with private data; the point meets it
    _certificate_holds(sol.certificate, value=true_obj, optimum=exact, violation=0.0)


@pytest.mark.parametrize("noise", ["gaussian", "truncated"])
def test_a_huge_epsilon_runs_and_gives_the_exact_answer(noise):
    # epsilon = 1e6 (the gallery's "no noise to speak of" budget): e^epsilon overflows a float
    prob, A, b, x = _lp()
    sol = cvxdp.solve_private(prob, epsilon=1e6, delta=1e-6, rng=0, mechanism="perturbation",
                              noise=noise, private=cvxdp.ConstraintPrivacy(A, sensitivity=1e-2),
                              public=[b])
    xp = x.value.copy()  # the exact solve below overwrites x.value
    exact = cp.Problem(prob.objective, [A.value @ x <= b.value, x >= 0,
                                        cp.sum(x) <= 10]).solve()
    assert sol.certificate is not None
    assert (sol.status, sol.status_reason) == status_of(sol.certificate)  # follows the bound
    assert np.max(A.value @ xp - b.value) <= 1e-7
    assert sol.privacy.epsilon == pytest.approx(1e6) and sol.privacy.delta == 1e-6
    true_viol = max(0.0, float(np.max(A.value @ xp - b.value)), float(-xp.min()),
                    float(xp.sum() - 10))
    _certificate_holds(sol.certificate, value=-float(np.sum(xp)), optimum=-exact,
                       violation=true_viol)
    if noise == "gaussian":
        assert sol.value == pytest.approx(exact, rel=1e-3)  # sigma ~ D / sqrt(2 eps), not 0
        assert sol.status == "optimal_inaccurate"  # the certified gap is below 1e-2 here
    else:
        # bounded noise has a floor: B_u sigma_u -> sqrt(K) as epsilon grows (the support must
        # cover a neighbour's shift), so each row is tightened by about the parameter's l2
        # sensitivity sqrt(15) * 0.01 times ||x||_2; the gap stays below that
        assert sol.info["radius_max"] == pytest.approx(math.sqrt(15) * 1e-2, rel=0.05)
        assert 0 < exact - sol.value < 0.1 * exact


def _sdp(r=16):
    rng = np.random.default_rng(5)
    G = rng.normal(size=(r, r))
    C = cp.Parameter((r, r), name="C")
    C.value = np.eye(r) + G @ G.T / (4 * r)
    X = cp.Variable((r, r), symmetric=True, name="X")
    prob = cp.Problem(cp.Maximize(cp.trace(X)), [cp.trace(C @ X) <= 1, X >> 0,
                                                  cp.trace(X) <= 10])
    return prob, C, X


@pytest.mark.parametrize("noise", ["gaussian", "truncated"])
def test_sdp_data_row_uses_the_spectral_bound_times_the_nuclear_norm(noise):
    # <C~, X> + tau <= 1 with tau >= sigma Delta (B_op ||X_1||_* + B_F ||X - X_1||_F): at
    # r = 16 the shapes select it (public); the point is feasible for the true C, and the
    # counterpart is never tighter than the Frobenius one with the same bounds (X_1 = 0)
    prob, C, X = _sdp()
    spec = cvxdp.ConstraintPrivacy(C, sensitivity=1e-3)
    budget = ApproxDP(1.0, 1e-6)
    scp, ent, plan, npl = _parts(prob, (spec,), budget, noise, 1e-3)
    assert plan.matrix[0] == (16, 16) and bool(npl.nuclear[0])
    events = 2  # one Frobenius and one spectral bound, union bound
    fail = 1e-3 if noise == "gaussian" else npl.q
    # B_F: the chi-square quantile of 256 entries; B_op = sqrt 16 + sqrt 16 + t
    t = math.sqrt(2 * math.log(events / fail))
    assert npl.B[0] == pytest.approx(math.sqrt(stats.chi2.isf(fail / events, 256)), rel=1e-9)
    assert npl.B_op[0] == pytest.approx(8 + t)
    assert t == pytest.approx(math.sqrt(2 * math.log(events / fail)), rel=1e-9)
    sol = cvxdp.solve_private(prob, epsilon=1.0, delta=1e-6, rng=1, private=spec,
                              mechanism="perturbation", noise=noise)
    assert sol.certificate is not None
    assert (sol.status, sol.status_reason) == status_of(sol.certificate)  # follows the bound
    assert np.trace(C.value @ X.value) <= 1 + 1e-7
    assert np.linalg.eigvalsh(X.value).min() >= -1e-7
    Xp = X.value.copy()  # the exact solve below overwrites X.value
    exact = cp.Problem(prob.objective, [cp.trace(C.value @ X) <= 1, X >> 0,
                                        cp.trace(X) <= 10]).solve()
    true_viol = max(0.0, float(np.trace(C.value @ Xp)) - 1,
                    -float(np.linalg.eigvalsh(Xp).min()), float(np.trace(Xp)) - 10)
    _certificate_holds(sol.certificate, value=-float(np.trace(Xp)), optimum=-exact,
                       violation=true_viol)
    from cvxdp.transform.exact import solve_exact

    gen = np.random.default_rng(1)
    g, _ = pert.draw_noise(npl, plan, ent.K, gen)
    A_t, b_t = pert.noisy_program(scp, pert.release_parameters(ent, g, npl.sigma_unit))
    both = solve_exact(pert.counterpart(scp, A_t, b_t, plan, npl.B * npl.sigma_unit,
                                        npl.nuclear, npl.B_op * npl.sigma_unit))
    fro = solve_exact(pert.counterpart(scp, A_t, b_t, plan, npl.B * npl.sigma_unit))
    assert both.value <= fro.value + 1e-7  # minimised -trace(X)
    assert cone_violations(scp, both.x[:scp.n]).max() <= 1e-7


def test_the_spectral_bound_wins_where_the_solution_is_low_rank():
    # max <V, X> with V rank one: the optimum is rank one, where ||X||_* = ||X||_F and the
    # spectral bound (sqrt r + sqrt r + t) is far below the Frobenius one (r + t)
    rng = np.random.default_rng(2)
    r = 16
    v = rng.normal(size=r)
    C = cp.Parameter((r, r), name="C")
    C.value = np.eye(r)
    X = cp.Variable((r, r), symmetric=True)
    prob = cp.Problem(cp.Maximize(cp.trace(np.outer(v, v) @ X)),
                      [cp.trace(C @ X) <= 1, X >> 0, cp.trace(X) <= 10])
    spec = cvxdp.ConstraintPrivacy(C, sensitivity=1e-3)
    scp, ent, plan, npl = _parts(prob, (spec,), ApproxDP(1.0, 1e-6), "gaussian", 1e-3)
    from cvxdp.transform.exact import solve_exact

    g, _ = pert.draw_noise(npl, plan, ent.K, np.random.default_rng(0))
    A_t, b_t = pert.noisy_program(scp, pert.release_parameters(ent, g, npl.sigma_unit))
    both = solve_exact(pert.counterpart(scp, A_t, b_t, plan, npl.B * npl.sigma_unit,
                                        npl.nuclear, npl.B_op * npl.sigma_unit))
    fro = solve_exact(pert.counterpart(scp, A_t, b_t, plan, npl.B * npl.sigma_unit))
    exact = -float(v @ v)  # X = v v' / |v|^2 at tr(X) = 1
    # the loss against the exact optimum (noise in C~ plus tightening) shrinks by about a
    # quarter here (the tightening alone by B_op / B_F = 0.65)
    ratio = (both.value - exact) / (fro.value - exact)
    assert 0 < ratio < 0.85
    assert npl.B_op[0] / npl.B[0] < 0.65


def test_pure_dp_budget_runs_with_laplace_noise():
    prob, A, b, x = _lp()
    sol = cvxdp.solve_private(prob, epsilon=1, mechanism="perturbation", rng=0, public=[A],
                              private=cvxdp.ScalarPrivacy(b, sensitivity=0.01))
    assert sol.info["noise"] == "laplace"
    assert sol.privacy.delta == 0.0 and sol.privacy.epsilon == pytest.approx(1.0)
    # the scale per unit of sensitivity: l1 sensitivity (b's 5 entries) over epsilon
    assert sol.privacy.details["sigma_unit"] == pytest.approx(5.0, rel=1e-15)
    assert sol.certificate.probability == pytest.approx(1 - 1e-3)
