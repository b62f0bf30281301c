"""Every solver's answer that is not a success says why in ``sol.status_reason`` (and in
``repr``), the one place README points to; ``info["status_reason"]`` carries the same text."""

import math
import warnings

import cvxpy as cp
import numpy as np
import pytest

import cvxdp
from cvxdp.estimation.gaussians import private_gaussian
from cvxdp.solution import Certificate, PrivateSolution
from cvxdp.status import status_of, within_objective_range


def _john():
    A = np.random.default_rng(0).normal(size=(500, 4))
    A /= np.linalg.norm(A, axis=1).max()
    return cvxdp.john_ellipsoid(A).solve_private(epsilon=1, delta=1e-6, rng=0, closeness=1e-3,
                                                 row_bound=1.0)


def _ball():
    P = np.random.default_rng(0).normal(size=(500, 3))
    return cvxdp.min_enclosing_ball(P).solve_private(epsilon=1, delta=1e-6, rng=0,
                                                     bounds=(-5, 5))


def _gaussian():
    X = np.random.default_rng(0).normal(size=(3000, 3))
    return private_gaussian(X, epsilon=1, delta=1e-6, rng=0, bounds=(-50, 50))


@pytest.mark.parametrize("solve", [_john, _ball, _gaussian], ids=["john", "ball", "gaussian"])
def test_a_user_limit_answer_says_why_in_status_reason_and_repr(solve):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = solve()
    assert sol.status == "user_limit"
    assert isinstance(sol.status_reason, str) and len(sol.status_reason) > 20
    assert sol.info["status_reason"] == sol.status_reason
    assert f"status_reason: {sol.status_reason}" in repr(sol)


def test_a_reason_given_either_way_is_the_same_in_both_places():
    a = PrivateSolution(status="user_limit", status_reason="because")
    b = PrivateSolution(status="user_limit", info={"status_reason": "because"})
    assert a.info["status_reason"] == a.status_reason == "because"
    assert b.info["status_reason"] == b.status_reason == "because"
    assert PrivateSolution(status="optimal_inaccurate").status_reason is None


def test_the_objectives_sign_rederives_a_reason_that_carries_a_note():
    # trial 16 (a lasso with a private 400 x 10 design): the certificate was narrowed by the
    # objective's sign to relative gap 0.90 but the reason still said "no bound on the
    # sub-optimality is proven": the reason carried a note after the derived part, so the
    # narrowing did not see it as derived and kept the stale text
    cert = Certificate.from_bounds(objective_upper=math.inf, optimum_lower=-math.inf,
                                   violation_bound=0.0, equality_violation_bound=None,
                                   probability=0.999, how="a bound")
    status, reason = status_of(cert)
    note = "the private data multiply x, which no public constraint bounds"
    sol = PrivateSolution(status=status, status_reason=f"{reason}; {note}", certificate=cert)
    sol.info["guarantee"] = str(cert)
    within_objective_range(sol, 0.0, math.inf)
    assert sol.certificate.objective_upper == math.inf  # the sign gives OPT >= 0 only
    cert2 = Certificate.from_bounds(objective_upper=0.9, optimum_lower=-math.inf,
                                    violation_bound=0.0, equality_violation_bound=None,
                                    probability=0.999, how="a bound")
    # (the mechanism's reason is status_of's for its own certificate)
    status2, reason2 = status_of(cert2)
    sol2 = PrivateSolution(status=status2, status_reason=f"{reason2}; {note}", certificate=cert2)
    within_objective_range(sol2, 0.0, math.inf)
    s, r = status_of(sol2.certificate)
    assert sol2.certificate.relative_gap_bound == pytest.approx(0.9)
    assert (sol2.status, sol2.status_reason) == (s, f"{r}; {note}")
    assert "no bound on the sub-optimality" not in sol2.status_reason


