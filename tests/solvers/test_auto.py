"""mechanism="auto" (the public choice between the MWU and perturbation) and a privacy audit of
the perturbed parameter release (issue 23)."""

from __future__ import annotations

import warnings

import cvxpy as cp
import numpy as np
import pytest

import cvxdp
from cvxdp.audit import audit_mechanism
from cvxdp.privacy.budgets import ApproxDP, resolve_budget
from cvxdp.solvers import auto as mech
from cvxdp.solvers import perturbation as pert
from cvxdp.status import status_of
from cvxdp.transform import to_scp


def _lp(eq=False):
    rng = np.random.default_rng(0)
    A = cp.Parameter((5, 3), name="A")
    A.value = rng.uniform(0.2, 1.0, (5, 3))
    b = cp.Parameter(5, name="b")
    b.value = np.ones(5)
    c = cp.Parameter(3, name="c")
    c.value = np.ones(3)
    x = cp.Variable(3, name="x")
    cons = [A @ x == b] if eq else [A @ x <= b]
    prob = cp.Problem(cp.Maximize(c @ x), [*cons, x >= 0, cp.sum(x) <= 10])
    return prob, A, b, c, x


def _choose(prob, spec, **budget):
    return mech.choose_mechanism(prob, (spec,), resolve_budget(**budget))


def test_auto_takes_the_mwu_where_perturbation_cannot_run():
    prob, A, b, c, x = _lp()
    # pure DP: perturbation runs with Laplace noise, and the comparison decides
    name, why = _choose(prob, cvxdp.ScalarPrivacy(b, 0.01), epsilon=1.0)
    pred = why["predicted"]
    assert pred["perturbation"]["noise"] == "laplace"
    assert name == ("perturbation" if 2 * pred["perturbation"]["tightening"]
                    <= pred["mwu"]["violation"] else "mwu")
    # private coefficients in an equality over variables nothing public bounds: the band of
    # the equality cannot be bounded
    eq, A2, b2, *_ = _lp(eq=True)
    eq = cp.Problem(eq.objective, eq.constraints[:1])
    name, why = _choose(eq, cvxdp.ConstraintPrivacy(A2, 0.01), epsilon=1.0, delta=1e-6)
    assert name == "mwu" and "equality" in why["rule"]
    # truncated noise has no zCDP bound
    name, why = mech.choose_mechanism(prob, (cvxdp.ScalarPrivacy(b, 0.01),),
                                      resolve_budget(rho=1.0), noise="truncated")
    assert name == "mwu" and "zCDP" in why["rule"]


def test_auto_takes_perturbation_where_the_mwu_bound_is_not_proven_or_larger():
    prob, A, b, c, x = _lp()
    name, why = _choose(prob, cvxdp.ConstraintPrivacy(A, 0.01), epsilon=1.0, delta=1e-6)
    # the MWU theorem's conditions fail at this budget: its formula's value is still its
    # prediction, and it is above perturbation's tightening
    assert name == "perturbation" and why["predicted"]["mwu"]["proven"] is False
    assert why["tightening_perturbation"] <= why["alpha_mwu"]
    # at a large budget both bounds exist; perturbation's tightening is far below the MWU's
    name, why = _choose(prob, cvxdp.ScalarPrivacy(b, 0.01), epsilon=100.0, delta=1e-6)
    assert name == "perturbation"
    assert why["tightening_perturbation"] < 0.5 * why["alpha_mwu"]
    name, _ = _choose(prob, cvxdp.ObjectivePrivacy(c, 0.01), epsilon=1.0, delta=1e-6)
    assert name == "perturbation"


def test_auto_takes_the_mwu_when_its_proven_violation_is_smaller(monkeypatch):
    prob, A, b, c, x = _lp()
    _, why = _choose(prob, cvxdp.ScalarPrivacy(b, 0.01), epsilon=100.0, delta=1e-6)
    small = 0.5 * why["tightening_perturbation"]
    monkeypatch.setattr(mech, "_mwu_bound", lambda scp, budget, opts: (small, 10.0, True))
    name, why2 = _choose(prob, cvxdp.ScalarPrivacy(b, 0.01), epsilon=100.0, delta=1e-6)
    assert name == "mwu" and why2["alpha_mwu"] == small


