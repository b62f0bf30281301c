"""Directions a cone program is unbounded in, proven from structure (transform.unbounded), and
the public bounds that skip their solves: the same answers, fewer solves."""

import cvxpy as cp
import numpy as np
import pytest
import scipy.sparse as sp

import cvxdp
from cvxdp.errors import InfeasibleProblemError
from cvxdp.solvers import public_part
from cvxdp.solvers.public_part import public_bounds
from cvxdp.transform import to_scp
from cvxdp.transform.scp import ConeDims, SymmetricConeProgram
from cvxdp.transform.unbounded import raisable_columns, unbounded_maxima


def _prog(A, b, dims):
    A = sp.csc_matrix(np.asarray(A, dtype=float))
    return SymmetricConeProgram(A=A, b=np.asarray(b, dtype=float), c=np.zeros(A.shape[1]),
                                offset=0.0, dims=dims, cone=None)


def _square(n_w):
    """``t >= ||w||^2`` as CVXPY writes it, ``(1 + t, t - 1, 2 w)`` in a second-order cone;
    variables ``(w_1 .. w_n, t)``."""
    q = n_w + 2
    A = np.zeros((q, n_w + 1))
    A[0, n_w], A[1, n_w] = -1.0, -1.0
    A[2:, :n_w] = -2.0 * np.eye(n_w)
    return _prog(A, np.r_[1.0, -1.0, np.zeros(n_w)], ConeDims(soc=(q,)))


def _units(n):
    return [row for row in np.eye(n)] + [-row for row in np.eye(n)]


def test_a_square_lets_its_members_grow_both_ways_and_its_head_up():
    prog = _square(2)
    assert raisable_columns(prog).tolist() == [False, False, True]
    # +w1 +w2 +t | -w1 -w2 -t: t >= ||w||^2 >= 0 is bounded below only
    assert unbounded_maxima(prog, _units(3)).tolist() == [True, True, True, True, True, False]


def test_a_hinge_epigraph_restores_the_rows_its_weights_move():
    # u_i >= 1 - a_i'w (rows -u_i - a_i'w <= -1), u_i >= 0; variables (w1, w2, u1, u2, u3)
    a = np.array([[1.0, 2.0], [-1.0, -0.5], [0.0, 3.0]])
    A = np.block([[-a, -np.eye(3)], [np.zeros((3, 2)), -np.eye(3)]])
    prog = _prog(A, np.r_[-np.ones(3), np.zeros(3)], ConeDims(nonneg=6))
    assert raisable_columns(prog).tolist() == [False, False, True, True, True]
    got = unbounded_maxima(prog, _units(5))
    assert got.tolist() == [True] * 5 + [True, True, False, False, False]


def test_a_bound_row_a_zero_row_and_a_psd_block_are_not_restored():
    # x1 <= 1 (an orthant row that x1 grows against, nothing to restore it)
    prog = _prog([[1.0, 0.0]], [1.0], ConeDims(nonneg=1))
    assert unbounded_maxima(prog, _units(2)).tolist() == [False, True, True, True]
    # x1 + t = 1 with t raisable elsewhere: an equality is never restored
    prog = _prog([[1.0, 1.0], [0.0, -1.0]], [1.0, 0.0], ConeDims(zero=1, nonneg=1))
    assert unbounded_maxima(prog, _units(2)).tolist() == [False, False, False, False]
    # a 2x2 PSD block [[x1, x2], [x2, t]] (svec rows: x1, sqrt2 x2, t)
    prog = _prog(-np.diag([1.0, np.sqrt(2.0), 1.0]), np.zeros(3), ConeDims(psd=(2,)))
    assert not unbounded_maxima(prog, _units(3)).any()


def test_a_raised_column_must_lie_outside_the_direction():
    # u >= 1 - w  and  u >= 0: along d = (1, -1) (w up, u down) nothing restores u >= 0
    A = np.array([[-1.0, -1.0], [0.0, -1.0]])
    prog = _prog(A, [-1.0, 0.0], ConeDims(nonneg=2))
    assert unbounded_maxima(prog, [np.array([1.0, -1.0]), np.array([1.0, 0.0])]).tolist() \
        == [False, True]


