"""Hypothesis property tests of the EJA adapters: the algebra's identities and its numerics."""

import numpy as np
import pytest
import scipy.linalg
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from cvxdp.jordan import Orthant, Product, SpinFactor, SymmetricMatrices

ALGEBRAS = [
    Orthant(3),
    SpinFactor(2),
    SpinFactor(4),
    SymmetricMatrices(1),
    SymmetricMatrices(3),
    Product([Orthant(2), SpinFactor(3), SymmetricMatrices(2), SpinFactor(3)]),
]
IDS = [repr(J) for J in ALGEBRAS]
# derandomize: a fixed example sequence, so the suite cannot flake between runs
SETTINGS = settings(max_examples=30, deadline=None, derandomize=True)
finite = st.floats(-5, 5, allow_nan=False, allow_infinity=False, width=64)


def elements(J, n=1):
    return hnp.arrays(np.float64, (n, J.dim), elements=finite)


def close(a, b, scale=1.0, rtol=1e-9):
    np.testing.assert_allclose(a, b, atol=rtol * max(1.0, scale), rtol=rtol)


@pytest.mark.parametrize("J", ALGEBRAS, ids=IDS)
@SETTINGS
@given(data=st.data())
def test_jordan_identity_and_commutativity(J, data):
    x, y = data.draw(elements(J, 2))
    xx = J.product(x, x)
    lhs = J.product(J.product(x, y), xx)
    rhs = J.product(x, J.product(y, xx))
    close(lhs, rhs, scale=float(np.max(np.abs(x))) ** 3 * float(np.max(np.abs(y)) + 1) * J.dim)
    close(J.product(x, y), J.product(y, x))
    close(J.product(J.identity(), x), x)


@pytest.mark.parametrize("J", ALGEBRAS, ids=IDS)
@SETTINGS
@given(data=st.data())
def test_inner_is_trace_of_product_and_phi_is_an_isometry(J, data):
    x, y = data.draw(elements(J, 2))
    scale = 25.0 * J.dim
    close(J.inner(x, y), J.trace(J.product(x, y)), scale)
    close(J.inner(x, y), J.phi(x) @ J.phi(y), scale)
    close(J.phi_inv(J.phi(x)), x)
    close(J.norm(x, 2), np.linalg.norm(J.phi(x)), 5.0 * J.dim)
    close(J.trace(x), J.inner(J.identity(), x), 5.0 * J.dim)
    assert J.trace(J.identity()) == pytest.approx(J.rank)


@pytest.mark.parametrize("J", ALGEBRAS, ids=IDS)
@SETTINGS
@given(data=st.data())
def test_spectral_recomposition_and_jordan_frame(J, data):
    (x,) = data.draw(elements(J))
    lam, F = J.spectral_decomposition(x)
    close(lam @ F, x, 5.0 * J.dim)
    close(J.trace(x), lam.sum(), 5.0 * J.dim)
    # a Jordan frame: orthogonal primitive idempotents of trace 1 summing to e
    close(F.sum(axis=0), J.identity())
    close(J.trace(F), np.ones(J.rank))
    prods = J.product(F[:, None, :], F[None, :, :])  # (rank, rank, dim)
    expected = np.eye(J.rank)[:, :, None] * F[:, None, :]
    close(prods, expected)


@pytest.mark.parametrize("J", ALGEBRAS, ids=IDS)
@SETTINGS
@given(data=st.data())
def test_exp_log_and_normalized_exp(J, data):
    (z,) = data.draw(elements(J))
    x = J.project(z) + 0.5 * J.identity()  # interior point, eigenvalues >= 0.5
    close(J.exp(J.log(x)), x, 10.0 * J.dim)
    w = 0.25 * z  # keep exp(w) well conditioned so log can recover w to 1e-8
    close(J.log(J.exp(w)), w, 10.0, rtol=1e-8)
    p = J.normalized_exp(z)
    e = J.exp(-z)
    close(p, e / J.trace(e))
    assert J.trace(p) == pytest.approx(1.0)
    assert J.is_in_cone(p, tol=1e-12)
    close(J.normalized_exp(z + 7.0 * J.identity()), p)  # invariant to shifts by c e
    # exp is a spectral function: same frame, eigenvalues exponentiated
    close(np.sort(J.eigenvalues(J.exp(z))), np.sort(np.exp(J.eigenvalues(z))), 1e3, rtol=1e-8)


