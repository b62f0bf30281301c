"""Covering data outside the public domain: projected into it, never refused (issue 21 item 4).

A refusal ("largest is 7.598") is a deterministic function of the private rows: it leaks one
bit, and its message printed a private value.  The private path projects every row into the
public domain (LP entries into ``[0, 1]``, SDP spectra into ``[0, 1]``, spin-factor eigenvalues
into ``[0, 1]``) inside the mechanism, and releases the number of projected rows only as a noisy
count charged to the budget (``count_clipped=``).
"""

import cvxpy as cp
import numpy as np
import pytest

import cvxdp
from cvxdp.solvers.covering.covering import (
    covering_socp,
    random_covering_lp,
    random_covering_sdp,
    random_covering_socp,
)
from cvxdp.solvers.covering.covering_model import solve_covering_private

KW = dict(epsilon=4.0, delta=1e-6, s=20, rng=3)


def _spin_project(a):
    """Independent projection of spin-factor elements onto {0 <= lambda_1,2 <= 1}."""
    nb = np.linalg.norm(a[:, 1:], axis=1)
    l1 = np.clip(a[:, 0] + nb, 0, 1)
    l2 = np.clip(a[:, 0] - nb, 0, 1)
    u = a[:, 1:] / np.where(nb > 0, nb, 1.0)[:, None]
    return np.column_stack([(l1 + l2) / 2, ((l1 - l2) / 2)[:, None] * u])


def test_lp_entries_above_the_bound_are_clipped_not_refused():
    A = random_covering_lp(200, 8, rng=0)
    A[17, 3] = 7.598  # one person's row breaks the public bound 1
    A[40, 1] = -0.25  # and one is negative
    sol = cvxdp.covering_lp(A).solve_private(**KW)  # before: PrivacySpecError 'largest is 7.598'
    clipped = cvxdp.covering_lp(np.clip(A, 0.0, 1.0)).solve_private(**KW)
    assert sol.value == clipped.value
    np.testing.assert_allclose(sol.point, clipped.point, rtol=1e-12, atol=0)


def test_lp_non_finite_entries_are_zeroed_not_refused():
    A = random_covering_lp(200, 8, rng=0)
    A[5, 2], A[9, 0] = np.nan, np.inf
    sol = cvxdp.covering_lp(A).solve_private(**KW)  # before: UnsupportedProblemError 'NaN'
    B = A.copy()
    B[5, 2], B[9, 0] = 0.0, 1.0
    ref = cvxdp.covering_lp(B).solve_private(**KW)
    assert sol.value == ref.value and np.all(np.isfinite(sol.point))
    np.testing.assert_allclose(sol.point, ref.point, rtol=1e-12, atol=0)


def test_sdp_spectrum_is_projected_into_the_unit_interval():
    M = random_covering_sdp(150, 3, rng=1)
    M[:10] *= 2.5  # spectral norm 2.5 > 1 on ten rows
    M[10] = -M[10]  # one row not PSD
    sol = cvxdp.covering_sdp(M).solve_private(**KW)  # before: PrivacySpecError
    lam, V = np.linalg.eigh(M)
    P = np.einsum("mij,mj,mkj->mik", V, np.clip(lam, 0, 1), V)
    ref = cvxdp.covering_sdp(P).solve_private(**KW)
    assert sol.value == ref.value
    np.testing.assert_allclose(sol.point, ref.point, rtol=1e-9, atol=1e-12)


def test_spin_factor_eigenvalues_are_projected():
    a = random_covering_socp(200, 4, rng=2)
    a[:6] *= 3.0  # lambda_max = 3 > 1
    a[7, 0] = 0.0  # outside the second-order cone
    sol = covering_socp(a).solve_private(**KW)  # before: PrivacySpecError
    ref = covering_socp(_spin_project(a)).solve_private(**KW)
    assert sol.value == ref.value
    np.testing.assert_allclose(sol.point, ref.point, rtol=1e-9, atol=1e-12)


def test_model_rows_above_the_bound_after_normalisation_are_clipped():
    A = random_covering_lp(100, 4, rng=0)
    x = cp.Variable(4, nonneg=True)
    con = A @ x >= 0.1  # rows / b reach 10 > 1
    prob = cp.Problem(cp.Minimize(cp.sum(x)), [con])
    sol = solve_covering_private(prob, con, **KW)  # before: 'largest is ...'
    x2 = cp.Variable(4, nonneg=True)
    con2 = np.clip(A / 0.1, 0, 1) @ x2 >= 1
    ref = solve_covering_private(cp.Problem(cp.Minimize(cp.sum(x2)), [con2]), con2, **KW)
    assert sol.value == ref.value
    np.testing.assert_allclose(x.value, x2.value, rtol=1e-12, atol=0)


