"""Gaussian DP composition (Dong, Roth & Su 2022) and its numbers from digest 003 §6.2."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from cvxdp.errors import BudgetError
from cvxdp.privacy.accountant import compose
from cvxdp.privacy.budgets import zcdp_from_approx, zcdp_to_epsilon
from cvxdp.privacy.calibration import calibrate_gaussian
from cvxdp.privacy.gdp import (
    calibrate_mahalanobis,
    compose_gdp,
    compose_gdp_records,
    gdp_delta,
    gdp_epsilon,
    gdp_mu,
    gdp_record,
    gdp_sigma,
    mahalanobis_sensitivity,
)
from cvxdp.privacy.mechanisms import exponential_record
from cvxdp.privacy.ndis import ndis_delta


def test_digest_numbers_gdp_vs_zcdp():
    # T = 100 Gaussian steps, (1, 1e-5): exact 37.31 vs zCDP + CKS 40.45 (digest §6.2)
    sigma = gdp_sigma(epsilon=1.0, delta=1e-5, steps=100, sensitivity=1.0)
    assert sigma == pytest.approx(37.31, abs=5e-3)
    zcdp_sigma = math.sqrt(100) / math.sqrt(2 * zcdp_from_approx(1.0, 1e-5))
    assert zcdp_sigma == pytest.approx(40.45, abs=5e-3)
    assert gdp_sigma(epsilon=1.0, delta=1e-6, steps=1000) == pytest.approx(133.6, abs=0.05)
    assert gdp_mu(epsilon=1.0, delta=1e-5) == pytest.approx(0.26805, abs=1e-5)
    assert gdp_mu(epsilon=1.0, delta=1e-6) == pytest.approx(0.23670, abs=1e-5)


def test_one_step_equals_analytic_gaussian():
    for eps, delta in ((0.5, 1e-6), (1.0, 1e-5), (4.0, 1e-6)):
        assert gdp_sigma(epsilon=eps, delta=delta) == pytest.approx(
            calibrate_gaussian(epsilon=eps, delta=delta), rel=1e-9)


def test_delta_formula_and_inverse():
    mu = 0.8
    for eps in (0.0, 0.5, 2.0):
        ref = stats.norm.cdf(mu / 2 - eps / mu) - math.exp(eps) * stats.norm.cdf(-mu / 2 - eps / mu)
        assert gdp_delta(mu=mu, epsilon=eps) == pytest.approx(ref, rel=1e-10)
    eps = gdp_epsilon(mu=mu, delta=1e-6)
    assert gdp_delta(mu=mu, epsilon=eps) <= 1e-6
    assert gdp_delta(mu=mu, epsilon=eps * (1 - 1e-6)) > 1e-6
    mu_star = gdp_mu(epsilon=1.0, delta=1e-5)
    assert gdp_delta(mu=mu_star, epsilon=1.0) <= 1e-5 < gdp_delta(mu=mu_star * 1.0001, epsilon=1.0)


def test_composition_is_sqrt_of_sum_of_squares_and_beats_zcdp():
    assert compose_gdp([0.3, 0.4]) == pytest.approx(0.5)
    rec = gdp_record(sigma=10.0, sensitivity=1.0, count=100)
    assert rec.params["gdp_mu"] == pytest.approx(0.1)
    assert rec.zcdp.rho == pytest.approx(0.005)
    total = compose_gdp_records([rec], delta=1e-5)
    assert total.epsilon == pytest.approx(gdp_epsilon(mu=1.0, delta=1e-5), rel=1e-12)
    # the accountant composes Gaussian steps exactly in GDP too, strictly better than zCDP + CKS
    via_accountant = compose([rec], notion="approx", delta=1e-5).epsilon
    assert via_accountant == pytest.approx(total.epsilon, rel=1e-9)
    assert total.epsilon < zcdp_to_epsilon(0.5, 1e-5)


def test_mixed_ledger_is_never_worse_than_the_accountant():
    recs = [gdp_record(sigma=37.31, sensitivity=1.0, count=100), exponential_record(epsilon=0.1)]
    mixed = compose_gdp_records(recs, delta=1e-5)
    plain = compose(recs, notion="approx", delta=1e-5)
    assert mixed.epsilon <= plain.epsilon
    # the split route is at least as good as "GDP at delta/2 + 0.1"
    assert mixed.epsilon <= gdp_epsilon(mu=math.sqrt(100) / 37.31, delta=5e-6) + 0.1 + 1e-12


def test_record_with_delta_reports_exact_epsilon():
    rec = gdp_record(sigma=3.7306, sensitivity=1.0, delta=1e-5)
    assert rec.budget.epsilon == pytest.approx(1.0, abs=1e-4)


def test_bad_inputs():
    with pytest.raises(BudgetError, match="steps"):
        gdp_sigma(epsilon=1.0, delta=1e-5, steps=0)
    with pytest.raises(BudgetError, match="delta > 0"):
        gdp_mu(epsilon=1.0, delta=0.0)
    with pytest.raises(BudgetError, match="mu must be >= 0"):
        gdp_delta(mu=-1.0, epsilon=1.0)
    with pytest.raises(BudgetError, match="sigma and sensitivity"):
        gdp_record(sigma=0.0, sensitivity=1.0)
    with pytest.raises(BudgetError, match="no privacy records"):
        compose_gdp_records([], delta=1e-5)


def test_mahalanobis_calibration_is_exact_for_anisotropic_noise():
    cov = np.array([[2.0, 0.5], [0.5, 1.0]])
    shifts = np.array([[1.0, 0.0], [0.0, 1.0], [0.7, -0.7]])
    c = calibrate_mahalanobis(epsilon=1.0, delta=1e-5, shift=shifts, cov=cov)
    worst = max(ndis_delta(epsilon=1.0, mean1=s, cov1=c**2 * cov, mean2=np.zeros(2),
                           cov2=c**2 * cov) for s in shifts)
    assert worst == pytest.approx(1e-5, rel=1e-6)
    assert worst <= 1e-5
    assert mahalanobis_sensitivity([3.0, 4.0], np.eye(2)) == pytest.approx(5.0)
    assert calibrate_mahalanobis(epsilon=1.0, delta=1e-5, shift=[1.0], cov=[[1.0]]) == \
        pytest.approx(calibrate_gaussian(epsilon=1.0, delta=1e-5), rel=1e-9)
    with pytest.raises(BudgetError, match="positive definite"):
        mahalanobis_sensitivity([1.0, 0.0], np.diag([1.0, -1.0]))


@pytest.mark.parametrize("epsilon", [6e5, 1e6])
def test_epsilon_of_a_gaussian_step_up_to_the_largest_accepted_epsilon(epsilon):
    """The front door accepts epsilon <= 1e6 (cvxdp.arguments.EPSILON_MAX), so the exact epsilon
    of a step calibrated there must be found: mu = gdp_mu(epsilon) has gdp_epsilon(mu) = epsilon
    (the root lies in (2^19, 1e6], which a doubling search capped at 1e6 never brackets), and
    the record built from it carries that finite epsilon."""
    mu = gdp_mu(epsilon=epsilon, delta=1e-6)
    eps = gdp_epsilon(mu=mu, delta=1e-6)
    assert math.isfinite(eps) and eps == pytest.approx(epsilon, rel=1e-9)
    assert gdp_delta(mu=mu, epsilon=eps) <= 1e-6 < gdp_delta(mu=mu, epsilon=eps * (1 - 1e-8))
    rec = gdp_record(sigma=1.0 / mu, sensitivity=1.0, delta=1e-6)
    assert rec.budget.epsilon == pytest.approx(epsilon, rel=1e-9)
