"""The MWU's private objective search decides from a threshold, not from another noisy run
(issue 22 item 2): an accepted run's noisy violation is within the threshold, and the released
point's violation with the TRUE data is within the released bound v + z sigma."""

from __future__ import annotations

import warnings

import cvxpy as cp
import numpy as np
import pytest

import cvxdp


def _lp(seed: int):
    rng = np.random.default_rng(seed)
    A = cp.Parameter((15, 6), name="A", value=rng.uniform(0, 1, (15, 6)))
    x = cp.Variable(6, nonneg=True, name="x")
    prob = cp.Problem(cp.Maximize(rng.uniform(0, 1, 6) @ x), [A @ x <= 1, cp.sum(x) <= 3])
    return prob, A


@pytest.mark.parametrize("eps,seed", [(1e6, 0), (1e6, 1), (1e3, 2), (1e3, 3)])
def test_accepted_targets_are_within_the_threshold_and_the_bound_holds(eps, seed):
    prob, A = _lp(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = prob.solve_private(epsilon=eps, delta=1e-6, rng=seed, mechanism="mwu",
                                 accuracy=0.05, max_iterations=3000, reference=True,
                                 private=cvxdp.ConstraintPrivacy(A, sensitivity=0.01))
    runs = sol.privacy.details["search_runs"]
    for r in runs[1:]:
        assert r["reached"] == (r["noisy_violation"] <= r["threshold"])
    # the released point's violation of the TRUE constraints is within the released bound
    assert sol.validation.max_violation <= sol.info["violation_bound"] + 1e-9
