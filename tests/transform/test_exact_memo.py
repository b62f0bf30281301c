"""solve_exact's memo: one Clarabel solve per program data and settings; the reference of a
private answer (the canonical comparison and the user's terms) is solved once."""

from __future__ import annotations

import dataclasses
import warnings

import cvxpy as cp
import numpy as np

import cvxdp
from cvxdp.transform import exact


def _program():
    rng = np.random.default_rng(4)
    A = rng.normal(size=(30, 5))
    x = cp.Variable(5)
    prob = cp.Problem(cp.Minimize(cp.sum_squares(A @ x - 1) + cp.norm1(x)), [x <= 2])
    return cvxdp.transform.to_scp(prob)


def _counting(monkeypatch):
    calls = []
    real = exact._clarabel

    def counted(scp, **opts):
        calls.append(scp.m)
        return real(scp, **opts)

    monkeypatch.setattr(exact, "_clarabel", counted)
    return calls


def test_the_same_data_is_solved_once(monkeypatch):
    scp = _program()
    calls = _counting(monkeypatch)
    memo: dict = {}
    first = exact.solve_exact(scp, memo=memo)
    n_first = len(calls)
    again = exact.solve_exact(dataclasses.replace(scp), solver="CLARABEL", memo=memo)
    assert again is first and len(calls) == n_first >= 1
    # other data, or other settings: solved
    moved = dataclasses.replace(scp, b=scp.b + 0.5)
    other = exact.solve_exact(moved, memo=memo)
    assert len(calls) > n_first and other.value != first.value
    n_moved = len(calls)
    exact.solve_exact(scp, memo=memo, max_iter=7)
    assert len(calls) > n_moved
    # without a memo: solved every time, to the same answer
    plain = exact.solve_exact(scp)
    assert plain.value == first.value and np.array_equal(plain.x, first.x)


def test_a_private_answers_reference_is_solved_once(monkeypatch):
    rng = np.random.default_rng(5)
    A = rng.normal(size=(40, 4))
    b = cp.Parameter(40, name="b", value=A @ rng.normal(size=4) + rng.normal(size=40))
    x = cp.Variable(4)
    prob = cp.Problem(cp.Minimize(cp.sum_squares(A @ x - b) + cp.norm1(x)))
    calls = _counting(monkeypatch)
    m = cvxdp.transform.to_scp(prob).m
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = prob.solve_private(epsilon=1e6, delta=1e-6, rng=0, reference=True,
                                 private=cvxdp.ScalarPrivacy(b, sensitivity=0.01))
    reference_solves = [r for r in calls if r == m]
    assert sol.validation.reference_value is not None
    assert sol.validation.metrics["canonical_reference_value"] == sol.validation.reference_value
    # the canonical comparison and the user's terms read one solve of the compiled program
    # (two Clarabel calls when its squares are rescaled after an inaccurate first one)
    assert len(reference_solves) in (1, 2)


def test_a_sessions_fresh_answer_is_solve_exacts():
    # the first cost of a session is solved by a solver built for it: the answer solve_exact
    # gives (to the bit), which bound_solve then takes instead of solving again; an updated
    # cost's answer is not marked fresh (a cost that weighs the objective's squares otherwise
    # builds a new solver: exact._SquaresLift, whose quadratic cost it changes)
    scp = _program()
    rng = np.random.default_rng(9)
    c0 = rng.normal(size=scp.n)
    free = np.setdiff1d(np.arange(scp.n), [j for _, _, j, _ in exact.square_terms(scp)])
    c1 = c0.copy()
    c1[free] = rng.normal(size=free.size)
    prog = dataclasses.replace(scp, c=c0)
    session = exact.ClarabelSession(prog)
    first = session.solve(c0)
    assert session.last_fresh
    alone = exact.solve_exact(prog, solver="CLARABEL")
    retried = exact.clarabel_retried(prog, first)
    assert (retried.status, retried.value) == (alone.status, alone.value)
    assert np.array_equal(retried.x, alone.x)
    session.solve(c1)
    assert not session.last_fresh
    session.solve(c0)
    assert not session.last_fresh


def test_a_cost_that_reweighs_a_square_builds_a_fresh_solver():
    scp = _program()
    (_, _, j, _), = exact.square_terms(scp)
    session = exact.ClarabelSession(scp)
    session.solve(scp.c)
    c = np.array(scp.c, dtype=float)
    c[j] *= 2.0
    twice = session.solve(c)
    assert session.last_fresh
    assert twice.value == exact.solve_exact(dataclasses.replace(scp, c=c)).value


def test_squares_in_the_objective_are_solved_as_clarabels_quadratic_cost():
    # the squares' epigraphs leave the cone program and return as Clarabel's quadratic cost,
    # as CVXPY hands sum_squares to Clarabel: the same optimum as CVXPY's own solve, and a
    # point of the cone program's set (each t at its cone's tight value)
    rng = np.random.default_rng(11)
    n = 400
    y = rng.normal(size=n).cumsum()
    x = cp.Variable(n)
    prob = cp.Problem(cp.Minimize(cp.sum_squares(x - y) + 10 * cp.sum_squares(cp.diff(x))),
                      [x >= y.min()])
    scp = cvxdp.transform.to_scp(prob)
    assert len(exact.square_terms(scp)) == 2
    sol = exact.solve_exact(scp)
    prob.solve(solver="CLARABEL")
    assert sol.status == cp.OPTIMAL
    assert abs(sol.value - prob.value) <= 1e-8 * abs(prob.value)
    s = scp.b - scp.A @ sol.x
    d = scp.dims
    head = d.zero + d.nonneg
    for q in d.soc:
        block = s[head:head + q]
        assert block[0] >= np.linalg.norm(block[1:]) - 1e-9 * (1.0 + abs(block[0]))
        head += q
    # the cone program solved without the lift reaches the same value
    cone = exact.ClarabelSession(scp, lift=False).solve(scp.c)
    assert abs(cone.value - sol.value) <= 1e-6 * abs(sol.value)
