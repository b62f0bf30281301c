"""Which private constraints are bounded in the user's terms (constraint_fit.py); the bound's
validity is tested in test_certified_user_terms.py."""

from __future__ import annotations

import cvxpy as cp
import numpy as np

from cvxdp.solvers.perturbation.constraint_fit import detect_constraint_fits


def test_which_constraints_need_the_users_terms():
    rng = np.random.default_rng(0)
    y = cp.Parameter(4, name="y", value=rng.normal(size=4))
    A = cp.Parameter((3, 4), name="A", value=rng.normal(size=(3, 4)))
    x = cp.Variable(4, name="x")
    # affine private terms and a unit-weight Euclidean norm: the canonical rows are the user's
    same = cp.Problem(cp.Minimize(cp.sum(x)), [A[0] @ x + cp.norm(x, 2) <= 1,
                                               cp.norm(x - y, 2) <= 3, cp.max(A @ x) <= 1,
                                               cp.norm(x - y, "inf") <= 2])
    assert detect_constraint_fits(same, (y, A)) is None
    # a sum over entries, and a weighted norm: bounded in the user's terms
    cf = detect_constraint_fits(cp.Problem(cp.Minimize(cp.sum(x)), [
        cp.norm(x - y, 1) <= 2, 2 * cp.norm(x - y, 2) <= 3]), (y, A))
    assert len(cf.fits) == 2 and not cf.unbounded
    # a private nonlinear constraint no bound covers: reported (its violation unbounded)
    cf = detect_constraint_fits(cp.Problem(cp.Minimize(cp.sum(x)), [
        cp.sum(cp.maximum(A @ x, 0)) + cp.max(x - y) <= 2]), (y, A))
    assert cf.unbounded
