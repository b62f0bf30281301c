"""private_gaussian's method keywords are checked before any sample is read, with typed errors
that name the keyword and its range (ranges from the theorems the learner cites)."""

from __future__ import annotations

import numpy as np
import pytest

from cvxdp.errors import ArgumentError, CvxdpError
from cvxdp.estimation.gaussians import private_gaussian, required_n


class _Unreadable:
    """An (n, d) sample whose values must not be read: the checks need its shape only."""

    shape = (100_000, 3)
    ndim = 2

    def __array__(self, *args, **kwargs):
        raise AssertionError("the samples were read before the keywords were checked")


BAD = [
    ("alpha", -1.0), ("alpha", 0.0), ("alpha", np.nan), ("alpha", np.inf), ("alpha", "0.2"),
    ("beta", 5.0), ("beta", 0.0), ("beta", 1.0), ("beta", np.nan), ("beta", "0.1"),
    ("c1", -1.0), ("c1", 0.0), ("c1", 10.0), ("c1", np.inf), ("c1", "3200"),
    ("contamination", "x"), ("contamination", -0.1), ("contamination", 0.5),
    ("contamination", np.nan),
    ("tol", "x"), ("tol", 0.0), ("tol", 1.0), ("tol", -1e-9), ("tol", np.nan),
    ("robust", "yes"), ("estimate", "covariance"), ("estimate", None),
]


@pytest.mark.parametrize(("name", "value"), BAD, ids=lambda v: repr(v))
def test_bad_keyword_is_refused_before_the_data_is_read(name, value):
    with pytest.raises(ArgumentError) as err:
        private_gaussian(_Unreadable(), epsilon=1.0, delta=1e-6, rng=0, **{name: value})
    assert isinstance(err.value, CvxdpError)
    assert f"{name}=" in str(err.value) and "must be" in str(err.value)


def test_robust_needs_a_positive_contamination():
    """Algs 4-5 use ln(1/contamination) and blocks of d^2/contamination^2 samples: 0 is out."""
    with pytest.raises(ArgumentError, match="contamination="):
        private_gaussian(_Unreadable(), epsilon=1.0, delta=1e-6, rng=0, robust=True,
                         contamination=0.0)


def test_nan_alpha_no_longer_claims_accuracy():
    """The trial's case: alpha=nan made ``n < required_n`` False and the status a promise."""
    x = np.random.default_rng(0).normal(size=(2000, 2))
    with pytest.raises(ArgumentError, match="alpha="):
        private_gaussian(x, epsilon=1.0, delta=1e-6, rng=0, alpha=np.nan)


def test_valid_edge_values_are_accepted_by_the_checks():
    """contamination=0 without robust, c1 at the smallest sound value, tol just under 1."""
    x = np.random.default_rng(0).normal(size=(2000, 2))
    sol = private_gaussian(x, epsilon=1.0, delta=1e-6, rng=0, bounds=(-6, 6),
                           contamination=0.0, c1=153.0, tol=0.5, alpha=0.3, beta=0.05)
    assert sol.mean is not None


@pytest.mark.parametrize(("name", "value"), [("alpha", np.nan), ("alpha", "x"), ("beta", 5.0),
                                             ("c1", -1.0), ("contamination", 0.7)],
                         ids=lambda v: repr(v))
def test_required_n_checks_the_same_keywords(name, value):
    """The public planner takes the same keywords: alpha=nan gave a finite required n."""
    with pytest.raises(ArgumentError, match=f"{name}="):
        required_n(3, epsilon=1.0, delta=1e-6, **{name: value})