def test_each_proven_direction_reaches_any_cap_in_a_capped_solve():
    # the hinge SVM of trial 17 (private labels): its public rows bound none of w, b
    rng = np.random.default_rng(302)
    X = rng.normal(size=(30, 3))
    y = cp.Parameter(30, value=np.sign(X @ [1.0, -1.0, 0.5]))
    w, b0 = cp.Variable(3), cp.Variable()
    prob = cp.Problem(cp.Minimize(cp.sum(cp.pos(1 - cp.multiply(y, X @ w + b0))) / 30
                                  + 0.1 * cp.sum_squares(w)))
    scp = to_scp(prob, private=(cvxdp.ConstraintPrivacy(y, sensitivity=0.02),))
    keep = np.ones(scp.m, dtype=bool)
    keep[scp.sensitivity.private_rows()] = False
    prog = public_part.public_program(scp.A, scp.b, scp.dims, keep)
    dirs = _units(scp.n)
    proven = unbounded_maxima(prog, dirs)
    assert proven.sum() >= 8  # w (3) and b, both sides
    for d in np.asarray(dirs)[proven]:
        capped = public_part._capped_max(_with_cost(prog, -d), 50.0)
        assert capped == "cap"


def _with_cost(prog, c):
    import dataclasses
    return dataclasses.replace(prog, c=np.asarray(c, dtype=float))


def test_public_bounds_skip_the_proven_sides_with_the_same_answer(monkeypatch):
    prog = _square(2)
    rp = np.zeros(prog.m, dtype=bool)
    calls = []
    real = public_part.bound_solve
    monkeypatch.setattr(public_part, "bound_solve",
                        lambda p, first=None: calls.append(1) or real(p, first))
    lo, hi = public_bounds(prog.A, prog.b, prog.dims, rp, list(np.eye(3)),
                           allow_unbounded=True)
    assert lo.tolist() == [-np.inf, -np.inf, pytest.approx(0.0, abs=1e-6)]
    assert hi.tolist() == [np.inf, np.inf, np.inf]
    assert calls == []  # no retry chain: only min t was solved (and it solved)


def test_an_infeasible_set_still_raises_when_every_side_is_proven():
    # u >= 1 - w, u >= 0, and the unrelated x <= -1, x >= 1: empty
    A = np.array([[-1.0, -1.0, 0.0], [0.0, -1.0, 0.0], [0.0, 0.0, 1.0], [0.0, 0.0, -1.0]])
    prog = _prog(A, [-1.0, 0.0, -1.0, -1.0], ConeDims(nonneg=4))
    assert unbounded_maxima(prog, [np.eye(3)[0]]).tolist() == [True]
    with pytest.raises(InfeasibleProblemError):
        public_bounds(prog.A, prog.b, prog.dims, np.zeros(4, dtype=bool), [np.eye(3)[0]],
                      allow_unbounded=True)


def test_the_unit_table_is_the_general_proof_on_every_unit_direction():
    # unbounded_maxima reads unit directions off a table built entry by entry; the general
    # proof (_restorable) must agree on random sparse programs of every cone kind
    from cvxdp.transform import unbounded

    rng = np.random.default_rng(1)
    proven = 0
    for _ in range(150):
        n = int(rng.integers(2, 7))
        dims = ConeDims(zero=int(rng.integers(0, 2)), nonneg=int(rng.integers(0, 6)),
                        soc=tuple(int(q) for q in rng.integers(2, 5, size=rng.integers(0, 3))),
                        psd=(2,) if rng.random() < 0.2 else ())
        A = sp.random(dims.rows, n, density=0.35, random_state=int(rng.integers(1 << 30)),
                      data_rvs=lambda k: rng.choice([-1.0, 1.0, -2.0, 0.5], size=k))
        prog = _prog(A.toarray(), rng.normal(size=dims.rows), dims)
        lay = unbounded._Layout(prog)
        for j in range(n):
            for row, sgn in ((0, 1.0), (1, -1.0)):
                d = np.zeros(n)
                d[j] = sgn
                general = unbounded._restorable(lay, d, np.array([j]))
                assert lay.unit[row, j] == general
                proven += general
    assert proven > 50
