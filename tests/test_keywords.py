"""The same keywords, checked the same way, at every entry point (issue 25 item 2).

One table of good and bad keywords and values (``CASES``) is driven through every public entry
point (``ENTRIES``).  A misspelt keyword is a ``TypeError`` naming the nearest valid one; a bad
value is a :class:`cvxdp.CvxdpError` naming the argument and the value (and never a raw
``OverflowError`` / ``ValueError`` from deep inside); the checks are those of
:mod:`cvxdp.arguments`, run before the entry function starts.
"""

from __future__ import annotations

import re
import warnings

import cvxpy as cp
import numpy as np
import pytest

import cvxdp
from cvxdp.arguments import COMMON_KEYWORDS
from cvxdp.errors import ArgumentError, BudgetError, PrivacyGuaranteeError, PrivacySpecError


def _lp():
    A = cp.Parameter((3, 2), name="A", value=np.array([[0.5, 0.2], [0.1, 0.6], [0.3, 0.3]]))
    x = cp.Variable(2, name="x")
    prob = cp.Problem(cp.Maximize(cp.sum(x)), [A @ x <= 1, x >= 0, x <= 1])
    return prob, cvxdp.ConstraintPrivacy(A, sensitivity=0.01)


_G = np.random.default_rng(0)
_X = _G.uniform(-0.5, 0.5, (60, 2))
_Y = _X @ np.array([0.3, -0.2])
_COVER = _G.uniform(0.1, 0.5, (30, 3))
_PTS = _G.uniform(0, 1, (60, 2))
_GAUSS = _G.normal(size=(4000, 2))


def _general(**kw):
    prob, spec = _lp()
    return cvxdp.solve_private(prob, private=spec, max_iterations=5, **kw)


def _sdp(**kw):
    mats = np.stack([np.diag(r) for r in _COVER[:, :2]])
    return cvxdp.covering_sdp(mats).solve_private(**kw)


#: name -> (call taking the keywords, takes rho=, takes iterations= (solve_private forwards
#: it to the path, after the same value check))
ENTRIES = {
    "solve_private": (_general, True, True),
    "covering_lp": (lambda **kw: cvxdp.covering_lp(_COVER).solve_private(**kw), True, False),
    "covering_sdp": (_sdp, True, False),
    "covering_socp": (lambda **kw: cvxdp.covering_socp(_COVER / 2).solve_private(**kw),
                      True, False),
    "min_enclosing_ball": (lambda **kw: cvxdp.min_enclosing_ball(_PTS).solve_private(
        bounds=(np.zeros(2), np.ones(2)), **kw), True, False),
    "john_ellipsoid": (lambda **kw: cvxdp.john_ellipsoid(_X).solve_private(
        closeness=0.1, row_bound=1.0, **kw), True, True),
    "least_squares": (lambda **kw: cvxdp.least_squares(_X, _Y, row_bound=1.0).solve_private(
        **kw), True, False),
    "random_projection": (lambda **kw: cvxdp.random_projection(_X, r=4, row_bound=1.0, **kw),
                          False, False),
    "relative_random_projection": (lambda **kw: cvxdp.estimation.random_projection
                                   .relative_random_projection(_X, r=4, row_bound=1.0, **kw),
                                   False, False),
    "private_gaussian": (lambda **kw: cvxdp.private_gaussian(_GAUSS, **kw), False, True),
}

