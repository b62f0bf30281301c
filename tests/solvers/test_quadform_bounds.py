"""``square_bound``: a public bound on ``max ||a(x)||^2`` over the public constraints
(quadform_bounds.py), used by every quad_form certificate's Loewner shift."""

from __future__ import annotations

import itertools

import cvxpy as cp
import numpy as np

from cvxdp.solvers.quadform_bounds import square_bound


def test_on_the_simplex_the_chord_bound_is_the_true_maximum():
    """``max ||w||^2`` over ``sum(w) == 1, w >= 0`` is 1 (a vertex); the entries' box gives
    ``n`` (each ``w_j`` in ``[0, 1]``), the chord of each square gives ``sum(w) = 1``."""
    n = 15
    w = cp.Variable(n)
    prob = cp.Problem(cp.Minimize(0), [cp.sum(w) == 1, w >= 0])
    B = square_bound(prob, w, set())
    assert 1.0 <= B <= 1.0 + 1e-6


def test_on_a_polytope_it_bounds_the_maximum_over_the_vertices():
    """``-1 <= x <= 2``, ``x_1 + x_2 + x_3 <= 1``: the maximum of the convex ``||x||^2`` is at
    a vertex ((2, -1, -1): 6); the box gives ``3 * 4``, the chords ``sum(x) + 3 * 2 <= 7``."""
    x = cp.Variable(3)
    cons = [x >= -1, x <= 2, cp.sum(x) <= 1]
    prob = cp.Problem(cp.Minimize(0), cons)
    best = max(float(np.sum(np.square(v))) for v in itertools.product([-1.0, 2.0], repeat=3)
               if sum(v) <= 1)
    B = square_bound(prob, x, set())
    assert best == 6.0 and best <= B <= 7.0 + 1e-5


def test_private_constraints_are_left_out_and_an_unbounded_range_is_inf():
    x = cp.Variable(2)
    p = cp.Parameter(2, value=np.ones(2))
    prob = cp.Problem(cp.Minimize(0), [x >= 0, p @ x <= 1])
    assert square_bound(prob, x, {p.id}) == float("inf")   # only x >= 0 is public
    assert square_bound(prob, x, set()) <= 1.0 + 1e-6       # x_j in [0, 1], chord sum(x) <= 1
