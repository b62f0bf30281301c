"""Bound propagation: a valid outer box of the public linear rows, exact where it should be,
and the public box of many coordinates taken from it instead of two solves each."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import scipy.sparse as sp

import cvxdp
from cvxdp.solvers.bound_propagation import propagated_box
from cvxdp.solvers.public_part import BOX_SOLVES_MAX, coordinate_box, public_bounds
from cvxdp.transform import to_scp
from cvxdp.transform.scp import ConeDims


def test_row_sums_and_signs_give_the_exact_box():
    # X (4 x 3) >= 0 with every row summing to 1, and 2 <= y <= 5: X_ij in [0, 1] exactly
    n = 13
    sums = sp.hstack([sp.kron(sp.eye(4), np.ones((1, 3))), sp.csr_matrix((4, 1))])
    A = sp.vstack([sums, -sp.eye(n), sp.csr_matrix(([1.0, -1.0], ([0, 1], [12, 12])),
                                                    shape=(2, n))])
    b = np.r_[np.ones(4), np.zeros(n), 5.0, -2.0]
    lo, hi = propagated_box(A, b, ConeDims(zero=4, nonneg=n + 2), np.ones(A.shape[0], bool))
    assert np.allclose(lo[:12], 0.0) and np.allclose(hi[:12], 1.0)
    # each bound pushed outward by a relative 1e-12 (rounding)
    assert 2.0 - 1e-11 <= lo[12] <= 2.0 and 5.0 <= hi[12] <= 5.0 + 1e-11


def test_the_box_contains_every_solved_range_on_random_polytopes():
    # the propagated box is an outer box: it contains [min, max] of every coordinate over the
    # rows (solved exactly), on random bounded polytopes
    for seed in range(5):
        rng = np.random.default_rng(seed)
        n, m = 6, 12
        G = rng.normal(size=(m, n))
        A = sp.csr_matrix(np.vstack([G, np.eye(n), -np.eye(n)]))
        b = np.r_[np.abs(rng.normal(size=m)) + 0.5, np.full(n, 3.0), np.full(n, 3.0)]
        dims = ConeDims(nonneg=A.shape[0])
        keep = np.ones(A.shape[0], dtype=bool)
        lo, hi = propagated_box(A, b, dims, keep)
        s_lo, s_hi = public_bounds(A, b, dims, ~keep, list(np.eye(n)))
        assert np.all(lo <= s_lo + 1e-7) and np.all(hi >= s_hi - 1e-7)
        assert np.all(hi <= 3.0 + 1e-9) and np.all(lo >= -3.0 - 1e-9)


def test_unbounded_coordinates_stay_infinite():
    # x1 + x2 <= 1 alone bounds nothing; with x >= 0 it bounds both
    A = sp.csr_matrix(np.array([[1.0, 1.0]]))
    lo, hi = propagated_box(A, np.array([1.0]), ConeDims(nonneg=1), np.ones(1, bool))
    assert np.all(np.isinf(lo)) and np.all(np.isinf(hi))
    A2 = sp.vstack([A, -sp.eye(2)])
    lo, hi = propagated_box(A2, np.r_[1.0, 0, 0], ConeDims(nonneg=3), np.ones(3, bool))
    assert np.allclose(lo, 0) and np.allclose(hi, 1)


def test_coordinate_box_of_many_coordinates_is_the_solved_box_on_row_sums():
    # a bin-packing relaxation: more than BOX_SOLVES_MAX reached coordinates take the
    # propagated box, here equal to the solved one (X in [0, 1], y in [0, 1])
    I, J = 20, 8
    rng = np.random.default_rng(915)
    s = cp.Parameter(I, nonneg=True, name="s", value=rng.uniform(0.1, 0.5, I))
    X = cp.Variable((I, J), nonneg=True)
    y = cp.Variable(J)
    prob = cp.Problem(cp.Minimize(cp.sum(y)), [cp.sum(X, axis=1) == 1, s @ X <= y, y <= 1,
                                               y >= 0])
    scp = to_scp(prob, private=cvxdp.ConstraintPrivacy(s, 1e-3))
    coords = np.arange(scp.n)
    assert coords.size > BOX_SOLVES_MAX
    lo, hi = coordinate_box(scp, coords, allow_unbounded=True)
    row_private = np.zeros(scp.m, dtype=bool)
    row_private[scp.sensitivity.private_rows()] = True
    few = coords[:: max(1, coords.size // 20)]
    s_lo, s_hi = public_bounds(scp.A, scp.b, scp.dims, row_private, list(np.eye(scp.n)[few]))
    assert np.allclose(lo[few], s_lo, atol=1e-6) and np.allclose(hi[few], s_hi, atol=1e-6)


def _prog(A, b, dims, exp_tail=None):
    from cvxdp.transform.scp import SymmetricConeProgram
    A = sp.csc_matrix(A)
    return SymmetricConeProgram(A=A, b=np.asarray(b, float), c=np.zeros(A.shape[1]), offset=0.0,
                                dims=dims, cone=None, exp_tail=exp_tail)


def test_proven_empty_by_the_rows_and_cone_bounds_but_not_within_a_larger_slack():
    from cvxdp.solvers.bound_propagation import proven_empty
    from cvxdp.transform.scp import ExpTail
    # x + t <= 0.001 (orthant), t >= ||0.002|| (SOC (t, 0.002)): x <= -0.001; the
    # exponential cone (u, v, w) = (0, 1, x) needs w = x >= 0: empty by 0.001
    A = sp.csr_matrix(np.array([[1.0, 1.0], [0.0, -1.0], [0.0, 0.0]]))
    b = np.array([0.001, 0.0, 0.002])
    tail = ExpTail(A=sp.csr_matrix(np.array([[0.0, 0.0], [0.0, 0.0], [-1.0, 0.0]])),
                   b=np.array([0.0, 1.0, 0.0]))
    prog = _prog(A, b, ConeDims(nonneg=1, soc=(2,)), exp_tail=tail)
    assert proven_empty(prog, 1e-6)
    assert not proven_empty(prog, 2e-3)  # within 0.002 of every row: x = -0.001 is
    # without the exponential cone nothing bounds x below: not proven
    assert not proven_empty(_prog(A, b, ConeDims(nonneg=1, soc=(2,))), 1e-6)
    # a PSD block's diagonal: [[x, 0], [0, 1]] >> 0 (SCS svec: x, 0, 1) with x <= -0.5
    A2 = sp.csr_matrix(np.array([[1.0], [-1.0], [0.0], [0.0]]))
    b2 = np.array([-0.5, 0.0, 0.0, 1.0])
    assert proven_empty(_prog(A2, b2, ConeDims(nonneg=1, psd=(2,))), 1e-6)
    assert not proven_empty(_prog(A2, np.array([0.5, 0.0, 0.0, 1.0]),
                                  ConeDims(nonneg=1, psd=(2,))), 1e-6)
    # an equality x = 1 against x <= 0.9: empty; within 0.1 of both it is not
    A3 = sp.csr_matrix(np.array([[1.0], [1.0]]))
    prog3 = _prog(A3, np.array([1.0, 0.9]), ConeDims(zero=1, nonneg=1))
    assert proven_empty(prog3, 1e-6) and not proven_empty(prog3, 0.06)
