import math

import numpy as np
import pytest

from cvxdp import BudgetError
from cvxdp.privacy.budgets import (
    ZCDP,
    ApproxDP,
    PureDP,
    resolve_budget,
    zcdp_from_approx,
    zcdp_to_delta,
    zcdp_to_epsilon,
)
from cvxdp.privacy.calibration import gaussian_epsilon


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: PureDP(0), "epsilon must be > 0"),
        (lambda: PureDP(-1), "epsilon must be > 0"),
        (lambda: PureDP(math.inf), "epsilon must be finite"),
        (lambda: PureDP(math.nan), "epsilon must be finite"),
        (lambda: PureDP("a"), "epsilon must be a real number"),
        (lambda: ApproxDP(1, -1e-9), r"0 <= delta <= 1"),
        (lambda: ApproxDP(1, 1.5), r"0 <= delta <= 1"),
        (lambda: ApproxDP(1, math.nan), "delta must be finite"),
        (lambda: ZCDP(0), "rho must be > 0"),
        (lambda: ZCDP(-0.5), "rho must be > 0"),
        (lambda: ZCDP(math.inf), "rho must be finite"),
    ],
)
def test_bad_budgets_are_refused_with_the_argument_named(make, match):
    with pytest.raises(BudgetError, match=match):
        make()


def test_budget_error_is_a_value_error():
    with pytest.raises(ValueError):
        PureDP(0)


def test_pure_to_zcdp_is_half_epsilon_squared():
    assert PureDP(0.6).to_zcdp().rho == pytest.approx(0.18)


def _cks_bruteforce(rho, delta):
    """Independent evaluation of the CKS 2020 Cor. 13 bound on a fine alpha grid."""
    alphas = 1 + np.logspace(-6, 6, 200001)
    # delta(eps, alpha) = exp((a-1)(a rho - eps)) (1-1/a)^(a-1) / a  solved for eps:
    eps = (alphas * rho + np.log1p(-1 / alphas)
           + (math.log(1 / delta) - np.log(alphas)) / (alphas - 1))
    return float(eps.min())


@pytest.mark.parametrize("rho", [1e-4, 0.01, 0.1, 0.5, 2.0, 10.0])
@pytest.mark.parametrize("delta", [1e-10, 1e-6, 1e-3])
def test_cks_conversion_matches_bruteforce_and_beats_textbook(rho, delta):
    eps = zcdp_to_epsilon(rho, delta)
    brute = _cks_bruteforce(rho, delta)
    textbook = rho + 2 * math.sqrt(rho * math.log(1 / delta))
    assert eps == pytest.approx(min(brute, textbook), rel=1e-7)
    assert eps <= textbook + 1e-12
    # delta <-> epsilon are inverse of each other
    assert zcdp_to_delta(rho, eps) == pytest.approx(delta, rel=1e-5)


def test_cks_is_sandwiched_by_the_exact_gaussian_curve():
    # The Gaussian mechanism with sigma is exactly rho = 1/(2 sigma^2)-zCDP; converting zCDP can
    # never beat the exact (eps, delta) curve of the mechanism, and CKS is close to it.
    for sigma in [0.5, 1.0, 3.0, 10.0]:
        for delta in [1e-8, 1e-5]:
            exact = gaussian_epsilon(sigma=sigma, delta=delta)
            cks = zcdp_to_epsilon(1 / (2 * sigma**2), delta)
            assert exact <= cks <= 1.35 * exact


def test_published_values_for_cks_conversion():
    # Reference values from OpenDP's test-suite for its CKS20 `cdp_delta`
    # (rust/src/combinators/measure_cast/zCDP_to_approxDP/cdp_delta/test.rs).
    assert zcdp_to_delta(0.05, 0.25) == pytest.approx(8.17727531036956e-2, rel=1e-10)
    assert zcdp_to_delta(0.5, 0.0) == pytest.approx(0.5588356393474351, rel=1e-10)


@pytest.mark.parametrize("eps, delta", [(0.1, 1e-6), (1.0, 1e-6), (1.0, 1e-9), (8.0, 1e-5)])
def test_zcdp_from_approx_is_the_largest_rho_that_fits(eps, delta):
    rho = zcdp_from_approx(eps, delta)
    assert zcdp_to_epsilon(rho, delta) <= eps * (1 + 1e-9)
    assert zcdp_to_epsilon(rho * 1.001, delta) > eps


def test_zcdp_to_approx_dp():
    out = ZCDP(0.5).to_approx_dp(delta=1e-6)
    assert isinstance(out, ApproxDP) and out.delta == 1e-6
    with pytest.raises(BudgetError, match="delta must be > 0"):
        ZCDP(0.5).to_approx_dp(delta=0)


def test_resolve_budget():
    assert resolve_budget(epsilon=1) == PureDP(1)
    assert resolve_budget(epsilon=1, delta=1e-6) == ApproxDP(1, 1e-6)
    assert resolve_budget(rho=0.2) == ZCDP(0.2)
    with pytest.raises(BudgetError, match="privacy budget is required"):
        resolve_budget()
    with pytest.raises(BudgetError, match="not both"):
        resolve_budget(epsilon=1, rho=1)
    with pytest.raises(BudgetError, match=r"0 <= delta <= 1"):
        resolve_budget(epsilon=1, delta=2)
