"""When no sub-optimality bound is proven because the private data multiply variables no
public constraint bounds, the status reason says which (structure only)."""

from __future__ import annotations

import cvxpy as cp
import numpy as np

import cvxdp


def test_the_users_unbounded_variable_is_named():
    # sum(z) <= b with b private is the only constraint: publicly z is unbounded, and the
    # private costs multiply it
    c = cp.Parameter(3, name="c", value=np.array([1.0, 2.0, 3.0]))
    b = cp.Parameter(name="b", value=1.0)
    z = cp.Variable(3, name="z")
    prob = cp.Problem(cp.Minimize(c @ z + cp.sum_squares(z)), [cp.sum(z) <= b])
    sol = prob.solve_private(epsilon=1e6, delta=1e-6, rng=0,
                             private=[cvxdp.ObjectivePrivacy(c, 0.01),
                                      cvxdp.ScalarPrivacy(b, 0.01)])
    assert not np.isfinite(sol.certificate.gap_bound)
    assert "the private data multiply z, which no public constraint bounds" in \
        sol.status_reason


def test_log_hypographs_of_a_boxed_argument_need_no_hint_any_more():
    # trial 11: Maximize(w @ log(1 + x)) with private weights and a private budget: x is boxed,
    # the unbounded variables are log's hypograph variables.  The reason used to say that
    # CVXPY's own variables are out of reach; they are bounded through their atoms now
    # (t_i >= log(1 + min x_i) = 0 at some optimal point: perturbation.certified.
    # _epigraph_box), so the model is certified at epsilon 1e6
    rng = np.random.default_rng(906)
    n = 30
    w = cp.Parameter(n, nonneg=True, name="w", value=rng.uniform(0.5, 2, n))
    budget = cp.Parameter(nonneg=True, name="budget", value=10.0)
    x = cp.Variable(n, nonneg=True)
    prob = cp.Problem(cp.Maximize(w @ cp.log(1 + x)),
                      [rng.uniform(0.5, 1.5, n) @ x <= budget, x <= 2])
    exact = cp.Problem(prob.objective, prob.constraints).solve()
    sol = prob.solve_private(epsilon=1e6, delta=1e-6, rng=0,
                             private=[cvxdp.ObjectivePrivacy(w, 1e-2),
                                      cvxdp.ScalarPrivacy(budget, 0.1)])
    assert sol.certificate.relative_gap_bound <= 1e-2
    assert exact - float(prob.objective.value) <= sol.certificate.gap_bound


def test_no_point_at_this_budget_does_not_send_the_user_to_a_mechanism_that_refuses():
    """Held-out trial 17: a packing LP with ``x >= 0`` its only public constraint and private
    ``A``, ``b`` in ``A @ x <= b`` had no point at epsilon 1 (the loosened counterpart is
    unbounded), and the reason said "... or use mechanism='mwu'"; that call is refused
    because the public constraints do not bound the variables, and its message sends the user
    back to 'auto'. The reason names what both mechanisms need: public bounds."""
    rng = np.random.default_rng(8)
    A = cp.Parameter((20, 10), name="A", nonneg=True, value=rng.uniform(0.1, 1, (20, 10)))
    b = cp.Parameter(20, name="b", nonneg=True, value=rng.uniform(5, 10, 20))
    x = cp.Variable(10, nonneg=True, name="x")
    prob = cp.Problem(cp.Maximize(rng.uniform(1, 2, 10) @ x), [A @ x <= b])
    specs = [cvxdp.ConstraintPrivacy(A, sensitivity=0.002), cvxdp.ScalarPrivacy(b, 0.05)]
    sol = prob.solve_private(epsilon=1.0, delta=1e-6, rng=0, private=specs)
    assert sol.status == "solver_error" and sol.value is None
    reason = sol.status_reason
    assert "add public bounds" in reason
    assert "mechanism='mwu'" not in reason or "trace_bound=" in reason


def test_a_free_variable_that_weakens_a_finite_bound_is_named_too():
    """Held-out trial 17: a soft-margin SVM with private soft labels and a free intercept ``b``.
    At epsilon 1e6 it is certified now (the level set's faces box the intercept:
    fit_term._faces_box); at epsilon 100 the finite bound (0.16) misses the accuracy, and the
    reason still says which variables the private data multiply without a public bound (the
    gap bound was finite, so it used not to)."""
    rng = np.random.default_rng(3)
    m, n = 80, 3
    X = rng.normal(size=(m, n))
    y = cp.Parameter(m, name="y", value=np.tanh(X @ np.array([1.0, -1.0, 0.5])))
    w = cp.Variable(n, name="w")
    b = cp.Variable(name="b")
    loss = cp.sum(cp.pos(1 - cp.multiply(y, X @ w + b))) / m + 0.1 * cp.sum_squares(w)
    prob = cp.Problem(cp.Minimize(loss))
    spec = cvxdp.ConstraintPrivacy(y, sensitivity=0.02)
    sol = prob.solve_private(epsilon=1e6, delta=1e-6, rng=0, private=spec)
    assert sol.status == "optimal_inaccurate"
    sol = prob.solve_private(epsilon=100, delta=1e-6, rng=0, private=spec)
    assert sol.status == "user_limit" and np.isfinite(sol.certificate.gap_bound)
    assert "the private data multiply " in sol.status_reason
    named = sol.status_reason.split("the private data multiply ")[1].split(", which")[0]
    assert "b" in named.split(", ")


def test_an_unnamed_variable_is_described_by_its_shape():
    """Held-out trial 18: a Lyapunov LMI's reason said "the private data multiply var2", CVXPY's
    automatic name, which the user cannot find in their model; the shape and the way to name it
    make it findable."""
    A = cp.Parameter((3, 3), name="A", value=np.array([[-1.0, 0.5, 0], [0.2, -2.0, 0.3],
                                                      [0, 0.4, -1.5]]))
    P = cp.Variable((3, 3), symmetric=True)
    prob = cp.Problem(cp.Minimize(cp.trace(P)), [A.T @ P + P @ A << -np.eye(3), P >> np.eye(3)])
    sol = prob.solve_private(epsilon=1.0, delta=1e-6, rng=0,
                             private=cvxdp.ConstraintPrivacy(A, sensitivity=0.01))
    assert f"{P.name()} (a (3, 3) variable without a name" in sol.status_reason
