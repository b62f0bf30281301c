"""Layout of cvxdp.privacy: no import circle between the accountant and gdp (the import graph of
``tests/import_graph.py``: deferred imports count)."""

from __future__ import annotations

import cvxdp.privacy.composition as composition
import cvxdp.privacy.gdp as gdp
import cvxdp.privacy.gdp_curve as curve
from tests.import_graph import package_graph


def test_accountant_and_gdp_do_not_import_each_other():
    graph = package_graph()
    a, g = graph["cvxdp.privacy.accountant"], graph["cvxdp.privacy.gdp"]
    assert "cvxdp.privacy.ndis" in g    # the graph is read: gdp's curve comes from NDIS
    assert not ("cvxdp.privacy.gdp" in a and "cvxdp.privacy.accountant" in g)
    # the shared piece (the mu-GDP curve) lives in a module that imports neither
    assert not {"cvxdp.privacy.gdp", "cvxdp.privacy.accountant"} & graph["cvxdp.privacy.gdp_curve"]
    # the accountant composes through cvxdp.privacy.composition, which reads the same curve
    assert "cvxdp.privacy.gdp" not in graph["cvxdp.privacy.composition"]
    assert composition.gdp_epsilon is curve.gdp_epsilon is gdp.gdp_epsilon
