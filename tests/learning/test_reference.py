"""reference=True on a row-level model: the exact reference is solved on a constant-data copy
(never the user's Parameter model, whose parametrised compile can need n d^2 memory), and a
failure of the reference is reported, never raised after the budget is spent."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest

import cvxdp

N, D = 300, 4


def _huber_l1():
    rng = np.random.default_rng(0)
    A = np.clip(rng.normal(size=(N, D)), -3, 3)
    t = np.clip(A @ rng.dirichlet(np.ones(D)) + 0.3 * rng.standard_t(3, size=N), -3, 3)
    X, y = cp.Parameter((N, D), value=A), cp.Parameter(N, value=t)
    w = cp.Variable(D)
    prob = cp.Problem(cp.Minimize(cp.mean(cp.huber(X @ w - y, 1.0)) + 1e-3 * cp.norm1(w)),
                      [cp.norm(w, 2) <= 2])
    exact = cp.Problem(cp.Minimize(cp.mean(cp.huber(A @ w - t, 1.0)) + 1e-3 * cp.norm1(w)),
                       [cp.norm(w, 2) <= 2])
    exact.solve()
    return prob, w, cvxdp.RowPrivacy(X, y, row_bound=3 * np.sqrt(D), label_bound=3.0), \
        exact.value


def test_reference_is_solved_on_constants_not_the_parameter_model():
    prob, w, spec, fstar = _huber_l1()
    plain = prob.solve_private(epsilon=1.0, delta=1e-6, private=spec, rng=0)
    released = w.value.copy()

    def parametrised_solve(*args, **kwargs):   # what n = 1e4, d = 20 did: 31 GiB
        raise MemoryError("the user's Parameter model was compiled")

    prob.solve = parametrised_solve
    sol = prob.solve_private(epsilon=1.0, delta=1e-6, private=spec, rng=0, reference=True)
    assert sol.validation.reference_value == pytest.approx(fstar, rel=1e-5, abs=1e-7)
    assert np.array_equal(w.value, released) and sol.status == plain.status
    got = sol.validation.metrics["private_objective_on_true_data"]
    assert sol.validation.objective_gap == pytest.approx(got - fstar, rel=1e-4, abs=1e-6)


def test_a_failed_reference_is_reported_not_raised(monkeypatch):
    prob, w, spec, _ = _huber_l1()

    def fails(problem, spec):
        raise cp.SolverError("the reference solver failed")

    monkeypatch.setattr(cvxdp.learning.reference, "with_constant_data", fails)
    sol = prob.solve_private(epsilon=1.0, delta=1e-6, private=spec, rng=0, reference=True)
    assert sol.validation.reference_value is None and sol.validation.objective_gap is None
    assert "SolverError" in sol.validation.metrics["reference_unavailable"]
    assert w.value is not None and sol.info["mechanism"] == "objective"
