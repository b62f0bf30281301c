"""The public l2 sensitivity of the leverage ratios: proven bound, and how tight it is (issue 27).

``leverage_ratio_sensitivity`` must (a) hold on every neighbouring pair and (b) be within 5x of
the largest change an adversarial search finds, at small sizes.  The search starts from the
two-direction family the proof's worst case suggests (docs/john.md, "Sensitivity lemma"): k rows
of norm R at weight w_min on the line at angle theta, the moving row j = p e1 at weight 1, the
move delta = eps0 e2 (and every other row zero), then hill-climbs on all rows, weights and the
direction of the move.
"""

import math

import numpy as np
import pytest

from cvxdp.geometry.john.john_iter import leverage_ratios
from cvxdp.geometry.john.john_sensitivity import leverage_ratio_sensitivity

N, D, R = 200, 2, 1.0
W_MIN = 0.1 * D / N


def _h(A, w, lam):
    """The leverage ratios in plain numpy (fast at this size; checked against the kernel)."""
    M = (A * w[:, None]).T @ A + lam * np.eye(A.shape[1])
    return np.einsum("ij,ji->i", A, np.linalg.solve(M, A.T))


def _change(A, w, lam, j, step, h=_h):
    B = A.copy()
    B[j] = A[j] + step
    B[j] *= min(1.0, R / np.linalg.norm(B[j]))  # stays in the public ball
    return float(np.linalg.norm(h(A, w, lam) - h(B, w, lam)))


def _family(k, theta, p):
    A = np.zeros((N, D))
    A[1:k + 1] = R * np.array([math.cos(theta), math.sin(theta)])
    A[0] = [p, 0.0]
    w = np.full(N, W_MIN)
    w[0] = 1.0
    return A, w


def _adversarial_worst(lam, eps0, rng):
    e2 = np.array([0.0, eps0])
    best, arg = 0.0, None
    for k in range(20, N, 20):
        for theta in np.linspace(0.05, 1.5, 15):
            for p in np.linspace(0.05, 1.0, 12):
                A, w = _family(k, theta, p)
                c = _change(A, w, lam, 0, e2)
                if c > best:
                    best, arg = c, (A, w, e2)
    A, w, step = arg
    for t in range(400):  # hill-climb on everything the adversary controls
        A2, w2, s2 = A.copy(), w.copy(), step.copy()
        scale = 0.05 * (1 - t / 400) + 1e-3
        A2 += scale * rng.standard_normal(A.shape) * (rng.random(N) < 0.2)[:, None]
        A2 *= np.minimum(1.0, R / np.maximum(np.linalg.norm(A2, axis=1), 1e-300))[:, None]
        w2 = np.clip(w2 * np.exp(scale * rng.standard_normal(N)), W_MIN, 1.0)
        s2 = s2 + scale * eps0 * rng.standard_normal(D)
        s2 *= eps0 / np.linalg.norm(s2)
        c = _change(A2, w2, lam, 0, s2)
        if c > best:
            best, A, w, step = c, A2, w2, s2
    exact = _change(A, w, lam, 0, step, h=leverage_ratios)  # the kernel the mechanism uses
    assert exact == pytest.approx(best, rel=1e-6)
    return best


def test_leverage_sensitivity_bound_holds_and_is_within_5x_of_an_adversarial_search():
    rng = np.random.default_rng(0)
    for lam in (0.05, 0.15):
        eps0 = 1e-4 * lam
        bound = leverage_ratio_sensitivity(n=N, closeness=eps0, row_bound=R, weight_floor=W_MIN,
                                           eig_floor=lam)
        worst = _adversarial_worst(lam, eps0, rng)
        assert worst <= bound
        assert bound <= 5.0 * worst, (lam, bound / worst)


def test_leverage_sensitivity_bound_holds_on_random_neighbours():
    rng = np.random.default_rng(1)
    for t in range(120):
        n, d = int(rng.integers(5, 40)), int(rng.integers(1, 5))
        wmin = 0.1 * d / n
        A = rng.standard_normal((n, d)) * rng.uniform(0.01, 1, d)
        A *= np.minimum(1.0, rng.uniform(0.1, 1) / np.linalg.norm(A, axis=1))[:, None]
        w = np.exp(rng.uniform(np.log(wmin), 0, n))
        j = int(rng.integers(n))
        w[j] = [1.0, wmin, w[j]][t % 3]
        lam = 10 ** rng.uniform(-4, 0)
        eps0 = 10 ** rng.uniform(-3, 0)  # large moves too: the bound needs no smallness
        step = rng.standard_normal(d)
        step *= eps0 / np.linalg.norm(step)
        A2 = A.copy()
        A2[j] = A[j] + step
        A2[j] *= min(1.0, 1.0 / np.linalg.norm(A2[j]))
        moved = float(np.linalg.norm(A2[j] - A[j]))
        actual = np.linalg.norm(leverage_ratios(A, w, lam) - leverage_ratios(A2, w, lam))
        bound = leverage_ratio_sensitivity(n=n, closeness=moved, row_bound=1.0,
                                           weight_floor=wmin, eig_floor=lam)
        assert actual <= bound * (1 + 1e-9) + 1e-12
