"""One unit for the John ellipsoid's value: the log volume of the ellipsoid, whether it comes
from the exact conic solve, a fast method or the private solve (so exact and private compare)."""

import numpy as np
import pytest

import cvxdp


@pytest.fixture(scope="module")
def A():
    A = np.random.default_rng(3).normal(size=(400, 4))
    return A / np.linalg.norm(A, axis=1).max()


@pytest.mark.parametrize("method", [None, "fixed-point"])
def test_the_exact_value_is_the_log_volume_of_its_ellipsoid(A, method):
    prob = cvxdp.john_ellipsoid(A)
    kwargs = {} if method is None else {"method": method, "accuracy": 1e-3}
    returned = prob.solve(**kwargs)
    assert returned == pytest.approx(prob.ellipsoid.log_volume, rel=1e-9)
    assert prob.value == pytest.approx(prob.ellipsoid.log_volume, rel=1e-9)


def test_exact_and_private_values_are_in_the_same_unit(A):
    exact = cvxdp.john_ellipsoid(A)
    exact.solve()
    sol = cvxdp.john_ellipsoid(A).solve_private(epsilon=1e4, delta=1e-6, rng=0, closeness=1e-6,
                                                row_bound=1.0, reference=True)
    assert sol.validation.reference_value == pytest.approx(exact.value, rel=1e-3)
    # at a large budget the private log volume is near the exact one (per dimension, 0.1)
    assert abs(sol.value - exact.value) / A.shape[1] < 0.1