def test_model_rows_with_private_non_positive_b_are_dropped_not_refused():
    """A row ``a_i x >= b_i`` with ``b_i <= 0`` (and ``a_i >= 0``) holds for every ``x >= 0``;
    ``b`` belongs to the private rows, so its sign must not decide a refusal."""
    A = random_covering_lp(100, 4, rng=0)
    b = np.ones(100)
    b[[3, 50]] = [-1.0, 0.0]
    x = cp.Variable(4, nonneg=True)
    con = A @ x >= b
    sol = solve_covering_private(cp.Problem(cp.Minimize(cp.sum(x)), [con]), con, **KW)
    keep = b > 0
    x2 = cp.Variable(4, nonneg=True)
    con2 = A[keep] @ x2 >= 1
    ref = solve_covering_private(cp.Problem(cp.Minimize(cp.sum(x2)), [con2]), con2, **KW)
    assert sol.value == ref.value


def test_noisy_clipped_count_is_opt_in_and_charged_to_the_budget():
    A = random_covering_lp(300, 8, rng=4)
    A[:12] *= 3.0  # 12 rows leave [0, 1]
    true = int(np.sum(A.max(axis=1) > 1))
    prob = cvxdp.covering_lp(A)
    plain = prob.solve_private(epsilon=4.0, delta=1e-6, s=20, rng=0)
    assert not any("clipped" in k for k in plain.info)
    assert "projected into the public domain" in plain.info["domain"]  # what accuracy refers to
    assert [r.mechanism for r in plain.privacy.records] == ["exponential", "exponential"]
    sol = prob.solve_private(epsilon=4.0, delta=1e-6, s=20, rng=0, count_clipped=True)
    assert sol.privacy.epsilon <= 4.0 * (1 + 1e-9)
    rec = [r for r in sol.privacy.records if "clipped" in str(r.params.get("note", ""))]
    assert len(rec) == 1 and rec[0].mechanism == "gaussian"
    sigma = rec[0].params["sigma"]
    assert sol.info["sigma_count"] == pytest.approx(sigma, rel=1e-12)
    # the count's share: 10% of the zCDP budget the (eps, delta) target converts to
    from cvxdp.privacy.budgets import zcdp_from_approx

    rho = zcdp_from_approx(4.0, 1e-6)
    assert rec[0].zcdp.rho == pytest.approx(0.1 * rho, rel=1e-8)
    assert abs(sol.info["clipped_rows_noisy"] - true) < 4 * sigma
    # pure DP: Laplace with the same share of epsilon
    pure = prob.solve_private(epsilon=4.0, s=20, rng=0, count_clipped=True)
    lap = [r for r in pure.privacy.records if r.mechanism == "laplace"]
    assert len(lap) == 1 and lap[0].params["scale"] == pytest.approx(1 / 0.4, rel=1e-12)
    assert pure.privacy.epsilon <= 4.0 * (1 + 1e-9)


def test_no_covering_message_carries_a_private_value():
    """Audit: every error the private covering path can raise on out-of-domain rows is gone, so
    in particular no message prints a statistic of the rows (the old ones printed the largest
    entry / eigenvalue)."""
    for build, data in ((cvxdp.covering_lp, 7.598 * random_covering_lp(30, 3, rng=0)),
                        (cvxdp.covering_sdp, 7.598 * random_covering_sdp(30, 3, rng=0)),
                        (covering_socp, 7.598 * random_covering_socp(30, 3, rng=0))):
        sol = build(data).solve_private(epsilon=1.0, delta=1e-6, rng=0)
        assert "7.598" not in repr(sol) and "7.598" not in repr(sol.info)


def test_messages_name_the_private_constraint_without_printing_its_rows():
    """Audit of the covering path's messages: a constraint's text shows its numeric data, so
    refusals and the spec's description name it by position / type / id only."""
    A = np.array([[0.37, 0.58, 0.73], [0.91, 0.26, 0.44], [0.62, 0.19, 0.83]])
    digits = [f"{v:.2f}" for v in A.ravel()]  # how CVXPY prints them: '0.37', ...
    x = cp.Variable(3, nonneg=True)
    con = A @ x >= 1
    spec = cvxdp.ConstraintSetPrivacy(con)
    assert not any(d in spec.describe() for d in digits)
    extra = x <= A[0]  # a public constraint with data, refused as not x >= 0
    prob = cp.Problem(cp.Minimize(cp.sum(x)), [con, extra])
    with pytest.raises(cvxdp.UnsupportedProblemError) as err:
        solve_covering_private(prob, spec, epsilon=1.0)
    assert "constraint 1 of problem.constraints" in str(err.value)
    assert not any(d in str(err.value) for d in digits)
    with pytest.raises(cvxdp.PrivacySpecError) as err:
        cvxdp.ConstraintSetPrivacy(cp.square(A[0] @ x) <= 1)
    assert not any(d in str(err.value) for d in digits[:3])


def test_nonlinear_objective_is_refused_as_structure():
    """A non-linear objective evaluated at basis points looked linear (sum_squares at e_j is 1)
    and was accepted as the cost vector 1."""
    A = random_covering_lp(50, 3, rng=0)
    x = cp.Variable(3, nonneg=True)
    con = 1 - A @ x <= 0
    quad = cp.Problem(cp.Minimize(cp.sum_squares(x)), [con])  # not a covering objective
    with pytest.raises(cvxdp.UnsupportedProblemError, match="linear"):
        solve_covering_private(quad, con, **KW)
