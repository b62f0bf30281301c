"""Privacy fails closed: what a private solve leaves on the user's problem, what ``explain``
reads, refusals that depend on private values, union bounds, float deltas, undeclared
parameters.  Each test is the reproducer of a defect found by replaying the solvers as an
attacker would."""

from __future__ import annotations

import math

import cvxpy as cp
import numpy as np
import pytest

import cvxdp
from cvxdp.errors import PrivacySpecError
from cvxdp.privacy.accountant import PrivacyAccountant, PrivacyRecord, compose
from cvxdp.privacy.budgets import ApproxDP, PureDP


def _portfolio(n: int = 200, d: int = 4):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, d))
    Sigma = cp.Parameter((d, d), PSD=True, name="Sigma", value=X.T @ X / n)
    w = cp.Variable(d, name="w")
    prob = cp.Problem(cp.Minimize(cp.quad_form(w, Sigma) - np.ones(d) @ w / 10),
                      [cp.sum(w) == 1, w >= 0])
    return prob, Sigma, w, X


def test_quad_form_value_is_the_released_one():
    prob, Sigma, w, X = _portfolio()
    v = prob.solve(method="private", epsilon=1.0, delta=1e-6, rng=1,
                   private=cvxdp.ObjectivePrivacy(Sigma, sensitivity=2 * 9 / 200))
    true_at_w = float(w.value @ Sigma.value @ w.value - w.value.sum() / 10)
    assert prob.value == v
    assert not math.isclose(prob.value, true_at_w, rel_tol=1e-9)
    assert prob.solver_stats is not None and prob.solver_stats.solver_name.startswith("CVXDP")


def test_explain_does_not_read_private_values():
    d = 4
    w = cp.Variable(d)
    # the same structure with a PSD and a (within CVXPY's tolerance) indefinite private value
    answers = []
    for shift in (1.0, -1e-9):
        S = cp.Parameter((d, d), PSD=True, name="S")
        S.project_and_assign(np.diag([1.0, 1.0, 1.0, 0.0]))
        S._value = np.diag([1.0, 1.0, 1.0, shift])  # data a survey may give: not our choice
        prob = cp.Problem(cp.Minimize(cp.quad_form(w, S)), [cp.sum(w) == 1])
        answers.append(cvxdp.explain(prob, cvxdp.ObjectivePrivacy(S, sensitivity=0.1)))
    assert answers[0] == answers[1] == []


@pytest.mark.parametrize("scale", [1e307, 1e306])
def test_huge_finite_private_values_are_clipped_not_refused(scale):
    A = cp.Parameter((3, 2), name="A", value=np.full((3, 2), scale))
    x = cp.Variable(2, nonneg=True)
    prob = cp.Problem(cp.Maximize(cp.sum(x)), [A @ x <= 1, x <= 1])
    acct = cvxdp.PrivacyAccountant(ApproxDP(10.0, 1e-5))
    sol = prob.solve_private(epsilon=1.0, delta=1e-6, rng=0, accountant=acct,
                             private=cvxdp.ConstraintPrivacy(A, sensitivity=1.0))
    assert sol.privacy.epsilon is not None
    assert len(acct.ledger) == 1
    assert sol.info.get("clipped_domain") is not None


def test_several_quad_form_constraints_are_union_bounded():
    rng = np.random.default_rng(3)
    d = 3
    mats = [cp.Parameter((d, d), PSD=True, name=f"S{k}",
                         value=np.cov(rng.normal(size=(d, 50)))) for k in range(3)]
    w = cp.Variable(d)
    prob = cp.Problem(cp.Maximize(cp.sum(w)),
                      [cp.quad_form(w, S) <= 1.0 for S in mats] + [w >= 0])
    beta = 1e-3
    sol = prob.solve_private(epsilon=1.0, delta=1e-6, rng=0, beta=beta,
                             private=[cvxdp.ConstraintPrivacy(S, sensitivity=1e-3)
                                      for S in mats])
    tails = sol.privacy.details["tail"]
    assert tails == pytest.approx(math.sqrt(2 * math.log(3 / beta)))


def test_float_delta_counts_in_the_totals():
    eps = 0.5
    rec = PrivacyRecord("exponential", PureDP(eps), "test", params={"float_delta": 1e-12},
                        count=10)
    acct = PrivacyAccountant(ApproxDP(100.0, 1e-6))
    acct.spend(rec)
    assert acct.report().details.get("float_delta") == pytest.approx(1e-11)
    # the samplers' delta adds to the composed delta (basic composition), whatever its size
    assert compose([rec], notion="approx", delta=1e-6).delta == pytest.approx(1e-6 + 1e-11)
    big = PrivacyRecord("exponential", PureDP(eps), "test", params={"float_delta": 1e-7},
                        count=10)
    assert compose([big], notion="approx", delta=1e-6).delta == pytest.approx(2e-6)


def test_mwu_oracle_record_carries_float_delta():
    rng = np.random.default_rng(0)
    A = cp.Parameter((20, 5), name="A", value=rng.uniform(0, 1, (20, 5)))
    x = cp.Variable(5, nonneg=True)
    prob = cp.Problem(cp.Maximize(cp.sum(x)), [A @ x <= 1, cp.sum(x) <= 2])
    sol = prob.solve_private(epsilon=1.0, delta=1e-6, rng=0, mechanism="mwu",
                             private=cvxdp.ConstraintPrivacy(A, sensitivity=1e-3))
    recs = [r for r in sol.privacy.records if r.mechanism == "exponential"]
    assert recs and all(r.params.get("float_delta", 0) > 0 for r in recs)


def _lp_with_public_c():
    c = cp.Parameter(3, name="c", value=np.ones(3))
    A = cp.Parameter((2, 3), name="A", value=np.full((2, 3), 0.5))
    x = cp.Variable(3, nonneg=True)
    return cp.Problem(cp.Maximize(c @ x), [A @ x <= 1, x <= 1]), c, A


def test_undeclared_parameter_is_refused():
    prob, c, A = _lp_with_public_c()
    spec = cvxdp.ConstraintPrivacy(A, sensitivity=1e-3)
    with pytest.raises(PrivacySpecError, match="'c'.*public=") as err:
        prob.solve_private(epsilon=1.0, delta=1e-6, rng=0, private=spec)
    assert "private=" in str(err.value)
    assert cvxdp.explain(prob, spec) and not cvxdp.is_supported(prob, spec)


def test_declared_public_parameter_is_listed():
    prob, c, A = _lp_with_public_c()
    sol = prob.solve_private(epsilon=1.0, delta=1e-6, rng=0, public=[c],
                             private=cvxdp.ConstraintPrivacy(A, sensitivity=1e-3))
    assert sol.privacy.details["public_parameters"] == ["c"]
    assert cvxdp.explain(prob, cvxdp.ConstraintPrivacy(A, sensitivity=1e-3), public=[c]) == []
