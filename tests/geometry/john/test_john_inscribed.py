"""What ``inscribed=True`` guarantees when rows exceed ``row_bound`` (issue 21 item 5).

Rows longer than ``row_bound`` are clipped, which loosens their constraints: the private
ellipsoid is inside the polytope of the clipped rows, and inside the user's polytope only when
every row obeys the bound.  The solution says so, and a noisy clipped-row count tells the user
that the bound was wrong.
"""

import pathlib
import re

import numpy as np
import pytest

from cvxdp.geometry.john.john import john_ellipsoid

DOCS = pathlib.Path(__file__).resolve().parents[3] / "docs" / "john.md"


@pytest.fixture(scope="module")
def wrong_bound():
    rng = np.random.default_rng(0)
    A = rng.standard_normal((2000, 5)) / np.sqrt(5)
    A *= np.minimum(1.0, 0.99 / np.linalg.norm(A, axis=1))[:, None]  # inside row_bound = 1
    A[:5] *= 6.0 / np.linalg.norm(A[:5], axis=1, keepdims=True)      # 5 rows at 6x the bound
    clipped = A.copy()
    clipped[:5] /= 6.0
    return A, clipped


def test_inscribed_states_its_exact_guarantee_and_offers_the_noisy_clipped_count(wrong_bound):
    A, clipped = wrong_bound
    sol = john_ellipsoid(A).solve_private(
        epsilon=8.0, delta=1e-6, closeness=1e-8, row_bound=1.0, inscribed=True, rng=0,
        count_clipped=0.5)
    guarantee = sol.info["inscribed_guarantee"]
    assert "clipped rows" in guarantee and "row_bound" in guarantee
    E = sol.ellipsoid
    # inside the polytope of the clipped rows (probability >= 1 - 1e-3; this seed)
    assert E.support_ratios(clipped).max() <= 1.0
    # NOT inside the user's polytope: the clipped constraints were loosened (measured 35.8)
    assert E.support_ratios(A).max() > 30.0
    # the noisy count shows the bound was wrong: 5 rows clipped, sigma_count = 0.92 here
    assert sol.info["sigma_count"] == pytest.approx(0.923, abs=1e-3)
    assert abs(sol.info["clipped_rows_noisy"] - 5) < 4 * sol.info["sigma_count"]
    assert sol.info["clipped_rows_noisy"] > 1.0


def test_docs_state_the_same_guarantee():
    from cvxdp.geometry.john.john_private import INSCRIBED_GUARANTEE

    text = re.sub(r"\s+", " ", DOCS.read_text())
    assert re.sub(r"\s+", " ", INSCRIBED_GUARANTEE) in text
