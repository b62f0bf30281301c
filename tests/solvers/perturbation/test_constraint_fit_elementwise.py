"""An elementwise private nonlinear constraint (``abs(x - b) <= 0.1``, a vector of
constraints) is bounded entry by entry, as its scalar form ``norm_inf(x - b) <= 0.1`` is.

CVXPY's ``violation()`` of a vector constraint is entrywise; the user's violation is the
largest entry's.  For a single unit-weight elementwise atom of an affine expression, entry
``i``'s epigraph rows ``t_i >= |a_i|``, ``t_i <= c_i`` carry the entry's violation with
coefficient one (docs/certificates.md, "Private data inside a nonlinear atom of a
constraint"); other vector forms are bounded entrywise in the user's terms.  Before, every
vector constraint was listed as unbounded: certified violation ``inf``, status
``user_limit`` even at epsilon 1e6 where the answer is exact.
"""

from __future__ import annotations

import warnings

import cvxpy as cp
import numpy as np
import pytest

import cvxdp
from cvxdp.solvers.perturbation.constraint_fit import detect_constraint_fits

N = 5


def _model(form: str, seed: int = 0):
    """``(problem, spec, exact optimum)``; ``min sum(x)`` (or ``-sum(x)``) over the private
    constraint, whose optimum is known in closed form (all but the design form)."""
    rng = np.random.default_rng(seed)
    b = cp.Parameter(N, name="b", value=np.linspace(0, 1, N) + 0.1 * rng.normal(size=N))
    x = cp.Variable(N, name="x")
    spec = cvxdp.ScalarPrivacy(b, 0.01)
    sense = cp.sum(x)
    if form == "norm_inf":
        con, opt = cp.norm(x - b, "inf") <= 0.1, b.value.sum() - 0.5
    elif form == "abs":
        con, opt = cp.abs(x - b) <= 0.1, b.value.sum() - 0.5
    elif form == "pos":
        con, opt = cp.pos(b - x) <= 0.1, b.value.sum() - 0.5
    elif form == "neg":
        con, opt = cp.neg(x - b) <= 0.1, b.value.sum() - 0.5
    elif form == "maximum":
        con, opt = cp.maximum(b - x, -0.3) <= 0.1, b.value.sum() - 0.5
    elif form == "abs_le_private":  # the private data affine, the atom public
        b.value = 1.0 + np.abs(b.value)
        con, opt, sense = cp.abs(x) <= b, -b.value.sum(), -cp.sum(x)
    elif form == "weighted_abs":  # weight 2: bounded in the user's terms
        con, opt = 2 * cp.abs(x - b) <= 0.2, b.value.sum() - 0.5
    elif form == "two_atoms":  # two private atoms per entry: the user's terms
        con, opt = cp.abs(x - b) + cp.pos(x - b) <= 0.1, b.value.sum() - 0.5
    elif form == "huber":  # quadratic for |a| <= 0.2: |x - b| <= 0.1
        con, opt = cp.huber(x - b, 0.2) <= 0.01, b.value.sum() - 0.5
    elif form == "square":  # not Lipschitz: its increment grows with |a(x^, y~)|
        con, opt = cp.square(x - b) <= 0.01, b.value.sum() - 0.5
    elif form == "broadcast_l1":  # an affine vector and a scalar norm1 term
        con, opt = b - x + 0.2 * cp.norm(x - b, 1) <= 0.1, None
    elif form == "design":  # ConstraintPrivacy: a private matrix in the atom
        A = cp.Parameter((N, N), name="A", value=2 * np.eye(N) + 0.1 * rng.normal(size=(N, N)))
        spec = cvxdp.ConstraintPrivacy(A, 0.01)
        con, opt = cp.abs(A @ x - 1) <= 0.1, None
    else:
        raise ValueError(form)
    box = [cp.abs(x) <= 2] if form == "design" else []  # public: the loosened copy's box
    prob = cp.Problem(cp.Minimize(sense), [con, *box])
    if opt is None:
        opt = cp.Problem(cp.Minimize(sense), [con, *box]).solve(solver=cp.CLARABEL)
    return prob, spec, float(opt)


