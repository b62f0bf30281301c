"""D3' (docs/john.md): without iteration, the scale releases are made only when they can change
the answer; otherwise their budget goes to the uniform-weights Gram matrix ``Q0``.

Reproducer (sweep seed 2035, clustered polytope, ``n = 3333``, ``d = 30``, epsilon 0.69,
closeness 0.024): no iteration (D2), the released uniform-weights scale so noisy that the ball
(true fitted ratio 0.97) could never be certainly better and no second uniform-weights release
could be scored, yet 27.5% of ``mu^2`` went to scale releases and ``Q0`` kept 72.5%: 20-seed
mean 0.8629 against the exact uniform weights' 0.8738.
"""

import math

import numpy as np
import pytest

from cvxdp.geometry.john.john import john_ellipsoid
from cvxdp.geometry.john.john_select import Scored
from cvxdp.geometry.john.uniform_release import Run, scales_can_matter
from tests.geometry.john_data import fitted_ratio, gaussian_rows, reference

KW = dict(epsilon=0.3, delta=1e-6, closeness=0.05, row_bound=5.0)


@pytest.fixture(scope="module")
def case():
    A = gaussian_rows(1000, 5)
    return (A, *reference(A))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_no_iteration_and_no_useful_scale_gives_the_scales_budget_to_q0(case, seed):
    A, E, uniform = case
    sol = john_ellipsoid(A).solve_private(rng=seed, **KW)
    info, rec = sol.info, sol.privacy.records[0].params
    # D2 chose no iteration (Q0 at the 72.5% the iterations may use) ...
    assert sol.iterations == 0 and info["share_uniform"] == pytest.approx(0.725)
    # ... and no candidate could be certainly better than the uniform weights at any split of
    # the scales' budget: it went to Q0 (92.5%), one scale release (7.5%) was made
    assert info["fallback"].startswith("no iteration") and "too noisy" in info["fallback"]
    assert info["selected"] == "uniform"
    assert set(k for k in rec if k.startswith("mu_")) == {"mu_uniform", "mu_scale"}
    mu = math.hypot(rec["mu_uniform"], rec["mu_scale"])
    assert rec["mu_uniform"] == pytest.approx(mu * math.sqrt(0.925), rel=1e-9)
    assert rec["mu_scale"] == pytest.approx(mu * math.sqrt(0.075), rel=1e-9)
    assert sol.privacy.epsilon == pytest.approx(KW["epsilon"], rel=1e-9)
    assert fitted_ratio(sol.ellipsoid, A, E) >= uniform - 0.01


def _run(mu_s=1.0, z=3.0):
    return Run(A=np.eye(2), gen=np.random.default_rng(0), release=lambda v: v, eps0=0.1, R=1.0,
               mu=2.0, mu_s=mu_s, z=z, w_unif=np.ones(2), delta_0=0.1)


def test_scales_matter_exactly_when_the_margin_at_the_best_share_is_below_the_gain():
    # the uniform scale's first release at mu_s = 1, the whole extra share sqrt(3) on top: its
    # sd can fall by hypot(1, sqrt(3)) = 2; z = 3, released scale 1
    run, extra = _run(), math.sqrt(3.0)
    second = (np.eye(2), "uniform-unshifted", 0.1)
    for sigma, gain, expected in [
        (0.5, 1.0, False),  # best sd 0.25: margin -log(1 - 0.75) = 1.386 >= gain 1
        (0.5, 1.5, True),   # 1.386 < 1.5: the ball could be certainly better
        (0.9, 5.0, False),  # best sd 0.45: z sigma / s = 1.35 >= 1, no lower confidence bound
    ]:
        uni = Scored("uniform", np.eye(2), None, None, 1.0, sigma, run.z)
        assert scales_can_matter(run, uni, None, gain=gain, extra=extra) is expected
        # a second uniform-weights release that can be scored always makes the scales useful
        assert scales_can_matter(run, uni, second, gain=gain, extra=extra) is True
