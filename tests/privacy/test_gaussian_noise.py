"""One Gaussian calibration serves every solver: each solver's sigma is the analytic Gaussian
(Balle & Wang 2018, Thm 8) or ``D / sqrt(2 rho)`` (Bun & Steinke 2016, Prop. 1.6) of the
sensitivity its record states, checked against an independent solve of Balle & Wang's formula;
and the records state the budget asked for."""

from __future__ import annotations

import math

import cvxpy as cp
import numpy as np
import pytest
from scipy import optimize, stats

import cvxdp
from cvxdp.errors import BudgetError
from cvxdp.estimation.regression_mechanisms import ssp_release
from cvxdp.jordan import SymmetricMatrices
from cvxdp.jordan import gaussian_mechanism as eja_gaussian
from cvxdp.privacy.budgets import ZCDP, ApproxDP, PureDP
from cvxdp.privacy.gdp import gdp_record
from cvxdp.privacy.mechanisms import gaussian_noise, gaussian_record


def independent_sigma(eps: float, delta: float, D: float) -> float:
    """sigma with delta(sigma) = delta for Balle & Wang's exact curve (Thm 8), solved here from
    the formula itself: delta(s) = Phi(D/(2s) - eps s/D) - e^eps Phi(-D/(2s) - eps s/D)."""
    def gap(log_s: float) -> float:
        s = math.exp(log_s)
        a, b = D / (2 * s), eps * s / D
        return stats.norm.cdf(a - b) - math.exp(eps) * stats.norm.cdf(-a - b) - delta
    return math.exp(optimize.brentq(gap, math.log(D) - 30, math.log(D) + 30, xtol=1e-15,
                                    rtol=1e-15))


def _check(record, budget, mechanism):
    assert record.mechanism == mechanism
    sigma, D = record.params["sigma"], record.params["sensitivity"]
    if isinstance(budget, ZCDP):
        assert sigma == pytest.approx(D / math.sqrt(2 * budget.rho), rel=1e-12)
        assert record.budget.rho == pytest.approx(budget.rho, rel=1e-12)
    else:
        assert sigma == pytest.approx(independent_sigma(budget.epsilon, budget.delta, D),
                                      rel=1e-8)
        assert record.budget.delta == budget.delta
        assert record.budget.epsilon == pytest.approx(budget.epsilon, rel=1e-8)
    assert record.zcdp.rho == pytest.approx(D**2 / (2 * sigma**2), rel=1e-12)
    return sigma, D


@pytest.mark.parametrize("budget", [ApproxDP(1.0, 1e-6), ApproxDP(0.1, 1e-9),
                                    ApproxDP(8.0, 1e-5), ZCDP(0.3)])
@pytest.mark.parametrize("ledger", ["epsilon", "gdp"])
def test_the_helper_is_the_analytic_gaussian_and_its_record(budget, ledger):
    sigma, rec = gaussian_noise(budget, sensitivity=2.5, ledger=ledger, mechanism="m",
                                reference="r", note="n")
    _check(rec, budget, "m")
    build = gaussian_record if ledger == "epsilon" else gdp_record
    kw = {} if isinstance(budget, ZCDP) else {"delta": budget.delta}
    if ledger == "epsilon" and not isinstance(budget, ZCDP):
        kw["epsilon"] = budget.epsilon
    assert rec == build(sigma=sigma, sensitivity=2.5, mechanism="m", reference="r", note="n",
                        **kw)


@pytest.mark.parametrize("budget", [PureDP(1.0), ApproxDP(1.0, 0.0)])
def test_the_helper_refuses_budgets_without_a_gaussian_calibration(budget):
    with pytest.raises(BudgetError, match="pass epsilon= and delta=, or use X"):
        gaussian_noise(budget, sensitivity=1.0, refusal="pass epsilon= and delta=, or use X.")


def _lp():
    rng = np.random.default_rng(0)
    A = cp.Parameter((5, 3), name="A", value=rng.uniform(0.2, 1.0, (5, 3)))
    x = cp.Variable(3, name="x")
    prob = cp.Problem(cp.Maximize(cp.sum(x)), [A @ x <= 1, x >= 0, cp.sum(x) <= 10])
    return prob, cvxdp.ConstraintPrivacy(A, sensitivity=0.02)


