"""John ellipsoid: exact SOC+PSD reference, log_det check, fixed-point and sketched methods."""

import math

import cvxpy as cp
import numpy as np
import pytest

from cvxdp.errors import UnsupportedProblemError
from cvxdp.geometry.john.john import Ellipsoid, john_ellipsoid
from cvxdp.geometry.john.john_iter import iterations_for, leverage_ratios


def _polytope(seed, n, d):
    rng = np.random.default_rng(seed)
    # Gaussian rows of varying norm (unit rows make the unit ball the trivial answer)
    return rng.standard_normal((n, d)) / math.sqrt(d)


@pytest.fixture(scope="module")
def solved():
    A = _polytope(0, 200, 4)
    prob = john_ellipsoid(A)
    prob.solve(solver="CLARABEL")
    return A, prob.ellipsoid


def test_cube_john_ellipsoid_is_the_unit_ball():
    d = 3
    prob = john_ellipsoid(np.vstack([np.eye(d), -np.eye(d), 0.5 * np.eye(d)]))
    prob.solve(solver="CLARABEL")
    assert np.allclose(prob.ellipsoid.matrix, np.eye(d), atol=1e-5)
    assert prob.ellipsoid.log_volume == pytest.approx(math.log(4 * math.pi / 3), abs=1e-5)


def test_box_with_axis_scales():
    s = np.array([1.0, 2.0, 5.0])
    prob = john_ellipsoid(np.diag(s))  # P = {|s_i x_i| <= 1}: John ellipsoid Q = diag(s^2)
    prob.solve(solver="CLARABEL")
    assert np.allclose(prob.ellipsoid.matrix, np.diag(s**2), rtol=1e-5, atol=1e-5)
    assert np.allclose(prob.ellipsoid.weights, 1.0, atol=1e-4)


def test_exact_is_inscribed_and_optimal(solved):
    A, E = solved
    n, d = A.shape
    ratios = E.support_ratios(A)
    assert ratios.max() <= 1 + 1e-6                          # a_i' Q^{-1} a_i <= 1
    assert E.inscribed_in(A)
    w = E.weights
    assert w.min() >= 0 and w.sum() == pytest.approx(d, rel=1e-9)
    assert np.allclose(E.matrix, (A.T * w) @ A, atol=1e-4)  # Q = A'WA
    h = leverage_ratios(A, w)
    assert h.max() <= 1 + 1e-4                                # Lemma 3.3: h_i <= 1 ...
    assert np.all(h[w > 1e-3] >= 1 - 1e-4)                   # ... with equality on the support
    assert np.sum(w > 1e-3) <= d * (d + 1) // 2


def test_scs_and_logdet_exp_cone_agree(solved):
    A, E = solved
    prob = john_ellipsoid(A)
    prob.solve(solver="SCS", eps=1e-8)
    assert prob.ellipsoid.log_volume == pytest.approx(E.log_volume, abs=1e-4)
    X = cp.Variable((A.shape[1],) * 2, PSD=True)
    ld = cp.Problem(cp.Maximize(cp.log_det(X)), [cp.norm(A @ X, 2, axis=1) <= 1])
    ld.solve(solver="CLARABEL")
    # vol(E) = vol(ball) det(X) = vol(ball) det(Q)^{-1/2}
    assert ld.value == pytest.approx(-0.5 * np.linalg.slogdet(E.matrix)[1], abs=1e-5)


@pytest.mark.parametrize("xi", [0.05, 0.2])
def test_fixed_point_reaches_accuracy(solved, xi):
    A, E = solved
    prob = john_ellipsoid(A)
    prob.solve(method="fixed-point", accuracy=xi)
    F = prob.ellipsoid
    assert prob._fast_info["iterations"] == iterations_for(*A.shape, xi)
    assert F.weights.sum() == pytest.approx(A.shape[1], rel=1e-9)
    hmax = F.support_ratios(A).max()
    assert hmax <= 1 + xi                                     # Lemma 7.1 (telescoping)
    inside = F.scaled(1 / math.sqrt(hmax))
    assert inside.inscribed_in(A)
    assert inside.volume_ratio(E) >= 1 / (1 + xi)
    assert inside.volume_ratio(E) <= 1 + 1e-6                 # cannot beat the John ellipsoid


@pytest.mark.parametrize("sketch", [None, 6])
def test_sketched_reaches_accuracy(sketch):
    A = _polytope(1, 2000, 8)
    exact = john_ellipsoid(A)
    exact.solve(solver="CLARABEL")
    prob = john_ellipsoid(A)
    xi = 0.1
    prob.solve(method="sketched", accuracy=xi, rng=3, sketch_size=sketch, sample_size=400)
    F = prob.ellipsoid
    assert F.weights.sum() == pytest.approx(8, rel=1e-9)
    inside = F.scaled(1 / math.sqrt(F.support_ratios(A).max()))
    assert inside.volume_ratio(exact.ellipsoid) >= 1 / (1 + xi)


def test_sketched_same_seed_same_output():
    A = _polytope(2, 500, 5)
    p = john_ellipsoid(A)
    p.solve(method="sketched", rng=7, sketch_size=2, sample_size=100)
    a = p.ellipsoid.matrix
    p.solve(method="sketched", rng=7, sketch_size=2, sample_size=100)
    assert np.array_equal(a, p.ellipsoid.matrix)
    p.solve(method="sketched", rng=8, sketch_size=2, sample_size=100)
    assert not np.array_equal(a, p.ellipsoid.matrix)


def test_ellipsoid_contains_and_scaling():
    E = Ellipsoid.from_matrix(np.diag([1.0, 4.0]))
    pts = np.array([[1.0, 0.0], [0.0, 0.5], [0.0, 0.6]])
    assert E.contains(pts).tolist() == [True, True, False]
    assert E.scaled(2.0).volume_ratio(E) == pytest.approx(2.0)
    with pytest.raises(UnsupportedProblemError, match="positive definite"):
        Ellipsoid.from_matrix(np.diag([1.0, -1.0]))


@pytest.mark.parametrize("bad, msg", [
    (np.array([1.0, 2.0]), "2-D"),
    (np.ones((2, 3)), "n >= d"),
])
def test_bad_shapes_rejected(bad, msg):
    with pytest.raises(UnsupportedProblemError, match=msg):
        john_ellipsoid(bad)


@pytest.mark.parametrize("bad, msg", [
    (np.array([[1.0, np.nan], [0.0, 1.0]]), "NaN"),
    (np.array([[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]]), "full column rank"),
])
@pytest.mark.parametrize("method", [None, "fixed-point", "sketched"])
def test_bad_values_rejected_by_the_exact_methods_only(bad, msg, method):
    prob = john_ellipsoid(bad)  # the shape is public; the values are checked only when solving
    with pytest.raises(UnsupportedProblemError, match=msg):
        prob.solve(method=method)
