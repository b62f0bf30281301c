"""The MWU's objective search at a huge budget lands within the accuracy the answer is judged
against: it brackets the optimum finely enough (``search_steps``) and accepts a target only
when the released violation is within that accuracy (docs/mwu.md, "The objective search").
Before: six steps and acceptance at the run's theorem alpha released points 4-9x outside 1e-2
(gallery ``lp_resource``: violation 0.041, ``transport``: gap -0.064)."""

from __future__ import annotations

import warnings

import cvxpy as cp
import numpy as np
import pytest

import cvxdp
from cvxdp.solvers.mwu.objective_search import MAX_SEARCH_STEPS, search_steps
from cvxdp.status import DEFAULT_ACCURACY, DEFAULT_BETA


def _lp(seed: int):
    """max c'x s.t. A x <= 1, 0 <= x <= 1 with a private A (the gallery's lp_resource shape)."""
    rng = np.random.default_rng(seed)
    A = cp.Parameter((10, 5), name="A", value=rng.uniform(0, 1, (10, 5)))
    x = cp.Variable(5, name="x")
    prob = cp.Problem(cp.Maximize(rng.uniform(0.5, 1.5, 5) @ x), [A @ x <= 1, x >= 0, x <= 1])
    return prob, A


@pytest.mark.parametrize("seed", [0, 1])
def test_huge_budget_lands_within_the_default_accuracy(seed):
    prob, A = _lp(seed)
    opt = cp.Problem(prob.objective, prob.constraints).solve()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = prob.solve_private(epsilon=1e6, delta=1e-6, rng=seed, mechanism="mwu",
                                 reference=True,
                                 private=cvxdp.ConstraintPrivacy(A, sensitivity=1e-3))
    val = sol.validation
    assert val.max_violation <= DEFAULT_ACCURACY
    assert abs(prob.objective.value - opt) <= DEFAULT_ACCURACY * max(1.0, abs(opt))
    # the certificate's violation bound holds and is about the judged accuracy
    assert val.max_violation <= sol.certificate.violation_bound + 1e-9
    assert sol.certificate.violation_bound <= 1.5 * DEFAULT_ACCURACY
    # the certificate's events: the tests' noise (one) and each run whose theorem raised the
    # lower bound -- not one per run; each at the one default beta of every certificate
    k = sol.privacy.details["search_events"] - 1
    assert sol.certificate.probability == pytest.approx(1 - DEFAULT_BETA * (1 + k))
    assert k <= len(sol.privacy.details["search_runs"]) and sol.certificate.probability >= 0.5


def test_search_steps_bracket_to_half_the_accuracy():
    # the last bracket width / 2^(S-1) is at most accuracy / 2, and S is the smallest such
    for width, acc in [(10.0, 1e-2), (95.0, 1e-2), (3.0, 0.1), (1e-3, 1e-2)]:
        S = search_steps(width, acc)
        assert 6 <= S <= MAX_SEARCH_STEPS
        if 6 < S < MAX_SEARCH_STEPS:
            assert width / 2 ** (S - 1) <= acc / 2 < width / 2 ** (S - 2)
    assert search_steps(95.0, 1e-2) == 16  # 95 / 2^15 = 0.0029 <= 0.005 < 95 / 2^14
    assert search_steps(float("inf"), 1e-2) == 6
