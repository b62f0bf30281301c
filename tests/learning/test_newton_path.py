"""Objective perturbation's Newton path against its CVXPY path on the same noise draw.

The Newton path certifies ``phi(theta^) - phi* <= g`` (``g`` the plan's ``solve_gap``); the
CVXPY path's point ``theta_c`` is feasible, so ``phi(theta_c) >= phi*`` and the certificate
implies ``phi(theta^) <= phi(theta_c) + g`` (``theta_c`` projected onto F first, exactly: the
conic solver's point violates the constraints by about 1e-9, enough to lower phi below phi* by
more than g); strong convexity (``m = Delta + mu``) then gives
``||theta^ - theta_c|| <= r + sqrt(2 (phi(theta_c) - phi(theta^) + g) / m)``.  Both are
checked, with a margin of 1e-12 relative for evaluating phi in floating point, across
logistic / squared / Huber losses without constraints, with a box and with an l2 ball.
"""

from __future__ import annotations

import math

import cvxpy as cp
import numpy as np
import pytest

import cvxdp
import cvxdp.learning.objective_perturbation as op
from cvxdp.errors import UnsupportedProblemError
from cvxdp.learning.detect import detect
from cvxdp.learning.domain import theta_bound
from cvxdp.learning.newton_solve import simple_structure
from cvxdp.learning.solve import _clip
from cvxdp.privacy.budgets import ApproxDP, PureDP
from cvxdp.privacy.rng import as_generator
from tests.learning.gallery import GALLERY, data

N, D = 300, 4


def _data(seed=5):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(N, D)) / math.sqrt(D)
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
    w = np.array([2.0, -1.5, 1.0, 0.5])
    y_cls = np.where(rng.uniform(size=N) < 1 / (1 + np.exp(-X @ w)), 1.0, -1.0)
    y_reg = np.clip(X @ w / 2 + 0.1 * rng.normal(size=N), -1, 1)
    return X, y_cls, y_reg


def _model(loss, shape, intercept=False):
    X, y_cls, y_reg = _data()
    Xp = cp.Parameter((N, D), value=X)
    yp = cp.Parameter(N, value=y_cls if loss == "logistic" else y_reg)
    w = cp.Variable(D, name="w")
    v = cp.Variable(name="v") if intercept else None
    p = Xp @ w + (v if intercept else 0)
    lam = 0.01
    if loss == "logistic":
        obj = cp.sum(cp.logistic(-cp.multiply(yp, p))) / N + lam * cp.sum_squares(w)
    elif loss == "squared":
        obj = cp.sum_squares(p - yp) / N
    else:
        obj = cp.sum(cp.huber(p - yp, 0.5)) / N + lam * cp.sum_squares(w)
    if intercept:
        obj = obj + lam * cp.square(v)
    cons = {"none": [], "box": [w <= 0.3, w >= -0.3], "ball": [cp.norm(w, 2) <= 0.5],
            "abs": [cp.abs(w) <= 0.4]}[shape]
    prob = cp.Problem(cp.Minimize(obj), cons)
    return prob, cvxdp.RowPrivacy(Xp, yp, row_bound=1.0, label_bound=1.0)


def _phi(model, plan, X, y, b, th):
    """The perturbed objective, evaluated from the model's own CVXPY regulariser."""
    Xt = X if model.v is None else np.column_stack([X, np.full(N, model.sign_v)])
    k = 0
    for var in [model.w] + ([model.v] if model.v is not None else []):
        var.value = th[k:k + var.size] if var.size > 1 else float(th[k])
        k += var.size
    return (float(np.sum(plan.loss.values(Xt @ th, y))) + float(model.regulariser.value)
            + plan.Delta / 2 * float(th @ th) + float(b @ th))


CASES = [("logistic", "none"), ("logistic", "box"), ("logistic", "ball"),
         ("logistic", "abs"), ("squared", "box"), ("squared", "ball"), ("huber", "none"),
         ("huber", "box"), ("huber", "ball")]


