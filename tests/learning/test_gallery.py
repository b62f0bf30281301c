"""The gallery of row-level models at epsilon 1 and 1e6, against the exact solve."""

from __future__ import annotations

import math

import cvxpy as cp
import pytest

import cvxdp
from cvxdp.status import DEFAULT_ACCURACY
from tests.learning.gallery import GALLERY, data

DATA = data()


def _promised(bound):
    # the status is a promise: success only when the proven bound (over max(1, |OPT|) >= 1)
    # meets the default accuracy
    return cp.OPTIMAL_INACCURATE if bound <= DEFAULT_ACCURACY else cp.USER_LIMIT


@pytest.mark.parametrize("name", sorted(GALLERY))
def test_near_exact_at_huge_epsilon(name):
    prob, spec = GALLERY[name](*DATA)
    sol = prob.solve_private(epsilon=1e6, delta=1e-6, private=spec, rng=0, reference=True)
    assert sol.status == cp.OPTIMAL_INACCURATE
    ref = sol.validation.reference_value
    assert abs(sol.validation.objective_gap) <= 1e-2 * max(1.0, abs(ref))
    # the released value is the noisy loss sum plus the public regulariser: near the optimum
    assert abs(sol.value - ref) <= 1e-2 * max(1.0, abs(ref))
    assert prob.value == pytest.approx(sol.value) and prob.status == sol.status


@pytest.mark.parametrize("name", sorted(GALLERY))
def test_epsilon_one_is_private_bounded_and_within_its_bound(name):
    prob, spec = GALLERY[name](*DATA)
    sol = prob.solve_private(epsilon=1.0, delta=1e-6, private=spec, rng=1, reference=True)
    assert sol.privacy.epsilon <= 1.0 * (1 + 1e-9) and sol.privacy.delta == 1e-6
    bound = sol.info["excess_risk_bound"]
    assert math.isfinite(bound) and sol.status == _promised(bound)
    gap = sol.validation.objective_gap
    assert -1e-6 <= gap <= bound          # the proven bound holds (probability >= 1 - 1e-3)
    for con in prob.constraints:          # the released point is feasible (public constraints)
        assert con.violation().max() <= 1e-6
    assert sol.info["mechanism"] == sol.info["auto"]["chosen"]


def test_gallery_covers_eight_models():
    assert len(GALLERY) >= 8


@pytest.mark.parametrize("budget", [{"epsilon": 1.0}, {"rho": 0.5}], ids=["pure", "zcdp"])
@pytest.mark.parametrize("name", sorted(GALLERY))
def test_pure_and_zcdp_budgets_under_add_remove(name, budget):
    prob, spec = GALLERY[name](*DATA)
    spec = cvxdp.RowPrivacy(spec.X, spec.y, row_bound=spec.row_bound,
                            label_bound=spec.label_bound, neighbours="add_remove")
    sol = prob.solve_private(private=spec, rng=2, reference=True, **budget)
    if "rho" in budget:
        assert sol.privacy.rho <= 0.5 * (1 + 1e-9) and sol.info["mechanism"] != "objective"
    else:
        assert sol.privacy.delta == 0 and sol.privacy.epsilon <= 1.0 * (1 + 1e-9)
        assert sol.info["mechanism"] != "gradient"
    assert sol.status == _promised(sol.info["excess_risk_bound"])
    assert -1e-6 <= sol.validation.objective_gap <= sol.info["excess_risk_bound"]
