"""Every keyword of ``john_ellipsoid(A).solve_private`` is checked: a bad value raises a typed
cvxdp error whose message names the argument (decided before the data are read)."""

import numpy as np
import pytest

from cvxdp.errors import CvxdpError
from cvxdp.geometry.john.john import john_ellipsoid

GOOD = dict(epsilon=1.0, delta=1e-6, closeness=1e-3, row_bound=2.0, rng=0)

BAD = [
    ("epsilon", "x"), ("epsilon", -1.0), ("delta", "x"), ("delta", 2.0), ("rho", "x"),
    ("accuracy", "x"), ("accuracy", 0.0), ("accuracy", 1.5),
    ("closeness", "x"), ("closeness", -1.0), ("closeness", float("nan")), ("closeness", None),
    ("row_bound", "x"), ("row_bound", 0.0), ("row_bound", float("inf")), ("row_bound", None),
    ("sigma_min", "x"), ("sigma_min", -1.0), ("ridge", "x"), ("ridge", -1.0),
    ("rng", "x"), ("rng", -1), ("reference", "x"),
    ("inscribed", "x"), ("inscribed", 2), ("failure", "x"), ("failure", 0.0), ("failure", 1.0),
    ("failure", 2.0), ("preset", 3), ("preset", "x"),
    ("iterations", "x"), ("iterations", -1), ("iterations", 1.5),
    ("count_clipped", "x"), ("count_clipped", 2.0),
    ("unsafe_paper_preset", "x"), ("unsafe_paper_preset", 2),
    # a number written as a string is not a number (as epsilon='1' is not): it was read by float()
    ("closeness", "0.001"), ("row_bound", "2"), ("sigma_min", "0.1"), ("ridge", "0.1"),
    ("failure", "0.1"),
]


@pytest.fixture(scope="module")
def prob():
    return john_ellipsoid(np.random.default_rng(0).standard_normal((50, 3)) / 2)


@pytest.mark.parametrize(("key", "value"), BAD)
def test_bad_keyword_raises_a_typed_error_naming_it(prob, key, value):
    kw = {**GOOD, key: value}
    if key == "rho":
        kw.pop("epsilon"), kw.pop("delta")
    with pytest.raises(CvxdpError, match=key):
        prob.solve_private(**kw)