def _min_variance():
    rng = np.random.default_rng(0)
    R = rng.uniform(-1, 1, (500, 5))
    Sigma = cp.Parameter((5, 5), PSD=True, name="Sigma", value=R.T @ R / 500)
    w = cp.Variable(5, name="w")
    prob = cp.Problem(cp.Minimize(cp.quad_form(w, Sigma)), [cp.sum(w) == 1, w >= 0])
    return prob, cvxdp.ConstraintPrivacy(Sigma, sensitivity=4e-3)


def _objective():
    c = cp.Parameter(6, name="c", value=np.random.default_rng(0).uniform(0.5, 1.5, 6))
    x = cp.Variable(6, nonneg=True)
    return (cp.Problem(cp.Maximize(c @ x), [cp.sum(x) <= 1]),
            cvxdp.ObjectivePrivacy(c, sensitivity=0.05))


def _logistic():
    rng = np.random.default_rng(3)
    Xv = rng.uniform(-0.5, 0.5, (200, 3))
    yv = np.where(Xv @ np.array([1.0, -2.0, 0.5]) > 0, 1.0, -1.0)
    X, y = cp.Parameter(Xv.shape, value=Xv), cp.Parameter(200, value=yv)
    w = cp.Variable(3, name="w")
    prob = cp.Problem(cp.Minimize(cp.sum(cp.logistic(-cp.multiply(y, X @ w))) / 200
                                  + 0.01 * cp.sum_squares(w)), [cp.norm(w, 2) <= 3])
    return prob, cvxdp.RowPrivacy(X, y, row_bound=1.0, label_bound=1.0)


# (model, solve_private options, record name, the sensitivity the record must state)
SOLVERS = {
    "perturbation": (_lp, {"mechanism": "perturbation"}, "input_gaussian", math.sqrt(15)),
    "quad_form": (_min_variance, {}, "input_gaussian", math.sqrt(15)),
    "objective": (_objective, {}, "eja_gaussian", 0.05 * math.sqrt(6)),
    "output": (_logistic, {"mechanism": "output", "value_share": 0.0}, "output_perturbation",
               2 * (1.0 / 200) / (2 * 0.01)),
}


@pytest.mark.parametrize("name", sorted(SOLVERS))
@pytest.mark.parametrize("budget", [ApproxDP(1.0, 1e-6), ZCDP(0.3)])
def test_each_solver_calibrates_its_sigma_by_the_analytic_gaussian(name, budget):
    model, opts, mechanism, D = SOLVERS[name]
    prob, spec = model()
    kw = ({"rho": budget.rho} if isinstance(budget, ZCDP)
          else {"epsilon": budget.epsilon, "delta": budget.delta})
    sol = prob.solve_private(private=spec, rng=0, **kw, **opts)
    recs = [r for r in sol.privacy.records if r.mechanism == mechanism]
    assert len(recs) == 1
    if name == "output" and not isinstance(budget, ZCDP):
        # with delta > 0 output perturbation also plans the pure Gamma-norm noise and runs the
        # smaller norm quantile (tests/learning/test_output_pure.py): at d = 3 that is the pure
        # one, an epsilon-DP record with the same argmin sensitivity
        assert sol.info["noise_sigma"] is None
        assert recs[0].pure_epsilon == pytest.approx(budget.epsilon, rel=1e-12)
        assert recs[0].params["sensitivity"] == pytest.approx(D, rel=1e-12)
        return
    sigma, D_rec = _check(recs[0], budget, mechanism)
    assert D_rec == pytest.approx(D, rel=1e-12)


@pytest.mark.parametrize("budget", [ApproxDP(1.0, 1e-6), ZCDP(0.3)])
def test_regression_ssp_calibrates_its_sigma_by_the_analytic_gaussian(budget):
    bound = 1.7
    _, record, info = ssp_release(np.zeros((1, 3)), budget, bound, np.random.default_rng(0))
    sigma, D = _check(record, budget, "gaussian_gram")
    assert D == bound**2 and info["sigma"] == sigma


@pytest.mark.parametrize("budget", [ApproxDP(1.0, 1e-6), ZCDP(0.3)])
def test_the_eja_gaussian_mechanism_calibrates_by_the_analytic_gaussian(budget):
    J = SymmetricMatrices(3)
    kw = ({"rho": budget.rho} if isinstance(budget, ZCDP)
          else {"epsilon": budget.epsilon, "delta": budget.delta})
    _, record = eja_gaussian(np.zeros(J.dim), J, sensitivity=1.5, norm="inf", rng=0, **kw)
    _, D = _check(record, budget, "eja_gaussian")
    assert D == pytest.approx(1.5 * math.sqrt(3), rel=1e-12)  # l-inf to l2: sqrt(rank)
