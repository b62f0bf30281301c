"""Declared-public parameters are fixed to their values (a model non-DPP only through them
becomes DPP in the private ones), and a refusal names the term that breaks DPP."""

from __future__ import annotations

import warnings

import cvxpy as cp
import numpy as np
import pytest

import cvxdp
from cvxdp.errors import PrivacySpecError, UnsupportedProblemError


def test_public_gamma_times_a_private_term_is_solved(factor_portfolio):
    prob, mu, F, gamma, w = factor_portfolio
    assert not prob.is_dcp(dpp=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = prob.solve_private(epsilon=1.0, delta=1e-6, rng=0, public=[gamma, mu],
                                 private=cvxdp.ConstraintPrivacy(F, sensitivity=1e-3))
    assert sol.privacy.details["public_parameters"] == ["gamma", "mu"]
    assert w.value is not None and abs(w.value.sum() - 1) < 1e-6
    assert prob.value == sol.value and prob.status == sol.status
    assert cvxdp.explain(prob, cvxdp.ConstraintPrivacy(F, sensitivity=1e-3),
                         public=[gamma, mu]) == []


def test_refusal_names_the_term_that_breaks_dpp(factor_portfolio):
    prob, mu, F, gamma, w = factor_portfolio
    with pytest.raises(PrivacySpecError, match=r"term\(s\) 'gamma \* quad_over_lin\(F.T @ w"):
        prob.solve_private(epsilon=1.0, delta=1e-6, rng=0, public=[mu], mechanism="mwu",
                           private=cvxdp.ConstraintPrivacy([F, gamma], sensitivity=1e-3))


def test_auto_refusal_says_what_each_mechanism_needs():
    rng = np.random.default_rng(0)
    r = 4
    As = []
    for i in range(3):
        M = rng.normal(size=(r, r))
        As.append(cp.Parameter((r, r), symmetric=True, name=f"A{i}", value=(M + M.T) / 2))
    X = cp.Variable((r, r), symmetric=True)
    cons = [X >> 0] + [cp.trace(A @ X) == rng.normal() for A in As]
    with pytest.raises(UnsupportedProblemError, match=r"auto.*both.*cp.trace\(X\) <= R"):
        cp.Problem(cp.Minimize(cp.trace(X)), cons).solve_private(
            epsilon=1.0, delta=1e-6, rng=0, private=cvxdp.ConstraintPrivacy(As, 1e-3))
