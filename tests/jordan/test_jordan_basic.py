"""Basic, example-based checks of the EJA adapters (closed forms, shapes, batching, errors)."""

import numpy as np
import pytest
import scipy.linalg

from cvxdp.jordan import (
    SPIN_TRACE_FORM,
    Orthant,
    Product,
    SpinFactor,
    SymmetricMatrices,
)

ALGEBRAS = [
    Orthant(4),
    SpinFactor(5),
    SymmetricMatrices(4),
    Product([Orthant(2), SpinFactor(3), SpinFactor(3), SymmetricMatrices(3), SymmetricMatrices(2)]),
]


@pytest.mark.parametrize("J", ALGEBRAS, ids=repr)
def test_batched_ops_match_elementwise(J):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 3, J.dim))
    for op in (J.eigenvalues, J.exp, J.project, J.normalized_exp, J.trace,
               lambda v: J.norm(v, np.inf), lambda v: J.spectral_decomposition(v)[1]):
        batch = op(x)
        single = np.stack([np.stack([op(x[i, j]) for j in range(3)]) for i in range(2)])
        np.testing.assert_allclose(batch, single, atol=1e-12)
    assert J.eigenvalues(x).shape == (2, 3, J.rank)
    assert J.spectral_decomposition(x)[1].shape == (2, 3, J.rank, J.dim)
    assert J.random_normal(0, size=(2, 3)).shape == (2, 3, J.dim)


def test_spin_factor_closed_forms():
    J = SpinFactor(3)
    x = np.array([1.0, 3.0, 4.0])
    np.testing.assert_allclose(J.eigenvalues(x), [6.0, -4.0])
    assert J.trace(x) == 2.0
    assert SPIN_TRACE_FORM == 2.0
    np.testing.assert_allclose(J.gram, 2.0)
    # exp(x) = e^{x0} (cosh|xb|, sinh|xb| u)
    u = np.array([0.6, 0.8])
    np.testing.assert_allclose(J.exp(x), np.e * np.array([np.cosh(5), *(np.sinh(5) * u)]))
    # the Jordan product and its identity
    y = np.array([2.0, -1.0, 0.5])
    np.testing.assert_allclose(J.product(x, y), [2 - 3 + 2, 1 * -1 + 2 * 3, 0.5 + 2 * 4])
    np.testing.assert_allclose(J.identity(), [1, 0, 0])
    # norms: l1 = |6| + |-4|, l2 = sqrt(36 + 16) = sqrt(2) * |x|, inf = 6
    assert J.norm(x, 1) == pytest.approx(10.0)
    assert J.norm(x, 2) == pytest.approx(np.sqrt(52.0))
    assert J.norm(x, 2) == pytest.approx(np.sqrt(2) * np.linalg.norm(x))
    assert J.norm(x, "linf") == pytest.approx(6.0)
    # projection onto the Lorentz cone: the standard formula (t + |x|)/2 * (1, u)
    np.testing.assert_allclose(J.project(x), 3.0 * np.array([1.0, 0.6, 0.8]))
    assert not J.is_in_cone(x) and J.is_in_cone(J.project(x))
    # xbar = 0: frame is still a pair of primitive idempotents
    lam, F = J.spectral_decomposition(np.array([2.0, 0.0, 0.0]))
    np.testing.assert_allclose(lam, [2.0, 2.0])
    np.testing.assert_allclose(J.product(F[0], F[0]), F[0])
    np.testing.assert_allclose(J.product(F[0], F[1]), 0.0, atol=1e-15)


def test_symmetric_matrices_against_scipy():
    J = SymmetricMatrices(5)
    rng = np.random.default_rng(3)
    A = rng.standard_normal((5, 5))
    A = (A + A.T) / 2
    x = J.from_matrix(A)
    np.testing.assert_allclose(J.to_matrix(x), A)
    np.testing.assert_allclose(J.to_matrix(J.exp(x)), scipy.linalg.expm(A), rtol=1e-12)
    np.testing.assert_allclose(J.eigenvalues(x), np.linalg.eigvalsh(A), atol=1e-13)
    assert J.norm(x, 1) == pytest.approx(np.linalg.norm(A, "nuc"))
    assert J.norm(x, 2) == pytest.approx(np.linalg.norm(A, "fro"))
    assert J.norm(x, np.inf) == pytest.approx(np.linalg.norm(A, 2))
    assert J.trace(x) == pytest.approx(np.trace(A))
    B = rng.standard_normal((5, 5))
    B = B + B.T
    assert J.inner(x, J.from_matrix(B)) == pytest.approx(np.trace(A @ B))
    np.testing.assert_allclose(J.to_matrix(J.product(x, J.from_matrix(B))), (A @ B + B @ A) / 2)
    # svec order for r = 3: (0,0), (1,0), (2,0), (1,1), (2,1), (2,2), off-diagonals * sqrt 2
    M = np.array([[1.0, 2, 3], [2, 4, 5], [3, 5, 6]])
    s2 = np.sqrt(2)
    np.testing.assert_allclose(SymmetricMatrices(3).from_matrix(M), [1, 2 * s2, 3 * s2, 4, 5 * s2,
                                                                     6])


