"""``preset="paper"`` (Algorithm 1 as printed) is not proven DP: refused unless unsafe opt-in.

Issue 21 item 2: it released ``A'VA`` without noise while its report said epsilon = 1.
"""

import math
import warnings

import numpy as np
import pytest

import cvxdp
from cvxdp.errors import PrivacyGuaranteeError
from cvxdp.geometry.john.john import john_ellipsoid


def _polytope(seed, n, d):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n, d)) / math.sqrt(d)
    return A * np.minimum(1.0, 1.0 / np.linalg.norm(A, axis=1))[:, None]


KW = dict(epsilon=1.0, delta=1e-6, closeness=1e-10, row_bound=1.0, rng=0)


def test_paper_preset_refused_by_default_with_a_typed_error_naming_why():
    prob = john_ellipsoid(_polytope(0, 200, 3))
    with pytest.raises(PrivacyGuaranteeError, match="A'VA.*without noise") as exc:
        prob.solve_private(preset="paper", **KW)
    assert "unsafe_paper_preset=True" in str(exc.value)
    assert isinstance(exc.value, cvxdp.PrivacyGuaranteeError)


def test_paper_preset_behind_unsafe_opt_in_reports_infinite_epsilon_and_warns():
    prob = john_ellipsoid(_polytope(0, 200, 3))
    with pytest.warns(UserWarning, match="NOT differentially private"):
        sol = prob.solve_private(preset="paper", unsafe_paper_preset=True, accuracy=0.5, **KW)
    rep = sol.privacy
    assert rep.epsilon == math.inf and rep.guarantee == "none"
    assert any("A'VA" in g for g in rep.details["proof_gaps"])
    assert "epsilon=inf" in repr(sol)
    # the answer is still Algorithm 1's: weights sum to d, a PD ellipsoid
    assert sol.ellipsoid.weights.sum() == pytest.approx(3, rel=1e-9)


def test_unsafe_flag_alone_does_not_weaken_the_default():
    prob = john_ellipsoid(_polytope(0, 200, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sol = prob.solve_private(unsafe_paper_preset=True, **KW)
    assert sol.privacy.guarantee == "dp" and sol.privacy.epsilon == pytest.approx(1.0)