def test_no_bound_quotes_no_probability():
    """With no bound proven and the violation within the accuracy the reason read "no bound on
    the sub-optimality is proven (> accuracy 0.01, with probability >= 1)": nothing is above
    the accuracy with a probability there; the probability is quoted only beside numbers."""
    cert = Certificate.from_bounds(objective_upper=math.inf, optimum_lower=-math.inf,
                                   violation_bound=0.0, equality_violation_bound=None,
                                   probability=1.0, how="none")
    status, reason = status_of(cert, 0.01)
    assert status == "user_limit"
    assert reason.startswith("no bound on the sub-optimality is proven; raise epsilon")
    assert "probability" not in reason
    cert = Certificate.from_bounds(objective_upper=math.inf, optimum_lower=-math.inf,
                                   violation_bound=0.5, equality_violation_bound=None,
                                   probability=0.999, how="none")
    _, reason = status_of(cert, 0.01)
    assert ("no bound on the sub-optimality is proven and the certified violation of the true "
            "constraints is 0.5 (> accuracy 0.01, with probability >= 0.999)") in reason


def test_an_unbounded_objective_at_the_point_is_named_not_the_variables():
    """Held-out trial 22a (D5): a KL projection of a private histogram ``q`` at epsilon 10 has
    no finite gap bound because the noise interval of ``q`` reaches 0 inside ``kl_div(p, q)``
    (the objective at the released point has no upper bound there), while the optimum is
    bounded below (``kl_div >= 0``).  The reason said only "add public bounds on the
    variables", which cannot help: ``p`` is in the simplex already."""
    cert = Certificate.from_bounds(objective_upper=math.inf, optimum_lower=0.0,
                                   violation_bound=0.0, equality_violation_bound=None,
                                   probability=0.999, how="a bound")
    status, reason = status_of(cert, 0.01)
    assert status == "user_limit"
    assert reason.startswith("no bound on the sub-optimality is proven: nothing bounds the true "
                             "objective at the released point from above")
    assert "kl_div" in reason and "raise epsilon" in reason
    # an unbounded optimum keeps the advice on public bounds
    cert = Certificate.from_bounds(objective_upper=1.0, optimum_lower=-math.inf,
                                   violation_bound=0.0, equality_violation_bound=None,
                                   probability=0.999, how="a bound")
    _, reason = status_of(cert, 0.01)
    assert reason.startswith("no bound on the sub-optimality is proven: nothing bounds the true "
                             "optimum from below")
    assert "add public bounds on the variables" in reason


def test_kl_projection_of_a_private_histogram_names_the_noise_interval():
    """The model of trial 22a D5, end to end: the reason names the objective's upper bound."""
    r = np.random.default_rng(0)
    n, m = 40, 3
    q = cp.Parameter(n, name="q", value=r.dirichlet(np.ones(n)) * 0.5 + 0.5 / n)
    A = r.uniform(-1, 1, (m, n))
    bm = A @ r.dirichlet(np.ones(n))
    p = cp.Variable(n, name="p")
    prob = cp.Problem(cp.Minimize(cp.sum(cp.kl_div(p, q))),
                      [cp.sum(p) == 1, A @ p == bm, p >= 0, p <= 1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = prob.solve_private(epsilon=10, delta=1e-6, rng=0,
                                 private=cvxdp.ScalarPrivacy(q, sensitivity=1e-3))
    assert sol.status == "user_limit" and sol.certificate.objective_upper == math.inf
    assert "from above" in sol.status_reason and "kl_div" in sol.status_reason


def test_the_objective_release_reason_names_the_log_and_its_argument():
    # trial 24's D2: Fisher market (Eisenberg-Gale), private budgets B multiply log(u_i)'s
    # hypograph variables; the reason said "bound the variables the private objective
    # multiplies", which the user never wrote (X <= 1 changes nothing; u >= 0.05 helps)
    r = np.random.default_rng(0)
    nb, ng = 8, 12
    V = r.uniform(0.1, 1, (nb, ng))
    B = cp.Parameter(nb, nonneg=True, name="budget", value=r.uniform(1, 2, nb))
    X = cp.Variable((nb, ng), nonneg=True, name="X")
    u = cp.sum(cp.multiply(V, X), axis=1)
    prob = cp.Problem(cp.Maximize(B @ cp.log(u)), [cp.sum(X, axis=0) <= 1])
    sol = prob.solve_private(epsilon=1.0, delta=1e-6, rng=0,
                             private=cvxdp.ObjectivePrivacy(B, sensitivity=0.01))
    assert sol.certificate.relative_gap_bound == math.inf
    assert "log / entr terms of X" in sol.status_reason
    assert "positive public lower bound" in sol.status_reason