@pytest.mark.parametrize("J", ALGEBRAS, ids=IDS)
@SETTINGS
@given(data=st.data())
def test_norm_chain_and_hoelder(J, data):
    x, y = data.draw(elements(J, 2))
    n1, n2, ninf = J.norm(x, 1), J.norm(x, 2), J.norm(x, np.inf)
    tol = 1e-9 * (1 + n1)
    assert ninf <= n2 + tol and n2 <= n1 + tol
    assert n1 <= np.sqrt(J.rank) * n2 + tol and n2 <= np.sqrt(J.rank) * ninf + tol
    assert abs(J.inner(x, y)) <= n1 * J.norm(y, np.inf) + 1e-9 * (1 + n1) * (1 + J.norm(y, 1))
    lam = J.eigenvalues(x)
    close([n1, n2, ninf], [np.abs(lam).sum(), np.linalg.norm(lam), np.abs(lam).max()], 10 * J.dim)


@pytest.mark.parametrize("J", ALGEBRAS, ids=IDS)
@SETTINGS
@given(data=st.data())
def test_projection_is_the_nearest_cone_point(J, data):
    x, w = data.draw(elements(J, 2))
    p = J.project(x)
    assert J.is_in_cone(p, tol=1e-9)
    close(J.product(p, p - x), np.zeros(J.dim), 50.0 * J.dim)  # complementarity p o (p - x) = 0
    # variational inequality <x - p, y - p> <= 0 for every y in the cone
    y = J.project(w)
    assert J.inner(x - p, y - p) <= 1e-9 * (1 + 25.0 * J.dim)
    close(J.project(p), p)


@SETTINGS
@given(hnp.arrays(np.float64, (4, 4), elements=finite))
def test_symmetric_matrices_against_numpy_and_scipy(A):
    J = SymmetricMatrices(4)
    A = (A + A.T) / 2
    x = J.from_matrix(A)
    close(J.to_matrix(x), A)
    close(J.to_matrix(J.exp(x)), scipy.linalg.expm(A), float(np.exp(np.abs(A).sum())), rtol=1e-9)
    w, U = np.linalg.eigh(A)
    close(J.eigenvalues(x), w, 10.0)
    close(J.to_matrix(J.project(x)), (U * np.maximum(w, 0)) @ U.T, 10.0)
    close([J.norm(x, 1), J.norm(x, 2), J.norm(x, np.inf)],
          [np.linalg.norm(A, "nuc"), np.linalg.norm(A, "fro"), np.linalg.norm(A, 2)], 10.0)
    B = J.to_matrix(J.normalized_exp(x))
    E = scipy.linalg.expm(-A)
    close(B, E / np.trace(E))


@SETTINGS
@given(hnp.arrays(np.float64, (5,), elements=finite))
def test_spin_factor_closed_forms(x):
    J = SpinFactor(5)
    x0, xb = x[0], x[1:]
    nrm = np.linalg.norm(xb)
    close(J.eigenvalues(x), [x0 + nrm, x0 - nrm])
    u = xb / nrm if nrm > 0 else np.zeros(4)
    close(J.exp(x), np.exp(x0) * np.concatenate([[np.cosh(nrm)], np.sinh(nrm) * u]), 1e4)
    # Euclidean projection onto {t >= |x|} (the SOCP textbook formula)
    if nrm <= x0:
        expected = x
    elif nrm <= -x0:
        expected = np.zeros(5)
    else:
        expected = 0.5 * (x0 + nrm) * np.concatenate([[1.0], u])
    close(J.project(x), expected, 10.0)
    close(J.norm(x, 2), np.sqrt(2) * np.linalg.norm(x), 10.0)
    close(J.norm(x, np.inf), abs(x0) + nrm, 10.0)


@SETTINGS
@given(hnp.arrays(np.float64, (9,), elements=finite))
def test_product_is_blockwise(x):
    P = Product([Orthant(2), SpinFactor(3), SymmetricMatrices(2), Orthant(1)])
    parts = P.split(x)
    for f in ("exp", "project", "product_self"):
        got = P.split(P.product(x, x) if f == "product_self" else getattr(P, f)(x))
        for J, v, g in zip(P.blocks, parts, got, strict=True):
            want = J.product(v, v) if f == "product_self" else getattr(J, f)(v)
            close(g, want, 1e3)
    assert P.norm(x, np.inf) == pytest.approx(max(J.norm(v, np.inf) for J, v in
                                                  zip(P.blocks, parts, strict=True)))
    assert P.trace(x) == pytest.approx(sum(J.trace(v) for J, v in
                                           zip(P.blocks, parts, strict=True)))
