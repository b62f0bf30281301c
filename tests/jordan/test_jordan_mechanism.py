"""The generic Gaussian mechanism on an EJA (paper 002, Lemma 4.2, Cor 4.3/4.4)."""

import math

import numpy as np
import pytest
from scipy.stats import norm as normal

from cvxdp.errors import BudgetError, PrivacySpecError
from cvxdp.jordan import (
    Orthant,
    Product,
    SpinFactor,
    SymmetricMatrices,
    effective_l2_sensitivity,
    gaussian_mechanism,
    gaussian_noise_bound,
)
from cvxdp.privacy.accountant import PrivacyAccountant
from cvxdp.privacy.budgets import ApproxDP

P = Product([Orthant(3), SpinFactor(4), SymmetricMatrices(4)])  # dim 17, rank 9


def analytic_delta(sigma, eps, d):
    """Balle & Wang (2018) Thm 8, written out independently of cvxdp.privacy."""
    a, b = d / (2 * sigma), eps * sigma / d
    return normal.cdf(a - b) - math.exp(eps) * normal.cdf(-a - b)


@pytest.mark.parametrize("norm, factor", [("l2", 1.0), ("l1", 1.0), ("linf", 3.0),
                                          (2, 1.0), (1, 1.0), (np.inf, 3.0)])
def test_sigma_is_calibrated_for_the_effective_l2_sensitivity(norm, factor):
    eps, delta, D = 0.5, 1e-6, 0.2
    _, rec = gaussian_mechanism(np.zeros(P.dim), P, sensitivity=D, norm=norm, epsilon=eps,
                                delta=delta, rng=0)
    sigma, d2 = rec.params["sigma"], rec.params["sensitivity"]
    assert d2 == pytest.approx(factor * D)  # sqrt(rank) = 3 for l-inf (Cor 4.4)
    assert analytic_delta(sigma, eps, d2) == pytest.approx(delta, rel=1e-6)
    classical = d2 * math.sqrt(2 * math.log(1.25 / delta)) / eps  # Lemma 4.2's sigma
    assert sigma < classical
    assert rec.budget == ApproxDP(eps, delta)
    assert rec.zcdp.rho == pytest.approx(d2**2 / (2 * sigma**2))
    assert effective_l2_sensitivity(P, D, norm) == pytest.approx(factor * D)


def test_classical_and_zcdp_calibrations():
    J = SymmetricMatrices(3)
    _, rec = gaussian_mechanism(np.zeros(6), J, sensitivity=1.0, norm="linf", epsilon=0.5,
                                delta=1e-5, method="classical", rng=1)
    classical = math.sqrt(3) * math.sqrt(2 * math.log(1.25e5)) / 0.5
    assert rec.params["sigma"] == pytest.approx(classical)
    _, rec = gaussian_mechanism(np.zeros(6), J, sensitivity=2.0, rho=0.5, rng=1)
    assert rec.params["sigma"] == pytest.approx(2.0)  # D / sqrt(2 rho)
    assert rec.zcdp.rho == pytest.approx(0.5)


@pytest.mark.parametrize("norm", ["l2", "l1", "linf"])
def test_noise_is_isotropic_in_phi_coordinates_with_the_calibrated_scale(norm):
    """Seeded: phi(noise)/sigma must be i.i.d. N(0, 1) (checked with 5-sigma error bars)."""
    rng = np.random.default_rng(2024)
    x = P.random_normal(7)
    n = 400
    Z = np.empty((n, P.dim))
    for i in range(n):
        out, rec = gaussian_mechanism(x, P, sensitivity=0.3, norm=norm, epsilon=1.0, delta=1e-5,
                                      rng=rng)
        Z[i] = P.phi(out - x) / rec.params["sigma"]
    N = Z.size
    assert abs(Z.mean()) < 5 / math.sqrt(N)
    assert abs(Z.var() - 1) < 5 * math.sqrt(2 / N)
    per_coord = Z.var(axis=0)  # every coordinate, including spin-factor and off-diagonal ones
    assert np.all(np.abs(per_coord - 1) < 5 * math.sqrt(2 / n))
    # in stored coordinates: spin-factor rows carry sigma^2/2, svec rows sigma^2
    S = Z / P.phi_scale
    assert abs(S[:, 3:7].var() - 0.5) < 5 * 0.5 * math.sqrt(2 / (4 * n))
    # E ||z||_2^2 = dim * sigma^2 (paper's utility statement ||z||_2 ~ sigma sqrt(k))
    sq = (Z**2).sum(axis=1)
    assert abs(sq.mean() - P.dim) < 5 * math.sqrt(2 * P.dim / n)


def test_matrix_noise_is_goe_shaped():
    """Off-diagonal matrix entries have variance sigma^2/2, the diagonal sigma^2 (svec = phi)."""
    J = SymmetricMatrices(5)
    M = J.to_matrix(J.random_normal(3, size=4000))
    assert abs(M[:, 0, 0].var() - 1) < 5 * math.sqrt(2 / 4000)
    assert abs(M[:, 3, 1].var() - 0.5) < 5 * 0.5 * math.sqrt(2 / 4000)
    np.testing.assert_array_equal(M, np.swapaxes(M, -1, -2))


