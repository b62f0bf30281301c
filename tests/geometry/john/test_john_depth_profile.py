"""The depth profiles that choose between the uniform-weights candidates (docs/john.md, D6):
their sensitivity bound never exceeded on random and adversarial neighbour pairs and attained
where the proof says, the profile against a direct formula, the common level above every
candidate's fitted volume, and the deepest-band rule."""

import math

import numpy as np
import pytest

from cvxdp.geometry.john.ellipsoid import Ellipsoid
from cvxdp.geometry.john.john_sensitivity import depth_profile_sensitivity
from cvxdp.geometry.john.uniform_release import deepest_band, depth_profile, tail_levels


def _matrix(g, d, cond):
    V = np.linalg.qr(g.standard_normal((d, d)))[0]
    return (V * np.geomspace(1, 1 / cond, d)) @ V.T


def _rows(g, n, d, R):
    A = g.standard_normal((n, d))
    return A * (R * g.uniform(0, 1, (n, 1)) / np.linalg.norm(A, axis=1)[:, None])


def _profile(A, Q, t, depth, width):
    return depth_profile(A, [Q], np.array([t]), depth, width)[0]


def test_profile_matches_a_direct_formula():
    g = np.random.default_rng(0)
    A, Q = _rows(g, 200, 4, 1.0), _matrix(g, 4, 30.0)
    t, depth, width = 0.8, 1.05, 0.1
    K = math.ceil(depth / width)
    x = [math.log(math.sqrt(a @ np.linalg.solve(Q, a)) / t) for a in A]
    direct = [sum(min(1.0, max(0.0, min(max(xi / width, 0.0), K) - k)) for xi in x)
              for k in range(K)]
    np.testing.assert_allclose(_profile(A, Q, t, depth, width), direct, rtol=1e-12)


@pytest.mark.parametrize("seed", range(3))
def test_sensitivity_bound_holds_on_random_and_weakest_direction_moves(seed):
    g = np.random.default_rng(seed)
    n, d, R = 120, 5, 1.0
    worst = 0.0
    for _ in range(40):
        Q = _matrix(g, d, float(np.exp(g.uniform(0, math.log(1e3)))))
        A = _rows(g, n, d, R)
        t, depth = float(np.exp(g.uniform(-1, 1))), float(g.uniform(0.05, 3))
        width = float(np.exp(g.uniform(math.log(0.005), math.log(0.5))))
        eps0 = float(np.exp(g.uniform(math.log(1e-4), math.log(0.5))))
        lam, V = np.linalg.eigh(Q)
        bound = depth_profile_sensitivity(closeness=eps0, min_eig=float(lam[0]), threshold=t,
                                          depth=depth, width=width)
        j = int(g.integers(n))
        for direction in (g.standard_normal(d), V[:, 0], -V[:, 0]):
            B = A.copy()
            B[j] = A[j] + eps0 * direction / np.linalg.norm(direction)
            B[j] *= min(1.0, R / np.linalg.norm(B[j]))  # clipped: still eps0-close
            change = np.linalg.norm(_profile(A, Q, t, depth, width)
                                    - _profile(B, Q, t, depth, width))
            assert change <= bound * (1 + 1e-9) + 1e-12
            worst = max(worst, change / bound)
    assert worst > 0.3  # the pairs reach the bound's scale (not a vacuous check)


def test_sensitivity_bound_is_attained():
    # a row at ratio t moved outward along the weakest axis across exactly four bands
    lam_min, t, width = 0.04, 1.0, 0.01
    eps0 = t * math.sqrt(lam_min) * (math.exp(4 * width) - 1)  # log(r'/t) = 4 width
    Q = np.diag([1.0, 0.5, lam_min])
    a = np.array([0.0, 0.0, t * math.sqrt(lam_min)])
    b = a + np.array([0.0, 0.0, eps0])
    change = np.linalg.norm(_profile(b[None], Q, t, 1.0, width)
                            - _profile(a[None], Q, t, 1.0, width))
    assert change == pytest.approx(2.0, rel=1e-9)  # four bands, each by one: sqrt(4)
    bound = depth_profile_sensitivity(closeness=eps0, min_eig=lam_min, threshold=t, depth=1.0,
                                      width=width)
    assert change <= bound <= 1.03 * change  # Lipschitz: exp(4 width) - 1 ~ 4 width
    # the clip: a row from the origin to far below the whole range crosses every band once
    far = np.array([0.0, 0.0, 3.0])
    bound = depth_profile_sensitivity(closeness=3.0, min_eig=lam_min, threshold=t, depth=0.3,
                                      width=0.1)
    assert bound == pytest.approx(math.sqrt(3))
    assert np.linalg.norm(_profile(far[None], Q, t, 0.3, 0.1)) == pytest.approx(math.sqrt(3))


def test_level_lies_above_every_fitted_volume_and_the_range_reaches_the_binding_rows():
    g = np.random.default_rng(3)
    n, d = 400, 6
    A = g.standard_normal((n, d)) * np.geomspace(1, 0.1, d)
    G = (d / n) * A.T @ A
    Qs = [G, G + 0.05 * np.eye(d), np.diag(np.diag(G))]
    t, depth = tail_levels(Qs, G, n)
    for Q, tj in zip(Qs, t, strict=True):
        x = np.log(np.sqrt(Ellipsoid.from_matrix(Q).support_ratios(A)) / tj)
        assert 0 <= x.max() <= depth  # the binding row lies below the level, within range


def test_deepest_band_rule():
    noisy = np.array([[9.0, 5.0, 0.4, 3.1, 0.2], [9.0, 0.1, 0.0, 0.0, 0.0], [0.0] * 5])
    assert list(deepest_band(noisy, 1.0)) == [3, 0, -1]
