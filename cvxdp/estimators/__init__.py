"""scikit-learn-style private estimators (``fit`` / ``predict`` / ``get_params``).

* :class:`PrivateLinearRegression`: ``coef_``, ``intercept_`` (wraps :func:`cvxdp.least_squares`);
* :class:`PrivateLogisticRegression`: ``coef_``, ``intercept_``, ``predict_proba`` (a CVXPY
  logistic regression under :class:`cvxdp.RowPrivacy`, the learning path);
* :class:`PrivateGaussian`: ``mean_``, ``covariance_`` (wraps :func:`cvxdp.private_gaussian`);
* :class:`PrivateEnclosingBall`: ``center_``, ``radius_`` (wraps
  :func:`cvxdp.min_enclosing_ball`).

Each takes ``epsilon``, ``delta``, public bounds, ``random_state`` and ``accountant=``, and
accepts numpy arrays and pandas DataFrames.  With scikit-learn installed (``pip install
"cvxdp[sklearn]"``) they are scikit-learn estimators (Pipeline, GridSearchCV, clone); without
it they keep the same interface.  See ``docs/estimators.md``.
"""

from cvxdp.estimators.ball import PrivateEnclosingBall
from cvxdp.estimators.gaussian import PrivateGaussian
from cvxdp.estimators.linear_model import PrivateLinearRegression
from cvxdp.estimators.logistic import PrivateLogisticRegression

__all__ = ["PrivateLinearRegression", "PrivateLogisticRegression", "PrivateGaussian",
           "PrivateEnclosingBall"]