@pytest.mark.parametrize("budget", [PureDP(1.0), ApproxDP(1.0, 1e-6)], ids=["pure", "gauss"])
@pytest.mark.parametrize(("loss", "shape"), CASES)
def test_newton_path_meets_its_certificate_against_cvxpy(loss, shape, budget, monkeypatch):
    prob, spec = _model(loss, shape)
    model = detect(prob, spec)
    plan = op.plan_objective_perturbation(model, budget, theta_bound(model), beta=1e-3)
    assert plan.structure is not None and plan.solve_gap > 0
    X, y, _ = _clip(model)
    th_c, _, info_c = op.objective_perturbation(model, plan, budget, X, y, as_generator(7),
                                                path="cvxpy")

    def no_cvxpy(*a, **k):
        raise AssertionError("the Newton path fell back to CVXPY")

    monkeypatch.setattr(op, "solve_on_rows", no_cvxpy)
    gen = as_generator(7)
    th_n, _, info_n = op.objective_perturbation(model, plan, budget, X, y, gen)
    assert info_n == info_c      # the same public info whichever path solved
    # the same noise draw: replay the generator calls of the mechanism
    g2 = as_generator(7)
    if plan.sigma is not None:
        b = g2.normal(0.0, plan.sigma, size=model.dim)
    else:
        u = g2.standard_normal(model.dim)
        b = g2.gamma(model.dim, plan.gamma_scale) * u / np.linalg.norm(u)
    th_c = plan.structure.project(th_c)
    f_n, f_c = (_phi(model, plan, X, y, b, t) for t in (th_n, th_c))
    slack = 1e-12 * max(1.0, abs(f_c))
    assert f_n <= f_c + plan.solve_gap + slack
    m = plan.Delta + model.mu
    dist = plan.solve_distance + math.sqrt(2 * max(f_c - f_n + plan.solve_gap + slack, 0) / m)
    assert np.linalg.norm(th_n - th_c) <= dist
    # the released point is feasible exactly (an exact projection)
    for con in model.constraints:
        assert float(np.max(con.violation())) <= 1e-12


def test_intercept_with_a_ball_on_w_only():
    prob, spec = _model("logistic", "ball", intercept=True)
    model = detect(prob, spec)
    S = simple_structure(model)
    assert S is not None and S.ball is not None and list(S.ball[0]) == [0, 1, 2, 3]
    budget = PureDP(1.0)
    plan = op.plan_objective_perturbation(model, budget, theta_bound(model), beta=1e-3)
    X, y, _ = _clip(model)
    th_c = op.objective_perturbation(model, plan, budget, X, y, as_generator(3),
                                     path="cvxpy")[0]
    th_n = op.objective_perturbation(model, plan, budget, X, y, as_generator(3))[0]
    assert np.linalg.norm(th_n - th_c) <= 1e-5
    assert np.linalg.norm(th_n[:D]) <= 0.5 * (1 + 1e-12)


def test_the_tolerance_costs_at_most_its_share_of_the_bound():
    prob, spec = _model("logistic", "ball")
    model = detect(prob, spec)
    W = theta_bound(model)
    plan = op.plan_objective_perturbation(model, PureDP(1.0), W, beta=1e-3)
    monkey = op.simple_structure
    try:
        op.simple_structure = lambda m: None
        plain = op.plan_objective_perturbation(model, PureDP(1.0), W, beta=1e-3)
    finally:
        op.simple_structure = monkey
    assert plain.structure is None and plain.solve_gap is None
    assert plain.bound < plan.bound <= plain.bound * (1 + op.SOLVE_SHARE * (1 + 1e-9))
    # the gap and distance are tied by strong convexity: g = m r^2 / 2
    m = plan.Delta + model.mu
    assert plan.solve_gap == pytest.approx(m * plan.solve_distance ** 2 / 2, rel=1e-12)


def _structure(cons, reg=None, **attrs):
    X = cp.Parameter((N, D), value=_data()[0])
    w = cp.Variable(D, **attrs)
    obj = cp.sum(cp.logistic(X @ w)) / N + (0.1 * cp.sum_squares(w) if reg is None else reg(w))
    prob = cp.Problem(cp.Minimize(obj), cons(w))
    return simple_structure(detect(prob, cvxdp.RowPrivacy(X, row_bound=1.0)))