def test_auto_compares_predicted_certificates_like_with_like(monkeypatch):
    # perturbation's certificate: violation 0, gap from the row shift 2 t between its
    # tightened and loosened counterparts; the MWU's: violation and gap shift alpha.  An MWU
    # alpha between t and 2 t therefore picks the MWU (comparing alpha with t alone did not)
    prob, A, b, c, x = _lp()
    _, why = _choose(prob, cvxdp.ScalarPrivacy(b, 0.01), epsilon=100.0, delta=1e-6)
    t = why["tightening_perturbation"]
    for alpha, expected in ((1.5 * t, "mwu"), (2.0 * t, "perturbation"),
                            (2.5 * t, "perturbation")):
        monkeypatch.setattr(mech, "_mwu_bound", lambda scp, budget, opts, a=alpha:
                            (a, 10.0, False))
        name, why2 = _choose(prob, cvxdp.ScalarPrivacy(b, 0.01), epsilon=100.0, delta=1e-6)
        assert name == expected, alpha / t
        pred = why2["predicted"]
        assert pred["perturbation"]["violation"] == 0.0
        assert pred["perturbation"]["gap_shift"] == pytest.approx(2 * t)
        assert pred["mwu"]["gap_shift"] == pred["mwu"]["violation"] == alpha


def test_auto_reads_no_private_value():
    # the choice and its numbers are the same on two different datasets with the same
    # structure and declarations
    p1, A1, b1, c1, x1 = _lp()
    w1 = _choose(p1, cvxdp.ConstraintPrivacy(A1, 0.01), epsilon=50.0, delta=1e-6)
    A1.value = A1.value * 0.5 + 0.3
    w2 = _choose(p1, cvxdp.ConstraintPrivacy(A1, 0.01), epsilon=50.0, delta=1e-6)
    assert w1[0] == w2[0]
    assert w1[1]["tightening_perturbation"] == pytest.approx(w2[1]["tightening_perturbation"])


def test_auto_reports_which_mechanism_ran_and_why():
    prob, A, b, c, x = _lp()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = cvxdp.solve_private(prob, epsilon=1.0, delta=1e-6, rng=0, mechanism="auto",
                                  private=cvxdp.ConstraintPrivacy(A, 0.01), public=[b, c])
        assert sol.info["mechanism"] == "perturbation" and "rule" in sol.info["auto"]
        # the auto-chosen perturbation answer's status is its certificate's, and it holds
        assert (sol.status, sol.status_reason) == status_of(sol.certificate)
        assert prob.status == sol.status and prob.solver_stats.solver_name == "CVXDP (private)"
        xp = x.value.copy()
        true_viol = max(0.0, float(np.max(A.value @ xp - b.value)), float(-xp.min()),
                        float(xp.sum() - 10))
        assert true_viol <= sol.certificate.violation_bound + 1e-7
        exact = cp.Problem(prob.objective, [A.value @ x <= b.value, x >= 0,
                                            cp.sum(x) <= 10]).solve()
        assert sol.certificate.optimum_lower <= -exact + 1e-6 * abs(exact)
        assert exact - float(c.value @ xp) <= sol.certificate.gap_bound + 1e-6 * abs(exact)
        sol = cvxdp.solve_private(prob, epsilon=1.0, rng=0, mechanism="auto",
                                  private=cvxdp.ScalarPrivacy(b, 0.01), public=[A, c])
        pred = sol.info["auto"]["predicted"]
        smaller = ("perturbation" if pred["perturbation"]["tightening"]
                   <= pred["mwu"]["violation"] else "mwu")
        assert sol.info["mechanism"] == smaller and sol.privacy.delta == 0.0
        sol = cvxdp.solve_private(prob, epsilon=1.0, delta=1e-6, rng=0, mechanism="auto",
                                  private=cvxdp.ObjectivePrivacy(c, 0.01), public=[A, b])
    assert sol.info["mechanism"] == "perturbation"
    assert sol.info["method"] == "objective_perturbation"


