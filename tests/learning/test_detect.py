"""RowPrivacy declarations and model detection: accepted shapes, refusals that name the term."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest

import cvxdp
from cvxdp.errors import PrivacySpecError, UnsupportedProblemError
from cvxdp.learning import detect

N, D = 30, 3


@pytest.fixture
def pars():
    rng = np.random.default_rng(0)
    X = cp.Parameter((N, D), name="X", value=rng.uniform(-0.5, 0.5, (N, D)))
    y = cp.Parameter(N, name="y", value=np.sign(rng.normal(size=N)))
    w = cp.Variable(D, name="w")
    return X, y, w


def spec(X, y=None, **kw):
    kw.setdefault("row_bound", 1.0)
    if y is not None:
        kw.setdefault("label_bound", 1.0)
    return cvxdp.RowPrivacy(X, y, **kw)


# -- declarations -------------------------------------------------------------------------
def test_bad_declarations_are_typed_errors_that_name_the_argument(pars):
    X, y, w = pars
    with pytest.raises(PrivacySpecError, match="row_bound"):
        cvxdp.RowPrivacy(X, y, label_bound=1.0)
    with pytest.raises(PrivacySpecError, match="label_bound"):
        cvxdp.RowPrivacy(X, y, row_bound=1.0)
    with pytest.raises(PrivacySpecError, match="label_bound= was given without y"):
        cvxdp.RowPrivacy(X, row_bound=1.0, label_bound=1.0)
    with pytest.raises(PrivacySpecError, match="2-D cvxpy.Parameter"):
        cvxdp.RowPrivacy(np.ones((N, D)), row_bound=1.0)
    with pytest.raises(PrivacySpecError, match=r"shape \(30,\)"):
        cvxdp.RowPrivacy(X, cp.Parameter(N + 1), row_bound=1.0, label_bound=1.0)
    with pytest.raises(PrivacySpecError, match="neighbours"):
        spec(X, y, neighbours="swap")
    with pytest.raises(PrivacySpecError, match="finite number > 0"):
        spec(X, y, row_bound=-1.0)
    with pytest.raises(PrivacySpecError, match="alone"):
        cp.Problem(cp.Minimize(cp.sum_squares(X @ w - y))).solve_private(
            epsilon=1.0, delta=1e-6,
            private=[spec(X, y), cvxdp.ScalarPrivacy(cp.Parameter(), sensitivity=1.0)])


# -- accepted shapes ----------------------------------------------------------------------
def test_logistic_0_1_form_is_a_logistic_and_a_linear_piece(pars):
    X, y, w = pars
    prob = cp.Problem(cp.Maximize(cp.sum(cp.multiply(y, X @ w) - cp.logistic(X @ w)) / N))
    model = detect(prob, spec(X, y))
    kinds = sorted(pc.kind for pc in model.loss.pieces)
    assert kinds == ["lin", "logistic"] and model.sense == -1.0
    # lin: -y p / N (minimisation sense); logistic: p / N
    lin = next(pc for pc in model.loss.pieces if pc.kind == "lin")
    assert lin.coef * lin.args[0][2] == pytest.approx(-1.0 / N)
    assert model.loss.lipschitz(np.inf, 1.0) == pytest.approx(2.0 / N)
    assert model.loss.smoothness(1.0) == pytest.approx(0.25 / N)


def test_svm_intercept_and_strong_convexity_are_read(pars):
    X, y, w = pars
    v = cp.Variable()
    obj = cp.sum(cp.pos(1 - cp.multiply(y, X @ w - v))) + 3 * cp.sum_squares(w)
    model = detect(cp.Problem(cp.Minimize(obj)), spec(X, y))
    assert model.v is v and model.sign_v == -1.0
    assert model.mu == 0.0            # v is not regularised: no strong convexity in theta
    model2 = detect(cp.Problem(cp.Minimize(cp.sum(cp.pos(1 - cp.multiply(y, X @ w)))
                                           + 3 * cp.sum_squares(w))), spec(X, y))
    assert model2.mu == pytest.approx(6.0)
    assert model2.feature_bound == 1.0 and model.feature_bound == pytest.approx(np.sqrt(2))


def test_explain_describes_or_names_the_offending_term(pars):
    X, y, w = pars
    good = cp.Problem(cp.Minimize(cp.sum(cp.huber(X @ w - y, 1.0))))
    assert cvxdp.explain(good, spec(X, y)) == []
    bad = cp.Problem(cp.Minimize(cp.norm2(X @ w - y)))
    (msg,) = cvxdp.explain(bad, spec(X, y))
    assert "'norm(X @ w" in msg and "not a sum over rows" in msg and "Pnorm" not in msg


# -- refusals -----------------------------------------------------------------------------
@pytest.mark.parametrize("build, match", [
    (lambda X, y, w: (cp.sum_squares(X @ w - y), [X @ w >= 0]), r"constraint 0 \(0\.0 <= X @ w\)"),
    (lambda X, y, w: (cp.sum_squares(X.T @ y - w), []), "not a row-level learning model"),
    (lambda X, y, w: (cp.sum_squares(X @ w - y) + cp.sum(cp.multiply(y, y)), []),
     "y multiplies something other than X @ w"),
    (lambda X, y, w: (cp.sum_squares(X @ w - np.arange(N)), []), "per-row public vector"),
    (lambda X, y, w: (cp.sum(cp.exp(X @ w)), []), "atom exp"),
    (lambda X, y, w: (cp.sum_squares(X @ w - y) + cp.sum_squares(X @ cp.Variable(D)), []),
     "two different Variables"),
])
def test_refusals_name_the_term(pars, build, match):
    X, y, w = pars
    obj, cons = build(X, y, w)
    prob = cp.Problem(cp.Minimize(obj), cons)
    uses_y = y.id in {p.id for p in prob.objective.parameters()}
    with pytest.raises(UnsupportedProblemError, match=match):
        prob.solve_private(epsilon=1.0, delta=1e-6, private=spec(X, y if uses_y else None))


def test_spec_must_name_the_models_parameter(pars):
    X, y, w = pars
    other = cp.Parameter((N, D), value=np.zeros((N, D)))
    prob = cp.Problem(cp.Minimize(cp.sum_squares(X @ w - y)), [cp.norm(w) <= 1])
    with pytest.raises(PrivacySpecError, match="does not use the private parameter"):
        prob.solve_private(epsilon=1.0, delta=1e-6, private=spec(other, y))


def test_unbounded_squared_loss_is_refused_with_the_fix(pars):
    X, y, w = pars
    prob = cp.Problem(cp.Minimize(cp.sum_squares(X @ w - y)))
    with pytest.raises(UnsupportedProblemError, match="norm-ball or box constraint"):
        prob.solve_private(epsilon=1.0, delta=1e-6, private=spec(X, y))


def test_non_dcp_model_is_refused(pars):
    X, y, w = pars
    prob = cp.Problem(cp.Minimize(-cp.sum(cp.logistic(cp.multiply(y, X @ w)))))
    with pytest.raises(UnsupportedProblemError, match="not DCP"):
        prob.solve_private(epsilon=1.0, delta=1e-6, private=spec(X, y))


def test_explain_never_raises_on_a_mixed_spec_list(pars):
    X, y, w = pars
    prob = cp.Problem(cp.Minimize(cp.sum_squares(X @ w - y)), [cp.norm(w) <= 1])
    (msg,) = cvxdp.explain(prob, [spec(X, y), cvxdp.ScalarPrivacy(cp.Parameter(),
                                                                  sensitivity=1.0)])
    assert "pass it alone" in msg


def test_public_declares_every_other_parameter(pars):
    X, y, w = pars
    lam = cp.Parameter(nonneg=True, value=0.1, name="lam")
    prob = cp.Problem(cp.Minimize(cp.sum(cp.huber(X @ w - y)) + lam * cp.sum_squares(w)),
                      [cp.norm(w) <= 2])
    with pytest.raises(PrivacySpecError, match="'lam' of the model are neither private nor public"):
        prob.solve_private(epsilon=1.0, delta=1e-6, private=spec(X, y), public=[])
    sol = prob.solve_private(epsilon=1.0, delta=1e-6, private=spec(X, y), public=[lam], rng=0,
                             accuracy=1e6)    # the bound, not the declaration, sets the status
    assert sol.status == cp.OPTIMAL_INACCURATE and sol.info["excess_risk_bound"] <= 1e6