BASE = {"epsilon": 1.0, "delta": 1e-6, "rng": 0}
OK = "ok"
#: (id, keywords replacing/added to BASE (None removes one), expected error or OK, match)
CASES = [
    ("good", {}, OK, None),
    ("good-verbose", {"verbose": True}, OK, None),
    ("good-reference-false", {"reference": False}, OK, None),
    ("good-budget", {"epsilon": None, "delta": None, "budget": cvxdp.ApproxDP(1.0, 1e-6)}, OK,
     None),
    ("good-generator", {"rng": np.random.default_rng(1)}, OK, None),
    ("typo-epsilon", {"epsilom": 1.0}, TypeError, r"did you mean 'epsilon'"),
    ("typo-delta", {"detla": 1e-6}, TypeError, r"did you mean 'delta'"),
    ("typo-accountant", {"acountant": None}, TypeError, r"did you mean 'accountant'"),
    ("typo-reference", {"refrence": True}, TypeError, r"did you mean 'reference'"),
    ("delta-0.5", {"delta": 0.5}, BudgetError, r"delta=0\.5 is out of range: delta must be"),
    ("delta-negative", {"delta": -1e-6}, BudgetError, r"delta=-1e-06 is out of range"),
    ("epsilon-negative", {"epsilon": -1}, BudgetError, r"epsilon=-1 is out of range"),
    ("epsilon-1e12", {"epsilon": 1e12}, BudgetError, r"epsilon=1000000000000\.0 is out of"),
    ("epsilon-inf", {"epsilon": np.inf}, BudgetError, r"epsilon=inf is out of range"),
    ("epsilon-text", {"epsilon": "x"}, BudgetError, r"epsilon='x' is not a number"),
    ("rho-negative", {"epsilon": None, "delta": None, "rho": -0.1}, BudgetError,
     r"rho=-0\.1 is out of range"),
    ("budget-not-a-budget", {"epsilon": None, "delta": None, "budget": 1.0}, BudgetError,
     r"budget=1\.0 is not a budget"),
    ("budget-and-epsilon", {"budget": cvxdp.PureDP(1.0)}, BudgetError, r"not both"),
    ("accuracy-text", {"accuracy": "x"}, PrivacyGuaranteeError, r"accuracy='x'"),
    ("accuracy-zero", {"accuracy": 0.0}, PrivacyGuaranteeError, r"accuracy=0\.0"),
    ("iterations-0", {"iterations": 0}, "iterations", r"iterations"),
    ("verbose-text", {"verbose": "x"}, ArgumentError, r"verbose='x' is not a flag"),
    ("reference-text", {"reference": "yes"}, ArgumentError, r"reference='yes' is not a flag"),
    ("rng-text", {"rng": "x"}, ArgumentError, r"rng='x' is not a source of randomness"),
    ("rng-legacy", {"rng": np.random.RandomState(0)}, ArgumentError, r"rng=RandomState"),
    ("accountant-text", {"accountant": "x"}, ArgumentError, r"accountant='x' is not an"),
    ("rho-good", {"epsilon": None, "delta": None, "rho": 0.5}, "rho", r"rho=0\.5"),
]


def _kwargs(change: dict) -> dict:
    kw = {**BASE, **change}
    return {k: v for k, v in kw.items() if v is not None or k in change and k not in BASE}


@pytest.mark.parametrize("entry", list(ENTRIES))
@pytest.mark.parametrize(("case", "change", "expect", "match"), CASES, ids=[c[0] for c in CASES])
def test_every_entry_point_checks_the_same_keywords_the_same_way(entry, case, change, expect,
                                                                 match):
    call, takes_rho, takes_iterations = ENTRIES[entry]
    if expect == "iterations":   # a method keyword: checked where it exists, unknown elsewhere
        expect, match = ((ArgumentError, r"iterations=0 is out of range: iterations must be an "
                          r"integer >= 1") if takes_iterations
                         else (TypeError, r"unknown option 'iterations'"))
    if expect == "rho":          # zCDP where the analysis is in zCDP, a clear refusal elsewhere
        expect, match = ((OK, None) if takes_rho else
                         (BudgetError, rf"rho=0\.5: {entry} is analysed in \(epsilon, delta\)"))
    kw = _kwargs(change)
    if expect == OK:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = call(**kw)
        assert out is not None
        return
    with pytest.raises(expect) as err:
        call(**kw)
    assert re.search(match, str(err.value)), str(err.value)
    if expect is not TypeError:
        assert isinstance(err.value, cvxdp.CvxdpError)


