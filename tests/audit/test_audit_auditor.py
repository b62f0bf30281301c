import numpy as np
import pytest

from cvxdp.audit import (
    add_point,
    audit_mechanism,
    clopper_pearson,
    close_rows,
    move_constraint,
    move_rhs,
    remove_point,
)
from cvxdp.privacy import calibrate_gaussian, exponential_mechanism

EPS, DELTA = 1.0, 1e-5


def gaussian(div):
    sigma = calibrate_gaussian(epsilon=EPS, delta=DELTA) / div
    return lambda x, g: x + g.normal(0.0, sigma, size=np.shape(x))


def test_clopper_pearson_against_closed_forms():
    # k = 0: upper bound 1 - alpha^(1/n); k = n: lower bound alpha^(1/n)
    n, a = 50, 0.05
    assert clopper_pearson(np.array(0), n, a, "upper") == pytest.approx(1 - a ** (1 / n))
    assert clopper_pearson(np.array(n), n, a, "lower") == pytest.approx(a ** (1 / n))
    lo = clopper_pearson(np.array(20), n, a, "lower")
    hi = clopper_pearson(np.array(20), n, a, "upper")
    assert lo < 0.4 < hi


@pytest.mark.parametrize("seed", [0, 1])
def test_honest_gaussian_passes(seed):
    res = audit_mechanism(gaussian(1), 0.0, 1.0, epsilon=EPS, delta=DELTA, n_samples=40000,
                          rng=seed)
    assert res.passed and 0.0 <= res.epsilon_lower <= EPS


def test_under_noised_gaussian_is_caught():
    res = audit_mechanism(gaussian(4), 0.0, 1.0, epsilon=EPS, delta=DELTA, n_samples=40000,
                          rng=3)
    assert not res.passed and res.epsilon_lower > 2.0


def test_vector_outputs_are_projected():
    x, y = np.zeros(5), np.full(5, 1 / np.sqrt(5))  # l2 distance 1
    honest = audit_mechanism(gaussian(1), x, y, epsilon=EPS, delta=DELTA, n_samples=30000, rng=4)
    broken = audit_mechanism(gaussian(4), x, y, epsilon=EPS, delta=DELTA, n_samples=30000, rng=4)
    assert honest.passed and not broken.passed


def _exp_mech(eps_used):
    def mech(scores, g):
        return exponential_mechanism(scores, epsilon=eps_used, sensitivity=1.0, rng=g)[0]
    return mech


def test_exponential_mechanism_honest_and_broken():
    k = 1000
    s = np.zeros(k)
    s2 = np.full(k, -1.0)
    s2[0] = 1.0  # every score moves by the sensitivity 1: the worst case
    honest = audit_mechanism(_exp_mech(EPS), s, s2, epsilon=EPS, delta=0.0, n_samples=20000,
                             rng=5)
    broken = audit_mechanism(_exp_mech(4 * EPS), s, s2, epsilon=EPS, delta=0.0,
                             n_samples=20000, rng=5)
    assert honest.passed
    assert not broken.passed and broken.epsilon_lower > 2.0


def test_bad_arguments():
    with pytest.raises(ValueError, match="confidence"):
        audit_mechanism(gaussian(1), 0.0, 1.0, epsilon=1, delta=0, n_samples=100, confidence=1)
    with pytest.raises(ValueError, match="n_samples"):
        audit_mechanism(gaussian(1), 0.0, 1.0, epsilon=1, delta=0, n_samples=10)


def test_neighbour_builders():
    A = np.arange(6.0).reshape(3, 2)
    assert np.abs(move_constraint(A, 1, 0.1) - A).max() == pytest.approx(0.1)
    assert np.count_nonzero(move_constraint(A, 1, 0.1) - A) == 2
    assert move_rhs(np.zeros(3), 2, 0.5)[2] == 0.5
    assert remove_point(A, 0).shape == (2, 2)
    assert add_point(A, np.array([9.0, 9.0])).shape == (4, 2)
    moved = close_rows(A, 2, 0.3)
    assert np.linalg.norm(moved[2] - A[2]) == pytest.approx(0.3)
