"""Empirical privacy audit of the constraint-private MWU (slow): the claimed epsilon holds, and a
deliberately under-noised twin (oracle epsilon x20, Gaussian sigma / 20) is caught."""

import cvxpy as cp
import numpy as np

import cvxdp
from cvxdp.audit import audit_mechanism
from cvxdp.privacy.budgets import ApproxDP
from cvxdp.solvers.mwu.mwu import scmwu
from cvxdp.solvers.mwu.mwu_form import build_mwu_form
from cvxdp.solvers.mwu.oracles import exponential_oracle
from cvxdp.solvers.mwu.private_scp import _noise_fn, plan_schedule, row_sensitivities
from cvxdp.transform import to_scp

SENS = 0.5
EPS, DELTA = 1.0, 1e-5


def _form(shift):
    A = cp.Parameter((2, 2), name="A", value=np.eye(2) + shift)
    x = cp.Variable(2, nonneg=True)
    prob = cp.Problem(cp.Minimize(0), [A @ x <= 0.4, cp.sum(x) == 1])
    scp = to_scp(prob, private=cvxdp.ConstraintPrivacy(A, sensitivity=SENS))
    return build_mwu_form(scp.A, scp.b, scp.c, scp.dims, dA=scp.sensitivity.A, width=2.0)


def _mechanism(sch, sens, boost):
    def mech(form, rng):
        res = scmwu(form.G, form.h, form.algebra, eta=sch.eta, iterations=sch.T,
                    oracle=exponential_oracle(epsilon=boost * sch.epsilon_oracle,
                                              sensitivity=sens.score),
                    rng=rng, loss_scale=0.5,
                    noise=_noise_fn(sens, sch.sigma_unit / boost, form.algebra.phi_scale))
        return float(res.x[0])
    return mech


def test_audit_constraint_private_mwu_and_catch_an_under_noised_twin():
    D = _form(np.zeros((2, 2)))
    Dp = _form(np.array([[SENS, -SENS], [-SENS, SENS]]))
    sens = row_sensitivities(D)
    sch = plan_schedule("constraint", D, sens, ApproxDP(EPS, DELTA), accuracy=None, beta=0.05,
                        schedule="auto", max_iterations=20)
    ok = audit_mechanism(_mechanism(sch, sens, 1.0), D, Dp, epsilon=EPS, delta=DELTA,
                         n_samples=3000, rng=0)
    assert ok.passed, ok
    bad = audit_mechanism(_mechanism(sch, sens, 20.0), D, Dp, epsilon=EPS, delta=DELTA,
                          n_samples=3000, rng=1)
    assert not bad.passed and bad.epsilon_lower > EPS, bad
