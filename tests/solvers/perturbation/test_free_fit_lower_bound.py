"""A fit with free coefficients and a private design is certified at epsilon 1e6.

Trial 21a, defect 1: least absolute deviations as CVXPY's examples write it, ``min ||X b -
y||_1 / N`` with a private ``X`` (ConstraintPrivacy) and no constraint, at epsilon 1e6: the
released point's true gap was 2e-6, but the certificate's lower bound on the optimum fell to 0
(the objective's sign): the loosened counterpart needs a box on ``b`` for its reach, and the
true feasible set is unbounded in ``b``, so the box grown from the tightened point never
closed.  Its level set ``{c'x <= c'x_t}`` is bounded, and grows the same way
(``loosened._grown_box`` with ``level``).
"""

from __future__ import annotations

import warnings

import cvxpy as cp
import numpy as np
import pytest

import cvxdp


def _lad(seed=0, N=200, d=10):
    r = np.random.default_rng(seed)
    Xv = r.uniform(-1, 1, (N, d))
    y = Xv @ r.uniform(-1, 1, d) + 0.1 * r.standard_normal(N)
    X = cp.Parameter((N, d), name="X", value=Xv)
    b = cp.Variable(d, name="b")
    return cp.Problem(cp.Minimize(cp.norm(X @ b - y, 1) / N)), X


def test_lad_with_a_private_design_is_certified_at_large_epsilon():
    prob, X = _lad()
    opt = cp.Problem(prob.objective).solve(solver=cp.CLARABEL)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = prob.solve_private(epsilon=1e6, delta=1e-6, rng=0,
                                 private=cvxdp.ConstraintPrivacy(X, sensitivity=0.01))
    cert = sol.certificate
    assert cert.optimum_lower <= opt <= prob.objective.value <= cert.objective_upper
    assert cert.relative_gap_bound < 2e-3      # was 0.0785 (the lower bound 0)
    assert sol.status == cp.OPTIMAL_INACCURATE


@pytest.mark.parametrize("eps", [10.0, 1.0])
@pytest.mark.parametrize("seed", [1, 2])
def test_the_level_set_bound_holds(eps, seed):
    prob, X = _lad(seed=seed, N=120, d=6)
    opt = cp.Problem(prob.objective).solve(solver=cp.CLARABEL)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = prob.solve_private(epsilon=eps, delta=1e-6, rng=seed,
                                 private=cvxdp.ConstraintPrivacy(X, sensitivity=0.01))
    cert = sol.certificate
    assert cert.optimum_lower <= opt + 1e-9
    assert prob.objective.value <= cert.objective_upper + 1e-9
