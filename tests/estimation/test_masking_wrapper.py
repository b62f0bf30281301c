"""private_wrapper, the spaces of Def. 3.1, and the paper's Alg. 2 / Alg. 3 instances."""

from __future__ import annotations

import math

import cvxpy as cp
import numpy as np
import pytest

from cvxdp.errors import PrivacySpecError, UnsupportedProblemError
from cvxdp.estimation.masking import GaussianMask, k_min
from cvxdp.estimation.wrapper import (
    EuclideanSpace,
    SpectralPDSpace,
    private_preconditioner,
    private_subspace,
    private_wrapper,
    spectral_distance,
    spectral_distance_sdp,
)


def _random_pd(rng, d, cond):
    q, _ = np.linalg.qr(rng.standard_normal((d, d)))
    return (q * np.logspace(0, math.log10(cond), d)) @ q.T


def test_spectral_distance_equals_cvxpy_lmi_model():
    rng = np.random.default_rng(0)
    for cond in (1.0, 10.0, 1e3):
        a, b = _random_pd(rng, 3, cond), _random_pd(rng, 3, cond)
        b = a + 0.3 * (b / np.linalg.norm(b)) * np.linalg.norm(a)
        assert spectral_distance_sdp(a, b) == pytest.approx(spectral_distance(a, b), rel=1e-4)
    assert spectral_distance(np.eye(2), np.diag([1.0, 0.0])) == math.inf


def test_spectral_space_axioms_lemma_3_2():
    """dist(A,A)=0, symmetry, affine invariance, the 3/2-approximate 1-restricted triangle
    inequality and convexity on random triples (condition numbers up to 1e3)."""
    rng = np.random.default_rng(1)
    worst_tri = worst_cvx = 0.0
    for _ in range(300):
        base = _random_pd(rng, 3, 10 ** rng.uniform(0, 3))
        low = np.linalg.cholesky(base)
        mats = []
        for _ in range(3):
            e = rng.normal(0, 0.15, (3, 3))
            mats.append(low @ (np.eye(3) + 0.5 * (e + e.T)) @ low.T)
        a, b, c = mats
        assert spectral_distance(a, a) == pytest.approx(0, abs=1e-9)
        assert spectral_distance(a, b) == pytest.approx(spectral_distance(b, a), rel=1e-7)
        m = rng.standard_normal((3, 3))
        assert spectral_distance(m @ a @ m.T, m @ b @ m.T) == pytest.approx(
            spectral_distance(a, b), rel=1e-5)
        dab, dbc = spectral_distance(a, b), spectral_distance(b, c)
        if dab <= 1 and dbc <= 1:
            worst_tri = max(worst_tri, spectral_distance(a, c) / (dab + dbc))
        w = rng.uniform()
        worst_cvx = max(worst_cvx, spectral_distance(w * a + (1 - w) * b, c)
                        / (w * spectral_distance(a, c) + (1 - w) * spectral_distance(b, c)))
    assert worst_tri <= 1.5
    assert worst_cvx <= 1.0 + 1e-9


def test_within_matches_pairwise_distances():
    rng = np.random.default_rng(2)
    items = np.stack([_random_pd(rng, 2, 3.0) for _ in range(25)])
    got = SpectralPDSpace().within(items, 0.7)
    want = np.array([[spectral_distance(a, b) <= 0.7 for b in items] for a in items])
    assert (got == want).all()
    pts = rng.standard_normal((30, 3))
    got = EuclideanSpace(r=1.0).within(pts, 1.3)
    want = np.linalg.norm(pts[:, None] - pts[None], axis=2) <= 1.3
    assert (got == want).all()


