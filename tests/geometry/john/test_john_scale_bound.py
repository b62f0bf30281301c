"""The mean-leverage lower bound on a candidate's support scale (docs/john.md D5,
``john_select.scale_lower_bound``) against the true scale, on fixed noise draws.

The bound is proven on the event ``lambda_max(Z) <= r``, ``tr Z <= t`` of the Gram release's
noise ``Z`` (``gram_noise_bounds``); here it is checked on 100 draws per configuration, with
both the shifted (D0) and the unshifted release as the candidate, including the reproducer of
``test_john_sizing.py`` (Gaussian rows ``n = 1070``, ``d = 49``, noise sd 0.297, the final
release's there: 0.9 ``q_min`` per entry, 8.8 ``q_min`` in norm).  The events' own
probabilities are checked at a level where a frequency can be measured.
"""

import math

import numpy as np
import pytest
from scipy import stats

from cvxdp.geometry.john.core import project_psd, sym_noise
from cvxdp.geometry.john.john_iter import fixed_point_weights, gram
from cvxdp.geometry.john.john_select import (
    GRAM_SCHEDULES,
    gram_event_level,
    gram_noise_bounds,
    scale_lower_bound,
    shifted_gram,
)
from tests.geometry.john_data import anisotropic, clustered

P = gram_event_level(1e-3, GRAM_SCHEDULES)  # the level of the default failure = 1e-3
DRAWS = 100


def _reproducer():
    A = np.random.default_rng(0).standard_normal((1070, 49))
    return A / np.linalg.norm(A, axis=1).max()


def _unit_rows():
    A = np.random.default_rng(1).standard_normal((1000, 10))
    return A / np.linalg.norm(A, axis=1)[:, None]


def _true_scale(M, A):
    return math.sqrt(float(np.max(np.einsum("ij,ji->i", A, np.linalg.solve(M, A.T)))))


def _candidates(G, R, sigma, ridge):
    if ridge is None:  # the uniform weights: D0's shifted release and the unshifted one
        return [shifted_gram(G, R, sigma)[0], project_psd(G, R)]
    return [project_psd(G, R, ridge)]  # the iterate: A'VA + Z plus its ridge


CASES = {  # name: (rows, weights summing to d, noise sd, R, ridge of the candidate, least
    # ratio bound / true scale on the shifted release (the iterate: its only candidate), as
    # measured on these draws: 0.270, 0.450, 0.106, 0.937; the gap is the one between the mean
    # and the largest leverage ratio, and, deep in the noise, the unknown spectrum of Q0)
    "reproducer (Gaussian, n=1070, d=49)": (_reproducer, None, 0.297, 5.85, None, 0.25),
    "anisotropic cond 1e3 (noise 400 q_min)": (
        lambda: anisotropic(2000, 20, cond=1e3), None, 1e-3, 1.0, None, 0.4),
    "clustered (noise 0.24 q_min)": (lambda: clustered(5000, 10), None, 0.02, 1.0, None, 0.1),
    "clustered, the iterate's weights": (lambda: clustered(5000, 10), "fixed-point", 0.02, 1.0,
                                         1e-3, 0.9),
}


@pytest.mark.parametrize("case", list(CASES))
def test_the_bound_never_exceeds_the_true_scale(case):
    rows, weights, sigma, R, ridge, least = CASES[case]
    A = rows()
    n, d = A.shape
    w = np.full(n, d / n)
    if weights == "fixed-point":
        u = fixed_point_weights(A, accuracy=0.05)[0]
        w = d * u / u.sum()
    Gamma = gram(A, w)
    ratios = []
    for seed in range(DRAWS):
        G = Gamma + sym_noise(np.random.default_rng(seed), d, sigma)
        for M in _candidates(G, R, sigma, ridge):
            ratios.append(scale_lower_bound(M, G, sigma, P) / _true_scale(M, A))
    ratios = np.array(ratios)
    assert ratios.max() <= 1.0
    # not vacuous: positive in every draw on the shifted release (every other entry), also deep
    # in the noise floor, where the previous fallback had no bound (k = 1 > the truth)
    assert (ratios[::2] if ridge is None else ratios).min() > least


def test_the_bound_needs_the_noise_terms():
    # the ball (Q = I) on rows of norm 1: the true scale is 1 = the mean of ||c_i||^2, so the
    # trace term is tight; the same bound with the noise ignored (sigma = 0) exceeds the truth
    # in about half the draws, the bound never
    A = _unit_rows()
    n, d = A.shape
    Gamma, sigma = gram(A, np.full(n, d / n)), 0.1
    naive = bound = 0
    for seed in range(DRAWS):
        G = Gamma + sym_noise(np.random.default_rng(seed), d, sigma)
        naive += scale_lower_bound(np.eye(d), G, 0.0, P) > 1.0
        bound += scale_lower_bound(np.eye(d), G, sigma, P) > 1.0
    assert bound == 0 and 30 <= naive <= 70


@pytest.mark.parametrize("d", [3, 30])
def test_the_noise_events_have_their_probabilities(d):
    # at p = 0.1 (measurable): P(tr Z > t) = 0.1 exactly (2000 draws: within 4 sd), and
    # P(lambda_max(Z) > r) <= 0.1 (Gaussian concentration around a bound on the mean: far less)
    p, sigma, draws = 0.1, 0.7, 2000
    r, t = gram_noise_bounds(d, sigma, p)
    gen = np.random.default_rng(d)
    Z = [sym_noise(gen, d, sigma) for _ in range(draws)]
    over_t = np.mean([np.trace(z) > t for z in Z])
    over_r = np.mean([np.linalg.eigvalsh(z)[-1] > r for z in Z])
    sd = math.sqrt(p * (1 - p) / draws)
    assert abs(over_t - p) <= 4 * sd
    assert over_r <= p
    # r is the semicircle edge sqrt(2d) sigma plus the concentration term, no more
    assert r == pytest.approx(sigma * (math.sqrt(2 * d) + math.sqrt(2 * math.log(1 / p))))
    assert t == pytest.approx(stats.norm.ppf(1 - p) * sigma * math.sqrt(d))


@pytest.mark.parametrize("case,winner", [
    ("iterated", "private"), ("clustered", "ball"), ("no iteration", "uniform"),
])
def test_the_default_release_contains_the_fitted_candidate(case, winner):
    from cvxdp.geometry.john.john import john_ellipsoid
    from tests.geometry.john_data import gaussian_rows

    A, kw = {
        "iterated": (gaussian_rows(3000, 8), dict(epsilon=100, closeness=1e-3, row_bound=2.0)),
        "clustered": (clustered(20000, 10), dict(epsilon=10, closeness=1e-4, row_bound=1.0)),
        "no iteration": (gaussian_rows(1000, 5), dict(epsilon=0.3, closeness=0.05,
                                                      row_bound=5.0)),
    }[case]
    for seed in range(2):
        sol = john_ellipsoid(A).solve_private(delta=1e-6, rng=seed, **kw)
        assert sol.info["selected"] == winner
        assert float(sol.ellipsoid.support_ratios(A).max()) >= 1 - 1e-9
