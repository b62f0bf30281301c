"""Seeded black-box audits of the three row-level mechanisms on a worst-case neighbour pair.

Each mechanism runs on D and on D' (one row replaced by its mirror image: the largest change of
the gradient the bounds allow) with fresh seeds; the auditor's lower bound on epsilon must not
exceed the claim.  Small runs (an audit can only refute): the model is one-dimensional so that
the released coefficient carries all the signal.
"""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest

import cvxdp
from cvxdp.audit import audit_mechanism
from cvxdp.audit.auditor import audit_outputs
from cvxdp.audit.learning_cases import LEARNING_MECHANISMS, learning_cases
from cvxdp.learning.detect import detect
from cvxdp.learning.domain import theta_bound
from cvxdp.learning.noisy_gradient import noisy_gradient, plan_noisy_gradient
from cvxdp.learning.objective_perturbation import (
    objective_perturbation,
    plan_objective_perturbation,
)
from cvxdp.learning.output_perturbation import output_perturbation, plan_output_perturbation
from cvxdp.privacy.budgets import ApproxDP

RUNS = 800
EPS, DELTA = 1.0, 1e-3


def _model():
    X = cp.Parameter((6, 1), value=np.ones((6, 1)))
    y = cp.Parameter(6, value=np.ones(6))
    w = cp.Variable(1)
    prob = cp.Problem(cp.Minimize(cp.sum(cp.logistic(-cp.multiply(y, X @ w)))
                                  + 0.5 * cp.sum_squares(w)), [cp.abs(w) <= 2])
    return detect(prob, cvxdp.RowPrivacy(X, y, row_bound=1.0, label_bound=1.0))


PLANS = {
    "objective": (plan_objective_perturbation, objective_perturbation, {}),
    "output": (plan_output_perturbation, output_perturbation, {}),
    "gradient": (plan_noisy_gradient, noisy_gradient, {"steps": 2}),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(PLANS))
def test_audit_finds_no_violation(name):
    model = _model()
    budget = ApproxDP(EPS, DELTA)
    plan_fn, run_fn, kw = PLANS[name]
    plan = plan_fn(model, budget, theta_bound(model), beta=1e-3, **kw)
    X = np.ones((6, 1))
    y = np.ones(6)
    X2 = X.copy()
    X2[0] = -1.0                       # the mirror row: its gradient is the opposite
    outs = []
    for k, Xv in enumerate((X, X2)):
        outs.append(np.array([run_fn(model, plan, budget, Xv, y,
                                     np.random.default_rng(10_000 * k + i))[0][0]
                              for i in range(RUNS)]))
    res = audit_outputs(outs[0], outs[1], epsilon=EPS, delta=DELTA, confidence=0.99)
    assert res.passed, res


# -- end to end: problem.solve_private with each mechanism (cvxdp.audit.learning_cases) ----
CASES = {c.name: c for c in learning_cases()}


def _run(case, seed, runs=150):
    return audit_mechanism(case.mechanism, case.data, case.neighbour, epsilon=case.epsilon,
                           delta=case.delta, n_samples=runs, rng=seed)


def test_every_mechanism_has_an_end_to_end_case_and_a_planted_twin():
    for mech in LEARNING_MECHANISMS:
        assert not CASES[f"row-level {mech}"].broken
        assert CASES[f"row-level {mech}, true value"].broken


@pytest.mark.slow
@pytest.mark.parametrize("mech", LEARNING_MECHANISMS)
def test_end_to_end_honest_case_passes(mech):
    res = _run(CASES[f"row-level {mech}"], 21)
    assert res.passed, res


@pytest.mark.slow
@pytest.mark.parametrize("mech", LEARNING_MECHANISMS)
def test_end_to_end_planted_true_value_is_caught(mech):
    res = _run(CASES[f"row-level {mech}, true value"], 22)
    assert not res.passed and res.epsilon_lower > 2.0, res
