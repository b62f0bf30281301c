"""The exponential mechanism by inversion: its law (seeded chi-square audit, exact enumeration on
a coarse uniform grid), its edge cases, and its float delta against the Gumbel sampler's."""

import math

import numpy as np
import pytest
from scipy import stats

from cvxdp.privacy.inversion_sampler import (
    EXP_ERROR_U,
    exponential_inversion,
    inversion_float_delta,
    inversion_index,
    inversion_tv,
)
from cvxdp.privacy.mechanisms import (
    exponential_float_delta,
    exponential_probabilities,
    sampler_float_limits,
)

H = 2.0**-53


def test_inversion_draws_pass_a_chi_square_audit_against_softmax():
    scores = np.array([0.0, 0.3, 0.5, 1.0, 1.1])
    eps, sens = 4.0, 0.5
    p = exponential_probabilities(scores, epsilon=eps, sensitivity=sens)
    rng = np.random.default_rng(2024)
    n = 40000
    logits = eps / (2 * sens) * scores
    counts = np.bincount([exponential_inversion(logits, rng) for _ in range(n)], minlength=5)
    assert stats.chisquare(counts, n * p).pvalue > 1e-3
    # the audit has power: the law at 1.2 x epsilon is rejected on the same draws
    q = exponential_probabilities(scores, epsilon=1.2 * eps, sensitivity=sens)
    assert stats.chisquare(counts, n * q).pvalue < 1e-6


def test_inversion_index_edges_zero_weights_are_never_chosen():
    # u = 0 skips leading zero-weight cells; the largest uniform never runs past the last
    # positive weight (fl(u C) < C for u = 1 - 2^-53)
    assert inversion_index(np.cumsum([0.0, 1.0, 1.0]), 0.0) == 1
    for C in (np.cumsum([1.0, 1.0, 0.0]), np.cumsum([1.0, 0.7, 0.0, 0.0]),
              np.cumsum([1.0, 3.0 * H, 0.0])):
        assert inversion_index(C, 1.0 - H) == int(np.flatnonzero(np.diff(C, prepend=0.0))[-1])
    assert inversion_index(np.array([1.0]), 1.0 - H) == 0
    # a logit 800 below the maximum underflows to weight 0: never drawn
    rng = np.random.default_rng(0)
    draws = {exponential_inversion(np.array([0.0, -800.0, 0.0]), rng) for _ in range(2000)}
    assert draws == {0, 2}


@pytest.mark.parametrize("bits,logits", [(14, [0.0, 0.0]), (14, [0.0, 2.0, -1.0]),
                                         (16, [0.0, 1.0, 3.0, 3.5, -20.0, -800.0])])
def test_inversion_on_a_coarse_grid_is_within_the_tv_bound(bits, logits):
    # the sampler's arithmetic with u on the grid k 2^-b (instead of 2^-53), every k enumerated:
    # the exact law's distance from softmax (computed in extended precision) is within the bound
    # of inversion_tv with the grid step 2^-b in step 3
    ell = np.asarray(logits)
    m = ell.size
    w = np.exp(ell - ell.max())
    C = np.cumsum(w)
    u = np.arange(2**bits) / 2.0**bits
    J = np.searchsorted(C, u * C[-1], side="right")
    assert J.max() < m
    law = np.bincount(J, minlength=m) / 2.0**bits
    ideal = np.exp(ell.astype(np.longdouble) - ell.max())
    ideal = (ideal / ideal.sum()).astype(float)
    tv = 0.5 * np.abs(law - ideal).sum()
    bound = (m - 1) * 2.0**-bits + (inversion_tv(m) - (m - 1) * H)
    assert tv <= bound
    assert tv > 0 or m == 2  # the grid's error is real (two equal weights split exactly)


def test_inversion_tv_closed_form_and_delta_below_the_gumbel_samplers():
    for m in (2, 40, 400, 10**5):
        # (m - 1) h from the uniform, m h from the running sum, m h 1.01 / e from the logits'
        # subtraction, EXP_ERROR_U h from exp
        approx = (m - 1 + 1.0001 * m + 1.01 * m / math.e + EXP_ERROR_U) * H
        assert inversion_tv(m) == pytest.approx(approx, rel=1e-6)
        assert inversion_tv(m) < 0.15 * m * sampler_float_limits()["gumbel_tv_per_candidate"] \
            + EXP_ERROR_U * H
        for eps in (1e-3, 1.0, 10.0, 30.0):
            # the MWU's record states exponential_float_delta: it bounds the inversion's delta
            assert inversion_float_delta(candidates=m, epsilon=eps) <= \
                exponential_float_delta(candidates=m, epsilon=eps)
    assert inversion_float_delta(candidates=3, epsilon=1e6) == 1.0  # vacuous, no overflow
    assert inversion_tv(2**53) == 1.0


def test_exp_is_within_the_assumed_error():
    # EXP_ERROR_U h relative (4 ulp): numpy's exp (the numpy backend) and libm's (math.exp, the
    # compiled kernel's), against an extended-precision reference
    if np.finfo(np.longdouble).nmant < 60:
        pytest.skip("needs 80-bit long double for the reference")
    rng = np.random.default_rng(5)
    y = np.concatenate([-rng.uniform(0, 708, 200000), -rng.uniform(0, 1, 100000),
                        -rng.exponential(3, 100000), [0.0, -1e-300, -708.0]])
    ref = np.exp(y.astype(np.longdouble))
    for got in (np.exp(y), np.array([math.exp(v) for v in y])):
        rel = np.abs((got.astype(np.longdouble) - ref) / ref).astype(float)
        assert rel.max() <= EXP_ERROR_U * H
        assert rel.max() <= 0.5 * EXP_ERROR_U * H  # measured: at most 0.7 ulp = 1.4 h
