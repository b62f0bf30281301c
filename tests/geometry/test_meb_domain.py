"""Private MEB on data outside the public box, and far from the origin (issue 21 items 4 and 6).

A point outside the public box is clipped into it inside the mechanism, never refused (a refusal
is a deterministic function of the data and leaks one bit); how many were clipped is released
only as an opt-in noisy count charged to the budget (``count_clipped=``).  The sum queries run
on coordinates translated by the public box centre, so a translation of points and box changes
nothing but the last bits of the released centre, and the released centre is projected into the
box (post-processing).
"""

import warnings

import numpy as np
import pytest

from cvxdp.geometry.meb import min_enclosing_ball


def _grid_points(seed, n, d=3):
    """Gaussian points rounded to multiples of 2^-10: ``p + 1e8`` is exact in float64."""
    rng = np.random.default_rng(seed)
    return np.round(np.clip(rng.normal(0.5, 1.0, (n, d)), -4, 4) * 1024) / 1024


def _quiet_solve(points, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # n=20: the uncovered bound is vacuous (warned)
        return min_enclosing_ball(points).solve_private(**kw)


# ----------------------------------------------------------------------------- item 6


def test_shifting_points_and_box_by_1e8_changes_nothing():
    """Same points and box shifted by S = 1e8, same seed: same ball up to the spacing of S.

    Before the fix the sums accumulated raw coordinates (rounding ~ k S u far above the
    sensitivity G_t): the centre moved by 0.024 and the radius by 60%.
    """
    S = 1e8
    p = _grid_points(0, 3000)
    a = _quiet_solve(p, rho=1.0, bounds=(-5, 5), rng=0)
    b = _quiet_solve(p + S, rho=1.0, bounds=(-5 + S, 5 + S), rng=0)
    # float64 spacing at 1e8 is 1.5e-8: 1.5e-9 of the box width 10
    assert np.max(np.abs((b.ball.center - S) - a.ball.center)) <= 2 * np.spacing(S)
    assert b.ball.radius == pytest.approx(a.ball.radius, rel=1e-12)
    assert b.info["r0"] == pytest.approx(a.info["r0"], rel=1e-12)


def test_released_centre_lies_in_the_public_box_at_n20():
    """At n=20 the noise dominates; the released centre is projected into the box.

    Before the fix it lay outside [-5, 5]^3 in 10 of 10 seeds (coordinates up to 152)."""
    outside = 0
    for seed in range(10):
        sol = _quiet_solve(_grid_points(seed, 20), rho=1.0, bounds=(-5, 5), rng=seed)
        outside += int(np.any(np.abs(sol.ball.center) > 5))
    assert outside == 0
