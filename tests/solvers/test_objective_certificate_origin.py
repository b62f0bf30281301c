"""The objective certificate's level search stops before a level whose solves cannot lower its
bound: the secant of ``[0, d_i]`` (the extents are at least 0 at ``d = 0``) already bounds
``[d_i, d_{i-1}]`` within the bound so far.  The certificate is the one the full descent
gives, with fewer solves."""

from __future__ import annotations

import warnings

import cvxpy as cp
import numpy as np
import scipy.sparse as sp

import cvxdp
from cvxdp.solvers import objective_certificate as oc
from cvxdp.solvers.mwu import solve as mwu_solve


def _logistic():
    # logistic regression (CVXPY's example form) with private 0/1 labels, an l2 ball
    rng = np.random.default_rng(405)
    m, n = 150, 5
    X = rng.normal(size=(m, n))
    y0 = (rng.random(m) < 1 / (1 + np.exp(-X @ np.array([1, -1, 0.5, 0, 0])))).astype(float)
    Y = cp.Parameter(m, name="Y", value=y0)
    beta = cp.Variable(n)
    ll = cp.sum(cp.multiply(Y, X @ beta) - cp.logistic(X @ beta)) / m
    prob = cp.Problem(cp.Maximize(ll), [cp.norm(beta, 2) <= 4])
    return prob, beta, cvxdp.ObjectivePrivacy(Y, sensitivity=1.0 / m)


def _run(monkeypatch):
    levels = []
    init = oc._LevelSolves.__init__

    def counted(self, *args, **kw):
        levels.append(self)
        init(self, *args, **kw)

    monkeypatch.setattr(oc._LevelSolves, "__init__", counted)
    # the comparisons are of the search's rules, not of its budget: the largest budget (a
    # program of symmetric cones), so that the full descent this model's 150 exponential cones
    # would cut at 40 solves (mwu/solve.py, sharp_budget) runs to its end (the early stop makes
    # 30 solves either way)
    monkeypatch.setattr(mwu_solve, "sharp_budget", lambda prog: mwu_solve._SHARP_MAX_SOLVES)
    prob, beta, spec = _logistic()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = prob.solve_private(epsilon=10, delta=1e-6, rng=0, private=spec)
    return sol, np.array(beta.value), sum(lv.solved for lv in levels)


def test_the_search_stops_early_with_the_full_descents_certificate(monkeypatch):
    sol, x, solves = _run(monkeypatch)
    assert "gap_bound_sharp" in sol.info
    # the rule off: an origin whose lower extents are -inf gives an infinite slope
    monkeypatch.setattr(oc, "_origin", lambda up: (0.0, np.zeros_like(up),
                                                   np.full_like(up, -np.inf)))
    full, x_full, solves_full = _run(monkeypatch)
    assert solves < solves_full  # one level (10 solves: 5 coordinates, 2 sides) fewer
    assert solves_full - solves == 10
    assert sol.certificate.gap_bound == full.certificate.gap_bound
    assert sol.certificate.violation_bound == full.certificate.violation_bound
    assert sol.value == full.value and sol.status == full.status
    np.testing.assert_array_equal(x, x_full)


def test_the_top_level_is_not_solved_when_its_public_box_decides_nothing(monkeypatch):
    # the top level's extents cap [d_1, d_0] only; the public box (the ball ||beta|| <= 4)
    # caps it too, and that interval is below the bound the lower levels give: its 10 solves
    # are not needed, and the certificate is the one with them
    sol, x, solves = _run(monkeypatch)
    monkeypatch.setattr(oc, "_public_cap", lambda prog, x, supp: None)  # solved first
    full, x_full, solves_full = _run(monkeypatch)
    assert solves_full - solves == 10
    assert sol.certificate.gap_bound == full.certificate.gap_bound
    assert sol.value == full.value and sol.status == full.status
    np.testing.assert_array_equal(x, x_full)


def test_the_public_cap_bounds_the_extents_of_the_set():
    # over ||x|| <= 2 around x~ = (1, 0): x_0 - 1 in [-3, 1], x_1 in [-2, 2]
    from cvxdp.transform.scp import ConeDims, SymmetricConeProgram
    A = sp.csc_matrix(np.vstack([np.zeros((1, 2)), -np.eye(2)]))
    prog = SymmetricConeProgram(A=A, b=np.array([2.0, 0.0, 0.0]), c=np.zeros(2), offset=0.0,
                                dims=ConeDims(soc=(3,)), cone=None)
    cap = oc._public_cap(prog, np.array([1.0, 0.0]), np.array([0, 1]))
    np.testing.assert_allclose(cap, [[1.0, 2.0], [3.0, 2.0]], rtol=1e-5)
    assert np.all(cap >= [[1.0, 2.0], [3.0, 2.0]])  # pushed outward
