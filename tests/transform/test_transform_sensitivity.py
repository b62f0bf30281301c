"""Sensitivity propagation: the derived bounds hold under random perturbations and are tight on
simple models; the norm inequalities behind ``constraint_inf`` hold."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest

from cvxdp.errors import PrivacySpecError
from cvxdp.specs import ConstraintPrivacy, ConstraintSetPrivacy, ObjectivePrivacy, ScalarPrivacy
from cvxdp.transform import to_scp


def _data(prob):
    scp = to_scp(prob)
    return scp.A.toarray(), scp.b.copy(), scp.c.copy(), scp.offset


def _perturb_and_check(prob, params, spec, rng, trials=40):
    """Every perturbation of `params` within the spec's sensitivity moves every canonical entry
    by at most its bound; returns the largest ratio actual / bound seen."""
    scp = to_scp(prob, private=spec)
    bounds = scp.sensitivity
    A0, b0, c0, d0 = _data(prob)
    base = [p.value.copy() for p in params]
    worst = 0.0
    for t in range(trials):
        for p, v in zip(params, base, strict=True):
            if t % 2:  # extreme points of the l-inf ball
                step = spec.sensitivity * rng.choice([-1.0, 1.0], size=v.shape)
            else:
                step = rng.uniform(-spec.sensitivity, spec.sensitivity, size=v.shape)
            p.value = v + step
        A1, b1, c1, d1 = _data(prob)
        dA, db, dc = np.abs(A1 - A0), np.abs(b1 - b0), np.abs(c1 - c0)
        bA = bounds.A.toarray()
        assert np.all(dA <= bA + 1e-12)
        assert np.all(db <= bounds.b + 1e-12)
        assert np.all(dc <= bounds.c + 1e-12)
        assert abs(d1 - d0) <= bounds.offset + 1e-12
        row_l1 = dA.sum(axis=1)
        assert np.all(row_l1 <= bounds.A_row_l1 + 1e-12)
        assert np.all(np.sqrt((dA**2).sum(axis=1)) <= bounds.A_row_l2 + 1e-12)
        assert np.all(dA.max(axis=1) <= bounds.A_row_inf + 1e-12)
        for got, bound in ((dA, bA), (db, bounds.b), (dc, bounds.c)):
            mask = bound > 0
            if mask.any():
                worst = max(worst, float((got[mask] / bound[mask]).max()))
    for p, v in zip(params, base, strict=True):
        p.value = v
    return scp, worst


def test_constraint_privacy_lp_bound_is_exact():
    rng = np.random.default_rng(0)
    A = cp.Parameter((5, 3), name="A")
    A.value = rng.uniform(0, 1, (5, 3))
    x = cp.Variable(3, nonneg=True)
    prob = cp.Problem(cp.Maximize(cp.sum(x)), [A @ x <= 1, cp.sum(x) <= 2])
    scp, worst = _perturb_and_check(prob, [A], ConstraintPrivacy(A, sensitivity=0.05), rng)
    assert worst == pytest.approx(1.0)  # sign perturbations reach the entrywise bound
    s = scp.sensitivity
    rows = s.private_rows()
    assert len(rows) == 5
    np.testing.assert_allclose(s.A_row_l1[rows], 3 * 0.05)
    np.testing.assert_allclose(s.A_row_inf[rows], 0.05)
    assert s.constraint_inf == pytest.approx(0.15)
    assert s.scalar_inf == 0 and s.objective_inf == 0
    assert s.settings == ("constraint",)


def test_constraint_privacy_through_soc_and_psd_rows():
    rng = np.random.default_rng(1)
    M = cp.Parameter((4, 3), name="M")
    M.value = rng.normal(size=(4, 3))
    F = cp.Parameter((3, 3), name="F")
    F.value = rng.normal(size=(3, 3))
    x = cp.Variable(3)
    prob = cp.Problem(
        cp.Minimize(cp.sum(x)),
        [cp.norm(M @ x + 1) <= 5, x[0] * (F + F.T) + 2 * M[0, 0] * x[1] * np.eye(3)
         + 10 * np.eye(3) >> 0, x >= -2],
    )
    spec = ConstraintPrivacy([M, F], sensitivity=0.01)
    scp, worst = _perturb_and_check(prob, [M, F], spec, rng)
    assert scp.dims.soc == (5,) and scp.dims.psd == (3,)
    assert 0.5 < worst <= 1.0 + 1e-9
    # PSD off-diagonal rows carry sqrt(2) * (F_ij + F_ji): bound 2 sqrt(2) * 0.01 on x[0]'s entry
    assert scp.sensitivity.A.max() == pytest.approx(2 * np.sqrt(2) * 0.01)


def test_scalar_and_objective_privacy_bounds():
    rng = np.random.default_rng(2)
    b = cp.Parameter(4, name="b")
    b.value = rng.uniform(1, 2, 4)
    c = cp.Parameter(3, name="c")
    c.value = rng.uniform(0, 1, 3)
    G = rng.uniform(0, 1, (4, 3))
    x = cp.Variable(3, nonneg=True)
    prob = cp.Problem(cp.Maximize(c @ x + 2 * cp.sum(c)), [G @ x <= b - 0.5 * b[0],
                                                         cp.norm(x - b[1:]) <= 3])
    scp, worst = _perturb_and_check(prob, [b], ScalarPrivacy(b, sensitivity=0.1), rng)
    assert worst == pytest.approx(1.0)
    # b[0] enters every row of G @ x <= b - b[0]/2: row 0 moves by 0.1 * 1/2, others 0.1 * 1.5
    assert scp.sensitivity.scalar_inf == pytest.approx(0.15)
    assert scp.sensitivity.A.nnz == 0
    scp, worst = _perturb_and_check(prob, [c], ObjectivePrivacy(c, sensitivity=0.2), rng)
    assert worst == pytest.approx(1.0)
    np.testing.assert_allclose(np.sort(scp.sensitivity.c)[-3:], 0.2)
    assert scp.sensitivity.offset == pytest.approx(3 * 2 * 0.2)
    assert scp.sensitivity.objective_l1 == pytest.approx(0.6)


def test_two_specs_add_up():
    rng = np.random.default_rng(3)
    A = cp.Parameter((2, 2), name="A")
    A.value = rng.uniform(size=(2, 2))
    b = cp.Parameter(2, name="b")
    b.value = np.ones(2)
    x = cp.Variable(2, nonneg=True)
    prob = cp.Problem(cp.Maximize(cp.sum(x)), [A @ x <= b])
    scp = to_scp(prob, private=[ConstraintPrivacy(A, sensitivity=0.1),
                                ScalarPrivacy(b, sensitivity=0.3)])
    s = scp.sensitivity
    assert s.settings == ("constraint", "scalar")
    assert s.constraint_inf == pytest.approx(0.2) and s.scalar_inf == pytest.approx(0.3)


def test_constraint_set_rows_are_the_constraints_rows():
    rng = np.random.default_rng(4)
    Adata = rng.uniform(0, 1, (6, 3))
    x = cp.Variable(3, nonneg=True)
    cover = Adata @ x >= 1
    prob = cp.Problem(cp.Minimize(cp.sum(x)), [cp.sum(x) <= 10, cover, x <= 5])
    scp = to_scp(prob, private=ConstraintSetPrivacy(cover))
    rows = scp.sensitivity.rows
    assert len(rows) == 6
    assert np.all((rows >= scp.dims.zero) & (rows < scp.dims.zero + scp.dims.nonneg))
    # CVXPY writes A x >= 1 as s = -1 + A x >= 0, i.e. SCS rows (-A, -1)
    np.testing.assert_allclose(scp.A[rows].toarray(), -Adata)
    np.testing.assert_allclose(scp.b[rows], -1.0)
    np.testing.assert_array_equal(scp.sensitivity.private_rows(), rows)


def test_spectral_norm_of_a_row_change_is_at_most_its_l1():
    """The inequalities the docstring uses for `constraint_inf`, in SCS's stored coordinates."""
    rng = np.random.default_rng(5)
    for _ in range(200):
        k = int(rng.integers(2, 8))
        z = rng.normal(size=k) * rng.exponential(size=k)
        # spin factor (stored raw): eigenvalues z0 +- ||zbar||
        spin = abs(z[0]) + np.linalg.norm(z[1:])
        assert spin <= np.abs(z).sum() + 1e-12
        # symmetric matrices in scaled svec: ||Z||_op <= ||svec Z||_1
        r = int(rng.integers(1, 6))
        v = rng.normal(size=r * (r + 1) // 2)
        Z, t = np.zeros((r, r)), 0
        for j in range(r):
            for i in range(j, r):
                Z[i, j] = Z[j, i] = v[t] / (1.0 if i == j else np.sqrt(2))
                t += 1
        assert np.abs(np.linalg.eigvalsh(Z)).max() <= np.abs(v).sum() + 1e-12
        # CVXPY's unscaled upper-triangle coordinates g of a symmetric variable: the functional
        # g'x is <a, X> with a_ii = g_ii and a_ij = a_ji = g_ij / 2
        g = rng.normal(size=r * (r + 1) // 2)
        a = np.zeros((r, r))
        iu = np.triu_indices(r)
        a[iu] = np.where(iu[0] == iu[1], g, g / 2)
        a = a + np.triu(a, 1).T
        assert np.abs(np.linalg.eigvalsh(a)).max() <= np.abs(g).sum() + 1e-12


def test_constraint_set_privacy_gets_the_placement_check():
    """Issue 21 item 14: the parameters of the private constraint may enter only that
    constraint's rows (paper 002 Def B.1 keeps the objective and other constraints public);
    ConstraintPrivacy refused the same model, ConstraintSetPrivacy did not look."""
    m, n = 6, 3
    A = cp.Parameter((m, n), name="A", value=np.random.default_rng(4).uniform(0, 1, (m, n)))
    x = cp.Variable(n, nonneg=True)
    cover = A @ x >= 1
    in_objective = cp.Problem(cp.Minimize((1 + cp.sum(A, axis=0) / m) @ x), [cover])
    with pytest.raises(PrivacySpecError, match="ConstraintSetPrivacy.*enters the objective"):
        to_scp(in_objective, private=ConstraintSetPrivacy(cover))
    in_offset = cp.Problem(cp.Minimize(cp.sum(x) + cp.sum(A) / m), [cover])
    with pytest.raises(PrivacySpecError, match="ConstraintSetPrivacy.*objective's constant"):
        to_scp(in_offset, private=ConstraintSetPrivacy(cover))
    elsewhere = cp.Problem(cp.Minimize(cp.sum(x)), [cover, cp.sum(A, axis=0) @ x <= 50])
    with pytest.raises(PrivacySpecError, match="ConstraintSetPrivacy.*another constraint"):
        to_scp(elsewhere, private=ConstraintSetPrivacy(cover))
    # only in its own rows: accepted
    fine = cp.Problem(cp.Minimize(cp.sum(x)), [cover, x <= 5])
    assert len(to_scp(fine, private=ConstraintSetPrivacy(cover)).sensitivity.rows) == m