def test_the_table_covers_every_common_keyword():
    named = {k for _, change, _, _ in CASES for k in change}
    assert set(COMMON_KEYWORDS) <= named | {"typo"}, set(COMMON_KEYWORDS) - named


def test_a_common_keyword_an_entry_point_has_no_use_for_is_not_dropped_silently():
    with pytest.raises(TypeError, match="does not take reference=True"):
        cvxdp.random_projection(_X, r=4, row_bound=1.0, reference=True, **BASE)
    # least squares takes accuracy= now: its status follows its certificate at that accuracy
    sol = cvxdp.least_squares(_X, _Y, row_bound=1.0).solve_private(accuracy=0.1, **BASE)
    assert sol.status == ("optimal_inaccurate" if sol.certificate.meets(0.1) else "user_limit")
    assert sol.status_reason is None or "accuracy 0.1" in sol.status_reason


def test_sensitivity_messages_say_what_to_pass_once():
    """``sensitivity="1.0"`` said "got '1.0'." and then "(got '1.0': give a number, not str)";
    an array of per-entry sensitivities got no hint that its maximum is what to pass."""
    y = cp.Parameter(3, name="y", value=np.ones(3))
    with pytest.raises(PrivacySpecError) as err:
        cvxdp.ScalarPrivacy(y, sensitivity="1.0")
    assert str(err.value).count("'1.0'") == 1 and "not str" in str(err.value)
    with pytest.raises(PrivacySpecError, match=r"sensitivity=3\b.*every entry"):
        cvxdp.ScalarPrivacy(y, sensitivity=np.array([1.0, 2.0, 3.0]))


def _learning(**kw):
    X = cp.Parameter((60, 2), name="X", value=_X)
    y = cp.Parameter(60, name="y", value=_Y)
    w = cp.Variable(2, name="w")
    prob = cp.Problem(cp.Minimize(cp.sum_squares(X @ w - y) / 60), [cp.norm(w, 2) <= 1])
    return prob.solve_private(private=cvxdp.RowPrivacy(X, y, row_bound=1.0, label_bound=1.0),
                              **kw)


#: every entry point that takes the noise event's failure probability ``beta=``
BETA_ENTRIES = {
    "solve_private-auto": lambda **kw: _lp()[0].solve_private(private=_lp()[1], **kw),
    "solve_private-perturbation": lambda **kw: _lp()[0].solve_private(
        private=_lp()[1], mechanism="perturbation", **kw),
    "solve_private-mwu": lambda **kw: _general(mechanism="mwu", **kw),
    "row-privacy": _learning,
    "covering_lp": ENTRIES["covering_lp"][0],
    "covering_sdp": ENTRIES["covering_sdp"][0],
    "min_enclosing_ball": ENTRIES["min_enclosing_ball"][0],
    "private_gaussian": ENTRIES["private_gaussian"][0],
}


@pytest.mark.parametrize("entry", list(BETA_ENTRIES))
@pytest.mark.parametrize(("beta", "match"), [
    (2, r"beta=2 is out of range: beta must be a number in \(0, 1\)"),
    (0.0, r"beta=0\.0 is out of range"),
    (float("nan"), r"beta=nan is out of range"),
    ("x", r"beta='x' is not a number"),
    (True, r"beta=True is not a number"),
])
def test_beta_is_checked_the_same_way_everywhere(entry, beta, match):
    """``beta=2`` raised four different error types on four paths (a raw ``ValueError`` on the
    general path's perturbation, ``PrivacySpecError`` on covering, ...) and ``beta='x'`` a raw
    ``TypeError`` / ``ValueError`` from a comparison; one check, one message."""
    with pytest.raises(ArgumentError) as err:
        BETA_ENTRIES[entry](**BASE, beta=beta)
    assert re.search(match, str(err.value)), str(err.value)
