"""Private John ellipsoid against the trivial answer (issue 27).

The trivial answer is the uniform weighting ``w = d/n`` (it learns nothing about which rows bind).
Volume ratios are per dimension, of the ellipsoid scaled to touch P (validation only, NOT
private), against the averaged fixed point at accuracy 3e-2 (within a factor 1/(1.03) per
dimension of the exact John ellipsoid, Lemma 7.1).  Sizes are small so each test runs in seconds;
the defect (the private answer no better than uniform weights) shows at these sizes once the
closeness eps0 makes the old worst-case sensitivity dominate.
"""

import math

import numpy as np
import pytest

from cvxdp.geometry.john.john import john_ellipsoid
from tests.geometry.john_data import anisotropic, clustered, reference


def _ratio(F, A, E):
    return F.scaled(1 / math.sqrt(F.support_ratios(A).max())).volume_ratio(E)


KW = dict(delta=1e-6, closeness=2e-6, row_bound=1.0)


@pytest.fixture(scope="module")
def clustered_bench():
    A = clustered(3000, 5)
    return (A, *reference(A))


def test_private_beats_uniform_weights_on_the_clustered_polytope_at_epsilon_1(clustered_bench):
    A, E, uniform = clustered_bench
    prob = john_ellipsoid(A)
    r = [_ratio(prob.solve_private(epsilon=1.0, rng=s, **KW).ellipsoid, A, E) for s in range(2)]
    assert uniform < 0.85
    assert np.mean(r) >= uniform + 0.08


@pytest.mark.parametrize("make", [clustered, anisotropic])
def test_never_below_uniform_weights_and_increasing_in_epsilon(make):
    A = make(2000, 4, seed=1)
    E, uniform = reference(A)
    prob = john_ellipsoid(A)
    means = []
    for eps in (0.1, 1.0, 10.0):
        r = [_ratio(prob.solve_private(epsilon=eps, rng=s, **KW).ellipsoid, A, E)
             for s in range(2)]
        means.append(float(np.mean(r)))
    assert min(means) >= uniform - 0.005
    assert means[0] <= means[1] + 0.01 <= means[2] + 0.02


def test_no_iteration_returns_uniform_weights_with_a_note_decided_from_public_numbers():
    A = anisotropic(2000, 4, seed=2)
    E, uniform = reference(A)
    prob = john_ellipsoid(A)
    sol = prob.solve_private(epsilon=1.0, rng=0, **{**KW, "closeness": 1e-2})
    # the uniform weights' noise at the first share would cost more than the iterate can gain:
    # minimax regret gives Q0 all the share of Q0 and the iterations (72.5%); the ball lost
    # to the better (larger lower bound) of the shifted and unshifted uniform-weights releases
    assert sol.iterations == 0 and sol.info["share_uniform"] == pytest.approx(0.725)
    assert sol.info["fallback"].startswith("no iteration") and "minimax regret" in sol.info[
        "fallback"]
    assert sol.info["selected"] in ("uniform", "uniform-unshifted", "uniform-floored")
    np.testing.assert_allclose(sol.primal["weights"] * sol.info["scale"] ** 2,
                               np.full(2000, 4 / 2000))
    assert _ratio(sol.ellipsoid, A, E) == pytest.approx(uniform, abs=0.01)  # Q0 noise: 0.004
    # the iterations' budget went to the uniform-weights Gram matrix: all of it is spent
    rec = sol.privacy.records[0].params
    assert set(k for k in rec if k.startswith("mu_")) == {"mu_uniform", "mu_scale"}
    assert sol.privacy.epsilon == pytest.approx(1.0, rel=1e-9)
    # at a budget where the iteration can win, it runs
    ok = prob.solve_private(epsilon=1.0, rng=0, **KW)
    assert ok.info["fallback"] is None and ok.iterations > 0


def test_selection_returns_uniform_weights_when_no_candidate_is_certainly_better():
    A = anisotropic(2000, 4, seed=2)
    E, uniform = reference(A)
    sol = john_ellipsoid(A).solve_private(epsilon=1.0, rng=0, **{**KW, "closeness": 1e-5})
    assert sol.iterations > 0 and sol.info["selected"] == "uniform"  # ran, then lost
    vols = sol.info["fitted_log_volumes"]
    assert vols["private"]["lower"] <= vols["uniform"]["upper"]
    assert vols["ball"]["lower"] <= vols["uniform"]["upper"]
    assert "certainly above" in sol.info["fallback"]
    assert _ratio(sol.ellipsoid, A, E) == pytest.approx(uniform, abs=1e-3)
    np.testing.assert_allclose(sol.primal["weights"] * sol.info["scale"] ** 2,
                               np.full(2000, 4 / 2000))
