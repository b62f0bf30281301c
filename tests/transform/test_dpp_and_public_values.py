"""Declared-public parameters are fixed to their values (a model non-DPP only through them
becomes DPP in the private ones), and a refusal names the term that breaks DPP."""

from __future__ import annotations

import warnings

import cvxpy as cp
import numpy as np
import pytest

import cvxdp
from cvxdp.errors import PrivacySpecError, UnsupportedProblemError
from cvxdp.transform.domain import with_public_values


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


def test_a_public_parameter_in_an_atoms_data_is_fixed_too():
    """Held-out trial 17: ``cp.huber(A @ x - b, M)`` with ``M`` a declared-public Parameter was
    never certified (``objective_upper`` inf at epsilon 1e6, true gap 6e-8), while the same
    model with ``M = 1.0`` was (relative gap 3.4e-5). CVXPY keeps ``huber``'s ``M`` as the
    atom's data, not an argument, so fixing the public parameters' values (a tree copy of the
    arguments) left ``M`` a parameter and the fit-term detection did not read it as public."""
    rng = np.random.default_rng(5)
    m, n = 80, 5
    A = rng.normal(size=(m, n))
    b0 = A @ rng.normal(size=n) + 0.2 * rng.normal(size=m)
    b = cp.Parameter(m, name="b", value=b0)
    M = cp.Parameter(nonneg=True, name="M", value=1.0)
    x = cp.Variable(n, name="x")
    prob = cp.Problem(cp.Minimize(cp.sum(cp.huber(A @ x - b, M))))
    exact = cp.Problem(prob.objective).solve()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = prob.solve_private(epsilon=1e6, delta=1e-6, rng=0, public=[M],
                                 private=cvxdp.ScalarPrivacy(b, sensitivity=0.05))
    cert = sol.certificate
    assert float(prob.objective.value) - exact <= cert.gap_bound + 1e-7
    assert cert.relative_gap_bound <= 1e-2 and sol.status == "optimal_inaccurate"
    huber_copy = with_public_values(prob, [M]).objective.expr.args[0]
    assert not huber_copy.M.parameters() and float(huber_copy.M.value) == 1.0