def test_normalized_exp_is_stable_and_a_distribution():
    P = Product([Orthant(3), SpinFactor(4), SymmetricMatrices(3)])
    rng = np.random.default_rng(0)
    y = 1e4 * rng.standard_normal(P.dim)  # exp(-y) alone would overflow
    p = P.normalized_exp(y)
    assert np.all(np.isfinite(p))
    assert P.trace(p) == pytest.approx(1.0)
    assert P.is_in_cone(p, tol=1e-12)
    # the same as exp(-y)/tr exp(-y) where that is representable
    y = rng.standard_normal(P.dim)
    e = P.exp(-y)
    np.testing.assert_allclose(p := P.normalized_exp(y), e / P.trace(e), atol=1e-14)
    assert P.norm(p, 1) == pytest.approx(1.0)
    # exp_shifted: exp(x) = e^s * shifted
    shifted, s = P.exp_shifted(-y)
    np.testing.assert_allclose(np.exp(s) * shifted, e, rtol=1e-12)


def test_product_layout():
    P = Product([Orthant(2), SpinFactor(3), Product([SymmetricMatrices(2), SpinFactor(3)])])
    assert len(P.blocks) == 4
    assert P.dim == 2 + 3 + 3 + 3 and P.rank == 2 + 2 + 2 + 2
    np.testing.assert_array_equal(P.offsets, [0, 2, 5, 8, 11])
    assert P.slices[1] == slice(2, 5)
    np.testing.assert_allclose(P.gram, [1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2])
    x = np.arange(P.dim, dtype=float)
    parts = P.split(x)
    np.testing.assert_array_equal(parts[2], [5, 6, 7])
    np.testing.assert_array_equal(P.join(parts), x)
    # blockwise eigenvalues and inf-norm = max over blocks
    lam = P.eigenvalues(x)
    for b, (J, s) in enumerate(zip(P.blocks, P.rank_slices, strict=True)):
        np.testing.assert_allclose(lam[s], J.eigenvalues(parts[b]))
    assert P.norm(x, np.inf) == pytest.approx(max(J.norm(v, np.inf) for J, v in
                                                  zip(P.blocks, parts, strict=True)))


def test_bad_inputs_rejected():
    with pytest.raises(ValueError, match="last axis of length dim=6"):
        SymmetricMatrices(3).exp(np.zeros(5))
    with pytest.raises(ValueError, match="interior of the cone"):
        SpinFactor(3).log(np.array([1.0, 2.0, 0.0]))
    with pytest.raises(ValueError, match="symmetric"):
        SymmetricMatrices(2).from_matrix(np.array([[1.0, 2.0], [0.0, 1.0]]))
    with pytest.raises(ValueError, match="norm order"):
        Orthant(2).norm(np.ones(2), 3)
    with pytest.raises(ValueError, match="k >= 2"):
        SpinFactor(1)
    with pytest.raises(TypeError, match="EuclideanJordanAlgebra"):
        Product([Orthant(2), "psd"])


def test_product_from_cone_dims_and_equality():
    P = Product.from_cone_dims(3, [3, 4], [2])
    assert P == Product([Orthant(3), SpinFactor(3), SpinFactor(4), SymmetricMatrices(2)])
    assert P != Product([SpinFactor(3), Orthant(3), SpinFactor(4), SymmetricMatrices(2)])
    assert P.dim == 3 + 3 + 4 + 3 and P.rank == 3 + 2 + 2 + 2
    big = Product([SpinFactor(3)] * 100_000)  # grouped: one numpy call per operation
    assert big.dim == 300_000 and len(big._groups) == 1
    x = big.random_normal(0)
    assert big.trace(big.normalized_exp(x)) == pytest.approx(1.0)
