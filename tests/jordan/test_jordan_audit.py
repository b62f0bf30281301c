"""Empirical privacy audits (cvxdp.audit) of the EJA Gaussian mechanism and of the forbidden
eigenvalue-only perturbation (paper 002, Section 4)."""

import math

import numpy as np

from cvxdp.audit import audit_mechanism
from cvxdp.jordan import SpinFactor, SymmetricMatrices, gaussian_mechanism

EPS, DELTA = 1.0, 1e-5


def test_spin_factor_mechanism_passes_and_undernoised_twin_fails():
    J = SpinFactor(3)
    x = np.zeros(3)
    y = np.array([1 / math.sqrt(2), 0.0, 0.0])  # trace-form distance exactly 1 (= sqrt 2 |x|)
    assert abs(J.norm(y - x, 2) - 1.0) < 1e-15

    def mech(v, g):
        return gaussian_mechanism(v, J, sensitivity=1.0, epsilon=EPS, delta=DELTA, rng=g)[0]

    def broken(v, g):  # a quarter of the calibrated noise
        out, _ = gaussian_mechanism(v, J, sensitivity=1.0, epsilon=EPS, delta=DELTA, rng=g)
        return v + (out - v) / 4

    ok = audit_mechanism(mech, x, y, epsilon=EPS, delta=DELTA, n_samples=3000, rng=1)
    bad = audit_mechanism(broken, x, y, epsilon=EPS, delta=DELTA, n_samples=3000, rng=2)
    assert ok.passed, ok
    assert not bad.passed and bad.epsilon_lower > 1.5 * EPS, bad


def test_eigenvalue_only_noise_fails_the_audit():
    J = SymmetricMatrices(2)
    t = 0.05
    R = np.array([[math.cos(t), -math.sin(t)], [math.sin(t), math.cos(t)]])
    x = J.from_matrix(np.diag([1.0, 0.0]))
    y = J.from_matrix(R @ np.diag([1.0, 0.0]) @ R.T)
    assert J.norm(x - y, np.inf) < 0.06  # close neighbours in the spectral norm

    def angle(out):
        _, U = J.eigh(out)
        u = U[:, -1] * np.sign(U[0, -1] or 1.0)
        return math.atan2(u[1], u[0])

    def eigen_only(v, g):  # sigma calibrated as if for l-inf sensitivity 1 -- still not private
        lam, F = J.spectral_decomposition(v)
        return angle((lam + g.normal(0.0, 10.0, size=2)) @ F)

    def full(v, g):
        return angle(gaussian_mechanism(v, J, sensitivity=0.06, norm="linf", epsilon=EPS,
                                        delta=DELTA, rng=g)[0])

    leak = audit_mechanism(eigen_only, x, y, epsilon=EPS, delta=DELTA, n_samples=2000, rng=3)
    safe = audit_mechanism(full, x, y, epsilon=EPS, delta=DELTA, n_samples=2000, rng=4)
    assert not leak.passed and leak.epsilon_lower > 3 * EPS, leak
    assert safe.passed, safe
