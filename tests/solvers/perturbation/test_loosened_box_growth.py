"""Variables that only private rows bound: the loosened counterpart's box, grown from the
released point.

An octagon ``A x <= 1`` with a private ``A`` and no public bound on ``x``, and basis pursuit
denoising ``min ||beta||_1, ||X beta - y|| <= 0.4`` with a private design ``X``: the units
reach variables no public row bounds, so the loosened counterpart dropped them and its
optimum, the lower bound, was ``-inf`` (the octagon) or the trivial 0 (``||beta||_1``) even
at epsilon 1e6 on exact answers.  On the noise event the tightened counterpart's point ``x_t``
is in the true feasible set ``F`` (convex); the loosened counterpart built on the box ``|x_J|
<= R`` contains ``F`` within that box, and when its own box ``B'`` lies strictly inside, the
segment from ``x_t`` shows ``F`` lies in ``B'`` (docs/certificates.md).
"""

from __future__ import annotations

import warnings

import cvxpy as cp
import numpy as np
import pytest

import cvxdp


def _octagon():
    th = np.linspace(0, 2 * np.pi, 8, endpoint=False)
    A = cp.Parameter((8, 2), name="A", value=np.c_[np.cos(th), np.sin(th)])
    x = cp.Variable(2, name="x")
    prob = cp.Problem(cp.Minimize(np.array([1.0, 0.3]) @ x), [A @ x <= 1])
    return prob, cvxdp.ConstraintPrivacy(A, sensitivity=1e-3)


def _bpdn():
    rng = np.random.default_rng(76)
    m, n = 30, 12
    X0 = rng.normal(size=(m, n)) / np.sqrt(m)
    b0 = np.zeros(n)
    b0[:3] = [1, -1, 0.5]
    y = X0 @ b0 + rng.normal(0, 0.05, m)
    X = cp.Parameter((m, n), name="X", value=X0)
    beta = cp.Variable(n, name="beta")
    prob = cp.Problem(cp.Minimize(cp.norm1(beta)), [cp.norm(X @ beta - y, 2) <= 0.4])
    return prob, cvxdp.ConstraintPrivacy(X, sensitivity=1e-3)


def _solve(build, eps: float, seed: int = 0):
    prob, spec = build()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return prob.solve_private(epsilon=eps, delta=1e-6, rng=seed, private=spec,
                                  mechanism="perturbation", reference=True)


@pytest.mark.parametrize("build", [_octagon, _bpdn])
def test_exact_answers_are_certified_without_a_public_box(build):
    sol = _solve(build, 1e6)
    assert sol.certificate.relative_gap_bound <= 1e-2
    assert sol.status == cp.OPTIMAL_INACCURATE


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_grown_box_bound_holds(seed):
    sol = _solve(_octagon, 30.0, seed)
    assert sol.validation.objective_gap <= sol.certificate.gap_bound
    assert sol.certificate.optimum_lower <= sol.validation.reference_value
