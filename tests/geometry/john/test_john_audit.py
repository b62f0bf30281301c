"""Empirical audit of the private John ellipsoid on eps0-close neighbours, and a broken twin.

Both ~20-40 s: marked slow.  The worst-case sensitivity (Lemma S) is within ~5x of an
adversarial neighbour but far above the change on these typical data, so the twin is
under-noised by a large factor (1e-9) before the audit sees it.
"""

import numpy as np
import pytest

import cvxdp.geometry.john.john_private as jp
from cvxdp.audit.auditor import audit_mechanism
from cvxdp.geometry.john.john import john_ellipsoid

EPS, DELTA, EPS0 = 1.0, 1e-5, 2e-3


def _pair():
    rng = np.random.default_rng(0)
    A = rng.standard_normal((12, 2)) / np.sqrt(2)
    A *= np.minimum(1.0, 0.9 / np.linalg.norm(A, axis=1))[:, None]
    B = A.copy()
    B[0] += EPS0 * np.array([0.6, 0.8])  # one row moved by exactly eps0
    return john_ellipsoid(A), john_ellipsoid(B)


def _mech(prob, gen, ridge=None):
    """The iteration's transcript: the T noisy leverage-ratio vectors, as released (the answer
    itself is most often the uniform-weights ellipsoid here, which would hide the iterate).  The
    twin gets a public ridge, so that its smaller sensitivity lowers the noise, not the ridge."""
    tape = []
    real = jp.released
    jp.released = lambda v: (tape.append(np.copy(v)), v)[1]
    try:
        sol = prob.solve_private(epsilon=EPS, delta=DELTA, closeness=EPS0, row_bound=1.0,
                                 rng=gen, iterations=5, ridge=ridge)
    finally:
        jp.released = real
    assert sol.iterations == 5
    return np.concatenate([t for t in tape if np.shape(t) == (12,)])


@pytest.mark.slow
def test_audit_finds_no_violation():
    A, B = _pair()
    res = audit_mechanism(_mech, A, B, epsilon=EPS, delta=DELTA, n_samples=1000, rng=1)
    assert res.passed and res.epsilon_lower <= EPS


@pytest.mark.slow
def test_audit_catches_under_noised_twin(monkeypatch):
    real = jp.leverage_ratio_sensitivity
    monkeypatch.setattr(jp, "leverage_ratio_sensitivity", lambda **kw: real(**kw) * 1e-9)
    A, B = _pair()
    res = audit_mechanism(lambda p, g: _mech(p, g, ridge=0.1), A, B, epsilon=EPS, delta=DELTA,
                          n_samples=1000, rng=1)
    assert not res.passed and res.epsilon_lower > EPS
