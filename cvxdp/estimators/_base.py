"""What the private estimators share: the scikit-learn base classes (or a plain fallback),
input checks, the random state and the accountant.

scikit-learn is an optional extra (``pip install "cvxdp[sklearn]"``).  With it, the estimators
subclass :class:`sklearn.base.BaseEstimator` and its mixins, so ``get_params`` / ``set_params``,
``clone``, :class:`~sklearn.pipeline.Pipeline` and :class:`~sklearn.model_selection.GridSearchCV`
work as for any scikit-learn estimator, and inputs are checked by scikit-learn's own
``validate_data`` (pandas DataFrames keep their column names in ``feature_names_in_``).
Without it, :class:`_PlainBase` gives the same ``get_params`` / ``set_params`` from the
constructor's signature and the checks below.

An accountant is a ledger, not a value: :meth:`_PrivateEstimator.__sklearn_clone__` hands the
*same* accountant to every clone (``GridSearchCV`` and ``cross_val_score`` clone the estimator
for each fit), so every fit is charged to the user's ledger and the call that would overspend is
refused before it reads the data (:func:`cvxdp.arguments.entry_point`).
"""

from __future__ import annotations

import copy
import inspect
from typing import Any

import numpy as np

from cvxdp.errors import ArgumentError, PrivacySpecError

try:  # optional extra: scikit-learn
    from sklearn.base import BaseEstimator as _SkBase
    from sklearn.base import ClassifierMixin as _SkClassifier
    from sklearn.base import OutlierMixin as _SkOutlier
    from sklearn.base import RegressorMixin as _SkRegressor
    from sklearn.base import clone as _sk_clone
    from sklearn.exceptions import NotFittedError
    from sklearn.utils import column_or_1d as _sk_column

    HAVE_SKLEARN = True
    try:
        from sklearn.utils.validation import validate_data as _sk_validate
    except ImportError:  # scikit-learn < 1.6: the estimator's own _validate_data
        _sk_validate = None
except ImportError:  # pragma: no cover - exercised in the no-sklearn CI job
    _SkBase = _SkClassifier = _SkOutlier = _SkRegressor = _sk_clone = _sk_validate = None
    _sk_column = None
    HAVE_SKLEARN = False

    class NotFittedError(ValueError, AttributeError):  # as scikit-learn's
        """The estimator is used before ``fit``."""

__all__ = ["HAVE_SKLEARN", "BaseEstimator", "ClassifierMixin", "RegressorMixin",
           "OutlierMixin", "as_rng", "check_X", "check_X_y", "check_fitted"]


class _PlainBase:
    """``get_params`` / ``set_params`` from the constructor's keyword arguments (what
    :class:`sklearn.base.BaseEstimator` provides), for use without scikit-learn."""

    @classmethod
    def _get_param_names(cls) -> list[str]:
        sig = inspect.signature(cls.__init__)
        return sorted(p.name for p in sig.parameters.values()
                      if p.name != "self" and p.kind != p.VAR_KEYWORD)

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self._get_param_names()}

    def set_params(self, **params: Any) -> _PlainBase:
        valid = self._get_param_names()
        for k, v in params.items():
            if k not in valid:
                raise ValueError(f"Invalid parameter {k!r} for estimator {type(self).__name__}; "
                                 f"valid parameters: {valid}.")
            setattr(self, k, v)
        return self

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"


class _PlainRegressor:
    def score(self, X: Any, y: Any, sample_weight: Any = None) -> float:
        """Coefficient of determination R^2 of ``predict(X)`` against ``y`` (as
        :meth:`sklearn.base.RegressorMixin.score`)."""
        y = np.asarray(y, dtype=float).ravel()
        pred = np.asarray(self.predict(X), dtype=float).ravel()
        w = np.ones_like(y) if sample_weight is None else np.asarray(sample_weight, float)
        ybar = np.average(y, weights=w)
        return float(1.0 - np.sum(w * (y - pred) ** 2) / np.sum(w * (y - ybar) ** 2))


class _PlainClassifier:
    def score(self, X: Any, y: Any, sample_weight: Any = None) -> float:
        """Mean accuracy of ``predict(X)`` against ``y`` (as
        :meth:`sklearn.base.ClassifierMixin.score`)."""
        y = np.asarray(y).ravel()
        hit = (np.asarray(self.predict(X)).ravel() == y).astype(float)
        return float(np.average(hit, weights=sample_weight))


class _PlainOutlier:
    def fit_predict(self, X: Any, y: Any = None) -> np.ndarray:
        return self.fit(X).predict(X)


BaseEstimator = _SkBase if HAVE_SKLEARN else _PlainBase
RegressorMixin = _SkRegressor if HAVE_SKLEARN else _PlainRegressor
ClassifierMixin = _SkClassifier if HAVE_SKLEARN else _PlainClassifier
OutlierMixin = _SkOutlier if HAVE_SKLEARN else _PlainOutlier


