"""The tail depths that choose between the uniform-weights candidates (docs/john.md, D6): their
sensitivity bound never exceeded on random and adversarial neighbour pairs and attained where
the proof says, the depths against a direct formula, the levels public and below every
candidate's fitted volume."""

import math

import numpy as np
import pytest

from cvxdp.geometry.john.ellipsoid import Ellipsoid
from cvxdp.geometry.john.john_sensitivity import tail_depth_sensitivity
from cvxdp.geometry.john.uniform_release import tail_depths, tail_levels


def _matrix(g, d, cond):
    V = np.linalg.qr(g.standard_normal((d, d)))[0]
    return (V * np.geomspace(1, 1 / cond, d)) @ V.T


def _rows(g, n, d, R):
    A = g.standard_normal((n, d))
    return A * (R * g.uniform(0, 1, (n, 1)) / np.linalg.norm(A, axis=1)[:, None])


def test_depths_match_a_direct_formula():
    g = np.random.default_rng(0)
    A, Q = _rows(g, 200, 4, 1.0), _matrix(g, 4, 30.0)
    t, cap = 0.8, 1.1
    direct = sum(min(cap, max(0.0, math.log(math.sqrt(a @ np.linalg.solve(Q, a)) / t)))
                 for a in A)
    assert tail_depths(A, [Q], np.array([t]), cap)[0] == pytest.approx(direct, rel=1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_sensitivity_bound_holds_on_random_and_weakest_direction_moves(seed):
    g = np.random.default_rng(seed)
    n, d, R = 150, 5, 1.0
    worst = 0.0
    for _ in range(50):
        Q = _matrix(g, d, float(np.exp(g.uniform(0, math.log(1e3)))))
        A = _rows(g, n, d, R)
        t, cap = float(np.exp(g.uniform(-1, 1))), float(g.uniform(0.05, 3))
        eps0 = float(np.exp(g.uniform(math.log(1e-4), math.log(0.5))))
        lam, V = np.linalg.eigh(Q)
        bound = tail_depth_sensitivity(closeness=eps0, min_eig=float(lam[0]), threshold=t,
                                       cap=cap)
        j = int(g.integers(n))
        for direction in (g.standard_normal(d), V[:, 0], -V[:, 0]):
            B = A.copy()
            B[j] = A[j] + eps0 * direction / np.linalg.norm(direction)
            B[j] *= min(1.0, R / np.linalg.norm(B[j]))  # clipped: still eps0-close
            change = abs(tail_depths(A, [Q], np.array([t]), cap)[0]
                         - tail_depths(B, [Q], np.array([t]), cap)[0])
            assert change <= bound * (1 + 1e-9) + 1e-12
            worst = max(worst, change / bound)
    assert worst > 0.05  # the pairs reach the bound's scale (not a vacuous check)


def test_sensitivity_bound_is_attained():
    # Lipschitz part: a row at ratio t moved outward along the weakest axis by a small eps0
    lam_min, t, eps0 = 0.04, 1.0, 1e-4
    Q = np.diag([1.0, 0.5, lam_min])
    a = np.array([0.0, 0.0, t * math.sqrt(lam_min)])  # ||Q^{-1/2} a|| = t
    b = a + np.array([0.0, 0.0, eps0])
    bound = tail_depth_sensitivity(closeness=eps0, min_eig=lam_min, threshold=t, cap=5.0)
    change = (tail_depths(b[None], [Q], np.array([t]), 5.0)
              - tail_depths(a[None], [Q], np.array([t]), 5.0))[0]
    assert change == pytest.approx(bound, rel=1e-3)
    # cap part: a large move from the origin to far below the level
    far = np.array([0.0, 0.0, 3.0])
    bound = tail_depth_sensitivity(closeness=3.0, min_eig=lam_min, threshold=t, cap=0.7)
    assert bound == 0.7
    assert tail_depths(far[None], [Q], np.array([t]), 0.7)[0] == pytest.approx(0.7)


def test_levels_lie_below_every_fitted_volume():
    # the common level v bounds every candidate's fitted per-dimension log volume from above,
    # so each candidate's binding row counts; G = the exact uniform-weights Gram matrix
    g = np.random.default_rng(3)
    n, d = 400, 6
    A = g.standard_normal((n, d)) * np.geomspace(1, 0.1, d)
    G = (d / n) * A.T @ A
    Qs = [G, G + 0.05 * np.eye(d), np.diag(np.diag(G))]
    t, cap = tail_levels(Qs, G, n)
    assert cap == pytest.approx(0.5 * math.log(n))
    for Q, tj in zip(Qs, t, strict=True):
        r = np.sqrt(Ellipsoid.from_matrix(Q).support_ratios(A))
        assert r.max() >= tj * (1 - 1e-12)  # the binding row lies below the level