def test_structure_reads_boxes_balls_and_attributes():
    S = _structure(lambda w: [w <= np.arange(D), -1 <= w, cp.norm(w, "inf") <= 2.5])
    assert np.allclose(S.lo, -1) and np.allclose(S.hi, [0, 1, 2, 2.5]) and S.ball is None
    assert np.allclose(S.q, 0.2)
    S = _structure(lambda w: [], nonneg=True)
    assert np.allclose(S.lo, 0) and np.all(np.isinf(S.hi))
    S = _structure(lambda w: [cp.sum_squares(w) <= 4, cp.norm(w, 2) <= 3])
    assert S.ball is not None and S.ball[1] == 2.0


@pytest.mark.parametrize("what", ["norm1 regulariser", "ball and box", "equality",
                                  "simplex", "linear regulariser", "fixed box",
                                  "zero ball", "bounds on a slice"])
def test_other_public_parts_keep_the_cvxpy_path(what):
    cons, reg = (lambda w: []), None
    if what == "norm1 regulariser":
        reg = lambda w: 0.1 * cp.sum_squares(w) + 0.1 * cp.norm1(w)  # noqa: E731
    elif what == "ball and box":
        cons = lambda w: [cp.norm(w, 2) <= 1, w <= 0.5]  # noqa: E731
    elif what == "equality":
        cons = lambda w: [w[0] == 0.1]  # noqa: E731
    elif what == "simplex":
        cons = lambda w: [w >= 0, cp.sum(w) == 1]  # noqa: E731
    elif what == "fixed box":
        cons = lambda w: [w <= 0.0, w >= 0.0]  # noqa: E731
    elif what == "zero ball":
        cons = lambda w: [cp.norm(w, 2) <= 0.0]  # noqa: E731
    elif what == "bounds on a slice":
        cons = lambda w: [w[:2] <= 0.5]  # noqa: E731
    else:
        reg = lambda w: 0.1 * cp.sum_squares(w) + np.ones(D) @ w  # noqa: E731
    assert _structure(cons, reg) is None


def test_refusals_are_unchanged_by_the_newton_path():
    # a squared loss without a bounded domain is still refused with the fix
    prob, spec = _model("squared", "none")
    with pytest.raises(UnsupportedProblemError, match="norm-ball or box"):
        prob.solve_private(epsilon=1.0, private=spec, mechanism="objective")


def test_a_numerical_failure_inside_newton_raises_nothing(monkeypatch):
    # whether a factorisation fails depends on the private rows: the mechanism must neither
    # raise nor warn, and falls back to the CVXPY solve (the same release as path="cvxpy")
    import warnings

    import cvxdp.learning.newton_solve as ns

    prob, spec = _model("logistic", "none")
    model = detect(prob, spec)
    budget = PureDP(1.0)
    plan = op.plan_objective_perturbation(model, budget, theta_bound(model), beta=1e-3)
    X, y, _ = _clip(model)
    ref = op.objective_perturbation(model, plan, budget, X, y, as_generator(2), path="cvxpy")

    def broken(*a, **k):
        warnings.warn("singular", RuntimeWarning, stacklevel=1)
        raise np.linalg.LinAlgError("not positive definite")

    monkeypatch.setattr(ns.linalg, "solve", broken)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = op.objective_perturbation(model, plan, budget, X, y, as_generator(2))
    assert np.array_equal(got[0], ref[0]) and got[2] == ref[2]


@pytest.mark.parametrize("name", ["logistic_ridge", "ridge", "squared_hinge_censored"])
def test_newton_certifies_the_tiny_targets_of_a_huge_epsilon(name, monkeypatch):
    # at epsilon 1e6 the target gap is ~1e-21: the step must be formed without cancellation
    # (th + step, then minus th, loses it), else Newton stalls and falls back to CVXPY
    prob, spec = GALLERY[name](*data())
    model = detect(prob, spec)
    budget = ApproxDP(0.95e6, 1e-6)
    plan = op.plan_objective_perturbation(model, budget, theta_bound(model), beta=1e-3)
    assert plan.structure is not None and plan.solve_gap < 1e-15
    X, y, _ = _clip(model)

    def no_cvxpy(*a, **k):
        raise AssertionError("the Newton path fell back to CVXPY")

    monkeypatch.setattr(op, "solve_on_rows", no_cvxpy)
    for seed in range(3):
        op.objective_perturbation(model, plan, budget, X, y, as_generator(seed))