def test_same_seed_same_output_and_accountant():
    x = np.arange(P.dim, dtype=float)
    a, _ = gaussian_mechanism(x, P, sensitivity=1.0, epsilon=1.0, delta=1e-6, rng=5)
    b, _ = gaussian_mechanism(x, P, sensitivity=1.0, epsilon=1.0, delta=1e-6, rng=5)
    np.testing.assert_array_equal(a, b)
    acc = PrivacyAccountant(ApproxDP(1.1, 1e-6))
    gaussian_mechanism(x, P, sensitivity=1.0, epsilon=1.0, delta=1e-6, rng=5, accountant=acc)
    assert len(acc.ledger) == 1
    with pytest.raises(BudgetError):
        gaussian_mechanism(x, P, sensitivity=1.0, epsilon=1.0, delta=1e-6, rng=5, accountant=acc)
    assert len(acc.ledger) == 1


def test_bad_inputs_rejected():
    J = SymmetricMatrices(2)
    ok = {"epsilon": 1.0, "delta": 1e-6}
    with pytest.raises(PrivacySpecError, match="NaN"):
        gaussian_mechanism(np.array([1.0, np.nan, 0.0]), J, sensitivity=1.0, **ok)
    with pytest.raises(PrivacySpecError, match=r"shape \(3,\)"):
        gaussian_mechanism(np.zeros(4), J, sensitivity=1.0, **ok)
    with pytest.raises(PrivacySpecError, match="finite and > 0"):
        gaussian_mechanism(np.zeros(3), J, sensitivity=0.0, **ok)
    with pytest.raises(PrivacySpecError, match="norm order"):
        gaussian_mechanism(np.zeros(3), J, sensitivity=1.0, norm="l3", **ok)
    with pytest.raises(PrivacySpecError, match="cvxdp.jordan algebra"):
        gaussian_mechanism(np.zeros(3), "S2", sensitivity=1.0, **ok)
    with pytest.raises(PrivacySpecError, match="not both"):
        gaussian_mechanism(np.zeros(3), J, sensitivity=1.0, rho=0.1, **ok)
    with pytest.raises(BudgetError):
        gaussian_mechanism(np.zeros(3), J, sensitivity=1.0, epsilon=1.0, delta=0.0)
    with pytest.raises(BudgetError):
        gaussian_mechanism(np.zeros(3), J, sensitivity=1.0, epsilon=-1.0, delta=1e-6)


def _angle(J, out):
    """Angle of the top eigenvector of a 2 x 2 output (a statistic of its Jordan frame)."""
    _, U = J.eigh(out)
    u = U[:, -1] * np.sign(U[0, -1] or 1.0)
    return math.atan2(u[1], u[0])


def test_eigenvalue_only_noise_leaks_the_frame():
    """002, remark after Cor 4.4: noise on the eigenvalues alone keeps the frame, so two
    neighbours whose frames differ by a tiny rotation are told apart with certainty; the full
    mechanism randomises the frame."""
    J = SymmetricMatrices(2)
    t = 1e-3
    R = np.array([[math.cos(t), -math.sin(t)], [math.sin(t), math.cos(t)]])
    X = J.from_matrix(np.diag([1.0, 0.0]))
    Y = J.from_matrix(R @ np.diag([1.0, 0.0]) @ R.T)
    assert J.norm(X - Y, 2) < 2e-3  # neighbours: tiny distance in every norm
    rng = np.random.default_rng(0)

    def eigen_only(x):
        lam, F = J.spectral_decomposition(x)
        return (lam + rng.normal(0.0, 1.0, size=2)) @ F

    ax = {round(_angle(J, eigen_only(X)), 9) for _ in range(200)}
    ay = {round(_angle(J, eigen_only(Y)), 9) for _ in range(200)}
    assert ax.isdisjoint(ay)  # the outputs identify the input: no finite epsilon
    full_x = [_angle(J, gaussian_mechanism(X, J, sensitivity=1.0, epsilon=1.0, delta=1e-5,
                                           rng=rng)[0]) for _ in range(200)]
    assert len({round(a, 9) for a in full_x}) == 200 and np.std(full_x) > 0.3


@pytest.mark.parametrize("J", [Orthant(40), SpinFactor(20), SymmetricMatrices(20), P],
                         ids=repr)
def test_noise_bounds_hold_with_the_stated_probability(J):
    """Seeded: the exceedance frequency of each bound is <= beta (+ 4 binomial SEs)."""
    beta, n, sigma = 0.1, 2000, 0.7
    Z = sigma * J.random_normal(11, size=n)
    for ord in (1, 2, np.inf):
        bound = gaussian_noise_bound(J, sigma, beta=beta, ord=ord)
        freq = float(np.mean(J.norm(Z, ord) > bound))
        assert freq <= beta + 4 * math.sqrt(beta * (1 - beta) / n), (ord, freq)
    # the spectral-norm bound is the l2 one at worst, and much smaller for matrices
    l2 = gaussian_noise_bound(J, sigma, beta=beta, ord=2)
    assert gaussian_noise_bound(J, sigma, beta=beta, ord=np.inf) <= l2


def test_matrix_spectral_noise_bound_is_order_sqrt_r():
    J = SymmetricMatrices(100)  # k = 5050: the l2 bound ~ 71 sigma, the spectral one ~ 22 sigma
    inf_b = gaussian_noise_bound(J, 1.0, beta=0.01, ord="linf")
    assert inf_b == pytest.approx(2 * 10 + math.sqrt(2 * math.log(100)))
    assert inf_b < 0.35 * gaussian_noise_bound(J, 1.0, beta=0.01, ord="l2")
    with pytest.raises(ValueError, match="beta"):
        gaussian_noise_bound(J, 1.0, beta=1.5)
