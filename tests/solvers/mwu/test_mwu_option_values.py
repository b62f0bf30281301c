"""The MWU path's and the covering path's own numeric options are checked before anything runs:
a value that is not a number (a string, a bool, NaN) or is out of range raises a typed cvxdp
error naming the option (before: accepted and run, or a raw IndexError / ValueError from deep in
the loop, or an InfeasibleProblemError blaming the model for ``norm_bound=-1``)."""

import cvxpy as cp
import numpy as np
import pytest

import cvxdp
from cvxdp.errors import CvxdpError

BASE = dict(epsilon=1.0, delta=1e-6, rng=0)


def _constraint_lp():
    A = cp.Parameter((6, 3), name="A", value=np.random.default_rng(0).uniform(0, 1, (6, 3)))
    x = cp.Variable(3, nonneg=True)
    prob = cp.Problem(cp.Maximize(cp.sum(x)), [A @ x <= 1, cp.sum(x) <= 2])
    return prob, cvxdp.ConstraintPrivacy(A, sensitivity=1e-3)


def _objective_lp():
    c = cp.Parameter(3, name="c", value=np.ones(3))
    x = cp.Variable(3, nonneg=True)
    prob = cp.Problem(cp.Maximize(c @ x), [x <= 1, cp.sum(x) <= 2])
    return prob, cvxdp.ObjectivePrivacy(c, sensitivity=1e-3)


NOT_NUMBERS = ["1", True, float("nan")]
MWU_BAD = ([("width", v) for v in [*NOT_NUMBERS, -1.0, 0.0, np.inf]]
           + [("trace_bound", v) for v in [*NOT_NUMBERS, -1.0]]
           + [("target", v) for v in [*NOT_NUMBERS, np.inf]]
           + [("search_steps", v) for v in [*NOT_NUMBERS, 0, 2.5]]
           + [("search_share", v) for v in [*NOT_NUMBERS, 0.0, 1.0]])


@pytest.mark.parametrize(("key", "value"), MWU_BAD, ids=[f"{k}={v!r}" for k, v in MWU_BAD])
def test_mwu_option_values_are_checked(key, value):
    prob, spec = _constraint_lp()
    with pytest.raises(CvxdpError, match=rf"\b{key}="):
        prob.solve_private(**BASE, private=spec, mechanism="mwu", **{key: value})


@pytest.mark.parametrize("value", [*NOT_NUMBERS, -1.0, 0.0, np.inf])
def test_objective_norm_bound_is_checked(value):
    prob, spec = _objective_lp()
    with pytest.raises(CvxdpError, match=r"\bnorm_bound="):
        prob.solve_private(**BASE, private=spec, mechanism="mwu", norm_bound=value)


COVERING_BAD = ([("opt_bounds", v) for v in [("0.1", "10"), "x", (True, 2), (0.1, np.nan)]]
                + [("opt", v) for v in NOT_NUMBERS]
                + [("s", v) for v in NOT_NUMBERS] + [("eta", v) for v in NOT_NUMBERS]
                + [("shrink", v) for v in ["x", True, np.nan]])


@pytest.mark.parametrize(("key", "value"), COVERING_BAD,
                         ids=[f"{k}={v!r}" for k, v in COVERING_BAD])
def test_covering_option_values_are_checked(key, value):
    cover = np.random.default_rng(0).uniform(0.1, 0.5, (30, 3))
    with pytest.raises(CvxdpError, match=rf"\b{key}="):
        cvxdp.covering_lp(cover).solve_private(**BASE, **{key: value})


def test_good_values_still_run():
    prob, spec = _constraint_lp()
    sol = prob.solve_private(**BASE, private=spec, mechanism="mwu", width=1.0, trace_bound=2.0,
                             search_steps=3, search_share=0.5)
    assert sol.status in ("optimal_inaccurate", "user_limit") and np.isfinite(sol.value)


@pytest.mark.parametrize("build", [lambda: cvxdp.covering_lp(np.ones((0, 3))),
                                   lambda: cvxdp.covering_sdp(np.ones((0, 2, 2)))],
                         ids=["lp", "sdp"])
def test_a_covering_program_without_rows_runs(build):
    """Zero rows is a dataset like any other under add/remove neighbours (the number of rows is
    private): it raised a raw ValueError from a reshape; it runs, and the point covers nothing
    it need not (every x >= 0 is feasible, so the cost is at most the released point's)."""
    sol = build().solve_private(**BASE)
    assert sol.status in ("optimal_inaccurate", "user_limit")
    assert np.isfinite(sol.value) and sol.value >= 0
