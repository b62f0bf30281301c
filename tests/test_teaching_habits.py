"""Issue 21 item 11: teaching material never derives a "public" constant from private data, and
says the neighbouring relation its theorem proves."""

import pathlib
import re

import numpy as np

from cvxdp.demo import lp_data, sdp_data

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_demo_right_hand_sides_do_not_depend_on_the_private_data():
    # other seeds draw other private matrices; a public right-hand side stays the same
    (A0, b0, _), (A1, b1, _) = lp_data(0), lp_data(1)
    assert not np.allclose(A0, A1)
    np.testing.assert_array_equal(b0, b1)
    (F0, r0, _), (F1, r1, _) = sdp_data(2), sdp_data(3)
    assert not np.allclose(F0, F1)
    np.testing.assert_array_equal(r0, r1)


def test_quickstarts_and_examples_take_public_constants_from_public_knowledge():
    # the private LP data is called `usage` (quickstart) and `loadings` (portfolio example);
    # neither may appear on the right of a constant the text calls public
    texts = {p: p.read_text() for p in [ROOT / "README.md", ROOT / "docs" / "index.md",
                                        ROOT / "docs" / "getting-started.md",
                                        ROOT / "examples" / "portfolio_lp.py"]}
    for path, text in texts.items():
        assert not re.search(r"<=\s*usage\s*@", text), path
        assert not re.search(r"limits\s*=\s*loadings", text), path


def test_gps_example_states_the_replace_one_relation_of_its_theorem():
    text = (ROOT / "examples" / "gps_one_centre.py").read_text()
    assert "added or removed" not in text
    assert "replace" in text
