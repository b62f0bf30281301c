"""The least-squares (SSP) certificate: valid for the TRUE objective, informative, and the
status follows from it."""

import numpy as np
import pytest

import cvxdp
from cvxdp.status import status_of


def _fit(n, seed, **kw):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-0.5, 0.5, (n, 3))
    y = X @ np.array([1.0, -0.5, 0.25]) + 0.1 * rng.normal(size=n)
    prob = cvxdp.least_squares(X, y, row_bound=1.5)
    sol = prob.solve_private(epsilon=1.0, delta=1e-6, rng=seed, **kw)
    f = lambda b: float(np.sum((X @ b - y) ** 2))  # noqa: E731
    return sol, f(sol.coef), f(np.linalg.lstsq(X, y, rcond=None)[0])


@pytest.mark.parametrize("n", [2000, 200_000])
def test_certificate_holds_for_the_true_objective_on_every_seed(n):
    for seed in range(10):
        sol, value, opt = _fit(n, seed)
        cert = sol.certificate
        assert cert.optimum_lower <= opt + 1e-9 * opt
        assert value <= cert.objective_upper + 1e-9 * value
        assert value - opt <= cert.gap_bound + 1e-9 * value
        assert (sol.status, sol.status_reason) == status_of(cert)


def test_certificate_is_informative_with_many_rows():
    sol, value, opt = _fit(200_000, 0)
    cert = sol.certificate
    assert sol.status == "optimal_inaccurate"
    assert cert.relative_gap_bound <= 1e-3                 # 4e-4 here
    # the true gap is 0.016 and the bound 0.75: a worst case over the noise's direction
    assert cert.gap_bound <= 60 * (value - opt)


def test_few_rows_give_user_limit_with_the_certified_numbers():
    sol, value, opt = _fit(2000, 0)
    assert sol.status == "user_limit" and "relative gap" in sol.status_reason
    # a mechanism without a certificate says so
    sol, *_ = _fit(2000, 0, mechanism="rp")
    assert sol.status == "user_limit" and "no bound" in sol.status_reason