def _solve(form: str, eps: float, seed: int):
    prob, spec, opt = _model(form, seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = prob.solve_private(epsilon=eps, delta=1e-6, private=spec, rng=seed)
    true_viol = float(np.max(prob.constraints[0].violation()))
    true_gap = float(prob.objective.expr.value) - opt
    return sol, true_viol, true_gap


FORMS = [
    "abs",
    "pos",
    "neg",
    "maximum",
    "abs_le_private",
    "weighted_abs",
    "two_atoms",
    "huber",
    "square",
    "broadcast_l1",
    "design",
]


def test_scalar_form_is_the_baseline():
    sol, viol, _ = _solve("norm_inf", 1e6, 0)
    assert sol.status == "optimal_inaccurate"
    assert viol <= sol.certificate.violation_bound + 1e-9 <= 1e-6


@pytest.mark.parametrize("form", FORMS)
def test_elementwise_form_is_certified_at_large_epsilon(form):
    sol, viol, gap = _solve(form, 1e6, 0)
    cert = sol.certificate
    assert np.isfinite(cert.violation_bound), cert.how
    assert viol <= cert.violation_bound + 1e-9
    assert cert.violation_bound <= 1e-4
    assert gap <= cert.gap_bound + 1e-7
    assert sol.status == "optimal_inaccurate", sol.status_reason


@pytest.mark.parametrize("form", FORMS)
def test_elementwise_certificate_holds_at_epsilon_10(form):
    for seed in (1, 2, 3):
        sol, viol, gap = _solve(form, 10.0, seed)
        cert = sol.certificate
        assert np.isfinite(cert.violation_bound), (seed, cert.how)
        assert viol <= cert.violation_bound + 1e-9, (seed, viol, cert.violation_bound)
        assert gap <= cert.gap_bound + 1e-7, (seed, gap, cert.gap_bound)


def _fits(*cons):
    rng = np.random.default_rng(0)
    y = cp.Parameter(4, name="y", value=rng.normal(size=4))
    A = cp.Parameter((4, 4), name="A", value=rng.normal(size=(4, 4)))
    x = cp.Variable(4, name="x")
    made = [c(x, y, A) for c in cons]
    return detect_constraint_fits(cp.Problem(cp.Minimize(cp.sum(x)), made), (y, A))


def test_which_vector_constraints_are_bounded_and_how():
    # one unit-weight elementwise atom of affine arguments, or affine private data: canonical
    assert (
        _fits(
            lambda x, y, A: cp.abs(x - y) <= 1,
            lambda x, y, A: cp.pos(y - x) <= 1,
            lambda x, y, A: cp.neg(x - y) <= 1,
            lambda x, y, A: cp.maximum(y - x, 2 * x - y, -1) <= 1,
            lambda x, y, A: cp.abs(x) <= y + 2,
            lambda x, y, A: cp.abs(A @ x - 1) <= 1,
            lambda x, y, A: cp.abs(x) + cp.max(x - y) <= 1,
        )
        is None
    )
    # weighted, huber, two atoms, a scalar norm broadcast, a square: bounded entrywise in the
    # user's terms
    cf = _fits(
        lambda x, y, A: cp.multiply(np.arange(1.0, 5.0), cp.abs(x - y)) <= 1,
        lambda x, y, A: cp.huber(x - y, 0.5) <= 1,
        lambda x, y, A: cp.abs(x - y) + cp.pos(x + y) <= 1,
        lambda x, y, A: cp.abs(x) + cp.norm(x - y, 1) <= 3,
        lambda x, y, A: cp.square(x - y) <= 1,
    )
    assert len(cf.entries) == 5 and not cf.fits and not cf.unbounded
    assert [len(e.rows) for e in cf.entries] == [1, 1, 2, 0, 1]
    assert [len(e.scalars) for e in cf.entries] == [0, 0, 0, 1, 0]
    assert cf.entries[4].rows[0][2] is not None  # the square keeps its residual
    np.testing.assert_allclose(cf.entries[0].rows[0][0], [1.0, 2.0, 3.0, 4.0])
    np.testing.assert_allclose(cf.entries[1].rows[0][0], 1.0)  # huber: 2 M
    # no shape covers these (not Lipschitz, a private matrix in a sum of atoms, a mixing
    # matrix):
    # listed, their violation unbounded
    for con in (
        lambda x, y, A: cp.exp(x - y) <= 2,
        lambda x, y, A: cp.abs(A @ x - 1) + cp.abs(x - y) <= 1,
        lambda x, y, A: np.ones((4, 4)) @ cp.abs(x - y) <= 1,
    ):
        cf = _fits(con)
        assert len(cf.unbounded) == 1 and not cf.entries
