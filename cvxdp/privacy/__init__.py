"""The privacy core: budgets, records and accounting, calibration, mechanisms, randomness.

Pure numpy/scipy: this package never imports CVXPY.
"""

from cvxdp.privacy.accountant import PrivacyAccountant, PrivacyRecord, PrivacyReport, compose
from cvxdp.privacy.budgets import (
    ZCDP,
    ApproxDP,
    PureDP,
    resolve_budget,
    zcdp_from_approx,
    zcdp_to_delta,
    zcdp_to_epsilon,
)
from cvxdp.privacy.calibration import (
    calibrate_gaussian,
    classical_sigma,
    gaussian_delta,
    gaussian_epsilon,
)
from cvxdp.privacy.clipping import clip_rows_l2, clip_to_box, noisy_count
from cvxdp.privacy.discrete_gaussian import discrete_gaussian_mechanism
from cvxdp.privacy.mechanisms import (
    exponential_float_delta,
    exponential_mechanism,
    exponential_record,
    gaussian_mechanism,
    gaussian_record,
    sampler_float_limits,
)
from cvxdp.privacy.neighbours import AddRemoveOne, BoundedChange, ReplaceOne
from cvxdp.privacy.rng import as_generator

__all__ = [
    "AddRemoveOne",
    "ApproxDP",
    "BoundedChange",
    "PrivacyAccountant",
    "PrivacyRecord",
    "PrivacyReport",
    "PureDP",
    "ReplaceOne",
    "ZCDP",
    "as_generator",
    "calibrate_gaussian",
    "classical_sigma",
    "clip_rows_l2",
    "clip_to_box",
    "compose",
    "discrete_gaussian_mechanism",
    "exponential_float_delta",
    "exponential_mechanism",
    "exponential_record",
    "gaussian_delta",
    "gaussian_epsilon",
    "gaussian_mechanism",
    "gaussian_record",
    "noisy_count",
    "resolve_budget",
    "sampler_float_limits",
    "zcdp_from_approx",
    "zcdp_to_delta",
    "zcdp_to_epsilon",
]
