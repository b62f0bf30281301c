"""cvxdp: differentially private solvers for CVXPY models.

``import cvxdp`` attaches ``solve_private`` to :class:`cvxpy.Problem` and registers the
``problem.solve(method="private")`` solve method.  Everything else is loaded lazily on first use.
"""

from __future__ import annotations

import importlib
from typing import Any

from cvxdp.errors import (
    BudgetError,
    CvxdpError,
    InfeasibleProblemError,
    PrivacyGuaranteeError,
    PrivacySpecError,
    UnsupportedProblemError,
)

__version__ = "0.1.0"

# public name -> module that defines it (imported on first attribute access)
_LAZY = {
    "PureDP": "cvxdp.privacy.budgets",
    "ApproxDP": "cvxdp.privacy.budgets",
    "ZCDP": "cvxdp.privacy.budgets",
    "PrivacyAccountant": "cvxdp.privacy.accountant",
    "PrivacyRecord": "cvxdp.privacy.accountant",
    "PrivacyReport": "cvxdp.privacy.accountant",
    "PrivateSolution": "cvxdp.solution",
    "ValidationReport": "cvxdp.solution",
    "StructuredProblem": "cvxdp.structured",
    "ConstraintPrivacy": "cvxdp.specs",
    "ScalarPrivacy": "cvxdp.specs",
    "ObjectivePrivacy": "cvxdp.specs",
    "ConstraintSetPrivacy": "cvxdp.specs",
    "RowPrivacy": "cvxdp.specs",
    "solve_private": "cvxdp.api",
    "is_supported": "cvxdp.api",
    "explain": "cvxdp.api",
    "to_scp": "cvxdp.transform",
    "from_scp": "cvxdp.transform",
    "SymmetricConeProgram": "cvxdp.transform",
    "SensitivityBounds": "cvxdp.transform",
    "EuclideanJordanAlgebra": "cvxdp.jordan",
    "Orthant": "cvxdp.jordan",
    "SpinFactor": "cvxdp.jordan",
    "SymmetricMatrices": "cvxdp.jordan",
    "Product": "cvxdp.jordan",
    "john_ellipsoid": "cvxdp.geometry.john.john",
    "Ellipsoid": "cvxdp.geometry.john.john",
    "JohnEllipsoidProblem": "cvxdp.geometry.john.john",
    "min_enclosing_ball": "cvxdp.geometry.meb.meb",
    "Ball": "cvxdp.geometry.meb.meb",
    "MEBPrivateSolution": "cvxdp.geometry.meb.meb",
    "least_squares": "cvxdp.estimation.regression",
    "LeastSquaresPrivacy": "cvxdp.estimation.regression",
    "ndis_delta": "cvxdp.privacy.ndis",
    "ndis_epsilon": "cvxdp.privacy.ndis",
    "gdp_sigma": "cvxdp.privacy.gdp",
    "calibrate_mahalanobis": "cvxdp.privacy.gdp",
    "random_projection": "cvxdp.estimation.random_projection",
    "relative_random_projection": "cvxdp.estimation.random_projection",
    "private_gaussian": "cvxdp.estimation.gaussians",
    "gaussian_mle": "cvxdp.estimation.gaussians",
    "GaussianSolution": "cvxdp.estimation.gaussians",
    "private_wrapper": "cvxdp.estimation.wrapper",
    "EuclideanSpace": "cvxdp.estimation.wrapper",
    "SpectralPDSpace": "cvxdp.estimation.wrapper",
    "covering_sdp": "cvxdp.solvers.covering.covering",
    "covering_lp": "cvxdp.solvers.covering.covering",
    "covering_socp": "cvxdp.solvers.covering.covering",
    "Certificate": "cvxdp.solution",
    "status_of": "cvxdp.status",
    "AccuracyNotGuaranteedWarning": "cvxdp.solvers.mwu.solve",
    "ObjectiveNotOptimisedWarning": "cvxdp.solvers.mwu.solve",
    "GaussianSampleWarning": "cvxdp.estimation.gaussians",
    "UnsafePrivacyWarning": "cvxdp.geometry.john.john_paper",
}

__all__ = [
    "BudgetError",
    "CvxdpError",
    "InfeasibleProblemError",
    "PrivacyGuaranteeError",
    "PrivacySpecError",
    "UnsupportedProblemError",
    *_LAZY,
]


# subpackages reachable as attributes (``cvxdp.estimators.PrivateLinearRegression``), also
# imported on first access
_SUBPACKAGES = ("estimators", "audit", "transform")


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    if name in _SUBPACKAGES:
        module = importlib.import_module(f"cvxdp.{name}")
        globals()[name] = module
        return module
    raise AttributeError(f"module 'cvxdp' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY) | set(_SUBPACKAGES))


from cvxdp import api as _api  # noqa: E402  (attaches Problem.solve_private)

_api.install()