def _release(noise: str, eps: float, delta: float):
    """mechanism(data, rng) -> the released noisy b[0] (b has one entry, Delta = 1)."""
    b = cp.Parameter(1, name="b")
    b.value = np.zeros(1)
    x = cp.Variable(1)
    prob = cp.Problem(cp.Maximize(x[0]), [x <= b, x >= -100])
    spec = cvxdp.ScalarPrivacy(b, sensitivity=1.0)
    scp = to_scp(prob, private=spec)
    ent = pert.private_entries(scp, (spec,))
    plan = pert.robust_plan(scp, ent)
    npl = pert.noise_plan(ApproxDP(eps, delta), noise, ent, plan, 1e-3)

    def run(value, gen):
        g, _ = pert.draw_noise(npl, plan, ent.K, gen)
        return float(value + npl.sigma_unit * g[0])

    return run


@pytest.mark.parametrize("noise", ["gaussian", "truncated", "laplace"])
def test_audit_of_the_perturbed_parameter_release(noise):
    eps, delta = 1.0, 1e-3
    res = audit_mechanism(_release(noise, eps, delta), 0.0, 1.0, epsilon=eps, delta=delta,
                          n_samples=20000, rng=1)
    assert res.passed
    # positive control: the same release with half the noise is caught
    run = _release(noise, eps, delta)

    def loud(value, gen):
        return value + 0.5 * (run(0.0, gen))

    bad = audit_mechanism(loud, 0.0, 1.0, epsilon=eps, delta=delta, n_samples=20000, rng=1)
    assert not bad.passed


def test_predicted_tightening_bounds_every_publicly_feasible_point():
    # A x <= 1, 0 <= x <= 1 with private A (m=50, n=10): the prediction is the largest
    # tightening B_u sigma ||E_u [x; 1]|| over the public set, computed from ||x||_2^2 <=
    # ||x||_inf ||x||_1; it must bound the tightening at every public point, and it is
    # sqrt(n)-times smaller than the ||x||_1-only bound here
    rng = np.random.default_rng(3)
    A = cp.Parameter((50, 10), name="A", value=rng.uniform(0, 1, (50, 10)))
    x = cp.Variable(10)
    prob = cp.Problem(cp.Maximize(cp.sum(x)), [A @ x <= 1, x >= 0, x <= 1])
    spec = cvxdp.ConstraintPrivacy(A, sensitivity=1e-3)
    budget = resolve_budget(epsilon=1.0, delta=1e-6)
    scp = to_scp(prob, private=spec)
    ent = pert.private_entries(scp, (spec,))
    plan = pert.robust_plan(scp, ent)
    npl = pert.noise_plan(budget, "gaussian", ent, plan, 1e-3)
    _, why = mech.choose_mechanism(prob, (spec,), budget, noise="gaussian")
    R = why["trace_bound"]
    pred = mech._largest_tightening(scp, plan, npl, R)
    assert pred == pytest.approx(why["tightening_perturbation"], rel=1e-12)
    worst = 0.0
    for _ in range(200):
        xs = rng.uniform(0, 1, 10) * (rng.uniform() < 0.5) + (rng.uniform() >= 0.5)
        xs = np.minimum(xs, 1.0)
        if xs.sum() > R:
            xs *= R / xs.sum()
        z = np.append(xs, 1.0)
        worst = max(worst, max(npl.B[u] * npl.sigma_unit * np.linalg.norm(E @ z)
                               for u, E in enumerate(plan.E)))
    assert worst <= pred * (1 + 1e-12)
    # the ||x||_1 <= R bound alone would be sqrt(R) = 3.2x larger
    by_l1 = float(np.max(npl.B * npl.sigma_unit)) * 1e-3 * R
    assert pred <= by_l1 / 2


def test_accuracy_sets_the_status_threshold_and_does_not_choose_the_mechanism():
    # accuracy= is the status rule's threshold on every path; under auto it must not switch
    # to the MWU (it did: accuracy was listed among the MWU-only options)
    prob, A, b, c, x = _lp()
    kw = dict(epsilon=1.0, delta=1e-6, rng=0, private=cvxdp.ConstraintPrivacy(A, 0.01),
              public=[b, c])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plain = cvxdp.solve_private(prob, **kw)
        loose = cvxdp.solve_private(prob, accuracy=0.5, **kw)
    assert loose.info["mechanism"] == plain.info["mechanism"] == "perturbation"
    assert (loose.status, loose.status_reason) == status_of(loose.certificate, 0.5)
