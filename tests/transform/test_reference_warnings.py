"""The ``reference=True`` solve reads the TRUE data: a CVXPY warning it raises (Clarabel ending
``optimal_inaccurate`` on trial 24's robust PCA) was printed during ``solve_private``; it is
recorded in ``sol.validation.metrics["reference_warnings"]`` instead (trial 24's D6)."""

import warnings

import cvxpy as cp
import numpy as np

import cvxdp
from cvxdp.transform import reference

TEXT = "Solution may be inaccurate. Try another solver."


def test_a_reference_warning_is_recorded_not_printed(monkeypatch):
    real = reference._reference_optimum

    def inaccurate(problem, solver, released):
        found = real(problem, solver, released)
        warnings.warn(TEXT, UserWarning, stacklevel=1)   # as CVXPY's unpack_results does
        return found[0], found[1], cp.OPTIMAL_INACCURATE

    monkeypatch.setattr(reference, "_reference_optimum", inaccurate)
    b = cp.Parameter(5, name="b", value=np.linspace(0.1, 0.9, 5))
    x = cp.Variable(5, name="x")
    prob = cp.Problem(cp.Minimize(cp.sum_squares(x - b)), [x >= 0, x <= 1])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sol = prob.solve_private(epsilon=1e6, delta=1e-6, rng=0, reference=True,
                                 private=cvxdp.ScalarPrivacy(b, sensitivity=0.01))
    assert not [w for w in caught if TEXT in str(w.message)]
    metrics = sol.validation.metrics
    assert metrics["reference_status"] == cp.OPTIMAL_INACCURATE
    assert metrics["reference_warnings"] == [TEXT]
    assert abs(sol.validation.reference_value - 0.0) < 1e-6   # b is inside the box: OPT = 0
