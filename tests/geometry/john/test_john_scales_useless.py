"""D3' (docs/john.md): without iteration, the scale releases are made only when they can change
the answer; otherwise their budget goes to the uniform-weights Gram matrix ``Q0``.

Reproducer (sweep seed 2035, clustered polytope, ``n = 3333``, ``d = 30``, epsilon 0.69,
closeness 0.024): no iteration (D2), the released uniform-weights scale so noisy that the ball
(true fitted ratio 0.97) could never be certainly better and no second uniform-weights release
could be scored, yet 27.5% of ``mu^2`` went to scale releases and ``Q0`` kept 72.5%: 20-seed
mean 0.8629 against the exact uniform weights' 0.8738.
"""

import math

import pytest

from cvxdp.geometry.john.john import john_ellipsoid
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
