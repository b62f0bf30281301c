import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cvxdp import BudgetError
from cvxdp.privacy.calibration import (
    calibrate_gaussian,
    classical_sigma,
    gaussian_delta,
    gaussian_epsilon,
)

EPS_GRID = [0.05, 0.1, 0.5, 1.0, 2.0, 5.0, 10.0]
DELTA_GRID = [1e-10, 1e-6, 1e-5, 1e-3, 0.05]


@pytest.mark.parametrize("eps", EPS_GRID)
@pytest.mark.parametrize("delta", DELTA_GRID)
def test_analytic_sigma_matches_dp_accounting(eps, delta):
    dpa = pytest.importorskip("dp_accounting.gaussian_mechanism")
    ours = calibrate_gaussian(epsilon=eps, delta=delta)
    assert ours == pytest.approx(dpa.get_sigma_gaussian(eps, delta), rel=1e-6)


def test_hand_computed_reference_value():
    # Balle & Wang's exact calibration at eps=1, delta=1e-5 (also digest 003 §0): 3.7306
    assert calibrate_gaussian(epsilon=1.0, delta=1e-5) == pytest.approx(3.7306316, rel=1e-7)
    # classical formula, by hand: sqrt(2 ln(1.25e5)) / 0.5
    assert classical_sigma(epsilon=0.5, delta=1e-5) == pytest.approx(
        math.sqrt(2 * math.log(1.25e5)) / 0.5)


@pytest.mark.parametrize("eps", EPS_GRID)
@pytest.mark.parametrize("delta", DELTA_GRID)
def test_calibrated_sigma_meets_delta_and_is_tight(eps, delta):
    sigma = calibrate_gaussian(epsilon=eps, delta=delta, sensitivity=2.5)
    assert gaussian_delta(sigma=sigma, epsilon=eps, sensitivity=2.5) <= delta
    assert gaussian_delta(sigma=sigma * (1 - 1e-9), epsilon=eps, sensitivity=2.5) > delta * (
        1 - 1e-6)
    assert gaussian_epsilon(sigma=sigma, delta=delta, sensitivity=2.5) == pytest.approx(
        eps, rel=1e-8)


@pytest.mark.parametrize("eps", [0.05, 0.3, 0.9])
def test_analytic_never_looser_than_classical(eps):
    for delta in DELTA_GRID[:-1]:
        assert calibrate_gaussian(epsilon=eps, delta=delta) <= classical_sigma(
            epsilon=eps, delta=delta)


def test_classical_refused_outside_its_validity():
    with pytest.raises(BudgetError, match="epsilon < 1"):
        calibrate_gaussian(epsilon=1.5, delta=1e-5, method="classical")


def test_zcdp_method():
    assert calibrate_gaussian(rho=0.5, sensitivity=3.0, method="zcdp") == pytest.approx(3.0)
    with pytest.raises(BudgetError, match="rho= is only used"):
        calibrate_gaussian(rho=0.5)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(epsilon=1.0, delta=0.0), "delta > 0"),
        (dict(epsilon=0.0, delta=1e-5), "epsilon must be > 0"),
        (dict(epsilon=1.0, delta=1e-5, sensitivity=0.0), "sensitivity must be > 0"),
        (dict(epsilon=1.0, delta=1e-5, sensitivity=math.nan), "sensitivity must be finite"),
        (dict(epsilon=1.0), "needs epsilon= and delta="),
    ],
)
def test_bad_calibration_inputs(kwargs, match):
    with pytest.raises(BudgetError, match=match):
        calibrate_gaussian(**kwargs)


@settings(max_examples=40, deadline=None)
@given(
    eps=st.floats(0.01, 20.0),
    factor=st.floats(1.01, 3.0),
    delta=st.floats(1e-12, 0.1),
)
def test_sigma_decreases_in_epsilon(eps, factor, delta):
    assert calibrate_gaussian(epsilon=eps * factor, delta=delta) < calibrate_gaussian(
        epsilon=eps, delta=delta)


@settings(max_examples=40, deadline=None)
@given(
    eps=st.floats(0.01, 20.0),
    delta=st.floats(1e-12, 0.05),
    factor=st.floats(1.05, 5.0),
)
def test_sigma_decreases_in_delta(eps, delta, factor):
    assert calibrate_gaussian(epsilon=eps, delta=delta * factor) < calibrate_gaussian(
        epsilon=eps, delta=delta)


@settings(max_examples=30, deadline=None)
@given(sens=st.floats(1e-3, 1e3), eps=st.floats(0.05, 5.0))
def test_sigma_is_linear_in_sensitivity(sens, eps):
    assert calibrate_gaussian(epsilon=eps, delta=1e-6, sensitivity=sens) == pytest.approx(
        sens * calibrate_gaussian(epsilon=eps, delta=1e-6), rel=1e-9)
