"""A Lipschitz fit term of a private design (``norm1(A @ x - b)`` with a private ``A``) is
certified by the noise matrix's l1 -> l1 norm, column by column, over the rows jointly
(fit_term._bilinear_l1_bounds; docs/certificates.md, "Lipschitz fit terms of a private
design"), not by one tail bound per row."""

from __future__ import annotations

import cvxpy as cp
import numpy as np

import cvxdp
from cvxdp.solvers.perturbation.fit_detect import detect_fit_terms


def test_lad_private_design_certificate_sums_the_rows_jointly(exact_value, lad_private_design):
    # reproducer (trial 14's lad_private_A): certified relative gap 0.0041 at epsilon 1e6 and
    # 0.43 at 1e4 against true gaps 6.8e-6 and 2e-3: each of the 200 rows' error |e_i' x| was
    # bounded by its own tail (B_u ||x||, B_u at failure beta / 400) twice, in the tightening
    # and in the loosening, where their sum concentrates
    prob, spec = lad_private_design()
    opt = exact_value(prob)
    for eps, most in ((1e6, 0.002), (1e4, 0.2)):
        sol = prob.solve_private(epsilon=eps, delta=1e-6, rng=0, private=spec)
        c = sol.certificate
        assert c.relative_gap_bound <= most
        assert c.optimum_lower <= opt + 1e-7
        assert float(prob.objective.value) <= c.objective_upper + 1e-7


def test_bound_holds_on_seeded_runs(exact_value, lad_private_design):
    # a smaller LAD where the noise matters (epsilon 300 and 3e3): every certificate holds
    prob, spec = lad_private_design(m=60, n=5, seed=3)
    opt = exact_value(prob)
    for eps in (300.0, 3e3):
        for seed in range(4):
            sol = prob.solve_private(epsilon=eps, delta=1e-6, rng=seed, private=spec)
            c = sol.certificate
            f = float(prob.objective.value)
            assert c.optimum_lower <= opt + 1e-7
            assert f <= c.objective_upper + 1e-7
            assert f - opt <= c.gap_bound + 1e-7


def test_detected_only_alone():
    # an l1 loss of a bilinear argument is the pattern when it is the only kind of private
    # term (fit_term._bilinear_l1_bounds certifies that case alone)
    y, x = cp.Parameter(6, name="y", value=np.ones(6)), cp.Variable(6)
    alone = detect_fit_terms(cp.Problem(cp.Minimize(cp.norm1(cp.multiply(y, x) - 1))), (y,))
    assert [t.kind for t in alone.terms] == ["bilinear_l1"]
    mixed = cp.Problem(cp.Minimize(cp.norm1(cp.multiply(y, x) - 1) + cp.sum_squares(x - y)))
    assert detect_fit_terms(mixed, (y,)) is None


def test_entry_box_in_one_session_matches_the_sets_extents():
    # the lower bound's boxes come from one compile and one solver session (each coordinate's
    # column traced through CVXPY's inverse chain): the extents of a known set, x in the
    # l-infinity ball of radius 5 with x_0 + x_1 <= 2, and a nonneg 2 x 2 matrix with sum <= 3
    from cvxdp.solvers.perturbation.fit_term import _entry_box, _entry_box_session

    x = cp.Variable(3)
    Y = cp.Variable((2, 2), nonneg=True)
    cons = [cp.norm(x, "inf") <= 5, x[0] + x[1] <= 2, cp.sum(Y) <= 3]
    box = _entry_box_session(cons, [x, Y], 7)
    assert box is not None
    lo, hi = box
    np.testing.assert_allclose(lo, [-5, -5, -5, 0, 0, 0, 0], atol=1e-4)
    np.testing.assert_allclose(hi, [5, 5, 5, 3, 3, 3, 3], atol=1e-4)
    assert np.all(lo <= [-5, -5, -5, 0, 0, 0, 0]) and np.all(hi >= [5, 5, 5, 3, 3, 3, 3])
    # the per-coordinate CVXPY solves (the fallback) give the same box
    c = cp.Parameter(7)
    xs = cp.hstack([x, cp.vec(Y, order="F")])
    prob = cp.Problem(cp.Minimize(c @ xs), cons)
    lo2, hi2 = _entry_box(prob, c, 7, [], [x, Y])  # no constraints given: the fallback
    np.testing.assert_allclose(lo2, lo, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(hi2, hi, rtol=1e-6, atol=1e-6)


def test_entry_box_session_leaves_an_unbounded_entry_open():
    x = cp.Variable(2)
    lo, hi = _session_box([x[0] <= 1, x[0] >= -2, x[1] >= 0], [x], 2)
    np.testing.assert_allclose([lo[0], hi[0], lo[1]], [-2, 1, 0], atol=1e-4)
    assert hi[1] == np.inf


def _session_box(cons, xvars, n):
    from cvxdp.solvers.perturbation.fit_term import _entry_box_session

    box = _entry_box_session(cons, xvars, n)
    assert box is not None
    return box


def _hinge_svm():
    """Held-out trial 17: a soft-margin SVM with private soft labels and a free intercept."""
    rng = np.random.default_rng(302)
    m, n = 150, 4
    X = rng.normal(size=(m, n))
    y = cp.Parameter(m, name="y", value=np.clip(np.tanh(X @ np.array([1, -1, 0.5, 0.2])), -1, 1))
    w, b = cp.Variable(n, name="w"), cp.Variable(name="b")
    prob = cp.Problem(cp.Minimize(cp.sum(cp.pos(1 - cp.multiply(y, X @ w + b))) / m
                                  + 0.1 * cp.sum_squares(w)))
    return prob, y


def test_a_free_intercept_is_boxed_by_the_level_sets_faces():
    """The hinge loss is a Lipschitz loss of a bilinear residual; its lower bound needs a box
    holding a minimiser, and no public constraint bounds the intercept ``b``: relative gap
    bound 0.60 at epsilon 1e6 (true 3e-8).  The convex level set ``{f <= U}`` holds the
    released point and the minimiser; where the lower model exceeds ``U`` on the faces ``b =
    b^ +- R`` of a box around the point, that box holds the level set."""
    prob, y = _hinge_svm()
    exact = cp.Problem(prob.objective, prob.constraints).solve(solver=cp.CLARABEL)
    sol = prob.solve_private(epsilon=1e6, delta=1e-6, rng=0,
                             private=cvxdp.ConstraintPrivacy(y, sensitivity=0.02))
    true = float(prob.objective.value)
    cert = sol.certificate
    assert cert.optimum_lower <= exact + 1e-7
    assert true - exact <= cert.gap_bound
    assert cert.relative_gap_bound <= 1e-2
