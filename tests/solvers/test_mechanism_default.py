"""mechanism="auto" as the default of solve_private on general models (issue 23 item 1)."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest

import cvxdp
from cvxdp.status import status_of


def _lp():
    rng = np.random.default_rng(0)
    A = cp.Parameter((40, 15), name="A", value=rng.uniform(0, 1, (40, 15)))
    x = cp.Variable(15, nonneg=True, name="x")
    c = rng.uniform(0, 1, 15)
    prob = cp.Problem(cp.Maximize(c @ x), [A @ x <= 0.7, cp.sum(x) == 1])
    return prob, A, x, c


def test_default_is_auto_and_says_which_mechanism_ran():
    prob, A, x, c = _lp()
    sol = prob.solve_private(epsilon=1.0, delta=1e-6, rng=7,
                             private=cvxdp.ConstraintPrivacy(A, sensitivity=1e-4))
    assert sol.info["mechanism"] == "perturbation" and "rule" in sol.info["auto"]
    assert (sol.status, sol.status_reason) == status_of(sol.certificate)  # follows the bound
    assert prob.status == sol.status
    xp = x.value.copy()
    assert np.max(A.value @ xp) <= 0.7 + 1e-7  # feasible for the true data
    # the certificate holds: true violation and true gap (minimised -c'x) within its bounds
    exact = cp.Problem(prob.objective, [A.value @ x <= 0.7, cp.sum(x) == 1]).solve()
    true_viol = max(0.0, float(np.max(A.value @ xp)) - 0.7, abs(float(xp.sum()) - 1),
                    float(-xp.min()))
    assert true_viol <= sol.certificate.violation_bound + 1e-7
    assert sol.certificate.optimum_lower <= -exact + 1e-7
    assert exact - float(c @ xp) <= sol.certificate.gap_bound + 1e-7
    # the true relative gap is above 1e-2 here, so no certificate can claim the default accuracy
    assert exact - float(c @ xp) > 1e-2 and sol.status == cp.USER_LIMIT


def test_mwu_only_options_make_auto_take_the_mwu():
    prob, A, x, c = _lp()
    with pytest.warns(Warning):
        sol = prob.solve_private(epsilon=1.0, delta=1e-6, rng=7, max_iterations=50,
                                 private=cvxdp.ConstraintPrivacy(A, sensitivity=1e-4))
    assert sol.info["mechanism"] == "mwu"
    assert "max_iterations" in sol.info["auto"]["rule"]


def test_verbose_works_with_every_mechanism(capsys):
    prob, A, x, c = _lp()
    for mech in ("auto", "perturbation"):
        sol = prob.solve_private(epsilon=1.0, delta=1e-6, rng=7, verbose=True, mechanism=mech,
                                 private=cvxdp.ConstraintPrivacy(A, sensitivity=1e-4))
        out = capsys.readouterr().out
        assert "general model" in out and f"status {sol.status}" in out
        if sol.status_reason:  # the printed line says why (quoting the certified numbers)
            assert "certified relative gap" in " ".join(out.split())


def test_perturbation_refuses_mwu_options_by_name():
    prob, A, x, c = _lp()
    with pytest.raises(TypeError, match="belong to the MWU"):
        prob.solve_private(epsilon=1.0, delta=1e-6, mechanism="perturbation", target=0.5,
                           private=cvxdp.ConstraintPrivacy(A, sensitivity=1e-4))