def test_wrapper_around_a_cvxpy_estimator():
    """Huber location written as a CVXPY model, made private by the reduction (k = 140 blocks,
    enough for the test to pass at epsilon = 8)."""
    eps, delta = 8.0, 1e-6
    assert k_min(eps / 2, delta / (4 * math.exp(eps / 2))) <= 140

    def huber_location(block: np.ndarray) -> np.ndarray:
        x = cp.Variable(block.shape[1])
        cp.Problem(cp.Minimize(cp.sum(cp.huber(block - x[None, :], 1.0)))).solve(
            solver=cp.CLARABEL)
        return x.value

    rng = np.random.default_rng(3)
    loc = np.array([250.0, -40.0])
    x = loc + rng.standard_normal((140 * 60, 2))
    x[:: 20] += 1e4  # 5% gross outliers; the block estimator is robust to them
    est = private_wrapper(huber_location, EuclideanSpace(r=1.0), epsilon=eps, delta=delta,
                          k=140)
    out = est(x, rng=4)
    again = est(x, rng=4)
    assert out.passed and np.array_equal(out.value, again.value)
    # Lemma 3.6: error <= alpha1 (block error, here < 0.5) + the mask's concentration radius;
    # the mask hides 212 r / k = 1.5, the price of the reduction for continuous outputs
    mask = GaussianMask(out.gamma, eps / 2, delta / (4 * math.exp(eps / 2)))
    assert np.linalg.norm(out.value - loc) < 0.5 + mask.concentration(2, 1e-3)
    assert out.privacy.epsilon == pytest.approx(eps) and out.privacy.delta == delta
    assert "replace one" in out.privacy.neighbouring


def test_wrapper_rejects_bad_input():
    est = private_wrapper(lambda b: b.mean(0), EuclideanSpace(r=1.0), epsilon=1.0, delta=1e-6)
    with pytest.raises(UnsupportedProblemError, match="axis 0"):  # the shape, never the values
        est(np.float64(1.0))
    with pytest.raises(PrivacySpecError, match="cannot fill"):
        est(np.zeros((100, 2)))


def test_private_subspace_is_exact_robust_to_junk_and_bottom_when_spread():
    rng = np.random.default_rng(5)
    d, eps, delta = 4, 1.0, 1e-6
    k = k_min(eps / 2, delta / (4 * math.exp(eps / 2)))
    basis, _ = np.linalg.qr(rng.standard_normal((d, 2)))
    z = rng.standard_normal((k * d, 2)) @ (basis * [30.0, 0.05]).T
    u, res = private_subspace(z, epsilon=eps, delta=delta, tol=1e-9, rng=6)
    assert u.shape == (d, 2)
    # exact up to the mask: Davis-Kahan with eigengap 1, ||E|| <= sigma (2 sqrt d + 4)
    bound = 2 * res.record.params["sigma"] * (2 * math.sqrt(d) + 4) * math.sqrt(2)
    assert res.record.params["sigma"] < 1e-7
    assert np.linalg.norm(u @ u.T - basis @ basis.T) < bound
    junk = z.copy()
    junk[: int(0.04 * k) * d] = rng.standard_normal((int(0.04 * k) * d, d))  # Q ~ 0.92
    u2, _ = private_subspace(junk, epsilon=eps, delta=delta, tol=1e-9, rng=7)
    assert np.linalg.norm(u2 @ u2.T - basis @ basis.T) < bound
    junk[: k * d // 2] = rng.standard_normal((k * d // 2, d))
    assert private_subspace(junk, epsilon=eps, delta=delta, rng=8)[0] is None
    with pytest.raises(PrivacySpecError, match="pair differences"):
        private_subspace(z[:100], epsilon=eps, delta=delta)


def test_alg3_with_paper_constants_needs_astronomical_k():
    z = np.random.default_rng(9).standard_normal((100_000, 3))
    out, par, res = private_preconditioner(z, epsilon=1.0, delta=1e-6)
    assert out is None and res is None
    assert par["k"] > 1e8 and par["block_size"] == 0


def test_psd_wrapper_refuses_when_the_mask_cannot_hide_the_sensitivity():
    """With k = 300 the aggregation sensitivity (212 + 100)/300 exceeds what Lemma 5.1's mask can
    hide at any eta: typed refusal naming the fix, never a weaker release."""
    from cvxdp.errors import PrivacyGuaranteeError

    est = private_wrapper(lambda b: b.T @ b / len(b), SpectralPDSpace(), epsilon=1.0,
                          delta=1e-6, k=300)
    x = np.random.default_rng(10).standard_normal((300 * 20, 3))
    with pytest.raises(PrivacyGuaranteeError, match="use more blocks k"):
        est(x, rng=0)
