"""Random projection releases (issue 21 item 16): the relative-DP report carries no exact
function of the private data, and one huge record neither warns nor aborts a release."""

from __future__ import annotations

import warnings

import numpy as np

from cvxdp.estimation.random_projection import (
    clip_rows,
    random_projection,
    relative_leverage,
    relative_random_projection,
)
from cvxdp.estimation.regression import least_squares


def test_relative_report_does_not_carry_the_exact_leverage():
    """``details["leverage_X"]`` was the exact leverage of the private data (differs
    deterministically between neighbours); no detail may equal it."""
    rng = np.random.default_rng(0)
    data = rng.uniform(-1, 1, (400, 2)) / 2
    neighbour = data.copy()
    neighbour[7] = [0.49, -0.49]
    reports = [relative_random_projection(d, epsilon=1.0, delta=1e-4, r=10, row_bound=1.0,
                                          rng=1)[1] for d in (data, neighbour)]
    for d, rep in zip((data, neighbour), reports, strict=True):
        lev = relative_leverage(clip_rows(d, 1.0))
        assert "leverage_X" not in rep.details
        assert all(not (isinstance(v, float) and v == lev) for v in rep.details.values())
    # neighbours' reports differ only in what the mechanism's (public) branch says
    keys = set(reports[0].details) - {"noise_free", "sigma"}
    assert {k: reports[0].details[k] for k in keys} == {k: reports[1].details[k] for k in keys}


def _huge(data, i=3):
    out = data.copy()
    out[i] = [1e200, -1e200, 1e200]
    return out


def test_one_huge_record_does_not_warn_or_abort():
    """A record at 1e200 (its squared norm overflows) is clipped like any other: no
    RuntimeWarning (under -W error it aborted the release only then), and the release equals
    the one on the record already clipped to the bound."""
    data = np.random.default_rng(2).uniform(-0.5, 0.5, (500, 3))
    huge = _huge(data)
    clipped_by_hand = data.copy()
    clipped_by_hand[3] = np.array([1.0, -1.0, 1.0]) / np.sqrt(3.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = clip_rows(huge, 1.0)
        sketch, _ = random_projection(huge, epsilon=1.0, delta=1e-6, r=5, row_bound=1.0, rng=4)
        rel, _ = relative_random_projection(huge, epsilon=1.0, delta=1e-4, r=5, row_bound=1.0,
                                            rng=4)
        prob = least_squares(huge[:, :2], huge[:, 2], row_bound=1.0)
        for mech in ("ssp", "rp"):
            prob.solve_private(epsilon=1.0, delta=1e-6, rng=5, mechanism=mech, reference=True)
    assert np.allclose(got, clipped_by_hand, rtol=1e-12, atol=0)
    ref, _ = random_projection(clipped_by_hand, epsilon=1.0, delta=1e-6, r=5, row_bound=1.0,
                               rng=4)
    assert np.allclose(sketch, ref, rtol=1e-10, atol=1e-12)
    assert np.isfinite(rel).all()