class _PrivateEstimator(BaseEstimator):
    """Shared behaviour: the shared accountant under ``clone`` and the fitted-state check."""

    def __sklearn_clone__(self) -> Any:
        """``clone`` without copying the accountant (module doc): every clone spends from the
        user's ledger."""
        params = self.get_params(deep=False)
        acct = params.pop("accountant", None)
        new = type(self)(**{k: _sk_clone(v, safe=False) if HAVE_SKLEARN else copy.deepcopy(v)
                            for k, v in params.items()}, accountant=acct)
        return new

    def __sklearn_tags__(self) -> Any:  # scikit-learn >= 1.6
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True  # mapped into the public domain, never refused
        return tags

    def _more_tags(self) -> dict[str, Any]:  # scikit-learn < 1.6
        return {"allow_nan": True}

    def _fit_kwargs(self) -> dict[str, Any]:
        """The budget and the ledger of one private fit."""
        out: dict[str, Any] = {"epsilon": self.epsilon, "delta": self.delta,
                               "rng": as_rng(self.random_state)}
        if self.accountant is not None:
            out["accountant"] = self.accountant
        return out


def as_rng(random_state: Any) -> None | int | np.random.Generator:
    """scikit-learn's ``random_state`` (None, int, ``RandomState`` or ``Generator``) as the
    ``rng`` cvxdp's solvers take.  A ``RandomState`` seeds a Generator from one draw (so a fit
    advances it, as scikit-learn estimators do)."""
    if random_state is None or isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(0, 2**31 - 1))
    if (isinstance(random_state, (int, np.integer)) and not isinstance(random_state, bool)
            and random_state >= 0):
        return int(random_state)
    raise ArgumentError(f"random_state={random_state!r} is not a source of randomness: "
                        "random_state must be None, a non-negative int seed, a "
                        "numpy.random.RandomState or a numpy.random.Generator.")


def _plain_array(X: Any, est: Any, reset: bool, ensure_min_samples: int = 1) -> np.ndarray:
    names = getattr(X, "columns", None)
    x = np.asarray(X, dtype=float)
    if x.ndim != 2:
        raise ValueError(f"Expected 2D array, got {x.ndim}D array instead; reshape your data "
                         "with array.reshape(-1, 1) for a single feature.")
    if x.shape[0] < ensure_min_samples:
        raise ValueError(f"Found array with {x.shape[0]} sample(s) while a minimum of "
                         f"{ensure_min_samples} is required.")
    if reset:
        est.n_features_in_ = x.shape[1]
        if names is not None and all(isinstance(c, str) for c in names):
            est.feature_names_in_ = np.asarray(list(names), dtype=object)
    elif x.shape[1] != est.n_features_in_:
        raise ValueError(f"X has {x.shape[1]} features, but {type(est).__name__} is expecting "
                         f"{est.n_features_in_} features as input.")
    return x


def _validate(est: Any, *args: Any, **kwargs: Any) -> Any:
    if _sk_validate is not None:
        return _sk_validate(est, *args, dtype=np.float64, ensure_all_finite=False, **kwargs)
    return est._validate_data(*args, dtype=np.float64, force_all_finite=False, **kwargs)


def check_X(est: Any, X: Any, *, reset: bool, ensure_min_samples: int = 1) -> np.ndarray:
    """``X`` as a float (n, d) array; records ``n_features_in_`` (and ``feature_names_in_``
    for a DataFrame) on ``fit``, checks them after.  Non-finite entries are allowed: the solvers
    map them into the public domain record by record (never refused, a refusal would leak)."""
    if HAVE_SKLEARN:
        return _validate(est, X, reset=reset, ensure_min_samples=ensure_min_samples)
    return _plain_array(X, est, reset, ensure_min_samples)


def check_X_y(est: Any, X: Any, y: Any, *, y_numeric: bool = True
              ) -> tuple[np.ndarray, np.ndarray]:
    """``(X, y)`` for ``fit``: ``X`` a float array, ``y`` one-dimensional (float unless
    ``y_numeric`` is False: class labels), same number of rows."""
    if y is None:
        raise ValueError(f"{type(est).__name__} requires y to be passed, but the target y is "
                         "None.")
    # y is checked here, shape and length only: scikit-learn's check_X_y refuses a non-finite
    # y whatever ensure_all_finite says, and a label is one person's value (the solvers map a
    # non-finite one into the public domain; a refusal would leak it)
    x = check_X(est, X, reset=True, ensure_min_samples=2)
    yv = np.asarray(y)
    if yv.ndim == 2 and yv.shape[1] == 1:
        yv = _sk_column(yv, warn=True) if HAVE_SKLEARN else yv.ravel()
    if yv.ndim != 1:
        raise ValueError(f"y should be a 1d array, got an array of shape {yv.shape} instead.")
    if len(yv) != len(x):
        raise ValueError(f"Found input variables with inconsistent numbers of samples: "
                         f"[{len(x)}, {len(yv)}] (X has {len(x)} rows, y {len(yv)} entries).")
    if np.iscomplexobj(yv):
        raise ValueError("Complex data not supported: y must be real.")
    if y_numeric:
        try:
            yv = yv.astype(np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"y must be numeric for {type(est).__name__} (got dtype "
                             f"{yv.dtype}).") from None
    return x, yv


def check_fitted(est: Any, attr: str) -> None:
    if not hasattr(est, attr):
        raise NotFittedError(f"This {type(est).__name__} instance is not fitted yet. Call 'fit' "
                             "with appropriate arguments before using this estimator.")


def need(value: Any, name: str, fix: str) -> Any:
    """Refuse a missing public bound, naming the argument and the fix (public arguments only)."""
    if value is None:
        raise PrivacySpecError(f"{name} is required: {fix} (public, never computed from the "
                               "data).")
    return value
