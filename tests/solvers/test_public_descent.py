"""A model whose public objective decreases along a direction its constraints allow, whatever
their private right-hand sides, is unbounded wherever it is feasible: that is decided from
public data before any budget is spent (public_part.public_descent), and answered with CVXPY's
``infeasible_or_unbounded``.  The docs' SOCP written with other constants (held-out time
benchmark) was answered ``solver_error`` after spending the budget: both counterparts unbounded."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest

import cvxdp


def _docs_socp():
    rng = np.random.default_rng(0)
    m, n, p, n_i = 10, 100, 20, 10
    f = rng.standard_normal(n)
    A = [rng.standard_normal((n_i, n)) for _ in range(m)]
    b = [rng.standard_normal(n_i) for _ in range(m)]
    c = [rng.standard_normal(n) for _ in range(m)]
    d = [np.linalg.norm(b[i]) + 1.0 for i in range(m)]
    F = rng.standard_normal((p, n))
    g = cp.Parameter(p, name="g", value=F @ (0.01 * rng.standard_normal(n)))
    x = cp.Variable(n, name="x")
    cons = [cp.SOC(c[i] @ x + d[i], A[i] @ x + b[i]) for i in range(m)] + [F @ x == g]
    return cp.Problem(cp.Minimize(f @ x), cons), cvxdp.ScalarPrivacy(g, sensitivity=0.005), x


def _lp():
    cap = cp.Parameter(2, name="cap", value=np.array([1.0, 2.0]))
    x = cp.Variable(2, name="x")
    prob = cp.Problem(cp.Maximize(x[0] + x[1]), [x[0] - x[1] <= cap[0], x[1] - x[0] <= cap[1],
                                                 x >= 0])
    return prob, cvxdp.ScalarPrivacy(cap, sensitivity=0.1), x


@pytest.mark.parametrize("build", [_docs_socp, _lp])
def test_unbounded_whatever_the_private_data_spends_nothing(build):
    prob, spec, x = build()
    reference = prob.copy()
    reference.solve(solver=cp.CLARABEL)
    assert reference.status == cp.UNBOUNDED
    sol = prob.solve_private(epsilon=1.0, delta=1e-6, rng=0, private=spec)
    assert sol.status == prob.status == cp.settings.INFEASIBLE_OR_UNBOUNDED
    assert prob.value is None and x.value is None
    assert sol.privacy.epsilon == 0.0 and sol.privacy.delta == 0.0
    assert "no privacy budget was spent" in sol.status_reason
    assert "recession direction" in sol.status_reason


def test_a_public_bound_makes_it_a_model_to_answer():
    prob, spec, x = _docs_socp()
    bounded = cp.Problem(prob.objective, prob.constraints + [cp.norm(x, 2) <= 10])
    sol = bounded.solve_private(epsilon=1e6, delta=1e-6, rng=0, private=spec)
    assert sol.status == cp.OPTIMAL_INACCURATE
    assert sol.privacy.epsilon > 0
    assert sol.certificate.relative_gap_bound <= 1e-2
