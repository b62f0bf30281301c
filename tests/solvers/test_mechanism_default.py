"""mechanism="auto" as the default of solve_private on general models (issue 23 item 1)."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest

import cvxdp


def _lp():
    rng = np.random.default_rng(0)
    A = cp.Parameter((40, 15), name="A", value=rng.uniform(0, 1, (40, 15)))
    x = cp.Variable(15, nonneg=True, name="x")
    prob = cp.Problem(cp.Maximize(rng.uniform(0, 1, 15) @ x), [A @ x <= 0.7, cp.sum(x) == 1])
    return prob, A, x


def test_default_is_auto_and_says_which_mechanism_ran():
    prob, A, x = _lp()
    sol = prob.solve_private(epsilon=1.0, delta=1e-6, rng=7,
                             private=cvxdp.ConstraintPrivacy(A, sensitivity=1e-4))
    assert sol.info["mechanism"] == "perturbation" and "rule" in sol.info["auto"]
    assert sol.status == cp.OPTIMAL_INACCURATE
    assert np.max(A.value @ x.value) <= 0.7 + 1e-7  # feasible for the true data


def test_mwu_only_options_make_auto_take_the_mwu():
    prob, A, x = _lp()
    with pytest.warns(Warning):
        sol = prob.solve_private(epsilon=1.0, delta=1e-6, rng=7, max_iterations=50,
                                 private=cvxdp.ConstraintPrivacy(A, sensitivity=1e-4))
    assert sol.info["mechanism"] == "mwu"
    assert "max_iterations" in sol.info["auto"]["rule"]


def test_verbose_works_with_every_mechanism(capsys):
    prob, A, x = _lp()
    for mech in ("auto", "perturbation"):
        prob.solve_private(epsilon=1.0, delta=1e-6, rng=7, verbose=True, mechanism=mech,
                           private=cvxdp.ConstraintPrivacy(A, sensitivity=1e-4))
        out = capsys.readouterr().out
        assert "general model" in out and "status optimal_inaccurate" in out


def test_perturbation_refuses_mwu_options_by_name():
    prob, A, x = _lp()
    with pytest.raises(TypeError, match="belong to the MWU"):
        prob.solve_private(epsilon=1.0, delta=1e-6, mechanism="perturbation", target=0.5,
                           private=cvxdp.ConstraintPrivacy(A, sensitivity=1e-4))
