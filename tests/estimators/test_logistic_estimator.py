"""PrivateLogisticRegression: against scikit-learn's exact fit of the same objective, on
accuracy, and on its public arguments."""

from __future__ import annotations

import numpy as np
import pytest

import cvxdp
from cvxdp.errors import CvxdpError
from cvxdp.estimators import PrivateLogisticRegression


def _data(n=4000, seed=0, noise=0.5):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, 3))
    y = (X @ np.array([2.0, -1.0, 0.5]) + 0.3 + noise * rng.logistic(size=n) > 0).astype(int)
    return X, y


def test_huge_epsilon_is_liblinears_fit_of_the_same_objective():
    """epsilon = 1e6, box (-1, 1) (midpoint 0: no centring, constant feature c = 1): the model
    is LIBLINEAR's L2 logistic regression with intercept_scaling = 1 and the same C, fitted
    exactly by scikit-learn (an independent solver)."""
    sklm = pytest.importorskip("sklearn.linear_model")
    X, y = _data()
    for C in (1.0, 0.05):
        ref = sklm.LogisticRegression(C=C, solver="liblinear", intercept_scaling=1.0,
                                      tol=1e-10, max_iter=10_000).fit(X, y)
        clf = PrivateLogisticRegression(epsilon=1e6, bounds_X=(-1, 1), C=C,
                                        random_state=0).fit(X, y)
        assert np.allclose(clf.coef_, ref.coef_, atol=2e-3), (clf.coef_, ref.coef_)
        assert clf.intercept_ == pytest.approx(ref.intercept_, abs=2e-3)
        assert clf.coef_.shape == (1, 3) and clf.intercept_.shape == (1,)


def test_epsilon_one_beats_the_majority_class_and_probabilities_are_consistent():
    X, y = _data(20_000)
    Xt, yt = _data(5000, seed=1)
    majority = max(yt.mean(), 1 - yt.mean())
    accs = [PrivateLogisticRegression(epsilon=1.0, bounds_X=(-1, 1), random_state=s)
            .fit(X, y).score(Xt, yt) for s in range(3)]
    assert min(accs) > majority + 0.1 and min(accs) > 0.8, (accs, majority)
    clf = PrivateLogisticRegression(epsilon=1.0, bounds_X=(-1, 1), random_state=0).fit(X, y)
    proba = clf.predict_proba(Xt)
    assert np.allclose(proba.sum(axis=1), 1.0) and np.all((proba >= 0) & (proba <= 1))
    assert np.array_equal(clf.predict(Xt), np.where(clf.decision_function(Xt) > 0, 1, 0))
    assert np.array_equal(proba[:, 1] > 0.5, clf.decision_function(Xt) > 0)
    assert clf.privacy_.epsilon == pytest.approx(1.0)


def test_public_classes_and_shifted_box():
    X, y = _data(6000)
    labels = np.where(y == 1, "yes", "no")
    ref = PrivateLogisticRegression(epsilon=1e6, bounds_X=(-1, 1), random_state=0).fit(X, y)
    clf = PrivateLogisticRegression(epsilon=1e6, bounds_X=(-1, 1), classes=("no", "yes"),
                                    random_state=0).fit(X, labels)
    assert list(clf.classes_) == ["no", "yes"]
    assert np.allclose(clf.coef_, ref.coef_) and set(clf.predict(X[:50])) <= {"no", "yes"}
    # features on a shifted box: centring on its public midpoint gives the same classifier
    shifted = PrivateLogisticRegression(epsilon=1e6, bounds_X=(9, 11), random_state=0).fit(
        X + 10, y)
    assert np.allclose(shifted.coef_, ref.coef_, atol=1e-3)
    assert shifted.intercept_[0] == pytest.approx(ref.intercept_[0] - 10 * ref.coef_.sum(),
                                                  abs=1e-2)


def test_data_norm_and_no_intercept():
    X, y = _data(6000, noise=0.1)
    clf = PrivateLogisticRegression(epsilon=10.0, data_norm=np.sqrt(3), fit_intercept=False,
                                    random_state=0).fit(X, y)
    assert clf.intercept_[0] == 0.0 and clf.score(X, y) > 0.85


@pytest.mark.parametrize(("kw", "name"), [
    ({"C": "1"}, "C"), ({"C": -1.0}, "C"), ({"C": True}, "C"),
    ({"classes": (1, 1)}, "classes"), ({"classes": (0, 1, 2)}, "classes"),
    ({"mechanism": "sgd"}, "mechanism"),
    ({"data_norm": 0.0, "bounds_X": None}, "data_norm"),
    ({"bounds_X": None}, "bounds_X"), ({"fit_intercept": "yes"}, "fit_intercept"),
])
def test_bad_arguments_are_typed_errors_naming_them(kw, name):
    X, y = _data(200)
    est = PrivateLogisticRegression(**{"bounds_X": (-1, 1), **kw})
    with pytest.raises(CvxdpError, match=name):
        est.fit(X, y)


def test_cross_validation_charges_every_fit_to_the_shared_ledger():
    model_selection = pytest.importorskip("sklearn.model_selection")
    X, y = _data(3000)
    acct = cvxdp.PrivacyAccountant(cvxdp.ApproxDP(10.0, 1e-5))
    est = PrivateLogisticRegression(epsilon=1.0, bounds_X=(-1, 1), random_state=0,
                                    accountant=acct)
    scores = model_selection.cross_val_score(est, X, y, cv=3)
    assert len(scores) == 3 and np.all(scores > 0.7)
    assert len(acct.ledger) == 3
    assert all(r.budget == cvxdp.ApproxDP(1.0, 1e-6) for r in acct.ledger)


def test_every_mechanism_runs_on_the_stated_ball():
    # the model states the minimiser's public ball ||theta|| <= sqrt(2 C n log 2), so noisy
    # gradient descent (which needs a bounded domain) runs too (trial 13 found it refused)
    X, y = _data(4000)
    majority = max(y.mean(), 1 - y.mean())
    for mech in ("objective", "output", "gradient"):
        clf = PrivateLogisticRegression(epsilon=1.0, bounds_X=(-1, 1), mechanism=mech,
                                        random_state=0).fit(X, y)
        assert clf.result_.info["mechanism"] == mech
        assert clf.score(X, y) > majority + 0.05, (mech, clf.score(X, y), majority)
