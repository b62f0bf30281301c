"""Equivalent ways of writing a row loss are read alike; a refusal names the user's expression
(never a CVXPY-internal atom such as PowerApprox)."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest

import cvxdp
from cvxdp.errors import UnsupportedProblemError
from cvxdp.learning.detect import detect

N, D = 50, 3


def _rows():
    rng = np.random.default_rng(0)
    X = cp.Parameter((N, D), value=rng.normal(size=(N, D)) / 2, name="X")
    y = cp.Parameter(N, value=rng.normal(size=N), name="y")
    return X, y, cvxdp.RowPrivacy(X, y, row_bound=2.0, label_bound=3.0)


def _pieces(model):
    return [(p.kind, p.coef, tuple(map(tuple, p.args))) for p in model.loss.pieces]


def test_squared_norm_and_quad_over_lin_are_sum_squares():
    X, y, spec = _rows()
    w = cp.Variable(D)
    r = X @ w - y
    forms = [cp.sum_squares(r) / N, cp.norm(r, 2) ** 2 / N, cp.quad_over_lin(r, N),
             cp.power(cp.norm(r, 2), 2) / N, 2 * cp.quad_over_lin(r, 2 * N)]
    want = _pieces(detect(cp.Problem(cp.Minimize(forms[0]), [cp.norm(w, 2) <= 3]), spec))
    assert len(want) == 1 and want[0][0] == "square" and want[0][1] == pytest.approx(1 / N)
    for loss in forms[1:]:
        got = _pieces(detect(cp.Problem(cp.Minimize(loss), [cp.norm(w, 2) <= 3]), spec))
        assert len(got) == 1 and got[0][0] == "square"
        assert got[0][1] == pytest.approx(1 / N, rel=1e-12) and got[0][2] == want[0][2]


@pytest.mark.parametrize("make", [lambda r: cp.norm(r, 2), lambda r: cp.norm(r, 3) ** 2,
                                  lambda r: cp.quad_over_lin(r, cp.Variable(pos=True))])
def test_refusal_names_the_users_expression(make):
    X, y, spec = _rows()
    w = cp.Variable(D)
    prob = cp.Problem(cp.Minimize(make(X @ w - y)), [cp.norm(w, 2) <= 3])
    with pytest.raises(UnsupportedProblemError) as err:
        detect(prob, spec)
    msg = str(err.value)
    assert "Approx" not in msg and "X @ " in msg, msg
    assert "cp.sum_squares" in msg
